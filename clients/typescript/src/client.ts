// The client: a connection to a ctxd server (transport.ts) and what is asked of it beyond
// one session: making sessions, listing, moving them (export, import), search, events
// and jobs.
import { EventStream, type EventsOptions } from './events.js';
import type { FinishSessionResponse__Output } from './gen/ctxd/v1/FinishSessionResponse.js';
import type { GetSessionResponse__Output } from './gen/ctxd/v1/GetSessionResponse.js';
import type { ImportSessionResponse__Output } from './gen/ctxd/v1/ImportSessionResponse.js';
import type { Job__Output } from './gen/ctxd/v1/Job.js';
import type { ListSessionsResponse__Output } from './gen/ctxd/v1/ListSessionsResponse.js';
import type { Session__Output } from './gen/ctxd/v1/Session.js';
import { ledgerRequest, type LedgerUpdate, type UpdateLedgerResponse } from './ledger.js';
import { listRequest, type ListSessionsOptions } from './listing.js';
import type { CreateSessionOptions, FinishOptions, ForkSessionOptions, RequestDefaults } from './options.js';
import { searchRequest, type SearchHit, type SearchOptions } from './search.js';
import { Session, createSession, finishSession, forkSession } from './session.js';
import { exportSession, importSession } from './transfer.js';
import { Transport } from './transport.js';

export class CtxdClient extends Transport {
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
  createSession(options: CreateSessionOptions = {}): Promise<Session> {
    return createSession(this, options);
  }

  /**
   * Forks a session: a new one whose log is the source's up to `atSeq`, shared rather
   * than copied, and which then goes its own way (appends, compaction and deletion on
   * either side never change what the other returns). Returns the fork's handle;
   * `session.info` is the fork (`forkedFromSessionId`, `forkedAtSeq`). Retried on
   * UNAVAILABLE only when the id is given: a retry that finds it taken by a fork of the
   * same source (the first attempt forked it) returns that fork.
   */
  forkSession(sourceSessionId: string, options: ForkSessionOptions = {}): Promise<Session> {
    return forkSession(this, sourceSessionId, options);
  }

  /**
   * Ends a session (it takes no more appends); with `appendToParent` (by default: when
   * there is a final answer) the answer becomes the result of the parent's tool call
   * that spawned it, in the same transaction (`parentAppend` says where). Not retried: a
   * retry after a lost answer would find the session finished (FailedPreconditionError);
   * the session's `finishedAt` says whether it was.
   */
  finishSession(sessionId: string, finalAnswer = '', options: FinishOptions = {}): Promise<FinishSessionResponse__Output> {
    return finishSession(this, sessionId, finalAnswer, options);
  }

  /**
   * Sets the client's part of a session's task ledger: todos (a done one stays done; the
   * response's `keptDoneTodoIds` names those a request asked to reopen) and notes (empty
   * text removes one). All or nothing; retried on UNAVAILABLE (setting twice is the same).
   */
  updateLedger(sessionId: string, update: LedgerUpdate): Promise<UpdateLedgerResponse> {
    return this.call('UpdateLedger', ledgerRequest(sessionId, update));
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

  /**
   * The session as a file (ExportSession: JSON lines, versioned, with a SHA-256), to
   * import on this server or another. Retried on UNAVAILABLE.
   */
  exportSession(sessionId: string): Promise<Buffer> {
    return exportSession(this, sessionId);
  }

  /**
   * Creates a session from an exported file, as `sessionId` (default: the file's id);
   * it expands and builds as the original. A damaged or changed file is
   * InvalidArgumentError naming the record, and nothing is written. Not retried.
   */
  importSession(file: Uint8Array, sessionId = ''): Promise<ImportSessionResponse__Output> {
    return importSession(this, file, sessionId);
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
}
