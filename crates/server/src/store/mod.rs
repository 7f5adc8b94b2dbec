//! PostgreSQL persistence. Every query that touches a session is scoped by tenant; the
//! session row lock serializes writes per session. No engine logic lives here: the
//! engine decides, the store reads and writes.
mod append;
mod append_write;
mod batch;
mod builds;
mod deletion;
pub mod distribution;
mod error;
mod events;
mod export;
mod forks;
mod jobs;
mod keys;
mod ledger;
mod listing;
mod messages;
mod overlay;
mod pool;
mod pooler;
mod proxy;
mod quotas;
mod read_only;
mod recall;
mod revert;
mod row_cache;
pub mod schema;
mod search;
mod sessions;
mod summaries;
mod tenants;
mod tree;
mod views;

use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{PgPool, Postgres, Transaction};

use crate::session::Session;

pub use append::{AppendState, Appended, CachedTries};
pub use append_write::{AppendWrite, ChildFinish, NewMessage};
pub use builds::BuildPoint;
pub use deletion::Deletion;
pub use error::{StoreError, StoreResult};
pub use events::EVENTS_CHANNEL;
pub use forks::{LogSums, NewFork, Summarized};
pub use jobs::{Finished, JOB_DONE_CHANNEL, JOBS_CHANNEL, JobEnding, NewJob, NotifyGate};
pub use keys::{ActiveKey, KeyRecord, NewKey, Rotation};
pub use listing::{Listed, SessionFilter};
use pool::Pool;
pub use pooler::Pooler;
use pooler::{Conn, Db};
pub use proxy::ProxyHead;
pub use revert::{NewCompaction, Recount, RevertUpdate};
pub use search::{SearchHit, SearchQuery};
pub use sessions::{
    AnchorUpdate, BuildRecord, ChartPoint, Clearing, CreateTx, Creation, NewLink, SessionUpdate,
};
pub use summaries::{NewSummary, SummarizedUpdate};
pub use tenants::TenantRecord;
pub use tree::{FinishLink, FinishTx};
pub use views::View;
use views::ViewCache;

pub use schema::{MIGRATOR, Migrations};

/// The database handle shared by the engine and the API.
#[derive(Clone, Debug)]
pub struct Store {
    pool: Pool,
    /// Connections for AppendTurn's read and write, which run with generic plans
    /// ([`append_options`]); the same pool as `pool` unless [`Store::connect_with`]
    /// made one.
    append_pool: Pool,
    /// Whether `append_pool` is a pool of its own (else a clone of `pool`).
    own_append_pool: bool,
    /// Connections that LISTEN: straight to PostgreSQL, since notifications do not
    /// pass through a transaction pooler. The same pool as `pool` unless
    /// [`Endpoints::direct`] names a server of its own.
    listen_pool: Pool,
    /// Whether `listen_pool` is a pool of its own.
    own_listen_pool: bool,
    /// What sits between `pool` (and `append_pool`) and PostgreSQL.
    pooler: Pooler,
    /// Session views this replica has read, so a build fetches only what is new.
    views: std::sync::Arc<ViewCache>,
    /// Session rows as this replica's own statements last left them.
    rows: std::sync::Arc<row_cache::RowCache>,
    /// Session ledgers this replica has read, each as of a session version.
    ledgers: std::sync::Arc<ledger::LedgerCache>,
    /// The appends' batch writer, started by the first append.
    batcher: std::sync::Arc<std::sync::OnceLock<batch::Batcher>>,
    /// Batch statements in flight at most.
    append_writers: usize,
    /// Whether the database is distributed by tenant (Citus): a batch of appends then
    /// holds one tenant's, so that its statement runs on one node.
    distributed: bool,
    /// Appends are written by `ctxd_append` (migration 0030), as they must be on a
    /// distributed database, rather than by the set-based statements of
    /// `sql/append/` (faster on one PostgreSQL: docs/benchmarks.md).
    append_by_function: bool,
}

/// The view cache's budget when none is configured.
pub const DEFAULT_VIEW_CACHE_BYTES: usize = 256 * 1024 * 1024;

/// The session views' share of a view cache budget; the ledgers take the rest.
fn view_share(bytes: usize) -> usize {
    bytes - bytes / 8
}

/// Batch statements of appends in flight at once when none is configured. A batch is
/// what queued while the writers were busy, so fewer writers make larger batches
/// (PostgreSQL's cost of an append is mostly per statement and commit): one writer gave
/// the most appends per second in alternating runs on 2 cores (decision 0007).
pub const DEFAULT_APPEND_WRITERS: usize = 1;

/// A write transaction on one session, holding its row lock.
pub struct SessionTx {
    tx: Transaction<'static, Postgres>,
    /// How the transaction's statements run (see [`Conn`]).
    pooler: Pooler,
    pub session: Session,
    /// The session's pending jobs (by kind) as the lock found them.
    pending_jobs: std::collections::HashMap<String, i64>,
    /// Events to write just before the commit.
    events: Vec<crate::events::EventDetail>,
    /// A budget status to record with them.
    budget_status: Option<crate::budget::Status>,
}

/// The settings of AppendTurn's connections: generic plans. With PostgreSQL's default,
/// the large append statement was planned anew on every execution (12 % of all CPU in
/// the append benchmark's profile; 10-20 % more appends per second with generic plans,
/// measured in alternating runs). Only for the append: other statements have optional
/// filters (`$1 is null or …`) whose best plan does depend on the values.
pub fn append_options(options: PgConnectOptions) -> PgConnectOptions {
    options
        .application_name("ctxd")
        .options([("plan_cache_mode", "force_generic_plan")])
}

/// Where the store connects.
#[derive(Debug, Clone)]
pub struct Endpoints {
    /// The pools' connections: PostgreSQL, or a pooler in front of it.
    pub database: PgConnectOptions,
    /// PostgreSQL itself, for LISTEN and migrations (which take a session-level
    /// advisory lock); `None`: `database` is PostgreSQL itself.
    pub direct: Option<PgConnectOptions>,
    /// What `database` is.
    pub pooler: Pooler,
}

impl Endpoints {
    /// PostgreSQL at `options`, no pooler.
    pub fn direct(options: PgConnectOptions) -> Endpoints {
        Endpoints {
            database: options,
            direct: None,
            pooler: Pooler::None,
        }
    }
}

/// LISTEN connections a replica holds: the job runner's and the event hub's, and one
/// to spare while one of them reconnects.
const LISTEN_CONNECTIONS: u32 = 3;

/// How long the first connection may take before startup gives up.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// A pool's options with one rule of ctxd's own: a connection opened before the
/// database last answered "read-only" is closed rather than handed out (`read_only`).
fn pool_options() -> PgPoolOptions {
    PgPoolOptions::new()
        .before_acquire(|_, meta| Box::pin(async move { Ok(!read_only::stale(meta.age)) }))
}

/// Opens and closes one connection, so that an unreachable database reports why
/// (refused, unknown host, authentication) instead of a pool timeout.
async fn probe(options: &PgConnectOptions) -> Result<(), sqlx::Error> {
    use sqlx::Connection as _;
    let connect = sqlx::PgConnection::connect_with(options);
    match tokio::time::timeout(PROBE_TIMEOUT, connect).await {
        Ok(connection) => connection?.close().await,
        Err(_) => Err(sqlx::Error::Io(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!("no answer within {} s", PROBE_TIMEOUT.as_secs()),
        ))),
    }
}

/// `url` with its password (in the user part or a `password=` parameter) replaced by
/// `***`, for messages and logs.
pub fn redacted_url(url: &str) -> String {
    let (url, query) = match url.split_once('?') {
        Some((url, query)) => (url, Some(query)),
        None => (url, None),
    };
    let mut out = match url.split_once("://") {
        Some((scheme, rest)) => {
            let end = rest.find('/').unwrap_or(rest.len());
            let (authority, path) = rest.split_at(end);
            let authority = match authority.rsplit_once('@') {
                Some((user_info, host)) => match user_info.split_once(':') {
                    Some((user, _)) => format!("{user}:***@{host}"),
                    None => authority.to_string(),
                },
                None => authority.to_string(),
            };
            format!("{scheme}://{authority}{path}")
        }
        None => url.to_string(),
    };
    if let Some(query) = query {
        let params: Vec<String> = query
            .split('&')
            .map(|param| match param.split_once('=') {
                Some((key, _)) if key.eq_ignore_ascii_case("password") => format!("{key}=***"),
                _ => param.to_string(),
            })
            .collect();
        out.push('?');
        out.push_str(&params.join("&"));
    }
    out
}

impl Store {
    /// A store on one pool (appends and LISTEN included) straight to PostgreSQL, with a
    /// view cache of the default size.
    pub fn new(pool: PgPool) -> Store {
        let pool = Pool::new(pool);
        let store = Store {
            append_pool: pool.clone(),
            own_append_pool: false,
            listen_pool: pool.clone(),
            own_listen_pool: false,
            pooler: Pooler::None,
            pool,
            views: std::sync::Arc::new(ViewCache::new(0)),
            rows: std::sync::Arc::default(),
            ledgers: std::sync::Arc::default(),
            batcher: std::sync::Arc::default(),
            append_writers: DEFAULT_APPEND_WRITERS,
            distributed: false,
            append_by_function: false,
        };
        store.view_cache_bytes(DEFAULT_VIEW_CACHE_BYTES)
    }

    /// This store with a view cache of at most `bytes` (0: none) instead of its own:
    /// seven eighths for session views, the rest for session ledgers.
    pub fn view_cache_bytes(self, bytes: usize) -> Store {
        Store {
            views: std::sync::Arc::new(ViewCache::new(view_share(bytes))),
            ledgers: std::sync::Arc::new(ledger::LedgerCache::new(bytes - view_share(bytes))),
            ..self
        }
    }

    /// This store writing appends in at most `writers` batch statements at a time
    /// (at least 1).
    pub fn append_writers(self, writers: usize) -> Store {
        Store {
            append_writers: writers.max(1),
            batcher: std::sync::Arc::default(),
            ..self
        }
    }

    /// This store writing appends by `ctxd_append` even on one PostgreSQL (always on a
    /// distributed one), the way it writes them on Citus.
    pub fn append_by_function(self, by_function: bool) -> Store {
        Store {
            append_by_function: self.distributed || by_function,
            batcher: std::sync::Arc::default(),
            ..self
        }
    }

    /// Connects to PostgreSQL at `url` and applies pending migrations.
    pub async fn connect(url: &str, max_connections: u32) -> StoreResult<Store> {
        Store::connect_with(url.parse()?, max_connections).await
    }

    /// [`Store::connect_to`] PostgreSQL at `options`, no pooler.
    pub async fn connect_with(
        options: PgConnectOptions,
        max_connections: u32,
    ) -> StoreResult<Store> {
        Store::connect_to(
            Endpoints::direct(options),
            max_connections,
            Migrations::Apply,
        )
        .await
    }

    /// Applies pending migrations or requires there are none (`migrations`, over a direct
    /// connection), then connects a pool of
    /// `max_connections`, half as many (at least 2) for AppendTurn, and, when
    /// `endpoints` has a direct server, a few LISTEN connections to it. Through a
    /// transaction pooler a direct server is required.
    pub async fn connect_to(
        endpoints: Endpoints,
        max_connections: u32,
        migrations: Migrations,
    ) -> StoreResult<Store> {
        let Endpoints {
            database,
            direct,
            pooler,
        } = endpoints;
        if pooler == Pooler::Transaction && direct.is_none() {
            return Err(StoreError::Other(sqlx::Error::Configuration(
                "through a transaction pooler, LISTEN and migrations need a direct URL".into(),
            )));
        }
        let options = pooler.options(database.application_name("ctxd"));
        probe(&options).await?;
        if let Some(direct) = &direct {
            probe(direct).await?;
        }
        schema::prepare(direct.as_ref().unwrap_or(&options), migrations).await?;
        let pool = pool_options()
            .max_connections(max_connections)
            .acquire_timeout(Duration::from_secs(10))
            .connect_with(options.clone())
            .await?;
        let distributed = distribution::detect(Db::new(&Pool::new(pool.clone()), pooler)).await?;
        let append_options = match pooler {
            // Citus routes a statement by the tenant's value, which a generic plan
            // leaves a parameter.
            _ if distributed => options,
            Pooler::None => append_options(options),
            // Generic plans pay off only for statements kept prepared.
            Pooler::Transaction => options,
        };
        let append_pool = pool_options()
            .max_connections((max_connections / 2).max(2))
            .acquire_timeout(Duration::from_secs(10))
            .connect_lazy_with(append_options);
        let own_listen_pool = direct.is_some();
        let store = Store::new(pool);
        let listen_pool = match direct {
            Some(direct) => Pool::new(
                pool_options()
                    .max_connections(LISTEN_CONNECTIONS)
                    .connect_lazy_with(direct.application_name("ctxd-listen")),
            ),
            None => store.pool.clone(),
        };
        Ok(Store {
            append_pool: Pool::new(append_pool),
            own_append_pool: true,
            own_listen_pool,
            listen_pool,
            pooler,
            distributed,
            append_by_function: distributed,
            ..store
        })
    }

    /// Closes the store's connections.
    pub async fn close(&self) {
        self.pool.inner().close().await;
        self.append_pool.inner().close().await;
        self.listen_pool.inner().close().await;
    }

    /// The batch writer of appends (started on first use).
    fn batcher(&self) -> &batch::Batcher {
        self.batcher.get_or_init(|| {
            batch::Batcher::start(
                self.append_pool.clone(),
                self.pooler,
                self.append_writers,
                batch::Writing {
                    by_tenant: self.distributed,
                    by_function: self.append_by_function,
                },
            )
        })
    }

    /// The main pool, to build another store on. The store's own statements go through
    /// [`Store::db`], which keeps them safe behind a transaction pooler and counts the
    /// requests waiting for a connection.
    /// Whether the database answers and is a primary (not in recovery: it takes writes).
    pub async fn accepts_writes(&self) -> StoreResult<bool> {
        let recovering: bool = sqlx::query_scalar("select pg_is_in_recovery()")
            .fetch_one(self.db())
            .await?;
        Ok(!recovering)
    }

    pub fn pool(&self) -> &PgPool {
        self.pool.inner()
    }

    /// A LISTEN connection, straight to PostgreSQL. It does not reconnect by itself:
    /// once `try_recv` reports the connection lost (`Ok(None)`), take a new one here.
    pub async fn listener(&self) -> StoreResult<sqlx::postgres::PgListener> {
        Ok(self.listen_pool.listener().await?)
    }

    /// The main pool as the store's statements use it.
    fn db(&self) -> Db<'_> {
        Db::new(&self.pool, self.pooler)
    }

    /// AppendTurn's pool as its statements use it.
    fn append_db(&self) -> Db<'_> {
        Db::new(&self.append_pool, self.pooler)
    }

    /// The pools' connections and the view cache's size, for the metrics' gauges (read
    /// in memory).
    pub fn pool_sample(&self) -> crate::metrics::PoolSample {
        let figures = |pool: &Pool| crate::metrics::PoolFigures {
            size: pool.inner().size(),
            idle: pool.inner().num_idle(),
            max: pool.inner().options().get_max_connections(),
            pending: pool.pending(),
        };
        let (view_cache_entries, views_bytes) = self.views.usage();
        let (_, ledgers_bytes) = self.ledgers.usage();
        crate::metrics::PoolSample {
            main: figures(&self.pool),
            append: self.own_append_pool.then(|| figures(&self.append_pool)),
            listen: self.own_listen_pool.then(|| figures(&self.listen_pool)),
            view_cache_bytes: views_bytes + ledgers_bytes,
            view_cache_entries,
        }
    }

    /// Starts a transaction holding the session's row lock. `None` when the tenant has
    /// no such session.
    pub async fn lock_session(
        &self,
        tenant_id: i64,
        external_id: &str,
    ) -> StoreResult<Option<SessionTx>> {
        let mut tx = self.pool.begin().await?;
        let session =
            sessions::lock(Conn::new(&mut tx, self.pooler), tenant_id, external_id).await?;
        Ok(session.map(|(session, pending_jobs)| SessionTx {
            tx,
            pooler: self.pooler,
            session,
            pending_jobs,
            events: Vec::new(),
            budget_status: None,
        }))
    }
}

/// A statement's text with its `{columns}` as `columns`: statements that read whole rows
/// name their table's column list so (see [`sessions::SESSION_COLUMNS`]), and are built
/// once, in a `LazyLock`.
fn with_columns(sql: &str, columns: &str) -> String {
    sql.replace("{columns}", columns)
}

#[cfg(test)]
mod tests {
    #[test]
    fn redacted_url_hides_the_password_only() {
        use super::redacted_url;
        assert_eq!(
            redacted_url("postgres://u:secret@db:5432/x?sslmode=require"),
            "postgres://u:***@db:5432/x?sslmode=require"
        );
        assert_eq!(
            redacted_url("postgres://u:p@ss@db/x"),
            "postgres://u:***@db/x"
        );
        assert_eq!(redacted_url("postgres://u@db/x"), "postgres://u@db/x");
        assert_eq!(
            redacted_url("postgres:///x?user=u&password=secret"),
            "postgres:///x?user=u&password=***"
        );
    }
}
