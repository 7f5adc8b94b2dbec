/**
 * What Search looks through.
 */
export declare const SearchScope: {
    /**
     * Same as BOTH.
     */
    readonly SEARCH_SCOPE_UNSPECIFIED: 'SEARCH_SCOPE_UNSPECIFIED';
    /**
     * The messages of the log (all of them, in the view or not).
     */
    readonly SEARCH_SCOPE_MESSAGES: 'SEARCH_SCOPE_MESSAGES';
    /**
     * The summaries compaction wrote (active or condensed into a higher one).
     */
    readonly SEARCH_SCOPE_SUMMARIES: 'SEARCH_SCOPE_SUMMARIES';
    readonly SEARCH_SCOPE_BOTH: 'SEARCH_SCOPE_BOTH';
    /**
     * The task ledger's entries (LedgerEntry.text).
     */
    readonly SEARCH_SCOPE_LEDGER: 'SEARCH_SCOPE_LEDGER';
    /**
     * Messages, summaries and the task ledger.
     */
    readonly SEARCH_SCOPE_ALL: 'SEARCH_SCOPE_ALL';
};
/**
 * What Search looks through.
 */
export type SearchScope = 
/**
 * Same as BOTH.
 */
'SEARCH_SCOPE_UNSPECIFIED' | 0
/**
 * The messages of the log (all of them, in the view or not).
 */
 | 'SEARCH_SCOPE_MESSAGES' | 1
/**
 * The summaries compaction wrote (active or condensed into a higher one).
 */
 | 'SEARCH_SCOPE_SUMMARIES' | 2 | 'SEARCH_SCOPE_BOTH' | 3
/**
 * The task ledger's entries (LedgerEntry.text).
 */
 | 'SEARCH_SCOPE_LEDGER' | 4
/**
 * Messages, summaries and the task ledger.
 */
 | 'SEARCH_SCOPE_ALL' | 5;
/**
 * What Search looks through.
 */
export type SearchScope__Output = typeof SearchScope[keyof typeof SearchScope];
