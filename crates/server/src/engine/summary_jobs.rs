//! Summarization jobs: what they carry, reading and waiting for them, and running one
//! (announced, retried with backoff, ended through its fallback on the last attempt).
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;

use super::report::session_not_found;
use super::summary_pass::{MAX_SUMMARY_PASSES, PassOptions, ViewNow};
use super::{Engine, JobReason, SUMMARIZE_JOB};
use crate::error::{Error, Result};
use crate::events::{CompactionKind, EventDetail};
use crate::job::{Job, JobEnd};
use crate::session::Session;
use crate::store::NewJob;
use crate::summarizer::Writer;
use crate::tokenize::REPLY_PRIMING;

/// A summarize job's arguments.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct SummarizeArgs {
    reason: JobReason,
    /// 0: the policy's clear target.
    target_tokens: i64,
}

impl Engine {
    pub(super) fn summarize_job(
        &self,
        reason: JobReason,
        target_tokens: i64,
        wait: bool,
    ) -> NewJob {
        NewJob {
            kind: SUMMARIZE_JOB,
            args: serde_json::to_value(SummarizeArgs {
                reason,
                target_tokens,
            })
            .unwrap_or_default(),
            // A client waiting on Compact goes before background work.
            priority: if reason == JobReason::Compact { 10 } else { 0 },
            max_attempts: self.config.job_max_attempts,
            notify_done: wait,
        }
    }

    /// A job of the tenant's.
    pub async fn job(&self, tenant_id: i64, job_id: i64) -> Result<Job> {
        self.store
            .job(tenant_id, job_id)
            .await?
            .ok_or_else(|| Error::not_found(format!("job {job_id}")))
    }

    /// The job once it has ended, or as it stands when `timeout` runs out.
    pub async fn wait_job(&self, tenant_id: i64, job_id: i64, timeout: Duration) -> Result<Job> {
        let deadline = tokio::time::Instant::now() + timeout;
        // Subscribed before reading, so an end announced in between is not missed.
        let mut done = self.config.job_done.subscribe();
        loop {
            let job = self.job(tenant_id, job_id).await?;
            if job.is_finished() || tokio::time::Instant::now() >= deadline {
                return Ok(job);
            }
            // Announcements come from every replica's workers; the re-read every
            // second covers a listener that is reconnecting.
            let tick = (tokio::time::Instant::now() + Duration::from_secs(1)).min(deadline);
            loop {
                tokio::select! {
                    announced = done.recv() => match announced {
                        Ok(id) if id != job_id => continue,
                        Err(broadcast::error::RecvError::Closed) => {
                            tokio::time::sleep_until(tick).await;
                        }
                        _ => {}
                    },
                    _ = tokio::time::sleep_until(tick) => {}
                }
                break;
            }
        }
    }

    /// Runs a claimed job; says how it ended. `final_attempt`: the last one it gets.
    pub async fn run_job(&self, job: &Job, final_attempt: bool) -> JobEnd {
        if job.kind != SUMMARIZE_JOB {
            return JobEnd::Failed {
                error: format!("unknown job kind {:?}", job.kind),
                retry_in: None,
            };
        }
        let end = match self.run_summarize_job(job, final_attempt).await {
            Ok(end) => job.fallback_end(end),
            Err(Error::NotFound { .. }) => JobEnd::Cancelled("the session was deleted".into()),
            Err(error) => {
                tracing::warn!(job_id = job.id, %error, "job failed");
                JobEnd::Failed {
                    error: error.to_string(),
                    retry_in: Some(self.backoff(job.attempts)),
                }
            }
        };
        if let JobEnd::Failed { error, retry_in } = &end {
            let failed = EventDetail::CompactionFailed {
                compaction: CompactionKind::Summarize,
                error: error.clone(),
                job_id: job.id,
                attempt: job.attempts,
                will_retry: retry_in.is_some() && !final_attempt,
            };
            if let Err(error) = self.announce(job, failed).await {
                tracing::warn!(job_id = job.id, %error, "could not record the job's failure event");
            }
        }
        end
    }

    /// Writes an event about a job's session in a transaction of its own.
    async fn announce(&self, job: &Job, detail: EventDetail) -> Result<()> {
        let Some(mut tx) = self
            .store
            .lock_session(job.tenant_id, &job.external_id)
            .await?
        else {
            return Err(session_not_found(&job.external_id));
        };
        if tx.session.id != job.session_id {
            return Err(session_not_found(&job.external_id));
        }
        tx.add_event(detail);
        tx.commit().await?;
        Ok(())
    }

    /// Exponential backoff with jitter: base × 2^(attempt-1) × [0.5, 1.5), at most 10 min.
    fn backoff(&self, attempt: i32) -> Duration {
        let base = self.config.job_backoff.as_secs_f64() * 2f64.powi((attempt - 1).clamp(0, 20));
        let mut byte = [0u8; 1];
        let _ = getrandom::fill(&mut byte);
        let jitter = 0.5 + f64::from(byte[0]) / 256.0;
        Duration::from_secs_f64((base * jitter).min(600.0))
    }

    async fn run_summarize_job(&self, job: &Job, final_attempt: bool) -> Result<JobEnd> {
        let args: SummarizeArgs = serde_json::from_value(job.args.clone())
            .map_err(|_| Error::invalid("args", "a summarize job's arguments are not readable"))?;
        let row = self.session_row(job.tenant_id, &job.external_id).await?;
        if row.id != job.session_id {
            return Err(session_not_found(&job.external_id));
        }
        let policy = row.policy.clone();
        let model = match self.model_for(&policy) {
            Ok(model) => model,
            Err(error) => {
                return Ok(JobEnd::Failed {
                    error: error.to_string(),
                    retry_in: None,
                });
            }
        };
        let failure = Arc::new(std::sync::Mutex::new(job.fallback_failure()));
        let writer = job_writer(job, model, final_attempt, &failure);
        let around = row.builds.last.system_tokens.max(REPLY_PRIMING) + row.builds.last.tool_tokens;
        let mut state = self.view_now(row).await?;
        let tokens_before = state.total(around, &policy);
        let summarize_at = policy.summarize_threshold_tokens();
        let paused = i64::from(state.row.compaction_failures) >= policy.compaction_failure_limit;
        // A revert after the job was enqueued holds it too, even a Compact's (a Compact
        // after the revert lifted the hold before enqueueing).
        let held = state.row.compaction_held();
        if held || (args.reason != JobReason::Compact && (tokens_before <= summarize_at || paused))
        {
            return Ok(not_due(held, tokens_before));
        }
        // A Compact's own target, else down to the clear target.
        let target = Some(args.target_tokens)
            .filter(|tokens| *tokens > 0)
            .unwrap_or_else(|| policy.clear_target_tokens());
        self.announce(
            job,
            EventDetail::CompactionStarted {
                compaction: CompactionKind::Summarize,
                job_id: job.id,
                attempt: job.attempts,
            },
        )
        .await?;
        let options = PassOptions {
            writer,
            forced: true,
            dry_run: false,
            emergency: false,
            follow_up: None,
            compaction: CompactionKind::Summarize,
            job_id: job.id,
            shed_tokens: 0,
        };
        let mut summarized: Option<(i64, i64)> = None;
        let mut passes = 0;
        // Another compaction committing first discards this pass's result (never
        // applied twice); the job starts over from what is there now.
        for _ in 0..3 {
            let progress = self
                .summarize_down(
                    job.tenant_id,
                    &policy,
                    &mut state,
                    around,
                    target,
                    &options,
                    MAX_SUMMARY_PASSES,
                )
                .await?;
            passes += progress.passes;
            if let Some((first, last)) = progress.summarized {
                summarized = Some((summarized.map_or(first, |(f, _)| f), last));
            }
            if let Some(error) = progress.failed {
                return Ok(JobEnd::Failed {
                    error: error.to_string(),
                    retry_in: Some(self.backoff(job.attempts)),
                });
            }
            if !progress.stale {
                break;
            }
            let row = self.session_row(job.tenant_id, &job.external_id).await?;
            if row.compaction_held() {
                // What got in first was a revert: the job does not redo what it undid.
                state = self.view_now(row).await?;
                break;
            }
            state = self.view_now(row).await?;
        }
        let tokens_after = state.total(around, &policy);
        let ran = Ran {
            tokens_before,
            tokens_after,
            summarized,
            passes,
        };
        Ok(job_end(&ran, &failure))
    }

    pub(super) async fn view_now(&self, row: Session) -> Result<ViewNow> {
        let stored = self.store.view(&row).await?;
        let summaries = if row.may_have_summaries() {
            self.store.active_summaries(&row).await?
        } else {
            Vec::new()
        };
        Ok(ViewNow {
            row,
            stored,
            summaries,
        })
    }
}

/// What writes a job's summaries: deterministic truncation for a job's fallback
/// attempt, the built-in summarizer, or the session's model (truncating on the final
/// attempt, its failure kept in `failure`).
fn job_writer(
    job: &Job,
    model: Option<Arc<crate::summarizer::model::ModelSummarizer>>,
    final_attempt: bool,
    failure: &Arc<std::sync::Mutex<Option<String>>>,
) -> Writer {
    match model {
        _ if job.fallback => Writer::Truncation,
        None => Writer::Extractive,
        Some(model) => Writer::Model {
            model,
            truncate: final_attempt,
            failure: failure.clone(),
        },
    }
}

/// A job that found nothing to do: already done (by BuildMessages' fallback or an
/// earlier job), paused, or held after a revert.
fn not_due(held: bool, tokens: i64) -> JobEnd {
    JobEnd::Completed(serde_json::json!({
        "due": false,
        "held": held,
        "tokens_before": tokens,
        "tokens_after": tokens,
    }))
}

/// What a job that ran did: the session's tokens before and after, the seqs it
/// summarized, its passes.
struct Ran {
    tokens_before: i64,
    tokens_after: i64,
    summarized: Option<(i64, i64)>,
    passes: usize,
}

/// How a job that ran ends: completed with its figures, or failed with the model's error
/// when deterministic truncation stood in for the model on the last attempt.
fn job_end(ran: &Ran, failure: &Arc<std::sync::Mutex<Option<String>>>) -> JobEnd {
    let (first, last) = ran.summarized.unwrap_or((0, 0));
    let result = serde_json::json!({
        "due": true,
        "tokens_before": ran.tokens_before,
        "tokens_after": ran.tokens_after,
        "summarized_first_seq": first,
        "summarized_last_seq": last,
        "passes": ran.passes,
    });
    let model_failure = failure.lock().ok().and_then(|mut f| f.take());
    if let Some(error) = model_failure {
        // The last attempt fell back to deterministic truncation: the session made
        // progress, the job ends with the model's error.
        return JobEnd::Failed {
            error: format!("{error}; deterministic truncation was applied instead"),
            retry_in: None,
        };
    }
    JobEnd::Completed(result)
}
