import type { EstimateSource as _ctxd_v1_EstimateSource, EstimateSource__Output as _ctxd_v1_EstimateSource__Output } from '../../ctxd/v1/EstimateSource.js';
import type { Long } from '@grpc/proto-loader';
/**
 * Token figures per region of a request.
 */
export interface BudgetBreakdown {
    /**
     * The system prompt and the request's fixed framing (reply priming).
     */
    'systemTokens'?: (number | string | Long);
    /**
     * Summaries in the view.
     */
    'summaryTokens'?: (number | string | Long);
    /**
     * History messages in the view.
     */
    'historyTokens'?: (number | string | Long);
    /**
     * Tool definitions.
     */
    'toolTokens'?: (number | string | Long);
    /**
     * Reserve for the model's reply (max_output_tokens).
     */
    'outputReserveTokens'?: (number | string | Long);
    /**
     * The best estimate of the whole prompt (see estimate_source). The regions above are
     * the tokenizer's counts; with an anchor, total_tokens is calibrated on the
     * provider's own count and may differ from their sum.
     */
    'totalTokens'?: (number | string | Long);
    /**
     * The model's context window.
     */
    'contextWindowTokens'?: (number | string | Long);
    /**
     * hard_limit x context_window - output_reserve - total. Negative when over budget.
     */
    'headroomTokens'?: (number | string | Long);
    /**
     * How total_tokens was estimated.
     */
    'estimateSource'?: (_ctxd_v1_EstimateSource);
    /**
     * The same prompt counted by the session's tokenizer alone, without anchoring or
     * calibration, for comparison.
     */
    'tokenizerTotalTokens'?: (number | string | Long);
}
/**
 * Token figures per region of a request.
 */
export interface BudgetBreakdown__Output {
    /**
     * The system prompt and the request's fixed framing (reply priming).
     */
    'systemTokens': (number);
    /**
     * Summaries in the view.
     */
    'summaryTokens': (number);
    /**
     * History messages in the view.
     */
    'historyTokens': (number);
    /**
     * Tool definitions.
     */
    'toolTokens': (number);
    /**
     * Reserve for the model's reply (max_output_tokens).
     */
    'outputReserveTokens': (number);
    /**
     * The best estimate of the whole prompt (see estimate_source). The regions above are
     * the tokenizer's counts; with an anchor, total_tokens is calibrated on the
     * provider's own count and may differ from their sum.
     */
    'totalTokens': (number);
    /**
     * The model's context window.
     */
    'contextWindowTokens': (number);
    /**
     * hard_limit x context_window - output_reserve - total. Negative when over budget.
     */
    'headroomTokens': (number);
    /**
     * How total_tokens was estimated.
     */
    'estimateSource': (_ctxd_v1_EstimateSource__Output);
    /**
     * The same prompt counted by the session's tokenizer alone, without anchoring or
     * calibration, for comparison.
     */
    'tokenizerTotalTokens': (number);
}
