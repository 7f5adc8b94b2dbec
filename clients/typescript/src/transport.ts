// The connection to a ctxd server: one gRPC channel (TLS, keepalive), the API key on
// every call, one unary call with its retries, and the making of a session (CreateSession
// or ForkSession, retried safely). The client is one; session handles and event streams
// call through it.
import { createRequire } from 'node:module';

import * as grpc from '@grpc/grpc-js';

import { AlreadyExistsError, CtxdError, fromServiceError } from './errors.js';
import type { ContextServiceClient } from './gen/ctxd/v1/ContextService.js';
import type { CreateSessionResponse__Output } from './gen/ctxd/v1/CreateSessionResponse.js';
import type { ForkSessionResponse__Output } from './gen/ctxd/v1/ForkSessionResponse.js';
import type { GetSessionResponse__Output } from './gen/ctxd/v1/GetSessionResponse.js';
import type { Session__Output } from './gen/ctxd/v1/Session.js';
import { contextServiceClient } from './proto.js';
import { retryPolicy, withRetries, type RetryOptions, type RetryPolicy } from './retry.js';

/** What the SDK uses of `@opentelemetry/api`, when the application has it installed. */
interface OpenTelemetryApi {
  context: { active(): unknown };
  propagation: { inject(context: unknown, carrier: Record<string, string>): void };
}

/** OpenTelemetry is optional: with `@opentelemetry/api` installed (and, as an
 * OpenTelemetry SDK sets up, a propagator and a context manager), every call carries the
 * caller's current trace (W3C `traceparent`, `tracestate`), so ctxd's spans join it. */
const openTelemetry: OpenTelemetryApi | null = (() => {
  try {
    return createRequire(import.meta.url)('@opentelemetry/api') as OpenTelemetryApi;
  } catch {
    return null;
  }
})();

/** TLS settings: `true` for the system's roots, or PEM material. */
export interface TlsOptions {
  /** PEM root certificates to trust instead of the system's. */
  rootCerts?: Buffer | string;
  /** PEM client key and certificate, for servers that ask for one. */
  privateKey?: Buffer | string;
  certChain?: Buffer | string;
  /** The name to check the server's certificate against, when not the target's host. */
  serverName?: string;
}

export interface ClientOptions {
  /** Sent as `authorization: Bearer <apiKey>` on every call (default: CTXD_API_KEY). */
  apiKey?: string;
  /**
   * TLS: `true`, `false`, or settings. Default: off for a loopback target (localhost,
   * 127.0.0.1, [::1]), on for any other.
   */
  tls?: boolean | TlsOptions;
  /** Retries on UNAVAILABLE (default 5 attempts, 100 ms to 5 s backoff). */
  retry?: RetryOptions;
  /** Deadline of one attempt of a unary call in milliseconds (default 30 000). */
  timeoutMs?: number;
  /** Extra grpc-js channel options. */
  channelOptions?: grpc.ChannelOptions;
}

/** The calls' options the client passes on. */
export interface CallOptions {
  timeoutMs?: number;
  /** Retry on UNAVAILABLE (default true). */
  retry?: boolean;
}

const LOOPBACK = /^(?:dns:\/*)?(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::\d+)?$/i;

/** @internal Whether a client uses TLS for `target` when not told: off for a loopback
 * address, on otherwise (the Python client decides alike). */
export function tlsByDefault(target: string): boolean {
  return !LOOPBACK.test(target);
}

export class Transport {
  readonly target: string;
  /** @internal */
  readonly stub: ContextServiceClient;
  /** @internal */
  readonly retry: RetryPolicy;
  private readonly apiKey: string | undefined;
  private readonly timeoutMs: number;

  /** `target` and `options.apiKey` default to the CTXD_ADDRESS and CTXD_API_KEY
   * environment variables. */
  constructor(target: string | undefined = process.env.CTXD_ADDRESS, options: ClientOptions = {}) {
    if (typeof target !== 'string' || target.length === 0 || target.length > 1024) {
      throw new TypeError('target must be a host:port of at most 1024 characters (or set CTXD_ADDRESS)');
    }
    this.target = target;
    this.apiKey = options.apiKey ?? (process.env.CTXD_API_KEY || undefined);
    this.retry = retryPolicy(options.retry);
    this.timeoutMs = options.timeoutMs ?? 30_000;
    if (!Number.isFinite(this.timeoutMs) || this.timeoutMs <= 0) throw new RangeError('timeoutMs must be positive');
    const tls = options.tls ?? tlsByDefault(target);
    const channelOptions: grpc.ChannelOptions = {
      // Come back quickly after a server restart: the default backoff reaches 120 s.
      'grpc.initial_reconnect_backoff_ms': 100,
      'grpc.max_reconnect_backoff_ms': 5_000,
      // A connection that stops answering (a dead peer, a dropped route) fails its calls
      // with UNAVAILABLE instead of leaving them waiting: an event stream is resubscribed.
      'grpc.keepalive_time_ms': 30_000,
      'grpc.keepalive_timeout_ms': 10_000,
      ...options.channelOptions,
    };
    let credentials: grpc.ChannelCredentials;
    if (tls === false) {
      credentials = grpc.credentials.createInsecure();
    } else {
      const settings = tls === true ? {} : tls;
      const pem = (value: Buffer | string | undefined) =>
        value === undefined ? null : Buffer.isBuffer(value) ? value : Buffer.from(value);
      credentials = grpc.credentials.createSsl(pem(settings.rootCerts), pem(settings.privateKey), pem(settings.certChain));
      if (settings.serverName) channelOptions['grpc.ssl_target_name_override'] = settings.serverName;
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
  async makeSession(
    method: 'CreateSession' | 'ForkSession',
    request: object,
    id: string | undefined,
    madeBefore: (existing: Session__Output) => boolean,
  ): Promise<Session__Output> {
    const make = async () =>
      (await this.call<CreateSessionResponse__Output | ForkSessionResponse__Output>(method, request, { retry: false })).session;
    let made: Session__Output | null;
    if (id) {
      made = await withRetries(this.retry, async (attempt) => {
        try {
          return await make();
        } catch (error) {
          if (attempt > 1 && error instanceof AlreadyExistsError) {
            const existing = (await this.call<GetSessionResponse__Output>('GetSession', { sessionId: id })).session;
            if (existing && madeBefore(existing)) return existing;
          }
          throw error;
        }
      });
    } else {
      made = await make();
    }
    if (!made) throw new CtxdError(grpc.status.INTERNAL, `${method} answered without a session`);
    return made;
  }

  /** Closes the channel; calls in flight fail. */
  close(): void {
    this.stub.close();
  }

  /** @internal The call's metadata: the API key, and the caller's trace when
   * OpenTelemetry is installed. */
  metadata(): grpc.Metadata {
    const md = new grpc.Metadata();
    if (this.apiKey) md.set('authorization', `Bearer ${this.apiKey}`);
    if (openTelemetry) {
      const carrier: Record<string, string> = {};
      openTelemetry.propagation.inject(openTelemetry.context.active(), carrier);
      for (const name of ['traceparent', 'tracestate']) {
        const value = carrier[name];
        if (value) md.set(name, value);
      }
    }
    return md;
  }

  /** @internal One unary call, retried on UNAVAILABLE unless told not to. */
  call<Res>(method: string, request: object, options: CallOptions = {}): Promise<Res> {
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    const once = () =>
      new Promise<Res>((resolve, reject) => {
        const fn = (this.stub as unknown as Record<string, UnaryMethod>)[method];
        if (typeof fn !== 'function') {
          reject(new TypeError(`no method ${method}`));
          return;
        }
        fn.call(this.stub, request, this.metadata(), { deadline: Date.now() + timeoutMs }, (error, response) => {
          if (error) reject(fromServiceError(error));
          else resolve(response as Res);
        });
      });
    if (options.retry === false) return once();
    return withRetries(this.retry, once);
  }
}

type UnaryMethod = (
  request: object,
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  callback: (error: grpc.ServiceError | null, response?: unknown) => void,
) => grpc.ClientUnaryCall;
