// A session handle: build the request, append what happened, check, compact, revert a
// compaction, expand, search, follow its events, fork it, spawn and finish subagents'
// sessions, and read its place in its tree.
import { randomUUID } from 'node:crypto';

import * as grpc from '@grpc/grpc-js';

import { CtxdError } from './errors.js';
import { EventStream, type EventsOptions } from './events.js';
import type { AppendTurnResponse__Output } from './gen/ctxd/v1/AppendTurnResponse.js';
import type { BudgetReport__Output } from './gen/ctxd/v1/BudgetReport.js';
import type { BuildMessagesResponse__Output } from './gen/ctxd/v1/BuildMessagesResponse.js';
import type { CheckBudgetResponse__Output } from './gen/ctxd/v1/CheckBudgetResponse.js';
import type { CompactMode } from './gen/ctxd/v1/CompactMode.js';
import type { CompactResponse__Output } from './gen/ctxd/v1/CompactResponse.js';
import type { DeleteSessionResponse__Output } from './gen/ctxd/v1/DeleteSessionResponse.js';
import type { ExpandResponse__Output } from './gen/ctxd/v1/ExpandResponse.js';
import type { FinishSessionResponse__Output } from './gen/ctxd/v1/FinishSessionResponse.js';
import type { GetSessionResponse__Output } from './gen/ctxd/v1/GetSessionResponse.js';
import type { Message__Output } from './gen/ctxd/v1/Message.js';
import type { RevertCompactionResponse__Output } from './gen/ctxd/v1/RevertCompactionResponse.js';
import type { Session__Output } from './gen/ctxd/v1/Session.js';
import type { Usage } from './gen/ctxd/v1/Usage.js';
import type { CreateSessionOptions, FinishOptions, ForkSessionOptions, RequestDefaults } from './options.js';
import { ledgerRequest, type LedgerUpdate, type UpdateLedgerResponse } from './ledger.js';
import { searchRequest, type SearchHit, type SearchOptions } from './search.js';
import type { Transport } from './transport.js';
import {
  jsonFormat,
  nativeItems,
  outputFormat,
  toJsonText,
  toPbMessage,
  toPbTools,
  type Format,
  type JsonFormat,
  type MessageInput,
  type ToolsInput,
} from './types.js';
import type { BodyOf } from './bodies.js';

export interface BuildOptions<F extends Format = Format> {
  /** The request's shape (default neutral). */
  format?: F;
  systemPrompt?: string;
  tools?: ToolsInput;
  /** Overrides the policy's max_output_tokens for this request. */
  maxOutputTokens?: number;
}

/** What BuildMessages returned; `body` is the provider request body for the JSON formats. */
export interface Built<F extends Format = Format> extends Omit<BuildMessagesResponse__Output, 'json'> {
  /** The request body to send (add the model), typed per format (src/bodies.ts);
   * undefined for neutral. */
  body: BodyOf<F>;
}

export interface AppendOptions {
  /** Append only if the session is at this version (else ConflictError). */
  expectedVersion?: number;
  /** The retry-safety key; one is generated per call when omitted. */
  idempotencyKey?: string;
}

export interface AppendTurnOptions extends AppendOptions {
  /** The provider's usage for the call that produced the first assistant message. */
  usage?: Usage;
}

export interface NativeOptions extends AppendOptions {
  /** The provider shape of the body. */
  format: JsonFormat;
}

export interface AppendResponseOptions extends NativeOptions {
  /** Request items (tool results, user messages, ToolResults) to append after the response, in the same call. */
  items?: readonly unknown[];
}

export interface CheckOptions {
  systemPrompt?: string;
  tools?: ToolsInput;
  maxOutputTokens?: number;
  /** Messages about to be appended, counted as history. */
  pendingMessages?: MessageInput[];
}

export type CompactModeName = 'auto' | 'clear_tool_results' | 'summarize' | 'emergency';

export interface CompactOptions {
  mode?: CompactModeName;
  /** The size to get down to (0: the policy's clear_target). */
  targetTokens?: number;
  dryRun?: boolean;
  /** Wait for a summarization job (up to waitTimeoutMs). */
  wait?: boolean;
  waitTimeoutMs?: number;
}

/** The compaction to revert: its event's cursor, or a summary it wrote. */
export type RevertTarget = { eventCursor: string } | { summaryId: number };

export interface RevertOptions {
  /** Say what would be restored; change nothing. */
  dryRun?: boolean;
  /** Revert only at this session version (ABORTED otherwise). */
  expectedVersion?: number;
}

/** A subagent's session: its own id, policy (nothing is inherited), metadata, and handle defaults. */
export type SpawnOptions = Omit<CreateSessionOptions, 'parentSessionId' | 'parentToolCallId'>;

/** What to expand: an inclusive seq range, a list of seqs, or a summary's originals. */
export type ExpandTarget = { firstSeq: number; lastSeq: number } | { seqs: number[] } | { summaryId: number };

const COMPACT_MODES: Record<CompactModeName, CompactMode> = {
  auto: 'COMPACT_MODE_AUTO',
  clear_tool_results: 'COMPACT_MODE_CLEAR_TOOL_RESULTS',
  summarize: 'COMPACT_MODE_SUMMARIZE',
  emergency: 'COMPACT_MODE_EMERGENCY',
};

// Compact with wait may block this long beyond its wait on the server.
const COMPACT_MARGIN_MS = 30_000;

export class Session {
  /** The session as CreateSession returned it (undefined for a handle from client.session()). */
  readonly info: Session__Output | undefined;
  /** The system prompt and tools of every build and check that gives none. */
  readonly defaults: RequestDefaults;

  constructor(
    private readonly client: Transport,
    readonly id: string,
    info?: Session__Output,
    defaults: RequestDefaults = {},
  ) {
    this.info = info;
    this.defaults = { ...defaults };
  }

  /** The session: policy, version, counters; with includeView the summaries and budget too. */
  get(includeView = false): Promise<GetSessionResponse__Output> {
    return this.client.call('GetSession', { sessionId: this.id, includeView });
  }

  /** Deletes the session with its log. */
  delete(): Promise<DeleteSessionResponse__Output> {
    return this.client.call('DeleteSession', { sessionId: this.id }, { retry: false });
  }

  /** The request to send now, within budget and provider-valid. */
  async build<F extends Format = 'neutral'>(options: BuildOptions<F> = {}): Promise<Built<F>> {
    const format = options.format ?? ('neutral' as F);
    const response = await this.client.call<BuildMessagesResponse__Output>('BuildMessages', {
      sessionId: this.id,
      systemPrompt: options.systemPrompt ?? this.defaults.systemPrompt ?? '',
      tools: toPbTools(options.tools ?? this.defaults.tools),
      maxOutputTokens: options.maxOutputTokens,
      format: outputFormat(format),
    });
    const { json, ...rest } = response;
    let body: Record<string, unknown> | undefined;
    if (format !== 'neutral') {
      try {
        body = JSON.parse(json) as Record<string, unknown>;
      } catch {
        throw new CtxdError(grpc.status.INTERNAL, `BuildMessages returned no readable ${format} body`);
      }
    }
    return { ...rest, body } as Built<F>;
  }

  /** Appends messages atomically; retried with one idempotency key. */
  append(messages: MessageInput[], options: AppendTurnOptions = {}): Promise<AppendTurnResponse__Output> {
    return this.client.call('AppendTurn', {
      sessionId: this.id,
      messages: messages.map(toPbMessage),
      expectedVersion: options.expectedVersion,
      idempotencyKey: options.idempotencyKey ?? randomUUID(),
      usage: options.usage,
    });
  }

  /**
   * Appends a model's response as the provider returned it (the SDK's response object,
   * its JSON value or text): its message, reasoning, tool calls and usage.
   */
  appendResponse(response: unknown, options: AppendResponseOptions): Promise<AppendTurnResponse__Output> {
    const items = options.items === undefined ? '' : toJsonText(nativeItems(options.items, options.format), 'items');
    return this.native(toJsonText(response, 'response'), items, options);
  }

  /**
   * Appends request items in the provider's shape: tool results (and user messages), e.g.
   * Chat Completions `tool` messages, Responses `function_call_output` items, an
   * Anthropic user message of `tool_result` blocks, Gemini `functionResponse` contents;
   * or `ToolResult`s, which are written in the format's shape.
   */
  appendToolResults(results: readonly unknown[], options: NativeOptions): Promise<AppendTurnResponse__Output> {
    if (!Array.isArray(results)) throw new TypeError('results must be an array of request items');
    return this.native('', toJsonText(nativeItems(results, options.format), 'results'), options);
  }

  private native(responseJson: string, itemsJson: string, options: NativeOptions): Promise<AppendTurnResponse__Output> {
    return this.client.call('AppendNative', {
      sessionId: this.id,
      format: jsonFormat(options.format),
      responseJson,
      itemsJson,
      expectedVersion: options.expectedVersion,
      idempotencyKey: options.idempotencyKey ?? randomUUID(),
    });
  }

  /** Would this request fit? Read-only. */
  /**
   * Answers the model's call to one of ctxd's recall tools (offered when the session's
   * policy has recallTools): ctxd runs it and appends the answer as the call's tool
   * result, so the next build carries it. Retry-safe. Use it for each call
   * `isRecallTool` names, instead of running a tool.
   */
  async answerRecall(toolCallId: string): Promise<AppendTurnResponse__Output> {
    return this.client.call<AppendTurnResponse__Output>('AnswerRecall', { sessionId: this.id, toolCallId });
  }

  async check(options: CheckOptions = {}): Promise<BudgetReport__Output> {
    const response = await this.client.call<CheckBudgetResponse__Output>('CheckBudget', {
      sessionId: this.id,
      systemPrompt: options.systemPrompt ?? this.defaults.systemPrompt ?? '',
      tools: toPbTools(options.tools ?? this.defaults.tools),
      maxOutputTokens: options.maxOutputTokens,
      pendingMessages: (options.pendingMessages ?? []).map(toPbMessage),
    });
    if (!response.budget) throw new TypeError('CheckBudget answered without a budget');
    return response.budget;
  }

  /** Shrinks the model's view now (or says what it would do, with dryRun). */
  compact(options: CompactOptions = {}): Promise<CompactResponse__Output> {
    const mode = COMPACT_MODES[options.mode ?? 'auto'];
    if (mode === undefined) throw new TypeError(`mode must be one of ${Object.keys(COMPACT_MODES).join(', ')}`);
    const waitMs = options.wait ? (options.waitTimeoutMs ?? 60_000) : 0;
    return this.client.call(
      'Compact',
      {
        sessionId: this.id,
        mode,
        targetTokens: options.targetTokens ?? 0,
        dryRun: options.dryRun ?? false,
        wait: options.wait ?? false,
        waitTimeoutMs: options.waitTimeoutMs ?? 0,
      },
      waitMs > 0 ? { timeoutMs: waitMs + COMPACT_MARGIN_MS } : {},
    );
  }

  /**
   * Undoes a compaction (a TOOL_RESULTS_CLEARED or COMPACTION_COMPLETED event's cursor,
   * or a summary it wrote) and every later one: the view as it was before it.
   */
  revertCompaction(target: RevertTarget, options: RevertOptions = {}): Promise<RevertCompactionResponse__Output> {
    const request: Record<string, unknown> = { sessionId: this.id, dryRun: options.dryRun ?? false };
    if ('eventCursor' in target) request['eventCursor'] = target.eventCursor;
    else request['summaryId'] = target.summaryId;
    if (options.expectedVersion !== undefined) request['expectedVersion'] = options.expectedVersion;
    return this.client.call('RevertCompaction', request);
  }

  /**
   * A fork of this session at `atSeq` (omitted: its last seq): a new session sharing
   * the log up to there, which then goes its own way. The fork's handle has this
   * handle's system prompt and tools unless the options give others; see
   * `CtxdClient.forkSession`.
   */
  fork(options: ForkSessionOptions = {}): Promise<Session> {
    return forkSession(this.client, this.id, {
      ...options,
      systemPrompt: options.systemPrompt ?? this.defaults.systemPrompt,
      tools: options.tools ?? this.defaults.tools,
    });
  }

  /**
   * Creates a subagent's session for `toolCallId`, a tool call of this session not yet
   * answered, with a policy of its own (a smaller window, say); `finish` it with its
   * answer to append that here as the call's result.
   */
  spawn(toolCallId: string, options: SpawnOptions = {}): Promise<Session> {
    return createSession(this.client, { ...options, parentSessionId: this.id, parentToolCallId: toolCallId });
  }

  /**
   * Ends this session; a final answer becomes the result of the parent's tool call that
   * spawned it (see `CtxdClient.finishSession`).
   */
  finish(finalAnswer = '', options: FinishOptions = {}): Promise<FinishSessionResponse__Output> {
    return finishSession(this.client, this.id, finalAnswer, options);
  }

  /** Sets this session's todos and notes (see `CtxdClient.updateLedger`). */
  updateLedger(update: LedgerUpdate): Promise<UpdateLedgerResponse> {
    return this.client.call('UpdateLedger', ledgerRequest(this.id, update));
  }

  /** This session's parent, children and subtree totals (see `CtxdClient.tree`). */
  tree(): Promise<GetSessionResponse__Output> {
    return this.client.call('GetSession', { sessionId: this.id });
  }

  /** The original messages, byte-exact, whatever the view shows of them. */
  expand(target: ExpandTarget, options: { maxTokens?: number } = {}): Promise<ExpandResponse__Output> {
    const request: Record<string, unknown> = { sessionId: this.id, maxTokens: options.maxTokens ?? 0 };
    if ('summaryId' in target) request['summaryId'] = target.summaryId;
    else if ('seqs' in target) request['list'] = { seqs: target.seqs };
    else request['range'] = { firstSeq: target.firstSeq, lastSeq: target.lastSeq };
    return this.client.call('Expand', request);
  }

  /** Full-text search over this session's messages and summaries. */
  async search(query: string, options: SearchOptions = {}): Promise<SearchHit[]> {
    const response = await this.client.call<{ hits: SearchHit[] }>('Search', searchRequest(this.id, query, options));
    return response.hits;
  }

  /** This session's events as an async iterator that resumes after a disconnect. */
  events(options: EventsOptions = {}): EventStream {
    return new EventStream(this.client, this.id, options);
  }
}

export type { Message__Output };

/** CreateSession through `transport` (CtxdClient.createSession). */
export async function createSession(transport: Transport, options: CreateSessionOptions = {}): Promise<Session> {
  const request = {
    sessionId: options.id ?? '',
    policy: options.policy,
    metadata: options.metadata ?? {},
    parentSessionId: options.parentSessionId ?? '',
    parentToolCallId: options.parentToolCallId ?? '',
  };
  const created = await transport.makeSession('CreateSession', request, options.id, () => true);
  return new Session(transport, created.sessionId, created, { systemPrompt: options.systemPrompt, tools: options.tools });
}

/** ForkSession through `transport` (CtxdClient.forkSession). */
export async function forkSession(
  transport: Transport,
  sourceSessionId: string,
  options: ForkSessionOptions = {},
): Promise<Session> {
  const request: Record<string, unknown> = {
    sourceSessionId,
    sessionId: options.id ?? '',
    policy: options.policy,
    metadata: options.metadata ?? {},
  };
  if (options.atSeq !== undefined) request['atSeq'] = options.atSeq;
  const forked = await transport.makeSession(
    'ForkSession',
    request,
    options.id,
    (existing) => existing.forkedFromSessionId === sourceSessionId,
  );
  return new Session(transport, forked.sessionId, forked, { systemPrompt: options.systemPrompt, tools: options.tools });
}

/** FinishSession through `transport` (CtxdClient.finishSession). */
export function finishSession(
  transport: Transport,
  sessionId: string,
  finalAnswer = '',
  options: FinishOptions = {},
): Promise<FinishSessionResponse__Output> {
  return transport.call(
    'FinishSession',
    { sessionId, finalAnswer, appendToParent: options.appendToParent ?? finalAnswer !== '' },
    { retry: false },
  );
}
