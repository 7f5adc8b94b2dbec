//! Compact: clearing and/or summarization down to a target, as a dry run, an emergency
//! pass, or a summarization job (optionally waited for).
use super::clearing::{Cleared, apply_to_view, plan_clearing};
use super::report::{policy_of, session_not_found, summary_region, view_estimate};
use super::summary_pass::{MAX_SUMMARY_PASSES, PassOptions, ViewNow};
use super::{CompactMode, CompactRequest, Compacted, Engine, JobReason};
use crate::error::{Error, Result};
use crate::events::CompactionKind;
use crate::summarizer::Writer;
use crate::tokenize::REPLY_PRIMING;

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
        let policy = policy_of(&row)?;
        // A manual Compact lifts the wait of automatic compaction after a revert (before
        // its job is enqueued, which would otherwise find it held).
        if !request.dry_run && row.compaction_resume_log_tokens != 0 {
            self.store.lift_compaction_hold(row.id).await?;
            row.compaction_resume_log_tokens = 0;
        }
        let mut stored = self.store.view(&row).await?;
        let mut summaries = if row.may_have_summaries() {
            self.store.active_summaries(row.id).await?
        } else {
            Vec::new()
        };
        // The prompt around the history: as the latest build sent it.
        let around = row.last_build_system_tokens.max(REPLY_PRIMING) + row.last_build_tool_tokens;
        let before =
            view_estimate(&row, &stored, around + summary_region(&summaries, &policy)).total_tokens;
        let target = if request.target_tokens > 0 {
            request.target_tokens
        } else {
            policy.clear_target_tokens()
        };
        let mut outcome = Compacted {
            tokens_before: before,
            tokens_after: before,
            cleared_seqs: Vec::new(),
            summarized_seqs: None,
            version: row.version,
            applied: false,
            job_id: None,
            job: None,
        };
        if matches!(
            request.mode,
            CompactMode::Auto | CompactMode::ClearToolResults
        ) {
            let plan = plan_clearing(&policy, &stored, before - target, 0);
            outcome.tokens_after -= plan.saved;
            outcome.cleared_seqs = plan.cleared.iter().map(|(seq, _)| *seq).collect();
            if !plan.cleared.is_empty() && !request.dry_run {
                match self.apply_clearing(tenant_id, &row, &policy, &plan).await? {
                    Ok(cleared) => {
                        apply_to_view(stored.to_mut(), &cleared);
                        row = cleared.row;
                        outcome.applied = true;
                    }
                    Err(current_version) => {
                        return Err(Error::Conflict {
                            current_version,
                            expected_version: row.version,
                        });
                    }
                }
            } else if !plan.cleared.is_empty() {
                let cleared = Cleared {
                    row: row.clone(),
                    cleared: plan.cleared.clone(),
                };
                apply_to_view(stored.to_mut(), &cleared);
                row.view_epoch += 1;
            }
        }
        let emergency = request.mode == CompactMode::Emergency;
        let summarize = matches!(
            request.mode,
            CompactMode::Auto | CompactMode::Summarize | CompactMode::Emergency
        );
        let total =
            view_estimate(&row, &stored, around + summary_region(&summaries, &policy)).total_tokens;
        if summarize && (request.dry_run || emergency) {
            // The provider just refused the request: the note is needed now, and it is
            // deterministic. A dry run previews with the extractive summarizer.
            let options = PassOptions {
                writer: Writer::Extractive,
                forced: true,
                dry_run: request.dry_run,
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
                (MAX_SUMMARY_PASSES, target)
            };
            let mut state = ViewNow {
                row,
                stored,
                summaries,
            };
            let progress = self
                .summarize_down(
                    tenant_id, &policy, &mut state, around, target, &options, passes,
                )
                .await?;
            ViewNow {
                row,
                stored,
                summaries,
            } = state;
            outcome.summarized_seqs = progress.summarized;
            outcome.applied |= progress.passes > 0 && !request.dry_run;
            outcome.tokens_after =
                view_estimate(&row, &stored, around + summary_region(&summaries, &policy))
                    .total_tokens;
        } else if summarize && (total > target || request.mode == CompactMode::Summarize) {
            // Summarizing is a job (the session's summarizer may be a model); with
            // `wait`, this call returns when it ends.
            let Some(mut tx) = self.store.lock_session(tenant_id, &row.external_id).await? else {
                return Err(session_not_found(&row.external_id));
            };
            let job = self.summarize_job(JobReason::Compact, target, request.wait.is_some());
            let (job_id, _) = tx.enqueue_job(&job, &self.config.notify_gate).await?;
            tx.commit().await?;
            outcome.job_id = Some(job_id);
            if let Some(timeout) = request.wait {
                let job = self.wait_job(tenant_id, job_id, timeout).await?;
                if let Some(result) = job.result.as_ref() {
                    let seq = |key: &str| result.get(key).and_then(|v| v.as_i64()).unwrap_or(0);
                    if seq("summarized_first_seq") > 0 {
                        outcome.summarized_seqs =
                            Some((seq("summarized_first_seq"), seq("summarized_last_seq")));
                        outcome.applied = true;
                    }
                }
                row = self.session_row(tenant_id, &request.session_id).await?;
                stored = self.store.view(&row).await?;
                summaries = self.store.active_summaries(row.id).await?;
                outcome.tokens_after =
                    view_estimate(&row, &stored, around + summary_region(&summaries, &policy))
                        .total_tokens;
                outcome.job = Some(job);
            }
        }
        if !request.dry_run {
            outcome.version = row.version;
            // A manual Compact lifts the loop guard's pause.
            if row.compaction_failures != 0 {
                self.store.set_compaction_failures(row.id, 0).await?;
            }
        }
        Ok(outcome)
    }
}
