/**
 * What kind of compaction an event is about.
 */
export declare const CompactionKind: {
    readonly COMPACTION_KIND_UNSPECIFIED: 'COMPACTION_KIND_UNSPECIFIED';
    /**
     * Summarizing the oldest turns into leaf summaries (and condensing runs of them).
     */
    readonly COMPACTION_KIND_SUMMARIZE: 'COMPACTION_KIND_SUMMARIZE';
    /**
     * BuildMessages' in-call deterministic summary, so that the request fits now.
     */
    readonly COMPACTION_KIND_FALLBACK: 'COMPACTION_KIND_FALLBACK';
    /**
     * Compact EMERGENCY.
     */
    readonly COMPACTION_KIND_EMERGENCY: 'COMPACTION_KIND_EMERGENCY';
};
/**
 * What kind of compaction an event is about.
 */
export type CompactionKind = 'COMPACTION_KIND_UNSPECIFIED' | 0
/**
 * Summarizing the oldest turns into leaf summaries (and condensing runs of them).
 */
 | 'COMPACTION_KIND_SUMMARIZE' | 1
/**
 * BuildMessages' in-call deterministic summary, so that the request fits now.
 */
 | 'COMPACTION_KIND_FALLBACK' | 2
/**
 * Compact EMERGENCY.
 */
 | 'COMPACTION_KIND_EMERGENCY' | 3;
/**
 * What kind of compaction an event is about.
 */
export type CompactionKind__Output = typeof CompactionKind[keyof typeof CompactionKind];
