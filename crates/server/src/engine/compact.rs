//! Compact: clearing and/or summarization down to a target, as a dry run, an emergency
//! pass, or a summarization job (optionally waited for).
use super::clearing::{Cleared, apply_to_view, plan_clearing};
use super::report::session_not_found;
use super::summary_pass::{MAX_SUMMARY_PASSES, PassOptions, ViewNow};
use super::{CompactMode, CompactRequest, Compacted, Engine, JobReason};
use crate::error::{Error, Result};
use crate::events::CompactionKind;
use crate::policy::Policy;
use crate::summarizer::Writer;
use crate::tokenize::REPLY_PRIMING;

/// What every phase of a Compact works on: the request, the session's policy, the view
/// as it stands, the tokens around the history (as the latest build sent them) and the
/// target.
struct Work<'a> {
    tenant_id: i64,
    request: &'a CompactRequest,
    policy: Policy,
    state: ViewNow,
    around: i64,
    target: i64,
}

impl Work<'_> {
    fn total(&self) -> i64 {
        self.state.total(self.around, &self.policy)
    }
}

impl Engine {
    /// Compact: clears old tool results and/or summarizes the oldest turns down to a
    /// target, or says what it would do.
    pub async fn compact(&self, tenant_id: i64, request: CompactRequest) -> Result<Compacted> {
        if request.target_tokens < 0 {
            return Err(Error::invalid(
                "target_tokens",
                format!(
                    "must be 0 (the policy's clear target) or positive, got {}",
                    request.target_tokens
                ),
            ));
        }
        let mut row = self.session_row(tenant_id, &request.session_id).await?;
        let policy = row.policy.clone();
        // A manual Compact lifts the wait of automatic compaction after a revert (before
        // its job is enqueued, which would otherwise find it held).
        if !request.dry_run && row.compaction_resume_log_tokens != 0 {
            self.store.lift_compaction_hold(&row).await?;
            row.compaction_resume_log_tokens = 0;
        }
        let around = row.builds.last.system_tokens.max(REPLY_PRIMING) + row.builds.last.tool_tokens;
        let target = Some(request.target_tokens)
            .filter(|tokens| *tokens > 0)
            .unwrap_or_else(|| policy.clear_target_tokens());
        let mut work = Work {
            tenant_id,
            request: &request,
            policy,
            state: self.view_now(row).await?,
            around,
            target,
        };
        let before = work.total();
        let mut outcome = Compacted {
            tokens_before: before,
            tokens_after: before,
            cleared_seqs: Vec::new(),
            summarized_seqs: None,
            version: work.state.row.version,
            applied: false,
            job_id: None,
            job: None,
        };
        if matches!(
            request.mode,
            CompactMode::Auto | CompactMode::ClearToolResults
        ) {
            self.clear_for_compact(&mut work, &mut outcome).await?;
        }
        let emergency = request.mode == CompactMode::Emergency;
        let summarize = matches!(
            request.mode,
            CompactMode::Auto | CompactMode::Summarize | CompactMode::Emergency
        );
        if summarize && (request.dry_run || emergency) {
            self.summarize_for_compact(&mut work, &mut outcome).await?;
        } else if summarize && (work.total() > target || request.mode == CompactMode::Summarize) {
            self.enqueue_for_compact(&mut work, &mut outcome).await?;
        }
        let row = &work.state.row;
        if !request.dry_run {
            outcome.version = row.version;
            // A manual Compact lifts the loop guard's pause.
            if row.compaction_failures != 0 {
                self.store.set_compaction_failures(row, 0).await?;
            }
        }
        Ok(outcome)
    }

    /// Clears old tool results down to the target (in the view only, for a dry run).
    async fn clear_for_compact(&self, work: &mut Work<'_>, outcome: &mut Compacted) -> Result<()> {
        let state = &mut work.state;
        let plan = plan_clearing(
            &work.policy,
            &state.stored,
            outcome.tokens_before - work.target,
            0,
        );
        outcome.tokens_after -= plan.saved;
        outcome.cleared_seqs = plan.cleared.iter().map(|(seq, _)| *seq).collect();
        if plan.cleared.is_empty() {
            return Ok(());
        }
        if work.request.dry_run {
            let cleared = Cleared {
                row: state.row.clone(),
                cleared: plan.cleared.clone(),
            };
            apply_to_view(state.stored.to_mut(), &cleared);
            state.row.view_epoch += 1;
            return Ok(());
        }
        match self
            .apply_clearing(work.tenant_id, &state.row, &work.policy, &plan)
            .await?
        {
            Ok(cleared) => {
                apply_to_view(state.stored.to_mut(), &cleared);
                state.row = cleared.row;
                outcome.applied = true;
                Ok(())
            }
            Err(current_version) => Err(Error::Conflict {
                current_version,
                expected_version: state.row.version,
            }),
        }
    }

    /// Summarizes at once, deterministically: the provider just refused the request (an
    /// emergency: the note is needed now), or a dry run previews it.
    async fn summarize_for_compact(
        &self,
        work: &mut Work<'_>,
        outcome: &mut Compacted,
    ) -> Result<()> {
        let emergency = work.request.mode == CompactMode::Emergency;
        let options = PassOptions {
            writer: Writer::Extractive,
            forced: true,
            dry_run: work.request.dry_run,
            emergency,
            follow_up: None,
            compaction: if emergency {
                CompactionKind::Emergency
            } else {
                CompactionKind::Summarize
            },
            job_id: 0,
            shed_tokens: 0,
        };
        // Emergency is one pass whatever the target: the oldest half at once.
        let (passes, target) = if emergency {
            (1, -1)
        } else {
            (MAX_SUMMARY_PASSES, work.target)
        };
        let progress = self
            .summarize_down(
                work.tenant_id,
                &work.policy,
                &mut work.state,
                work.around,
                target,
                &options,
                passes,
            )
            .await?;
        outcome.summarized_seqs = progress.summarized;
        outcome.applied |= progress.passes > 0 && !work.request.dry_run;
        outcome.tokens_after = work.total();
        Ok(())
    }

    /// Summarizing as a job (the session's summarizer may be a model); with `wait`, it
    /// returns when the job ends.
    async fn enqueue_for_compact(
        &self,
        work: &mut Work<'_>,
        outcome: &mut Compacted,
    ) -> Result<()> {
        let external_id = work.state.row.external_id.clone();
        let Some(mut tx) = self
            .store
            .lock_session(work.tenant_id, &external_id)
            .await?
        else {
            return Err(session_not_found(&external_id));
        };
        let job = self.summarize_job(JobReason::Compact, work.target, work.request.wait.is_some());
        let (job_id, _) = tx.enqueue_job(&job, &self.config.notify_gate).await?;
        tx.commit().await?;
        outcome.job_id = Some(job_id);
        let Some(timeout) = work.request.wait else {
            return Ok(());
        };
        let job = self.wait_job(work.tenant_id, job_id, timeout).await?;
        if let Some(result) = job.result.as_ref() {
            let seq = |key: &str| result.get(key).and_then(|v| v.as_i64()).unwrap_or(0);
            if seq("summarized_first_seq") > 0 {
                outcome.summarized_seqs =
                    Some((seq("summarized_first_seq"), seq("summarized_last_seq")));
                outcome.applied = true;
            }
        }
        let row = self
            .session_row(work.tenant_id, &work.request.session_id)
            .await?;
        // Read again: the job's summaries are new.
        let stored = self.store.view(&row).await?;
        let summaries = self.store.active_summaries(&row).await?;
        work.state = ViewNow {
            row,
            stored,
            summaries,
        };
        outcome.tokens_after = work.total();
        outcome.job = Some(job);
        Ok(())
    }
}
