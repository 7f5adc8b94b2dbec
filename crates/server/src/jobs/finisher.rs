//! Job ends recorded in batches for all of a replica's workers.
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Semaphore, mpsc, oneshot};
use tokio::task::JoinSet;

use crate::job::{Job, JobEnd};
use crate::store::{JobEnding, Store};

/// A worker's report of a job's end; the answer is whether it still held the job, and
/// the next job claimed for it.
pub(super) struct Ending {
    pub id: i64,
    pub tenant_id: i64,
    pub worker: String,
    pub end: JobEnd,
    pub take_next: bool,
    pub answer: oneshot::Sender<Result<(bool, Option<Job>), String>>,
}

/// Statements recording job ends that may run at once per replica.
const FINISH_STATEMENTS: usize = 2;

/// Records the ends of jobs for all of a replica's workers, batching the ones that
/// arrive together into one call that also claims each worker's next job: under load,
/// one commit serves many jobs. Up to [`FINISH_STATEMENTS`] calls run at once; ends
/// arriving meanwhile form the next batch. Ends when every worker has stopped.
pub(super) async fn finisher(store: Store, mut ends: mpsc::Receiver<Ending>, lease: Duration) {
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
            tenant_id: ending.tenant_id,
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
