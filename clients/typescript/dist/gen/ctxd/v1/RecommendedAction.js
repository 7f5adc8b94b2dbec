/**
 * What the client should expect or do.
 */
export const RecommendedAction = {
    RECOMMENDED_ACTION_UNSPECIFIED: 'RECOMMENDED_ACTION_UNSPECIFIED',
    /**
     * Nothing to do.
     */
    RECOMMENDED_ACTION_NONE: 'RECOMMENDED_ACTION_NONE',
    /**
     * Past the clearing threshold: old tool results are due to be cleared.
     */
    RECOMMENDED_ACTION_CLEAR_TOOL_RESULTS: 'RECOMMENDED_ACTION_CLEAR_TOOL_RESULTS',
    /**
     * Past the summarize threshold, or over budget while the newest turn fits: the oldest
     * turns are due to be summarized. BuildMessages does it itself when it must; Compact
     * SUMMARIZE does it now.
     */
    RECOMMENDED_ACTION_SUMMARIZE: 'RECOMMENDED_ACTION_SUMMARIZE',
    /**
     * Not sent any more (BuildMessages summarizes instead of leaving turns out); kept so
     * the number is not reused.
     * @deprecated
     */
    RECOMMENDED_ACTION_TRIM_OLDEST_TURNS: 'RECOMMENDED_ACTION_TRIM_OLDEST_TURNS',
    /**
     * Even the system prompt, the tools and the newest turn cannot fit: shorten the
     * system prompt or tools, or raise the window.
     */
    RECOMMENDED_ACTION_REDUCE_REQUEST: 'RECOMMENDED_ACTION_REDUCE_REQUEST',
};
