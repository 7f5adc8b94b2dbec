//! RevertCompaction: a compaction and every later one still in force undone in one
//! transaction under the session's row lock, with its event; or, as a dry run, the same
//! transaction rolled back.
use super::Engine;
use super::report::{note_budget, row_report, session_not_found};
use crate::error::{Error, Result, quoted};
use crate::events::{EventDetail, EventKind};
use crate::policy::Policy;
use crate::revert::{
    CompactionRecord, Target, ViewAggregates, not_revertible, restamped_epoch, resume_log_tokens,
};
use crate::session::{Session, Summary};
use crate::store::{RevertUpdate, SessionTx};
use crate::validate::validate_session_id;

/// Which compaction to revert, as the request names it.
#[derive(Debug, Clone)]
pub enum RevertTarget {
    /// Its event's cursor (a session stream's or a tenant stream's).
    EventCursor(String),
    /// A summary it wrote.
    SummaryId(i64),
}

#[derive(Debug, Clone)]
pub struct RevertRequest {
    pub session_id: String,
    pub target: RevertTarget,
    pub dry_run: bool,
    /// Revert only at this version.
    pub expected_version: Option<i64>,
}

/// What a revert undid (or, on a dry run, would undo).
#[derive(Debug, Clone)]
pub struct Reverted {
    /// The compactions undone, newest first.
    pub compactions: Vec<CompactionRecord>,
    /// Messages whose view state came back, in seq order.
    pub restored_seqs: Vec<i64>,
    pub view_first_seq: i64,
    /// The active summaries afterwards, oldest first.
    pub summaries: Vec<Summary>,
    /// Estimated request size before and after (system prompt and tools of the latest
    /// build, summaries, view).
    pub tokens_before: i64,
    pub tokens_after: i64,
    pub version: i64,
    pub applied: bool,
    /// Automatic compaction waits until the log reaches this many tokens.
    pub resume_at_log_tokens: i64,
}

impl Engine {
    /// Undoes a compaction and every later one still in force: the view as it was
    /// before it (with what was appended since), the log untouched, the summaries kept
    /// but out of the view, automatic compaction held until the session grows.
    pub async fn revert_compaction(
        &self,
        tenant_id: i64,
        request: RevertRequest,
    ) -> Result<Reverted> {
        validate_session_id(&request.session_id)?;
        let target = match &request.target {
            RevertTarget::EventCursor(cursor) => Target::from_cursor(cursor)?,
            RevertTarget::SummaryId(id) => Target::from_summary_id(*id)?,
        };
        if let Some(version) = request.expected_version
            && version < 0
        {
            return Err(Error::invalid(
                "expected_version",
                format!("must be 0 or positive, got {version}"),
            ));
        }
        let Some(mut tx) = self
            .store
            .lock_session(tenant_id, &request.session_id)
            .await?
        else {
            return Err(session_not_found(&request.session_id));
        };
        let row = tx.session.clone();
        if let Some(expected_version) = request.expected_version
            && expected_version != row.version
        {
            return Err(Error::Conflict {
                current_version: row.version,
                expected_version,
            });
        }
        let record = find(&mut tx, &request, target).await?;
        if let Some(by) = record.reverted_by {
            return Err(Error::FailedPrecondition {
                message: format!(
                    "{}: that compaction (event {}) was already reverted, by the COMPACTION_REVERTED event {by}",
                    field_of(&request.target),
                    record.event_seq
                ),
                figures: vec![("reverted_by_event_seq", by)],
            });
        }
        let policy = row.policy.clone();
        let chain = tx.compactions_from(record.id).await?;
        let restored = ViewAggregates::of(&row)
            .reverted(&chain)
            .ok_or_else(|| Error::internal("a compaction record without its chain"))?;

        let after = row_after(&row, &restored, &chain);
        let event_seq = tx.queued_event_seq() + 1;
        let update = update_of(&after);
        let restored_seqs = tx.undo_compactions(&chain, event_seq, &update).await?;
        check_recount(&mut tx, &after, &policy).await?;
        let summaries = tx.active_summaries().await?;
        let tokens_before = row_report(&policy, &row).estimate.total_tokens;
        let tokens_after = row_report(&policy, &after).estimate.total_tokens;
        let tokens = (tokens_before, tokens_after);
        tx.add_event(reverted_event(&chain, &restored_seqs, &after, tokens));
        note_budget(&mut tx, &row_report(&policy, &after));
        if request.dry_run {
            tx.rollback().await?;
        } else {
            tx.commit().await?;
            tracing::info!(
                session_id = %row.external_id,
                compactions = chain.len(),
                restored = restored_seqs.len(),
                tokens_before,
                tokens_after,
                "reverted compactions"
            );
        }
        Ok(Reverted {
            compactions: chain,
            restored_seqs,
            view_first_seq: after.view_first_seq,
            summaries,
            tokens_before,
            tokens_after,
            version: if request.dry_run {
                row.version
            } else {
                after.version
            },
            applied: !request.dry_run,
            resume_at_log_tokens: after.compaction_resume_log_tokens,
        })
    }
}

/// The session row once `chain` is undone: the view `restored` gives, a new view epoch
/// (the anchor's and the build record's restamped), a new version, and automatic
/// compaction held until the session grows.
fn row_after(row: &Session, restored: &ViewAggregates, chain: &[CompactionRecord]) -> Session {
    let mut after = row.clone();
    after.view_first_seq = restored.view_first_seq;
    after.view_tokens = restored.view_tokens;
    after.summary_tokens = restored.summary_tokens;
    after.cleared_messages = restored.cleared_messages;
    after.summaries_written = restored.summaries_written;
    after.view_epoch = row.view_epoch + 1;
    after.version = row.version + 1;
    // A request made on the view just before the oldest compaction saw what comes
    // back: its anchor and build record stay comparable.
    if let Some(anchor) = &mut after.anchor {
        anchor.view_epoch = restamped_epoch(anchor.view_epoch, chain, after.view_epoch);
    }
    after.builds.last.view_epoch =
        restamped_epoch(row.builds.last.view_epoch, chain, after.view_epoch);
    after.compaction_resume_log_tokens = resume_log_tokens(
        row.log_tokens,
        restored.view_tokens.saturating_add(restored.summary_tokens),
    );
    after
}

/// The row's revert-time fields as the store writes them.
fn update_of(after: &Session) -> RevertUpdate {
    RevertUpdate {
        view_first_seq: after.view_first_seq,
        view_tokens: after.view_tokens,
        summary_tokens: after.summary_tokens,
        cleared_messages: after.cleared_messages,
        summaries_written: after.summaries_written,
        view_epoch: after.view_epoch,
        anchor_view_epoch: after.anchor.map(|anchor| anchor.view_epoch),
        last_build_view_epoch: after.builds.last.view_epoch,
        resume_log_tokens: after.compaction_resume_log_tokens,
    }
}

/// The kept aggregates must be what the rows now say; otherwise a record is wrong, and
/// nothing is written (the transaction ends unwritten).
async fn check_recount(tx: &mut SessionTx, after: &Session, policy: &Policy) -> Result<()> {
    let recount = tx.recount_view().await?;
    let recounted_summary_tokens =
        crate::summarize::block_tokens(recount.summary_token_counts, &policy.counter());
    if recount.view_tokens != after.view_tokens
        || recounted_summary_tokens != after.summary_tokens
        || recount.covered_through != after.view_first_seq - 1
    {
        tracing::error!(
            session_id = %after.external_id,
            view_tokens = after.view_tokens,
            recounted_view_tokens = recount.view_tokens,
            summary_tokens = after.summary_tokens,
            recounted_summary_tokens,
            view_first_seq = after.view_first_seq,
            recounted_covered_through = recount.covered_through,
            "a revert's aggregates differ from the rows; nothing was reverted"
        );
        return Err(Error::internal(
            "the session's compaction records do not add up to its view",
        ));
    }
    Ok(())
}

/// The COMPACTION_REVERTED event of undoing `chain`: its events and summaries newest
/// first, the seqs restored, the view's start and tokens before and after.
fn reverted_event(
    chain: &[CompactionRecord],
    restored_seqs: &[i64],
    after: &Session,
    (tokens_before, tokens_after): (i64, i64),
) -> EventDetail {
    let mut event_seqs: Vec<i64> = chain.iter().map(|record| record.event_seq).collect();
    event_seqs.reverse();
    EventDetail::CompactionReverted {
        event_seqs,
        summary_ids: chain
            .iter()
            .rev()
            .flat_map(|record| record.summary_ids.iter().copied())
            .collect(),
        restored_seqs: restored_seqs.to_vec(),
        view_first_seq: after.view_first_seq,
        tokens_before,
        tokens_after,
        resume_at_log_tokens: after.compaction_resume_log_tokens,
    }
}

/// The request field that named the compaction.
fn field_of(target: &RevertTarget) -> String {
    match target {
        RevertTarget::EventCursor(cursor) => format!("event_cursor {}", quoted(cursor)),
        RevertTarget::SummaryId(id) => format!("summary_id {id}"),
    }
}

/// The record of the compaction `target` names, or why there is none: not found
/// (NOT_FOUND), an event that is no compaction (INVALID_ARGUMENT), a compaction
/// committed before compactions were recorded (FAILED_PRECONDITION).
async fn find(
    tx: &mut SessionTx,
    request: &RevertRequest,
    target: Target,
) -> Result<CompactionRecord> {
    let field = field_of(&request.target);
    let session = quoted(&request.session_id);
    let unrecorded = || Error::FailedPrecondition {
        message: format!(
            "{field}: that compaction was committed before compactions were recorded for reverting (an older server); only later ones can be reverted"
        ),
        figures: Vec::new(),
    };
    let event_seq = match target {
        Target::SummaryId(id) => {
            if let Some(record) = tx.compaction_by_summary(id).await? {
                return Ok(record);
            }
            if tx.has_summary(id).await? {
                return Err(unrecorded());
            }
            if tx.inherits_summary(id).await? {
                return Err(Error::FailedPrecondition {
                    message: format!(
                        "{field}: that summary is one session {session} inherited when it was forked; a fork can revert only compactions it made itself (revert it in the session that wrote it: the fork keeps its own view)"
                    ),
                    figures: Vec::new(),
                });
            }
            return Err(Error::not_found(format!(
                "{field}: a summary of session {session}"
            )));
        }
        Target::EventSeq(seq) => seq,
        Target::EventId(id) => tx.event_seq_of(id).await?.ok_or_else(|| {
            Error::not_found(format!(
                "{field}: an event of session {session} (a tenant stream's cursor names an event of any session; this one is of another session, or pruned)"
            ))
        })?,
    };
    if let Some(record) = tx.compaction_by_event(event_seq).await? {
        return Ok(record);
    }
    match tx.event_kind_at(event_seq).await? {
        Some(number) => match EventKind::from_i16(number).map(not_revertible) {
            Some(None) => Err(unrecorded()),
            Some(Some(reason)) => Err(Error::invalid("event_cursor", reason)),
            None => Err(Error::invalid(
                "event_cursor",
                "is not a compaction's event. Revertible: TOOL_RESULTS_CLEARED and COMPACTION_COMPLETED events",
            )),
        },
        None => Err(Error::not_found(format!(
            "{field}: an event of session {session} (its newest is {})",
            tx.session.event_seq
        ))),
    }
}
