const STATUSES = {
    pending: 'TODO_STATUS_PENDING',
    in_progress: 'TODO_STATUS_IN_PROGRESS',
    done: 'TODO_STATUS_DONE',
};
export function ledgerRequest(sessionId, update) {
    return {
        sessionId,
        todos: (update.todos ?? []).map((todo, index) => {
            const status = todo.status === undefined ? 'TODO_STATUS_UNSPECIFIED' : STATUSES[todo.status];
            if (status === undefined)
                throw new TypeError(`todos[${index}].status must be pending, in_progress or done`);
            return { id: todo.id, text: todo.text ?? '', status };
        }),
        notes: (update.notes ?? []).map((note) => ({ id: note.id, text: note.text ?? '' })),
    };
}
