//! Readiness that tells the truth: a replica is ready while its database answers and
//! takes writes. A probe asks every [`PROBE_INTERVAL`] (`select pg_is_in_recovery()`,
//! bounded by [`PROBE_TIMEOUT`]); the gRPC health service says NOT_SERVING while the
//! answer is missing, late or "read-only", and SERVING again on the first good one.
//! `GET /readyz` on the metrics listener says the same (200 or 503); `GET /livez` is 200
//! while the process serves at all.
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::store::Store;

/// How often the database is asked.
pub const PROBE_INTERVAL: Duration = Duration::from_secs(1);
/// How long one probe may take before the database counts as unreachable.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(1);

/// Whether this replica is ready, as the last probe found.
#[derive(Debug, Clone)]
pub struct Readiness {
    ready: Arc<AtomicBool>,
}

impl Default for Readiness {
    fn default() -> Readiness {
        Readiness::new()
    }
}

impl Readiness {
    /// Ready until a probe says otherwise (the server starts only once its database
    /// answered).
    pub fn new() -> Readiness {
        Readiness {
            ready: Arc::new(AtomicBool::new(true)),
        }
    }

    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::Relaxed)
    }

    /// Probes `store` until `shutdown`, calling `changed` with each change of state.
    pub async fn watch<F, Fut>(self, store: Store, shutdown: CancellationToken, changed: F)
    where
        F: Fn(bool) -> Fut,
        Fut: std::future::Future<Output = ()>,
    {
        loop {
            let ready = matches!(
                tokio::time::timeout(PROBE_TIMEOUT, store.accepts_writes()).await,
                Ok(Ok(true))
            );
            if self.ready.swap(ready, Ordering::Relaxed) != ready {
                if ready {
                    tracing::info!("the database answers and takes writes again: ready");
                } else {
                    tracing::warn!("the database is unreachable or read-only: not ready");
                }
                changed(ready).await;
            }
            tokio::select! {
                () = tokio::time::sleep(PROBE_INTERVAL) => {}
                () = shutdown.cancelled() => return,
            }
        }
    }
}
