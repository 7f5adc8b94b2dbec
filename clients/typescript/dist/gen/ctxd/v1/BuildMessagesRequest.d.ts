import type { Tools as _ctxd_v1_Tools, Tools__Output as _ctxd_v1_Tools__Output } from '../../ctxd/v1/Tools.js';
import type { OutputFormat as _ctxd_v1_OutputFormat, OutputFormat__Output as _ctxd_v1_OutputFormat__Output } from '../../ctxd/v1/OutputFormat.js';
import type { Long } from '@grpc/proto-loader';
export interface BuildMessagesRequest {
    'sessionId'?: (string);
    /**
     * The system prompt for this request. May be empty.
     */
    'systemPrompt'?: (string);
    /**
     * The tools offered to the model in this request.
     */
    'tools'?: (_ctxd_v1_Tools | null);
    /**
     * Overrides the policy's max_output_tokens for this request (> 0, below the window).
     */
    'maxOutputTokens'?: (number | string | Long);
    /**
     * The shape of the output.
     */
    'format'?: (_ctxd_v1_OutputFormat);
    '_maxOutputTokens'?: "maxOutputTokens";
}
export interface BuildMessagesRequest__Output {
    'sessionId': (string);
    /**
     * The system prompt for this request. May be empty.
     */
    'systemPrompt': (string);
    /**
     * The tools offered to the model in this request.
     */
    'tools': (_ctxd_v1_Tools__Output | null);
    /**
     * Overrides the policy's max_output_tokens for this request (> 0, below the window).
     */
    'maxOutputTokens'?: (number);
    /**
     * The shape of the output.
     */
    'format': (_ctxd_v1_OutputFormat__Output);
    '_maxOutputTokens'?: "maxOutputTokens";
}
