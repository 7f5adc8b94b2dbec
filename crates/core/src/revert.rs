//! Undoing compactions. Every compaction (a clearing, a summarization pass) is recorded
//! with what it changed in the session's view; reverting one reverts it and every later
//! one still in force, which puts the view back as it was before it, with the messages
//! appended since. Here: which compaction a request names, the record as the engine
//! sees it, what the session's aggregates become, and when automatic compaction resumes.
use crate::error::{Error, Result, quoted};
use crate::events::{CompactionKind, EventKind};
use crate::session::Session;

/// Characters an event cursor may have (`<tx>.<id>` of two 64-bit numbers is 39).
pub const MAX_CURSOR_CHARS: usize = 64;

/// Automatic compaction resumes after a revert once the log has grown by this fraction
/// (1/n) of the tokens the restored view holds: a compaction redone at once would undo
/// the revert, and one the session has grown into is a new decision.
pub const RESUME_GROWTH_DIVISOR: i64 = 10;

/// What a request names as the compaction to revert.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// A session stream's cursor: the event's session_seq.
    EventSeq(i64),
    /// A tenant stream's cursor `<tx>.<id>`: the event's id.
    EventId(i64),
    /// A summary the compaction wrote.
    SummaryId(i64),
}

impl Target {
    /// Reads an event's `cursor`: a session stream's (`12`) or a tenant stream's
    /// (`<tx>.<id>`).
    pub fn from_cursor(cursor: &str) -> Result<Target> {
        let invalid = |reason: &str| Error::invalid("event_cursor", reason.to_string());
        if cursor.is_empty() {
            return Err(invalid(
                "is empty: pass the cursor of the compaction's event, as SubscribeEvents delivered it",
            ));
        }
        if cursor.chars().count() > MAX_CURSOR_CHARS {
            return Err(invalid(&format!(
                "is longer than {MAX_CURSOR_CHARS} characters; an event's cursor is \"<seq>\" or \"<tx>.<id>\""
            )));
        }
        let number = |text: &str| text.parse::<i64>().ok().filter(|n| *n > 0);
        let target = match cursor.split_once('.') {
            None => number(cursor).map(Target::EventSeq),
            Some((tx, id)) => number(tx).and(number(id)).map(Target::EventId),
        };
        target.ok_or_else(|| {
            invalid(&format!(
                "{} is not an event's cursor (\"<seq>\" from a session stream, \"<tx>.<id>\" from a tenant stream)",
                quoted(cursor)
            ))
        })
    }

    /// Checks a summary id.
    pub fn from_summary_id(id: i64) -> Result<Target> {
        if id <= 0 {
            return Err(Error::invalid(
                "summary_id",
                format!("must be positive, got {id}"),
            ));
        }
        Ok(Target::SummaryId(id))
    }
}

/// Why an event of this kind names nothing to revert; `None` for the kinds that do
/// (TOOL_RESULTS_CLEARED, COMPACTION_COMPLETED).
pub fn not_revertible(kind: EventKind) -> Option<&'static str> {
    match kind {
        EventKind::ToolResultsCleared | EventKind::CompactionCompleted => None,
        EventKind::OutputEvicted => Some(
            "is an OUTPUT_EVICTED event: eviction at append is how a too-large tool result entered the view (as a preview), not a compaction; Expand returns it whole. Revertible: TOOL_RESULTS_CLEARED and COMPACTION_COMPLETED events",
        ),
        EventKind::CompactionStarted => Some(
            "is a COMPACTION_STARTED event: name the compaction's COMPACTION_COMPLETED event (or a summary it wrote)",
        ),
        EventKind::CompactionFailed => {
            Some("is a COMPACTION_FAILED event: a failed compaction changed nothing")
        }
        EventKind::CompactionReverted => Some(
            "is a COMPACTION_REVERTED event: a revert is undone by nothing but a new compaction (Compact)",
        ),
        EventKind::BudgetThresholdCrossed
        | EventKind::SessionDeleted
        | EventKind::SessionFinished
        | EventKind::SessionForked
        | EventKind::RecallAnswered => Some(
            "is not a compaction's event. Revertible: TOOL_RESULTS_CLEARED and COMPACTION_COMPLETED events",
        ),
    }
}

/// What a recorded compaction was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compaction {
    /// Old tool results became placeholders (TOOL_RESULTS_CLEARED).
    Clearing,
    /// A summarization pass (COMPACTION_COMPLETED) of this kind.
    Summary(CompactionKind),
}

impl Compaction {
    /// As the database keeps it: 0 a clearing, else the CompactionKind number.
    pub fn to_i16(self) -> i16 {
        match self {
            Compaction::Clearing => 0,
            Compaction::Summary(kind) => kind as i16,
        }
    }

    pub fn from_i16(value: i16) -> Compaction {
        match value {
            1 => Compaction::Summary(CompactionKind::Summarize),
            2 => Compaction::Summary(CompactionKind::Fallback),
            3 => Compaction::Summary(CompactionKind::Emergency),
            _ => Compaction::Clearing,
        }
    }

    /// The kind of its event.
    pub fn event_kind(self) -> EventKind {
        match self {
            Compaction::Clearing => EventKind::ToolResultsCleared,
            Compaction::Summary(_) => EventKind::CompactionCompleted,
        }
    }
}

/// A compaction as recorded in the transaction that committed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactionRecord {
    pub id: i64,
    /// The session_seq of its event: its cursor on the session's stream.
    pub event_seq: i64,
    pub compaction: Compaction,
    /// The session's view epoch and first seq just before it.
    pub view_epoch_before: i64,
    pub view_first_seq_before: i64,
    /// What it changed in the session's view tokens and summary tokens (after - before).
    pub view_tokens_delta: i64,
    pub summary_tokens_delta: i64,
    /// Messages whose view state it changed (tool results cleared, older steps a step
    /// summary took out of the view).
    pub seqs: Vec<i64>,
    /// Summaries it wrote, leaf and condensed.
    pub summary_ids: Vec<i64>,
    /// The messages a summarization pass covered, inclusive (0, 0 for a clearing).
    pub first_seq: i64,
    pub last_seq: i64,
    /// The session_seq of the COMPACTION_REVERTED event that undid it.
    pub reverted_by: Option<i64>,
}

impl CompactionRecord {
    /// Tool results it cleared (what it added to `cleared_messages`).
    pub fn cleared(&self) -> i64 {
        match self.compaction {
            Compaction::Clearing => self.seqs.len() as i64,
            Compaction::Summary(_) => 0,
        }
    }
}

/// The session aggregates a compaction changes and a revert restores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ViewAggregates {
    pub view_first_seq: i64,
    pub view_tokens: i64,
    pub summary_tokens: i64,
    pub cleared_messages: i64,
    pub summaries_written: i64,
}

impl ViewAggregates {
    pub fn of(session: &Session) -> ViewAggregates {
        ViewAggregates {
            view_first_seq: session.view_first_seq,
            view_tokens: session.view_tokens,
            summary_tokens: session.summary_tokens,
            cleared_messages: session.cleared_messages,
            summaries_written: session.summaries_written,
        }
    }

    /// These aggregates with `chain` — a compaction and every later one still in
    /// force, in any order — undone: each one's change taken back; the view starts
    /// where it started before the oldest. `None` when `chain` is empty.
    pub fn reverted(self, chain: &[CompactionRecord]) -> Option<ViewAggregates> {
        let oldest = chain.iter().min_by_key(|record| record.id)?;
        let sum = |f: fn(&CompactionRecord) -> i64| {
            chain
                .iter()
                .map(f)
                .fold(0i64, |total, value| total.saturating_add(value))
        };
        Some(ViewAggregates {
            view_first_seq: oldest.view_first_seq_before,
            view_tokens: self
                .view_tokens
                .saturating_sub(sum(|r| r.view_tokens_delta)),
            summary_tokens: self
                .summary_tokens
                .saturating_sub(sum(|r| r.summary_tokens_delta)),
            cleared_messages: self.cleared_messages.saturating_sub(sum(|r| r.cleared())),
            summaries_written: self
                .summaries_written
                .saturating_sub(sum(|r| r.summary_ids.len() as i64)),
        })
    }
}

/// The view epoch a session field that names an epoch (the anchor's, the last build's)
/// takes when `chain` is reverted into `new_epoch`: a request made on the view just
/// before the oldest compaction saw what the revert restores, so it stays comparable
/// (anchored estimates, prompt-cache stability); any other epoch stays as it is.
pub fn restamped_epoch(epoch: i64, chain: &[CompactionRecord], new_epoch: i64) -> i64 {
    match chain.iter().min_by_key(|record| record.id) {
        Some(oldest) if oldest.view_epoch_before == epoch => new_epoch,
        _ => epoch,
    }
}

/// The log size at which automatic compaction resumes after a revert that leaves
/// `view_total_tokens` in the view (summaries and messages) of a log of `log_tokens`.
pub fn resume_log_tokens(log_tokens: i64, view_total_tokens: i64) -> i64 {
    log_tokens.saturating_add((view_total_tokens.max(0) / RESUME_GROWTH_DIVISOR).max(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn record(
        id: i64,
        view_first_seq_before: i64,
        deltas: (i64, i64),
        seqs: usize,
    ) -> CompactionRecord {
        CompactionRecord {
            id,
            event_seq: id * 2,
            compaction: if id % 2 == 0 {
                Compaction::Clearing
            } else {
                Compaction::Summary(CompactionKind::Summarize)
            },
            view_epoch_before: id,
            view_first_seq_before,
            view_tokens_delta: deltas.0,
            summary_tokens_delta: deltas.1,
            seqs: (1..=seqs as i64).collect(),
            summary_ids: if id % 2 == 0 {
                Vec::new()
            } else {
                vec![id, id + 100]
            },
            first_seq: 0,
            last_seq: 0,
            reverted_by: None,
        }
    }

    /// A compaction's change applied to aggregates, as clearing and summary passes do.
    fn applied(
        now: ViewAggregates,
        record: &CompactionRecord,
        first_seq_after: i64,
    ) -> ViewAggregates {
        ViewAggregates {
            view_first_seq: first_seq_after,
            view_tokens: now.view_tokens + record.view_tokens_delta,
            summary_tokens: now.summary_tokens + record.summary_tokens_delta,
            cleared_messages: now.cleared_messages + record.cleared(),
            summaries_written: now.summaries_written + record.summary_ids.len() as i64,
        }
    }

    #[test]
    fn cursors_name_a_session_seq_or_an_event_id() {
        assert_eq!(Target::from_cursor("12").unwrap(), Target::EventSeq(12));
        assert_eq!(Target::from_cursor("900.31").unwrap(), Target::EventId(31));
        for bad in ["", "0", "-3", "x", "1.", ".4", "1.2.3", "1.0"] {
            let error = Target::from_cursor(bad).unwrap_err();
            assert!(
                matches!(&error, Error::InvalidArgument { field, .. } if field == "event_cursor"),
                "{bad}: {error:?}"
            );
        }
        let long = "1".repeat(200);
        let error = Target::from_cursor(&long).unwrap_err().to_string();
        assert!(error.len() < 200, "{error}");
        assert!(Target::from_summary_id(0).is_err());
        assert_eq!(Target::from_summary_id(5).unwrap(), Target::SummaryId(5));
    }

    #[test]
    fn only_clearing_and_completed_compactions_are_revertible() {
        assert!(not_revertible(EventKind::ToolResultsCleared).is_none());
        assert!(not_revertible(EventKind::CompactionCompleted).is_none());
        for kind in [
            EventKind::OutputEvicted,
            EventKind::CompactionStarted,
            EventKind::CompactionFailed,
            EventKind::CompactionReverted,
            EventKind::BudgetThresholdCrossed,
            EventKind::SessionDeleted,
            EventKind::SessionFinished,
            EventKind::SessionForked,
            EventKind::RecallAnswered,
        ] {
            assert!(not_revertible(kind).is_some(), "{kind:?}");
        }
        for kind in [
            Compaction::Clearing,
            Compaction::Summary(CompactionKind::Summarize),
            Compaction::Summary(CompactionKind::Fallback),
            Compaction::Summary(CompactionKind::Emergency),
        ] {
            assert_eq!(Compaction::from_i16(kind.to_i16()), kind);
        }
    }

    #[test]
    fn the_anchor_of_the_view_before_the_oldest_compaction_follows_the_revert() {
        let chain = [record(3, 1, (-10, 5), 1), record(4, 9, (-3, 0), 2)];
        assert_eq!(restamped_epoch(3, &chain, 20), 20);
        assert_eq!(restamped_epoch(4, &chain, 20), 4);
        assert_eq!(restamped_epoch(3, &[], 20), 3);
    }

    #[test]
    fn automatic_compaction_waits_for_a_tenth_of_the_view() {
        assert_eq!(resume_log_tokens(50_000, 30_000), 53_000);
        assert_eq!(resume_log_tokens(10, 0), 11);
        assert_eq!(resume_log_tokens(i64::MAX, i64::MAX), i64::MAX);
    }

    proptest! {
        /// Reverting the chain from any compaction on restores the aggregates as they
        /// were before it, and reverting newest first one at a time ends where reverting
        /// them at once does.
        #[test]
        fn reverting_a_suffix_restores_the_aggregates_before_it(
            start in (1i64..1_000, 0i64..1_000_000, 0i64..100_000, 0i64..1_000, 0i64..1_000),
            steps in prop::collection::vec((-50_000i64..0, -5_000i64..5_000, 0usize..6, 0i64..50), 1..12),
            from in any::<prop::sample::Index>(),
        ) {
            let first = ViewAggregates {
                view_first_seq: start.0,
                view_tokens: start.1,
                summary_tokens: start.2,
                cleared_messages: start.3,
                summaries_written: start.4,
            };
            let mut states = vec![first];
            let mut chain = Vec::new();
            for (index, (view_delta, summary_delta, seqs, advance)) in steps.iter().enumerate() {
                let now = *states.last().unwrap();
                let record = record(index as i64 + 1, now.view_first_seq, (*view_delta, *summary_delta), *seqs);
                states.push(applied(now, &record, now.view_first_seq + advance));
                chain.push(record);
            }
            let from = from.index(chain.len());
            let last = *states.last().unwrap();
            let at_once = last.reverted(&chain[from..]).unwrap();
            prop_assert_eq!(at_once, states[from]);
            let mut one_by_one = last;
            for record in chain[from..].iter().rev() {
                one_by_one = one_by_one.reverted(std::slice::from_ref(record)).unwrap();
            }
            prop_assert_eq!(one_by_one, at_once);
        }

        /// Whatever a client or a corrupt record holds, the sums never wrap.
        #[test]
        fn reverting_saturates(values in prop::collection::vec(any::<i64>(), 8)) {
            let now = ViewAggregates {
                view_first_seq: values[0],
                view_tokens: values[1],
                summary_tokens: values[2],
                cleared_messages: values[3],
                summaries_written: values[4],
            };
            let chain = [
                record(1, values[5], (values[6], values[7]), 3),
                record(2, values[5], (values[7], values[6]), 3),
            ];
            let _ = now.reverted(&chain);
            let _ = resume_log_tokens(values[0], values[1]);
        }
    }
}
