/**
 * How an estimate was obtained.
 */
export const EstimateSource = {
    ESTIMATE_SOURCE_UNSPECIFIED: 'ESTIMATE_SOURCE_UNSPECIFIED',
    /**
     * Provider-reported usage plus the tokenizer's count of what came after it.
     */
    ESTIMATE_SOURCE_ANCHORED: 'ESTIMATE_SOURCE_ANCHORED',
    /**
     * The tokenizer alone (exact BPE or heuristic, per the session's policy).
     */
    ESTIMATE_SOURCE_TOKENIZER: 'ESTIMATE_SOURCE_TOKENIZER',
    /**
     * The tokenizer's count scaled by the ratio between the provider's latest reported
     * usage and ctxd's count of that same request (used when the request no longer
     * starts where the anchored one did).
     */
    ESTIMATE_SOURCE_CALIBRATED: 'ESTIMATE_SOURCE_CALIBRATED',
};
