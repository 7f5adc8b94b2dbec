export const EventKind = {
    EVENT_KIND_UNSPECIFIED: 'EVENT_KIND_UNSPECIFIED',
    /**
     * A summarization job started working on the session (in-call compactions announce
     * started and completed together).
     */
    EVENT_KIND_COMPACTION_STARTED: 'EVENT_KIND_COMPACTION_STARTED',
    /**
     * A compaction committed: summaries written (or an emergency note), with tokens and
     * messages before and after.
     */
    EVENT_KIND_COMPACTION_COMPLETED: 'EVENT_KIND_COMPACTION_COMPLETED',
    /**
     * A summarization attempt failed; says whether it will be retried.
     */
    EVENT_KIND_COMPACTION_FAILED: 'EVENT_KIND_COMPACTION_FAILED',
    /**
     * Old tool results became placeholders.
     */
    EVENT_KIND_TOOL_RESULTS_CLEARED: 'EVENT_KIND_TOOL_RESULTS_CLEARED',
    /**
     * An appended tool result was too large: the view shows a head + tail preview.
     */
    EVENT_KIND_OUTPUT_EVICTED: 'EVENT_KIND_OUTPUT_EVICTED',
    /**
     * The session's estimated request size moved to another budget status (OK, WARN,
     * OVER), either way.
     */
    EVENT_KIND_BUDGET_THRESHOLD_CROSSED: 'EVENT_KIND_BUDGET_THRESHOLD_CROSSED',
    /**
     * The session was deleted. The last event of a session; its stream ends after it.
     */
    EVENT_KIND_SESSION_DELETED: 'EVENT_KIND_SESSION_DELETED',
    /**
     * RevertCompaction undid compactions: the view is as it was before the oldest.
     */
    EVENT_KIND_COMPACTION_REVERTED: 'EVENT_KIND_COMPACTION_REVERTED',
    /**
     * FinishSession ended a session: written on it and on its parent (while it exists).
     */
    EVENT_KIND_SESSION_FINISHED: 'EVENT_KIND_SESSION_FINISHED',
    /**
     * A fork was made: on the source's stream, and as the fork's first event.
     */
    EVENT_KIND_SESSION_FORKED: 'EVENT_KIND_SESSION_FORKED',
    /**
     * ctxd answered a model's call to a recall tool (AnswerRecall, or the provider
     * endpoint's own round).
     */
    EVENT_KIND_RECALL_ANSWERED: 'EVENT_KIND_RECALL_ANSWERED',
};
