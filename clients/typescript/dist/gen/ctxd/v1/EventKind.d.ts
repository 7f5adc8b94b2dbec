export declare const EventKind: {
    readonly EVENT_KIND_UNSPECIFIED: 'EVENT_KIND_UNSPECIFIED';
    /**
     * A summarization job started working on the session (in-call compactions announce
     * started and completed together).
     */
    readonly EVENT_KIND_COMPACTION_STARTED: 'EVENT_KIND_COMPACTION_STARTED';
    /**
     * A compaction committed: summaries written (or an emergency note), with tokens and
     * messages before and after.
     */
    readonly EVENT_KIND_COMPACTION_COMPLETED: 'EVENT_KIND_COMPACTION_COMPLETED';
    /**
     * A summarization attempt failed; says whether it will be retried.
     */
    readonly EVENT_KIND_COMPACTION_FAILED: 'EVENT_KIND_COMPACTION_FAILED';
    /**
     * Old tool results became placeholders.
     */
    readonly EVENT_KIND_TOOL_RESULTS_CLEARED: 'EVENT_KIND_TOOL_RESULTS_CLEARED';
    /**
     * An appended tool result was too large: the view shows a head + tail preview.
     */
    readonly EVENT_KIND_OUTPUT_EVICTED: 'EVENT_KIND_OUTPUT_EVICTED';
    /**
     * The session's estimated request size moved to another budget status (OK, WARN,
     * OVER), either way.
     */
    readonly EVENT_KIND_BUDGET_THRESHOLD_CROSSED: 'EVENT_KIND_BUDGET_THRESHOLD_CROSSED';
    /**
     * The session was deleted. The last event of a session; its stream ends after it.
     */
    readonly EVENT_KIND_SESSION_DELETED: 'EVENT_KIND_SESSION_DELETED';
    /**
     * RevertCompaction undid compactions: the view is as it was before the oldest.
     */
    readonly EVENT_KIND_COMPACTION_REVERTED: 'EVENT_KIND_COMPACTION_REVERTED';
    /**
     * FinishSession ended a session: written on it and on its parent (while it exists).
     */
    readonly EVENT_KIND_SESSION_FINISHED: 'EVENT_KIND_SESSION_FINISHED';
    /**
     * A fork was made: on the source's stream, and as the fork's first event.
     */
    readonly EVENT_KIND_SESSION_FORKED: 'EVENT_KIND_SESSION_FORKED';
    /**
     * ctxd answered a model's call to a recall tool (AnswerRecall, or the provider
     * endpoint's own round).
     */
    readonly EVENT_KIND_RECALL_ANSWERED: 'EVENT_KIND_RECALL_ANSWERED';
};
export type EventKind = 'EVENT_KIND_UNSPECIFIED' | 0
/**
 * A summarization job started working on the session (in-call compactions announce
 * started and completed together).
 */
 | 'EVENT_KIND_COMPACTION_STARTED' | 1
/**
 * A compaction committed: summaries written (or an emergency note), with tokens and
 * messages before and after.
 */
 | 'EVENT_KIND_COMPACTION_COMPLETED' | 2
/**
 * A summarization attempt failed; says whether it will be retried.
 */
 | 'EVENT_KIND_COMPACTION_FAILED' | 3
/**
 * Old tool results became placeholders.
 */
 | 'EVENT_KIND_TOOL_RESULTS_CLEARED' | 4
/**
 * An appended tool result was too large: the view shows a head + tail preview.
 */
 | 'EVENT_KIND_OUTPUT_EVICTED' | 5
/**
 * The session's estimated request size moved to another budget status (OK, WARN,
 * OVER), either way.
 */
 | 'EVENT_KIND_BUDGET_THRESHOLD_CROSSED' | 6
/**
 * The session was deleted. The last event of a session; its stream ends after it.
 */
 | 'EVENT_KIND_SESSION_DELETED' | 7
/**
 * RevertCompaction undid compactions: the view is as it was before the oldest.
 */
 | 'EVENT_KIND_COMPACTION_REVERTED' | 8
/**
 * FinishSession ended a session: written on it and on its parent (while it exists).
 */
 | 'EVENT_KIND_SESSION_FINISHED' | 9
/**
 * A fork was made: on the source's stream, and as the fork's first event.
 */
 | 'EVENT_KIND_SESSION_FORKED' | 10
/**
 * ctxd answered a model's call to a recall tool (AnswerRecall, or the provider
 * endpoint's own round).
 */
 | 'EVENT_KIND_RECALL_ANSWERED' | 11;
export type EventKind__Output = typeof EventKind[keyof typeof EventKind];
