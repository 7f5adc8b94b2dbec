import type { Long } from '@grpc/proto-loader';
export interface RevertCompactionRequest {
    'sessionId'?: (string);
    /**
     * The `cursor` of its event as SubscribeEvents delivered it: a session stream's
     * ("12": this session's event 12) or a tenant stream's ("<tx>.<id>"). At most 64
     * characters.
     */
    'eventCursor'?: (string);
    /**
     * A summary it wrote (CompactionCompleted.summary_id, or the summary_id of any
     * summary in the view): the summarization pass that wrote it.
     */
    'summaryId'?: (number | string | Long);
    /**
     * Say what would be restored; change nothing.
     */
    'dryRun'?: (boolean);
    /**
     * Optimistic concurrency: when set, the revert happens only if the session's version
     * is this one; otherwise ABORTED with the current version.
     */
    'expectedVersion'?: (number | string | Long);
    /**
     * The compaction to undo. Required. Revertible: clearings (TOOL_RESULTS_CLEARED
     * events) and summarization passes (COMPACTION_COMPLETED events, every
     * CompactionKind), by BuildMessages, Compact or a job. Not revertible: eviction at
     * append (OUTPUT_EVICTED), which is how a too-large tool result entered the view, not
     * a compaction of it (Expand returns it whole); and compactions committed by a server
     * older than RevertCompaction.
     */
    'compaction'?: "eventCursor" | "summaryId";
    '_expectedVersion'?: "expectedVersion";
}
export interface RevertCompactionRequest__Output {
    'sessionId': (string);
    /**
     * The `cursor` of its event as SubscribeEvents delivered it: a session stream's
     * ("12": this session's event 12) or a tenant stream's ("<tx>.<id>"). At most 64
     * characters.
     */
    'eventCursor'?: (string);
    /**
     * A summary it wrote (CompactionCompleted.summary_id, or the summary_id of any
     * summary in the view): the summarization pass that wrote it.
     */
    'summaryId'?: (number);
    /**
     * Say what would be restored; change nothing.
     */
    'dryRun': (boolean);
    /**
     * Optimistic concurrency: when set, the revert happens only if the session's version
     * is this one; otherwise ABORTED with the current version.
     */
    'expectedVersion'?: (number);
    /**
     * The compaction to undo. Required. Revertible: clearings (TOOL_RESULTS_CLEARED
     * events) and summarization passes (COMPACTION_COMPLETED events, every
     * CompactionKind), by BuildMessages, Compact or a job. Not revertible: eviction at
     * append (OUTPUT_EVICTED), which is how a too-large tool result entered the view, not
     * a compaction of it (Expand returns it whole); and compactions committed by a server
     * older than RevertCompaction.
     */
    'compaction'?: "eventCursor" | "summaryId";
    '_expectedVersion'?: "expectedVersion";
}
