import type { CompactionKind as _ctxd_v1_CompactionKind, CompactionKind__Output as _ctxd_v1_CompactionKind__Output } from '../../ctxd/v1/CompactionKind.js';
import type { Long } from '@grpc/proto-loader';
export interface CompactionCompleted {
    'compaction'?: (_ctxd_v1_CompactionKind);
    /**
     * The highest summarizer level used: 1 normal, 2 aggressive, 3 deterministic
     * truncation.
     */
    'level'?: (number);
    /**
     * The session's estimated request size (system prompt and tools of the latest
     * BuildMessages plus the history) before and after.
     */
    'tokensBefore'?: (number | string | Long);
    'tokensAfter'?: (number | string | Long);
    /**
     * Messages in the model's view (each summary counts as one) before and after.
     */
    'messagesBefore'?: (number | string | Long);
    'messagesAfter'?: (number | string | Long);
    /**
     * The raw messages newly covered, inclusive.
     */
    'firstSeq'?: (number | string | Long);
    'lastSeq'?: (number | string | Long);
    /**
     * The newest summary written (Expand with it returns what it covers).
     */
    'summaryId'?: (number | string | Long);
    /**
     * Summaries written (leaves and condensed).
     */
    'summariesWritten'?: (number);
    /**
     * Time spent, summarizer calls included.
     */
    'durationMs'?: (number | string | Long);
    /**
     * The job that did it (0: within a call).
     */
    'jobId'?: (number | string | Long);
}
export interface CompactionCompleted__Output {
    'compaction': (_ctxd_v1_CompactionKind__Output);
    /**
     * The highest summarizer level used: 1 normal, 2 aggressive, 3 deterministic
     * truncation.
     */
    'level': (number);
    /**
     * The session's estimated request size (system prompt and tools of the latest
     * BuildMessages plus the history) before and after.
     */
    'tokensBefore': (number);
    'tokensAfter': (number);
    /**
     * Messages in the model's view (each summary counts as one) before and after.
     */
    'messagesBefore': (number);
    'messagesAfter': (number);
    /**
     * The raw messages newly covered, inclusive.
     */
    'firstSeq': (number);
    'lastSeq': (number);
    /**
     * The newest summary written (Expand with it returns what it covers).
     */
    'summaryId': (number);
    /**
     * Summaries written (leaves and condensed).
     */
    'summariesWritten': (number);
    /**
     * Time spent, summarizer calls included.
     */
    'durationMs': (number);
    /**
     * The job that did it (0: within a call).
     */
    'jobId': (number);
}
