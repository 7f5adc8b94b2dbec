export interface FinishSessionRequest {
    /**
     * The session to finish.
     */
    'sessionId'?: (string);
    /**
     * The session's final answer. With append_to_parent it is appended to the parent as
     * the tool result of parent_tool_call_id (required then; limited like a message's
     * content); without, it must be empty.
     */
    'finalAnswer'?: (string);
    /**
     * Append final_answer to the parent (FAILED_PRECONDITION naming append_to_parent
     * when the session has no parent, the parent was deleted or finished, or its tool
     * call was answered meanwhile: nothing changes).
     */
    'appendToParent'?: (boolean);
}
export interface FinishSessionRequest__Output {
    /**
     * The session to finish.
     */
    'sessionId': (string);
    /**
     * The session's final answer. With append_to_parent it is appended to the parent as
     * the tool result of parent_tool_call_id (required then; limited like a message's
     * content); without, it must be empty.
     */
    'finalAnswer': (string);
    /**
     * Append final_answer to the parent (FAILED_PRECONDITION naming append_to_parent
     * when the session has no parent, the parent was deleted or finished, or its tool
     * call was answered meanwhile: nothing changes).
     */
    'appendToParent': (boolean);
}
