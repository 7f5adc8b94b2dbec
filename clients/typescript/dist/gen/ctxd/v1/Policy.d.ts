import type { Tokenizer as _ctxd_v1_Tokenizer, Tokenizer__Output as _ctxd_v1_Tokenizer__Output } from '../../ctxd/v1/Tokenizer.js';
import type { SummaryPlacement as _ctxd_v1_SummaryPlacement, SummaryPlacement__Output as _ctxd_v1_SummaryPlacement__Output } from '../../ctxd/v1/SummaryPlacement.js';
import type { Long } from '@grpc/proto-loader';
/**
 * A session's policy. On CreateSession every field is optional: an unset field takes
 * the server's default. In a Session (CreateSession, GetSession) every field is set:
 * `policy` has the values in force, `requested_policy` the values asked for. They differ
 * only where a size is capped for the window (the fields below say which caps apply).
 * Fractions are of context_window_tokens and must lie in (0, 1].
 */
export interface Policy {
    /**
     * The model's context window in tokens. When only one of context_window_tokens and
     * max_output_tokens is given, context_window_tokens = 4 x max_output_tokens.
     */
    'contextWindowTokens'?: (number | string | Long);
    /**
     * Tokens reserved for the model's reply. Must be less than the window.
     */
    'maxOutputTokens'?: (number | string | Long);
    /**
     * Tokenizer for this session's counts. Fixed at creation.
     */
    'tokenizer'?: (_ctxd_v1_Tokenizer);
    /**
     * For TOKENIZER_HEURISTIC: characters per token (0.5 to 100).
     */
    'heuristicCharsPerToken'?: (number | string);
    /**
     * Fraction of the window past which old tool results are cleared (default 0.60).
     */
    'clearThreshold'?: (number | string);
    /**
     * Fraction of the window past which summarization is due (default 0.75). At least
     * clear_threshold.
     */
    'summarizeThreshold'?: (number | string);
    /**
     * Fraction of the window that a request may never exceed (default 1.0). At least
     * summarize_threshold.
     */
    'hardLimit'?: (number | string);
    /**
     * The newest messages protected from compaction, by count (default 32).
     */
    'freshTailMessages'?: (number | string | Long);
    /**
     * The newest messages protected from compaction, by tokens (default 20 000).
     */
    'freshTailTokens'?: (number | string | Long);
    /**
     * Tool output kept whole, newest first, when clearing (default 40 000 tokens; at
     * most a quarter of the prompt room, so small windows can clear too). The newest
     * tool result is always kept whole.
     */
    'toolOutputProtectTokens'?: (number | string | Long);
    /**
     * Clearing happens only when it saves at least this many tokens (default 20 000; at
     * most a tenth of the window), unless the request would not fit otherwise.
     */
    'clearMinSavingsTokens'?: (number | string | Long);
    /**
     * A tool result above this size is evicted to a head + tail preview at append
     * (default 20 000; at most a twenty-fourth of the prompt room). The original stays whole
     * in the log (Expand). Pinned results are never evicted.
     */
    'evictionThresholdTokens'?: (number | string | Long);
    /**
     * A leaf summary chunk is taken once it reaches this many messages (default 8)...
     */
    'leafChunkMessages'?: (number | string | Long);
    /**
     * ...or this many tokens (default 20 000).
     */
    'leafChunkTokens'?: (number | string | Long);
    /**
     * Target size of a leaf summary (default 1 200 tokens).
     */
    'leafTargetTokens'?: (number | string | Long);
    /**
     * This many consecutive same-depth summaries are condensed into one (default 4).
     */
    'condenseFanin'?: (number | string | Long);
    /**
     * Target size of a condensed summary (default 2 000 tokens).
     */
    'condensedTargetTokens'?: (number | string | Long);
    /**
     * Where summaries go in the built request.
     */
    'summaryPlacement'?: (_ctxd_v1_SummaryPlacement);
    /**
     * Name of the summarizer profile in the server config ("extractive" is built in).
     */
    'summarizerProfile'?: (string);
    /**
     * Flat cost of one media item when the client gives no estimate (default 1 000).
     */
    'mediaItemTokens'?: (number | string | Long);
    /**
     * Fraction of the window that compaction brings the request down to once it starts
     * (default 0.20; below clear_threshold). The gap is hysteresis: one large compaction,
     * then many builds that extend the same prefix (which a provider's prompt cache
     * keeps), instead of a small one every turn.
     */
    'clearTarget'?: (number | string);
    /**
     * Loop guard: after this many consecutive builds in which automatic compaction was due
     * but could not reduce the request, it pauses (GetSession says so) until a manual
     * Compact or a new user message (default 3). BuildMessages still fits the window by
     * leaving out the oldest turns meanwhile.
     */
    'compactionFailureLimit'?: (number | string | Long);
    /**
     * Share of the window the task ledger's block may take in a request (default 0.1,
     * at most 0.25, and never more than a quarter of the prompt room; 0 turns the block
     * off, the ledger is still kept). Past it the oldest entries fold into counts.
     */
    'ledgerFraction'?: (number | string);
    /**
     * BuildMessages adds ctxd's two recall tools to the request's tools (in its format):
     * ctxd_recall_search (this session's history, by words, role and time) and
     * ctxd_recall_expand (messages by seq, a seq range or a summary, within a token cap),
     * counted in the budget like any tool; a client tool may then not be named
     * ctxd_recall_*. AnswerRecall answers a call to one of them. Default false.
     */
    'recallTools'?: (boolean);
    /**
     * Seconds the session may go unchanged (no append, compaction or other write;
     * BuildMessages alone does not count) before the server deletes it in the background, announcing a SESSION_DELETED event
     * as DeleteSession does; a fork still reading its messages keeps them. 0 (the
     * default) keeps the session until DeleteSession; at most ten years.
     */
    'retentionSeconds'?: (number | string | Long);
    '_contextWindowTokens'?: "contextWindowTokens";
    '_maxOutputTokens'?: "maxOutputTokens";
    '_tokenizer'?: "tokenizer";
    '_heuristicCharsPerToken'?: "heuristicCharsPerToken";
    '_clearThreshold'?: "clearThreshold";
    '_summarizeThreshold'?: "summarizeThreshold";
    '_hardLimit'?: "hardLimit";
    '_freshTailMessages'?: "freshTailMessages";
    '_freshTailTokens'?: "freshTailTokens";
    '_toolOutputProtectTokens'?: "toolOutputProtectTokens";
    '_clearMinSavingsTokens'?: "clearMinSavingsTokens";
    '_evictionThresholdTokens'?: "evictionThresholdTokens";
    '_leafChunkMessages'?: "leafChunkMessages";
    '_leafChunkTokens'?: "leafChunkTokens";
    '_leafTargetTokens'?: "leafTargetTokens";
    '_condenseFanin'?: "condenseFanin";
    '_condensedTargetTokens'?: "condensedTargetTokens";
    '_summaryPlacement'?: "summaryPlacement";
    '_summarizerProfile'?: "summarizerProfile";
    '_mediaItemTokens'?: "mediaItemTokens";
    '_clearTarget'?: "clearTarget";
    '_compactionFailureLimit'?: "compactionFailureLimit";
    '_ledgerFraction'?: "ledgerFraction";
    '_recallTools'?: "recallTools";
    '_retentionSeconds'?: "retentionSeconds";
}
/**
 * A session's policy. On CreateSession every field is optional: an unset field takes
 * the server's default. In a Session (CreateSession, GetSession) every field is set:
 * `policy` has the values in force, `requested_policy` the values asked for. They differ
 * only where a size is capped for the window (the fields below say which caps apply).
 * Fractions are of context_window_tokens and must lie in (0, 1].
 */
export interface Policy__Output {
    /**
     * The model's context window in tokens. When only one of context_window_tokens and
     * max_output_tokens is given, context_window_tokens = 4 x max_output_tokens.
     */
    'contextWindowTokens'?: (number);
    /**
     * Tokens reserved for the model's reply. Must be less than the window.
     */
    'maxOutputTokens'?: (number);
    /**
     * Tokenizer for this session's counts. Fixed at creation.
     */
    'tokenizer'?: (_ctxd_v1_Tokenizer__Output);
    /**
     * For TOKENIZER_HEURISTIC: characters per token (0.5 to 100).
     */
    'heuristicCharsPerToken'?: (number);
    /**
     * Fraction of the window past which old tool results are cleared (default 0.60).
     */
    'clearThreshold'?: (number);
    /**
     * Fraction of the window past which summarization is due (default 0.75). At least
     * clear_threshold.
     */
    'summarizeThreshold'?: (number);
    /**
     * Fraction of the window that a request may never exceed (default 1.0). At least
     * summarize_threshold.
     */
    'hardLimit'?: (number);
    /**
     * The newest messages protected from compaction, by count (default 32).
     */
    'freshTailMessages'?: (number);
    /**
     * The newest messages protected from compaction, by tokens (default 20 000).
     */
    'freshTailTokens'?: (number);
    /**
     * Tool output kept whole, newest first, when clearing (default 40 000 tokens; at
     * most a quarter of the prompt room, so small windows can clear too). The newest
     * tool result is always kept whole.
     */
    'toolOutputProtectTokens'?: (number);
    /**
     * Clearing happens only when it saves at least this many tokens (default 20 000; at
     * most a tenth of the window), unless the request would not fit otherwise.
     */
    'clearMinSavingsTokens'?: (number);
    /**
     * A tool result above this size is evicted to a head + tail preview at append
     * (default 20 000; at most a twenty-fourth of the prompt room). The original stays whole
     * in the log (Expand). Pinned results are never evicted.
     */
    'evictionThresholdTokens'?: (number);
    /**
     * A leaf summary chunk is taken once it reaches this many messages (default 8)...
     */
    'leafChunkMessages'?: (number);
    /**
     * ...or this many tokens (default 20 000).
     */
    'leafChunkTokens'?: (number);
    /**
     * Target size of a leaf summary (default 1 200 tokens).
     */
    'leafTargetTokens'?: (number);
    /**
     * This many consecutive same-depth summaries are condensed into one (default 4).
     */
    'condenseFanin'?: (number);
    /**
     * Target size of a condensed summary (default 2 000 tokens).
     */
    'condensedTargetTokens'?: (number);
    /**
     * Where summaries go in the built request.
     */
    'summaryPlacement'?: (_ctxd_v1_SummaryPlacement__Output);
    /**
     * Name of the summarizer profile in the server config ("extractive" is built in).
     */
    'summarizerProfile'?: (string);
    /**
     * Flat cost of one media item when the client gives no estimate (default 1 000).
     */
    'mediaItemTokens'?: (number);
    /**
     * Fraction of the window that compaction brings the request down to once it starts
     * (default 0.20; below clear_threshold). The gap is hysteresis: one large compaction,
     * then many builds that extend the same prefix (which a provider's prompt cache
     * keeps), instead of a small one every turn.
     */
    'clearTarget'?: (number);
    /**
     * Loop guard: after this many consecutive builds in which automatic compaction was due
     * but could not reduce the request, it pauses (GetSession says so) until a manual
     * Compact or a new user message (default 3). BuildMessages still fits the window by
     * leaving out the oldest turns meanwhile.
     */
    'compactionFailureLimit'?: (number);
    /**
     * Share of the window the task ledger's block may take in a request (default 0.1,
     * at most 0.25, and never more than a quarter of the prompt room; 0 turns the block
     * off, the ledger is still kept). Past it the oldest entries fold into counts.
     */
    'ledgerFraction'?: (number);
    /**
     * BuildMessages adds ctxd's two recall tools to the request's tools (in its format):
     * ctxd_recall_search (this session's history, by words, role and time) and
     * ctxd_recall_expand (messages by seq, a seq range or a summary, within a token cap),
     * counted in the budget like any tool; a client tool may then not be named
     * ctxd_recall_*. AnswerRecall answers a call to one of them. Default false.
     */
    'recallTools'?: (boolean);
    /**
     * Seconds the session may go unchanged (no append, compaction or other write;
     * BuildMessages alone does not count) before the server deletes it in the background, announcing a SESSION_DELETED event
     * as DeleteSession does; a fork still reading its messages keeps them. 0 (the
     * default) keeps the session until DeleteSession; at most ten years.
     */
    'retentionSeconds'?: (number);
    '_contextWindowTokens'?: "contextWindowTokens";
    '_maxOutputTokens'?: "maxOutputTokens";
    '_tokenizer'?: "tokenizer";
    '_heuristicCharsPerToken'?: "heuristicCharsPerToken";
    '_clearThreshold'?: "clearThreshold";
    '_summarizeThreshold'?: "summarizeThreshold";
    '_hardLimit'?: "hardLimit";
    '_freshTailMessages'?: "freshTailMessages";
    '_freshTailTokens'?: "freshTailTokens";
    '_toolOutputProtectTokens'?: "toolOutputProtectTokens";
    '_clearMinSavingsTokens'?: "clearMinSavingsTokens";
    '_evictionThresholdTokens'?: "evictionThresholdTokens";
    '_leafChunkMessages'?: "leafChunkMessages";
    '_leafChunkTokens'?: "leafChunkTokens";
    '_leafTargetTokens'?: "leafTargetTokens";
    '_condenseFanin'?: "condenseFanin";
    '_condensedTargetTokens'?: "condensedTargetTokens";
    '_summaryPlacement'?: "summaryPlacement";
    '_summarizerProfile'?: "summarizerProfile";
    '_mediaItemTokens'?: "mediaItemTokens";
    '_clearTarget'?: "clearTarget";
    '_compactionFailureLimit'?: "compactionFailureLimit";
    '_ledgerFraction'?: "ledgerFraction";
    '_recallTools'?: "recallTools";
    '_retentionSeconds'?: "retentionSeconds";
}
