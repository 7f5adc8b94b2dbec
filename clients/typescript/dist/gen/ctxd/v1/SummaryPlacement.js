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
};
