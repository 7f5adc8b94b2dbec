import type { LedgerEntry as _ctxd_v1_LedgerEntry, LedgerEntry__Output as _ctxd_v1_LedgerEntry__Output } from '../../ctxd/v1/LedgerEntry.js';
import type { Long } from '@grpc/proto-loader';
export interface UpdateLedgerResponse {
    /**
     * The session's version after the update.
     */
    'version'?: (number | string | Long);
    /**
     * Todos of the request that asked to leave DONE: they stayed done.
     */
    'keptDoneTodoIds'?: (string)[];
    /**
     * The session's todos and notes after the update, in order of creation.
     */
    'entries'?: (_ctxd_v1_LedgerEntry)[];
}
export interface UpdateLedgerResponse__Output {
    /**
     * The session's version after the update.
     */
    'version': (number);
    /**
     * Todos of the request that asked to leave DONE: they stayed done.
     */
    'keptDoneTodoIds': (string)[];
    /**
     * The session's todos and notes after the update, in order of creation.
     */
    'entries': (_ctxd_v1_LedgerEntry__Output)[];
}
