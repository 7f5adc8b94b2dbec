// The client: one gRPC channel to a ctxd server, the API key on every call, retries on
// UNAVAILABLE, and the session handles.
import * as grpc from '@grpc/grpc-js';

import { EventStream, type EventsOptions } from './events.js';
import { AlreadyExistsError, CtxdError, fromServiceError } from './errors.js';
import type { ContextServiceClient } from './gen/ctxd/v1/ContextService.js';
import type { CreateSessionResponse__Output } from './gen/ctxd/v1/CreateSessionResponse.js';
import type { FinishSessionResponse__Output } from './gen/ctxd/v1/FinishSessionResponse.js';
import type { ForkSessionResponse__Output } from './gen/ctxd/v1/ForkSessionResponse.js';
import type { GetSessionResponse__Output } from './gen/ctxd/v1/GetSessionResponse.js';
import type { Job__Output } from './gen/ctxd/v1/Job.js';
import type { ListSessionsResponse__Output } from './gen/ctxd/v1/ListSessionsResponse.js';
import type { Policy } from './gen/ctxd/v1/Policy.js';
import type { Session__Output } from './gen/ctxd/v1/Session.js';
import { listRequest, type ListSessionsOptions } from './listing.js';
import { contextServiceClient } from './proto.js';
import { retryPolicy, withRetries, type RetryOptions, type RetryPolicy } from './retry.js';
import { searchRequest, type SearchHit, type SearchOptions } from './search.js';
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

const LOOPBACK = /^(?:dns:\/*)?(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::\d+)?$/i;

export class CtxdClient {
  readonly target: string;
  /** @internal */
  readonly stub: ContextServiceClient;
  /** @internal */
  readonly retry: RetryPolicy;
  private readonly apiKey: string | undefined;
  private readonly timeoutMs: number;

  constructor(target: string, options: ClientOptions = {}) {
    if (typeof target !== 'string' || target.length === 0 || target.length > 1024) {
      throw new TypeError('target must be a host:port of at most 1024 characters');
    }
    this.target = target;
    this.apiKey = options.apiKey;
    this.retry = retryPolicy(options.retry);
    this.timeoutMs = options.timeoutMs ?? 30_000;
    if (!Number.isFinite(this.timeoutMs) || this.timeoutMs <= 0) throw new RangeError('timeoutMs must be positive');
    const tls = options.tls ?? !LOOPBACK.test(target);
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

  /** A handle on an existing session (no call is made), with defaults for build and check. */
  session(id: string, defaults: RequestDefaults = {}): Session {
    return new Session(this, id, undefined, defaults);
  }

  /**
   * Creates a session. Retried on UNAVAILABLE only when the id is given: a retry that
   * finds it taken (the first attempt created it) returns the stored session. With
   * `parentSessionId` and `parentToolCallId` it is a subagent's session (see
   * `Session.spawn`).
   */
  async createSession(options: CreateSessionOptions = {}): Promise<Session> {
    const request = {
      sessionId: options.id ?? '',
      policy: options.policy,
      metadata: options.metadata ?? {},
      parentSessionId: options.parentSessionId ?? '',
      parentToolCallId: options.parentToolCallId ?? '',
    };
    const created = await this.makeSession('CreateSession', request, options.id, () => true);
    return new Session(this, created.sessionId, created, { systemPrompt: options.systemPrompt, tools: options.tools });
  }

  /**
   * Forks a session: a new one whose log is the source's up to `atSeq`, shared rather
   * than copied, and which then goes its own way (appends, compaction and deletion on
   * either side never change what the other returns). Returns the fork's handle;
   * `session.info` is the fork (`forkedFromSessionId`, `forkedAtSeq`). Retried on
   * UNAVAILABLE only when the id is given: a retry that finds it taken by a fork of the
   * same source (the first attempt forked it) returns that fork.
   */
  async forkSession(sourceSessionId: string, options: ForkSessionOptions = {}): Promise<Session> {
    const request: Record<string, unknown> = {
      sourceSessionId,
      sessionId: options.id ?? '',
      policy: options.policy,
      metadata: options.metadata ?? {},
    };
    if (options.atSeq !== undefined) request['atSeq'] = options.atSeq;
    const forked = await this.makeSession(
      'ForkSession',
      request,
      options.id,
      (existing) => existing.forkedFromSessionId === sourceSessionId,
    );
    return new Session(this, forked.sessionId, forked, { systemPrompt: options.systemPrompt, tools: options.tools });
  }

  /**
   * Ends a session (it takes no more appends); with `appendToParent` (by default: when
   * there is a final answer) the answer becomes the result of the parent's tool call
   * that spawned it, in the same transaction (`parentAppend` says where). Not retried: a
   * retry after a lost answer would find the session finished (FailedPreconditionError);
   * the session's `finishedAt` says whether it was.
   */
  finishSession(sessionId: string, finalAnswer = '', options: FinishOptions = {}): Promise<FinishSessionResponse__Output> {
    return this.call(
      'FinishSession',
      { sessionId, finalAnswer, appendToParent: options.appendToParent ?? finalAnswer !== '' },
      { retry: false },
    );
  }

  /**
   * A session's place in its tree: `session` (parentSessionId, depth, finishedAt),
   * `children` (id, tool call, finished), `childrenTotal` and `subtree` (sessions, log
   * tokens and reported usage of it and its descendants).
   */
  tree(sessionId: string): Promise<GetSessionResponse__Output> {
    return this.call('GetSession', { sessionId });
  }

  /**
   * One page of the tenant's sessions, most recently active first (ListSessions);
   * pass its `nextPageToken` as `pageToken`, with the same filters, for the next.
   */
  listSessions(options: ListSessionsOptions = {}): Promise<ListSessionsResponse__Output> {
    return this.call('ListSessions', listRequest(options));
  }

  /** Every session of a listing, page after page. */
  async *sessions(options: Omit<ListSessionsOptions, 'pageToken'> = {}): AsyncGenerator<Session__Output> {
    let pageToken = '';
    do {
      const page = await this.listSessions({ ...options, pageToken });
      yield* page.sessions;
      pageToken = page.nextPageToken;
    } while (pageToken !== '');
  }

  /** Full-text search over every session of the tenant. */
  async search(query: string, options: SearchOptions = {}): Promise<SearchHit[]> {
    const response = await this.call<{ hits: SearchHit[] }>('Search', searchRequest('', query, options));
    return response.hits;
  }

  /** Every session's events, resumed after a disconnect (see EventStream). */
  events(options: EventsOptions = {}): EventStream {
    return new EventStream(this, '', options);
  }

  /** A background job (e.g. a summarization Compact enqueued). */
  async getJob(jobId: number): Promise<Job__Output> {
    return this.call<Job__Output>('GetJob', { jobId });
  }

  /**
   * The session a CreateSession or ForkSession call made. Retried on UNAVAILABLE only
   * when the id is given: a retry that finds the id taken reads the session there and
   * returns it when `madeBefore` says the first attempt made it.
   */
  private async makeSession(
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

  /** @internal The call's metadata: the API key. */
  metadata(): grpc.Metadata {
    const md = new grpc.Metadata();
    if (this.apiKey) md.set('authorization', `Bearer ${this.apiKey}`);
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
