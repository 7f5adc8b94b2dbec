import type { TodoStatus as _ctxd_v1_TodoStatus, TodoStatus__Output as _ctxd_v1_TodoStatus__Output } from '../../ctxd/v1/TodoStatus.js';
/**
 * A todo to create or change, by id.
 */
export interface LedgerTodo {
    /**
     * The client's id for it: 1 to 128 characters, unique within the request.
     */
    'id'?: (string);
    /**
     * Its text, at most 2 000 characters. Required for a new todo; empty keeps the stored
     * text (a status change).
     */
    'text'?: (string);
    /**
     * Its status; unspecified keeps the stored one (PENDING for a new todo).
     */
    'status'?: (_ctxd_v1_TodoStatus);
}
/**
 * A todo to create or change, by id.
 */
export interface LedgerTodo__Output {
    /**
     * The client's id for it: 1 to 128 characters, unique within the request.
     */
    'id': (string);
    /**
     * Its text, at most 2 000 characters. Required for a new todo; empty keeps the stored
     * text (a status change).
     */
    'text': (string);
    /**
     * Its status; unspecified keeps the stored one (PENDING for a new todo).
     */
    'status': (_ctxd_v1_TodoStatus__Output);
}
