import type { Long } from '@grpc/proto-loader';
export interface CompactionReverted {
    /**
     * The undone compactions' events, by their cursors on the session's stream
     * (session_seq), oldest first.
     */
    'eventSeqs'?: (number | string | Long)[];
    /**
     * The summaries they wrote, now out of the view (still readable).
     */
    'summaryIds'?: (number | string | Long)[];
    /**
     * Messages whose view state came back, in seq order.
     */
    'restoredSeqs'?: (number | string | Long)[];
    /**
     * The first message of the view afterwards.
     */
    'viewFirstSeq'?: (number | string | Long);
    /**
     * Estimated request size before and after.
     */
    'tokensBefore'?: (number | string | Long);
    'tokensAfter'?: (number | string | Long);
    /**
     * Automatic compaction waits until the session's log_tokens reach this.
     */
    'resumeAtLogTokens'?: (number | string | Long);
}
export interface CompactionReverted__Output {
    /**
     * The undone compactions' events, by their cursors on the session's stream
     * (session_seq), oldest first.
     */
    'eventSeqs': (number)[];
    /**
     * The summaries they wrote, now out of the view (still readable).
     */
    'summaryIds': (number)[];
    /**
     * Messages whose view state came back, in seq order.
     */
    'restoredSeqs': (number)[];
    /**
     * The first message of the view afterwards.
     */
    'viewFirstSeq': (number);
    /**
     * Estimated request size before and after.
     */
    'tokensBefore': (number);
    'tokensAfter': (number);
    /**
     * Automatic compaction waits until the session's log_tokens reach this.
     */
    'resumeAtLogTokens': (number);
}
