import type { Long } from '@grpc/proto-loader';
/**
 * What BuildMessages left out to fit the budget.
 */
export interface Trimmed {
    /**
     * Whole turns left out, oldest first.
     */
    'turns'?: (number | string | Long);
    /**
     * Messages left out of the view, in total.
     */
    'messages'?: (number | string | Long);
    /**
     * Tokens those messages would have cost.
     */
    'tokens'?: (number | string | Long);
    /**
     * Messages of an incomplete tool step (a tool call never answered) left out so the
     * array stays provider-valid.
     */
    'incompleteStepMessages'?: (number | string | Long);
    /**
     * Summaries left out of this request (oldest first) because even the newest turn did
     * not fit next to them; they stay stored.
     */
    'summaries'?: (number | string | Long);
}
/**
 * What BuildMessages left out to fit the budget.
 */
export interface Trimmed__Output {
    /**
     * Whole turns left out, oldest first.
     */
    'turns': (number);
    /**
     * Messages left out of the view, in total.
     */
    'messages': (number);
    /**
     * Tokens those messages would have cost.
     */
    'tokens': (number);
    /**
     * Messages of an incomplete tool step (a tool call never answered) left out so the
     * array stays provider-valid.
     */
    'incompleteStepMessages': (number);
    /**
     * Summaries left out of this request (oldest first) because even the newest turn did
     * not fit next to them; they stay stored.
     */
    'summaries': (number);
}
