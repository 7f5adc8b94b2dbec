import * as grpc from '@grpc/grpc-js';
import { EventStream, type EventsOptions } from './events.js';
import type { ContextServiceClient } from './gen/ctxd/v1/ContextService.js';
import type { FinishSessionResponse__Output } from './gen/ctxd/v1/FinishSessionResponse.js';
import type { GetSessionResponse__Output } from './gen/ctxd/v1/GetSessionResponse.js';
import type { Job__Output } from './gen/ctxd/v1/Job.js';
import type { ListSessionsResponse__Output } from './gen/ctxd/v1/ListSessionsResponse.js';
import type { Policy } from './gen/ctxd/v1/Policy.js';
import type { Session__Output } from './gen/ctxd/v1/Session.js';
import { type ListSessionsOptions } from './listing.js';
import { type RetryOptions, type RetryPolicy } from './retry.js';
import { type SearchHit, type SearchOptions } from './search.js';
import { Session, type RequestDefaults } from './session.js';
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
    /** Sent as `authorization: Bearer <apiKey>` on every call. */
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
/**
 * A session's options at creation; unset policy fields take the server's defaults. The
 * system prompt and tools are the handle's defaults for build and check.
 */
export interface CreateSessionOptions extends RequestDefaults {
    /** 1 to 128 characters from [A-Za-z0-9._:-]; omitted: the server generates one. */
    id?: string;
    policy?: Policy;
    metadata?: Record<string, string>;
    /**
     * Makes the session a subagent's: the child of this session, spawned by its tool call
     * `parentToolCallId` (one it made and has not answered). See `Session.spawn`.
     */
    parentSessionId?: string;
    parentToolCallId?: string;
}
/**
 * A fork's options: unset policy fields keep the source's (the tokenizer cannot change);
 * metadata entries are set over the source's. The system prompt and tools are the fork
 * handle's defaults for build and check.
 */
export interface ForkSessionOptions extends RequestDefaults {
    /** The fork's id, as createSession's; omitted: the server generates one. */
    id?: string;
    /** The source's last seq the fork shares, from 0 (nothing); omitted: the source's last seq. */
    atSeq?: number;
    policy?: Policy;
    metadata?: Record<string, string>;
}
export interface FinishOptions {
    /**
     * Append the final answer to the parent as the result of the tool call that spawned
     * the session (default: when there is a final answer).
     */
    appendToParent?: boolean;
}
/** The calls' options the client passes on. */
export interface CallOptions {
    timeoutMs?: number;
    /** Retry on UNAVAILABLE (default true). */
    retry?: boolean;
}
export declare class CtxdClient {
    readonly target: string;
    /** @internal */
    readonly stub: ContextServiceClient;
    /** @internal */
    readonly retry: RetryPolicy;
    private readonly apiKey;
    private readonly timeoutMs;
    constructor(target: string, options?: ClientOptions);
    /** A handle on an existing session (no call is made), with defaults for build and check. */
    session(id: string, defaults?: RequestDefaults): Session;
    /**
     * Creates a session. Retried on UNAVAILABLE only when the id is given: a retry that
     * finds it taken (the first attempt created it) returns the stored session. With
     * `parentSessionId` and `parentToolCallId` it is a subagent's session (see
     * `Session.spawn`).
     */
    createSession(options?: CreateSessionOptions): Promise<Session>;
    /**
     * Forks a session: a new one whose log is the source's up to `atSeq`, shared rather
     * than copied, and which then goes its own way (appends, compaction and deletion on
     * either side never change what the other returns). Returns the fork's handle;
     * `session.info` is the fork (`forkedFromSessionId`, `forkedAtSeq`). Retried on
     * UNAVAILABLE only when the id is given: a retry that finds it taken by a fork of the
     * same source (the first attempt forked it) returns that fork.
     */
    forkSession(sourceSessionId: string, options?: ForkSessionOptions): Promise<Session>;
    /**
     * Ends a session (it takes no more appends); with `appendToParent` (by default: when
     * there is a final answer) the answer becomes the result of the parent's tool call
     * that spawned it, in the same transaction (`parentAppend` says where). Not retried: a
     * retry after a lost answer would find the session finished (FailedPreconditionError);
     * the session's `finishedAt` says whether it was.
     */
    finishSession(sessionId: string, finalAnswer?: string, options?: FinishOptions): Promise<FinishSessionResponse__Output>;
    /**
     * A session's place in its tree: `session` (parentSessionId, depth, finishedAt),
     * `children` (id, tool call, finished), `childrenTotal` and `subtree` (sessions, log
     * tokens and reported usage of it and its descendants).
     */
    tree(sessionId: string): Promise<GetSessionResponse__Output>;
    /**
     * One page of the tenant's sessions, most recently active first (ListSessions);
     * pass its `nextPageToken` as `pageToken`, with the same filters, for the next.
     */
    listSessions(options?: ListSessionsOptions): Promise<ListSessionsResponse__Output>;
    /** Every session of a listing, page after page. */
    sessions(options?: Omit<ListSessionsOptions, 'pageToken'>): AsyncGenerator<Session__Output>;
    /** Full-text search over every session of the tenant. */
    search(query: string, options?: SearchOptions): Promise<SearchHit[]>;
    /** Every session's events, resumed after a disconnect (see EventStream). */
    events(options?: EventsOptions): EventStream;
    /** A background job (e.g. a summarization Compact enqueued). */
    getJob(jobId: number): Promise<Job__Output>;
    /**
     * The session a CreateSession or ForkSession call made. Retried on UNAVAILABLE only
     * when the id is given: a retry that finds the id taken reads the session there and
     * returns it when `madeBefore` says the first attempt made it.
     */
    private makeSession;
    /** Closes the channel; calls in flight fail. */
    close(): void;
    /** @internal The call's metadata: the API key. */
    metadata(): grpc.Metadata;
    /** @internal One unary call, retried on UNAVAILABLE unless told not to. */
    call<Res>(method: string, request: object, options?: CallOptions): Promise<Res>;
}
