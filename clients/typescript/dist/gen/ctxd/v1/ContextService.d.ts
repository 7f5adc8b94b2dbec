import type * as grpc from '@grpc/grpc-js';
import type { MethodDefinition } from '@grpc/proto-loader';
import type { AnswerRecallRequest as _ctxd_v1_AnswerRecallRequest, AnswerRecallRequest__Output as _ctxd_v1_AnswerRecallRequest__Output } from '../../ctxd/v1/AnswerRecallRequest.js';
import type { AppendNativeRequest as _ctxd_v1_AppendNativeRequest, AppendNativeRequest__Output as _ctxd_v1_AppendNativeRequest__Output } from '../../ctxd/v1/AppendNativeRequest.js';
import type { AppendTurnRequest as _ctxd_v1_AppendTurnRequest, AppendTurnRequest__Output as _ctxd_v1_AppendTurnRequest__Output } from '../../ctxd/v1/AppendTurnRequest.js';
import type { AppendTurnResponse as _ctxd_v1_AppendTurnResponse, AppendTurnResponse__Output as _ctxd_v1_AppendTurnResponse__Output } from '../../ctxd/v1/AppendTurnResponse.js';
import type { BuildMessagesRequest as _ctxd_v1_BuildMessagesRequest, BuildMessagesRequest__Output as _ctxd_v1_BuildMessagesRequest__Output } from '../../ctxd/v1/BuildMessagesRequest.js';
import type { BuildMessagesResponse as _ctxd_v1_BuildMessagesResponse, BuildMessagesResponse__Output as _ctxd_v1_BuildMessagesResponse__Output } from '../../ctxd/v1/BuildMessagesResponse.js';
import type { CheckBudgetRequest as _ctxd_v1_CheckBudgetRequest, CheckBudgetRequest__Output as _ctxd_v1_CheckBudgetRequest__Output } from '../../ctxd/v1/CheckBudgetRequest.js';
import type { CheckBudgetResponse as _ctxd_v1_CheckBudgetResponse, CheckBudgetResponse__Output as _ctxd_v1_CheckBudgetResponse__Output } from '../../ctxd/v1/CheckBudgetResponse.js';
import type { CompactRequest as _ctxd_v1_CompactRequest, CompactRequest__Output as _ctxd_v1_CompactRequest__Output } from '../../ctxd/v1/CompactRequest.js';
import type { CompactResponse as _ctxd_v1_CompactResponse, CompactResponse__Output as _ctxd_v1_CompactResponse__Output } from '../../ctxd/v1/CompactResponse.js';
import type { CreateSessionRequest as _ctxd_v1_CreateSessionRequest, CreateSessionRequest__Output as _ctxd_v1_CreateSessionRequest__Output } from '../../ctxd/v1/CreateSessionRequest.js';
import type { CreateSessionResponse as _ctxd_v1_CreateSessionResponse, CreateSessionResponse__Output as _ctxd_v1_CreateSessionResponse__Output } from '../../ctxd/v1/CreateSessionResponse.js';
import type { DeleteSessionRequest as _ctxd_v1_DeleteSessionRequest, DeleteSessionRequest__Output as _ctxd_v1_DeleteSessionRequest__Output } from '../../ctxd/v1/DeleteSessionRequest.js';
import type { DeleteSessionResponse as _ctxd_v1_DeleteSessionResponse, DeleteSessionResponse__Output as _ctxd_v1_DeleteSessionResponse__Output } from '../../ctxd/v1/DeleteSessionResponse.js';
import type { ExpandRequest as _ctxd_v1_ExpandRequest, ExpandRequest__Output as _ctxd_v1_ExpandRequest__Output } from '../../ctxd/v1/ExpandRequest.js';
import type { ExpandResponse as _ctxd_v1_ExpandResponse, ExpandResponse__Output as _ctxd_v1_ExpandResponse__Output } from '../../ctxd/v1/ExpandResponse.js';
import type { ExportSessionChunk as _ctxd_v1_ExportSessionChunk, ExportSessionChunk__Output as _ctxd_v1_ExportSessionChunk__Output } from '../../ctxd/v1/ExportSessionChunk.js';
import type { ExportSessionRequest as _ctxd_v1_ExportSessionRequest, ExportSessionRequest__Output as _ctxd_v1_ExportSessionRequest__Output } from '../../ctxd/v1/ExportSessionRequest.js';
import type { FinishSessionRequest as _ctxd_v1_FinishSessionRequest, FinishSessionRequest__Output as _ctxd_v1_FinishSessionRequest__Output } from '../../ctxd/v1/FinishSessionRequest.js';
import type { FinishSessionResponse as _ctxd_v1_FinishSessionResponse, FinishSessionResponse__Output as _ctxd_v1_FinishSessionResponse__Output } from '../../ctxd/v1/FinishSessionResponse.js';
import type { ForkSessionRequest as _ctxd_v1_ForkSessionRequest, ForkSessionRequest__Output as _ctxd_v1_ForkSessionRequest__Output } from '../../ctxd/v1/ForkSessionRequest.js';
import type { ForkSessionResponse as _ctxd_v1_ForkSessionResponse, ForkSessionResponse__Output as _ctxd_v1_ForkSessionResponse__Output } from '../../ctxd/v1/ForkSessionResponse.js';
import type { GetJobRequest as _ctxd_v1_GetJobRequest, GetJobRequest__Output as _ctxd_v1_GetJobRequest__Output } from '../../ctxd/v1/GetJobRequest.js';
import type { GetSessionRequest as _ctxd_v1_GetSessionRequest, GetSessionRequest__Output as _ctxd_v1_GetSessionRequest__Output } from '../../ctxd/v1/GetSessionRequest.js';
import type { GetSessionResponse as _ctxd_v1_GetSessionResponse, GetSessionResponse__Output as _ctxd_v1_GetSessionResponse__Output } from '../../ctxd/v1/GetSessionResponse.js';
import type { ImportSessionRequest as _ctxd_v1_ImportSessionRequest, ImportSessionRequest__Output as _ctxd_v1_ImportSessionRequest__Output } from '../../ctxd/v1/ImportSessionRequest.js';
import type { ImportSessionResponse as _ctxd_v1_ImportSessionResponse, ImportSessionResponse__Output as _ctxd_v1_ImportSessionResponse__Output } from '../../ctxd/v1/ImportSessionResponse.js';
import type { Job as _ctxd_v1_Job, Job__Output as _ctxd_v1_Job__Output } from '../../ctxd/v1/Job.js';
import type { ListSessionsRequest as _ctxd_v1_ListSessionsRequest, ListSessionsRequest__Output as _ctxd_v1_ListSessionsRequest__Output } from '../../ctxd/v1/ListSessionsRequest.js';
import type { ListSessionsResponse as _ctxd_v1_ListSessionsResponse, ListSessionsResponse__Output as _ctxd_v1_ListSessionsResponse__Output } from '../../ctxd/v1/ListSessionsResponse.js';
import type { RevertCompactionRequest as _ctxd_v1_RevertCompactionRequest, RevertCompactionRequest__Output as _ctxd_v1_RevertCompactionRequest__Output } from '../../ctxd/v1/RevertCompactionRequest.js';
import type { RevertCompactionResponse as _ctxd_v1_RevertCompactionResponse, RevertCompactionResponse__Output as _ctxd_v1_RevertCompactionResponse__Output } from '../../ctxd/v1/RevertCompactionResponse.js';
import type { SearchRequest as _ctxd_v1_SearchRequest, SearchRequest__Output as _ctxd_v1_SearchRequest__Output } from '../../ctxd/v1/SearchRequest.js';
import type { SearchResponse as _ctxd_v1_SearchResponse, SearchResponse__Output as _ctxd_v1_SearchResponse__Output } from '../../ctxd/v1/SearchResponse.js';
import type { SubscribeEventsRequest as _ctxd_v1_SubscribeEventsRequest, SubscribeEventsRequest__Output as _ctxd_v1_SubscribeEventsRequest__Output } from '../../ctxd/v1/SubscribeEventsRequest.js';
import type { SubscribeEventsResponse as _ctxd_v1_SubscribeEventsResponse, SubscribeEventsResponse__Output as _ctxd_v1_SubscribeEventsResponse__Output } from '../../ctxd/v1/SubscribeEventsResponse.js';
import type { UpdateLedgerRequest as _ctxd_v1_UpdateLedgerRequest, UpdateLedgerRequest__Output as _ctxd_v1_UpdateLedgerRequest__Output } from '../../ctxd/v1/UpdateLedgerRequest.js';
import type { UpdateLedgerResponse as _ctxd_v1_UpdateLedgerResponse, UpdateLedgerResponse__Output as _ctxd_v1_UpdateLedgerResponse__Output } from '../../ctxd/v1/UpdateLedgerResponse.js';
/**
 * The context service. One request/response pair per RPC.
 */
export interface ContextServiceClient extends grpc.Client {
    /**
     * Answers a call the model made to one of ctxd's recall tools (the session's policy
     * has recall_tools on; the call is already appended with its assistant message):
     * ctxd_recall_search runs a Search of this session's messages and summaries;
     * ctxd_recall_expand reads messages by seq, a seq range or a summary, within the
     * call's max_tokens and at most a tenth of the window. The answer is appended as the
     * call's tool result (name the tool's, metadata ctxd.recall = "search" or "expand"),
     * which compaction clears before any other result. Arguments that are wrong, or name
     * what the session does not have, are answered with a tool result saying so
     * (metadata ctxd.tool_error), not refused. Retry-safe: a second call for the same
     * tool call returns the first answer (replayed). Errors: NOT_FOUND (session, or no
     * such call in it), INVALID_ARGUMENT (the call is not to a recall tool),
     * FAILED_PRECONDITION (recall_tools is off).
     */
    AnswerRecall(argument: _ctxd_v1_AnswerRecallRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_AppendTurnResponse__Output>): grpc.ClientUnaryCall;
    AnswerRecall(argument: _ctxd_v1_AnswerRecallRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ctxd_v1_AppendTurnResponse__Output>): grpc.ClientUnaryCall;
    AnswerRecall(argument: _ctxd_v1_AnswerRecallRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_AppendTurnResponse__Output>): grpc.ClientUnaryCall;
    AnswerRecall(argument: _ctxd_v1_AnswerRecallRequest, callback: grpc.requestCallback<_ctxd_v1_AppendTurnResponse__Output>): grpc.ClientUnaryCall;
    /**
     * Answers a call the model made to one of ctxd's recall tools (the session's policy
     * has recall_tools on; the call is already appended with its assistant message):
     * ctxd_recall_search runs a Search of this session's messages and summaries;
     * ctxd_recall_expand reads messages by seq, a seq range or a summary, within the
     * call's max_tokens and at most a tenth of the window. The answer is appended as the
     * call's tool result (name the tool's, metadata ctxd.recall = "search" or "expand"),
     * which compaction clears before any other result. Arguments that are wrong, or name
     * what the session does not have, are answered with a tool result saying so
     * (metadata ctxd.tool_error), not refused. Retry-safe: a second call for the same
     * tool call returns the first answer (replayed). Errors: NOT_FOUND (session, or no
     * such call in it), INVALID_ARGUMENT (the call is not to a recall tool),
     * FAILED_PRECONDITION (recall_tools is off).
     */
    answerRecall(argument: _ctxd_v1_AnswerRecallRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_AppendTurnResponse__Output>): grpc.ClientUnaryCall;
    answerRecall(argument: _ctxd_v1_AnswerRecallRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ctxd_v1_AppendTurnResponse__Output>): grpc.ClientUnaryCall;
    answerRecall(argument: _ctxd_v1_AnswerRecallRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_AppendTurnResponse__Output>): grpc.ClientUnaryCall;
    answerRecall(argument: _ctxd_v1_AnswerRecallRequest, callback: grpc.requestCallback<_ctxd_v1_AppendTurnResponse__Output>): grpc.ClientUnaryCall;
    /**
     * Appends what a backend already holds, in its provider's own JSON shape: a model's
     * response body and tool results (or user messages) as request items. ctxd extracts
     * the messages, reasoning, tool calls and usage itself.
     */
    AppendNative(argument: _ctxd_v1_AppendNativeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_AppendTurnResponse__Output>): grpc.ClientUnaryCall;
    AppendNative(argument: _ctxd_v1_AppendNativeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ctxd_v1_AppendTurnResponse__Output>): grpc.ClientUnaryCall;
    AppendNative(argument: _ctxd_v1_AppendNativeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_AppendTurnResponse__Output>): grpc.ClientUnaryCall;
    AppendNative(argument: _ctxd_v1_AppendNativeRequest, callback: grpc.requestCallback<_ctxd_v1_AppendTurnResponse__Output>): grpc.ClientUnaryCall;
    /**
     * Appends what a backend already holds, in its provider's own JSON shape: a model's
     * response body and tool results (or user messages) as request items. ctxd extracts
     * the messages, reasoning, tool calls and usage itself.
     */
    appendNative(argument: _ctxd_v1_AppendNativeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_AppendTurnResponse__Output>): grpc.ClientUnaryCall;
    appendNative(argument: _ctxd_v1_AppendNativeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ctxd_v1_AppendTurnResponse__Output>): grpc.ClientUnaryCall;
    appendNative(argument: _ctxd_v1_AppendNativeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_AppendTurnResponse__Output>): grpc.ClientUnaryCall;
    appendNative(argument: _ctxd_v1_AppendNativeRequest, callback: grpc.requestCallback<_ctxd_v1_AppendTurnResponse__Output>): grpc.ClientUnaryCall;
    /**
     * Appends one or more messages atomically (all or nothing). Writes to one session are
     * serialized. Returns the new version, the seqs assigned and the budget report.
     */
    AppendTurn(argument: _ctxd_v1_AppendTurnRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_AppendTurnResponse__Output>): grpc.ClientUnaryCall;
    AppendTurn(argument: _ctxd_v1_AppendTurnRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ctxd_v1_AppendTurnResponse__Output>): grpc.ClientUnaryCall;
    AppendTurn(argument: _ctxd_v1_AppendTurnRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_AppendTurnResponse__Output>): grpc.ClientUnaryCall;
    AppendTurn(argument: _ctxd_v1_AppendTurnRequest, callback: grpc.requestCallback<_ctxd_v1_AppendTurnResponse__Output>): grpc.ClientUnaryCall;
    /**
     * Appends one or more messages atomically (all or nothing). Writes to one session are
     * serialized. Returns the new version, the seqs assigned and the budget report.
     */
    appendTurn(argument: _ctxd_v1_AppendTurnRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_AppendTurnResponse__Output>): grpc.ClientUnaryCall;
    appendTurn(argument: _ctxd_v1_AppendTurnRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ctxd_v1_AppendTurnResponse__Output>): grpc.ClientUnaryCall;
    appendTurn(argument: _ctxd_v1_AppendTurnRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_AppendTurnResponse__Output>): grpc.ClientUnaryCall;
    appendTurn(argument: _ctxd_v1_AppendTurnRequest, callback: grpc.requestCallback<_ctxd_v1_AppendTurnResponse__Output>): grpc.ClientUnaryCall;
    /**
     * Returns the message array to send to the model now, always within budget and
     * always provider-valid (no tool call without its result, no result without its call).
     */
    BuildMessages(argument: _ctxd_v1_BuildMessagesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_BuildMessagesResponse__Output>): grpc.ClientUnaryCall;
    BuildMessages(argument: _ctxd_v1_BuildMessagesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ctxd_v1_BuildMessagesResponse__Output>): grpc.ClientUnaryCall;
    BuildMessages(argument: _ctxd_v1_BuildMessagesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_BuildMessagesResponse__Output>): grpc.ClientUnaryCall;
    BuildMessages(argument: _ctxd_v1_BuildMessagesRequest, callback: grpc.requestCallback<_ctxd_v1_BuildMessagesResponse__Output>): grpc.ClientUnaryCall;
    /**
     * Returns the message array to send to the model now, always within budget and
     * always provider-valid (no tool call without its result, no result without its call).
     */
    buildMessages(argument: _ctxd_v1_BuildMessagesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_BuildMessagesResponse__Output>): grpc.ClientUnaryCall;
    buildMessages(argument: _ctxd_v1_BuildMessagesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ctxd_v1_BuildMessagesResponse__Output>): grpc.ClientUnaryCall;
    buildMessages(argument: _ctxd_v1_BuildMessagesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_BuildMessagesResponse__Output>): grpc.ClientUnaryCall;
    buildMessages(argument: _ctxd_v1_BuildMessagesRequest, callback: grpc.requestCallback<_ctxd_v1_BuildMessagesResponse__Output>): grpc.ClientUnaryCall;
    /**
     * Read-only budget check for a prospective request. Cost does not grow with the length
     * of the session: it uses counters kept on the session.
     */
    CheckBudget(argument: _ctxd_v1_CheckBudgetRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_CheckBudgetResponse__Output>): grpc.ClientUnaryCall;
    CheckBudget(argument: _ctxd_v1_CheckBudgetRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ctxd_v1_CheckBudgetResponse__Output>): grpc.ClientUnaryCall;
    CheckBudget(argument: _ctxd_v1_CheckBudgetRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_CheckBudgetResponse__Output>): grpc.ClientUnaryCall;
    CheckBudget(argument: _ctxd_v1_CheckBudgetRequest, callback: grpc.requestCallback<_ctxd_v1_CheckBudgetResponse__Output>): grpc.ClientUnaryCall;
    /**
     * Read-only budget check for a prospective request. Cost does not grow with the length
     * of the session: it uses counters kept on the session.
     */
    checkBudget(argument: _ctxd_v1_CheckBudgetRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_CheckBudgetResponse__Output>): grpc.ClientUnaryCall;
    checkBudget(argument: _ctxd_v1_CheckBudgetRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ctxd_v1_CheckBudgetResponse__Output>): grpc.ClientUnaryCall;
    checkBudget(argument: _ctxd_v1_CheckBudgetRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_CheckBudgetResponse__Output>): grpc.ClientUnaryCall;
    checkBudget(argument: _ctxd_v1_CheckBudgetRequest, callback: grpc.requestCallback<_ctxd_v1_CheckBudgetResponse__Output>): grpc.ClientUnaryCall;
    /**
     * Shrinks the model's view now (or, with dry_run, says what it would do). The log is
     * never changed: originals stay readable with Expand.
     */
    Compact(argument: _ctxd_v1_CompactRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_CompactResponse__Output>): grpc.ClientUnaryCall;
    Compact(argument: _ctxd_v1_CompactRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ctxd_v1_CompactResponse__Output>): grpc.ClientUnaryCall;
    Compact(argument: _ctxd_v1_CompactRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_CompactResponse__Output>): grpc.ClientUnaryCall;
    Compact(argument: _ctxd_v1_CompactRequest, callback: grpc.requestCallback<_ctxd_v1_CompactResponse__Output>): grpc.ClientUnaryCall;
    /**
     * Shrinks the model's view now (or, with dry_run, says what it would do). The log is
     * never changed: originals stay readable with Expand.
     */
    compact(argument: _ctxd_v1_CompactRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_CompactResponse__Output>): grpc.ClientUnaryCall;
    compact(argument: _ctxd_v1_CompactRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ctxd_v1_CompactResponse__Output>): grpc.ClientUnaryCall;
    compact(argument: _ctxd_v1_CompactRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_CompactResponse__Output>): grpc.ClientUnaryCall;
    compact(argument: _ctxd_v1_CompactRequest, callback: grpc.requestCallback<_ctxd_v1_CompactResponse__Output>): grpc.ClientUnaryCall;
    /**
     * Creates a session with a policy. The id may be chosen by the client (unique per
     * tenant) or generated. ALREADY_EXISTS when the id is taken.
     */
    CreateSession(argument: _ctxd_v1_CreateSessionRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_CreateSessionResponse__Output>): grpc.ClientUnaryCall;
    CreateSession(argument: _ctxd_v1_CreateSessionRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ctxd_v1_CreateSessionResponse__Output>): grpc.ClientUnaryCall;
    CreateSession(argument: _ctxd_v1_CreateSessionRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_CreateSessionResponse__Output>): grpc.ClientUnaryCall;
    CreateSession(argument: _ctxd_v1_CreateSessionRequest, callback: grpc.requestCallback<_ctxd_v1_CreateSessionResponse__Output>): grpc.ClientUnaryCall;
    /**
     * Creates a session with a policy. The id may be chosen by the client (unique per
     * tenant) or generated. ALREADY_EXISTS when the id is taken.
     */
    createSession(argument: _ctxd_v1_CreateSessionRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_CreateSessionResponse__Output>): grpc.ClientUnaryCall;
    createSession(argument: _ctxd_v1_CreateSessionRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ctxd_v1_CreateSessionResponse__Output>): grpc.ClientUnaryCall;
    createSession(argument: _ctxd_v1_CreateSessionRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_CreateSessionResponse__Output>): grpc.ClientUnaryCall;
    createSession(argument: _ctxd_v1_CreateSessionRequest, callback: grpc.requestCallback<_ctxd_v1_CreateSessionResponse__Output>): grpc.ClientUnaryCall;
    /**
     * Deletes a session with its whole log. NOT_FOUND when it does not exist. Its
     * children stay (GetSession then shows them without a parent) and stay in the trees
     * of its ancestors for tree-scoped Search, SubscribeEvents and subtree sums. Forks of
     * it keep working: rows a fork still reads stay, unreachable, until the last fork goes.
     */
    DeleteSession(argument: _ctxd_v1_DeleteSessionRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_DeleteSessionResponse__Output>): grpc.ClientUnaryCall;
    DeleteSession(argument: _ctxd_v1_DeleteSessionRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ctxd_v1_DeleteSessionResponse__Output>): grpc.ClientUnaryCall;
    DeleteSession(argument: _ctxd_v1_DeleteSessionRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_DeleteSessionResponse__Output>): grpc.ClientUnaryCall;
    DeleteSession(argument: _ctxd_v1_DeleteSessionRequest, callback: grpc.requestCallback<_ctxd_v1_DeleteSessionResponse__Output>): grpc.ClientUnaryCall;
    /**
     * Deletes a session with its whole log. NOT_FOUND when it does not exist. Its
     * children stay (GetSession then shows them without a parent) and stay in the trees
     * of its ancestors for tree-scoped Search, SubscribeEvents and subtree sums. Forks of
     * it keep working: rows a fork still reads stay, unreachable, until the last fork goes.
     */
    deleteSession(argument: _ctxd_v1_DeleteSessionRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_DeleteSessionResponse__Output>): grpc.ClientUnaryCall;
    deleteSession(argument: _ctxd_v1_DeleteSessionRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ctxd_v1_DeleteSessionResponse__Output>): grpc.ClientUnaryCall;
    deleteSession(argument: _ctxd_v1_DeleteSessionRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_DeleteSessionResponse__Output>): grpc.ClientUnaryCall;
    deleteSession(argument: _ctxd_v1_DeleteSessionRequest, callback: grpc.requestCallback<_ctxd_v1_DeleteSessionResponse__Output>): grpc.ClientUnaryCall;
    /**
     * Returns original messages of the log by seq, byte-exact, whatever the model's view
     * shows of them (left out to fit, cleared, evicted): nothing appended is ever lost.
     */
    Expand(argument: _ctxd_v1_ExpandRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_ExpandResponse__Output>): grpc.ClientUnaryCall;
    Expand(argument: _ctxd_v1_ExpandRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ctxd_v1_ExpandResponse__Output>): grpc.ClientUnaryCall;
    Expand(argument: _ctxd_v1_ExpandRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_ExpandResponse__Output>): grpc.ClientUnaryCall;
    Expand(argument: _ctxd_v1_ExpandRequest, callback: grpc.requestCallback<_ctxd_v1_ExpandResponse__Output>): grpc.ClientUnaryCall;
    /**
     * Returns original messages of the log by seq, byte-exact, whatever the model's view
     * shows of them (left out to fit, cleared, evicted): nothing appended is ever lost.
     */
    expand(argument: _ctxd_v1_ExpandRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_ExpandResponse__Output>): grpc.ClientUnaryCall;
    expand(argument: _ctxd_v1_ExpandRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ctxd_v1_ExpandResponse__Output>): grpc.ClientUnaryCall;
    expand(argument: _ctxd_v1_ExpandRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_ExpandResponse__Output>): grpc.ClientUnaryCall;
    expand(argument: _ctxd_v1_ExpandRequest, callback: grpc.requestCallback<_ctxd_v1_ExpandResponse__Output>): grpc.ClientUnaryCall;
    /**
     * The session as a file (chunks of bytes, in order), to move it to another server or
     * hand it to a bug report: JSON lines in a versioned, self-describing format — a
     * header, the session (policy, metadata, the state its builds read), every message of
     * its log with its view state, the summaries it sees with their tree, its task ledger,
     * and an end record with a SHA-256 of the rest (docs/api.md, "Export and import").
     * Its events, jobs, idempotency keys and revert records stay behind.
     */
    ExportSession(argument: _ctxd_v1_ExportSessionRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_ctxd_v1_ExportSessionChunk__Output>;
    ExportSession(argument: _ctxd_v1_ExportSessionRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_ctxd_v1_ExportSessionChunk__Output>;
    /**
     * The session as a file (chunks of bytes, in order), to move it to another server or
     * hand it to a bug report: JSON lines in a versioned, self-describing format — a
     * header, the session (policy, metadata, the state its builds read), every message of
     * its log with its view state, the summaries it sees with their tree, its task ledger,
     * and an end record with a SHA-256 of the rest (docs/api.md, "Export and import").
     * Its events, jobs, idempotency keys and revert records stay behind.
     */
    exportSession(argument: _ctxd_v1_ExportSessionRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_ctxd_v1_ExportSessionChunk__Output>;
    exportSession(argument: _ctxd_v1_ExportSessionRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_ctxd_v1_ExportSessionChunk__Output>;
    /**
     * Ends a session, typically a subagent's (created with parent_session_id): it takes
     * no more appends (AppendTurn, AppendNative: FAILED_PRECONDITION), and, with
     * append_to_parent, its final answer becomes the result of the parent's tool call
     * that spawned it, in the same transaction. That append is checked and written as an
     * AppendTurn of the tool result would be (the call already answered: nothing
     * changes, FAILED_PRECONDITION naming append_to_parent); the parent's version
     * advances. SESSION_FINISHED goes on the session and on its parent. Finishing twice
     * is FAILED_PRECONDITION naming session_id.
     */
    FinishSession(argument: _ctxd_v1_FinishSessionRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_FinishSessionResponse__Output>): grpc.ClientUnaryCall;
    FinishSession(argument: _ctxd_v1_FinishSessionRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ctxd_v1_FinishSessionResponse__Output>): grpc.ClientUnaryCall;
    FinishSession(argument: _ctxd_v1_FinishSessionRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_FinishSessionResponse__Output>): grpc.ClientUnaryCall;
    FinishSession(argument: _ctxd_v1_FinishSessionRequest, callback: grpc.requestCallback<_ctxd_v1_FinishSessionResponse__Output>): grpc.ClientUnaryCall;
    /**
     * Ends a session, typically a subagent's (created with parent_session_id): it takes
     * no more appends (AppendTurn, AppendNative: FAILED_PRECONDITION), and, with
     * append_to_parent, its final answer becomes the result of the parent's tool call
     * that spawned it, in the same transaction. That append is checked and written as an
     * AppendTurn of the tool result would be (the call already answered: nothing
     * changes, FAILED_PRECONDITION naming append_to_parent); the parent's version
     * advances. SESSION_FINISHED goes on the session and on its parent. Finishing twice
     * is FAILED_PRECONDITION naming session_id.
     */
    finishSession(argument: _ctxd_v1_FinishSessionRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_FinishSessionResponse__Output>): grpc.ClientUnaryCall;
    finishSession(argument: _ctxd_v1_FinishSessionRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ctxd_v1_FinishSessionResponse__Output>): grpc.ClientUnaryCall;
    finishSession(argument: _ctxd_v1_FinishSessionRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_FinishSessionResponse__Output>): grpc.ClientUnaryCall;
    finishSession(argument: _ctxd_v1_FinishSessionRequest, callback: grpc.requestCallback<_ctxd_v1_FinishSessionResponse__Output>): grpc.ClientUnaryCall;
    /**
     * Makes a new session whose log is the source's up to at_seq, shared (not copied), and
     * which then diverges: appends, compaction and deletion on either side never change
     * what the other returns. Summaries of the shared messages are reused. Announced as
     * SESSION_FORKED on both sessions' streams. NOT_FOUND for an unknown source,
     * ALREADY_EXISTS when the new id is taken, INVALID_ARGUMENT for a seq past the end.
     * The fork is a root session: a subagent's fork has no parent link (parent_session_id
     * empty, depth 0) and is not finished, even when its source was.
     */
    ForkSession(argument: _ctxd_v1_ForkSessionRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_ForkSessionResponse__Output>): grpc.ClientUnaryCall;
    ForkSession(argument: _ctxd_v1_ForkSessionRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ctxd_v1_ForkSessionResponse__Output>): grpc.ClientUnaryCall;
    ForkSession(argument: _ctxd_v1_ForkSessionRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_ForkSessionResponse__Output>): grpc.ClientUnaryCall;
    ForkSession(argument: _ctxd_v1_ForkSessionRequest, callback: grpc.requestCallback<_ctxd_v1_ForkSessionResponse__Output>): grpc.ClientUnaryCall;
    /**
     * Makes a new session whose log is the source's up to at_seq, shared (not copied), and
     * which then diverges: appends, compaction and deletion on either side never change
     * what the other returns. Summaries of the shared messages are reused. Announced as
     * SESSION_FORKED on both sessions' streams. NOT_FOUND for an unknown source,
     * ALREADY_EXISTS when the new id is taken, INVALID_ARGUMENT for a seq past the end.
     * The fork is a root session: a subagent's fork has no parent link (parent_session_id
     * empty, depth 0) and is not finished, even when its source was.
     */
    forkSession(argument: _ctxd_v1_ForkSessionRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_ForkSessionResponse__Output>): grpc.ClientUnaryCall;
    forkSession(argument: _ctxd_v1_ForkSessionRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ctxd_v1_ForkSessionResponse__Output>): grpc.ClientUnaryCall;
    forkSession(argument: _ctxd_v1_ForkSessionRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_ForkSessionResponse__Output>): grpc.ClientUnaryCall;
    forkSession(argument: _ctxd_v1_ForkSessionRequest, callback: grpc.requestCallback<_ctxd_v1_ForkSessionResponse__Output>): grpc.ClientUnaryCall;
    /**
     * Reads a background job (a summarization), e.g. the one Compact or AppendTurn
     * enqueued. NOT_FOUND for another tenant's job or one pruned after its retention.
     */
    GetJob(argument: _ctxd_v1_GetJobRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_Job__Output>): grpc.ClientUnaryCall;
    GetJob(argument: _ctxd_v1_GetJobRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ctxd_v1_Job__Output>): grpc.ClientUnaryCall;
    GetJob(argument: _ctxd_v1_GetJobRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_Job__Output>): grpc.ClientUnaryCall;
    GetJob(argument: _ctxd_v1_GetJobRequest, callback: grpc.requestCallback<_ctxd_v1_Job__Output>): grpc.ClientUnaryCall;
    /**
     * Reads a background job (a summarization), e.g. the one Compact or AppendTurn
     * enqueued. NOT_FOUND for another tenant's job or one pruned after its retention.
     */
    getJob(argument: _ctxd_v1_GetJobRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_Job__Output>): grpc.ClientUnaryCall;
    getJob(argument: _ctxd_v1_GetJobRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ctxd_v1_Job__Output>): grpc.ClientUnaryCall;
    getJob(argument: _ctxd_v1_GetJobRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_Job__Output>): grpc.ClientUnaryCall;
    getJob(argument: _ctxd_v1_GetJobRequest, callback: grpc.requestCallback<_ctxd_v1_Job__Output>): grpc.ClientUnaryCall;
    /**
     * Reads a session: effective policy, version, counters and estimator accuracy, and its
     * place in its tree (parent, children, sums over its subtree).
     */
    GetSession(argument: _ctxd_v1_GetSessionRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_GetSessionResponse__Output>): grpc.ClientUnaryCall;
    GetSession(argument: _ctxd_v1_GetSessionRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ctxd_v1_GetSessionResponse__Output>): grpc.ClientUnaryCall;
    GetSession(argument: _ctxd_v1_GetSessionRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_GetSessionResponse__Output>): grpc.ClientUnaryCall;
    GetSession(argument: _ctxd_v1_GetSessionRequest, callback: grpc.requestCallback<_ctxd_v1_GetSessionResponse__Output>): grpc.ClientUnaryCall;
    /**
     * Reads a session: effective policy, version, counters and estimator accuracy, and its
     * place in its tree (parent, children, sums over its subtree).
     */
    getSession(argument: _ctxd_v1_GetSessionRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_GetSessionResponse__Output>): grpc.ClientUnaryCall;
    getSession(argument: _ctxd_v1_GetSessionRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ctxd_v1_GetSessionResponse__Output>): grpc.ClientUnaryCall;
    getSession(argument: _ctxd_v1_GetSessionRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_GetSessionResponse__Output>): grpc.ClientUnaryCall;
    getSession(argument: _ctxd_v1_GetSessionRequest, callback: grpc.requestCallback<_ctxd_v1_GetSessionResponse__Output>): grpc.ClientUnaryCall;
    /**
     * Creates a session from an ExportSession file (streamed in chunks, in order): on any
     * server, it gives the same Expand, byte for byte, and the same builds. Every record
     * is checked before anything is written: a file that is damaged, changed, cut short
     * or of another version is INVALID_ARGUMENT naming the record (`record 12
     * (message).role`), and nothing is written. An id already taken is ALREADY_EXISTS.
     */
    ImportSession(metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_ImportSessionResponse__Output>): grpc.ClientWritableStream<_ctxd_v1_ImportSessionRequest>;
    ImportSession(metadata: grpc.Metadata, callback: grpc.requestCallback<_ctxd_v1_ImportSessionResponse__Output>): grpc.ClientWritableStream<_ctxd_v1_ImportSessionRequest>;
    ImportSession(options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_ImportSessionResponse__Output>): grpc.ClientWritableStream<_ctxd_v1_ImportSessionRequest>;
    ImportSession(callback: grpc.requestCallback<_ctxd_v1_ImportSessionResponse__Output>): grpc.ClientWritableStream<_ctxd_v1_ImportSessionRequest>;
    /**
     * Creates a session from an ExportSession file (streamed in chunks, in order): on any
     * server, it gives the same Expand, byte for byte, and the same builds. Every record
     * is checked before anything is written: a file that is damaged, changed, cut short
     * or of another version is INVALID_ARGUMENT naming the record (`record 12
     * (message).role`), and nothing is written. An id already taken is ALREADY_EXISTS.
     */
    importSession(metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_ImportSessionResponse__Output>): grpc.ClientWritableStream<_ctxd_v1_ImportSessionRequest>;
    importSession(metadata: grpc.Metadata, callback: grpc.requestCallback<_ctxd_v1_ImportSessionResponse__Output>): grpc.ClientWritableStream<_ctxd_v1_ImportSessionRequest>;
    importSession(options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_ImportSessionResponse__Output>): grpc.ClientWritableStream<_ctxd_v1_ImportSessionRequest>;
    importSession(callback: grpc.requestCallback<_ctxd_v1_ImportSessionResponse__Output>): grpc.ClientWritableStream<_ctxd_v1_ImportSessionRequest>;
    /**
     * Lists the caller's sessions, most recently active (updated) first, a page at a
     * time (AIP-158), filtered by metadata, parent, fork source, finished, and created
     * and updated ranges. Deleted sessions are not listed.
     */
    ListSessions(argument: _ctxd_v1_ListSessionsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_ListSessionsResponse__Output>): grpc.ClientUnaryCall;
    ListSessions(argument: _ctxd_v1_ListSessionsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ctxd_v1_ListSessionsResponse__Output>): grpc.ClientUnaryCall;
    ListSessions(argument: _ctxd_v1_ListSessionsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_ListSessionsResponse__Output>): grpc.ClientUnaryCall;
    ListSessions(argument: _ctxd_v1_ListSessionsRequest, callback: grpc.requestCallback<_ctxd_v1_ListSessionsResponse__Output>): grpc.ClientUnaryCall;
    /**
     * Lists the caller's sessions, most recently active (updated) first, a page at a
     * time (AIP-158), filtered by metadata, parent, fork source, finished, and created
     * and updated ranges. Deleted sessions are not listed.
     */
    listSessions(argument: _ctxd_v1_ListSessionsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_ListSessionsResponse__Output>): grpc.ClientUnaryCall;
    listSessions(argument: _ctxd_v1_ListSessionsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ctxd_v1_ListSessionsResponse__Output>): grpc.ClientUnaryCall;
    listSessions(argument: _ctxd_v1_ListSessionsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_ListSessionsResponse__Output>): grpc.ClientUnaryCall;
    listSessions(argument: _ctxd_v1_ListSessionsRequest, callback: grpc.requestCallback<_ctxd_v1_ListSessionsResponse__Output>): grpc.ClientUnaryCall;
    /**
     * Undoes a compaction (a clearing or a summarization pass, named by its event's cursor
     * or a summary it wrote) and every later one still in force: the model's view is as
     * it was before it, with the messages appended since. The log is never changed; the
     * summaries taken out of the view stay readable (Expand, Search; GetSession lists
     * them as reverted). Automatic compaction then waits until the session has grown
     * (CompactionStats.compaction_held) or a Compact. With dry_run, says what it would
     * restore and changes nothing.
     */
    RevertCompaction(argument: _ctxd_v1_RevertCompactionRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_RevertCompactionResponse__Output>): grpc.ClientUnaryCall;
    RevertCompaction(argument: _ctxd_v1_RevertCompactionRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ctxd_v1_RevertCompactionResponse__Output>): grpc.ClientUnaryCall;
    RevertCompaction(argument: _ctxd_v1_RevertCompactionRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_RevertCompactionResponse__Output>): grpc.ClientUnaryCall;
    RevertCompaction(argument: _ctxd_v1_RevertCompactionRequest, callback: grpc.requestCallback<_ctxd_v1_RevertCompactionResponse__Output>): grpc.ClientUnaryCall;
    /**
     * Undoes a compaction (a clearing or a summarization pass, named by its event's cursor
     * or a summary it wrote) and every later one still in force: the model's view is as
     * it was before it, with the messages appended since. The log is never changed; the
     * summaries taken out of the view stay readable (Expand, Search; GetSession lists
     * them as reverted). Automatic compaction then waits until the session has grown
     * (CompactionStats.compaction_held) or a Compact. With dry_run, says what it would
     * restore and changes nothing.
     */
    revertCompaction(argument: _ctxd_v1_RevertCompactionRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_RevertCompactionResponse__Output>): grpc.ClientUnaryCall;
    revertCompaction(argument: _ctxd_v1_RevertCompactionRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ctxd_v1_RevertCompactionResponse__Output>): grpc.ClientUnaryCall;
    revertCompaction(argument: _ctxd_v1_RevertCompactionRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_RevertCompactionResponse__Output>): grpc.ClientUnaryCall;
    revertCompaction(argument: _ctxd_v1_RevertCompactionRequest, callback: grpc.requestCallback<_ctxd_v1_RevertCompactionResponse__Output>): grpc.ClientUnaryCall;
    /**
     * Full-text search over the archive: every message ever appended (whatever the view
     * shows of it) and every summary, of one session or all of the tenant's. Hits point
     * to Expand (by seq, or by summary id). Each text is indexed whole up to 50 000
     * characters, beyond that by its first 40 000 and last 10 000.
     */
    Search(argument: _ctxd_v1_SearchRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_SearchResponse__Output>): grpc.ClientUnaryCall;
    Search(argument: _ctxd_v1_SearchRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ctxd_v1_SearchResponse__Output>): grpc.ClientUnaryCall;
    Search(argument: _ctxd_v1_SearchRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_SearchResponse__Output>): grpc.ClientUnaryCall;
    Search(argument: _ctxd_v1_SearchRequest, callback: grpc.requestCallback<_ctxd_v1_SearchResponse__Output>): grpc.ClientUnaryCall;
    /**
     * Full-text search over the archive: every message ever appended (whatever the view
     * shows of it) and every summary, of one session or all of the tenant's. Hits point
     * to Expand (by seq, or by summary id). Each text is indexed whole up to 50 000
     * characters, beyond that by its first 40 000 and last 10 000.
     */
    search(argument: _ctxd_v1_SearchRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_SearchResponse__Output>): grpc.ClientUnaryCall;
    search(argument: _ctxd_v1_SearchRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ctxd_v1_SearchResponse__Output>): grpc.ClientUnaryCall;
    search(argument: _ctxd_v1_SearchRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_SearchResponse__Output>): grpc.ClientUnaryCall;
    search(argument: _ctxd_v1_SearchRequest, callback: grpc.requestCallback<_ctxd_v1_SearchResponse__Output>): grpc.ClientUnaryCall;
    /**
     * What ctxd did to a session (compactions and their reverts, clearing, eviction, budget thresholds,
     * deletion), as a stream: the backlog after a cursor first, then live. At-least-once
     * and in order; resumable from the last event's cursor after a disconnect or a server
     * restart with nothing missing.
     */
    SubscribeEvents(argument: _ctxd_v1_SubscribeEventsRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_ctxd_v1_SubscribeEventsResponse__Output>;
    SubscribeEvents(argument: _ctxd_v1_SubscribeEventsRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_ctxd_v1_SubscribeEventsResponse__Output>;
    /**
     * What ctxd did to a session (compactions and their reverts, clearing, eviction, budget thresholds,
     * deletion), as a stream: the backlog after a cursor first, then live. At-least-once
     * and in order; resumable from the last event's cursor after a disconnect or a server
     * restart with nothing missing.
     */
    subscribeEvents(argument: _ctxd_v1_SubscribeEventsRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_ctxd_v1_SubscribeEventsResponse__Output>;
    subscribeEvents(argument: _ctxd_v1_SubscribeEventsRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_ctxd_v1_SubscribeEventsResponse__Output>;
    /**
     * Sets the client's part of the session's task ledger: todos (with their status) and
     * free-form notes. The ledger survives every compaction and is rendered with the
     * summaries (see LedgerEntry); GetSession returns it whole. A todo once done stays
     * done: a later PENDING or IN_PROGRESS for it is not applied and the response lists
     * its id in kept_done_todo_ids. All or nothing: a refused request (INVALID_ARGUMENT
     * naming the field, e.g. `todos[2].text`) changes nothing.
     */
    UpdateLedger(argument: _ctxd_v1_UpdateLedgerRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_UpdateLedgerResponse__Output>): grpc.ClientUnaryCall;
    UpdateLedger(argument: _ctxd_v1_UpdateLedgerRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ctxd_v1_UpdateLedgerResponse__Output>): grpc.ClientUnaryCall;
    UpdateLedger(argument: _ctxd_v1_UpdateLedgerRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_UpdateLedgerResponse__Output>): grpc.ClientUnaryCall;
    UpdateLedger(argument: _ctxd_v1_UpdateLedgerRequest, callback: grpc.requestCallback<_ctxd_v1_UpdateLedgerResponse__Output>): grpc.ClientUnaryCall;
    /**
     * Sets the client's part of the session's task ledger: todos (with their status) and
     * free-form notes. The ledger survives every compaction and is rendered with the
     * summaries (see LedgerEntry); GetSession returns it whole. A todo once done stays
     * done: a later PENDING or IN_PROGRESS for it is not applied and the response lists
     * its id in kept_done_todo_ids. All or nothing: a refused request (INVALID_ARGUMENT
     * naming the field, e.g. `todos[2].text`) changes nothing.
     */
    updateLedger(argument: _ctxd_v1_UpdateLedgerRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_UpdateLedgerResponse__Output>): grpc.ClientUnaryCall;
    updateLedger(argument: _ctxd_v1_UpdateLedgerRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ctxd_v1_UpdateLedgerResponse__Output>): grpc.ClientUnaryCall;
    updateLedger(argument: _ctxd_v1_UpdateLedgerRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ctxd_v1_UpdateLedgerResponse__Output>): grpc.ClientUnaryCall;
    updateLedger(argument: _ctxd_v1_UpdateLedgerRequest, callback: grpc.requestCallback<_ctxd_v1_UpdateLedgerResponse__Output>): grpc.ClientUnaryCall;
}
/**
 * The context service. One request/response pair per RPC.
 */
export interface ContextServiceHandlers extends grpc.UntypedServiceImplementation {
    /**
     * Answers a call the model made to one of ctxd's recall tools (the session's policy
     * has recall_tools on; the call is already appended with its assistant message):
     * ctxd_recall_search runs a Search of this session's messages and summaries;
     * ctxd_recall_expand reads messages by seq, a seq range or a summary, within the
     * call's max_tokens and at most a tenth of the window. The answer is appended as the
     * call's tool result (name the tool's, metadata ctxd.recall = "search" or "expand"),
     * which compaction clears before any other result. Arguments that are wrong, or name
     * what the session does not have, are answered with a tool result saying so
     * (metadata ctxd.tool_error), not refused. Retry-safe: a second call for the same
     * tool call returns the first answer (replayed). Errors: NOT_FOUND (session, or no
     * such call in it), INVALID_ARGUMENT (the call is not to a recall tool),
     * FAILED_PRECONDITION (recall_tools is off).
     */
    AnswerRecall: grpc.handleUnaryCall<_ctxd_v1_AnswerRecallRequest__Output, _ctxd_v1_AppendTurnResponse>;
    /**
     * Appends what a backend already holds, in its provider's own JSON shape: a model's
     * response body and tool results (or user messages) as request items. ctxd extracts
     * the messages, reasoning, tool calls and usage itself.
     */
    AppendNative: grpc.handleUnaryCall<_ctxd_v1_AppendNativeRequest__Output, _ctxd_v1_AppendTurnResponse>;
    /**
     * Appends one or more messages atomically (all or nothing). Writes to one session are
     * serialized. Returns the new version, the seqs assigned and the budget report.
     */
    AppendTurn: grpc.handleUnaryCall<_ctxd_v1_AppendTurnRequest__Output, _ctxd_v1_AppendTurnResponse>;
    /**
     * Returns the message array to send to the model now, always within budget and
     * always provider-valid (no tool call without its result, no result without its call).
     */
    BuildMessages: grpc.handleUnaryCall<_ctxd_v1_BuildMessagesRequest__Output, _ctxd_v1_BuildMessagesResponse>;
    /**
     * Read-only budget check for a prospective request. Cost does not grow with the length
     * of the session: it uses counters kept on the session.
     */
    CheckBudget: grpc.handleUnaryCall<_ctxd_v1_CheckBudgetRequest__Output, _ctxd_v1_CheckBudgetResponse>;
    /**
     * Shrinks the model's view now (or, with dry_run, says what it would do). The log is
     * never changed: originals stay readable with Expand.
     */
    Compact: grpc.handleUnaryCall<_ctxd_v1_CompactRequest__Output, _ctxd_v1_CompactResponse>;
    /**
     * Creates a session with a policy. The id may be chosen by the client (unique per
     * tenant) or generated. ALREADY_EXISTS when the id is taken.
     */
    CreateSession: grpc.handleUnaryCall<_ctxd_v1_CreateSessionRequest__Output, _ctxd_v1_CreateSessionResponse>;
    /**
     * Deletes a session with its whole log. NOT_FOUND when it does not exist. Its
     * children stay (GetSession then shows them without a parent) and stay in the trees
     * of its ancestors for tree-scoped Search, SubscribeEvents and subtree sums. Forks of
     * it keep working: rows a fork still reads stay, unreachable, until the last fork goes.
     */
    DeleteSession: grpc.handleUnaryCall<_ctxd_v1_DeleteSessionRequest__Output, _ctxd_v1_DeleteSessionResponse>;
    /**
     * Returns original messages of the log by seq, byte-exact, whatever the model's view
     * shows of them (left out to fit, cleared, evicted): nothing appended is ever lost.
     */
    Expand: grpc.handleUnaryCall<_ctxd_v1_ExpandRequest__Output, _ctxd_v1_ExpandResponse>;
    /**
     * The session as a file (chunks of bytes, in order), to move it to another server or
     * hand it to a bug report: JSON lines in a versioned, self-describing format — a
     * header, the session (policy, metadata, the state its builds read), every message of
     * its log with its view state, the summaries it sees with their tree, its task ledger,
     * and an end record with a SHA-256 of the rest (docs/api.md, "Export and import").
     * Its events, jobs, idempotency keys and revert records stay behind.
     */
    ExportSession: grpc.handleServerStreamingCall<_ctxd_v1_ExportSessionRequest__Output, _ctxd_v1_ExportSessionChunk>;
    /**
     * Ends a session, typically a subagent's (created with parent_session_id): it takes
     * no more appends (AppendTurn, AppendNative: FAILED_PRECONDITION), and, with
     * append_to_parent, its final answer becomes the result of the parent's tool call
     * that spawned it, in the same transaction. That append is checked and written as an
     * AppendTurn of the tool result would be (the call already answered: nothing
     * changes, FAILED_PRECONDITION naming append_to_parent); the parent's version
     * advances. SESSION_FINISHED goes on the session and on its parent. Finishing twice
     * is FAILED_PRECONDITION naming session_id.
     */
    FinishSession: grpc.handleUnaryCall<_ctxd_v1_FinishSessionRequest__Output, _ctxd_v1_FinishSessionResponse>;
    /**
     * Makes a new session whose log is the source's up to at_seq, shared (not copied), and
     * which then diverges: appends, compaction and deletion on either side never change
     * what the other returns. Summaries of the shared messages are reused. Announced as
     * SESSION_FORKED on both sessions' streams. NOT_FOUND for an unknown source,
     * ALREADY_EXISTS when the new id is taken, INVALID_ARGUMENT for a seq past the end.
     * The fork is a root session: a subagent's fork has no parent link (parent_session_id
     * empty, depth 0) and is not finished, even when its source was.
     */
    ForkSession: grpc.handleUnaryCall<_ctxd_v1_ForkSessionRequest__Output, _ctxd_v1_ForkSessionResponse>;
    /**
     * Reads a background job (a summarization), e.g. the one Compact or AppendTurn
     * enqueued. NOT_FOUND for another tenant's job or one pruned after its retention.
     */
    GetJob: grpc.handleUnaryCall<_ctxd_v1_GetJobRequest__Output, _ctxd_v1_Job>;
    /**
     * Reads a session: effective policy, version, counters and estimator accuracy, and its
     * place in its tree (parent, children, sums over its subtree).
     */
    GetSession: grpc.handleUnaryCall<_ctxd_v1_GetSessionRequest__Output, _ctxd_v1_GetSessionResponse>;
    /**
     * Creates a session from an ExportSession file (streamed in chunks, in order): on any
     * server, it gives the same Expand, byte for byte, and the same builds. Every record
     * is checked before anything is written: a file that is damaged, changed, cut short
     * or of another version is INVALID_ARGUMENT naming the record (`record 12
     * (message).role`), and nothing is written. An id already taken is ALREADY_EXISTS.
     */
    ImportSession: grpc.handleClientStreamingCall<_ctxd_v1_ImportSessionRequest__Output, _ctxd_v1_ImportSessionResponse>;
    /**
     * Lists the caller's sessions, most recently active (updated) first, a page at a
     * time (AIP-158), filtered by metadata, parent, fork source, finished, and created
     * and updated ranges. Deleted sessions are not listed.
     */
    ListSessions: grpc.handleUnaryCall<_ctxd_v1_ListSessionsRequest__Output, _ctxd_v1_ListSessionsResponse>;
    /**
     * Undoes a compaction (a clearing or a summarization pass, named by its event's cursor
     * or a summary it wrote) and every later one still in force: the model's view is as
     * it was before it, with the messages appended since. The log is never changed; the
     * summaries taken out of the view stay readable (Expand, Search; GetSession lists
     * them as reverted). Automatic compaction then waits until the session has grown
     * (CompactionStats.compaction_held) or a Compact. With dry_run, says what it would
     * restore and changes nothing.
     */
    RevertCompaction: grpc.handleUnaryCall<_ctxd_v1_RevertCompactionRequest__Output, _ctxd_v1_RevertCompactionResponse>;
    /**
     * Full-text search over the archive: every message ever appended (whatever the view
     * shows of it) and every summary, of one session or all of the tenant's. Hits point
     * to Expand (by seq, or by summary id). Each text is indexed whole up to 50 000
     * characters, beyond that by its first 40 000 and last 10 000.
     */
    Search: grpc.handleUnaryCall<_ctxd_v1_SearchRequest__Output, _ctxd_v1_SearchResponse>;
    /**
     * What ctxd did to a session (compactions and their reverts, clearing, eviction, budget thresholds,
     * deletion), as a stream: the backlog after a cursor first, then live. At-least-once
     * and in order; resumable from the last event's cursor after a disconnect or a server
     * restart with nothing missing.
     */
    SubscribeEvents: grpc.handleServerStreamingCall<_ctxd_v1_SubscribeEventsRequest__Output, _ctxd_v1_SubscribeEventsResponse>;
    /**
     * Sets the client's part of the session's task ledger: todos (with their status) and
     * free-form notes. The ledger survives every compaction and is rendered with the
     * summaries (see LedgerEntry); GetSession returns it whole. A todo once done stays
     * done: a later PENDING or IN_PROGRESS for it is not applied and the response lists
     * its id in kept_done_todo_ids. All or nothing: a refused request (INVALID_ARGUMENT
     * naming the field, e.g. `todos[2].text`) changes nothing.
     */
    UpdateLedger: grpc.handleUnaryCall<_ctxd_v1_UpdateLedgerRequest__Output, _ctxd_v1_UpdateLedgerResponse>;
}
export interface ContextServiceDefinition extends grpc.ServiceDefinition {
    AnswerRecall: MethodDefinition<_ctxd_v1_AnswerRecallRequest, _ctxd_v1_AppendTurnResponse, _ctxd_v1_AnswerRecallRequest__Output, _ctxd_v1_AppendTurnResponse__Output>;
    AppendNative: MethodDefinition<_ctxd_v1_AppendNativeRequest, _ctxd_v1_AppendTurnResponse, _ctxd_v1_AppendNativeRequest__Output, _ctxd_v1_AppendTurnResponse__Output>;
    AppendTurn: MethodDefinition<_ctxd_v1_AppendTurnRequest, _ctxd_v1_AppendTurnResponse, _ctxd_v1_AppendTurnRequest__Output, _ctxd_v1_AppendTurnResponse__Output>;
    BuildMessages: MethodDefinition<_ctxd_v1_BuildMessagesRequest, _ctxd_v1_BuildMessagesResponse, _ctxd_v1_BuildMessagesRequest__Output, _ctxd_v1_BuildMessagesResponse__Output>;
    CheckBudget: MethodDefinition<_ctxd_v1_CheckBudgetRequest, _ctxd_v1_CheckBudgetResponse, _ctxd_v1_CheckBudgetRequest__Output, _ctxd_v1_CheckBudgetResponse__Output>;
    Compact: MethodDefinition<_ctxd_v1_CompactRequest, _ctxd_v1_CompactResponse, _ctxd_v1_CompactRequest__Output, _ctxd_v1_CompactResponse__Output>;
    CreateSession: MethodDefinition<_ctxd_v1_CreateSessionRequest, _ctxd_v1_CreateSessionResponse, _ctxd_v1_CreateSessionRequest__Output, _ctxd_v1_CreateSessionResponse__Output>;
    DeleteSession: MethodDefinition<_ctxd_v1_DeleteSessionRequest, _ctxd_v1_DeleteSessionResponse, _ctxd_v1_DeleteSessionRequest__Output, _ctxd_v1_DeleteSessionResponse__Output>;
    Expand: MethodDefinition<_ctxd_v1_ExpandRequest, _ctxd_v1_ExpandResponse, _ctxd_v1_ExpandRequest__Output, _ctxd_v1_ExpandResponse__Output>;
    ExportSession: MethodDefinition<_ctxd_v1_ExportSessionRequest, _ctxd_v1_ExportSessionChunk, _ctxd_v1_ExportSessionRequest__Output, _ctxd_v1_ExportSessionChunk__Output>;
    FinishSession: MethodDefinition<_ctxd_v1_FinishSessionRequest, _ctxd_v1_FinishSessionResponse, _ctxd_v1_FinishSessionRequest__Output, _ctxd_v1_FinishSessionResponse__Output>;
    ForkSession: MethodDefinition<_ctxd_v1_ForkSessionRequest, _ctxd_v1_ForkSessionResponse, _ctxd_v1_ForkSessionRequest__Output, _ctxd_v1_ForkSessionResponse__Output>;
    GetJob: MethodDefinition<_ctxd_v1_GetJobRequest, _ctxd_v1_Job, _ctxd_v1_GetJobRequest__Output, _ctxd_v1_Job__Output>;
    GetSession: MethodDefinition<_ctxd_v1_GetSessionRequest, _ctxd_v1_GetSessionResponse, _ctxd_v1_GetSessionRequest__Output, _ctxd_v1_GetSessionResponse__Output>;
    ImportSession: MethodDefinition<_ctxd_v1_ImportSessionRequest, _ctxd_v1_ImportSessionResponse, _ctxd_v1_ImportSessionRequest__Output, _ctxd_v1_ImportSessionResponse__Output>;
    ListSessions: MethodDefinition<_ctxd_v1_ListSessionsRequest, _ctxd_v1_ListSessionsResponse, _ctxd_v1_ListSessionsRequest__Output, _ctxd_v1_ListSessionsResponse__Output>;
    RevertCompaction: MethodDefinition<_ctxd_v1_RevertCompactionRequest, _ctxd_v1_RevertCompactionResponse, _ctxd_v1_RevertCompactionRequest__Output, _ctxd_v1_RevertCompactionResponse__Output>;
    Search: MethodDefinition<_ctxd_v1_SearchRequest, _ctxd_v1_SearchResponse, _ctxd_v1_SearchRequest__Output, _ctxd_v1_SearchResponse__Output>;
    SubscribeEvents: MethodDefinition<_ctxd_v1_SubscribeEventsRequest, _ctxd_v1_SubscribeEventsResponse, _ctxd_v1_SubscribeEventsRequest__Output, _ctxd_v1_SubscribeEventsResponse__Output>;
    UpdateLedger: MethodDefinition<_ctxd_v1_UpdateLedgerRequest, _ctxd_v1_UpdateLedgerResponse, _ctxd_v1_UpdateLedgerRequest__Output, _ctxd_v1_UpdateLedgerResponse__Output>;
}
