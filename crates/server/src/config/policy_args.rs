//! The session policy defaults as flags (`--policy-*`), each `None` when unset.
use clap::Args;
use serde::Serialize;

use crate::policy::{SummaryPlacement, TokenizerKind};

/// Defaults for sessions that do not set a policy field.
#[derive(Debug, Clone, Default, Args, Serialize)]
#[command(next_help_heading = "Session policy defaults")]
pub struct PolicyArgs {
    /// Context window in tokens [default: 128000].
    #[arg(
        long = "policy-context-window-tokens",
        env = "CTXD_POLICY_CONTEXT_WINDOW_TOKENS"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_window_tokens: Option<i64>,
    /// Tokens reserved for the reply [default: 16000].
    #[arg(
        long = "policy-max-output-tokens",
        env = "CTXD_POLICY_MAX_OUTPUT_TOKENS"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<i64>,
    /// Tokenizer: o200k_base, cl100k_base, deepseek_v3 or heuristic [default: o200k_base].
    #[arg(long = "policy-tokenizer", env = "CTXD_POLICY_TOKENIZER", value_parser = TokenizerKind::from_name)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokenizer: Option<TokenizerKind>,
    /// Characters per token for the heuristic tokenizer [default: 4.0].
    #[arg(
        long = "policy-heuristic-chars-per-token",
        env = "CTXD_POLICY_HEURISTIC_CHARS_PER_TOKEN"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub heuristic_chars_per_token: Option<f64>,
    /// Fraction of the window past which old tool results are cleared [default: 0.60].
    #[arg(long = "policy-clear-threshold", env = "CTXD_POLICY_CLEAR_THRESHOLD")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clear_threshold: Option<f64>,
    /// Fraction of the window compaction brings a request down to [default: 0.20].
    #[arg(long = "policy-clear-target", env = "CTXD_POLICY_CLEAR_TARGET")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clear_target: Option<f64>,
    /// Fraction of the window past which summarization is due [default: 0.75].
    #[arg(
        long = "policy-summarize-threshold",
        env = "CTXD_POLICY_SUMMARIZE_THRESHOLD"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summarize_threshold: Option<f64>,
    /// Fraction of the window a request may never exceed [default: 1.0].
    #[arg(long = "policy-hard-limit", env = "CTXD_POLICY_HARD_LIMIT")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hard_limit: Option<f64>,
    /// Newest messages protected from compaction, by count [default: 32].
    #[arg(
        long = "policy-fresh-tail-messages",
        env = "CTXD_POLICY_FRESH_TAIL_MESSAGES"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fresh_tail_messages: Option<i64>,
    /// Newest messages protected from compaction, by tokens [default: 20000].
    #[arg(
        long = "policy-fresh-tail-tokens",
        env = "CTXD_POLICY_FRESH_TAIL_TOKENS"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fresh_tail_tokens: Option<i64>,
    /// Newest tool output kept whole when clearing, in tokens [default: 40000].
    #[arg(
        long = "policy-tool-output-protect-tokens",
        env = "CTXD_POLICY_TOOL_OUTPUT_PROTECT_TOKENS"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_output_protect_tokens: Option<i64>,
    /// Clearing happens only when it saves at least this many tokens [default: 20000].
    #[arg(
        long = "policy-clear-min-savings-tokens",
        env = "CTXD_POLICY_CLEAR_MIN_SAVINGS_TOKENS"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clear_min_savings_tokens: Option<i64>,
    /// Tool results above this size are evicted to a preview [default: 20000].
    #[arg(
        long = "policy-eviction-threshold-tokens",
        env = "CTXD_POLICY_EVICTION_THRESHOLD_TOKENS"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eviction_threshold_tokens: Option<i64>,
    /// Leaf summary chunk size in messages [default: 8].
    #[arg(
        long = "policy-leaf-chunk-messages",
        env = "CTXD_POLICY_LEAF_CHUNK_MESSAGES"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leaf_chunk_messages: Option<i64>,
    /// Leaf summary chunk size in tokens [default: 20000].
    #[arg(
        long = "policy-leaf-chunk-tokens",
        env = "CTXD_POLICY_LEAF_CHUNK_TOKENS"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leaf_chunk_tokens: Option<i64>,
    /// Target size of a leaf summary [default: 1200].
    #[arg(
        long = "policy-leaf-target-tokens",
        env = "CTXD_POLICY_LEAF_TARGET_TOKENS"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leaf_target_tokens: Option<i64>,
    /// Same-depth summaries condensed together [default: 4].
    #[arg(long = "policy-condense-fanin", env = "CTXD_POLICY_CONDENSE_FANIN")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub condense_fanin: Option<i64>,
    /// Target size of a condensed summary [default: 2000].
    #[arg(
        long = "policy-condensed-target-tokens",
        env = "CTXD_POLICY_CONDENSED_TARGET_TOKENS"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub condensed_target_tokens: Option<i64>,
    /// Where summaries go: system, user or after_task [default: after_task].
    #[arg(long = "policy-summary-placement", env = "CTXD_POLICY_SUMMARY_PLACEMENT", value_parser = parse_placement)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary_placement: Option<SummaryPlacement>,
    /// Summarizer profile [default: extractive].
    #[arg(
        long = "policy-summarizer-profile",
        env = "CTXD_POLICY_SUMMARIZER_PROFILE"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summarizer_profile: Option<String>,
    /// Flat token cost of a media item without an estimate [default: 1000].
    #[arg(
        long = "policy-media-item-tokens",
        env = "CTXD_POLICY_MEDIA_ITEM_TOKENS"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub media_item_tokens: Option<i64>,
    /// Consecutive failed automatic compactions before it pauses [default: 3].
    #[arg(
        long = "policy-compaction-failure-limit",
        env = "CTXD_POLICY_COMPACTION_FAILURE_LIMIT"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compaction_failure_limit: Option<i64>,
    /// Share of the window the task ledger's block may take, 0 to 0.25 [default: 0.1].
    #[arg(long = "policy-ledger-fraction", env = "CTXD_POLICY_LEDGER_FRACTION")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ledger_fraction: Option<f64>,
    /// Add ctxd's recall tools (search and expand the session's history) to every
    /// request, and answer their calls (AnswerRecall) [default: false].
    #[arg(long = "policy-recall-tools", env = "CTXD_POLICY_RECALL_TOOLS")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recall_tools: Option<bool>,
    /// Seconds a session may go unchanged (no append, compaction or other write;
    /// BuildMessages alone does not count) before the server deletes it, announcing its SessionDeleted event; 0 keeps sessions until
    /// DeleteSession [default: 0].
    #[arg(
        long = "policy-retention-seconds",
        env = "CTXD_POLICY_RETENTION_SECONDS"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retention_seconds: Option<i64>,
}

fn parse_placement(value: &str) -> Result<SummaryPlacement, String> {
    match value {
        "system" => Ok(SummaryPlacement::System),
        "user" => Ok(SummaryPlacement::User),
        "after_task" => Ok(SummaryPlacement::AfterTask),
        _ => Err("expected system, user or after_task".into()),
    }
}
