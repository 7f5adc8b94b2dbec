/**
 * Where summaries are placed in the built request.
 */
export declare const SummaryPlacement: {
    /**
     * Use the server default.
     */
    readonly SUMMARY_PLACEMENT_UNSPECIFIED: 'SUMMARY_PLACEMENT_UNSPECIFIED';
    /**
     * Appended to the system prompt.
     */
    readonly SUMMARY_PLACEMENT_SYSTEM: 'SUMMARY_PLACEMENT_SYSTEM';
    /**
     * As a leading synthetic user message.
     */
    readonly SUMMARY_PLACEMENT_USER: 'SUMMARY_PLACEMENT_USER';
};
/**
 * Where summaries are placed in the built request.
 */
export type SummaryPlacement = 
/**
 * Use the server default.
 */
'SUMMARY_PLACEMENT_UNSPECIFIED' | 0
/**
 * Appended to the system prompt.
 */
 | 'SUMMARY_PLACEMENT_SYSTEM' | 1
/**
 * As a leading synthetic user message.
 */
 | 'SUMMARY_PLACEMENT_USER' | 2;
/**
 * Where summaries are placed in the built request.
 */
export type SummaryPlacement__Output = typeof SummaryPlacement[keyof typeof SummaryPlacement];
