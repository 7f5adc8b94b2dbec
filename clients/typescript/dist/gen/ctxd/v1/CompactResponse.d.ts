import type { Job as _ctxd_v1_Job, Job__Output as _ctxd_v1_Job__Output } from '../../ctxd/v1/Job.js';
import type { Long } from '@grpc/proto-loader';
export interface CompactResponse {
    /**
     * Estimated request size before and after (after = what it would be, on a dry run).
     */
    'tokensBefore'?: (number | string | Long);
    'tokensAfter'?: (number | string | Long);
    /**
     * Tool results cleared (or that would be).
     */
    'clearedSeqs'?: (number | string | Long)[];
    /**
     * The session's version afterwards.
     */
    'version'?: (number | string | Long);
    /**
     * True when something changed (false on a dry run).
     */
    'applied'?: (boolean);
    /**
     * True when the pass could not reduce the request at all (already at or under the
     * target, or nothing left that may be cleared); nothing was changed.
     */
    'noProgress'?: (boolean);
    /**
     * The messages summarized (or that would be), inclusive; 0 and 0 when none.
     */
    'summarizedFirstSeq'?: (number | string | Long);
    'summarizedLastSeq'?: (number | string | Long);
    /**
     * The summarization job, when summarizing was due (0: none): enqueued, or the
     * session's pending one.
     */
    'jobId'?: (number | string | Long);
    /**
     * With wait: the job as it ended, or as it stood when the wait ran out.
     */
    'job'?: (_ctxd_v1_Job | null);
}
export interface CompactResponse__Output {
    /**
     * Estimated request size before and after (after = what it would be, on a dry run).
     */
    'tokensBefore': (number);
    'tokensAfter': (number);
    /**
     * Tool results cleared (or that would be).
     */
    'clearedSeqs': (number)[];
    /**
     * The session's version afterwards.
     */
    'version': (number);
    /**
     * True when something changed (false on a dry run).
     */
    'applied': (boolean);
    /**
     * True when the pass could not reduce the request at all (already at or under the
     * target, or nothing left that may be cleared); nothing was changed.
     */
    'noProgress': (boolean);
    /**
     * The messages summarized (or that would be), inclusive; 0 and 0 when none.
     */
    'summarizedFirstSeq': (number);
    'summarizedLastSeq': (number);
    /**
     * The summarization job, when summarizing was due (0: none): enqueued, or the
     * session's pending one.
     */
    'jobId': (number);
    /**
     * With wait: the job as it ended, or as it stood when the wait ran out.
     */
    'job': (_ctxd_v1_Job__Output | null);
}
