import type { Long } from '@grpc/proto-loader';
export interface CompactionStats {
    /**
     * Tool results turned into placeholders (clearing); a reverted clearing's no longer
     * count.
     */
    'clearedMessages'?: (number | string | Long);
    /**
     * Tool results that entered the view as a head + tail preview (eviction at append).
     */
    'evictedMessages'?: (number | string | Long);
    /**
     * BuildMessages results that differed from the previous one.
     */
    'builds'?: (number | string | Long);
    /**
     * Of those, the ones that extended the previous result (same first message, same
     * view, same system prompt and tools size, only messages added at the end): the
     * provider's cached prompt prefix stays valid across them.
     */
    'extendingBuilds'?: (number | string | Long);
    /**
     * extending_builds / (builds - 1), in percent (the first build extends nothing);
     * 100 when there were fewer than two builds.
     */
    'cacheStablePct'?: (number | string);
    /**
     * Summaries written (leaf and condensed; a reverted compaction's no longer count),
     * and the tokens of the active ones.
     */
    'summariesWritten'?: (number | string | Long);
    'summaryTokens'?: (number | string | Long);
    /**
     * Consecutive builds in which automatic compaction could not reduce the request.
     */
    'consecutiveFailures'?: (number | string | Long);
    /**
     * True once consecutive_failures reached the policy's compaction_failure_limit:
     * automatic compaction is paused until a manual Compact or a new user message.
     */
    'paused'?: (boolean);
    /**
     * True after a RevertCompaction while the log is below resume_at_log_tokens:
     * automatic compaction (clearing and summarizing in BuildMessages, jobs at
     * AppendTurn) waits, so it does not redo at once what was undone; BuildMessages still
     * keeps every request within budget by leaving out the oldest turns. A Compact lifts
     * the wait.
     */
    'compactionHeld'?: (boolean);
    /**
     * The log_tokens at which automatic compaction resumes after the latest revert: the
     * log then plus a tenth of what the restored view held. 0 when none.
     */
    'resumeAtLogTokens'?: (number | string | Long);
}
export interface CompactionStats__Output {
    /**
     * Tool results turned into placeholders (clearing); a reverted clearing's no longer
     * count.
     */
    'clearedMessages': (number);
    /**
     * Tool results that entered the view as a head + tail preview (eviction at append).
     */
    'evictedMessages': (number);
    /**
     * BuildMessages results that differed from the previous one.
     */
    'builds': (number);
    /**
     * Of those, the ones that extended the previous result (same first message, same
     * view, same system prompt and tools size, only messages added at the end): the
     * provider's cached prompt prefix stays valid across them.
     */
    'extendingBuilds': (number);
    /**
     * extending_builds / (builds - 1), in percent (the first build extends nothing);
     * 100 when there were fewer than two builds.
     */
    'cacheStablePct': (number);
    /**
     * Summaries written (leaf and condensed; a reverted compaction's no longer count),
     * and the tokens of the active ones.
     */
    'summariesWritten': (number);
    'summaryTokens': (number);
    /**
     * Consecutive builds in which automatic compaction could not reduce the request.
     */
    'consecutiveFailures': (number);
    /**
     * True once consecutive_failures reached the policy's compaction_failure_limit:
     * automatic compaction is paused until a manual Compact or a new user message.
     */
    'paused': (boolean);
    /**
     * True after a RevertCompaction while the log is below resume_at_log_tokens:
     * automatic compaction (clearing and summarizing in BuildMessages, jobs at
     * AppendTurn) waits, so it does not redo at once what was undone; BuildMessages still
     * keeps every request within budget by leaving out the oldest turns. A Compact lifts
     * the wait.
     */
    'compactionHeld': (boolean);
    /**
     * The log_tokens at which automatic compaction resumes after the latest revert: the
     * log then plus a tenth of what the restored view held. 0 when none.
     */
    'resumeAtLogTokens': (number);
}
