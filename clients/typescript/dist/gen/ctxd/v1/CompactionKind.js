/**
 * What kind of compaction an event is about.
 */
export const CompactionKind = {
    COMPACTION_KIND_UNSPECIFIED: 'COMPACTION_KIND_UNSPECIFIED',
    /**
     * Summarizing the oldest turns into leaf summaries (and condensing runs of them).
     */
    COMPACTION_KIND_SUMMARIZE: 'COMPACTION_KIND_SUMMARIZE',
    /**
     * BuildMessages' in-call deterministic summary, so that the request fits now.
     */
    COMPACTION_KIND_FALLBACK: 'COMPACTION_KIND_FALLBACK',
    /**
     * Compact EMERGENCY.
     */
    COMPACTION_KIND_EMERGENCY: 'COMPACTION_KIND_EMERGENCY',
};
