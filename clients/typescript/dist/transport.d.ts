import * as grpc from '@grpc/grpc-js';
import type { ContextServiceClient } from './gen/ctxd/v1/ContextService.js';
import type { Session__Output } from './gen/ctxd/v1/Session.js';
import { type RetryOptions, type RetryPolicy } from './retry.js';
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
/** @internal Whether a client uses TLS for `target` when not told: off for a loopback
 * address, on otherwise (the Python client decides alike). */
export declare function tlsByDefault(target: string): boolean;
export declare class Transport {
    readonly target: string;
    /** @internal */
    readonly stub: ContextServiceClient;
    /** @internal */
    readonly retry: RetryPolicy;
    private readonly apiKey;
    private readonly timeoutMs;
    /** `target` and `options.apiKey` default to the CTXD_ADDRESS and CTXD_API_KEY
     * environment variables. */
    constructor(target?: string | undefined, options?: ClientOptions);
    /**
     * The session a CreateSession or ForkSession call made. Retried on UNAVAILABLE only
     * when the id is given: a retry that finds the id taken reads the session there and
     * returns it when `madeBefore` says the first attempt made it.
     */
    /** @internal */
    makeSession(method: 'CreateSession' | 'ForkSession', request: object, id: string | undefined, madeBefore: (existing: Session__Output) => boolean): Promise<Session__Output>;
    /** Closes the channel; calls in flight fail. */
    close(): void;
    /** @internal The call's metadata: the API key, and the caller's trace when
     * OpenTelemetry is installed. */
    metadata(): grpc.Metadata;
    /** @internal One unary call, retried on UNAVAILABLE unless told not to. */
    call<Res>(method: string, request: object, options?: CallOptions): Promise<Res>;
}
