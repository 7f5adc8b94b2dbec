/**
 * Where a job is in its life.
 */
export declare const JobState: {
    readonly JOB_STATE_UNSPECIFIED: 'JOB_STATE_UNSPECIFIED';
    /**
     * Waiting for a worker.
     */
    readonly JOB_STATE_AVAILABLE: 'JOB_STATE_AVAILABLE';
    /**
     * Claimed by a worker, under a lease.
     */
    readonly JOB_STATE_RUNNING: 'JOB_STATE_RUNNING';
    /**
     * Done; `result` says what it did.
     */
    readonly JOB_STATE_COMPLETED: 'JOB_STATE_COMPLETED';
    /**
     * Failed; runs again at run_at (exponential backoff with jitter).
     */
    readonly JOB_STATE_RETRYABLE: 'JOB_STATE_RETRYABLE';
    /**
     * Failed for good (max attempts used, or not retryable); last_error says why.
     */
    readonly JOB_STATE_DISCARDED: 'JOB_STATE_DISCARDED';
    /**
     * No longer wanted (e.g. its session was deleted).
     */
    readonly JOB_STATE_CANCELLED: 'JOB_STATE_CANCELLED';
};
/**
 * Where a job is in its life.
 */
export type JobState = 'JOB_STATE_UNSPECIFIED' | 0
/**
 * Waiting for a worker.
 */
 | 'JOB_STATE_AVAILABLE' | 1
/**
 * Claimed by a worker, under a lease.
 */
 | 'JOB_STATE_RUNNING' | 2
/**
 * Done; `result` says what it did.
 */
 | 'JOB_STATE_COMPLETED' | 3
/**
 * Failed; runs again at run_at (exponential backoff with jitter).
 */
 | 'JOB_STATE_RETRYABLE' | 4
/**
 * Failed for good (max attempts used, or not retryable); last_error says why.
 */
 | 'JOB_STATE_DISCARDED' | 5
/**
 * No longer wanted (e.g. its session was deleted).
 */
 | 'JOB_STATE_CANCELLED' | 6;
/**
 * Where a job is in its life.
 */
export type JobState__Output = typeof JobState[keyof typeof JobState];
