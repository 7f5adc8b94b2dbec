//! The accept loop the HTTP listeners share (metrics and probes, the provider
//! endpoint): connections bounded in number, accept errors (out of file descriptors and
//! the like) waited out briefly, everything stopped by the shutdown token.
use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

/// The next connection with its slot among `max` (a connection over the bound is closed
/// at once), or `None` once `shutdown` is cancelled. `what` names the listener in logs.
pub async fn next_connection(
    listener: &TcpListener,
    slots: &Arc<Semaphore>,
    max: usize,
    what: &str,
    shutdown: &CancellationToken,
) -> Option<(TcpStream, OwnedSemaphorePermit)> {
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = shutdown.cancelled() => return None,
        };
        match accepted {
            Ok((stream, _)) => match slots.clone().try_acquire_owned() {
                Ok(slot) => return Some((stream, slot)),
                Err(_) => tracing::warn!(max, "{what}: too many connections; closing a new one"),
            },
            Err(error) => {
                tracing::warn!(%error, "{what}: accept failed");
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_millis(100)) => {}
                    () = shutdown.cancelled() => return None,
                }
            }
        }
    }
}
