//! Assembles and runs the gRPC server: the context service, health and reflection (v1
//! and v1alpha), and the whole process lifecycle for `ctxd serve`.
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::api::ContextApi;
use crate::auth::{AnonymousAccess, Auth};
use crate::config::Config;
use crate::connections::ConnectionLimits;
use crate::engine::{Engine, EngineConfig};
use crate::jobs::WorkerConfig;
use crate::pb;
use crate::pb::context_service_server::ContextServiceServer;
use crate::readiness::Readiness;
use crate::store::schema::Assessment;
use crate::store::{Endpoints, Migrations, NotifyGate, Store, StoreError};
use crate::summarizer::model::{Api, ModelSummarizer};
use crate::tls::ServerTls;
use ctxd_localpg::LocalPostgres;

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("{0}")]
    LocalPostgres(#[from] ctxd_localpg::LocalPgError),
    #[error("database error: {0}")]
    Database(#[from] StoreError),
    #[error("cannot connect to PostgreSQL at {url}: {source}")]
    Connect { url: String, source: StoreError },
    #[error("cannot apply migrations to PostgreSQL at {url}: {source}")]
    Migrate { url: String, source: StoreError },
    #[error("PostgreSQL at {url}: {reason}")]
    Schema { url: String, reason: String },
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        addr: std::net::SocketAddr,
        source: std::io::Error,
    },
    #[error(
        "refusing to serve calls without an API key on {0}, a non-loopback address (--anonymous-access allow): pass --insecure to do so anyway, or give clients keys (`ctxd tenant create NAME`) and set --anonymous-access loopback or deny"
    )]
    AnonymousOnNetwork(std::net::SocketAddr),
    #[error("{0}")]
    Startup(String),
    #[error("TLS: {0}")]
    Tls(#[from] crate::tls::TlsError),
    #[error("gRPC server failed: {0}")]
    Transport(#[from] tonic::transport::Error),
}

/// How the gRPC server treats its clients: request sizes, anonymous access, connections.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// Largest gRPC request (and response) in bytes.
    pub max_request_bytes: usize,
    /// Whether calls without an API key are served.
    pub anonymous_access: AnonymousAccess,
    /// Handshake, keepalive, idle and count limits of client connections.
    pub connections: ConnectionLimits,
    /// TLS for new connections (`None`: plaintext).
    pub tls: Option<Arc<ServerTls>>,
    /// Whether the database answers and takes writes (the health service follows it).
    pub readiness: Readiness,
}

impl Default for ServeOptions {
    fn default() -> ServeOptions {
        ServeOptions {
            max_request_bytes: 64 * 1024 * 1024,
            anonymous_access: AnonymousAccess::Loopback,
            connections: ConnectionLimits::default(),
            tls: None,
            readiness: Readiness::new(),
        }
    }
}

impl ServeOptions {
    /// The options of a configured server, with its TLS configuration (already read).
    pub fn from_config(
        config: &Config,
        tls: Option<Arc<ServerTls>>,
        readiness: Readiness,
    ) -> ServeOptions {
        ServeOptions {
            max_request_bytes: config.max_request_bytes,
            anonymous_access: config.anonymous_mode(),
            connections: ConnectionLimits::from_config(config),
            tls,
            readiness,
        }
    }
}

/// Serves the API on `listener` until `shutdown` is cancelled, then drains in-flight
/// requests.
pub async fn serve(
    engine: Engine,
    listener: TcpListener,
    options: ServeOptions,
    shutdown: CancellationToken,
) -> Result<(), ServeError> {
    let max_request_bytes = options.max_request_bytes;
    let local_addr = listener
        .local_addr()
        .map_err(|error| ServeError::Startup(format!("the listening address: {error}")))?;
    let anonymous = options.anonymous_access.serves(local_addr.ip());
    log_anonymous_access(options.anonymous_access, anonymous, local_addr);
    let auth = Arc::new(
        Auth::new(engine.store().clone(), anonymous)
            .await
            .map_err(|error| ServeError::Startup(crate::error::chain(&error)))?,
    );
    let (health_reporter, health_service) = tonic_health::server::health_reporter();
    health_reporter
        .set_serving::<ContextServiceServer<ContextApi>>()
        .await;
    let reflection_v1 = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(pb::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1()
        .map_err(|error| ServeError::Startup(format!("reflection: {error}")))?;
    let reflection_v1alpha = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(pb::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1alpha()
        .map_err(|error| ServeError::Startup(format!("reflection: {error}")))?;
    let reporter = health_reporter.clone();
    tokio::spawn(options.readiness.clone().watch(
        engine.store().clone(),
        shutdown.clone(),
        move |ready| {
            let reporter = reporter.clone();
            async move {
                let status = if ready {
                    tonic_health::ServingStatus::Serving
                } else {
                    tonic_health::ServingStatus::NotServing
                };
                reporter.set_service_status("", status).await;
                reporter
                    .set_service_status(
                        <ContextServiceServer<ContextApi> as tonic::server::NamedService>::NAME,
                        status,
                    )
                    .await;
            }
        },
    ));
    crate::indexer::start(engine.store().clone(), shutdown.clone());
    crate::heap::start(shutdown.clone());
    let hub = crate::fanout::Hub::start(
        engine.store().clone(),
        engine.config().events.clone(),
        shutdown.clone(),
    );
    let service = ContextServiceServer::new(ContextApi::new(engine, auth, hub))
        .max_decoding_message_size(max_request_bytes)
        .max_encoding_message_size(max_request_bytes);

    let stopping = shutdown.clone();
    let reporter = health_reporter.clone();
    tokio::spawn(async move {
        stopping.cancelled().await;
        reporter
            .set_not_serving::<ContextServiceServer<ContextApi>>()
            .await;
    });
    let limits = options.connections;
    let server = tonic::transport::Server::builder()
        .http2_keepalive_interval(limits.http2_keepalive_interval)
        .http2_keepalive_timeout(Some(limits.http2_keepalive_timeout))
        .max_concurrent_streams(limits.max_streams)
        .layer(crate::connections::InFlightLayer)
        .add_service(health_service)
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha)
        .add_service(service)
        .serve_with_incoming_shutdown(
            crate::connections::incoming(listener, limits, options.tls),
            shutdown.clone().cancelled_owned(),
        );
    // Graceful shutdown waits for open connections to go away; a client that never
    // reads its GOAWAY must not keep the process (and its database) up for ever.
    let grace = async {
        shutdown.cancelled().await;
        tokio::time::sleep(SHUTDOWN_GRACE).await;
    };
    tokio::select! {
        result = server => result?,
        () = grace => tracing::warn!(grace_secs = SHUTDOWN_GRACE.as_secs(), "connections still open after the shutdown grace period; closing"),
    }
    Ok(())
}

/// Says at start-up who may call without a key, and why.
fn log_anonymous_access(mode: AnonymousAccess, anonymous: bool, addr: std::net::SocketAddr) {
    let mode = mode.name();
    if anonymous {
        tracing::info!(
            anonymous_access = mode,
            %addr,
            "calls without an API key are served, as tenant `default`"
        );
    } else {
        tracing::info!(
            anonymous_access = mode,
            %addr,
            "calls without an API key are refused: every call needs a key"
        );
    }
}

/// How long in-flight requests get to finish after a shutdown signal.
const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

/// `ctxd serve`: TLS files, database (private or given), migrations, key policy,
/// server, and an orderly stop on `shutdown`.
pub async fn run(config: Config, shutdown: CancellationToken) -> Result<(), ServeError> {
    // Bad TLS files stop the start before a database is started for nothing.
    let tls = match config.tls_files() {
        Some(files) => Some(Arc::new(ServerTls::load(files)?)),
        None => None,
    };
    // Only the vocabularies asked for are built at start (while the database starts);
    // the others on their first use (the engine does it on the blocking pool), so a
    // replica holds only those its sessions use (docs/benchmarks.md, "Memory").
    let preload = config.preload_tokenizers.clone();
    let warm = tokio::task::spawn_blocking(move || {
        for kind in preload {
            // The heuristic has no vocabulary; its ratio does not matter here.
            crate::tokenize::load(kind.tokenizer(4.0));
        }
    });
    let (url, local) = database(&config).await?;
    if let Err(error) = warm.await {
        tracing::warn!(error = %error, "building the tokenizer vocabularies failed");
    }
    let result = serve_with_database(&config, &url, tls, shutdown).await;
    if let Some(local) = local {
        tracing::info!("stopping the private PostgreSQL");
        if let Err(error) = local.stop().await {
            tracing::warn!(error = %error, "stopping the private PostgreSQL failed");
        }
    }
    result
}

async fn serve_with_database(
    config: &Config,
    url: &str,
    tls: Option<Arc<ServerTls>>,
    shutdown: CancellationToken,
) -> Result<(), ServeError> {
    let migrations = if config.no_migrate {
        Migrations::Require
    } else {
        Migrations::Apply
    };
    let store = connect(config, url, config.db_max_connections, migrations)
        .await?
        .view_cache_bytes(config.view_cache_mb.saturating_mul(1024 * 1024))
        .append_writers(config.append_writers)
        .append_by_function(config.append_by_function);
    check_anonymous_access(config)?;
    let pipeline = crate::metrics::MetricsPipeline::from_env(config.metrics_listen.is_some())
        .map_err(|error| ServeError::Startup(error.to_string()))?;
    let metrics_listener = bind_http(config.metrics_listen, crate::ops_http::bind).await?;
    if let Some(pipeline) = &pipeline {
        crate::metrics::install(&pipeline.meter());
        let observed = store.clone();
        crate::metrics::metrics().observe_pool(move || observed.pool_sample());
    }
    warn_plaintext_keys(config, &store, tls.is_some()).await?;
    let proxy_listener = bind_http(config.proxy_listen, |addr| {
        crate::accept::bind(addr, "provider endpoint")
    })
    .await?;
    let console_listener = bind_http(config.console_listen, |addr| {
        crate::accept::bind(addr, "console")
    })
    .await?;
    let listener = TcpListener::bind(config.listen)
        .await
        .map_err(|source| ServeError::Listen {
            addr: config.listen,
            source,
        })?;
    let local_addr = listener.local_addr().map_err(|source| ServeError::Listen {
        addr: config.listen,
        source,
    })?;
    let stop_metrics = CancellationToken::new();
    let readiness = Readiness::new();
    if let Some(pipeline) = &pipeline {
        start_metrics(
            pipeline,
            metrics_listener,
            &readiness,
            &store,
            &stop_metrics,
        );
    }
    tracing::info!(
        addr = %local_addr,
        tls = tls.is_some(),
        client_certificates = tls.as_ref().is_some_and(|tls| tls.files().client_ca.is_some()),
        "ctxd serving"
    );
    crate::tls::reload_on_sighup(tls.clone(), shutdown.clone());
    let engine_config = engine_config(config).map_err(ServeError::Startup)?;
    let job_done = engine_config.job_done.clone();
    let engine = Engine::new(store.clone(), engine_config);
    let stop_jobs = CancellationToken::new();
    let mut jobs = crate::jobs::start(
        engine.clone(),
        worker_config(config),
        job_done,
        stop_jobs.clone(),
    );
    let stop_proxy = CancellationToken::new();
    let listeners = crate::front_doors::Listeners {
        proxy: proxy_listener,
        console: console_listener,
    };
    crate::front_doors::start(config, &engine, listeners, tls.clone(), stop_proxy.clone())
        .await
        .map_err(ServeError::Startup)?;
    let result = serve(
        engine,
        listener,
        ServeOptions::from_config(config, tls, readiness),
        shutdown,
    )
    .await;
    stop_proxy.cancel();
    // Jobs still running are given back for another replica (or the next start).
    stop_jobs.cancel();
    while jobs.join_next().await.is_some() {}
    stop_metrics.cancel();
    store.close().await;
    // Dropping the pipeline flushes the OTLP exporter.
    drop(pipeline);
    result
}

/// Binds an optional HTTP listener (metrics, the provider endpoint) before the server
/// says it serves.
async fn bind_http<F, Fut, E>(
    addr: Option<std::net::SocketAddr>,
    bind: F,
) -> Result<Option<TcpListener>, ServeError>
where
    F: FnOnce(std::net::SocketAddr) -> Fut,
    Fut: std::future::Future<Output = Result<TcpListener, E>>,
    E: std::fmt::Display,
{
    match addr {
        Some(addr) => bind(addr)
            .await
            .map(Some)
            .map_err(|error| ServeError::Startup(error.to_string())),
        None => Ok(None),
    }
}

/// The background job workers' settings.
fn worker_config(config: &Config) -> WorkerConfig {
    WorkerConfig {
        workers: config.jobs_workers,
        lease: Duration::from_secs_f64(config.jobs_lease_secs),
        poll_interval: Duration::from_millis(config.jobs_poll_interval_ms),
        retention: Duration::from_secs(config.jobs_retention_secs),
    }
}

/// Warns when API keys would travel in plaintext: off loopback without TLS, where keys
/// are required (or, with anonymous access allowed, in use once any exists).
async fn warn_plaintext_keys(config: &Config, store: &Store, tls: bool) -> Result<(), ServeError> {
    if config.listen.ip().is_loopback() || tls {
        return Ok(());
    }
    let keys =
        config.anonymous_access != AnonymousAccess::Allow || !store.keys(None).await?.is_empty();
    if keys {
        tracing::warn!(
            addr = %config.listen,
            "serving on a non-loopback address without TLS: API keys travel in plaintext; pass --tls-cert and --tls-key"
        );
    }
    Ok(())
}

/// Serves `GET /metrics` and the probes on the metrics listener, and samples the queue.
fn start_metrics(
    pipeline: &crate::metrics::MetricsPipeline,
    listener: Option<TcpListener>,
    readiness: &Readiness,
    store: &Store,
    stop: &CancellationToken,
) {
    if let (Some(listener), Some(reader)) = (listener, pipeline.reader()) {
        if let Ok(addr) = listener.local_addr() {
            tracing::info!(addr = %addr, "serving metrics on GET /metrics, probes on /livez and /readyz");
        }
        let serving = crate::ops_http::serve_metrics(
            listener,
            reader.clone(),
            readiness.clone(),
            stop.clone(),
        );
        tokio::spawn(serving);
    }
    tokio::spawn(crate::jobs::sample_queue(store.clone(), stop.clone()));
}

/// Refuses a configuration that would serve calls without a key off loopback (unless
/// `--insecure`); says when a configured database makes the default refuse them.
fn check_anonymous_access(config: &Config) -> Result<(), ServeError> {
    if config.anonymous_access == AnonymousAccess::Loopback && config.database_url.is_some() {
        tracing::info!(
            "calls without an API key are refused: ctxd runs on a configured database \
             (DATABASE_URL); --anonymous-access allow serves them as tenant `default`"
        );
    }
    let http = config.proxy_listen.into_iter().chain(config.console_listen);
    for addr in std::iter::once(config.listen).chain(http) {
        if !addr.ip().is_loopback() && config.anonymous_mode().serves(addr.ip()) && !config.insecure
        {
            return Err(ServeError::AnonymousOnNetwork(addr));
        }
    }
    Ok(())
}

/// The engine's settings from the server's: summarizer profiles built, job settings.
pub fn engine_config(config: &Config) -> Result<EngineConfig, String> {
    let mut engine = EngineConfig::new(config.default_policy.clone(), config.max_content_bytes);
    engine.limits = crate::limits::Limits {
        max_append_messages: config.max_append_messages,
        max_session_bytes: config.max_session_bytes,
    };
    engine.quotas = config.quota;
    for (name, profile) in &config.summarizers {
        let model = match profile.api {
            Api::Extractive => None,
            _ => Some(Arc::new(ModelSummarizer::new(profile.clone())?)),
        };
        engine.summarizers.insert(name.clone(), model);
    }
    engine.job_max_attempts = config.jobs_max_attempts;
    engine.job_backoff = Duration::from_millis(config.jobs_backoff_ms);
    engine.events.retention = Duration::from_secs(config.events_retention_secs);
    engine.notify_gate = Arc::new(NotifyGate::new(Duration::from_millis(
        config.jobs_notify_window_ms,
    )));
    Ok(engine)
}

/// Connects to `url` (and to the configured listen URL, behind the configured pooler),
/// applying migrations or requiring there are none pending (`migrations`); errors name
/// the URL without its password.
pub async fn connect(
    config: &Config,
    url: &str,
    max_connections: u32,
    migrations: Migrations,
) -> Result<Store, ServeError> {
    let mut redacted = crate::store::redacted_url(url);
    let parse = |url: &str| {
        url.parse()
            .map_err(|source: sqlx::Error| ServeError::Connect {
                url: crate::store::redacted_url(url),
                source: source.into(),
            })
    };
    let direct = match &config.database_listen_url {
        Some(listen) => {
            let listen_redacted = crate::store::redacted_url(listen);
            tracing::info!(url = %listen_redacted, "LISTEN and migrations on PostgreSQL directly");
            let direct = parse(listen)?;
            // A failure may be either URL's.
            redacted = format!("{redacted} (LISTEN at {listen_redacted})");
            Some(direct)
        }
        None => None,
    };
    tracing::info!(url = %redacted, pooler = ?config.database_pooler, "connecting to PostgreSQL");
    let endpoints = Endpoints {
        database: parse(url)?,
        direct,
        pooler: config.database_pooler,
    };
    Store::connect_to(endpoints, max_connections, migrations)
        .await
        .map_err(|source| match source {
            StoreError::Schema(reason) => ServeError::Schema {
                url: redacted,
                reason,
            },
            StoreError::Migration(_) => ServeError::Migrate {
                url: redacted,
                source,
            },
            _ => ServeError::Connect {
                url: redacted,
                source,
            },
        })
}

/// The schema at `url` (or at the configured listen URL, where migrations go) against
/// this binary, read only.
pub async fn schema(config: &Config, url: &str) -> Result<Assessment, ServeError> {
    let target = config.database_listen_url.as_deref().unwrap_or(url);
    let connect_error = |source: StoreError| ServeError::Connect {
        url: crate::store::redacted_url(target),
        source,
    };
    let options = target
        .parse()
        .map_err(|source: sqlx::Error| connect_error(source.into()))?;
    crate::store::schema::inspect(&options)
        .await
        .map_err(connect_error)
}

/// The database URL to use: the configured one, or a private PostgreSQL's.
pub async fn database(config: &Config) -> Result<(String, Option<LocalPostgres>), ServeError> {
    if let Some(url) = &config.database_url {
        return Ok((url.clone(), None));
    }
    tracing::info!(data_dir = %config.data_dir.display(), "no DATABASE_URL: starting a private PostgreSQL");
    let local = LocalPostgres::start(&config.data_dir).await?;
    Ok((local.url(), Some(local)))
}

/// The database URL for a short command (admin, migrate): the configured one, or the
/// data directory's private PostgreSQL — the one a running `ctxd serve` holds, else one
/// started for the command (returned, to be stopped after).
pub async fn database_for_command(
    config: &Config,
) -> Result<(String, Option<LocalPostgres>), ServeError> {
    if let Some(url) = &config.database_url {
        return Ok((url.clone(), None));
    }
    Ok(LocalPostgres::start_or_attach(&config.data_dir).await?)
}
