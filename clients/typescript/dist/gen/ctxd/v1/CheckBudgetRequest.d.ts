import type { Tools as _ctxd_v1_Tools, Tools__Output as _ctxd_v1_Tools__Output } from '../../ctxd/v1/Tools.js';
import type { Message as _ctxd_v1_Message, Message__Output as _ctxd_v1_Message__Output } from '../../ctxd/v1/Message.js';
import type { Long } from '@grpc/proto-loader';
export interface CheckBudgetRequest {
    'sessionId'?: (string);
    /**
     * The system prompt the request will carry.
     */
    'systemPrompt'?: (string);
    /**
     * The tools the request will carry.
     */
    'tools'?: (_ctxd_v1_Tools | null);
    /**
     * Overrides the policy's max_output_tokens.
     */
    'maxOutputTokens'?: (number | string | Long);
    /**
     * Messages the client is about to append, counted as part of the history.
     */
    'pendingMessages'?: (_ctxd_v1_Message)[];
    '_maxOutputTokens'?: "maxOutputTokens";
}
export interface CheckBudgetRequest__Output {
    'sessionId': (string);
    /**
     * The system prompt the request will carry.
     */
    'systemPrompt': (string);
    /**
     * The tools the request will carry.
     */
    'tools': (_ctxd_v1_Tools__Output | null);
    /**
     * Overrides the policy's max_output_tokens.
     */
    'maxOutputTokens'?: (number);
    /**
     * Messages the client is about to append, counted as part of the history.
     */
    'pendingMessages': (_ctxd_v1_Message__Output)[];
    '_maxOutputTokens'?: "maxOutputTokens";
}
