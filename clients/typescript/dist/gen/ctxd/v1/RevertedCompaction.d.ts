import type { EventKind as _ctxd_v1_EventKind, EventKind__Output as _ctxd_v1_EventKind__Output } from '../../ctxd/v1/EventKind.js';
import type { CompactionKind as _ctxd_v1_CompactionKind, CompactionKind__Output as _ctxd_v1_CompactionKind__Output } from '../../ctxd/v1/CompactionKind.js';
import type { Long } from '@grpc/proto-loader';
/**
 * A compaction undone (or that would be, on a dry run).
 */
export interface RevertedCompaction {
    /**
     * Its event's cursor on the session's stream (its session_seq).
     */
    'eventCursor'?: (string);
    /**
     * EVENT_KIND_TOOL_RESULTS_CLEARED or EVENT_KIND_COMPACTION_COMPLETED.
     */
    'kind'?: (_ctxd_v1_EventKind);
    /**
     * A summarization pass's kind; unspecified for a clearing.
     */
    'compaction'?: (_ctxd_v1_CompactionKind);
    /**
     * Messages whose view it had changed: tool results it cleared, or older steps of a
     * turn a step summary took out of the view.
     */
    'seqs'?: (number | string | Long)[];
    /**
     * Summaries it wrote (leaf and condensed): out of the view now, still readable.
     */
    'summaryIds'?: (number | string | Long)[];
    /**
     * A summarization pass's newly covered messages, inclusive; 0 and 0 for a clearing.
     */
    'firstSeq'?: (number | string | Long);
    'lastSeq'?: (number | string | Long);
}
/**
 * A compaction undone (or that would be, on a dry run).
 */
export interface RevertedCompaction__Output {
    /**
     * Its event's cursor on the session's stream (its session_seq).
     */
    'eventCursor': (string);
    /**
     * EVENT_KIND_TOOL_RESULTS_CLEARED or EVENT_KIND_COMPACTION_COMPLETED.
     */
    'kind': (_ctxd_v1_EventKind__Output);
    /**
     * A summarization pass's kind; unspecified for a clearing.
     */
    'compaction': (_ctxd_v1_CompactionKind__Output);
    /**
     * Messages whose view it had changed: tool results it cleared, or older steps of a
     * turn a step summary took out of the view.
     */
    'seqs': (number)[];
    /**
     * Summaries it wrote (leaf and condensed): out of the view now, still readable.
     */
    'summaryIds': (number)[];
    /**
     * A summarization pass's newly covered messages, inclusive; 0 and 0 for a clearing.
     */
    'firstSeq': (number);
    'lastSeq': (number);
}
