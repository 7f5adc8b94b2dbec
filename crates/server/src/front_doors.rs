//! The HTTP front doors a server starts beside gRPC, each on its own listener: the
//! provider endpoint (`--proxy-listen`) and the console (`--console-listen`), each with
//! its key check — keyless calls only where the gRPC port would serve them. An error
//! is a sentence the server reports as a startup failure.
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::auth::Auth;
use crate::config::Config;
use crate::engine::Engine;
use crate::tls::ServerTls;

/// The front doors' listeners, bound before the server reports itself ready.
pub struct Listeners {
    pub proxy: Option<TcpListener>,
    pub console: Option<TcpListener>,
}

/// Starts each front door that has a listener; `stop` ends them.
pub async fn start(
    config: &Config,
    engine: &Engine,
    listeners: Listeners,
    tls: Option<Arc<ServerTls>>,
    stop: CancellationToken,
) -> Result<(), String> {
    if let Some(listener) = listeners.proxy {
        start_proxy(config, engine, listener, tls.clone(), stop.clone()).await?;
    }
    if let Some(listener) = listeners.console {
        start_console(config, engine, listener, tls, stop).await?;
    }
    Ok(())
}

/// Starts the provider endpoint on its listener, in front of `engine`.
async fn start_proxy(
    config: &Config,
    engine: &Engine,
    listener: TcpListener,
    tls: Option<Arc<ServerTls>>,
    stop: CancellationToken,
) -> Result<(), String> {
    let auth = http_auth(engine, proxy_anonymous(config)).await?;
    let upstreams = crate::proxy::Upstreams {
        openai: config.upstream_openai.clone(),
        anthropic: config.upstream_anthropic.clone(),
        gemini: config.upstream_gemini.clone(),
    };
    let settings = crate::proxy::Settings {
        max_body_bytes: config.proxy_max_body_bytes,
        recall_tools: config.proxy_recall_tools,
        recall_rounds: config.proxy_recall_rounds,
    };
    let proxy = crate::proxy::Proxy::new(engine.clone(), auth, upstreams, settings);
    if let Ok(addr) = listener.local_addr() {
        tracing::info!(addr = %addr, tls = tls.is_some(), "serving the provider endpoint");
    }
    tokio::spawn(crate::proxy::serve(listener, Arc::new(proxy), tls, stop));
    Ok(())
}

/// The key check of an HTTP front door (the provider endpoint, the console).
async fn http_auth(engine: &Engine, anonymous: bool) -> Result<Arc<Auth>, String> {
    Auth::new(engine.store().clone(), anonymous)
        .await
        .map(Arc::new)
        .map_err(|error| error.to_string())
}

/// Whether the provider endpoint serves calls without a ctxd key: as the gRPC port
/// does, judged by the endpoint's own address.
fn proxy_anonymous(config: &Config) -> bool {
    config
        .proxy_listen
        .is_some_and(|addr| config.anonymous_mode().serves(addr.ip()))
}

/// Starts the console on its listener, over `engine`; keyless calls only as the gRPC
/// port would serve them from the console's own address.
async fn start_console(
    config: &Config,
    engine: &Engine,
    listener: TcpListener,
    tls: Option<Arc<ServerTls>>,
    stop: CancellationToken,
) -> Result<(), String> {
    let anonymous = config
        .console_listen
        .is_some_and(|addr| config.anonymous_mode().serves(addr.ip()));
    let auth = http_auth(engine, anonymous).await?;
    let console = crate::console::Console::new(engine.clone(), auth, &stop);
    if let Ok(addr) = listener.local_addr() {
        tracing::info!(addr = %addr, tls = tls.is_some(), "serving the console");
    }
    tokio::spawn(crate::console::serve(
        listener,
        Arc::new(console),
        tls,
        stop,
    ));
    Ok(())
}
