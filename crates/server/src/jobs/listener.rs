//! The replica's one LISTEN connection for jobs.
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Notify, broadcast};
use tokio_util::sync::CancellationToken;

use super::Runner;
use crate::store::{JOB_DONE_CHANNEL, JOBS_CHANNEL};

/// The replica's one LISTEN connection: new jobs wake the workers, ended jobs go to
/// whoever waits on them. Reconnects after a failure; workers poll meanwhile.
pub(super) async fn listen<R: Runner>(
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
