/**
 * What Search looks through.
 */
export const SearchScope = {
    /**
     * Same as BOTH.
     */
    SEARCH_SCOPE_UNSPECIFIED: 'SEARCH_SCOPE_UNSPECIFIED',
    /**
     * The messages of the log (all of them, in the view or not).
     */
    SEARCH_SCOPE_MESSAGES: 'SEARCH_SCOPE_MESSAGES',
    /**
     * The summaries compaction wrote (active or condensed into a higher one).
     */
    SEARCH_SCOPE_SUMMARIES: 'SEARCH_SCOPE_SUMMARIES',
    SEARCH_SCOPE_BOTH: 'SEARCH_SCOPE_BOTH',
    /**
     * The task ledger's entries (LedgerEntry.text).
     */
    SEARCH_SCOPE_LEDGER: 'SEARCH_SCOPE_LEDGER',
    /**
     * Messages, summaries and the task ledger.
     */
    SEARCH_SCOPE_ALL: 'SEARCH_SCOPE_ALL',
};
