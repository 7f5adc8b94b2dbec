import type { LedgerEntryKind as _ctxd_v1_LedgerEntryKind, LedgerEntryKind__Output as _ctxd_v1_LedgerEntryKind__Output } from '../../ctxd/v1/LedgerEntryKind.js';
import type { TodoStatus as _ctxd_v1_TodoStatus, TodoStatus__Output as _ctxd_v1_TodoStatus__Output } from '../../ctxd/v1/TodoStatus.js';
import type { Long } from '@grpc/proto-loader';
/**
 * One entry of a session's task ledger. Entries are never removed by compaction; only a
 * note can be removed, by its client.
 */
export interface LedgerEntry {
    'kind'?: (_ctxd_v1_LedgerEntryKind);
    /**
     * Identity within the kind: the normalized path, the command's first line, the error
     * line, the client's todo or note id.
     */
    'key'?: (string);
    /**
     * What BuildMessages shows for it.
     */
    'text'?: (string);
    /**
     * The seqs it came from, ascending (Expand with a list returns those messages): the
     * first, then the newest, 32 at most. For a todo or note: the session's newest seq
     * at each update (none when the session had no message yet).
     */
    'seqs'?: (number | string | Long)[];
    /**
     * A todo's status; unspecified for other kinds.
     */
    'status'?: (_ctxd_v1_TodoStatus);
    /**
     * A command's exit statuses as its results showed them, oldest first (the newest 8),
     * with the seq of each result in exit_seqs.
     */
    'exitCodes'?: (number)[];
    'exitSeqs'?: (number | string | Long)[];
}
/**
 * One entry of a session's task ledger. Entries are never removed by compaction; only a
 * note can be removed, by its client.
 */
export interface LedgerEntry__Output {
    'kind': (_ctxd_v1_LedgerEntryKind__Output);
    /**
     * Identity within the kind: the normalized path, the command's first line, the error
     * line, the client's todo or note id.
     */
    'key': (string);
    /**
     * What BuildMessages shows for it.
     */
    'text': (string);
    /**
     * The seqs it came from, ascending (Expand with a list returns those messages): the
     * first, then the newest, 32 at most. For a todo or note: the session's newest seq
     * at each update (none when the session had no message yet).
     */
    'seqs': (number)[];
    /**
     * A todo's status; unspecified for other kinds.
     */
    'status': (_ctxd_v1_TodoStatus__Output);
    /**
     * A command's exit statuses as its results showed them, oldest first (the newest 8),
     * with the seq of each result in exit_seqs.
     */
    'exitCodes': (number)[];
    'exitSeqs': (number)[];
}
