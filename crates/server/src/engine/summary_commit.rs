//! A summarization pass committed: under the session's lock, unless another compaction
//! got in first, the summaries are stored (the leaf, then each condensation of it), the
//! compaction is recorded for RevertCompaction, announced, and the row moves on.
use super::Engine;
use super::report::{note_budget, row_report, session_not_found, summary_region};
use super::summary_pass::{Chunk, Pass, PassCommit, SummaryPass, Written};
use crate::error::Result;
use crate::events::{CompactionKind, EventDetail};
use crate::metrics::{CompactionMetric, metrics};
use crate::revert::Compaction;
use crate::store::{NewCompaction, SessionTx, SummarizedUpdate};
use crate::tokenize::REPLY_PRIMING;

/// The request's size around a pass: before and after, tokens and messages.
struct Sizes {
    tokens_before: i64,
    tokens_after: i64,
    messages_before: i64,
    messages_after: i64,
}

impl Engine {
    /// Stores the pass's summaries and moves the row on; `Pass::Stale` when another
    /// compaction committed since the view was read (this chunk may be covered already;
    /// appends since are fine: they come after the chunk).
    pub(super) async fn commit_pass(
        &self,
        pass: &PassCommit<'_>,
        chunk: Chunk,
        written: Written,
    ) -> Result<Pass> {
        let row = pass.row;
        let Some(mut tx) = self
            .store
            .lock_session(pass.tenant_id, &row.external_id)
            .await?
        else {
            return Err(session_not_found(&row.external_id));
        };
        if tx.session.id != row.id || tx.session.view_epoch != row.view_epoch {
            return Ok(Pass::Stale);
        }
        let mut after = chunk.moved(tx.session.clone());
        let ids = store_summaries(&mut tx, &chunk, &written).await?;
        if let Some(job) = &pass.options.follow_up {
            tx.enqueue_job(job, &self.config.notify_gate).await?;
        }
        let summaries = written.summaries_after(&chunk, ids[0], &ids[1..]);
        let summary_tokens = summary_region(&summaries, pass.policy);
        after.summary_tokens = summary_tokens;
        after.summaries_written += ids.len() as i64;
        after.version += 1;
        let sizes = sizes(pass, &chunk, summary_tokens, summaries.len());
        announce(&mut tx, pass, &chunk, &written, &ids, &sizes);
        record(&mut tx, pass, &chunk, &after, &ids).await?;
        note_budget(&mut tx, &row_report(pass.policy, &after));
        tx.commit_summarized(SummarizedUpdate {
            view_first_seq: after.view_first_seq,
            view_tokens: after.view_tokens,
            summary_tokens,
            summaries_written: ids.len() as i64,
        })
        .await?;
        metrics().compaction_committed(
            match pass.options.compaction {
                CompactionKind::Summarize => CompactionMetric::Summarize,
                CompactionKind::Fallback => CompactionMetric::Fallback,
                CompactionKind::Emergency => CompactionMetric::Emergency,
            },
            i64::from(written.level()),
            sizes.tokens_before - sizes.tokens_after,
            sizes.messages_before - sizes.messages_after,
        );
        tracing::info!(
            session_id = %row.external_id,
            first_seq = chunk.first_seq,
            last_seq = chunk.last_seq,
            source_tokens = chunk.source_tokens,
            summary_tokens = written.leaf.token_count,
            level = written.leaf.level,
            steps = chunk.is_steps(),
            condensed = written.condensed.len(),
            "summarized"
        );
        Ok(Pass::Done(Box::new(SummaryPass {
            covered: chunk.covered,
            row: after,
            summaries,
        })))
    }
}

/// Inserts the leaf (its sources: the step summaries it takes in), then each
/// condensation (the first condenses stored summaries and the new leaf; later ones the
/// previous condensation with stored ones). The ids written, the leaf's first.
async fn store_summaries(tx: &mut SessionTx, chunk: &Chunk, written: &Written) -> Result<Vec<i64>> {
    let children: Vec<i64> = chunk.children.iter().map(|s| s.id).collect();
    let leaf_id = tx.insert_summary(&written.leaf, &children).await?;
    let mut ids = vec![leaf_id];
    for step in &written.condensed {
        let mut children = step.children.clone();
        children.push(*ids.last().unwrap_or(&leaf_id));
        ids.push(tx.insert_summary(&step.summary, &children).await?);
    }
    Ok(ids)
}

fn sizes(pass: &PassCommit<'_>, chunk: &Chunk, summary_tokens: i64, summaries: usize) -> Sizes {
    let row = pass.row;
    let around = row.builds.last.system_tokens.max(REPLY_PRIMING) + row.builds.last.tool_tokens;
    let view_total: i64 = pass.view.iter().map(|m| m.view_tokens).sum();
    let (view, active) = (pass.view.len(), pass.active.len());
    Sizes {
        tokens_before: around + summary_region(pass.active, pass.policy) + view_total,
        tokens_after: around + summary_tokens + view_total - chunk.source_tokens,
        messages_before: (view + active) as i64,
        messages_after: (view - chunk.covered.len() + summaries) as i64,
    }
}

/// COMPACTION_STARTED (within a call the pass starts and commits at once; a job
/// announced its start when it began) and COMPACTION_COMPLETED.
fn announce(
    tx: &mut SessionTx,
    pass: &PassCommit<'_>,
    chunk: &Chunk,
    written: &Written,
    ids: &[i64],
    sizes: &Sizes,
) {
    let options = pass.options;
    if options.job_id == 0 {
        tx.add_event(EventDetail::CompactionStarted {
            compaction: options.compaction,
            job_id: 0,
            attempt: 0,
        });
    }
    tx.add_event(EventDetail::CompactionCompleted {
        compaction: options.compaction,
        level: i32::from(written.level()),
        tokens_before: sizes.tokens_before,
        tokens_after: sizes.tokens_after,
        messages_before: sizes.messages_before,
        messages_after: sizes.messages_after,
        first_seq: chunk.first_seq,
        last_seq: chunk.last_seq,
        summary_id: ids.last().copied().unwrap_or_default(),
        summaries_written: ids.len() as i32,
        duration_ms: pass.started.elapsed().as_millis() as i64,
        job_id: options.job_id,
    });
}

/// Records the compaction (with the view of the steps it takes out) so that
/// RevertCompaction can undo it; then the older steps leave the view.
async fn record(
    tx: &mut SessionTx,
    pass: &PassCommit<'_>,
    chunk: &Chunk,
    after: &crate::session::Session,
    ids: &[i64],
) -> Result<()> {
    let covered = &pass.view[chunk.covered.clone()];
    let step_seqs: Vec<i64> = if chunk.is_steps() {
        covered.iter().map(|m| m.seq).collect()
    } else {
        Vec::new()
    };
    let record = NewCompaction {
        compaction: Compaction::Summary(pass.options.compaction),
        event_seq: tx.queued_event_seq(),
        view_tokens_delta: after.view_tokens - tx.session.view_tokens,
        summary_tokens_delta: after.summary_tokens - tx.session.summary_tokens,
        seqs: step_seqs,
        summary_ids: ids.to_vec(),
        first_seq: chunk.first_seq,
        last_seq: chunk.last_seq,
    };
    tx.record_compaction(&record).await?;
    if !record.seqs.is_empty() {
        let messages: Vec<(i64, i64)> = covered.iter().map(|m| (m.seq, m.view_tokens)).collect();
        tx.mark_summarized(&messages).await?;
    }
    Ok(())
}
