//! A session and its summaries as every layer above the store sees them: the session's
//! counters, view, anchor to the provider's count and estimate statistics, and each
//! stored summary. The store maps its rows to these in one place.
use std::collections::BTreeMap;

use crate::budget::Anchor;
use crate::summarize::Retention;

/// A session: its identity, policy and metadata, and the aggregates kept with every
/// change (counts, the view, the last build, the anchor, estimate accuracy, usage).
#[derive(Debug, Clone, Default)]
pub struct Session {
    pub id: i64,
    pub tenant_id: i64,
    pub external_id: String,
    /// The policy as resolved at creation (it never changes).
    pub policy: crate::policy::Policy,
    pub metadata: BTreeMap<String, String>,
    pub version: i64,
    pub message_count: i64,
    pub turn_count: i64,
    pub log_tokens: i64,
    /// Bytes of text in the log (`Message::counted_bytes` of every message).
    pub content_bytes: i64,
    pub view_tokens: i64,
    pub last_turn_tokens: i64,
    pub view_first_seq: i64,
    pub view_epoch: i64,
    /// The anchor of the session's last usage report, if it has reported.
    pub anchor: Option<Anchor>,
    pub est_samples: i64,
    pub est_abs_err_sum: f64,
    pub est_max_abs_err: f64,
    pub est_last_err: f64,
    pub usage_input_tokens: i64,
    pub usage_output_tokens: i64,
    pub usage_cached_tokens: i64,
    pub cleared_messages: i64,
    pub evicted_messages: i64,
    /// Builds recorded, and the last one.
    pub builds: Builds,
    pub summary_tokens: i64,
    pub summaries_written: i64,
    pub compaction_failures: i32,
    pub event_seq: i64,
    /// The budget status last announced.
    pub budget_status: crate::budget::Status,
    /// After a revert, automatic compaction waits until `log_tokens` reaches this (0:
    /// no wait).
    pub compaction_resume_log_tokens: i64,
    /// When FinishSession ended the session (it takes no more appends); None while open.
    pub finished_at: Option<chrono::DateTime<chrono::Utc>>,
    /// The source's session id as it was named when this session was forked from it
    /// (None: not a fork).
    pub forked_from: Option<String>,
    /// Seqs 1..base_seq are inherited from the ancestors (0: none; not a fork, or a fork
    /// at seq 0).
    pub base_seq: i64,
    /// Bytes of text of the inherited seqs (part of `content_bytes`).
    pub base_bytes: i64,
    pub created_at: chrono::DateTime<chrono::Utc>,
    pub updated_at: chrono::DateTime<chrono::Utc>,
}

impl Session {
    /// Whether automatic compaction waits after a revert (until the log has grown, or
    /// a manual Compact).
    pub fn compaction_held(&self) -> bool {
        self.log_tokens < self.compaction_resume_log_tokens
    }

    /// Whether the session may have active summaries: it wrote some, or holds some (a
    /// fork starts with its source's).
    pub fn may_have_summaries(&self) -> bool {
        self.summaries_written > 0 || self.summary_tokens > 0
    }

    /// Whether some of the log is read from ancestors (seqs 1..base_seq).
    pub fn inherits(&self) -> bool {
        self.base_seq > 0
    }

    /// The anchor of the session's last usage report, if it has reported.
    pub fn anchor(&self) -> Option<Anchor> {
        self.anchor
    }
}

/// A stored summary: the span of the log it covers, its text and size, its level, and
/// what it kept of the span's facts.
#[derive(Debug, Clone)]
pub struct Summary {
    pub id: i64,
    pub depth: i32,
    pub first_seq: i64,
    pub last_seq: i64,
    pub content: String,
    pub token_count: i32,
    pub level: i16,
    pub source_tokens: i64,
    pub facts: i32,
    pub facts_lost: i32,
    pub retention: Retention,
}

/// A session's builds: how many, how many extended the previous one's prefix (its
/// provider's prompt cache survived), and what the last one sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Builds {
    pub count: i64,
    pub extending: i64,
    pub last: BuildRecord,
}

/// What a build sent, recorded with it: the seqs of the history, each region's tokens,
/// the estimate of the whole request, and the view epoch it read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BuildRecord {
    pub first_seq: i64,
    pub last_seq: i64,
    pub system_tokens: i64,
    pub tool_tokens: i64,
    pub history_tokens: i64,
    pub estimate_tokens: i64,
    pub view_epoch: i64,
}
