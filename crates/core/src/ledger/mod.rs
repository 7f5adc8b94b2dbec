//! The task ledger: typed per-session state kept outside the compactable history. ctxd
//! extracts files, commands and errors from the traffic itself (`extract`); the client
//! sets todos and notes (`todos`). The ledger is rendered with the summaries, within a
//! token cap, showing only what the view no longer shows verbatim (`render`), so the
//! block changes when compaction moves the view (which restarts the prompt prefix
//! anyway) or when the client changes its todos or notes — never on a plain append.
pub mod extract;
pub mod render;
pub mod todos;

#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

/// What an entry records. Numbers as stored and as the proto's `LedgerEntryKind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A file the agent read, wrote or searched (normalized path).
    File = 1,
    /// A command the agent ran (its first line), with the exit status of its runs.
    Command = 2,
    /// An error seen in a tool result (the last line of a traceback, an error line).
    Error = 3,
    /// A client's todo, with its status.
    Todo = 4,
    /// A client's free-form note.
    Note = 5,
}

impl Kind {
    pub const ALL: [Kind; 5] = [
        Kind::File,
        Kind::Command,
        Kind::Error,
        Kind::Todo,
        Kind::Note,
    ];

    pub fn from_i16(value: i16) -> Option<Kind> {
        Kind::ALL.into_iter().find(|kind| *kind as i16 == value)
    }

    /// Kept by ctxd from the traffic (as opposed to set by the client).
    pub fn is_derived(self) -> bool {
        matches!(self, Kind::File | Kind::Command | Kind::Error)
    }
}

/// A todo's status. Numbers as stored and as the proto's `TodoStatus`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    Pending = 1,
    InProgress = 2,
    /// Terminal: a done todo stays done.
    Done = 3,
}

impl TodoStatus {
    pub fn from_i16(value: i16) -> Option<TodoStatus> {
        [
            TodoStatus::Pending,
            TodoStatus::InProgress,
            TodoStatus::Done,
        ]
        .into_iter()
        .find(|status| *status as i16 == value)
    }

    pub fn label(self) -> &'static str {
        match self {
            TodoStatus::Pending => "pending",
            TodoStatus::InProgress => "in progress",
            TodoStatus::Done => "done",
        }
    }
}

/// One run of a command: the seq of the tool result that showed its exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Run {
    pub result_seq: i64,
    pub exit_code: i32,
}

/// One ledger entry as stored: unique per session by (kind, key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub kind: Kind,
    /// Identity within the kind: the normalized path, the command's first line, the
    /// error line, the client's todo or note id.
    pub key: String,
    /// What is shown.
    pub text: String,
    /// The seqs it came from, ascending: the first one always, then the newest ones
    /// ([`MAX_ENTRY_SEQS`] at most). A client item records the session's last seq when
    /// it was set (none when the session had no message yet).
    pub seqs: Vec<i64>,
    /// A command's runs whose exit status a result showed, oldest first
    /// ([`MAX_ENTRY_RUNS`] at most).
    pub runs: Vec<Run>,
    /// A todo's status.
    pub status: Option<TodoStatus>,
    /// Order of creation within the session (stable).
    pub position: i64,
}

/// Seqs an entry keeps: its first and the newest others.
pub const MAX_ENTRY_SEQS: usize = 32;
/// Runs a command entry keeps, newest.
pub const MAX_ENTRY_RUNS: usize = 8;
/// Longest key or shown text of a derived entry, in characters.
pub const MAX_DERIVED_CHARS: usize = 240;

/// `seqs` with `more` added: ascending, deduplicated, the first kept and then the
/// newest, [`MAX_ENTRY_SEQS`] in all.
pub fn merge_seqs(seqs: &[i64], more: &[i64]) -> Vec<i64> {
    let mut all: Vec<i64> = seqs.iter().chain(more).copied().collect();
    all.sort_unstable();
    all.dedup();
    if all.len() > MAX_ENTRY_SEQS {
        let tail = all.split_off(all.len() - (MAX_ENTRY_SEQS - 1));
        all.truncate(1);
        all.extend(tail);
    }
    all
}
