// The client: one gRPC channel to a ctxd server, the API key on every call, retries on
// UNAVAILABLE, and the session handles.
import * as grpc from '@grpc/grpc-js';
import { EventStream } from './events.js';
import { AlreadyExistsError, CtxdError, fromServiceError } from './errors.js';
import { contextServiceClient } from './proto.js';
import { retryPolicy, withRetries } from './retry.js';
import { searchRequest } from './search.js';
import { Session } from './session.js';
const LOOPBACK = /^(?:dns:\/*)?(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::\d+)?$/i;
export class CtxdClient {
    target;
    /** @internal */
    stub;
    /** @internal */
    retry;
    apiKey;
    timeoutMs;
    constructor(target, options = {}) {
        if (typeof target !== 'string' || target.length === 0 || target.length > 1024) {
            throw new TypeError('target must be a host:port of at most 1024 characters');
        }
        this.target = target;
        this.apiKey = options.apiKey;
        this.retry = retryPolicy(options.retry);
        this.timeoutMs = options.timeoutMs ?? 30_000;
        if (!Number.isFinite(this.timeoutMs) || this.timeoutMs <= 0)
            throw new RangeError('timeoutMs must be positive');
        const tls = options.tls ?? !LOOPBACK.test(target);
        const channelOptions = {
            // Come back quickly after a server restart: the default backoff reaches 120 s.
            'grpc.initial_reconnect_backoff_ms': 100,
            'grpc.max_reconnect_backoff_ms': 5_000,
            // A connection that stops answering (a dead peer, a dropped route) fails its calls
            // with UNAVAILABLE instead of leaving them waiting: an event stream is resubscribed.
            'grpc.keepalive_time_ms': 30_000,
            'grpc.keepalive_timeout_ms': 10_000,
            ...options.channelOptions,
        };
        let credentials;
        if (tls === false) {
            credentials = grpc.credentials.createInsecure();
        }
        else {
            const settings = tls === true ? {} : tls;
            const pem = (value) => value === undefined ? null : Buffer.isBuffer(value) ? value : Buffer.from(value);
            credentials = grpc.credentials.createSsl(pem(settings.rootCerts), pem(settings.privateKey), pem(settings.certChain));
            if (settings.serverName)
                channelOptions['grpc.ssl_target_name_override'] = settings.serverName;
        }
        const Client = contextServiceClient();
        this.stub = new Client(target, credentials, channelOptions);
    }
    /** A handle on an existing session (no call is made), with defaults for build and check. */
    session(id, defaults = {}) {
        return new Session(this, id, undefined, defaults);
    }
    /**
     * Creates a session. Retried on UNAVAILABLE only when the id is given: a retry that
     * finds it taken (the first attempt created it) returns the stored session.
     */
    async createSession(options = {}) {
        const request = { sessionId: options.id ?? '', policy: options.policy, metadata: options.metadata ?? {} };
        let created = null;
        if (options.id) {
            const id = options.id;
            created = await withRetries(this.retry, async (attempt) => {
                try {
                    const response = await this.call('CreateSession', request, { retry: false });
                    return response.session;
                }
                catch (error) {
                    if (attempt > 1 && error instanceof AlreadyExistsError) {
                        const existing = await this.call('GetSession', { sessionId: id });
                        return existing.session;
                    }
                    throw error;
                }
            });
        }
        else {
            const response = await this.call('CreateSession', request, { retry: false });
            created = response.session;
        }
        if (!created)
            throw new CtxdError(grpc.status.INTERNAL, 'CreateSession answered without a session');
        return new Session(this, created.sessionId, created, { systemPrompt: options.systemPrompt, tools: options.tools });
    }
    /** Full-text search over every session of the tenant. */
    async search(query, options = {}) {
        const response = await this.call('Search', searchRequest('', query, options));
        return response.hits;
    }
    /** Every session's events, resumed after a disconnect (see EventStream). */
    events(options = {}) {
        return new EventStream(this, '', options);
    }
    /** A background job (e.g. a summarization Compact enqueued). */
    async getJob(jobId) {
        return this.call('GetJob', { jobId });
    }
    /** Closes the channel; calls in flight fail. */
    close() {
        this.stub.close();
    }
    /** @internal The call's metadata: the API key. */
    metadata() {
        const md = new grpc.Metadata();
        if (this.apiKey)
            md.set('authorization', `Bearer ${this.apiKey}`);
        return md;
    }
    /** @internal One unary call, retried on UNAVAILABLE unless told not to. */
    call(method, request, options = {}) {
        const timeoutMs = options.timeoutMs ?? this.timeoutMs;
        const once = () => new Promise((resolve, reject) => {
            const fn = this.stub[method];
            if (typeof fn !== 'function') {
                reject(new TypeError(`no method ${method}`));
                return;
            }
            fn.call(this.stub, request, this.metadata(), { deadline: Date.now() + timeoutMs }, (error, response) => {
                if (error)
                    reject(fromServiceError(error));
                else
                    resolve(response);
            });
        });
        if (options.retry === false)
            return once();
        return withRetries(this.retry, once);
    }
}
