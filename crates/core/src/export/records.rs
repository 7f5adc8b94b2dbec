//! The records of the file, as serde reads and writes them: each struct refuses fields it
//! does not know, so a file of a newer layout is refused rather than half read.
use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::budget::{Anchor, Status};
use crate::ledger::{Entry, Kind, Run, TodoStatus};
use crate::message::{Message, Part, Role, StoredMessage, ToolCall, ViewState};
use crate::policy::Policy;
use crate::session::{BuildRecord, Session};
use crate::summarize::Retention;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "record", rename_all = "snake_case")]
pub(super) enum Record {
    Header(Header),
    Session(Box<SessionRecord>),
    Message(MessageRecord),
    Summary(SummaryRecord),
    Ledger(LedgerRecord),
    End(End),
}

impl Record {
    pub(super) fn name(&self) -> &'static str {
        match self {
            Record::Header(_) => "header",
            Record::Session(_) => "session",
            Record::Message(_) => "message",
            Record::Summary(_) => "summary",
            Record::Ledger(_) => "ledger",
            Record::End(_) => "end",
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Header {
    pub format: String,
    pub version: u32,
    pub exported_at: DateTime<Utc>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct End {
    /// Records before this one.
    pub records: u64,
    /// SHA-256 of every byte before this record, lowercase hex.
    pub sha256: String,
}

/// The session: what identifies it and the state its builds read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionRecord {
    pub id: String,
    pub policy: Policy,
    pub metadata: BTreeMap<String, String>,
    /// The id of the session it was forked from, as named then (informational: the
    /// imported session reads nothing from it).
    pub forked_from: Option<String>,
    pub created_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
    pub state: State,
}

/// The session row's totals and the bookkeeping its builds, estimates and compaction
/// read; the totals are checked against the messages and summaries on import.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct State {
    /// Grows with every change (AppendTurn's expected_version compares with it).
    pub version: i64,
    pub message_count: i64,
    pub turn_count: i64,
    pub log_tokens: i64,
    pub content_bytes: i64,
    pub view_tokens: i64,
    pub last_turn_tokens: i64,
    pub view_first_seq: i64,
    pub view_epoch: i64,
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
    pub builds: i64,
    pub extending_builds: i64,
    pub last_build: BuildRecord,
    pub summary_tokens: i64,
    pub summaries_written: i64,
    pub compaction_failures: i32,
    pub budget_status: Status,
    pub compaction_resume_log_tokens: i64,
}

impl SessionRecord {
    pub fn from_session(session: &Session) -> SessionRecord {
        SessionRecord {
            id: session.external_id.clone(),
            policy: session.policy.clone(),
            metadata: session.metadata.clone(),
            forked_from: session.forked_from.clone(),
            created_at: session.created_at,
            finished_at: session.finished_at,
            state: State::of(session),
        }
    }
}

impl State {
    fn of(s: &Session) -> State {
        State {
            version: s.version,
            message_count: s.message_count,
            turn_count: s.turn_count,
            log_tokens: s.log_tokens,
            content_bytes: s.content_bytes,
            view_tokens: s.view_tokens,
            last_turn_tokens: s.last_turn_tokens,
            view_first_seq: s.view_first_seq,
            view_epoch: s.view_epoch,
            anchor: s.anchor,
            est_samples: s.est_samples,
            est_abs_err_sum: s.est_abs_err_sum,
            est_max_abs_err: s.est_max_abs_err,
            est_last_err: s.est_last_err,
            usage_input_tokens: s.usage_input_tokens,
            usage_output_tokens: s.usage_output_tokens,
            usage_cached_tokens: s.usage_cached_tokens,
            cleared_messages: s.cleared_messages,
            evicted_messages: s.evicted_messages,
            builds: s.builds.count,
            extending_builds: s.builds.extending,
            last_build: s.builds.last,
            summary_tokens: s.summary_tokens,
            summaries_written: s.summaries_written,
            compaction_failures: s.compaction_failures,
            budget_status: s.budget_status,
            compaction_resume_log_tokens: s.compaction_resume_log_tokens,
        }
    }
}

fn is_false(value: &bool) -> bool {
    !value
}

/// One message of the log, with its view state in the exported session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessageRecord {
    pub seq: i64,
    pub turn: i64,
    /// system, user, assistant or tool.
    pub role: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub content: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<Part>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reasoning: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tool_call_id: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub pinned: bool,
    pub tokens: i64,
    /// full, cleared, evicted or summarized.
    pub view_state: String,
    pub view_tokens: i64,
    pub created_at: DateTime<Utc>,
}

const ROLES: [Role; 4] = [Role::System, Role::User, Role::Assistant, Role::Tool];
const VIEW_STATES: [(ViewState, &str); 4] = [
    (ViewState::Full, "full"),
    (ViewState::Cleared, "cleared"),
    (ViewState::Evicted, "evicted"),
    (ViewState::Summarized, "summarized"),
];

impl MessageRecord {
    pub fn from_stored(stored: &StoredMessage) -> MessageRecord {
        let m = &stored.message;
        MessageRecord {
            seq: stored.seq,
            turn: stored.turn,
            role: m.role.as_str().to_string(),
            content: m.content.clone(),
            parts: m.parts.clone(),
            reasoning: m.reasoning.clone(),
            tool_calls: m.tool_calls.clone(),
            tool_call_id: m.tool_call_id.clone(),
            name: m.name.clone(),
            metadata: m.metadata.clone(),
            pinned: m.pinned,
            tokens: stored.token_count,
            view_state: VIEW_STATES
                .iter()
                .find(|(state, _)| *state == stored.view_state)
                .map_or("full", |(_, name)| name)
                .to_string(),
            view_tokens: stored.view_tokens,
            created_at: stored.created_at,
        }
    }

    /// The stored message, or the field that names no role or view state.
    pub fn to_stored(&self) -> Result<StoredMessage, &'static str> {
        let role = ROLES
            .into_iter()
            .find(|role| role.as_str() == self.role)
            .ok_or("role")?;
        let (view_state, _) = VIEW_STATES
            .into_iter()
            .find(|(_, name)| *name == self.view_state)
            .ok_or("view_state")?;
        Ok(StoredMessage {
            seq: self.seq,
            turn: self.turn,
            token_count: self.tokens,
            view_tokens: self.view_tokens,
            view_state,
            created_at: self.created_at,
            message: Message {
                role,
                content: self.content.clone(),
                parts: self.parts.clone(),
                reasoning: self.reasoning.clone(),
                tool_calls: self.tool_calls.clone(),
                tool_call_id: self.tool_call_id.clone(),
                name: self.name.clone(),
                metadata: self.metadata.clone(),
                pinned: self.pinned,
            },
        })
    }
}

/// A summary the session sees. `id` and `parent` are the file's own numbers (the
/// exporting server's ids); the importing server gives it ids of its own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SummaryRecord {
    pub id: i64,
    /// The condensed summary covering it in this session (none: active, or reverted).
    pub parent: Option<i64>,
    pub depth: i32,
    pub first_seq: i64,
    pub last_seq: i64,
    pub content: String,
    pub tokens: i32,
    /// 1 normal, 2 aggressive, 3 truncation.
    pub level: i16,
    pub source_tokens: i64,
    pub facts: i32,
    pub facts_lost: i32,
    pub retention: Retention,
    /// When a revert took it out of the view (none: in the view or under one that is).
    pub reverted_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
}

/// A task ledger entry, in order of creation (the kind and a todo's status by the names
/// the ledger's own types serialize to: `file`, `command`, …; `pending`, `in_progress`,
/// `done`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LedgerRecord {
    pub kind: Kind,
    pub key: String,
    pub text: String,
    pub seqs: Vec<i64>,
    /// A command's runs whose result showed an exit status.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<Run>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<TodoStatus>,
}

impl LedgerRecord {
    pub fn from_entry(entry: &Entry) -> LedgerRecord {
        LedgerRecord {
            kind: entry.kind,
            key: entry.key.clone(),
            text: entry.text.clone(),
            seqs: entry.seqs.clone(),
            runs: entry.runs.clone(),
            status: entry.status,
        }
    }

    /// The entry, at `position` in the ledger.
    pub fn to_entry(&self, position: i64) -> Entry {
        Entry {
            kind: self.kind,
            key: self.key.clone(),
            text: self.text.clone(),
            seqs: self.seqs.clone(),
            runs: self.runs.clone(),
            status: self.status,
            position,
        }
    }
}
