/**
 * What a ledger entry records.
 */
export declare const LedgerEntryKind: {
    readonly LEDGER_ENTRY_KIND_UNSPECIFIED: 'LEDGER_ENTRY_KIND_UNSPECIFIED';
    /**
     * A file the agent read, wrote or searched: from tool-call arguments (path, file_path,
     * filename, pattern, …) and the words of its commands. Normalized (no `./`, `..`
     * resolved, no `:line` suffix). Kept by ctxd.
     */
    readonly LEDGER_ENTRY_KIND_FILE: 'LEDGER_ENTRY_KIND_FILE';
    /**
     * A command the agent ran: the first line of a `command`/`cmd` argument, deduplicated;
     * exit_codes holds what its results showed. Kept by ctxd.
     */
    readonly LEDGER_ENTRY_KIND_COMMAND: 'LEDGER_ENTRY_KIND_COMMAND';
    /**
     * An error a tool result showed: the last line of a Python traceback, or a line such
     * as `Error: …`, `error[E0425]: …`, `ValueError: …`. Kept by ctxd.
     */
    readonly LEDGER_ENTRY_KIND_ERROR: 'LEDGER_ENTRY_KIND_ERROR';
    /**
     * A todo the client set (UpdateLedger).
     */
    readonly LEDGER_ENTRY_KIND_TODO: 'LEDGER_ENTRY_KIND_TODO';
    /**
     * A note the client set (UpdateLedger).
     */
    readonly LEDGER_ENTRY_KIND_NOTE: 'LEDGER_ENTRY_KIND_NOTE';
};
/**
 * What a ledger entry records.
 */
export type LedgerEntryKind = 'LEDGER_ENTRY_KIND_UNSPECIFIED' | 0
/**
 * A file the agent read, wrote or searched: from tool-call arguments (path, file_path,
 * filename, pattern, …) and the words of its commands. Normalized (no `./`, `..`
 * resolved, no `:line` suffix). Kept by ctxd.
 */
 | 'LEDGER_ENTRY_KIND_FILE' | 1
/**
 * A command the agent ran: the first line of a `command`/`cmd` argument, deduplicated;
 * exit_codes holds what its results showed. Kept by ctxd.
 */
 | 'LEDGER_ENTRY_KIND_COMMAND' | 2
/**
 * An error a tool result showed: the last line of a Python traceback, or a line such
 * as `Error: …`, `error[E0425]: …`, `ValueError: …`. Kept by ctxd.
 */
 | 'LEDGER_ENTRY_KIND_ERROR' | 3
/**
 * A todo the client set (UpdateLedger).
 */
 | 'LEDGER_ENTRY_KIND_TODO' | 4
/**
 * A note the client set (UpdateLedger).
 */
 | 'LEDGER_ENTRY_KIND_NOTE' | 5;
/**
 * What a ledger entry records.
 */
export type LedgerEntryKind__Output = typeof LedgerEntryKind[keyof typeof LedgerEntryKind];
