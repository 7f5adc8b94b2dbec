//! The summarization pass: a chunk of the oldest turns (or of the newest turn's older
//! steps) becomes a summary, condensed with earlier ones, committed when no other
//! compaction got in first; and runs of passes down to a target.
use super::Engine;
use super::report::{note_budget, row_report, session_not_found, summary_region, view_estimate};
use crate::chunks;
use crate::error::Result;
use crate::events::{CompactionKind, EventDetail};
use crate::message::{Message, StoredMessage};
use crate::metrics::{CompactionMetric, metrics};
use crate::policy::Policy;
use crate::revert::Compaction;
use crate::session::{Session, Summary};
use crate::store::{NewCompaction, NewJob, NewSummary, SummarizedUpdate, View};
use crate::summarize;
use crate::summarizer::{self, Writer};
use crate::tokenize::REPLY_PRIMING;
use crate::turns;

/// Summarization passes one build may run (each takes one chunk).
pub(super) const MAX_SUMMARY_PASSES: usize = 16;

/// How a summarization pass runs.
#[derive(Debug, Clone)]
pub(super) struct PassOptions {
    /// Who writes the summaries.
    pub(super) writer: Writer,
    /// The request must shrink now: take every turn but the newest if no chunk qualifies.
    pub(super) forced: bool,
    /// Compute the pass, write nothing.
    pub(super) dry_run: bool,
    /// The provider refused the request for length: the oldest half of the turns (or,
    /// in a single turn, its older steps) at once, as a deterministic note.
    pub(super) emergency: bool,
    /// A job to enqueue with the commit (a proper summary, later).
    pub(super) follow_up: Option<NewJob>,
    /// What the COMPACTION_COMPLETED events call the pass.
    pub(super) compaction: CompactionKind,
    /// The job running the pass, when one does.
    pub(super) job_id: i64,
    /// Tokens the request must still shed to reach its target (0: none given): a step
    /// chunk takes as many whole steps as that needs in one pass.
    pub(super) shed_tokens: i64,
}

/// What a summarization pass covers, as indices into the view.
#[derive(Debug, Clone, Copy)]
enum Span {
    /// Whole turns at the start of the view: `..end`.
    Turns(usize),
    /// Older steps of the newest turn, after its user message: `from..to`.
    Steps(usize, usize),
}

impl Span {
    fn range(self) -> std::ops::Range<usize> {
        match self {
            Span::Turns(end) => 0..end,
            Span::Steps(from, to) => from..to,
        }
    }
}

/// A session's view as loaded: the row, the visible messages, the active summaries.
pub(super) struct ViewNow {
    pub(super) row: Session,
    pub(super) stored: View,
    pub(super) summaries: Vec<Summary>,
}

impl ViewNow {
    pub(super) fn total(&self, around: i64, policy: &Policy) -> i64 {
        view_estimate(
            &self.row,
            &self.stored,
            around + summary_region(&self.summaries, policy),
        )
        .total_tokens
    }
}

/// What a run of summarization passes did.
#[derive(Default)]
pub(super) struct Progress {
    pub(super) summarized: Option<(i64, i64)>,
    pub(super) passes: usize,
    pub(super) stale: bool,
    pub(super) failed: Option<crate::summarizer::model::CallError>,
}

/// How a summarization pass ended.
pub(super) enum Pass {
    Done(Box<SummaryPass>),
    /// Nothing to take, or no level made the summary smaller than its source.
    Nothing,
    /// Another compaction committed first; nothing was written.
    Stale,
    /// The model failed and deterministic truncation was not allowed.
    Failed(crate::summarizer::model::CallError),
}

/// A committed (or, on a dry run, computed) summarization pass.
pub(super) struct SummaryPass {
    /// The messages of the view it covered.
    pub(super) covered: std::ops::Range<usize>,
    pub(super) row: Session,
    pub(super) summaries: Vec<Summary>,
}

pub(super) fn summary_row(id: i64, summary: &NewSummary) -> Summary {
    Summary {
        id,
        depth: summary.depth,
        first_seq: summary.first_seq,
        last_seq: summary.last_seq,
        content: summary.content.clone(),
        token_count: i32::try_from(summary.token_count).unwrap_or(i32::MAX),
        level: summary.level,
        source_tokens: summary.source_tokens,
        facts: i32::try_from(summary.facts).unwrap_or(i32::MAX),
        facts_lost: i32::try_from(summary.facts_lost).unwrap_or(i32::MAX),
        retention: summary.retention,
    }
}

impl Engine {
    /// Summarization passes until the request is at most `target` (-1: exactly
    /// `max_passes` passes), there is nothing left to take, another compaction got in
    /// first, or the model failed. `state` follows what was committed.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn summarize_down(
        &self,
        tenant_id: i64,
        policy: &Policy,
        state: &mut ViewNow,
        around: i64,
        target: i64,
        options: &PassOptions,
        max_passes: usize,
    ) -> Result<Progress> {
        let mut progress = Progress::default();
        for _ in 0..max_passes {
            let total = view_estimate(
                &state.row,
                &state.stored,
                around + summary_region(&state.summaries, policy),
            )
            .total_tokens;
            if total <= target {
                break;
            }
            let options = PassOptions {
                shed_tokens: if target >= 0 { total - target } else { 0 },
                ..options.clone()
            };
            let pass = self
                .summarize_chunk(
                    tenant_id,
                    &state.row,
                    policy,
                    &state.stored,
                    &state.summaries,
                    &options,
                )
                .await?;
            let pass = match pass {
                Pass::Done(pass) => pass,
                Pass::Nothing => break,
                Pass::Stale => {
                    progress.stale = true;
                    break;
                }
                Pass::Failed(error) => {
                    progress.failed = Some(error);
                    break;
                }
            };
            let covered = (
                state.stored[pass.covered.start].seq,
                state.stored[pass.covered.end - 1].seq,
            );
            progress.summarized = Some(match progress.summarized {
                Some((first, _)) => (first, covered.1),
                None => covered,
            });
            state.stored.to_mut().drain(pass.covered.clone());
            state.row = pass.row;
            state.summaries = pass.summaries;
            progress.passes += 1;
        }
        Ok(progress)
    }

    /// Summarizes the leaf chunk at the start of `view` — whole turns outside the fresh
    /// tail — or, when the request must shrink and the newest turn is all that is left,
    /// the older steps of that turn (its user message stays). Extractive, three levels
    /// until the summary is smaller than what it covers; then runs of same-depth
    /// summaries are condensed, and it commits — only when no other compaction of the
    /// session committed meanwhile (appends are fine: they come after the chunk).
    pub(super) async fn summarize_chunk(
        &self,
        tenant_id: i64,
        row: &Session,
        policy: &Policy,
        view: &[StoredMessage],
        active: &[Summary],
        options: &PassOptions,
    ) -> Result<Pass> {
        let started = std::time::Instant::now();
        let PassOptions {
            forced,
            dry_run,
            emergency,
            ..
        } = *options;
        let tokens: Vec<i64> = view.iter().map(|m| m.view_tokens).collect();
        let starts = turns::turn_starts(view);
        // Where a chunk may end: a turn start that separates no call from its result.
        let safe = turns::safe_starts(view);
        let chunk_end = if emergency {
            // The oldest half of the turns (at least one), never the newest.
            let boundaries: Vec<usize> = safe.iter().copied().filter(|&s| s > 0).collect();
            boundaries
                .get(boundaries.len().saturating_sub(1) / 2)
                .copied()
        } else {
            chunks::leaf_chunk(&tokens, &safe, policy, forced)
        };
        let span = match chunk_end {
            Some(end) => Span::Turns(end),
            None if forced || emergency => {
                // The summary adds back up to its target: the chunk must hold that more.
                let cover = match options.shed_tokens {
                    0 => 0,
                    shed => shed.saturating_add(chunks::leaf_target(policy)),
                };
                match chunks::step_chunk(view, &tokens, &starts, policy, emergency, cover) {
                    Some((from, to)) => Span::Steps(from, to),
                    None => return Ok(Pass::Nothing),
                }
            }
            None => return Ok(Pass::Nothing),
        };
        let covered = span.range();
        let chunk: Vec<Message> = view[covered.clone()]
            .iter()
            .map(|m| m.message.clone())
            .collect();
        let source_tokens: i64 = tokens[covered.clone()].iter().sum();
        let (first_seq, last_seq) = (view[covered.start].seq, view[covered.end - 1].seq);
        // Step summaries of turns now summarized whole become the new summary's sources.
        let children: Vec<Summary> = active
            .iter()
            .filter(|s| s.first_seq >= first_seq && s.last_seq <= last_seq)
            .cloned()
            .collect();
        let child_ids: Vec<i64> = children.iter().map(|s| s.id).collect();
        let others: Vec<Summary> = active
            .iter()
            .filter(|s| !child_ids.contains(&s.id))
            .cloned()
            .collect();
        let previous = others
            .iter()
            .rev()
            .find(|s| s.last_seq < first_seq)
            .map(|s| s.content.clone());
        let counter = self.counter(policy).await?;
        let target = chunks::leaf_target(policy);
        let sizes = (
            policy.condense_fanin as usize,
            chunks::condensed_target(policy),
        );
        let child_texts: Vec<String> = children.iter().map(|s| s.content.clone()).collect();
        // What the new summary replaces: the visible messages and the step summaries.
        // (The step summaries each with its framing; the block's header stays.)
        let replaced_tokens = source_tokens
            + summarize::framed_tokens(children.iter().map(|s| i64::from(s.token_count))).0;
        let note = emergency.then_some(match span {
            Span::Turns(_) => {
                "Emergency compaction (the provider refused the request for its length): the oldest half of the conversation is reduced to this note.\n"
            }
            Span::Steps(..) => {
                "Emergency compaction (the provider refused the request for its length): one long turn was all there was; its user message and its newest step are kept, the steps between are reduced to this note.\n"
            }
        });
        let task = summarizer::Task {
            messages: chunk,
            children: child_texts,
            covered: None,
            previous,
            span: (first_seq, last_seq, 0),
            target_tokens: target,
            source_tokens: replaced_tokens,
            // With its note and its framing, the summary must still be smaller than what
            // it replaces: otherwise the pass would grow the request.
            added_tokens: summarize::SUMMARY_FRAMING_TOKENS
                + note.map_or(0, |note| counter.text(note)),
        };
        let leaf = match summarizer::write_summary(&options.writer, &counter, task).await {
            Ok(Some(mut leaf)) => {
                if let Some(note) = note {
                    leaf.content = format!("{note}{}", leaf.content);
                    leaf.token_count = counter.text(&leaf.content);
                }
                leaf
            }
            Ok(None) => {
                tracing::warn!(session_id = %row.external_id, first_seq, last_seq, "no summary level made progress");
                return Ok(Pass::Nothing);
            }
            Err(error) => return Ok(Pass::Failed(error)),
        };
        let log = (&self.store, row);
        let by = &options.writer;
        let condensed =
            match summarizer::plan_condensing(by, &counter, &others, &leaf, sizes, log).await? {
                Ok(condensed) => condensed,
                Err(error) => return Ok(Pass::Failed(error)),
            };
        let summaries_after = |leaf_id: i64, ids: &[i64]| {
            let mut all: Vec<Summary> = others
                .iter()
                .filter(|s| !condensed.iter().any(|step| step.children.contains(&s.id)))
                .cloned()
                .collect();
            match condensed.last() {
                Some(step) => all.push(summary_row(*ids.last().unwrap_or(&leaf_id), &step.summary)),
                None => all.push(summary_row(leaf_id, &leaf)),
            }
            all.sort_by_key(|s| s.first_seq);
            all
        };
        let moved = |mut after: Session| {
            if let Span::Turns(_) = span {
                after.view_first_seq = last_seq + 1;
            }
            after.view_tokens -= source_tokens;
            after.view_epoch += 1;
            after
        };
        if dry_run {
            let summaries = summaries_after(0, &[]);
            let mut after = moved(row.clone());
            after.summary_tokens = summary_region(&summaries, policy);
            return Ok(Pass::Done(Box::new(SummaryPass {
                covered,
                row: after,
                summaries,
            })));
        }

        let Some(mut tx) = self.store.lock_session(tenant_id, &row.external_id).await? else {
            return Err(session_not_found(&row.external_id));
        };
        // Another compaction committed meanwhile: this chunk may be covered already.
        // Appends since are fine (they come after the chunk).
        if tx.session.id != row.id || tx.session.view_epoch != row.view_epoch {
            return Ok(Pass::Stale);
        }
        let mut after = moved(tx.session.clone());
        let leaf_id = tx.insert_summary(&leaf, &child_ids).await?;
        let mut ids: Vec<i64> = Vec::new();
        let mut written = 1;
        let mut pending_children: Vec<i64> = Vec::new();
        for (index, step) in condensed.iter().enumerate() {
            // The first step condenses stored summaries (and the new leaf); later steps
            // condense the previous step's output with stored ones.
            let mut children = step.children.clone();
            if index == 0 {
                children.push(leaf_id);
            } else {
                children.append(&mut pending_children);
            }
            let id = tx.insert_summary(&step.summary, &children).await?;
            pending_children.push(id);
            ids.push(id);
            written += 1;
        }
        if let Some(job) = &options.follow_up {
            tx.enqueue_job(job, &self.config.notify_gate).await?;
        }
        let summaries = summaries_after(leaf_id, &ids);
        let summary_tokens = summary_region(&summaries, policy);
        after.summary_tokens = summary_tokens;
        after.summaries_written += written;
        after.version += 1;
        let around = row.last_build_system_tokens.max(REPLY_PRIMING) + row.last_build_tool_tokens;
        let view_total: i64 = tokens.iter().sum();
        let level = condensed
            .iter()
            .map(|step| step.summary.level)
            .fold(leaf.level, i16::max);
        if options.job_id == 0 {
            // Within a call the pass starts and commits at once; a job announced its
            // start when it began.
            tx.add_event(EventDetail::CompactionStarted {
                compaction: options.compaction,
                job_id: 0,
                attempt: 0,
            });
        }
        let tokens_before = around + summary_region(active, policy) + view_total;
        let tokens_after = around + summary_tokens + view_total - source_tokens;
        let messages_before = (view.len() + active.len()) as i64;
        let messages_after = (view.len() - covered.len() + summaries.len()) as i64;
        tx.add_event(EventDetail::CompactionCompleted {
            compaction: options.compaction,
            level: i32::from(level),
            tokens_before,
            tokens_after,
            messages_before,
            messages_after,
            first_seq,
            last_seq,
            summary_id: ids.last().copied().unwrap_or(leaf_id),
            summaries_written: written as i32,
            duration_ms: started.elapsed().as_millis() as i64,
            job_id: options.job_id,
        });
        // Recorded (with the view of the messages it takes out before) so that
        // RevertCompaction can undo it; then the older steps leave the view.
        let step_seqs: Vec<i64> = match span {
            Span::Steps(..) => view[covered.clone()].iter().map(|m| m.seq).collect(),
            Span::Turns(_) => Vec::new(),
        };
        let mut written_ids = vec![leaf_id];
        written_ids.extend(&ids);
        let record = NewCompaction {
            compaction: Compaction::Summary(options.compaction),
            event_seq: tx.queued_event_seq(),
            view_tokens_delta: after.view_tokens - tx.session.view_tokens,
            summary_tokens_delta: summary_tokens - tx.session.summary_tokens,
            seqs: step_seqs,
            summary_ids: written_ids,
            first_seq,
            last_seq,
        };
        tx.record_compaction(&record).await?;
        if !record.seqs.is_empty() {
            let messages: Vec<(i64, i64)> = view[covered.clone()]
                .iter()
                .map(|m| (m.seq, m.view_tokens))
                .collect();
            tx.mark_summarized(&messages).await?;
        }
        note_budget(&mut tx, &row_report(policy, &after));
        tx.commit_summarized(SummarizedUpdate {
            view_first_seq: after.view_first_seq,
            view_tokens: after.view_tokens,
            summary_tokens,
            summaries_written: written,
        })
        .await?;
        metrics().compaction_committed(
            match options.compaction {
                CompactionKind::Summarize => CompactionMetric::Summarize,
                CompactionKind::Fallback => CompactionMetric::Fallback,
                CompactionKind::Emergency => CompactionMetric::Emergency,
            },
            i64::from(level),
            tokens_before - tokens_after,
            messages_before - messages_after,
        );
        tracing::info!(
            session_id = %row.external_id,
            first_seq,
            last_seq,
            source_tokens,
            summary_tokens = leaf.token_count,
            level = leaf.level,
            steps = matches!(span, Span::Steps(..)),
            condensed = condensed.len(),
            "summarized"
        );
        Ok(Pass::Done(Box::new(SummaryPass {
            covered,
            row: after,
            summaries,
        })))
    }
}
