import type { EventKind as _ctxd_v1_EventKind, EventKind__Output as _ctxd_v1_EventKind__Output } from '../../ctxd/v1/EventKind.js';
import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp.js';
import type { CompactionStarted as _ctxd_v1_CompactionStarted, CompactionStarted__Output as _ctxd_v1_CompactionStarted__Output } from '../../ctxd/v1/CompactionStarted.js';
import type { CompactionCompleted as _ctxd_v1_CompactionCompleted, CompactionCompleted__Output as _ctxd_v1_CompactionCompleted__Output } from '../../ctxd/v1/CompactionCompleted.js';
import type { CompactionFailed as _ctxd_v1_CompactionFailed, CompactionFailed__Output as _ctxd_v1_CompactionFailed__Output } from '../../ctxd/v1/CompactionFailed.js';
import type { ToolResultsCleared as _ctxd_v1_ToolResultsCleared, ToolResultsCleared__Output as _ctxd_v1_ToolResultsCleared__Output } from '../../ctxd/v1/ToolResultsCleared.js';
import type { OutputEvicted as _ctxd_v1_OutputEvicted, OutputEvicted__Output as _ctxd_v1_OutputEvicted__Output } from '../../ctxd/v1/OutputEvicted.js';
import type { BudgetThresholdCrossed as _ctxd_v1_BudgetThresholdCrossed, BudgetThresholdCrossed__Output as _ctxd_v1_BudgetThresholdCrossed__Output } from '../../ctxd/v1/BudgetThresholdCrossed.js';
import type { SessionDeleted as _ctxd_v1_SessionDeleted, SessionDeleted__Output as _ctxd_v1_SessionDeleted__Output } from '../../ctxd/v1/SessionDeleted.js';
import type { CompactionReverted as _ctxd_v1_CompactionReverted, CompactionReverted__Output as _ctxd_v1_CompactionReverted__Output } from '../../ctxd/v1/CompactionReverted.js';
import type { SessionFinished as _ctxd_v1_SessionFinished, SessionFinished__Output as _ctxd_v1_SessionFinished__Output } from '../../ctxd/v1/SessionFinished.js';
import type { SessionForked as _ctxd_v1_SessionForked, SessionForked__Output as _ctxd_v1_SessionForked__Output } from '../../ctxd/v1/SessionForked.js';
import type { RecallAnswered as _ctxd_v1_RecallAnswered, RecallAnswered__Output as _ctxd_v1_RecallAnswered__Output } from '../../ctxd/v1/RecallAnswered.js';
import type { Long } from '@grpc/proto-loader';
export interface Event {
    /**
     * Unique across the service.
     */
    'eventId'?: (number | string | Long);
    /**
     * Pass as SubscribeEventsRequest.after to resume this stream after this event. A
     * session stream's cursors and a tenant stream's are not interchangeable.
     */
    'cursor'?: (string);
    'sessionId'?: (string);
    /**
     * 1, 2, 3... per session, without gaps: the order of the session's changes.
     */
    'sessionSeq'?: (number | string | Long);
    'kind'?: (_ctxd_v1_EventKind);
    'createdAt'?: (_google_protobuf_Timestamp | null);
    /**
     * The session's version after the change.
     */
    'sessionVersion'?: (number | string | Long);
    'compactionStarted'?: (_ctxd_v1_CompactionStarted | null);
    'compactionCompleted'?: (_ctxd_v1_CompactionCompleted | null);
    'compactionFailed'?: (_ctxd_v1_CompactionFailed | null);
    'toolResultsCleared'?: (_ctxd_v1_ToolResultsCleared | null);
    'outputEvicted'?: (_ctxd_v1_OutputEvicted | null);
    'budgetThresholdCrossed'?: (_ctxd_v1_BudgetThresholdCrossed | null);
    'sessionDeleted'?: (_ctxd_v1_SessionDeleted | null);
    'compactionReverted'?: (_ctxd_v1_CompactionReverted | null);
    'sessionFinished'?: (_ctxd_v1_SessionFinished | null);
    'sessionForked'?: (_ctxd_v1_SessionForked | null);
    'recallAnswered'?: (_ctxd_v1_RecallAnswered | null);
    'detail'?: "compactionStarted" | "compactionCompleted" | "compactionFailed" | "toolResultsCleared" | "outputEvicted" | "budgetThresholdCrossed" | "sessionDeleted" | "compactionReverted" | "sessionFinished" | "sessionForked" | "recallAnswered";
}
export interface Event__Output {
    /**
     * Unique across the service.
     */
    'eventId': (number);
    /**
     * Pass as SubscribeEventsRequest.after to resume this stream after this event. A
     * session stream's cursors and a tenant stream's are not interchangeable.
     */
    'cursor': (string);
    'sessionId': (string);
    /**
     * 1, 2, 3... per session, without gaps: the order of the session's changes.
     */
    'sessionSeq': (number);
    'kind': (_ctxd_v1_EventKind__Output);
    'createdAt': (_google_protobuf_Timestamp__Output | null);
    /**
     * The session's version after the change.
     */
    'sessionVersion': (number);
    'compactionStarted'?: (_ctxd_v1_CompactionStarted__Output | null);
    'compactionCompleted'?: (_ctxd_v1_CompactionCompleted__Output | null);
    'compactionFailed'?: (_ctxd_v1_CompactionFailed__Output | null);
    'toolResultsCleared'?: (_ctxd_v1_ToolResultsCleared__Output | null);
    'outputEvicted'?: (_ctxd_v1_OutputEvicted__Output | null);
    'budgetThresholdCrossed'?: (_ctxd_v1_BudgetThresholdCrossed__Output | null);
    'sessionDeleted'?: (_ctxd_v1_SessionDeleted__Output | null);
    'compactionReverted'?: (_ctxd_v1_CompactionReverted__Output | null);
    'sessionFinished'?: (_ctxd_v1_SessionFinished__Output | null);
    'sessionForked'?: (_ctxd_v1_SessionForked__Output | null);
    'recallAnswered'?: (_ctxd_v1_RecallAnswered__Output | null);
    'detail'?: "compactionStarted" | "compactionCompleted" | "compactionFailed" | "toolResultsCleared" | "outputEvicted" | "budgetThresholdCrossed" | "sessionDeleted" | "compactionReverted" | "sessionFinished" | "sessionForked" | "recallAnswered";
}
