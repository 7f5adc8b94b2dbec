/**
 * A todo's status.
 */
export declare const TodoStatus: {
    /**
     * In UpdateLedger: keep the stored status (PENDING for a new todo).
     */
    readonly TODO_STATUS_UNSPECIFIED: 'TODO_STATUS_UNSPECIFIED';
    readonly TODO_STATUS_PENDING: 'TODO_STATUS_PENDING';
    readonly TODO_STATUS_IN_PROGRESS: 'TODO_STATUS_IN_PROGRESS';
    /**
     * Terminal: a done todo stays done whatever a later update asks.
     */
    readonly TODO_STATUS_DONE: 'TODO_STATUS_DONE';
};
/**
 * A todo's status.
 */
export type TodoStatus = 
/**
 * In UpdateLedger: keep the stored status (PENDING for a new todo).
 */
'TODO_STATUS_UNSPECIFIED' | 0 | 'TODO_STATUS_PENDING' | 1 | 'TODO_STATUS_IN_PROGRESS' | 2
/**
 * Terminal: a done todo stays done whatever a later update asks.
 */
 | 'TODO_STATUS_DONE' | 3;
/**
 * A todo's status.
 */
export type TodoStatus__Output = typeof TodoStatus[keyof typeof TodoStatus];
