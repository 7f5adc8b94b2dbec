import type { JobState as _ctxd_v1_JobState, JobState__Output as _ctxd_v1_JobState__Output } from '../../ctxd/v1/JobState.js';
import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp.js';
import type { Long } from '@grpc/proto-loader';
/**
 * A background job.
 */
export interface Job {
    'jobId'?: (number | string | Long);
    'sessionId'?: (string);
    /**
     * "summarize".
     */
    'kind'?: (string);
    'state'?: (_ctxd_v1_JobState);
    'attempts'?: (number);
    'maxAttempts'?: (number);
    /**
     * When it may run (next).
     */
    'runAt'?: (_google_protobuf_Timestamp | null);
    /**
     * The error of the latest failed attempt, if any.
     */
    'lastError'?: (string);
    /**
     * What it did, as JSON (for summarize: tokens_before, tokens_after,
     * summarized_first_seq, summarized_last_seq, passes; due=false when there was nothing
     * left to do).
     */
    'resultJson'?: (string);
    'createdAt'?: (_google_protobuf_Timestamp | null);
    'finishedAt'?: (_google_protobuf_Timestamp | null);
}
/**
 * A background job.
 */
export interface Job__Output {
    'jobId': (number);
    'sessionId': (string);
    /**
     * "summarize".
     */
    'kind': (string);
    'state': (_ctxd_v1_JobState__Output);
    'attempts': (number);
    'maxAttempts': (number);
    /**
     * When it may run (next).
     */
    'runAt': (_google_protobuf_Timestamp__Output | null);
    /**
     * The error of the latest failed attempt, if any.
     */
    'lastError': (string);
    /**
     * What it did, as JSON (for summarize: tokens_before, tokens_after,
     * summarized_first_seq, summarized_last_seq, passes; due=false when there was nothing
     * left to do).
     */
    'resultJson': (string);
    'createdAt': (_google_protobuf_Timestamp__Output | null);
    'finishedAt': (_google_protobuf_Timestamp__Output | null);
}
