import type { RevertedCompaction as _ctxd_v1_RevertedCompaction, RevertedCompaction__Output as _ctxd_v1_RevertedCompaction__Output } from '../../ctxd/v1/RevertedCompaction.js';
import type { Summary as _ctxd_v1_Summary, Summary__Output as _ctxd_v1_Summary__Output } from '../../ctxd/v1/Summary.js';
import type { Long } from '@grpc/proto-loader';
export interface RevertCompactionResponse {
    /**
     * The compactions undone, newest first: the one named and every later one still in
     * force.
     */
    'reverted'?: (_ctxd_v1_RevertedCompaction)[];
    /**
     * Messages whose view state came back (cleared tool results whole again, older steps
     * back in the view), in seq order. Messages before view_first_seq are back too.
     */
    'restoredSeqs'?: (number | string | Long)[];
    /**
     * The first message of the view afterwards (the summaries cover those before it).
     */
    'viewFirstSeq'?: (number | string | Long);
    /**
     * The summaries in the view afterwards, oldest first.
     */
    'summaries'?: (_ctxd_v1_Summary)[];
    /**
     * Estimated request size (system prompt and tools of the latest BuildMessages plus
     * the summaries and the view), before and after.
     */
    'tokensBefore'?: (number | string | Long);
    'tokensAfter'?: (number | string | Long);
    /**
     * The session's version afterwards (unchanged on a dry run).
     */
    'version'?: (number | string | Long);
    /**
     * True when the revert was made (false on a dry run).
     */
    'applied'?: (boolean);
    /**
     * Automatic compaction waits until the session's log_tokens reach this (see
     * CompactionStats.compaction_held); a Compact lifts the wait.
     */
    'resumeAtLogTokens'?: (number | string | Long);
}
export interface RevertCompactionResponse__Output {
    /**
     * The compactions undone, newest first: the one named and every later one still in
     * force.
     */
    'reverted': (_ctxd_v1_RevertedCompaction__Output)[];
    /**
     * Messages whose view state came back (cleared tool results whole again, older steps
     * back in the view), in seq order. Messages before view_first_seq are back too.
     */
    'restoredSeqs': (number)[];
    /**
     * The first message of the view afterwards (the summaries cover those before it).
     */
    'viewFirstSeq': (number);
    /**
     * The summaries in the view afterwards, oldest first.
     */
    'summaries': (_ctxd_v1_Summary__Output)[];
    /**
     * Estimated request size (system prompt and tools of the latest BuildMessages plus
     * the summaries and the view), before and after.
     */
    'tokensBefore': (number);
    'tokensAfter': (number);
    /**
     * The session's version afterwards (unchanged on a dry run).
     */
    'version': (number);
    /**
     * True when the revert was made (false on a dry run).
     */
    'applied': (boolean);
    /**
     * Automatic compaction waits until the session's log_tokens reach this (see
     * CompactionStats.compaction_held); a Compact lifts the wait.
     */
    'resumeAtLogTokens': (number);
}
