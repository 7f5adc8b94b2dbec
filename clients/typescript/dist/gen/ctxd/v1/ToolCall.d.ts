/**
 * A tool (function) call made by the assistant.
 */
export interface ToolCall {
    /**
     * The provider's call id, e.g. "call_abc123" or "toolu_01...". Must not be empty and
     * must be unique within the session.
     */
    'id'?: (string);
    /**
     * The function name.
     */
    'name'?: (string);
    /**
     * The arguments as a JSON text, exactly as the model produced them. Empty means `{}`.
     */
    'argumentsJson'?: (string);
}
/**
 * A tool (function) call made by the assistant.
 */
export interface ToolCall__Output {
    /**
     * The provider's call id, e.g. "call_abc123" or "toolu_01...". Must not be empty and
     * must be unique within the session.
     */
    'id': (string);
    /**
     * The function name.
     */
    'name': (string);
    /**
     * The arguments as a JSON text, exactly as the model produced them. Empty means `{}`.
     */
    'argumentsJson': (string);
}
