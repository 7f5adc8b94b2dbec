//! The provider endpoint: real agents through it (`agents`), its own behaviour
//! (`endpoint`: streaming, errors, the reactive path), the reconciliation of client
//! histories (`histories`, a property test), all against a fake model (`fake`).
mod agents;
mod endpoint;
pub mod fake;
mod histories;
mod recall;

use std::sync::Arc;

use ctxd::auth::Auth;
use ctxd::engine::{Engine, EngineConfig};
use ctxd::policy::Policy;
use ctxd::proxy::{Proxy, Settings, Upstreams};
use ctxd::store::Store;
use tokio_util::sync::CancellationToken;

/// A provider endpoint on loopback, in this process, in front of `upstream`.
pub struct Endpoint {
    pub url: String,
    pub engine: Engine,
    shutdown: CancellationToken,
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

pub async fn start_endpoint(
    pool: sqlx::PgPool,
    upstream: &str,
    window: i64,
    max_body_bytes: usize,
) -> Endpoint {
    let settings = Settings::new(max_body_bytes);
    start_endpoint_with(pool, upstream, window, settings, None).await
}

/// The same, over TLS when `tls` is given.
pub async fn start_endpoint_with(
    pool: sqlx::PgPool,
    upstream: &str,
    window: i64,
    settings: Settings,
    tls: Option<Arc<ctxd::tls::ServerTls>>,
) -> Endpoint {
    let policy = Policy {
        context_window_tokens: window,
        max_output_tokens: 1_000,
        ..Policy::default()
    };
    let store = Store::new(pool);
    let engine = Engine::new(store.clone(), EngineConfig::new(policy, 1024 * 1024));
    let auth = Arc::new(Auth::new(store, true).await.unwrap());
    let upstreams = Upstreams {
        openai: upstream.to_string(),
        anthropic: upstream.to_string(),
        gemini: upstream.to_string(),
    };
    let proxy = Arc::new(Proxy::new(engine.clone(), auth, upstreams, settings));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let scheme = if tls.is_some() { "https" } else { "http" };
    let url = format!("{scheme}://{}", listener.local_addr().unwrap());
    let shutdown = CancellationToken::new();
    tokio::spawn(ctxd::proxy::serve(listener, proxy, tls, shutdown.clone()));
    Endpoint {
        url,
        engine,
        shutdown,
    }
}

/// POSTs `body` as JSON with `headers`.
pub async fn post_json(
    url: &str,
    headers: &[(&str, &str)],
    body: &serde_json::Value,
) -> reqwest::Response {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_string());
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().await.unwrap()
}

/// A response's body as JSON.
pub async fn json_of(response: reqwest::Response) -> serde_json::Value {
    serde_json::from_slice(&response.bytes().await.unwrap()).unwrap()
}
