/**
 * Where summaries are placed in the built request.
 */
export const SummaryPlacement = {
    /**
     * Use the server default.
     */
    SUMMARY_PLACEMENT_UNSPECIFIED: 'SUMMARY_PLACEMENT_UNSPECIFIED',
    /**
     * Appended to the system prompt.
     */
    SUMMARY_PLACEMENT_SYSTEM: 'SUMMARY_PLACEMENT_SYSTEM',
    /**
     * As a leading synthetic user message.
     */
    SUMMARY_PLACEMENT_USER: 'SUMMARY_PLACEMENT_USER',
    /**
     * In order of time (the server's default): when the request starts with a user
     * message whose turn has older steps summarized (a long task), the summaries follow
     * that message as a synthetic user message, so a compaction leaves the system prompt
     * and the task where a provider's prompt cache keeps them; otherwise they are
     * appended to the system prompt, as SYSTEM.
     */
    SUMMARY_PLACEMENT_AFTER_TASK: 'SUMMARY_PLACEMENT_AFTER_TASK',
};
