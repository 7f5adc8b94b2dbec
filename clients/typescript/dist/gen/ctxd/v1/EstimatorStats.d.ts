import type { Long } from '@grpc/proto-loader';
/**
 * How closely ctxd's estimates have matched the provider's reported usage.
 */
export interface EstimatorStats {
    /**
     * How many AppendTurn calls carried usage that could be compared.
     */
    'samples'?: (number | string | Long);
    /**
     * Mean of |estimate - reported| / reported over those samples, in percent.
     */
    'meanAbsErrorPct'?: (number | string);
    /**
     * The largest such error, in percent.
     */
    'maxAbsErrorPct'?: (number | string);
    /**
     * The latest signed error (estimate - reported) / reported, in percent.
     */
    'lastErrorPct'?: (number | string);
    /**
     * The provider's latest reported input tokens (the anchor), 0 when none.
     */
    'anchorInputTokens'?: (number | string | Long);
}
/**
 * How closely ctxd's estimates have matched the provider's reported usage.
 */
export interface EstimatorStats__Output {
    /**
     * How many AppendTurn calls carried usage that could be compared.
     */
    'samples': (number);
    /**
     * Mean of |estimate - reported| / reported over those samples, in percent.
     */
    'meanAbsErrorPct': (number);
    /**
     * The largest such error, in percent.
     */
    'maxAbsErrorPct': (number);
    /**
     * The latest signed error (estimate - reported) / reported, in percent.
     */
    'lastErrorPct': (number);
    /**
     * The provider's latest reported input tokens (the anchor), 0 when none.
     */
    'anchorInputTokens': (number);
}
