/**
 * How an estimate was obtained.
 */
export declare const EstimateSource: {
    readonly ESTIMATE_SOURCE_UNSPECIFIED: 'ESTIMATE_SOURCE_UNSPECIFIED';
    /**
     * Provider-reported usage plus the tokenizer's count of what came after it.
     */
    readonly ESTIMATE_SOURCE_ANCHORED: 'ESTIMATE_SOURCE_ANCHORED';
    /**
     * The tokenizer alone (exact BPE or heuristic, per the session's policy).
     */
    readonly ESTIMATE_SOURCE_TOKENIZER: 'ESTIMATE_SOURCE_TOKENIZER';
    /**
     * The tokenizer's count scaled by the ratio between the provider's latest reported
     * usage and ctxd's count of that same request (used when the request no longer
     * starts where the anchored one did).
     */
    readonly ESTIMATE_SOURCE_CALIBRATED: 'ESTIMATE_SOURCE_CALIBRATED';
};
/**
 * How an estimate was obtained.
 */
export type EstimateSource = 'ESTIMATE_SOURCE_UNSPECIFIED' | 0
/**
 * Provider-reported usage plus the tokenizer's count of what came after it.
 */
 | 'ESTIMATE_SOURCE_ANCHORED' | 1
/**
 * The tokenizer alone (exact BPE or heuristic, per the session's policy).
 */
 | 'ESTIMATE_SOURCE_TOKENIZER' | 2
/**
 * The tokenizer's count scaled by the ratio between the provider's latest reported
 * usage and ctxd's count of that same request (used when the request no longer
 * starts where the anchored one did).
 */
 | 'ESTIMATE_SOURCE_CALIBRATED' | 3;
/**
 * How an estimate was obtained.
 */
export type EstimateSource__Output = typeof EstimateSource[keyof typeof EstimateSource];
