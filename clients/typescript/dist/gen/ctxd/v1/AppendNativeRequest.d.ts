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
     * appended. At most 8 MiB, as is items_json.
     *
     * OPENAI_CHAT: `choices[0].message` is the reply (with n > 1 the first choice is
     * appended; to append another, send the body with that choice alone):
     * `content` (a string or null; a `refusal` stands in when there is no content),
     * `reasoning_content` as the reasoning, `tool_calls` (type "function", each with an
     * id, a name and arguments that are a JSON object). `function_call` and `audio`
     * replies are refused. Usage: prompt_tokens, completion_tokens and
     * prompt_tokens_details.cached_tokens.
     * OPENAI_RESPONSES: the `output` items are one reply: `message` items (output_text
     * and refusal texts, joined as the SDK's `output_text` joins them), `function_call`
     * items (`call_id` is the tool call's id), and at most one `reasoning` item, whose
     * summary texts (joined by blank lines) become the reasoning and whose `id` and
     * `encrypted_content` are kept in metadata (`ctxd.openai.*`) so OPENAI_RESPONSES sends
     * the item back. `custom_tool_call` items (freeform tools, e.g. apply_patch) are tool
     * calls whose arguments are {"input": "<the input>"}, sent back as custom_tool_call
     * items. Any other item (hosted tools' items: web search, code interpreter...) is
     * kept whole with its message and sent back as it came (to another format, as a
     * note). A response whose status is failed, cancelled, queued or in_progress is
     * refused. Usage:
     * input_tokens, output_tokens and input_tokens_details.cached_tokens.
     *
     * A malformed body is INVALID_ARGUMENT whose BadRequest field is the JSON path, e.g.
     * "response_json: $.choices[0].message.tool_calls[1].function.name" or
     * "items_json: $[2].call_id", and nothing is appended.
     */
    'responseJson'?: (string);
    /**
     * A JSON array of request items in the same provider's shape, appended after the
     * response's message: tool results and user messages (Chat Completions messages;
     * Responses input items; Anthropic messages; Gemini contents). May be empty.
     *
     * OPENAI_CHAT: messages with role "tool" (tool_call_id; content a string or text
     * parts), "user" (a string, or text and image_url parts), "system" or "developer"
     * (stored as system), or "assistant" (read as a reply is).
     * OPENAI_RESPONSES: `function_call_output` items (call_id; output a string or
     * input_text / input_image parts), `message` items with role user, system or
     * developer (a string, or input_text / input_image parts; the easy form
     * `{"role": "user", "content": "..."}` too), and replayed output items (`reasoning`,
     * `function_call`, assistant `message`): each run of them is one assistant message,
     * read as a reply is; `custom_tool_call_output` items answer custom calls; any other
     * item (an item reference, say) is kept whole with the assistant's items. File
     * inputs are refused.
     * An image's media type is the one its data: URI declares, else the one its file
     * extension names (png, jpg/jpeg, gif, webp), else "image/*"; the `detail` asked for
     * is not kept (OPENAI_RESPONSES sends "auto").
     *
     * ANTHROPIC_MESSAGES. Response: text blocks are the content, a thinking block the
     * reasoning with its signature kept (metadata "ctxd.anthropic.thinking_signature"; one
     * thinking block per message), redacted_thinking blocks kept whole to be sent back,
     * tool_use blocks the tool calls (input as arguments). Usage: input_tokens +
     * cache_creation_input_tokens + cache_read_input_tokens is the prompt,
     * cache_read_input_tokens its cached part. Items: user messages (string content or
     * text / image / tool_result blocks; each tool_result becomes a tool message
     * answering tool_use_id, is_error kept as metadata "ctxd.tool_error"), assistant
     * messages read like a response, and system messages (kept in place). Any block ctxd
     * does not model (server_tool_use, web_search_tool_result, document, ...) is kept
     * whole and sent back as it came (to another format, as a note).
     *
     * GEMINI. Response: candidates[0].content; text parts the content, thought parts the
     * reasoning, functionCall parts the tool calls, thoughtSignatures kept (metadata
     * "ctxd.gemini.thought_signatures"). A functionCall without an id gets
     * "gemini-<responseId>-<part index>" (or a hash of the body in place of a missing or
     * unusual responseId), which BuildMessages' GEMINI body carries. Usage:
     * promptTokenCount + toolUsePromptTokenCount is the prompt, cachedContentTokenCount
     * its cached part, candidatesTokenCount + thoughtsTokenCount the output. Items: user
     * contents (text, inlineData, fileData, functionResponse parts; each functionResponse
     * becomes a tool message) and model contents read like a response. A functionResponse
     * without an id answers the first unanswered call of its name in this request's
     * response_json (or an earlier model content of the items); otherwise it needs the
     * call's id. {"output": X} is read as the result X, {"error": X} as X marked failed,
     * any other response object as its JSON text.
     *
     * A body that is not what the provider documents is INVALID_ARGUMENT naming the JSON
     * path (field "response_json: $.content[2].input", "items_json: $[0].parts[1]...");
     * nothing is appended.
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
     * appended. At most 8 MiB, as is items_json.
     *
     * OPENAI_CHAT: `choices[0].message` is the reply (with n > 1 the first choice is
     * appended; to append another, send the body with that choice alone):
     * `content` (a string or null; a `refusal` stands in when there is no content),
     * `reasoning_content` as the reasoning, `tool_calls` (type "function", each with an
     * id, a name and arguments that are a JSON object). `function_call` and `audio`
     * replies are refused. Usage: prompt_tokens, completion_tokens and
     * prompt_tokens_details.cached_tokens.
     * OPENAI_RESPONSES: the `output` items are one reply: `message` items (output_text
     * and refusal texts, joined as the SDK's `output_text` joins them), `function_call`
     * items (`call_id` is the tool call's id), and at most one `reasoning` item, whose
     * summary texts (joined by blank lines) become the reasoning and whose `id` and
     * `encrypted_content` are kept in metadata (`ctxd.openai.*`) so OPENAI_RESPONSES sends
     * the item back. `custom_tool_call` items (freeform tools, e.g. apply_patch) are tool
     * calls whose arguments are {"input": "<the input>"}, sent back as custom_tool_call
     * items. Any other item (hosted tools' items: web search, code interpreter...) is
     * kept whole with its message and sent back as it came (to another format, as a
     * note). A response whose status is failed, cancelled, queued or in_progress is
     * refused. Usage:
     * input_tokens, output_tokens and input_tokens_details.cached_tokens.
     *
     * A malformed body is INVALID_ARGUMENT whose BadRequest field is the JSON path, e.g.
     * "response_json: $.choices[0].message.tool_calls[1].function.name" or
     * "items_json: $[2].call_id", and nothing is appended.
     */
    'responseJson': (string);
    /**
     * A JSON array of request items in the same provider's shape, appended after the
     * response's message: tool results and user messages (Chat Completions messages;
     * Responses input items; Anthropic messages; Gemini contents). May be empty.
     *
     * OPENAI_CHAT: messages with role "tool" (tool_call_id; content a string or text
     * parts), "user" (a string, or text and image_url parts), "system" or "developer"
     * (stored as system), or "assistant" (read as a reply is).
     * OPENAI_RESPONSES: `function_call_output` items (call_id; output a string or
     * input_text / input_image parts), `message` items with role user, system or
     * developer (a string, or input_text / input_image parts; the easy form
     * `{"role": "user", "content": "..."}` too), and replayed output items (`reasoning`,
     * `function_call`, assistant `message`): each run of them is one assistant message,
     * read as a reply is; `custom_tool_call_output` items answer custom calls; any other
     * item (an item reference, say) is kept whole with the assistant's items. File
     * inputs are refused.
     * An image's media type is the one its data: URI declares, else the one its file
     * extension names (png, jpg/jpeg, gif, webp), else "image/*"; the `detail` asked for
     * is not kept (OPENAI_RESPONSES sends "auto").
     *
     * ANTHROPIC_MESSAGES. Response: text blocks are the content, a thinking block the
     * reasoning with its signature kept (metadata "ctxd.anthropic.thinking_signature"; one
     * thinking block per message), redacted_thinking blocks kept whole to be sent back,
     * tool_use blocks the tool calls (input as arguments). Usage: input_tokens +
     * cache_creation_input_tokens + cache_read_input_tokens is the prompt,
     * cache_read_input_tokens its cached part. Items: user messages (string content or
     * text / image / tool_result blocks; each tool_result becomes a tool message
     * answering tool_use_id, is_error kept as metadata "ctxd.tool_error"), assistant
     * messages read like a response, and system messages (kept in place). Any block ctxd
     * does not model (server_tool_use, web_search_tool_result, document, ...) is kept
     * whole and sent back as it came (to another format, as a note).
     *
     * GEMINI. Response: candidates[0].content; text parts the content, thought parts the
     * reasoning, functionCall parts the tool calls, thoughtSignatures kept (metadata
     * "ctxd.gemini.thought_signatures"). A functionCall without an id gets
     * "gemini-<responseId>-<part index>" (or a hash of the body in place of a missing or
     * unusual responseId), which BuildMessages' GEMINI body carries. Usage:
     * promptTokenCount + toolUsePromptTokenCount is the prompt, cachedContentTokenCount
     * its cached part, candidatesTokenCount + thoughtsTokenCount the output. Items: user
     * contents (text, inlineData, fileData, functionResponse parts; each functionResponse
     * becomes a tool message) and model contents read like a response. A functionResponse
     * without an id answers the first unanswered call of its name in this request's
     * response_json (or an earlier model content of the items); otherwise it needs the
     * call's id. {"output": X} is read as the result X, {"error": X} as X marked failed,
     * any other response object as its JSON text.
     *
     * A body that is not what the provider documents is INVALID_ARGUMENT naming the JSON
     * path (field "response_json: $.content[2].input", "items_json: $[0].parts[1]...");
     * nothing is appended.
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
