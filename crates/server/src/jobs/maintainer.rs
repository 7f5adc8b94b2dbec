//! The maintenance sweep: rescues jobs whose lease lapsed, prunes old finished ones,
//! deletes sessions past their policy's retention.
use tokio_util::sync::CancellationToken;

use super::{Runner, WorkerConfig};
use crate::events::EventDetail;
use crate::metrics::metrics;
use crate::store::{Deletion, Store};

/// Most sessions one sweep deletes: a backlog of expired sessions goes in bounded
/// batches, one per poll interval, never in one long burst of writes.
pub const RETENTION_BATCH: i64 = 100;

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
        expire_sessions(&store).await;
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

/// Deletes up to RETENTION_BATCH sessions past their retention, each with its
/// SESSION_DELETED event, as DeleteSession does (another replica sweeping the same
/// session finds it gone; a write meanwhile keeps it).
async fn expire_sessions(store: &Store) {
    let expired = match store.expired_sessions(RETENTION_BATCH).await {
        Ok(expired) => expired,
        Err(error) => return tracing::warn!(%error, "cannot read expired sessions"),
    };
    for (tenant_id, session_id) in expired {
        let deleted = store
            .delete_session(
                tenant_id,
                &session_id,
                &EventDetail::SessionDeleted,
                Deletion::Expired,
            )
            .await;
        match deleted {
            Ok(Some(_)) => metrics().session_expired(),
            Ok(None) => {}
            Err(error) => tracing::warn!(%error, tenant_id, "cannot delete an expired session"),
        }
    }
}
