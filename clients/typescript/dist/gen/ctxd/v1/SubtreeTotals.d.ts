import type { Usage as _ctxd_v1_Usage, Usage__Output as _ctxd_v1_Usage__Output } from '../../ctxd/v1/Usage.js';
import type { Long } from '@grpc/proto-loader';
/**
 * What a session and its descendants add up to, for reporting. Each sum saturates at
 * the largest int64.
 */
export interface SubtreeTotals {
    /**
     * Sessions summed: the session itself and every descendant that exists.
     */
    'sessions'?: (number | string | Long);
    /**
     * Sum of their log_tokens (every stored message, as appended).
     */
    'logTokens'?: (number | string | Long);
    /**
     * Sum of their usage_total: what clients reported with AppendTurn.
     */
    'usageTotal'?: (_ctxd_v1_Usage | null);
}
/**
 * What a session and its descendants add up to, for reporting. Each sum saturates at
 * the largest int64.
 */
export interface SubtreeTotals__Output {
    /**
     * Sessions summed: the session itself and every descendant that exists.
     */
    'sessions': (number);
    /**
     * Sum of their log_tokens (every stored message, as appended).
     */
    'logTokens': (number);
    /**
     * Sum of their usage_total: what clients reported with AppendTurn.
     */
    'usageTotal': (_ctxd_v1_Usage__Output | null);
}
