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
export declare function ledgerRequest(sessionId: string, update: LedgerUpdate): UpdateLedgerRequest;
