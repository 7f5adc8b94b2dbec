import type { Session as _ctxd_v1_Session, Session__Output as _ctxd_v1_Session__Output } from '../../ctxd/v1/Session.js';
import type { Summary as _ctxd_v1_Summary, Summary__Output as _ctxd_v1_Summary__Output } from '../../ctxd/v1/Summary.js';
import type { BudgetReport as _ctxd_v1_BudgetReport, BudgetReport__Output as _ctxd_v1_BudgetReport__Output } from '../../ctxd/v1/BudgetReport.js';
import type { LedgerEntry as _ctxd_v1_LedgerEntry, LedgerEntry__Output as _ctxd_v1_LedgerEntry__Output } from '../../ctxd/v1/LedgerEntry.js';
export interface GetSessionResponse {
    'session'?: (_ctxd_v1_Session | null);
    /**
     * With include_view: the active summaries, oldest first.
     */
    'summaries'?: (_ctxd_v1_Summary)[];
    /**
     * With include_view: the budget of the next request, with the system prompt and tools
     * of the latest BuildMessages.
     */
    'budget'?: (_ctxd_v1_BudgetReport | null);
    /**
     * The session's task ledger, whole, in order of creation (what BuildMessages renders
     * is the part the view no longer shows, within the policy's ledger_fraction).
     */
    'ledger'?: (_ctxd_v1_LedgerEntry)[];
    /**
     * With include_view: the summaries RevertCompaction took out of the view (each with
     * reverted set), most recently reverted first, at most 100. Expand with their
     * summary_id still returns what they cover.
     */
    'revertedSummaries'?: (_ctxd_v1_Summary)[];
}
export interface GetSessionResponse__Output {
    'session': (_ctxd_v1_Session__Output | null);
    /**
     * With include_view: the active summaries, oldest first.
     */
    'summaries': (_ctxd_v1_Summary__Output)[];
    /**
     * With include_view: the budget of the next request, with the system prompt and tools
     * of the latest BuildMessages.
     */
    'budget': (_ctxd_v1_BudgetReport__Output | null);
    /**
     * The session's task ledger, whole, in order of creation (what BuildMessages renders
     * is the part the view no longer shows, within the policy's ledger_fraction).
     */
    'ledger': (_ctxd_v1_LedgerEntry__Output)[];
    /**
     * With include_view: the summaries RevertCompaction took out of the view (each with
     * reverted set), most recently reverted first, at most 100. Expand with their
     * summary_id still returns what they cover.
     */
    'revertedSummaries': (_ctxd_v1_Summary__Output)[];
}
