//! Reading a file back: every record checked, in order, before the caller writes
//! anything. A refusal names the record (`record 12 (message)`) and its field.
use std::collections::{BTreeSet, HashMap};

use sha2::{Digest, Sha256};

use super::records::{End, Header, Record};
use super::{FORMAT, LedgerRecord, SessionRecord, SummaryRecord, VERSION, hex};
use crate::error::{Error, Result};
use crate::ledger::Entry;
use crate::message::{StoredMessage, ViewState};
use crate::validate::{CallSeq, check_tool_references, validate_message, validate_session_id};

/// The server's bounds an imported session must keep, as an append would.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Bytes of text of one message.
    pub max_message_bytes: usize,
    /// Bytes of text of the whole log.
    pub max_session_bytes: i64,
}

/// A file, read and checked: what the store writes.
#[derive(Debug, Clone)]
pub struct Import {
    pub session: SessionRecord,
    pub messages: Vec<StoredMessage>,
    pub summaries: Vec<SummaryRecord>,
    pub ledger: Vec<Entry>,
    /// Every tool call (id, the seq making it) and result (id, the seq answering it).
    pub calls: Vec<CallSeq>,
    pub answers: Vec<CallSeq>,
}

/// Tokens one message or summary may claim (a window is at most a few million).
const MAX_TOKENS: i64 = 1 << 31;

/// Reads and checks `file`.
pub fn read(file: &[u8], limits: Limits) -> Result<Import> {
    let mut lines = Lines::new(file)?;
    let header = lines.next_record()?;
    check_header(&header, lines.at)?;
    let session = match lines.next_record()? {
        Record::Session(session) => *session,
        other => return Err(lines.misplaced(&other, "the session")),
    };
    check_session(&session, lines.at)?;
    let mut messages = Vec::new();
    let mut summaries = Vec::new();
    let mut ledger = Vec::new();
    loop {
        let before = lines.offset;
        let record = lines.next_record()?;
        let at = lines.at;
        match record {
            Record::Message(m) if summaries.is_empty() && ledger.is_empty() => {
                messages.push(check_message(&m, at, messages.len(), limits)?);
            }
            Record::Summary(s) if ledger.is_empty() => summaries.push(s),
            Record::Ledger(entry) => ledger.push(check_entry(&entry, at, ledger.len())?),
            Record::End(end) => {
                check_end(&end, at, &file[..before])?;
                lines.finish()?;
                break;
            }
            other => return Err(lines.misplaced(&other, "messages, summaries, ledger, end")),
        }
    }
    let (calls, answers) = tool_calls(&messages)?;
    check_counts(messages.len(), summaries.len(), ledger.len())?;
    check_summaries(&summaries, messages.len() as i64)?;
    check_ledger_keys(&ledger)?;
    let import = Import {
        session,
        messages,
        summaries,
        ledger,
        calls,
        answers,
    };
    check_totals(&import, limits)?;
    Ok(import)
}

/// The file's lines, each a record, with where the reader is.
struct Lines<'a> {
    file: &'a [u8],
    offset: usize,
    /// The record last read, counting from 1.
    at: usize,
}

impl<'a> Lines<'a> {
    fn new(file: &'a [u8]) -> Result<Lines<'a>> {
        if file.is_empty() {
            return Err(Error::invalid("file", "is empty"));
        }
        Ok(Lines {
            file,
            offset: 0,
            at: 0,
        })
    }

    fn next_record(&mut self) -> Result<Record> {
        self.at += 1;
        let rest = &self.file[self.offset..];
        let Some(end) = rest.iter().position(|&byte| byte == b'\n') else {
            return Err(Error::invalid(
                format!("record {}", self.at),
                "missing: the file ends before its end record (cut short?)",
            ));
        };
        self.offset += end + 1;
        serde_json::from_slice(&rest[..end]).map_err(|error| {
            Error::invalid(
                format!("record {}", self.at),
                format!(
                    "is not a record of this format (line {}, column {})",
                    error.line(),
                    error.column()
                ),
            )
        })
    }

    fn misplaced(&self, record: &Record, expected: &str) -> Error {
        Error::invalid(
            format!("record {} ({})", self.at, record.name()),
            format!("is out of place: expected {expected} here"),
        )
    }

    fn finish(&self) -> Result<()> {
        if self.offset == self.file.len() {
            return Ok(());
        }
        Err(Error::invalid(
            format!("record {}", self.at + 1),
            "follows the end record",
        ))
    }
}

fn check_header(record: &Record, at: usize) -> Result<()> {
    let Record::Header(Header {
        format, version, ..
    }) = record
    else {
        return Err(Error::invalid(
            format!("record {at} ({})", record.name()),
            "is out of place: a file starts with its header",
        ));
    };
    if format != FORMAT {
        return Err(Error::invalid(
            format!("record {at} (header).format"),
            format!("must be {FORMAT}"),
        ));
    }
    if *version != VERSION {
        return Err(Error::invalid(
            format!("record {at} (header).version"),
            format!("is {version}; this server reads version {VERSION}"),
        ));
    }
    Ok(())
}

fn check_session(session: &SessionRecord, at: usize) -> Result<()> {
    let field = |name: &str| format!("record {at} (session).{name}");
    validate_session_id(&session.id)
        .map_err(|_| Error::invalid(field("id"), "is not a valid session id"))?;
    session.policy.validate(&field("policy"))?;
    let state = &session.state;
    let counts = [
        ("state.version", state.version),
        ("state.message_count", state.message_count),
        ("state.turn_count", state.turn_count),
        ("state.log_tokens", state.log_tokens),
        ("state.view_tokens", state.view_tokens),
        ("state.last_turn_tokens", state.last_turn_tokens),
        ("state.view_epoch", state.view_epoch),
        ("state.builds", state.builds),
        ("state.summaries_written", state.summaries_written),
    ];
    for (name, value) in counts {
        if value < 0 {
            return Err(Error::invalid(field(name), "must not be negative"));
        }
    }
    if state.view_first_seq < 1 || state.view_first_seq > state.message_count + 1 {
        return Err(Error::invalid(
            field("state.view_first_seq"),
            "must be from 1 to the message count + 1",
        ));
    }
    let estimates = [
        state.est_abs_err_sum,
        state.est_max_abs_err,
        state.est_last_err,
    ];
    if estimates.iter().any(|value| !value.is_finite()) {
        return Err(Error::invalid(
            field("state"),
            "holds a number that is not finite",
        ));
    }
    Ok(())
}

fn check_message(
    record: &super::MessageRecord,
    at: usize,
    before: usize,
    limits: Limits,
) -> Result<StoredMessage> {
    let name = format!("record {at} (message)");
    let field = |name_of: &str| format!("{name}.{name_of}");
    if record.seq != before as i64 + 1 {
        return Err(Error::invalid(
            field("seq"),
            format!("must be {}", before + 1),
        ));
    }
    let stored = record.to_stored().map_err(|which| {
        Error::invalid(field(which), "names none of the values this format has")
    })?;
    validate_message(0, &stored.message, limits.max_message_bytes, &name)
        .map_err(|error| renamed(error, &format!("{name}[0]"), &name))?;
    let sizes = [
        ("tokens", stored.token_count),
        ("view_tokens", stored.view_tokens),
        ("turn", stored.turn),
    ];
    for (which, value) in sizes {
        if !(0..MAX_TOKENS).contains(&value) {
            return Err(Error::invalid(
                field(which),
                format!("must be from 0 to {MAX_TOKENS}"),
            ));
        }
    }
    Ok(stored)
}

/// `error` with its field's prefix `from` read as `to`.
fn renamed(error: Error, from: &str, to: &str) -> Error {
    match error {
        Error::InvalidArgument { field, reason } => {
            Error::invalid(field.replacen(from, to, 1), reason)
        }
        other => other,
    }
}

fn tool_calls(messages: &[StoredMessage]) -> Result<(Vec<CallSeq>, Vec<CallSeq>)> {
    let plain: Vec<_> = messages.iter().map(|m| m.message.clone()).collect();
    // The check names `messages[i].…`; message i is record i + 3 (after the header and
    // the session), and the rest of the field is kept (`tool_call_id`, `tool_calls[0].id`).
    check_tool_references(&HashMap::new(), &plain, 0).map_err(|error| match error {
        Error::InvalidArgument { field, reason } => {
            let (index, rest) = field
                .strip_prefix("messages[")
                .and_then(|tail| tail.split_once(']'))
                .and_then(|(index, rest)| Some((index.parse::<usize>().ok()?, rest)))
                .unwrap_or((0, ""));
            Error::invalid(format!("record {} (message){rest}", index + 3), reason)
        }
        other => other,
    })
}

/// Summaries and ledger entries a log of `messages` can have made, at most: the trees in
/// the view cover each message once (a leaf at least one message, a condensed one at
/// least two summaries), an export carries at most 1 000 reverted trees besides, and an
/// entry comes from a message or is one of the client's 600.
fn check_counts(messages: usize, summaries: usize, ledger: usize) -> Result<()> {
    if summaries > 2 * messages + 2_048 {
        return Err(Error::invalid(
            "summary",
            format!("{summaries} summaries for {messages} messages: more than a session makes"),
        ));
    }
    if ledger > 8 * messages + 600 {
        return Err(Error::invalid(
            "ledger",
            format!("{ledger} entries for {messages} messages: more than a session makes"),
        ));
    }
    Ok(())
}

fn check_summaries(summaries: &[SummaryRecord], message_count: i64) -> Result<()> {
    let depths: HashMap<i64, i32> = summaries.iter().map(|s| (s.id, s.depth)).collect();
    if depths.len() != summaries.len() {
        return Err(Error::invalid("summary.id", "is used by two summaries"));
    }
    for summary in summaries {
        let field = |name: &str| format!("summary {}.{name}", summary.id);
        if summary.first_seq < 1
            || summary.first_seq > summary.last_seq
            || summary.last_seq > message_count
        {
            return Err(Error::invalid(
                field("last_seq"),
                "must span messages of the log, first to last",
            ));
        }
        if !(1..=3).contains(&summary.level)
            || summary.depth < 0
            || summary.tokens < 0
            || summary.source_tokens < 0
        {
            return Err(Error::invalid(
                field("level"),
                "level 1 to 3 and no negative size",
            ));
        }
        if let Some(parent) = summary.parent
            && depths
                .get(&parent)
                .is_none_or(|&depth| depth <= summary.depth)
        {
            return Err(Error::invalid(
                field("parent"),
                "must name a summary of a greater depth in this file",
            ));
        }
    }
    Ok(())
}

fn check_entry(record: &LedgerRecord, at: usize, before: usize) -> Result<Entry> {
    let entry = record.to_entry(before as i64 + 1);
    if entry.key.is_empty() || entry.key.contains('\0') || entry.text.contains('\0') {
        return Err(Error::invalid(
            format!("record {at} (ledger).key"),
            "must be text without NUL, the key not empty",
        ));
    }
    Ok(entry)
}

fn check_ledger_keys(ledger: &[Entry]) -> Result<()> {
    let mut seen = BTreeSet::new();
    for entry in ledger {
        if !seen.insert((entry.kind as i16, entry.key.as_str())) {
            return Err(Error::invalid("ledger.key", "is used twice for one kind"));
        }
    }
    Ok(())
}

fn check_end(end: &End, at: usize, before: &[u8]) -> Result<()> {
    if end.records != at as u64 - 1 {
        return Err(Error::invalid(
            format!("record {at} (end).records"),
            format!("says {} records precede it; {} do", end.records, at - 1),
        ));
    }
    if end.sha256 != hex(&Sha256::digest(before)) {
        return Err(Error::invalid(
            format!("record {at} (end).sha256"),
            "does not match the records before it (changed or damaged)",
        ));
    }
    Ok(())
}

/// The session's totals against what its messages and summaries add up to.
fn check_totals(import: &Import, limits: Limits) -> Result<()> {
    let state = &import.session.state;
    let messages = &import.messages;
    // The summary block as the session counts it (the summaries and their framing).
    let active_summary_tokens = crate::summarize::block_tokens(
        import
            .summaries
            .iter()
            .filter(|s| s.parent.is_none() && s.reverted_at.is_none())
            .map(|s| i64::from(s.tokens)),
        &import.session.policy.counter(),
    );
    let content_bytes: i64 = messages
        .iter()
        .map(|m| m.message.counted_bytes() as i64)
        .sum();
    let totals = [
        ("message_count", state.message_count, messages.len() as i64),
        (
            "log_tokens",
            state.log_tokens,
            messages.iter().map(|m| m.token_count).sum(),
        ),
        ("content_bytes", state.content_bytes, content_bytes),
        (
            "turn_count",
            state.turn_count,
            messages.iter().map(|m| m.turn).max().unwrap_or(0),
        ),
        (
            "summary_tokens",
            state.summary_tokens,
            active_summary_tokens,
        ),
        (
            "view_tokens",
            state.view_tokens,
            view_tokens(messages, state.view_first_seq),
        ),
    ];
    for (name, said, counted) in totals {
        if said != counted {
            return Err(Error::invalid(
                format!("record 2 (session).state.{name}"),
                format!("is {said}; the file's records add up to {counted}"),
            ));
        }
    }
    if content_bytes > limits.max_session_bytes {
        return Err(Error::invalid(
            "record 2 (session).state.content_bytes",
            format!(
                "is over this server's limit of {} bytes a session",
                limits.max_session_bytes
            ),
        ));
    }
    Ok(())
}

/// Tokens of the view: the messages from its first seq that no step summary covers.
fn view_tokens(messages: &[StoredMessage], first_seq: i64) -> i64 {
    messages
        .iter()
        .filter(|m| m.seq >= first_seq && m.view_state != ViewState::Summarized)
        .map(|m| m.view_tokens)
        .sum()
}
