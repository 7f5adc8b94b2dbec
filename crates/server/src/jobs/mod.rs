//! Job workers: N tokio tasks per replica claim jobs with FOR UPDATE SKIP LOCKED under a
//! lease, woken by LISTEN/NOTIFY (one listener per replica) with polling as the
//! fallback. A worker keeps its lease alive while the job runs; at shutdown a job still
//! running is given back, untouched, for another replica to take.
//!
//! One file per background task: `listener` (the replica's LISTEN connection),
//! `worker` (claim, run, keep the lease), `finisher` (job ends recorded in batches),
//! `maintainer` (rescues, pruning, expired sessions), `sampler` (the queue gauges).
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Notify, broadcast, mpsc};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::engine::Engine;
use crate::job::{Job, JobEnd};
use crate::store::Store;

mod finisher;
mod listener;
mod maintainer;
mod sampler;
mod worker;

use finisher::finisher;
use listener::listen;
pub use maintainer::RETENTION_BATCH;
use maintainer::maintain;
pub use sampler::{QUEUE_SAMPLE_INTERVAL, sample_queue};
use worker::Worker;

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
