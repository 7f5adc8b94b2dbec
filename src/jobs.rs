//! Job workers: N tokio tasks per replica claim jobs with FOR UPDATE SKIP LOCKED under a
//! lease, woken by LISTEN/NOTIFY (one listener per replica) with polling as the
//! fallback. A worker keeps its lease alive while the job runs; at shutdown a job still
//! running is given back, untouched, for another replica to take.
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Notify, Semaphore, broadcast, mpsc, oneshot};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::engine::Engine;
use crate::job::{Job, JobEnd, JobState};
use crate::metrics::metrics;
use crate::store::{JOB_DONE_CHANNEL, JOBS_CHANNEL, JobEnding, Store};

/// What runs a claimed job: the engine, or (in the queue benchmark) a no-op.
pub trait Runner: Clone + Send + Sync + 'static {
    fn store(&self) -> &Store;
    /// Runs the job; `final_attempt`: the last one it gets.
    fn run(
        &self,
        job: &Job,
        final_attempt: bool,
    ) -> impl std::future::Future<Output = JobEnd> + Send;
}

impl Runner for Engine {
    fn store(&self) -> &Store {
        Engine::store(self)
    }

    async fn run(&self, job: &Job, final_attempt: bool) -> JobEnd {
        self.run_job(job, final_attempt).await
    }
}

/// Worker settings.
#[derive(Debug, Clone)]
pub struct WorkerConfig {
    /// Worker tasks in this replica (0: this replica runs no jobs).
    pub workers: usize,
    /// How long a claim holds without renewal.
    pub lease: Duration,
    /// Queue polling when no NOTIFY arrives; also the rescue sweep's period.
    pub poll_interval: Duration,
    /// Finished jobs are deleted after this long.
    pub retention: Duration,
}

/// Starts the listener, the workers and the maintenance sweep. They stop when
/// `shutdown` is cancelled; wait for them on the returned set.
pub fn start<R: Runner>(
    engine: R,
    config: WorkerConfig,
    job_done: broadcast::Sender<i64>,
    shutdown: CancellationToken,
) -> JoinSet<()> {
    let wake = Arc::new(Notify::new());
    let mut tasks = JoinSet::new();
    tasks.spawn(listen(
        engine.clone(),
        wake.clone(),
        job_done,
        shutdown.clone(),
    ));
    let replica = format!("{}-{}", hostname(), std::process::id());
    let (finish, ends) = mpsc::channel(config.workers.max(1));
    tasks.spawn(finisher(engine.store().clone(), ends, config.lease));
    for index in 0..config.workers {
        let worker = Worker {
            engine: engine.clone(),
            name: format!("{replica}-{index}"),
            config: config.clone(),
            wake: wake.clone(),
            shutdown: shutdown.clone(),
            finish: finish.clone(),
        };
        tasks.spawn(worker.run());
    }
    tasks.spawn(maintain(engine, config, shutdown));
    tasks
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|name| name.trim().to_string())
        .unwrap_or_else(|_| "ctxd".to_string())
}

/// The replica's one LISTEN connection: new jobs wake the workers, ended jobs go to
/// whoever waits on them. Reconnects after a failure; workers poll meanwhile.
async fn listen<R: Runner>(
    engine: R,
    wake: Arc<Notify>,
    job_done: broadcast::Sender<i64>,
    shutdown: CancellationToken,
) {
    let mut delay = Duration::from_millis(100);
    while !shutdown.is_cancelled() {
        let mut listener = match engine.store().listener().await {
            Ok(listener) => listener,
            Err(error) => {
                tracing::warn!(%error, "job listener cannot connect; polling meanwhile");
                tokio::select! {
                    _ = tokio::time::sleep(delay) => {}
                    _ = shutdown.cancelled() => return,
                }
                delay = (delay * 2).min(Duration::from_secs(10));
                continue;
            }
        };
        if let Err(error) = listener.listen_all([JOBS_CHANNEL, JOB_DONE_CHANNEL]).await {
            tracing::warn!(%error, "job listener cannot LISTEN; polling meanwhile");
            continue;
        }
        delay = Duration::from_millis(100);
        // Anything announced while the listener was away: look now.
        wake.notify_waiters();
        loop {
            let notification = tokio::select! {
                notification = listener.try_recv() => notification,
                _ = shutdown.cancelled() => return,
            };
            match notification {
                Ok(Some(notification)) if notification.channel() == JOB_DONE_CHANNEL => {
                    if let Ok(id) = notification.payload().parse::<i64>() {
                        let _ = job_done.send(id);
                    }
                }
                Ok(Some(_)) => wake.notify_waiters(),
                Ok(None) => {
                    tracing::warn!("job listener lost its connection; reconnecting");
                    break;
                }
                Err(error) => {
                    tracing::warn!(%error, "job listener lost its connection; reconnecting");
                    break;
                }
            }
        }
    }
}

/// A worker's report of a job's end; the answer is whether it still held the job, and
/// the next job claimed for it.
struct Ending {
    id: i64,
    worker: String,
    end: JobEnd,
    take_next: bool,
    answer: oneshot::Sender<Result<(bool, Option<Job>), String>>,
}

/// Statements recording job ends that may run at once per replica.
const FINISH_STATEMENTS: usize = 2;

/// Records the ends of jobs for all of a replica's workers, batching the ones that
/// arrive together into one call that also claims each worker's next job: under load,
/// one commit serves many jobs. Up to [`FINISH_STATEMENTS`] calls run at once; ends
/// arriving meanwhile form the next batch. Ends when every worker has stopped.
async fn finisher(store: Store, mut ends: mpsc::Receiver<Ending>, lease: Duration) {
    let slots = Arc::new(Semaphore::new(FINISH_STATEMENTS));
    let mut running = JoinSet::new();
    loop {
        let Ok(slot) = slots.clone().acquire_owned().await else {
            break;
        };
        let mut batch = Vec::new();
        if ends.recv_many(&mut batch, 256).await == 0 {
            break;
        }
        let store = store.clone();
        running.spawn(async move {
            finish_batch(&store, batch, lease).await;
            drop(slot);
        });
        while running.try_join_next().is_some() {}
    }
    while running.join_next().await.is_some() {}
}

async fn finish_batch(store: &Store, batch: Vec<Ending>, lease: Duration) {
    let endings: Vec<JobEnding> = batch
        .iter()
        .map(|ending| JobEnding {
            id: ending.id,
            worker: &ending.worker,
            end: &ending.end,
        })
        .collect();
    let takers: Vec<&str> = batch
        .iter()
        .filter(|ending| ending.take_next)
        .map(|ending| ending.worker.as_str())
        .collect();
    let result = store.finish_jobs(&endings, &takers, lease).await;
    drop(endings);
    match result {
        Ok(mut finished) => {
            for ending in batch {
                let held = finished.held.contains(&ending.id);
                let next = finished
                    .claimed
                    .iter()
                    .position(|(worker, _)| *worker == ending.worker)
                    .map(|at| finished.claimed.swap_remove(at).1);
                let _ = ending.answer.send(Ok((held, next)));
            }
        }
        Err(error) => {
            let error = error.to_string();
            for ending in batch {
                let _ = ending.answer.send(Err(error.clone()));
            }
        }
    }
}

struct Worker<R> {
    engine: R,
    name: String,
    config: WorkerConfig,
    wake: Arc<Notify>,
    shutdown: CancellationToken,
    finish: mpsc::Sender<Ending>,
}

impl<R: Runner> Worker<R> {
    async fn run(self) {
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
        if let Err(error) = self.engine.store().release_job(job.id, &self.name).await {
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
                    match store.extend_lease(job.id, &self.name, self.config.lease).await {
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

/// Rescues jobs whose lease lapsed and prunes old finished ones.
async fn maintain<R: Runner>(engine: R, config: WorkerConfig, shutdown: CancellationToken) {
    let store = engine.store().clone();
    let mut ticks: u64 = 0;
    loop {
        tokio::select! {
            _ = tokio::time::sleep(config.poll_interval) => {}
            _ = shutdown.cancelled() => return,
        }
        match store.rescue_jobs().await {
            Ok(0) => {}
            Ok(rescued) => {
                metrics().jobs_rescued(rescued);
                tracing::warn!(rescued, "rescued jobs whose worker stopped");
            }
            Err(error) => tracing::warn!(%error, "cannot rescue jobs"),
        }
        ticks += 1;
        if ticks.is_multiple_of(60) {
            match store.prune_jobs(config.retention).await {
                Ok(0) => {}
                Ok(pruned) => tracing::info!(pruned, "pruned finished jobs"),
                Err(error) => tracing::warn!(%error, "cannot prune jobs"),
            }
        }
    }
}

/// How often the queue gauges' reading of the jobs table is refreshed.
pub const QUEUE_SAMPLE_INTERVAL: Duration = Duration::from_secs(5);

/// Reads the jobs table's unfinished jobs every [`QUEUE_SAMPLE_INTERVAL`] for the queue
/// gauges (one statement over the pending jobs' index), until `shutdown`. Runs only
/// when metrics are exported or served.
pub async fn sample_queue(store: Store, shutdown: CancellationToken) {
    loop {
        match store.job_queue_sample().await {
            Ok(sample) => metrics().set_job_queue(sample),
            Err(error) => tracing::warn!(%error, "cannot read the job queue for its gauges"),
        }
        tokio::select! {
            _ = tokio::time::sleep(QUEUE_SAMPLE_INTERVAL) => {}
            _ = shutdown.cancelled() => return,
        }
    }
}
