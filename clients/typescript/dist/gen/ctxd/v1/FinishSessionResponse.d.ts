import type { AppendTurnResponse as _ctxd_v1_AppendTurnResponse, AppendTurnResponse__Output as _ctxd_v1_AppendTurnResponse__Output } from '../../ctxd/v1/AppendTurnResponse.js';
import type { Long } from '@grpc/proto-loader';
export interface FinishSessionResponse {
    /**
     * The finished session's version (finishing is a change: one past what it was).
     */
    'version'?: (number | string | Long);
    /**
     * The parent (empty for a root, or once it was deleted) and the tool call the
     * session answers.
     */
    'parentSessionId'?: (string);
    'parentToolCallId'?: (string);
    /**
     * With append_to_parent: the parent's append, as AppendTurn would answer it (the
     * parent's new version, the seq of the tool result, the parent's budget).
     */
    'parentAppend'?: (_ctxd_v1_AppendTurnResponse | null);
}
export interface FinishSessionResponse__Output {
    /**
     * The finished session's version (finishing is a change: one past what it was).
     */
    'version': (number);
    /**
     * The parent (empty for a root, or once it was deleted) and the tool call the
     * session answers.
     */
    'parentSessionId': (string);
    'parentToolCallId': (string);
    /**
     * With append_to_parent: the parent's append, as AppendTurn would answer it (the
     * parent's new version, the seq of the tool result, the parent's budget).
     */
    'parentAppend': (_ctxd_v1_AppendTurnResponse__Output | null);
}
