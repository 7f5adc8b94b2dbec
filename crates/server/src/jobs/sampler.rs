//! The queue gauges' reading of the jobs table.
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::metrics::metrics;
use crate::store::Store;

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
