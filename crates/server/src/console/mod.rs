//! The context console (`--console-listen`): a web page over this ctxd that shows what
//! the model sees — the tenant's sessions; one session's window as its last build
//! counted it, with the thresholds; its messages with their view states, each opening
//! its original; its summaries and task ledger; its compaction history from the event
//! log, kept current by a live stream of its events and version (`live.rs`); and, each
//! behind a confirmation, Compact, RevertCompaction and ForkSession
//! (POST from the page only, `http.rs`). Every API call
//! passes the same tenant check as the RPCs (a ctxd key in the `x-ctxd-key` header, or
//! none where the gRPC server serves calls without one). The page's files are compiled
//! into the binary and render every value from a session as text, under a
//! Content-Security-Policy that allows no inline script.
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::accept::{Http1, serve_http1_listener};
use crate::auth::Auth;
use crate::engine::Engine;
use crate::fanout::Hub;
use crate::tls::ServerTls;

mod api;
mod assets;
mod http;
mod live;
mod query;

/// Connections served at once; more are closed at once.
const MAX_CONNECTIONS: usize = 256;
/// Time a browser gets to send a request's head (and a TLS handshake).
const HEADER_TIMEOUT: Duration = Duration::from_secs(30);

/// What the console answers from.
pub struct Console {
    engine: Engine,
    auth: Arc<Auth>,
    /// The events of the live streams (`live.rs`).
    hub: Arc<Hub>,
}

impl Console {
    /// The console over `engine`; its live streams follow the events through a hub of
    /// their own, until `stop`.
    pub fn new(engine: Engine, auth: Arc<Auth>, stop: &CancellationToken) -> Console {
        let hub = Hub::start(
            engine.store().clone(),
            engine.config().events.clone(),
            stop.clone(),
        );
        Console { engine, auth, hub }
    }
}

/// Serves the console on `listener` until `shutdown`.
pub async fn serve(
    listener: TcpListener,
    console: Arc<Console>,
    tls: Option<Arc<ServerTls>>,
    shutdown: CancellationToken,
) {
    let settings = Http1 {
        what: "console",
        max_connections: MAX_CONNECTIONS,
        header_timeout: HEADER_TIMEOUT,
    };
    let handle = move |request| {
        let console = console.clone();
        async move { http::handle(&console, request).await }
    };
    serve_http1_listener(listener, tls, shutdown, settings, handle).await;
}
