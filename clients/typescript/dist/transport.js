// The connection to a ctxd server: one gRPC channel (TLS, keepalive), the API key on
// every call, one unary call with its retries, and the making of a session (CreateSession
// or ForkSession, retried safely). The client is one; session handles and event streams
// call through it.
import { createRequire } from 'node:module';
import * as grpc from '@grpc/grpc-js';
import { AlreadyExistsError, CtxdError, fromServiceError } from './errors.js';
import { contextServiceClient } from './proto.js';
import { retryPolicy, withRetries } from './retry.js';
/** OpenTelemetry is optional: with `@opentelemetry/api` installed (and, as an
 * OpenTelemetry SDK sets up, a propagator and a context manager), every call carries the
 * caller's current trace (W3C `traceparent`, `tracestate`), so ctxd's spans join it. */
const openTelemetry = (() => {
    try {
        return createRequire(import.meta.url)('@opentelemetry/api');
    }
    catch {
        return null;
    }
})();
const LOOPBACK = /^(?:dns:\/*)?(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::\d+)?$/i;
/** @internal Whether a client uses TLS for `target` when not told: off for a loopback
 * address, on otherwise (the Python client decides alike). */
export function tlsByDefault(target) {
    return !LOOPBACK.test(target);
}
export class Transport {
    target;
    /** @internal */
    stub;
    /** @internal */
    retry;
    apiKey;
    timeoutMs;
    /** `target` and `options.apiKey` default to the CTXD_ADDRESS and CTXD_API_KEY
     * environment variables. */
    constructor(target = process.env.CTXD_ADDRESS, options = {}) {
        if (typeof target !== 'string' || target.length === 0 || target.length > 1024) {
            throw new TypeError('target must be a host:port of at most 1024 characters (or set CTXD_ADDRESS)');
        }
        this.target = target;
        this.apiKey = options.apiKey ?? (process.env.CTXD_API_KEY || undefined);
        this.retry = retryPolicy(options.retry);
        this.timeoutMs = options.timeoutMs ?? 30_000;
        if (!Number.isFinite(this.timeoutMs) || this.timeoutMs <= 0)
            throw new RangeError('timeoutMs must be positive');
        const tls = options.tls ?? tlsByDefault(target);
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
    /**
     * The session a CreateSession or ForkSession call made. Retried on UNAVAILABLE only
     * when the id is given: a retry that finds the id taken reads the session there and
     * returns it when `madeBefore` says the first attempt made it.
     */
    /** @internal */
    async makeSession(method, request, id, madeBefore) {
        const make = async () => (await this.call(method, request, { retry: false })).session;
        let made;
        if (id) {
            made = await withRetries(this.retry, async (attempt) => {
                try {
                    return await make();
                }
                catch (error) {
                    if (attempt > 1 && error instanceof AlreadyExistsError) {
                        const existing = (await this.call('GetSession', { sessionId: id })).session;
                        if (existing && madeBefore(existing))
                            return existing;
                    }
                    throw error;
                }
            });
        }
        else {
            made = await make();
        }
        if (!made)
            throw new CtxdError(grpc.status.INTERNAL, `${method} answered without a session`);
        return made;
    }
    /** Closes the channel; calls in flight fail. */
    close() {
        this.stub.close();
    }
    /** @internal The call's metadata: the API key, and the caller's trace when
     * OpenTelemetry is installed. */
    metadata() {
        const md = new grpc.Metadata();
        if (this.apiKey)
            md.set('authorization', `Bearer ${this.apiKey}`);
        if (openTelemetry) {
            const carrier = {};
            openTelemetry.propagation.inject(openTelemetry.context.active(), carrier);
            for (const name of ['traceparent', 'tracestate']) {
                const value = carrier[name];
                if (value)
                    md.set(name, value);
            }
        }
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
