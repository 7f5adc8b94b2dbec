// A session handle: build the request, append what happened, check, compact, revert a
// compaction, expand, search, follow its events, fork it, spawn and finish subagents'
// sessions, and read its place in its tree.
import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { CtxdError } from './errors.js';
import { EventStream } from './events.js';
import { ledgerRequest } from './ledger.js';
import { searchRequest } from './search.js';
import { jsonFormat, nativeItems, outputFormat, toJsonText, toPbMessage, toPbTools, } from './types.js';
const COMPACT_MODES = {
    auto: 'COMPACT_MODE_AUTO',
    clear_tool_results: 'COMPACT_MODE_CLEAR_TOOL_RESULTS',
    summarize: 'COMPACT_MODE_SUMMARIZE',
    emergency: 'COMPACT_MODE_EMERGENCY',
};
// Compact with wait may block this long beyond its wait on the server.
const COMPACT_MARGIN_MS = 30_000;
export class Session {
    client;
    id;
    /** The session as CreateSession returned it (undefined for a handle from client.session()). */
    info;
    /** The system prompt and tools of every build and check that gives none. */
    defaults;
    constructor(client, id, info, defaults = {}) {
        this.client = client;
        this.id = id;
        this.info = info;
        this.defaults = { ...defaults };
    }
    /** The session: policy, version, counters; with includeView the summaries and budget too. */
    get(includeView = false) {
        return this.client.call('GetSession', { sessionId: this.id, includeView });
    }
    /** Deletes the session with its log. */
    delete() {
        return this.client.call('DeleteSession', { sessionId: this.id }, { retry: false });
    }
    /** The request to send now, within budget and provider-valid. */
    async build(options = {}) {
        const format = options.format ?? 'neutral';
        const response = await this.client.call('BuildMessages', {
            sessionId: this.id,
            systemPrompt: options.systemPrompt ?? this.defaults.systemPrompt ?? '',
            tools: toPbTools(options.tools ?? this.defaults.tools),
            maxOutputTokens: options.maxOutputTokens,
            format: outputFormat(format),
        });
        const { json, ...rest } = response;
        let body;
        if (format !== 'neutral') {
            try {
                body = JSON.parse(json);
            }
            catch {
                throw new CtxdError(grpc.status.INTERNAL, `BuildMessages returned no readable ${format} body`);
            }
        }
        return { ...rest, body };
    }
    /** Appends messages atomically; retried with one idempotency key. */
    append(messages, options = {}) {
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
    appendResponse(response, options) {
        const items = options.items === undefined ? '' : toJsonText(nativeItems(options.items, options.format), 'items');
        return this.native(toJsonText(response, 'response'), items, options);
    }
    /**
     * Appends request items in the provider's shape: tool results (and user messages), e.g.
     * Chat Completions `tool` messages, Responses `function_call_output` items, an
     * Anthropic user message of `tool_result` blocks, Gemini `functionResponse` contents;
     * or `ToolResult`s, which are written in the format's shape.
     */
    appendToolResults(results, options) {
        if (!Array.isArray(results))
            throw new TypeError('results must be an array of request items');
        return this.native('', toJsonText(nativeItems(results, options.format), 'results'), options);
    }
    native(responseJson, itemsJson, options) {
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
    async answerRecall(toolCallId) {
        return this.client.call('AnswerRecall', { sessionId: this.id, toolCallId });
    }
    async check(options = {}) {
        const response = await this.client.call('CheckBudget', {
            sessionId: this.id,
            systemPrompt: options.systemPrompt ?? this.defaults.systemPrompt ?? '',
            tools: toPbTools(options.tools ?? this.defaults.tools),
            maxOutputTokens: options.maxOutputTokens,
            pendingMessages: (options.pendingMessages ?? []).map(toPbMessage),
        });
        if (!response.budget)
            throw new TypeError('CheckBudget answered without a budget');
        return response.budget;
    }
    /** Shrinks the model's view now (or says what it would do, with dryRun). */
    compact(options = {}) {
        const mode = COMPACT_MODES[options.mode ?? 'auto'];
        if (mode === undefined)
            throw new TypeError(`mode must be one of ${Object.keys(COMPACT_MODES).join(', ')}`);
        const waitMs = options.wait ? (options.waitTimeoutMs ?? 60_000) : 0;
        return this.client.call('Compact', {
            sessionId: this.id,
            mode,
            targetTokens: options.targetTokens ?? 0,
            dryRun: options.dryRun ?? false,
            wait: options.wait ?? false,
            waitTimeoutMs: options.waitTimeoutMs ?? 0,
        }, waitMs > 0 ? { timeoutMs: waitMs + COMPACT_MARGIN_MS } : {});
    }
    /**
     * Undoes a compaction (a TOOL_RESULTS_CLEARED or COMPACTION_COMPLETED event's cursor,
     * or a summary it wrote) and every later one: the view as it was before it.
     */
    revertCompaction(target, options = {}) {
        const request = { sessionId: this.id, dryRun: options.dryRun ?? false };
        if ('eventCursor' in target)
            request['eventCursor'] = target.eventCursor;
        else
            request['summaryId'] = target.summaryId;
        if (options.expectedVersion !== undefined)
            request['expectedVersion'] = options.expectedVersion;
        return this.client.call('RevertCompaction', request);
    }
    /**
     * A fork of this session at `atSeq` (omitted: its last seq): a new session sharing
     * the log up to there, which then goes its own way. The fork's handle has this
     * handle's system prompt and tools unless the options give others; see
     * `CtxdClient.forkSession`.
     */
    fork(options = {}) {
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
    spawn(toolCallId, options = {}) {
        return createSession(this.client, { ...options, parentSessionId: this.id, parentToolCallId: toolCallId });
    }
    /**
     * Ends this session; a final answer becomes the result of the parent's tool call that
     * spawned it (see `CtxdClient.finishSession`).
     */
    finish(finalAnswer = '', options = {}) {
        return finishSession(this.client, this.id, finalAnswer, options);
    }
    /** Sets this session's todos and notes (see `CtxdClient.updateLedger`). */
    updateLedger(update) {
        return this.client.call('UpdateLedger', ledgerRequest(this.id, update));
    }
    /** This session's parent, children and subtree totals (see `CtxdClient.tree`). */
    tree() {
        return this.client.call('GetSession', { sessionId: this.id });
    }
    /** The original messages, byte-exact, whatever the view shows of them. */
    expand(target, options = {}) {
        const request = { sessionId: this.id, maxTokens: options.maxTokens ?? 0 };
        if ('summaryId' in target)
            request['summaryId'] = target.summaryId;
        else if ('seqs' in target)
            request['list'] = { seqs: target.seqs };
        else
            request['range'] = { firstSeq: target.firstSeq, lastSeq: target.lastSeq };
        return this.client.call('Expand', request);
    }
    /** Full-text search over this session's messages and summaries. */
    async search(query, options = {}) {
        const response = await this.client.call('Search', searchRequest(this.id, query, options));
        return response.hits;
    }
    /** This session's events as an async iterator that resumes after a disconnect. */
    events(options = {}) {
        return new EventStream(this.client, this.id, options);
    }
}
/** CreateSession through `transport` (CtxdClient.createSession). */
export async function createSession(transport, options = {}) {
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
export async function forkSession(transport, sourceSessionId, options = {}) {
    const request = {
        sourceSessionId,
        sessionId: options.id ?? '',
        policy: options.policy,
        metadata: options.metadata ?? {},
    };
    if (options.atSeq !== undefined)
        request['atSeq'] = options.atSeq;
    const forked = await transport.makeSession('ForkSession', request, options.id, (existing) => existing.forkedFromSessionId === sourceSessionId);
    return new Session(transport, forked.sessionId, forked, { systemPrompt: options.systemPrompt, tools: options.tools });
}
/** FinishSession through `transport` (CtxdClient.finishSession). */
export function finishSession(transport, sessionId, finalAnswer = '', options = {}) {
    return transport.call('FinishSession', { sessionId, finalAnswer, appendToParent: options.appendToParent ?? finalAnswer !== '' }, { retry: false });
}
