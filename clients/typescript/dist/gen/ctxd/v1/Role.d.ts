/**
 * Who wrote a message.
 */
export declare const Role: {
    /**
     * Not allowed: every message must say who wrote it.
     */
    readonly ROLE_UNSPECIFIED: 'ROLE_UNSPECIFIED';
    /**
     * A system message stored in the log. The system prompt normally arrives per request
     * in BuildMessagesRequest.system_prompt instead.
     */
    readonly ROLE_SYSTEM: 'ROLE_SYSTEM';
    /**
     * The user. A user message starts a new turn.
     */
    readonly ROLE_USER: 'ROLE_USER';
    /**
     * The model. Needs content, content parts or tool calls.
     */
    readonly ROLE_ASSISTANT: 'ROLE_ASSISTANT';
    /**
     * A tool result. Needs tool_call_id naming an earlier, unanswered tool call.
     */
    readonly ROLE_TOOL: 'ROLE_TOOL';
};
/**
 * Who wrote a message.
 */
export type Role = 
/**
 * Not allowed: every message must say who wrote it.
 */
'ROLE_UNSPECIFIED' | 0
/**
 * A system message stored in the log. The system prompt normally arrives per request
 * in BuildMessagesRequest.system_prompt instead.
 */
 | 'ROLE_SYSTEM' | 1
/**
 * The user. A user message starts a new turn.
 */
 | 'ROLE_USER' | 2
/**
 * The model. Needs content, content parts or tool calls.
 */
 | 'ROLE_ASSISTANT' | 3
/**
 * A tool result. Needs tool_call_id naming an earlier, unanswered tool call.
 */
 | 'ROLE_TOOL' | 4;
/**
 * Who wrote a message.
 */
export type Role__Output = typeof Role[keyof typeof Role];
