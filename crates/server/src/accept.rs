//! The accept loop and connection serving the HTTP listeners share (metrics and probes, the provider
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

/// Serves one HTTP/1.1 connection with `service` until it ends, giving the client
/// `header_timeout` for each request head; `shutdown` ends it gracefully.
pub async fn serve_http1<I, S, B>(
    io: I,
    service: S,
    header_timeout: Duration,
    what: &str,
    shutdown: &CancellationToken,
) where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    S: hyper::service::HttpService<hyper::body::Incoming, ResBody = B>,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    B: hyper::body::Body + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let connection = hyper::server::conn::http1::Builder::new()
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(header_timeout)
        .serve_connection(hyper_util::rt::TokioIo::new(io), service);
    tokio::pin!(connection);
    tokio::select! {
        result = connection.as_mut() => {
            if let Err(error) = result {
                tracing::debug!(%error, "{what}: connection ended");
            }
        }
        () = shutdown.cancelled() => connection.as_mut().graceful_shutdown(),
    }
}

/// How an HTTP/1.1 listener serves: at most `max_connections` at once (more are closed
/// at once), `header_timeout` for a request head and a TLS handshake, `what` in logs.
pub struct Http1 {
    pub what: &'static str,
    pub max_connections: usize,
    pub header_timeout: Duration,
}

/// Serves HTTP/1.1 on `listener` (over TLS when `tls` is given) until `shutdown`, each
/// request answered by `handle`.
pub async fn serve_http1_listener<H, F, B>(
    listener: TcpListener,
    tls: Option<Arc<crate::tls::ServerTls>>,
    shutdown: CancellationToken,
    settings: Http1,
    handle: H,
) where
    H: Fn(hyper::Request<hyper::body::Incoming>) -> F + Clone + Send + Sync + 'static,
    F: std::future::Future<Output = hyper::Response<B>> + Send + 'static,
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let slots = Arc::new(Semaphore::new(settings.max_connections));
    let (what, max) = (settings.what, settings.max_connections);
    while let Some((stream, slot)) = next_connection(&listener, &slots, max, what, &shutdown).await
    {
        let _ = stream.set_nodelay(true);
        let shutdown = shutdown.clone();
        let acceptor = tls.as_ref().map(|tls| tls.http1_acceptor());
        let handle = handle.clone();
        let timeout = settings.header_timeout;
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                let answer = handle(request);
                async move { Ok::<_, std::convert::Infallible>(answer.await) }
            });
            match acceptor {
                None => serve_http1(stream, service, timeout, what, &shutdown).await,
                Some(acceptor) => {
                    match tokio::time::timeout(timeout, acceptor.accept(stream)).await {
                        Ok(Ok(stream)) => {
                            serve_http1(stream, service, timeout, what, &shutdown).await
                        }
                        _ => tracing::debug!("{what}: TLS handshake failed"),
                    }
                }
            }
            drop(slot);
        });
    }
}

/// A listener that could not bind: what it was for, where, and why.
#[derive(Debug, thiserror::Error)]
#[error("cannot listen for the {what} on {addr}: {source}")]
pub struct ListenError {
    what: &'static str,
    addr: std::net::SocketAddr,
    source: std::io::Error,
}

/// Binds `addr` for `what` (before the server reports itself ready).
pub async fn bind(
    addr: std::net::SocketAddr,
    what: &'static str,
) -> Result<TcpListener, ListenError> {
    TcpListener::bind(addr)
        .await
        .map_err(|source| ListenError { what, addr, source })
}
