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
     * the item back. Hosted tools' items (web search, code interpreter...) are refused,
     * as is a response whose status is failed, cancelled, queued or in_progress. Usage:
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
     * read as a reply is. Item references and file inputs are refused.
     * An image's media type is the one its data: URI declares, else the one its file
     * extension names (png, jpg/jpeg, gif, webp), else "image/*"; the `detail` asked for
     * is not kept (OPENAI_RESPONSES sends "auto").
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
     * the item back. Hosted tools' items (web search, code interpreter...) are refused,
     * as is a response whose status is failed, cancelled, queued or in_progress. Usage:
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
     * read as a reply is. Item references and file inputs are refused.
     * An image's media type is the one its data: URI declares, else the one its file
     * extension names (png, jpg/jpeg, gif, webp), else "image/*"; the `detail` asked for
     * is not kept (OPENAI_RESPONSES sends "auto").
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
