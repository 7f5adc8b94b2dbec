// UpdateLedger requests: a session's todos and notes by name, converted to the proto
// request.
import type { UpdateLedgerRequest } from './gen/ctxd/v1/UpdateLedgerRequest.js';
import type { UpdateLedgerResponse__Output } from './gen/ctxd/v1/UpdateLedgerResponse.js';

export type UpdateLedgerResponse = UpdateLedgerResponse__Output;

/** A todo to create or change, by id; a done todo stays done. */
export interface LedgerTodo {
  id: string;
  /** Required for a new todo; omitted keeps the stored text. */
  text?: string;
  /** Omitted keeps the stored status (pending for a new todo). */
  status?: 'pending' | 'in_progress' | 'done';
}

/** A note to create or replace by id; empty text removes it. */
export interface LedgerNote {
  id: string;
  text?: string;
}

export interface LedgerUpdate {
  todos?: LedgerTodo[];
  notes?: LedgerNote[];
}

const STATUSES = {
  pending: 'TODO_STATUS_PENDING',
  in_progress: 'TODO_STATUS_IN_PROGRESS',
  done: 'TODO_STATUS_DONE',
} as const;

export function ledgerRequest(sessionId: string, update: LedgerUpdate): UpdateLedgerRequest {
  return {
    sessionId,
    todos: (update.todos ?? []).map((todo, index) => {
      const status = todo.status === undefined ? 'TODO_STATUS_UNSPECIFIED' : STATUSES[todo.status];
      if (status === undefined) throw new TypeError(`todos[${index}].status must be pending, in_progress or done`);
      return { id: todo.id, text: todo.text ?? '', status };
    }),
    notes: (update.notes ?? []).map((note) => ({ id: note.id, text: note.text ?? '' })),
  };
}
