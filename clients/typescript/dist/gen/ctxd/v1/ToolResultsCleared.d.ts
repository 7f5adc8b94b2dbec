import type { Long } from '@grpc/proto-loader';
export interface ToolResultsCleared {
    /**
     * The tool results that became placeholders.
     */
    'seqs'?: (number | string | Long)[];
    /**
     * Estimated request size before and after.
     */
    'tokensBefore'?: (number | string | Long);
    'tokensAfter'?: (number | string | Long);
}
export interface ToolResultsCleared__Output {
    /**
     * The tool results that became placeholders.
     */
    'seqs': (number)[];
    /**
     * Estimated request size before and after.
     */
    'tokensBefore': (number);
    'tokensAfter': (number);
}
