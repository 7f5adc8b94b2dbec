//! Cost as the data grows: the same BuildMessages and AppendTurn rows against a database
//! that holds only the benchmark's own sessions and against one loaded with `messages`
//! recorded messages in `sessions` sessions (the corpus replayed, tool results
//! included, every message indexed for search), same binary, same run, the two
//! alternating round by round; then where the loaded database's bytes go, per message
//! and against the raw bytes the clients sent.
//!
//!   CTXD_BENCH_ONLY=scale cargo bench --bench core
//!
//! (a full `cargo bench` leaves this part out: loading takes minutes).
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ctxd::engine::{Engine, EngineConfig};
use ctxd::pb;
use ctxd::policy::Policy;
use ctxd::store::Store;
use sqlx::PgPool;
use sqlx::postgres::PgConnectOptions;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::{Latencies, client, concurrent, fresh_database, replayed, session_with, timed_appends};

/// How much work the scale part does.
pub struct GrowthScale {
    /// Messages loaded into the large database, spread evenly over `sessions`.
    pub messages: usize,
    pub sessions: usize,
    /// Concurrent loaders (one connection each).
    pub loaders: usize,
    /// Alternating rounds (each database once per round).
    pub rounds: usize,
    pub build_clients: usize,
    pub build_session_size: usize,
    /// Timed builds per client per round.
    pub build_requests: usize,
    pub append_sessions: usize,
    /// Timed appends per session per round.
    pub appends: usize,
}

pub const FULL: GrowthScale = GrowthScale {
    messages: 1_000_000,
    sessions: 10_000,
    loaders: 8,
    rounds: 5,
    build_clients: 16,
    build_session_size: 200,
    build_requests: 200,
    append_sessions: 32,
    appends: 200,
};

pub const SMOKE: GrowthScale = GrowthScale {
    messages: 400,
    sessions: 4,
    loaders: 2,
    rounds: 1,
    build_clients: 2,
    build_session_size: 20,
    build_requests: 3,
    append_sessions: 2,
    appends: 5,
};

/// Messages per AppendTurn while loading.
const LOAD_BATCH: usize = 50;
/// Messages the loaded database's indexing catch-up takes per statement.
const INDEX_BATCH: i64 = 5_000;

/// A server of its own on one database.
struct Replica {
    addr: SocketAddr,
    store: Store,
    pool: PgPool,
    database: String,
    shutdown: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl Replica {
    async fn start(url: &str) -> Replica {
        let (pool, database) = fresh_database(url).await;
        let options = url
            .parse::<PgConnectOptions>()
            .expect("database URL")
            .database(&database);
        let store = Store::connect_with(options, 64)
            .await
            .expect("connect the server's store");
        let engine = Engine::new(
            store.clone(),
            EngineConfig::new(Policy::default(), 4 * 1024 * 1024),
        );
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let shutdown = CancellationToken::new();
        let token = shutdown.clone();
        let task = tokio::spawn(async move {
            ctxd::server::serve(engine, listener, Default::default(), token)
                .await
                .expect("server");
        });
        Replica {
            addr,
            store,
            pool,
            database,
            shutdown,
            task,
        }
    }

    async fn stop(self) -> String {
        self.shutdown.cancel();
        self.task.await.unwrap();
        self.store.close().await;
        self.pool.close().await;
        self.database
    }
}

/// The bytes of what a client sent in `message`: its texts and tool calls.
fn raw_bytes(message: &pb::Message) -> usize {
    message.content.len()
        + message.reasoning.len()
        + message.tool_call_id.len()
        + message.name.len()
        + message
            .tool_calls
            .iter()
            .map(|call| call.id.len() + call.name.len() + call.arguments_json.len())
            .sum::<usize>()
}

/// Where each session of the load starts in the corpus: the user messages, in turn.
fn starts(corpus: &[pb::Message]) -> Vec<usize> {
    corpus
        .iter()
        .enumerate()
        .filter(|(_, m)| m.role == pb::Role::User as i32)
        .map(|(at, _)| at)
        .collect()
}

/// Loads the sessions with `loaders` concurrent clients; returns the raw bytes sent.
async fn load(addr: SocketAddr, corpus: &[pb::Message], scale: &GrowthScale) -> usize {
    let corpus = Arc::new(corpus.to_vec());
    let starts = Arc::new(starts(&corpus));
    let per_session = scale.messages / scale.sessions;
    let mut tasks = Vec::new();
    for loader in 0..scale.loaders {
        let corpus = corpus.clone();
        let starts = starts.clone();
        let (sessions, loaders) = (scale.sessions, scale.loaders);
        tasks.push(tokio::spawn(async move {
            let mut client = client(addr).await;
            let mut bytes = 0;
            for session in (loader..sessions).step_by(loaders) {
                let start = starts[session % starts.len()];
                let messages = replayed(&corpus, start, per_session);
                bytes += messages.iter().map(raw_bytes).sum::<usize>();
                let id = format!("loaded-{session}");
                session_with(&mut client, &id, &[], None, None).await;
                for batch in messages.chunks(LOAD_BATCH) {
                    client
                        .append_turn(pb::AppendTurnRequest {
                            session_id: id.clone(),
                            messages: batch.to_vec(),
                            ..Default::default()
                        })
                        .await
                        .expect("AppendTurn");
                }
            }
            bytes
        }));
    }
    let mut bytes = 0;
    for task in tasks {
        bytes += task.await.unwrap();
    }
    bytes
}

/// Indexes every message still unindexed, as the replicas' indexers would in time.
async fn index_all(store: &Store) -> usize {
    let mut indexed = 0;
    loop {
        let done = store
            .index_some(INDEX_BATCH, false)
            .await
            .expect("index messages");
        if done == 0 {
            return indexed;
        }
        indexed += done as usize;
    }
}

/// The sessions a database's rows use: `build_clients` of `build_session_size`
/// messages to build, `append_sessions` empty ones to append to.
struct Sessions {
    build: Vec<pb::BuildMessagesRequest>,
    append: Vec<(String, usize)>,
}

async fn sessions(addr: SocketAddr, corpus: &[pb::Message], scale: &GrowthScale) -> Sessions {
    let mut setup = client(addr).await;
    let starts = starts(corpus);
    let mut build = Vec::new();
    for index in 0..scale.build_clients {
        let id = format!("growth-build-{index}");
        let messages = replayed(corpus, 0, scale.build_session_size);
        session_with(&mut setup, &id, &messages, None, None).await;
        build.push(pb::BuildMessagesRequest {
            session_id: id,
            system_prompt: "You are a helpful assistant that can interact with a computer.".into(),
            tools: Some(ctxd::replay::bash_tool()),
            ..Default::default()
        });
    }
    let mut append = Vec::new();
    for index in 0..scale.append_sessions {
        let id = format!("growth-append-{index}");
        session_with(&mut setup, &id, &[], None, None).await;
        append.push((id, starts[index % starts.len()]));
    }
    Sessions { build, append }
}

/// One round's figures on one database.
#[derive(Default)]
struct Figures {
    build_p50: Vec<f64>,
    build_p99: Vec<f64>,
    append_rate: Vec<f64>,
    append_p99: Vec<f64>,
}

async fn round(
    addr: SocketAddr,
    sessions: &mut Sessions,
    corpus: &Arc<Vec<pb::Message>>,
    scale: &GrowthScale,
    into: &mut Figures,
) {
    let mut states = Vec::new();
    for request in &sessions.build {
        states.push((client(addr).await, request.clone()));
    }
    let (mut built, _) = concurrent(states, scale.build_requests, |(client, request)| {
        let mut client = client.clone();
        let request = request.clone();
        async move {
            let started = Instant::now();
            client.build_messages(request).await.expect("BuildMessages");
            started.elapsed()
        }
    })
    .await;
    into.build_p50.push(built.quantile_ms(0.5));
    into.build_p99.push(built.quantile_ms(0.99));
    let (mut appended, wall) = appends(addr, sessions, corpus, scale).await;
    into.append_rate
        .push(appended.0.len() as f64 / wall.as_secs_f64());
    into.append_p99.push(appended.quantile_ms(0.99));
}

/// `scale.appends` timed appends per append session, one recorded message each, each
/// session going on through the corpus from where the last round left it.
async fn appends(
    addr: SocketAddr,
    sessions: &mut Sessions,
    corpus: &[pb::Message],
    scale: &GrowthScale,
) -> (Latencies, Duration) {
    let mut states = Vec::new();
    for (id, next) in &sessions.append {
        states.push((client(addr).await, id.clone(), *next));
    }
    let warm_up = (scale.appends / 10).max(1);
    for (_, next) in &mut sessions.append {
        *next += scale.appends + warm_up;
    }
    timed_appends(states, corpus, scale.appends).await
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

pub async fn run(url: &str, corpus: &[pb::Message], scale: &GrowthScale) {
    println!("## Cost as the data grows");
    println!();
    let small = Replica::start(url).await;
    let large = Replica::start(url).await;
    // CTXD_BENCH_SCALE_SQL: statements run on both databases first (to try a storage
    // setting before making it a migration).
    if let Ok(sql) = std::env::var("CTXD_BENCH_SCALE_SQL") {
        for replica in [&small, &large] {
            sqlx::raw_sql(sqlx::AssertSqlSafe(sql.clone()))
                .execute(&replica.pool)
                .await
                .expect("CTXD_BENCH_SCALE_SQL");
        }
    }
    let started = Instant::now();
    let raw = load(large.addr, corpus, scale).await;
    let loaded = started.elapsed();
    let started = Instant::now();
    let indexed = index_all(&large.store).await;
    let indexing = started.elapsed();
    println!(
        "Loaded {} messages in {} sessions ({} per session, the corpus replayed from each \
         user message in turn, {} per AppendTurn, {} clients): {:.0} s, {:.0} messages/s; \
         search vectors of {indexed} messages: {:.0} s.",
        scale.messages / scale.sessions * scale.sessions,
        scale.sessions,
        scale.messages / scale.sessions,
        LOAD_BATCH,
        scale.loaders,
        loaded.as_secs_f64(),
        scale.messages as f64 / loaded.as_secs_f64(),
        indexing.as_secs_f64()
    );
    println!();
    storage(&large.pool, raw).await;
    timed(&small, &large, corpus, scale).await;
    let (small_db, large_db) = (small.stop().await, large.stop().await);
    for name in [small_db, large_db] {
        crate::drop_database(url, &name).await;
    }
}

/// The rows against both databases, alternating, and their medians.
async fn timed(small: &Replica, large: &Replica, corpus: &[pb::Message], scale: &GrowthScale) {
    let mut small_sessions = sessions(small.addr, corpus, scale).await;
    let mut large_sessions = sessions(large.addr, corpus, scale).await;
    // Both measured in their steady state, with their statistics, not while autovacuum
    // catches up on the load.
    for replica in [small, large] {
        sqlx::query("vacuum (analyze)")
            .execute(&replica.pool)
            .await
            .expect("vacuum");
    }
    let (mut on_small, mut on_large) = (Figures::default(), Figures::default());
    let corpus = Arc::new(corpus.to_vec());
    for r in 0..scale.rounds {
        let small_first = r % 2 == 0;
        for small_now in [small_first, !small_first] {
            if small_now {
                round(
                    small.addr,
                    &mut small_sessions,
                    &corpus,
                    scale,
                    &mut on_small,
                )
                .await;
            } else {
                round(
                    large.addr,
                    &mut large_sessions,
                    &corpus,
                    scale,
                    &mut on_large,
                )
                .await;
            }
        }
    }
    println!(
        "BuildMessages: {} clients, each its own session of {} recorded messages, {} builds \
         each per round; AppendTurn: {} sessions, one recorded message per call, {} each \
         per round. Medians of {} rounds, the databases alternating.",
        scale.build_clients,
        scale.build_session_size,
        scale.build_requests,
        scale.append_sessions,
        scale.appends,
        scale.rounds
    );
    println!();
    println!("database | build p50 ms | build p99 ms | appends/s | append p99 ms");
    println!("---|---|---|---|---");
    let mut rows = Vec::new();
    for (name, figures) in [("small", on_small), ("loaded", on_large)] {
        let row = [
            median(figures.build_p50),
            median(figures.build_p99),
            median(figures.append_rate),
            median(figures.append_p99),
        ];
        println!(
            "{name} | {:.2} | {:.2} | {:.0} | {:.2}",
            row[0], row[1], row[2], row[3]
        );
        rows.push(row);
    }
    println!(
        "loaded / small | {:.2} | {:.2} | {:.2} | {:.2}",
        rows[1][0] / rows[0][0],
        rows[1][1] / rows[0][1],
        rows[1][2] / rows[0][2],
        rows[1][3] / rows[0][3]
    );
    println!();
}

/// Bytes on disk of every table of the loaded database (heap, indexes, TOAST), per
/// message and against the raw bytes the clients sent.
async fn storage(pool: &PgPool, raw: usize) {
    let messages: i64 = sqlx::query_scalar("select count(*) from messages")
        .fetch_one(pool)
        .await
        .expect("count messages");
    let tables: Vec<(String, i64, i64, i64, i64)> = sqlx::query_as(
        "select c.relname::text, pg_total_relation_size(c.oid), pg_relation_size(c.oid),
             pg_indexes_size(c.oid),
             coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0)
         from pg_class c
         where c.relkind = 'r' and c.relnamespace = 'public'::regnamespace
         order by 2 desc",
    )
    .fetch_all(pool)
    .await
    .expect("table sizes");
    let total: i64 = tables.iter().map(|t| t.1).sum();
    println!(
        "On disk after the load: {:.1} MB in all for {messages} messages, {:.0} bytes per \
         message; the raw bytes the clients sent (texts, tool calls): {:.1} MB, {:.0} per \
         message; **on disk / raw: {:.2}**.",
        total as f64 / 1e6,
        total as f64 / messages as f64,
        raw as f64 / 1e6,
        raw as f64 / messages as f64,
        total as f64 / raw as f64
    );
    println!();
    let columns: (i64, i64, i64, i64, i64) = sqlx::query_as(
        "select coalesce(sum(pg_column_size(content)), 0)::bigint,
             coalesce(sum(pg_column_size(search)), 0)::bigint,
             coalesce(sum(pg_column_size(tool_calls)), 0)::bigint,
             coalesce(sum(pg_column_size(m.*)), 0)::bigint,
             coalesce(sum(octet_length(content)), 0)::bigint
         from messages m",
    )
    .fetch_one(pool)
    .await
    .expect("column sizes");
    let dead: i64 = sqlx::query_scalar(
        "select coalesce(sum(n_dead_tup), 0)::bigint from pg_stat_user_tables where relname = 'messages'",
    )
    .fetch_one(pool)
    .await
    .expect("dead rows");
    let per = |bytes: i64| bytes as f64 / messages as f64;
    println!(
        "Per message, as stored (after any compression): the whole row {:.0} bytes, of \
         which content {:.0} (its text: {:.0}), search vector {:.0}, tool calls {:.0}; \
         {dead} dead row versions in messages (the search indexer rewrites each row once).",
        per(columns.3),
        per(columns.0),
        per(columns.4),
        per(columns.1),
        per(columns.2)
    );
    println!();
    println!("table | total MB | heap MB | indexes MB | TOAST MB | bytes per message");
    println!("---|---|---|---|---|---");
    for (name, all, heap, indexes, toast) in tables.iter().filter(|t| t.1 >= 1 << 20) {
        println!(
            "{name} | {:.1} | {:.1} | {:.1} | {:.1} | {:.0}",
            *all as f64 / 1e6,
            *heap as f64 / 1e6,
            *indexes as f64 / 1e6,
            *toast as f64 / 1e6,
            *all as f64 / messages as f64
        );
    }
    println!();
}
