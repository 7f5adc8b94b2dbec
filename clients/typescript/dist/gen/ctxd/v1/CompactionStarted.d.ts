import type { CompactionKind as _ctxd_v1_CompactionKind, CompactionKind__Output as _ctxd_v1_CompactionKind__Output } from '../../ctxd/v1/CompactionKind.js';
import type { Long } from '@grpc/proto-loader';
export interface CompactionStarted {
    'compaction'?: (_ctxd_v1_CompactionKind);
    /**
     * The job doing it (0: within a call).
     */
    'jobId'?: (number | string | Long);
    /**
     * The job's attempt (1, 2, ...); 0 within a call.
     */
    'attempt'?: (number);
}
export interface CompactionStarted__Output {
    'compaction': (_ctxd_v1_CompactionKind__Output);
    /**
     * The job doing it (0: within a call).
     */
    'jobId': (number);
    /**
     * The job's attempt (1, 2, ...); 0 within a call.
     */
    'attempt': (number);
}
