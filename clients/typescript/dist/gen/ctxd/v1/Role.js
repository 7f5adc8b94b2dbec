/**
 * Who wrote a message.
 */
export const Role = {
    /**
     * Not allowed: every message must say who wrote it.
     */
    ROLE_UNSPECIFIED: 'ROLE_UNSPECIFIED',
    /**
     * A system message stored in the log. The system prompt normally arrives per request
     * in BuildMessagesRequest.system_prompt instead.
     */
    ROLE_SYSTEM: 'ROLE_SYSTEM',
    /**
     * The user. A user message starts a new turn.
     */
    ROLE_USER: 'ROLE_USER',
    /**
     * The model. Needs content, content parts or tool calls.
     */
    ROLE_ASSISTANT: 'ROLE_ASSISTANT',
    /**
     * A tool result. Needs tool_call_id naming an earlier, unanswered tool call.
     */
    ROLE_TOOL: 'ROLE_TOOL',
};
