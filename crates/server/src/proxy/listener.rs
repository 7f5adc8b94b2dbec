//! Connections of the provider endpoint: HTTP/1.1, over TLS when the server has it,
//! bounded in number, each given a time to send its request head.
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::Proxy;
use crate::accept::{Http1, serve_http1_listener};
use crate::tls::ServerTls;

/// Connections served at once; more are closed at once.
const MAX_CONNECTIONS: usize = 4_096;
/// Time a client gets to send a request's head (and a TLS handshake).
const HEADER_TIMEOUT: Duration = Duration::from_secs(30);

/// Serves the endpoint on `listener` until `shutdown`.
pub async fn serve(
    listener: TcpListener,
    proxy: Arc<Proxy>,
    tls: Option<Arc<ServerTls>>,
    shutdown: CancellationToken,
) {
    let settings = Http1 {
        what: "provider endpoint",
        max_connections: MAX_CONNECTIONS,
        header_timeout: HEADER_TIMEOUT,
    };
    let handle = move |request| {
        let proxy = proxy.clone();
        async move { super::handler::handle(&proxy, request).await }
    };
    serve_http1_listener(listener, tls, shutdown, settings, handle).await;
}
