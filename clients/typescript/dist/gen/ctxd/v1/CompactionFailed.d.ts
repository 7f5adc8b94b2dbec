import type { CompactionKind as _ctxd_v1_CompactionKind, CompactionKind__Output as _ctxd_v1_CompactionKind__Output } from '../../ctxd/v1/CompactionKind.js';
import type { Long } from '@grpc/proto-loader';
export interface CompactionFailed {
    'compaction'?: (_ctxd_v1_CompactionKind);
    /**
     * What went wrong (e.g. the summarizer's HTTP status).
     */
    'error'?: (string);
    'jobId'?: (number | string | Long);
    'attempt'?: (number);
    /**
     * True when the job runs again later; false when it was the last attempt.
     */
    'willRetry'?: (boolean);
}
export interface CompactionFailed__Output {
    'compaction': (_ctxd_v1_CompactionKind__Output);
    /**
     * What went wrong (e.g. the summarizer's HTTP status).
     */
    'error': (string);
    'jobId': (number);
    'attempt': (number);
    /**
     * True when the job runs again later; false when it was the last attempt.
     */
    'willRetry': (boolean);
}
