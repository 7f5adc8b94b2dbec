import type { Policy as _ctxd_v1_Policy, Policy__Output as _ctxd_v1_Policy__Output } from '../../ctxd/v1/Policy.js';
import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp.js';
import type { EstimatorStats as _ctxd_v1_EstimatorStats, EstimatorStats__Output as _ctxd_v1_EstimatorStats__Output } from '../../ctxd/v1/EstimatorStats.js';
import type { Usage as _ctxd_v1_Usage, Usage__Output as _ctxd_v1_Usage__Output } from '../../ctxd/v1/Usage.js';
import type { CompactionStats as _ctxd_v1_CompactionStats, CompactionStats__Output as _ctxd_v1_CompactionStats__Output } from '../../ctxd/v1/CompactionStats.js';
import type { Long } from '@grpc/proto-loader';
/**
 * A session as GetSession returns it.
 */
export interface Session {
    'sessionId'?: (string);
    /**
     * The policy in force, every field set: the sizes ctxd applies to this session. Where
     * the requested size is above its cap for the window (eviction_threshold_tokens at
     * most a twenty-fourth of the prompt room, fresh_tail_tokens and
     * tool_output_protect_tokens at most a quarter of it, clear_min_savings_tokens at most a tenth of the window, leaf_target_tokens at
     * most a twentieth and condensed_target_tokens at most a twelfth of the prompt room),
     * this has the capped size; e.g. an 8 000-token window with a 1 000-token reserve
     * evicts tool results above 291 tokens whatever was requested. Prompt room =
     * hard_limit x context_window_tokens - max_output_tokens.
     */
    'policy'?: (_ctxd_v1_Policy | null);
    /**
     * Grows by one with every change to the session (each AppendTurn).
     */
    'version'?: (number | string | Long);
    /**
     * Messages in the log.
     */
    'messageCount'?: (number | string | Long);
    /**
     * Turns so far (user messages).
     */
    'turnCount'?: (number | string | Long);
    /**
     * Tokens of every stored message, as appended.
     */
    'logTokens'?: (number | string | Long);
    /**
     * Tokens of the messages as the model's view renders them.
     */
    'viewTokens'?: (number | string | Long);
    'metadata'?: ({
        [key: string]: string;
    });
    'createdAt'?: (_google_protobuf_Timestamp | null);
    'updatedAt'?: (_google_protobuf_Timestamp | null);
    'estimator'?: (_ctxd_v1_EstimatorStats | null);
    /**
     * Sums of the usage reported with AppendTurn, for cost accounting.
     */
    'usageTotal'?: (_ctxd_v1_Usage | null);
    /**
     * What compaction did to the view so far, and how well the provider's prompt cache
     * was kept.
     */
    'compaction'?: (_ctxd_v1_CompactionStats | null);
    /**
     * The policy as requested, every field set: CreateSession's overrides over the
     * server's defaults, before the caps for the window. Equal to `policy` except in the
     * capped sizes; it is what the session would apply in a window large enough.
     */
    'requestedPolicy'?: (_ctxd_v1_Policy | null);
    /**
     * For a fork: the session it was forked from, by the id it had then (empty: not a
     * fork). The source may since have been deleted; the fork's log is unaffected.
     */
    'forkedFromSessionId'?: (string);
    /**
     * For a fork: the last seq it shares with its source (seqs 1..forked_at_seq).
     */
    'forkedAtSeq'?: (number | string | Long);
    /**
     * A subagent's session: its parent (empty for a root, and once the parent was
     * deleted) and the parent's tool call it was created for.
     */
    'parentSessionId'?: (string);
    'parentToolCallId'?: (string);
    /**
     * Levels below its tree's root at creation: 0 for a root, 1 for a root's child, at
     * most 8.
     */
    'depth'?: (number);
    /**
     * Set once FinishSession ended the session: it takes no more appends.
     */
    'finishedAt'?: (_google_protobuf_Timestamp | null);
}
/**
 * A session as GetSession returns it.
 */
export interface Session__Output {
    'sessionId': (string);
    /**
     * The policy in force, every field set: the sizes ctxd applies to this session. Where
     * the requested size is above its cap for the window (eviction_threshold_tokens at
     * most a twenty-fourth of the prompt room, fresh_tail_tokens and
     * tool_output_protect_tokens at most a quarter of it, clear_min_savings_tokens at most a tenth of the window, leaf_target_tokens at
     * most a twentieth and condensed_target_tokens at most a twelfth of the prompt room),
     * this has the capped size; e.g. an 8 000-token window with a 1 000-token reserve
     * evicts tool results above 291 tokens whatever was requested. Prompt room =
     * hard_limit x context_window_tokens - max_output_tokens.
     */
    'policy': (_ctxd_v1_Policy__Output | null);
    /**
     * Grows by one with every change to the session (each AppendTurn).
     */
    'version': (number);
    /**
     * Messages in the log.
     */
    'messageCount': (number);
    /**
     * Turns so far (user messages).
     */
    'turnCount': (number);
    /**
     * Tokens of every stored message, as appended.
     */
    'logTokens': (number);
    /**
     * Tokens of the messages as the model's view renders them.
     */
    'viewTokens': (number);
    'metadata': ({
        [key: string]: string;
    });
    'createdAt': (_google_protobuf_Timestamp__Output | null);
    'updatedAt': (_google_protobuf_Timestamp__Output | null);
    'estimator': (_ctxd_v1_EstimatorStats__Output | null);
    /**
     * Sums of the usage reported with AppendTurn, for cost accounting.
     */
    'usageTotal': (_ctxd_v1_Usage__Output | null);
    /**
     * What compaction did to the view so far, and how well the provider's prompt cache
     * was kept.
     */
    'compaction': (_ctxd_v1_CompactionStats__Output | null);
    /**
     * The policy as requested, every field set: CreateSession's overrides over the
     * server's defaults, before the caps for the window. Equal to `policy` except in the
     * capped sizes; it is what the session would apply in a window large enough.
     */
    'requestedPolicy': (_ctxd_v1_Policy__Output | null);
    /**
     * For a fork: the session it was forked from, by the id it had then (empty: not a
     * fork). The source may since have been deleted; the fork's log is unaffected.
     */
    'forkedFromSessionId': (string);
    /**
     * For a fork: the last seq it shares with its source (seqs 1..forked_at_seq).
     */
    'forkedAtSeq': (number);
    /**
     * A subagent's session: its parent (empty for a root, and once the parent was
     * deleted) and the parent's tool call it was created for.
     */
    'parentSessionId': (string);
    'parentToolCallId': (string);
    /**
     * Levels below its tree's root at creation: 0 for a root, 1 for a root's child, at
     * most 8.
     */
    'depth': (number);
    /**
     * Set once FinishSession ended the session: it takes no more appends.
     */
    'finishedAt': (_google_protobuf_Timestamp__Output | null);
}
