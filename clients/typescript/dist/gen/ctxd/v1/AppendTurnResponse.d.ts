import type { BudgetReport as _ctxd_v1_BudgetReport, BudgetReport__Output as _ctxd_v1_BudgetReport__Output } from '../../ctxd/v1/BudgetReport.js';
import type { Long } from '@grpc/proto-loader';
export interface AppendTurnResponse {
    /**
     * The session's version after the append.
     */
    'version'?: (number | string | Long);
    /**
     * The seq of each appended message, in request order.
     */
    'seqs'?: (number | string | Long)[];
    /**
     * The budget of the next request, with the system prompt and tools of the latest
     * BuildMessages (none before the first one).
     */
    'budget'?: (_ctxd_v1_BudgetReport | null);
    /**
     * True when this is the stored response of an earlier call with the same
     * idempotency_key (nothing was appended this time).
     */
    'replayed'?: (boolean);
    /**
     * Seqs of tool results that were over the eviction size: they enter the view as a
     * head + tail preview; the whole output stays in the log (Expand).
     */
    'evictedSeqs'?: (number | string | Long)[];
    /**
     * The summarization job this append made due, or the one already pending (0: none).
     * Set for sessions whose summarizer is a model, once past the summarize threshold;
     * with the extractive summarizer BuildMessages summarizes itself.
     */
    'summarizationJobId'?: (number | string | Long);
}
export interface AppendTurnResponse__Output {
    /**
     * The session's version after the append.
     */
    'version': (number);
    /**
     * The seq of each appended message, in request order.
     */
    'seqs': (number)[];
    /**
     * The budget of the next request, with the system prompt and tools of the latest
     * BuildMessages (none before the first one).
     */
    'budget': (_ctxd_v1_BudgetReport__Output | null);
    /**
     * True when this is the stored response of an earlier call with the same
     * idempotency_key (nothing was appended this time).
     */
    'replayed': (boolean);
    /**
     * Seqs of tool results that were over the eviction size: they enter the view as a
     * head + tail preview; the whole output stays in the log (Expand).
     */
    'evictedSeqs': (number)[];
    /**
     * The summarization job this append made due, or the one already pending (0: none).
     * Set for sessions whose summarizer is a model, once past the summarize threshold;
     * with the extractive summarizer BuildMessages summarizes itself.
     */
    'summarizationJobId': (number);
}
