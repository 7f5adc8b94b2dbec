import type { CompactMode as _ctxd_v1_CompactMode, CompactMode__Output as _ctxd_v1_CompactMode__Output } from '../../ctxd/v1/CompactMode.js';
import type { Long } from '@grpc/proto-loader';
export interface CompactRequest {
    'sessionId'?: (string);
    'mode'?: (_ctxd_v1_CompactMode);
    /**
     * The request size, in tokens, to get down to (system prompt and tools as in the
     * latest BuildMessages, plus the history). 0: the policy's clear_target.
     */
    'targetTokens'?: (number | string | Long);
    /**
     * Report what would be done, change nothing.
     */
    'dryRun'?: (boolean);
    /**
     * SUMMARIZE and AUTO summarize in a background job (the summarizer may be a model);
     * with wait, the call returns when the job has ended or wait_timeout_ms has passed,
     * and the response carries the outcome. Without it, the call returns at once with
     * the job id (GetJob follows it). EMERGENCY and dry runs never wait: they are
     * deterministic and done within the call.
     */
    'wait'?: (boolean);
    /**
     * How long wait may block, in milliseconds (0: 60000; at most 600000).
     */
    'waitTimeoutMs'?: (number);
}
export interface CompactRequest__Output {
    'sessionId': (string);
    'mode': (_ctxd_v1_CompactMode__Output);
    /**
     * The request size, in tokens, to get down to (system prompt and tools as in the
     * latest BuildMessages, plus the history). 0: the policy's clear_target.
     */
    'targetTokens': (number);
    /**
     * Report what would be done, change nothing.
     */
    'dryRun': (boolean);
    /**
     * SUMMARIZE and AUTO summarize in a background job (the summarizer may be a model);
     * with wait, the call returns when the job has ended or wait_timeout_ms has passed,
     * and the response carries the outcome. Without it, the call returns at once with
     * the job id (GetJob follows it). EMERGENCY and dry runs never wait: they are
     * deterministic and done within the call.
     */
    'wait': (boolean);
    /**
     * How long wait may block, in milliseconds (0: 60000; at most 600000).
     */
    'waitTimeoutMs': (number);
}
