import type { OutputFormat as _ctxd_v1_OutputFormat, OutputFormat__Output as _ctxd_v1_OutputFormat__Output } from '../../ctxd/v1/OutputFormat.js';
import type { Long } from '@grpc/proto-loader';
export interface AppendNativeRequest {
    'sessionId'?: (string);
    /**
     * The provider shape of both bodies: OPENAI_CHAT, OPENAI_RESPONSES,
     * ANTHROPIC_MESSAGES or GEMINI.
     */
    'format'?: (_ctxd_v1_OutputFormat);
    /**
     * A model's response body, as the provider returned it: a Chat Completions
     * `ChatCompletion`, a Responses `Response`, an Anthropic `Message`, a Gemini
     * `GenerateContentResponse`. Its assistant message (content, reasoning, tool calls)
     * is appended and its usage anchors the estimate. May be empty when only items are
     * appended.
     */
    'responseJson'?: (string);
    /**
     * A JSON array of request items in the same provider's shape, appended after the
     * response's message: tool results and user messages (Chat Completions messages;
     * Responses input items; Anthropic messages; Gemini contents). May be empty.
     */
    'itemsJson'?: (string);
    /**
     * As in AppendTurn.
     */
    'expectedVersion'?: (number | string | Long);
    /**
     * As in AppendTurn: a retry with the same key and body appends nothing.
     */
    'idempotencyKey'?: (string);
    '_expectedVersion'?: "expectedVersion";
}
export interface AppendNativeRequest__Output {
    'sessionId': (string);
    /**
     * The provider shape of both bodies: OPENAI_CHAT, OPENAI_RESPONSES,
     * ANTHROPIC_MESSAGES or GEMINI.
     */
    'format': (_ctxd_v1_OutputFormat__Output);
    /**
     * A model's response body, as the provider returned it: a Chat Completions
     * `ChatCompletion`, a Responses `Response`, an Anthropic `Message`, a Gemini
     * `GenerateContentResponse`. Its assistant message (content, reasoning, tool calls)
     * is appended and its usage anchors the estimate. May be empty when only items are
     * appended.
     */
    'responseJson': (string);
    /**
     * A JSON array of request items in the same provider's shape, appended after the
     * response's message: tool results and user messages (Chat Completions messages;
     * Responses input items; Anthropic messages; Gemini contents). May be empty.
     */
    'itemsJson': (string);
    /**
     * As in AppendTurn.
     */
    'expectedVersion'?: (number);
    /**
     * As in AppendTurn: a retry with the same key and body appends nothing.
     */
    'idempotencyKey': (string);
    '_expectedVersion'?: "expectedVersion";
}
