//! The maintenance sweep: rescues jobs whose lease lapsed, prunes old finished ones.
use tokio_util::sync::CancellationToken;

use super::{Runner, WorkerConfig};
use crate::metrics::metrics;

/// Rescues jobs whose lease lapsed and prunes old finished ones.
pub(super) async fn maintain<R: Runner>(
    engine: R,
    config: WorkerConfig,
    shutdown: CancellationToken,
) {
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
