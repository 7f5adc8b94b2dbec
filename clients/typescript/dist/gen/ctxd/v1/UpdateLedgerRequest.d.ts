import type { LedgerTodo as _ctxd_v1_LedgerTodo, LedgerTodo__Output as _ctxd_v1_LedgerTodo__Output } from '../../ctxd/v1/LedgerTodo.js';
import type { LedgerNote as _ctxd_v1_LedgerNote, LedgerNote__Output as _ctxd_v1_LedgerNote__Output } from '../../ctxd/v1/LedgerNote.js';
export interface UpdateLedgerRequest {
    'sessionId'?: (string);
    /**
     * At most 100 per request; a session holds at most 500 todos.
     */
    'todos'?: (_ctxd_v1_LedgerTodo)[];
    /**
     * At most 100 per request; a session holds at most 100 notes.
     */
    'notes'?: (_ctxd_v1_LedgerNote)[];
}
export interface UpdateLedgerRequest__Output {
    'sessionId': (string);
    /**
     * At most 100 per request; a session holds at most 500 todos.
     */
    'todos': (_ctxd_v1_LedgerTodo__Output)[];
    /**
     * At most 100 per request; a session holds at most 100 notes.
     */
    'notes': (_ctxd_v1_LedgerNote__Output)[];
}
