const FORMATS = {
    neutral: 'OUTPUT_FORMAT_NEUTRAL',
    openai_chat: 'OUTPUT_FORMAT_OPENAI_CHAT',
    openai_responses: 'OUTPUT_FORMAT_OPENAI_RESPONSES',
    anthropic_messages: 'OUTPUT_FORMAT_ANTHROPIC_MESSAGES',
    gemini: 'OUTPUT_FORMAT_GEMINI',
};
export function outputFormat(format) {
    const value = FORMATS[format];
    if (value === undefined) {
        throw new TypeError(`format must be one of ${Object.keys(FORMATS).join(', ')}, not ${JSON.stringify(format)}`);
    }
    return value;
}
export function jsonFormat(format) {
    if (format === 'neutral')
        throw new TypeError('format must be a provider format, not neutral');
    return outputFormat(format);
}
const ROLES = {
    system: 'ROLE_SYSTEM',
    user: 'ROLE_USER',
    assistant: 'ROLE_ASSISTANT',
    tool: 'ROLE_TOOL',
};
export function toPbMessage(message) {
    const role = ROLES[message.role] ?? message.role;
    return { ...message, role: role };
}
export function toPbTools(tools) {
    if (tools === undefined)
        return undefined;
    if (!Array.isArray(tools))
        return { tokenCount: tools.tokenCount };
    return {
        definitions: {
            items: tools.map((tool) => ({
                name: tool.name,
                description: tool.description ?? '',
                parametersJsonSchema: tool.parameters === undefined
                    ? ''
                    : typeof tool.parameters === 'string'
                        ? tool.parameters
                        : JSON.stringify(tool.parameters),
            })),
        },
    };
}
/** A provider body: an SDK's response object, a parsed JSON value, or the JSON text. */
export function toJsonText(value, what) {
    if (typeof value === 'string')
        return value;
    const text = JSON.stringify(value, (key, inner) => 
    // @google/genai responses carry the HTTP response (headers) next to the body.
    key === 'sdkHttpResponse' ? undefined : inner);
    if (text === undefined)
        throw new TypeError(`${what} must be a JSON value or a JSON text`);
    return text;
}
