import { EventStream, type EventsOptions } from './events.js';
import type { AppendTurnResponse__Output } from './gen/ctxd/v1/AppendTurnResponse.js';
import type { BudgetReport__Output } from './gen/ctxd/v1/BudgetReport.js';
import type { BuildMessagesResponse__Output } from './gen/ctxd/v1/BuildMessagesResponse.js';
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
import { type LedgerUpdate, type UpdateLedgerResponse } from './ledger.js';
import { type SearchHit, type SearchOptions } from './search.js';
import type { Transport } from './transport.js';
import { type Format, type JsonFormat, type MessageInput, type ToolsInput } from './types.js';
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
export type RevertTarget = {
    eventCursor: string;
} | {
    summaryId: number;
};
export interface RevertOptions {
    /** Say what would be restored; change nothing. */
    dryRun?: boolean;
    /** Revert only at this session version (ABORTED otherwise). */
    expectedVersion?: number;
}
/** A subagent's session: its own id, policy (nothing is inherited), metadata, and handle defaults. */
export type SpawnOptions = Omit<CreateSessionOptions, 'parentSessionId' | 'parentToolCallId'>;
/** What to expand: an inclusive seq range, a list of seqs, or a summary's originals. */
export type ExpandTarget = {
    firstSeq: number;
    lastSeq: number;
} | {
    seqs: number[];
} | {
    summaryId: number;
};
export declare class Session {
    private readonly client;
    readonly id: string;
    /** The session as CreateSession returned it (undefined for a handle from client.session()). */
    readonly info: Session__Output | undefined;
    /** The system prompt and tools of every build and check that gives none. */
    readonly defaults: RequestDefaults;
    constructor(client: Transport, id: string, info?: Session__Output, defaults?: RequestDefaults);
    /** The session: policy, version, counters; with includeView the summaries and budget too. */
    get(includeView?: boolean): Promise<GetSessionResponse__Output>;
    /** Deletes the session with its log. */
    delete(): Promise<DeleteSessionResponse__Output>;
    /** The request to send now, within budget and provider-valid. */
    build<F extends Format = 'neutral'>(options?: BuildOptions<F>): Promise<Built<F>>;
    /** Appends messages atomically; retried with one idempotency key. */
    append(messages: MessageInput[], options?: AppendTurnOptions): Promise<AppendTurnResponse__Output>;
    /**
     * Appends a model's response as the provider returned it (the SDK's response object,
     * its JSON value or text): its message, reasoning, tool calls and usage.
     */
    appendResponse(response: unknown, options: AppendResponseOptions): Promise<AppendTurnResponse__Output>;
    /**
     * Appends request items in the provider's shape: tool results (and user messages), e.g.
     * Chat Completions `tool` messages, Responses `function_call_output` items, an
     * Anthropic user message of `tool_result` blocks, Gemini `functionResponse` contents;
     * or `ToolResult`s, which are written in the format's shape.
     */
    appendToolResults(results: readonly unknown[], options: NativeOptions): Promise<AppendTurnResponse__Output>;
    private native;
    /** Would this request fit? Read-only. */
    /**
     * Answers the model's call to one of ctxd's recall tools (offered when the session's
     * policy has recallTools): ctxd runs it and appends the answer as the call's tool
     * result, so the next build carries it. Retry-safe. Use it for each call
     * `isRecallTool` names, instead of running a tool.
     */
    answerRecall(toolCallId: string): Promise<AppendTurnResponse__Output>;
    check(options?: CheckOptions): Promise<BudgetReport__Output>;
    /** Shrinks the model's view now (or says what it would do, with dryRun). */
    compact(options?: CompactOptions): Promise<CompactResponse__Output>;
    /**
     * Undoes a compaction (a TOOL_RESULTS_CLEARED or COMPACTION_COMPLETED event's cursor,
     * or a summary it wrote) and every later one: the view as it was before it.
     */
    revertCompaction(target: RevertTarget, options?: RevertOptions): Promise<RevertCompactionResponse__Output>;
    /**
     * A fork of this session at `atSeq` (omitted: its last seq): a new session sharing
     * the log up to there, which then goes its own way. The fork's handle has this
     * handle's system prompt and tools unless the options give others; see
     * `CtxdClient.forkSession`.
     */
    fork(options?: ForkSessionOptions): Promise<Session>;
    /**
     * Creates a subagent's session for `toolCallId`, a tool call of this session not yet
     * answered, with a policy of its own (a smaller window, say); `finish` it with its
     * answer to append that here as the call's result.
     */
    spawn(toolCallId: string, options?: SpawnOptions): Promise<Session>;
    /**
     * Ends this session; a final answer becomes the result of the parent's tool call that
     * spawned it (see `CtxdClient.finishSession`).
     */
    finish(finalAnswer?: string, options?: FinishOptions): Promise<FinishSessionResponse__Output>;
    /** Sets this session's todos and notes (see `CtxdClient.updateLedger`). */
    updateLedger(update: LedgerUpdate): Promise<UpdateLedgerResponse>;
    /** This session's parent, children and subtree totals (see `CtxdClient.tree`). */
    tree(): Promise<GetSessionResponse__Output>;
    /** The original messages, byte-exact, whatever the view shows of them. */
    expand(target: ExpandTarget, options?: {
        maxTokens?: number;
    }): Promise<ExpandResponse__Output>;
    /** Full-text search over this session's messages and summaries. */
    search(query: string, options?: SearchOptions): Promise<SearchHit[]>;
    /** This session's events as an async iterator that resumes after a disconnect. */
    events(options?: EventsOptions): EventStream;
}
export type { Message__Output };
/** CreateSession through `transport` (CtxdClient.createSession). */
export declare function createSession(transport: Transport, options?: CreateSessionOptions): Promise<Session>;
/** ForkSession through `transport` (CtxdClient.forkSession). */
export declare function forkSession(transport: Transport, sourceSessionId: string, options?: ForkSessionOptions): Promise<Session>;
/** FinishSession through `transport` (CtxdClient.finishSession). */
export declare function finishSession(transport: Transport, sessionId: string, finalAnswer?: string, options?: FinishOptions): Promise<FinishSessionResponse__Output>;
