//! What an event says, and where a stream stands: plain types, used by the store (which
//! writes and reads events) and the engine (which decides on them), with nothing of the
//! hub or the streams.
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result, quoted};

/// The proto's EventKind numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i16)]
pub enum EventKind {
    CompactionStarted = 1,
    CompactionCompleted = 2,
    CompactionFailed = 3,
    ToolResultsCleared = 4,
    OutputEvicted = 5,
    BudgetThresholdCrossed = 6,
    SessionDeleted = 7,
    CompactionReverted = 8,
    SessionFinished = 9,
    SessionForked = 10,
    RecallAnswered = 11,
}

/// The proto's CompactionKind numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactionKind {
    Summarize = 1,
    Fallback = 2,
    Emergency = 3,
}

/// What an event says, stored as JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventDetail {
    CompactionStarted {
        compaction: CompactionKind,
        job_id: i64,
        attempt: i32,
    },
    CompactionCompleted {
        compaction: CompactionKind,
        level: i32,
        tokens_before: i64,
        tokens_after: i64,
        messages_before: i64,
        messages_after: i64,
        first_seq: i64,
        last_seq: i64,
        summary_id: i64,
        summaries_written: i32,
        duration_ms: i64,
        job_id: i64,
    },
    CompactionFailed {
        compaction: CompactionKind,
        error: String,
        job_id: i64,
        attempt: i32,
        will_retry: bool,
    },
    ToolResultsCleared {
        seqs: Vec<i64>,
        tokens_before: i64,
        tokens_after: i64,
    },
    OutputEvicted {
        seq: i64,
        tool_name: String,
        tokens: i64,
        preview_tokens: i64,
    },
    BudgetThresholdCrossed {
        previous_status: i32,
        status: i32,
        used_tokens: i64,
        context_window: i64,
    },
    SessionDeleted,
    /// RevertCompaction undid these compactions (their events' session_seqs, oldest
    /// first): the view is as it was before the oldest.
    CompactionReverted {
        event_seqs: Vec<i64>,
        summary_ids: Vec<i64>,
        restored_seqs: Vec<i64>,
        view_first_seq: i64,
        tokens_before: i64,
        tokens_after: i64,
        resume_at_log_tokens: i64,
    },
    /// A subagent session was finished (FinishSession); written on the child and, while
    /// it exists, on its parent, in the same transaction.
    SessionFinished {
        child_session_id: String,
        /// Empty when the child has no parent (any more).
        parent_session_id: String,
        parent_tool_call_id: String,
        /// The seq of the tool result the final answer became in the parent; 0 when
        /// it was not appended.
        result_seq: i64,
    },
    /// A fork was made: on the source's stream and as the fork's first event.
    SessionForked {
        source_session_id: String,
        fork_session_id: String,
        at_seq: i64,
    },
    /// ctxd answered a model's call to a recall tool: the answer is the tool result at
    /// `seq`. `round` is the provider endpoint's round within one agent request (1, 2,
    /// ...), 0 when a client asked (AnswerRecall).
    RecallAnswered {
        seq: i64,
        tool_call_id: String,
        tool: String,
        tokens: i64,
        error: bool,
        round: i32,
    },
}

impl EventKind {
    /// The kind an event row's number stands for.
    pub fn from_i16(number: i16) -> Option<EventKind> {
        [
            EventKind::CompactionStarted,
            EventKind::CompactionCompleted,
            EventKind::CompactionFailed,
            EventKind::ToolResultsCleared,
            EventKind::OutputEvicted,
            EventKind::BudgetThresholdCrossed,
            EventKind::SessionDeleted,
            EventKind::CompactionReverted,
            EventKind::SessionFinished,
            EventKind::SessionForked,
            EventKind::RecallAnswered,
        ]
        .into_iter()
        .find(|kind| *kind as i16 == number)
    }
}

impl EventDetail {
    pub fn kind(&self) -> EventKind {
        match self {
            EventDetail::CompactionStarted { .. } => EventKind::CompactionStarted,
            EventDetail::CompactionCompleted { .. } => EventKind::CompactionCompleted,
            EventDetail::CompactionFailed { .. } => EventKind::CompactionFailed,
            EventDetail::ToolResultsCleared { .. } => EventKind::ToolResultsCleared,
            EventDetail::OutputEvicted { .. } => EventKind::OutputEvicted,
            EventDetail::BudgetThresholdCrossed { .. } => EventKind::BudgetThresholdCrossed,
            EventDetail::SessionDeleted => EventKind::SessionDeleted,
            EventDetail::CompactionReverted { .. } => EventKind::CompactionReverted,
            EventDetail::SessionFinished { .. } => EventKind::SessionFinished,
            EventDetail::SessionForked { .. } => EventKind::SessionForked,
            EventDetail::RecallAnswered { .. } => EventKind::RecallAnswered,
        }
    }
}

/// A place in the (tx, id) order: the writing transaction's id, then the event id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Position {
    pub tx: i64,
    pub id: i64,
}

impl Position {
    pub const START: Position = Position { tx: 0, id: 0 };
}

/// Where a stream stands: a session stream counts the session's seqs, a tenant stream
/// positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cursor {
    Session(i64),
    Tenant(Position),
}

impl Cursor {
    /// The cursor a client passes back: `<seq>` for a session stream, `<tx>.<id>` for a
    /// tenant stream.
    pub fn encode(&self) -> String {
        match self {
            Cursor::Session(seq) => seq.to_string(),
            Cursor::Tenant(position) => format!("{}.{}", position.tx, position.id),
        }
    }

    /// Parses `after` for a session stream (`session` true) or a tenant stream.
    pub fn parse(after: &str, session: bool) -> Result<Cursor> {
        let number = |text: &str| text.parse::<i64>().ok().filter(|n| *n >= 0);
        match (session, after.split_once('.')) {
            (true, None) => number(after).map(Cursor::Session).ok_or_else(|| {
                Error::invalid(
                    "after",
                    format!("{} is not a cursor of a session's stream (an event's `cursor`, e.g. \"12\")", quoted(after)),
                )
            }),
            (false, Some((tx, id))) => match (number(tx), number(id)) {
                (Some(tx), Some(id)) => Ok(Cursor::Tenant(Position { tx, id })),
                _ => Err(Error::invalid(
                    "after",
                    format!("{} is not a cursor of a tenant stream (an event's `cursor`)", quoted(after)),
                )),
            },
            (true, Some(_)) => Err(Error::invalid(
                "after",
                "is a tenant stream's cursor; a session stream resumes from a cursor it delivered",
            )),
            (false, None) => Err(Error::invalid(
                "after",
                "is a session stream's cursor; a tenant stream (no session_id) resumes from a cursor it delivered",
            )),
        }
    }
}

/// The hub's settings.
#[derive(Debug, Clone)]
pub struct EventsConfig {
    /// How long events are kept.
    pub retention: Duration,
    /// How often the hub looks for events without a notification (a listener that was
    /// reconnecting misses them).
    pub poll_interval: Duration,
    /// Events the broadcast holds for a slow subscriber before it must re-read the table.
    pub buffer: usize,
}

impl Default for EventsConfig {
    fn default() -> EventsConfig {
        EventsConfig {
            retention: Duration::from_secs(7 * 86_400),
            poll_interval: Duration::from_secs(1),
            buffer: 4096,
        }
    }
}

/// An event as written: where it stands in the session's and the tenant's order, and
/// what it says.
#[derive(Debug, Clone)]
pub struct Event {
    pub id: i64,
    pub tenant_id: i64,
    pub session_id: i64,
    pub external_id: String,
    pub session_seq: i64,
    pub tx: i64,
    pub kind: i16,
    pub session_version: i64,
    pub detail: EventDetail,
    pub created_at: chrono::DateTime<chrono::Utc>,
}

impl Event {
    pub fn position(&self) -> Position {
        Position {
            tx: self.tx,
            id: self.id,
        }
    }
}
