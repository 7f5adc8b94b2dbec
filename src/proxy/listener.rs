//! Connections of the provider endpoint: HTTP/1.1, over TLS when the server has it,
//! bounded in number, each given a time to send its request head.
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::Proxy;
use crate::tls::ServerTls;

/// Connections served at once; more are closed at once.
const MAX_CONNECTIONS: usize = 4_096;
/// Time a client gets to send a request's head (and a TLS handshake).
const HEADER_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug, thiserror::Error)]
#[error("cannot listen for the provider endpoint on {addr}: {source}")]
pub struct ProxyListenError {
    addr: std::net::SocketAddr,
    source: std::io::Error,
}

/// Binds `addr` (before the server reports itself ready).
pub async fn bind(addr: std::net::SocketAddr) -> Result<TcpListener, ProxyListenError> {
    TcpListener::bind(addr)
        .await
        .map_err(|source| ProxyListenError { addr, source })
}

/// Serves the endpoint on `listener` until `shutdown`.
pub async fn serve(
    listener: TcpListener,
    proxy: Arc<Proxy>,
    tls: Option<Arc<ServerTls>>,
    shutdown: CancellationToken,
) {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let what = "provider endpoint";
    while let Some((stream, slot)) =
        crate::accept::next_connection(&listener, &slots, MAX_CONNECTIONS, what, &shutdown).await
    {
        let _ = stream.set_nodelay(true);
        let proxy = proxy.clone();
        let shutdown = shutdown.clone();
        let acceptor = tls.as_ref().map(|tls| tls.http1_acceptor());
        tokio::spawn(async move {
            match acceptor {
                None => connection(stream, proxy, shutdown).await,
                Some(acceptor) => {
                    match tokio::time::timeout(HEADER_TIMEOUT, acceptor.accept(stream)).await {
                        Ok(Ok(stream)) => connection(stream, proxy, shutdown).await,
                        _ => tracing::debug!("provider endpoint: TLS handshake failed"),
                    }
                }
            }
            drop(slot);
        });
    }
}

async fn connection<S>(stream: S, proxy: Arc<Proxy>, shutdown: CancellationToken)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = hyper::service::service_fn(move |request| {
        let proxy = proxy.clone();
        async move { Ok::<_, Infallible>(super::handler::handle(&proxy, request).await) }
    });
    let what = "provider endpoint";
    crate::accept::serve_http1(stream, service, HEADER_TIMEOUT, what, &shutdown).await;
}
