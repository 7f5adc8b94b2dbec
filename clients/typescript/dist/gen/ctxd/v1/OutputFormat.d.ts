/**
 * The shape of the built messages.
 */
export declare const OutputFormat: {
    /**
     * Same as NEUTRAL.
     */
    readonly OUTPUT_FORMAT_UNSPECIFIED: 'OUTPUT_FORMAT_UNSPECIFIED';
    /**
     * `messages` holds proto Messages.
     */
    readonly OUTPUT_FORMAT_NEUTRAL: 'OUTPUT_FORMAT_NEUTRAL';
    /**
     * `json` holds an OpenAI Chat Completions body: {"messages": [...], "tools": [...]};
     * add "model" and send. Image media become image_url parts in user messages; any
     * other media reference stays visible as a text part.
     */
    readonly OUTPUT_FORMAT_OPENAI_CHAT: 'OUTPUT_FORMAT_OPENAI_CHAT';
    /**
     * `json` holds an Anthropic Messages body: {"system": "...", "messages": [...],
     * "tools": [...], "max_tokens": N} with tool_use / tool_result blocks (results first
     * in their user message) and consecutive same-role messages merged; stored system
     * messages join "system", and a message with no content is left out. Images are url
     * sources, or base64 sources for base64 data: URIs; other media stay visible as text.
     * Reasoning goes back as a {"type": "thinking", "thinking", "signature"} block, first
     * in its assistant message, only when the message carries its signature (metadata
     * "ctxd.anthropic.thinking_signature", kept by AppendNative from an Anthropic
     * Message), followed by any redacted_thinking blocks it came with; Anthropic refuses
     * a thinking block it cannot verify, so reasoning without a signature is not sent.
     * A tool result marked failed (metadata "ctxd.tool_error" = "true") has is_error.
     * Add "model" and send.
     */
    readonly OUTPUT_FORMAT_ANTHROPIC_MESSAGES: 'OUTPUT_FORMAT_ANTHROPIC_MESSAGES';
    /**
     * `json` holds an OpenAI Responses body: {"instructions": "...", "input": [...],
     * "tools": [...], "max_output_tokens": N}; "instructions" is left out when the system
     * prompt is empty, N is the output reserve. Input items: user and system messages as
     * `message` items (a string, or input_text / input_image parts with detail "auto");
     * an assistant message as its `reasoning` item (only when it holds the item's id,
     * `ctxd.openai.reasoning_id` in its metadata, e.g. appended through AppendNative from
     * a Responses reply: the summary and encrypted_content go with it; reasoning without
     * an id is not sent), then a `message` item with its text as a string (left out when
     * empty), then one `function_call` item per tool call; a tool result as a
     * `function_call_output` item (joined by `call_id`; images as input_image parts).
     * Images go in user messages and tool outputs; other media stay visible as text.
     * Tools are function tools with "strict": false (the client's schema as it is; the
     * Responses API would otherwise enforce strict mode). Add "model" and send.
     */
    readonly OUTPUT_FORMAT_OPENAI_RESPONSES: 'OUTPUT_FORMAT_OPENAI_RESPONSES';
    /**
     * `json` holds a Gemini generateContent body: {"systemInstruction": {"parts":
     * [{"text"}]} (absent without a system prompt or system messages), "contents": [...],
     * "tools": [{"functionDeclarations": [{"name", "description", "parameters"}]}],
     * "generationConfig": {"maxOutputTokens": N}}. Contents alternate `user` / `model`
     * (consecutive messages of one role are merged; stored system messages join
     * systemInstruction). An assistant message is a `model` content: its reasoning as a
     * {"text", "thought": true} part, its text, then one {"functionCall": {"id", "name",
     * "args"}} part per tool call; thought signatures kept by AppendNative go back on the
     * part they came from ("thoughtSignature"). A tool result is a {"functionResponse":
     * {"id", "name", "response"}} part of a `user` content (first in it), named for the
     * call it answers; "response" is the result's text when that is a JSON object, else
     * {"output": text}, or {"error": text} for a result marked failed. Every call carries
     * its id: the model's, or the one AppendNative made up for a call without one (echo
     * it in your functionResponse). Media: base64 data: URIs as inlineData, other URIs
     * as fileData {"fileUri", "mimeType"} (Gemini fetches Files API, gs:// and public
     * URLs); media in tool results or system messages stay visible as text. Send to
     * models/{model}:generateContent.
     */
    readonly OUTPUT_FORMAT_GEMINI: 'OUTPUT_FORMAT_GEMINI';
};
/**
 * The shape of the built messages.
 */
export type OutputFormat = 
/**
 * Same as NEUTRAL.
 */
'OUTPUT_FORMAT_UNSPECIFIED' | 0
/**
 * `messages` holds proto Messages.
 */
 | 'OUTPUT_FORMAT_NEUTRAL' | 1
/**
 * `json` holds an OpenAI Chat Completions body: {"messages": [...], "tools": [...]};
 * add "model" and send. Image media become image_url parts in user messages; any
 * other media reference stays visible as a text part.
 */
 | 'OUTPUT_FORMAT_OPENAI_CHAT' | 2
/**
 * `json` holds an Anthropic Messages body: {"system": "...", "messages": [...],
 * "tools": [...], "max_tokens": N} with tool_use / tool_result blocks (results first
 * in their user message) and consecutive same-role messages merged; stored system
 * messages join "system", and a message with no content is left out. Images are url
 * sources, or base64 sources for base64 data: URIs; other media stay visible as text.
 * Reasoning goes back as a {"type": "thinking", "thinking", "signature"} block, first
 * in its assistant message, only when the message carries its signature (metadata
 * "ctxd.anthropic.thinking_signature", kept by AppendNative from an Anthropic
 * Message), followed by any redacted_thinking blocks it came with; Anthropic refuses
 * a thinking block it cannot verify, so reasoning without a signature is not sent.
 * A tool result marked failed (metadata "ctxd.tool_error" = "true") has is_error.
 * Add "model" and send.
 */
 | 'OUTPUT_FORMAT_ANTHROPIC_MESSAGES' | 3
/**
 * `json` holds an OpenAI Responses body: {"instructions": "...", "input": [...],
 * "tools": [...], "max_output_tokens": N}; "instructions" is left out when the system
 * prompt is empty, N is the output reserve. Input items: user and system messages as
 * `message` items (a string, or input_text / input_image parts with detail "auto");
 * an assistant message as its `reasoning` item (only when it holds the item's id,
 * `ctxd.openai.reasoning_id` in its metadata, e.g. appended through AppendNative from
 * a Responses reply: the summary and encrypted_content go with it; reasoning without
 * an id is not sent), then a `message` item with its text as a string (left out when
 * empty), then one `function_call` item per tool call; a tool result as a
 * `function_call_output` item (joined by `call_id`; images as input_image parts).
 * Images go in user messages and tool outputs; other media stay visible as text.
 * Tools are function tools with "strict": false (the client's schema as it is; the
 * Responses API would otherwise enforce strict mode). Add "model" and send.
 */
 | 'OUTPUT_FORMAT_OPENAI_RESPONSES' | 4
/**
 * `json` holds a Gemini generateContent body: {"systemInstruction": {"parts":
 * [{"text"}]} (absent without a system prompt or system messages), "contents": [...],
 * "tools": [{"functionDeclarations": [{"name", "description", "parameters"}]}],
 * "generationConfig": {"maxOutputTokens": N}}. Contents alternate `user` / `model`
 * (consecutive messages of one role are merged; stored system messages join
 * systemInstruction). An assistant message is a `model` content: its reasoning as a
 * {"text", "thought": true} part, its text, then one {"functionCall": {"id", "name",
 * "args"}} part per tool call; thought signatures kept by AppendNative go back on the
 * part they came from ("thoughtSignature"). A tool result is a {"functionResponse":
 * {"id", "name", "response"}} part of a `user` content (first in it), named for the
 * call it answers; "response" is the result's text when that is a JSON object, else
 * {"output": text}, or {"error": text} for a result marked failed. Every call carries
 * its id: the model's, or the one AppendNative made up for a call without one (echo
 * it in your functionResponse). Media: base64 data: URIs as inlineData, other URIs
 * as fileData {"fileUri", "mimeType"} (Gemini fetches Files API, gs:// and public
 * URLs); media in tool results or system messages stay visible as text. Send to
 * models/{model}:generateContent.
 */
 | 'OUTPUT_FORMAT_GEMINI' | 5;
/**
 * The shape of the built messages.
 */
export type OutputFormat__Output = typeof OutputFormat[keyof typeof OutputFormat];
