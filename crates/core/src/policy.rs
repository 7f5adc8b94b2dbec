//! A session's policy: window, reserve, tokenizer, thresholds and compaction sizes.
//! Resolved once at session creation from the client's overrides and the server's
//! defaults, validated, and stored with the session.
use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::tokenize::{Counter, Tokenizer};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TokenizerKind {
    O200kBase,
    Cl100kBase,
    DeepseekV3,
    Heuristic,
}

impl TokenizerKind {
    /// The tokenizer of a policy name as settings and the command line spell it
    /// (`o200k_base`, `cl100k_base`, `deepseek_v3`, `heuristic`; `-` for `_` too).
    pub fn from_name(value: &str) -> Result<TokenizerKind, String> {
        match value.replace('-', "_").as_str() {
            "o200k_base" => Ok(TokenizerKind::O200kBase),
            "cl100k_base" => Ok(TokenizerKind::Cl100kBase),
            "deepseek_v3" => Ok(TokenizerKind::DeepseekV3),
            "heuristic" => Ok(TokenizerKind::Heuristic),
            _ => Err("expected o200k_base, cl100k_base, deepseek_v3 or heuristic".into()),
        }
    }

    /// The tokenizer this names (the heuristic one with `chars_per_token`).
    pub fn tokenizer(self, chars_per_token: f64) -> Tokenizer {
        match self {
            TokenizerKind::O200kBase => Tokenizer::O200kBase,
            TokenizerKind::Cl100kBase => Tokenizer::Cl100kBase,
            TokenizerKind::DeepseekV3 => Tokenizer::DeepseekV3,
            TokenizerKind::Heuristic => Tokenizer::Heuristic { chars_per_token },
        }
    }

    /// Whether the tokenizer belongs to one provider's models, so that a session counting
    /// with it reports usage counted by the same tokenizer: DeepSeek-V3's. The OpenAI
    /// encodings are also everyone's default approximation, for any provider.
    pub fn is_providers_own(self) -> bool {
        self == TokenizerKind::DeepseekV3
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SummaryPlacement {
    System,
    User,
    /// After the user message the request starts with when its turn's older steps are
    /// summarized; otherwise as `System`.
    AfterTask,
}

/// The effective policy of a session. Field meanings are documented on the proto's
/// `Policy`, which mirrors this struct.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Policy {
    pub context_window_tokens: i64,
    pub max_output_tokens: i64,
    pub tokenizer: TokenizerKind,
    pub heuristic_chars_per_token: f64,
    pub clear_threshold: f64,
    pub clear_target: f64,
    pub summarize_threshold: f64,
    pub hard_limit: f64,
    pub fresh_tail_messages: i64,
    pub fresh_tail_tokens: i64,
    pub tool_output_protect_tokens: i64,
    pub clear_min_savings_tokens: i64,
    pub eviction_threshold_tokens: i64,
    pub leaf_chunk_messages: i64,
    pub leaf_chunk_tokens: i64,
    pub leaf_target_tokens: i64,
    pub condense_fanin: i64,
    pub condensed_target_tokens: i64,
    pub summary_placement: SummaryPlacement,
    pub summarizer_profile: String,
    pub media_item_tokens: i64,
    pub compaction_failure_limit: i64,
    /// The task ledger's share of the window (0 turns its block off).
    pub ledger_fraction: f64,
    /// BuildMessages adds ctxd's recall tools (search and expand this session's
    /// history) to every request, and AnswerRecall answers their calls.
    pub recall_tools: bool,
    /// Seconds a session may go unchanged before the server deletes it (0: kept until
    /// DeleteSession).
    pub retention_seconds: i64,
}

/// Longest retention a policy may set: ten years.
pub const MAX_RETENTION_SECONDS: i64 = 10 * 366 * 86_400;

/// Largest share of the window the task ledger may take.
pub const MAX_LEDGER_FRACTION: f64 = 0.25;

impl Default for Policy {
    fn default() -> Policy {
        Policy {
            context_window_tokens: 128_000,
            max_output_tokens: 16_000,
            tokenizer: TokenizerKind::O200kBase,
            heuristic_chars_per_token: 4.0,
            clear_threshold: 0.60,
            clear_target: 0.20,
            summarize_threshold: 0.75,
            hard_limit: 1.0,
            fresh_tail_messages: 32,
            fresh_tail_tokens: 20_000,
            tool_output_protect_tokens: 40_000,
            clear_min_savings_tokens: 20_000,
            eviction_threshold_tokens: 20_000,
            leaf_chunk_messages: 8,
            leaf_chunk_tokens: 20_000,
            leaf_target_tokens: 1_200,
            condense_fanin: 4,
            condensed_target_tokens: 2_000,
            summary_placement: SummaryPlacement::AfterTask,
            summarizer_profile: "extractive".to_string(),
            media_item_tokens: 1_000,
            compaction_failure_limit: 3,
            ledger_fraction: 0.1,
            recall_tools: false,
            retention_seconds: 0,
        }
    }
}

/// The compaction sizes a policy applies: each configured size capped for the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Effective {
    /// Tool results above this are evicted at append (at most a twenty-fourth of the
    /// prompt room, at least 1); their previews never exceed it. Codex cuts every tool
    /// output to 10 KiB, about a hundredth of its window; one result taking a quarter of
    /// a small window made each compaction restart from a higher floor.
    pub eviction_threshold_tokens: i64,
    /// The fresh tail compaction leaves alone, in tokens (at most a quarter of the prompt
    /// room).
    pub fresh_tail_tokens: i64,
    /// Newest tool output kept whole when clearing (at most a quarter of the prompt room).
    pub tool_output_protect_tokens: i64,
    /// Least saving that justifies clearing while the request fits (at most a tenth of
    /// the window: every clearing costs the provider's cached prefix).
    pub clear_min_savings_tokens: i64,
    /// Target of a leaf summary (at most a twentieth of the prompt room, at least 32).
    pub leaf_target_tokens: i64,
    /// Target of a condensed summary (at most a twelfth of the prompt room, at least 48).
    pub condensed_target_tokens: i64,
}

/// What a client may override at session creation; `None` takes the default.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PolicyOverrides {
    pub context_window_tokens: Option<i64>,
    pub max_output_tokens: Option<i64>,
    pub tokenizer: Option<TokenizerKind>,
    pub heuristic_chars_per_token: Option<f64>,
    pub clear_threshold: Option<f64>,
    pub clear_target: Option<f64>,
    pub summarize_threshold: Option<f64>,
    pub hard_limit: Option<f64>,
    pub fresh_tail_messages: Option<i64>,
    pub fresh_tail_tokens: Option<i64>,
    pub tool_output_protect_tokens: Option<i64>,
    pub clear_min_savings_tokens: Option<i64>,
    pub eviction_threshold_tokens: Option<i64>,
    pub leaf_chunk_messages: Option<i64>,
    pub leaf_chunk_tokens: Option<i64>,
    pub leaf_target_tokens: Option<i64>,
    pub condense_fanin: Option<i64>,
    pub condensed_target_tokens: Option<i64>,
    pub summary_placement: Option<SummaryPlacement>,
    pub summarizer_profile: Option<String>,
    pub media_item_tokens: Option<i64>,
    pub compaction_failure_limit: Option<i64>,
    pub ledger_fraction: Option<f64>,
    pub recall_tools: Option<bool>,
    pub retention_seconds: Option<i64>,
}

/// Largest token figure a client may send anywhere (a window, a usage report, a tool or
/// media estimate): far above any model today, small enough that budget sums never
/// overflow.
pub const MAX_TOKENS: i64 = 100_000_000;
const MAX_WINDOW: i64 = MAX_TOKENS;

/// Bounds of the heuristic tokenizer's characters per token: no text is denser than
/// about one token per two characters' worth of bytes, and none sparser than 100.
pub const MIN_CHARS_PER_TOKEN: f64 = 0.5;
pub const MAX_CHARS_PER_TOKEN: f64 = 100.0;

/// A field that fails its check, and why.
type Check = Result<(), (&'static str, String)>;

impl Policy {
    /// Applies overrides on top of `defaults` and validates the result. When only one of
    /// the window and the output reserve is given, the other follows the 4:1 rule.
    pub fn resolve(defaults: &Policy, overrides: PolicyOverrides) -> Result<Policy, Error> {
        let mut policy = defaults.clone();
        match (overrides.context_window_tokens, overrides.max_output_tokens) {
            (Some(window), Some(output)) => {
                policy.context_window_tokens = window;
                policy.max_output_tokens = output;
            }
            (Some(window), None) => {
                policy.context_window_tokens = window;
                policy.max_output_tokens = window / 4;
            }
            (None, Some(output)) => {
                policy.max_output_tokens = output;
                policy.context_window_tokens = output.saturating_mul(4);
            }
            (None, None) => {}
        }
        macro_rules! take {
            ($($field:ident),*) => {
                $(if let Some(value) = overrides.$field { policy.$field = value; })*
            };
        }
        take!(
            tokenizer,
            heuristic_chars_per_token,
            clear_threshold,
            clear_target,
            summarize_threshold,
            hard_limit,
            fresh_tail_messages,
            fresh_tail_tokens,
            tool_output_protect_tokens,
            clear_min_savings_tokens,
            eviction_threshold_tokens,
            leaf_chunk_messages,
            leaf_chunk_tokens,
            leaf_target_tokens,
            condense_fanin,
            condensed_target_tokens,
            summary_placement,
            summarizer_profile,
            media_item_tokens,
            compaction_failure_limit,
            ledger_fraction,
            recall_tools,
            retention_seconds
        );
        // A lower clear_threshold without its own target keeps the same hysteresis shape.
        if overrides.clear_threshold.is_some()
            && overrides.clear_target.is_none()
            && policy.clear_target >= policy.clear_threshold
        {
            policy.clear_target = policy.clear_threshold * 0.75;
        }
        policy.validate("policy")?;
        Ok(policy)
    }

    /// Checks every field; `prefix` names where the policy came from in messages
    /// ("policy" for a request, "default_policy" for the server config).
    pub fn validate(&self, prefix: &str) -> Result<(), Error> {
        self.check_window()
            .and_then(|()| self.check_thresholds())
            .and_then(|()| self.check_sizes())
            .map_err(|(name, reason)| Error::invalid(format!("{prefix}.{name}"), reason))
    }

    /// The window, the output reserve and the heuristic's ratio.
    fn check_window(&self) -> Check {
        if self.context_window_tokens <= 0 || self.context_window_tokens > MAX_WINDOW {
            return Err((
                "context_window_tokens",
                format!(
                    "must be between 1 and {MAX_WINDOW}, got {}",
                    self.context_window_tokens
                ),
            ));
        }
        if self.max_output_tokens <= 0 || self.max_output_tokens >= self.context_window_tokens {
            return Err((
                "max_output_tokens",
                format!(
                    "must be positive and less than context_window_tokens ({}), got {}",
                    self.context_window_tokens, self.max_output_tokens
                ),
            ));
        }
        if !(MIN_CHARS_PER_TOKEN..=MAX_CHARS_PER_TOKEN).contains(&self.heuristic_chars_per_token) {
            return Err((
                "heuristic_chars_per_token",
                format!(
                    "must be between {MIN_CHARS_PER_TOKEN} and {MAX_CHARS_PER_TOKEN}, got {}",
                    self.heuristic_chars_per_token
                ),
            ));
        }
        Ok(())
    }

    /// The thresholds, as fractions of the window and in their order.
    fn check_thresholds(&self) -> Check {
        for (name, value) in [
            ("clear_threshold", self.clear_threshold),
            ("summarize_threshold", self.summarize_threshold),
            ("hard_limit", self.hard_limit),
        ] {
            if !(value > 0.0 && value <= 1.0) {
                return Err((
                    name,
                    format!("must be a fraction of the window in (0, 1], got {value}"),
                ));
            }
        }
        if !(self.clear_target > 0.0 && self.clear_target < self.clear_threshold) {
            return Err((
                "clear_target",
                format!(
                    "must be above 0 and below clear_threshold ({}), got {}",
                    self.clear_threshold, self.clear_target
                ),
            ));
        }
        // In tokens too: rounding down must not merge the target with the threshold
        // (clearing's hysteresis needs the gap).
        if self.clear_target_tokens() >= self.clear_threshold_tokens() {
            return Err((
                "clear_target",
                format!(
                    "is {} tokens of this window, not below clear_threshold's {} tokens; \
                     lower it or use a larger window",
                    self.clear_target_tokens(),
                    self.clear_threshold_tokens()
                ),
            ));
        }
        if self.summarize_threshold < self.clear_threshold {
            return Err((
                "summarize_threshold",
                format!(
                    "must be at least clear_threshold ({}), got {}",
                    self.clear_threshold, self.summarize_threshold
                ),
            ));
        }
        if self.hard_limit < self.summarize_threshold {
            return Err((
                "hard_limit",
                format!(
                    "must be at least summarize_threshold ({}), got {}",
                    self.summarize_threshold, self.hard_limit
                ),
            ));
        }
        if self.available_tokens() <= 0 {
            return Err((
                "max_output_tokens",
                format!(
                    "leaves no room for the prompt: hard_limit x context_window_tokens is {} tokens",
                    self.limit_tokens()
                ),
            ));
        }
        Ok(())
    }

    /// The sizes and counts, the ledger's share and the summarizer profile.
    fn check_sizes(&self) -> Check {
        for (name, value, min) in [
            ("fresh_tail_messages", self.fresh_tail_messages, 0),
            ("fresh_tail_tokens", self.fresh_tail_tokens, 0),
            (
                "tool_output_protect_tokens",
                self.tool_output_protect_tokens,
                0,
            ),
            ("clear_min_savings_tokens", self.clear_min_savings_tokens, 0),
            (
                "eviction_threshold_tokens",
                self.eviction_threshold_tokens,
                1,
            ),
            ("leaf_chunk_messages", self.leaf_chunk_messages, 1),
            ("leaf_chunk_tokens", self.leaf_chunk_tokens, 1),
            ("leaf_target_tokens", self.leaf_target_tokens, 1),
            ("condense_fanin", self.condense_fanin, 2),
            ("condensed_target_tokens", self.condensed_target_tokens, 1),
            ("media_item_tokens", self.media_item_tokens, 0),
            ("compaction_failure_limit", self.compaction_failure_limit, 1),
        ] {
            if value < min || value > MAX_WINDOW {
                return Err((
                    name,
                    format!("must be between {min} and {MAX_WINDOW}, got {value}"),
                ));
            }
        }
        if !(0.0..=MAX_LEDGER_FRACTION).contains(&self.ledger_fraction) {
            return Err((
                "ledger_fraction",
                format!(
                    "must be a share of the window between 0 and {MAX_LEDGER_FRACTION}, got {}",
                    self.ledger_fraction
                ),
            ));
        }
        if !(0..=MAX_RETENTION_SECONDS).contains(&self.retention_seconds) {
            return Err((
                "retention_seconds",
                format!(
                    "must be between 0 (off) and {MAX_RETENTION_SECONDS}, got {}",
                    self.retention_seconds
                ),
            ));
        }
        if self.summarizer_profile.trim().is_empty() {
            return Err(("summarizer_profile", "must not be empty".to_string()));
        }
        Ok(())
    }

    /// A fraction of the window in tokens, rounded down: the one way every threshold
    /// of the policy is turned into tokens.
    fn window_tokens(&self, fraction: f64) -> i64 {
        (fraction * self.context_window_tokens as f64).floor() as i64
    }

    /// Past this many tokens old tool results are cleared: clear_threshold x window.
    pub fn clear_threshold_tokens(&self) -> i64 {
        self.window_tokens(self.clear_threshold)
    }

    /// What clearing and summarization bring a request down to (their low-water mark):
    /// clear_target x window.
    pub fn clear_target_tokens(&self) -> i64 {
        self.window_tokens(self.clear_target)
    }

    /// Past this many tokens the oldest turns are summarized: summarize_threshold x
    /// window.
    pub fn summarize_threshold_tokens(&self) -> i64 {
        self.window_tokens(self.summarize_threshold)
    }

    /// The most a request may use: hard_limit x window.
    pub fn limit_tokens(&self) -> i64 {
        self.window_tokens(self.hard_limit)
    }

    /// The task ledger's cap: ledger_fraction x window, at most a quarter of the
    /// prompt room.
    pub fn ledger_cap_tokens(&self) -> i64 {
        self.window_tokens(self.ledger_fraction)
            .min(self.available_tokens() / 4)
            .max(0)
    }

    /// Room for the prompt: the limit minus the output reserve.
    pub fn available_tokens(&self) -> i64 {
        self.limit_tokens() - self.max_output_tokens
    }

    /// The sizes in force: the configured ones, capped for the window so that a small
    /// window still evicts, clears, summarizes and keeps room besides its fresh tail.
    /// Every compaction layer reads its size here, and GetSession reports these, so
    /// what is reported and what is applied cannot disagree.
    pub fn effective(&self) -> Effective {
        let room = self.available_tokens();
        Effective {
            eviction_threshold_tokens: self.eviction_threshold_tokens.min(room / 24).max(1),
            fresh_tail_tokens: self.fresh_tail_tokens.min(room / 4),
            tool_output_protect_tokens: self.tool_output_protect_tokens.min(room / 4),
            clear_min_savings_tokens: self
                .clear_min_savings_tokens
                .min(self.context_window_tokens / 10),
            leaf_target_tokens: self.leaf_target_tokens.min(room / 20).max(32),
            condensed_target_tokens: self.condensed_target_tokens.min(room / 12).max(48),
        }
    }

    /// This policy with the sizes in force ([`Policy::effective`]) in place of the
    /// requested ones.
    pub fn in_force(&self) -> Policy {
        let effective = self.effective();
        Policy {
            eviction_threshold_tokens: effective.eviction_threshold_tokens,
            fresh_tail_tokens: effective.fresh_tail_tokens,
            tool_output_protect_tokens: effective.tool_output_protect_tokens,
            clear_min_savings_tokens: effective.clear_min_savings_tokens,
            leaf_target_tokens: effective.leaf_target_tokens,
            condensed_target_tokens: effective.condensed_target_tokens,
            ..self.clone()
        }
    }

    pub fn counter(&self) -> Counter {
        let tokenizer = self.tokenizer.tokenizer(self.heuristic_chars_per_token);
        Counter::new(tokenizer, self.media_item_tokens)
    }
}

#[cfg(test)]
mod tests;
