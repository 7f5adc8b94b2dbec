//! A worker: claims a job, runs it under a lease it keeps alive, reports its end.
use std::sync::Arc;

use tokio::sync::{Notify, mpsc, oneshot};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::finisher::Ending;
use super::{Runner, WorkerConfig};
use crate::job::{Job, JobEnd, JobState};
use crate::metrics::metrics;

pub(super) struct Worker<R> {
    pub engine: R,
    pub name: String,
    pub config: WorkerConfig,
    pub wake: Arc<Notify>,
    pub shutdown: CancellationToken,
    pub finish: mpsc::Sender<Ending>,
}

impl<R: Runner> Worker<R> {
    pub async fn run(self) {
        let store = self.engine.store().clone();
        // A job claimed together with the previous one's end.
        let mut next: Option<Job> = None;
        while !self.shutdown.is_cancelled() {
            // Registered before the claim, so a NOTIFY that lands while claiming counts.
            let woken = self.wake.notified();
            tokio::pin!(woken);
            woken.as_mut().enable();
            let claimed = match next.take() {
                Some(job) => Ok(Some(job)),
                None => store.claim_job(&self.name, self.config.lease).await,
            };
            match claimed {
                Ok(Some(job)) => {
                    let span = tracing::info_span!(
                        "job",
                        job_id = job.id,
                        kind = %job.kind,
                        session_id = %job.external_id,
                        attempt = job.attempts,
                        outcome = tracing::field::Empty,
                    );
                    next = self.execute(job).instrument(span).await;
                    continue;
                }
                Ok(None) => {}
                Err(error) => tracing::warn!(%error, "cannot claim jobs"),
            }
            tokio::select! {
                _ = woken => {}
                _ = tokio::time::sleep(self.config.poll_interval) => {}
                _ = self.shutdown.cancelled() => {}
            }
        }
        if let Some(job) = next {
            // Claimed as shutdown began: not started, given back.
            self.release(&job).await;
        }
    }

    /// Gives a claimed job back at shutdown, for another replica to take.
    async fn release(&self, job: &Job) {
        if let Err(error) = self
            .engine
            .store()
            .release_job(job.id, job.tenant_id, &self.name)
            .await
        {
            tracing::warn!(%error, "cannot release a job at shutdown; its lease will lapse");
        }
    }

    /// Runs one job under a renewed lease and records its end, claiming the next due
    /// job in the same statement (returned). At shutdown the job is released instead
    /// (its effects commit atomically, so none are half-applied).
    async fn execute(&self, job: Job) -> Option<Job> {
        let store = self.engine.store();
        metrics().job_started();
        let final_attempt = job.attempts >= job.max_attempts;
        let mut run = Box::pin(self.engine.run(&job, final_attempt));
        let renew_every = self.config.lease / 3;
        let end = loop {
            tokio::select! {
                end = &mut run => break Some(end),
                _ = tokio::time::sleep(renew_every) => {
                    match store.extend_lease(job.id, job.tenant_id, &self.name, self.config.lease).await {
                        Ok(true) => {}
                        Ok(false) => {
                            // Rescued by another worker meanwhile; whatever this one
                            // commits is checked against the session's state anyway.
                            tracing::warn!("lost the job's lease");
                        }
                        Err(error) => tracing::warn!(%error, "cannot renew the job's lease"),
                    }
                }
                _ = self.shutdown.cancelled() => break None,
            }
        };
        let Some(mut end) = end else {
            // Not polled again: its transaction, if any, rolls back.
            drop(run);
            self.release(&job).await;
            tracing::Span::current().record("outcome", "released");
            return None;
        };
        let outcome = match end.state() {
            // The last attempt is not retried.
            JobState::Retryable if final_attempt => JobState::Discarded,
            state => state,
        };
        tracing::Span::current().record("outcome", outcome.as_str());
        metrics().job_ended(outcome.as_str());
        if let JobEnd::Completed(serde_json::Value::Object(result)) = &mut end {
            result.insert("worker".into(), self.name.clone().into());
        }
        if let JobEnd::Failed { error, .. } = &end {
            tracing::warn!(%error, "job failed");
        }
        let (answer, answered) = oneshot::channel();
        let ending = Ending {
            id: job.id,
            tenant_id: job.tenant_id,
            worker: self.name.clone(),
            end,
            take_next: !self.shutdown.is_cancelled(),
            answer,
        };
        let answer = match self.finish.send(ending).await {
            Ok(()) => answered
                .await
                .unwrap_or_else(|_| Err("the finisher stopped".into())),
            Err(_) => Err("the finisher stopped".into()),
        };
        match answer {
            Ok((held, next)) => {
                if held {
                    tracing::info!("job finished");
                } else {
                    tracing::warn!("the job was rescued by another worker; its end is theirs");
                }
                next
            }
            Err(error) => {
                tracing::warn!(%error, "cannot record the job's end; its lease will lapse");
                None
            }
        }
    }
}
