/**
 * A todo's status.
 */
export const TodoStatus = {
    /**
     * In UpdateLedger: keep the stored status (PENDING for a new todo).
     */
    TODO_STATUS_UNSPECIFIED: 'TODO_STATUS_UNSPECIFIED',
    TODO_STATUS_PENDING: 'TODO_STATUS_PENDING',
    TODO_STATUS_IN_PROGRESS: 'TODO_STATUS_IN_PROGRESS',
    /**
     * Terminal: a done todo stays done whatever a later update asks.
     */
    TODO_STATUS_DONE: 'TODO_STATUS_DONE',
};
