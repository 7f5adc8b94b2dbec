import type { Policy as _ctxd_v1_Policy, Policy__Output as _ctxd_v1_Policy__Output } from '../../ctxd/v1/Policy.js';
export interface CreateSessionRequest {
    /**
     * The session id, unique within the tenant: 1 to 128 characters from [A-Za-z0-9._:-].
     * Empty: ctxd generates one.
     */
    'sessionId'?: (string);
    /**
     * Policy overrides; unset fields take the server defaults.
     */
    'policy'?: (_ctxd_v1_Policy | null);
    /**
     * Free-form string metadata, stored and returned as is.
     */
    'metadata'?: ({
        [key: string]: string;
    });
    /**
     * Makes the session a subagent's: the child of this session of the same tenant
     * (NOT_FOUND naming parent_session_id when the tenant has none, whether or not
     * another tenant has one). Requires parent_tool_call_id. A session may be at most 8
     * levels below its tree's root (FAILED_PRECONDITION naming parent_session_id for a
     * parent that deep, or one that is finished). The link never changes, so no session
     * can become its own ancestor. The child has its own policy (a smaller window, its
     * own summarizer profile): nothing is inherited from the parent.
     */
    'parentSessionId'?: (string);
    /**
     * The parent's tool call that spawns the child, whose result FinishSession can
     * append: a call the parent made and has not answered (INVALID_ARGUMENT naming
     * parent_tool_call_id otherwise). At most 512 characters. Several children may
     * share a call; the first finished with append_to_parent answers it.
     */
    'parentToolCallId'?: (string);
}
export interface CreateSessionRequest__Output {
    /**
     * The session id, unique within the tenant: 1 to 128 characters from [A-Za-z0-9._:-].
     * Empty: ctxd generates one.
     */
    'sessionId': (string);
    /**
     * Policy overrides; unset fields take the server defaults.
     */
    'policy': (_ctxd_v1_Policy__Output | null);
    /**
     * Free-form string metadata, stored and returned as is.
     */
    'metadata': ({
        [key: string]: string;
    });
    /**
     * Makes the session a subagent's: the child of this session of the same tenant
     * (NOT_FOUND naming parent_session_id when the tenant has none, whether or not
     * another tenant has one). Requires parent_tool_call_id. A session may be at most 8
     * levels below its tree's root (FAILED_PRECONDITION naming parent_session_id for a
     * parent that deep, or one that is finished). The link never changes, so no session
     * can become its own ancestor. The child has its own policy (a smaller window, its
     * own summarizer profile): nothing is inherited from the parent.
     */
    'parentSessionId': (string);
    /**
     * The parent's tool call that spawns the child, whose result FinishSession can
     * append: a call the parent made and has not answered (INVALID_ARGUMENT naming
     * parent_tool_call_id otherwise). At most 512 characters. Several children may
     * share a call; the first finished with append_to_parent answers it.
     */
    'parentToolCallId': (string);
}
