import type { Role as _ctxd_v1_Role, Role__Output as _ctxd_v1_Role__Output } from '../../ctxd/v1/Role.js';
import type { ViewState as _ctxd_v1_ViewState, ViewState__Output as _ctxd_v1_ViewState__Output } from '../../ctxd/v1/ViewState.js';
import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp.js';
import type { LedgerEntryKind as _ctxd_v1_LedgerEntryKind, LedgerEntryKind__Output as _ctxd_v1_LedgerEntryKind__Output } from '../../ctxd/v1/LedgerEntryKind.js';
import type { Long } from '@grpc/proto-loader';
/**
 * One match: a message (seq set), a summary (summary_id set) or a task-ledger entry
 * (ledger_kind set).
 */
export interface SearchHit {
    'sessionId'?: (string);
    /**
     * The message's seq (Expand with a list or range); 0 for a summary.
     */
    'seq'?: (number | string | Long);
    /**
     * The summary's id (Expand with summary_id returns what it covers); 0 for a message.
     */
    'summaryId'?: (number | string | Long);
    /**
     * The summary's depth (0: leaf); 0 for a message.
     */
    'depth'?: (number);
    /**
     * The message's role; unspecified for a summary.
     */
    'role'?: (_ctxd_v1_Role);
    /**
     * For a message: how the model's view shows it now. SUMMARIZED also for a message
     * covered by a summary (no longer in the view as itself).
     */
    'viewState'?: (_ctxd_v1_ViewState);
    /**
     * For a summary: the raw messages it covers, inclusive.
     */
    'firstSeq'?: (number | string | Long);
    'lastSeq'?: (number | string | Long);
    /**
     * The matching passage, matched words between « and ». Shown as indexed: path
     * separators and dots are spaces (so `engine.rs` in a query matches
     * `src/engine.rs`).
     */
    'snippet'?: (string);
    /**
     * Relevance (higher is better; comparable within one response).
     */
    'rank'?: (number | string);
    'createdAt'?: (_google_protobuf_Timestamp | null);
    /**
     * For a task-ledger entry (scope LEDGER or ALL): its kind and key; seq and
     * summary_id are 0, and first_seq / last_seq are the first and newest seq it came
     * from (Expand them, or GetSession for all its seqs).
     */
    'ledgerKind'?: (_ctxd_v1_LedgerEntryKind);
    'ledgerKey'?: (string);
    /**
     * For a summary: the tokens of what it replaced in the view (its source_tokens, as a
     * Summary reports them: what its summarizer read); 0 for a message or ledger entry.
     */
    'sourceTokens'?: (number | string | Long);
}
/**
 * One match: a message (seq set), a summary (summary_id set) or a task-ledger entry
 * (ledger_kind set).
 */
export interface SearchHit__Output {
    'sessionId': (string);
    /**
     * The message's seq (Expand with a list or range); 0 for a summary.
     */
    'seq': (number);
    /**
     * The summary's id (Expand with summary_id returns what it covers); 0 for a message.
     */
    'summaryId': (number);
    /**
     * The summary's depth (0: leaf); 0 for a message.
     */
    'depth': (number);
    /**
     * The message's role; unspecified for a summary.
     */
    'role': (_ctxd_v1_Role__Output);
    /**
     * For a message: how the model's view shows it now. SUMMARIZED also for a message
     * covered by a summary (no longer in the view as itself).
     */
    'viewState': (_ctxd_v1_ViewState__Output);
    /**
     * For a summary: the raw messages it covers, inclusive.
     */
    'firstSeq': (number);
    'lastSeq': (number);
    /**
     * The matching passage, matched words between « and ». Shown as indexed: path
     * separators and dots are spaces (so `engine.rs` in a query matches
     * `src/engine.rs`).
     */
    'snippet': (string);
    /**
     * Relevance (higher is better; comparable within one response).
     */
    'rank': (number);
    'createdAt': (_google_protobuf_Timestamp__Output | null);
    /**
     * For a task-ledger entry (scope LEDGER or ALL): its kind and key; seq and
     * summary_id are 0, and first_seq / last_seq are the first and newest seq it came
     * from (Expand them, or GetSession for all its seqs).
     */
    'ledgerKind': (_ctxd_v1_LedgerEntryKind__Output);
    'ledgerKey': (string);
    /**
     * For a summary: the tokens of what it replaced in the view (its source_tokens, as a
     * Summary reports them: what its summarizer read); 0 for a message or ledger entry.
     */
    'sourceTokens': (number);
}
