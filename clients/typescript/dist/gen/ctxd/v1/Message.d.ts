import type { Role as _ctxd_v1_Role, Role__Output as _ctxd_v1_Role__Output } from '../../ctxd/v1/Role.js';
import type { ContentPart as _ctxd_v1_ContentPart, ContentPart__Output as _ctxd_v1_ContentPart__Output } from '../../ctxd/v1/ContentPart.js';
import type { ToolCall as _ctxd_v1_ToolCall, ToolCall__Output as _ctxd_v1_ToolCall__Output } from '../../ctxd/v1/ToolCall.js';
import type { ViewState as _ctxd_v1_ViewState, ViewState__Output as _ctxd_v1_ViewState__Output } from '../../ctxd/v1/ViewState.js';
import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp.js';
import type { Long } from '@grpc/proto-loader';
/**
 * A message of the conversation, as the client appends it and as ctxd returns it.
 */
export interface Message {
    /**
     * Who wrote it. Required.
     */
    'role'?: (_ctxd_v1_Role);
    /**
     * Plain text content. Use either this or `parts` (both are allowed; the text comes
     * first). Size-limited by the server's max_content_bytes.
     */
    'content'?: (string);
    /**
     * Multi-part content (text and media references).
     */
    'parts'?: (_ctxd_v1_ContentPart)[];
    /**
     * The model's reasoning text, when the provider returns it separately. Counted in
     * the budget; returned in NEUTRAL output, as `reasoning_content` in OPENAI_CHAT, in
     * OPENAI_RESPONSES as the summary of a `reasoning` item only when `metadata` holds
     * that item's id (`ctxd.openai.reasoning_id`: the Responses API takes no reasoning
     * item without its id, so reasoning without one is not sent there), in
     * ANTHROPIC_MESSAGES as a thinking block only when signed (see that format), and in
     * GEMINI as a thought part.
     */
    'reasoning'?: (string);
    /**
     * Tool calls made by an assistant message.
     */
    'toolCalls'?: (_ctxd_v1_ToolCall)[];
    /**
     * On a tool result: the id of the tool call it answers. Required for ROLE_TOOL.
     */
    'toolCallId'?: (string);
    /**
     * Optional participant or tool name (OpenAI `name`).
     */
    'name'?: (string);
    /**
     * Free-form string metadata, stored and returned as is. Keys starting with `ctxd.`
     * hold provider data AppendNative read and a later request must send back:
     * `ctxd.openai.reasoning_id` and `ctxd.openai.reasoning_encrypted_content` (an OpenAI
     * Responses reasoning item's `id` and `encrypted_content`).
     */
    'metadata'?: ({
        [key: string]: string;
    });
    /**
     * A pinned message is never cleared, evicted or summarized away by compaction.
     */
    'pinned'?: (boolean);
    /**
     * Output only (ignored on append) -------------------------------------------------
     * Per-session sequence number: 1, 2, 3... with no gaps.
     */
    'seq'?: (number | string | Long);
    /**
     * Turn number: increments at each user message; 0 before the first one.
     */
    'turn'?: (number | string | Long);
    /**
     * Tokens this message costs in the session's tokenizer, chat framing included.
     */
    'tokenCount'?: (number | string | Long);
    /**
     * How the message is rendered in the model's view. In BuildMessages output a cleared
     * or evicted message carries its placeholder or preview as content; Expand returns
     * the original.
     */
    'viewState'?: (_ctxd_v1_ViewState);
    /**
     * When the message was appended.
     */
    'createdAt'?: (_google_protobuf_Timestamp | null);
    /**
     * Tokens this message costs as the view renders it: token_count when full, the
     * placeholder's or the preview's count when cleared or evicted.
     */
    'viewTokenCount'?: (number | string | Long);
}
/**
 * A message of the conversation, as the client appends it and as ctxd returns it.
 */
export interface Message__Output {
    /**
     * Who wrote it. Required.
     */
    'role': (_ctxd_v1_Role__Output);
    /**
     * Plain text content. Use either this or `parts` (both are allowed; the text comes
     * first). Size-limited by the server's max_content_bytes.
     */
    'content': (string);
    /**
     * Multi-part content (text and media references).
     */
    'parts': (_ctxd_v1_ContentPart__Output)[];
    /**
     * The model's reasoning text, when the provider returns it separately. Counted in
     * the budget; returned in NEUTRAL output, as `reasoning_content` in OPENAI_CHAT, in
     * OPENAI_RESPONSES as the summary of a `reasoning` item only when `metadata` holds
     * that item's id (`ctxd.openai.reasoning_id`: the Responses API takes no reasoning
     * item without its id, so reasoning without one is not sent there), in
     * ANTHROPIC_MESSAGES as a thinking block only when signed (see that format), and in
     * GEMINI as a thought part.
     */
    'reasoning': (string);
    /**
     * Tool calls made by an assistant message.
     */
    'toolCalls': (_ctxd_v1_ToolCall__Output)[];
    /**
     * On a tool result: the id of the tool call it answers. Required for ROLE_TOOL.
     */
    'toolCallId': (string);
    /**
     * Optional participant or tool name (OpenAI `name`).
     */
    'name': (string);
    /**
     * Free-form string metadata, stored and returned as is. Keys starting with `ctxd.`
     * hold provider data AppendNative read and a later request must send back:
     * `ctxd.openai.reasoning_id` and `ctxd.openai.reasoning_encrypted_content` (an OpenAI
     * Responses reasoning item's `id` and `encrypted_content`).
     */
    'metadata': ({
        [key: string]: string;
    });
    /**
     * A pinned message is never cleared, evicted or summarized away by compaction.
     */
    'pinned': (boolean);
    /**
     * Output only (ignored on append) -------------------------------------------------
     * Per-session sequence number: 1, 2, 3... with no gaps.
     */
    'seq': (number);
    /**
     * Turn number: increments at each user message; 0 before the first one.
     */
    'turn': (number);
    /**
     * Tokens this message costs in the session's tokenizer, chat framing included.
     */
    'tokenCount': (number);
    /**
     * How the message is rendered in the model's view. In BuildMessages output a cleared
     * or evicted message carries its placeholder or preview as content; Expand returns
     * the original.
     */
    'viewState': (_ctxd_v1_ViewState__Output);
    /**
     * When the message was appended.
     */
    'createdAt': (_google_protobuf_Timestamp__Output | null);
    /**
     * Tokens this message costs as the view renders it: token_count when full, the
     * placeholder's or the preview's count when cleared or evicted.
     */
    'viewTokenCount': (number);
}
