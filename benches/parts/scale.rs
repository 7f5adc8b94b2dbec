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
    /// The database's name when the part created it (and drops it at the end).
    created: Option<String>,
    shutdown: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl Replica {
    /// A server on a fresh database on `url`'s server.
    async fn start(url: &str) -> Replica {
        let (pool, database) = fresh_database(url).await;
        let options = url
            .parse::<PgConnectOptions>()
            .expect("database URL")
            .database(&database);
        Replica::serve(options, pool, Some(database), None).await
    }

    /// A server on the database `url` names, already migrated, with `writers` batch
    /// writers of appends (`--append-writers`; `None`: the store's default).
    async fn attach(url: &str, writers: Option<usize>) -> Replica {
        let options = url.parse::<PgConnectOptions>().expect("database URL");
        let pool = sqlx::postgres::PgPoolOptions::new()
            .max_connections(4)
            .connect_with(options.clone())
            .await
            .expect("connect to the given database");
        Replica::serve(options, pool, None, writers).await
    }

    async fn serve(
        options: PgConnectOptions,
        pool: PgPool,
        created: Option<String>,
        writers: Option<usize>,
    ) -> Replica {
        let mut store = Store::connect_with(options, 64)
            .await
            .expect("connect the server's store");
        if let Some(writers) = writers {
            store = store.append_writers(writers);
        }
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
            created,
            shutdown,
            task,
        }
    }

    /// Stops the server; the name of the database to drop, if the part created it.
    async fn stop(self) -> Option<String> {
        self.shutdown.cancel();
        self.task.await.unwrap();
        self.store.close().await;
        self.pool.close().await;
        self.created
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

/// The two databases of one engine: a small one and one loaded with the recorded
/// sessions, each with a server of its own.
struct Pair {
    engine: &'static str,
    small: Replica,
    large: Replica,
}

impl Pair {
    /// Both fresh databases on `url`'s server (dropped at the end).
    async fn fresh(engine: &'static str, url: &str) -> Pair {
        let small = Replica::start(url).await;
        let large = Replica::start(url).await;
        Pair {
            engine,
            small,
            large,
        }
    }

    /// The two databases `urls` names ("SMALL,LOADED"), already migrated (and on Citus
    /// placed by `ctxd migrate --distribute`); they are kept.
    async fn attached(engine: &'static str, urls: &str) -> Pair {
        let (small, large) = urls
            .split_once(',')
            .expect("CTXD_BENCH_CITUS_URLS: the small database's URL, a comma, the loaded one's");
        // CTXD_BENCH_CITUS_APPEND_WRITERS=n: the cluster's servers' `--append-writers`.
        let writers = std::env::var("CTXD_BENCH_CITUS_APPEND_WRITERS")
            .ok()
            .and_then(|n| n.parse().ok());
        Pair {
            engine,
            small: Replica::attach(small.trim(), writers).await,
            large: Replica::attach(large.trim(), writers).await,
        }
    }

    async fn stop(self, url: &str) {
        for replica in [self.small, self.large] {
            if let Some(name) = replica.stop().await {
                crate::drop_database(url, &name).await;
            }
        }
    }
}

/// The engines a run compares: a fresh pair on `url`'s PostgreSQL, and with
/// `CTXD_BENCH_CITUS_URLS` (two databases on a Citus coordinator, `scripts/citus/bench`)
/// a pair on the cluster, measured in the same run, alternating.
async fn pairs(url: &str) -> Vec<Pair> {
    let mut pairs = vec![Pair::fresh("one PostgreSQL", url).await];
    if let Ok(urls) = std::env::var("CTXD_BENCH_CITUS_URLS") {
        pairs.push(Pair::attached("Citus, two workers", &urls).await);
    }
    // CTXD_BENCH_SCALE_SQL: statements run on every database first (to try a storage
    // setting before making it a migration).
    if let Ok(sql) = std::env::var("CTXD_BENCH_SCALE_SQL") {
        for replica in pairs.iter().flat_map(|pair| [&pair.small, &pair.large]) {
            sqlx::raw_sql(sqlx::AssertSqlSafe(sql.clone()))
                .execute(&replica.pool)
                .await
                .expect("CTXD_BENCH_SCALE_SQL");
        }
    }
    pairs
}

pub async fn run(url: &str, corpus: &[pb::Message], scale: &GrowthScale) {
    println!("## Cost as the data grows");
    println!();
    let pairs = pairs(url).await;
    for pair in &pairs {
        println!("### {}", pair.engine);
        println!();
        loaded(&pair.large, corpus, scale).await;
    }
    timed(&pairs, corpus, scale).await;
    for pair in pairs {
        pair.stop(url).await;
    }
}

/// Loads `large`, indexes it for search, and prints the time and the bytes on disk.
async fn loaded(large: &Replica, corpus: &[pb::Message], scale: &GrowthScale) {
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
    crate::disk::storage(&large.pool, raw).await;
}

/// Vacuums and analyzes every table: on Citus each distributed table by name, which
/// the coordinator sends to its shards (a bare `vacuum` would only do the coordinator).
async fn vacuum(pool: &PgPool) {
    let statement = if crate::disk::is_citus(pool).await {
        let tables: String = sqlx::query_scalar(
            "select string_agg(logicalrelid::regclass::text, ', ') from pg_dist_partition",
        )
        .fetch_one(pool)
        .await
        .expect("distributed tables");
        format!("vacuum (analyze) {tables}")
    } else {
        "vacuum (analyze)".to_string()
    };
    sqlx::raw_sql(sqlx::AssertSqlSafe(statement))
        .execute(pool)
        .await
        .expect("vacuum");
}

/// One database's place in the rounds.
struct Timed<'a> {
    replica: &'a Replica,
    sessions: Sessions,
    figures: Figures,
}

/// The rows against every database, the order rotating round by round, and their
/// medians.
async fn timed(pairs: &[Pair], corpus: &[pb::Message], scale: &GrowthScale) {
    let mut all = Vec::new();
    for replica in pairs.iter().flat_map(|pair| [&pair.small, &pair.large]) {
        let sessions = sessions(replica.addr, corpus, scale).await;
        all.push(Timed {
            replica,
            sessions,
            figures: Figures::default(),
        });
    }
    // Each measured in its steady state, with its statistics, not while autovacuum
    // catches up on the load.
    for database in &all {
        vacuum(&database.replica.pool).await;
    }
    let corpus = Arc::new(corpus.to_vec());
    let databases = all.len();
    for r in 0..scale.rounds {
        for turn in 0..databases {
            let database = &mut all[(r + turn) % databases];
            let addr = database.replica.addr;
            round(
                addr,
                &mut database.sessions,
                &corpus,
                scale,
                &mut database.figures,
            )
            .await;
        }
    }
    println!(
        "BuildMessages: {} clients, each its own session of {} recorded messages, {} builds \
         each per round; AppendTurn: {} sessions, one recorded message per call, {} each \
         per round. Medians of {} rounds, the databases in turn (the first one rotating).",
        scale.build_clients,
        scale.build_session_size,
        scale.build_requests,
        scale.append_sessions,
        scale.appends,
        scale.rounds
    );
    println!();
    table(
        pairs,
        all.into_iter().map(|database| database.figures).collect(),
    );
}

/// A database's row: build p50, build p99, appends/s, append p99.
fn row(figures: Figures) -> [f64; 4] {
    [
        median(figures.build_p50),
        median(figures.build_p99),
        median(figures.append_rate),
        median(figures.append_p99),
    ]
}

fn print_row(name: &str, row: [f64; 4]) {
    println!(
        "{name} | {:.2} | {:.2} | {:.0} | {:.2}",
        row[0], row[1], row[2], row[3]
    );
}

fn print_ratio(name: &str, over: [f64; 4], under: [f64; 4]) {
    let ratio: Vec<String> = (0..4)
        .map(|i| format!("{:.2}", over[i] / under[i]))
        .collect();
    println!("**{name}** | {}", ratio.join(" | "));
}

/// The table: each engine's small and loaded database and their ratio, then each
/// further engine against the first, database by database.
fn table(pairs: &[Pair], figures: Vec<Figures>) {
    let rows: Vec<[f64; 4]> = figures.into_iter().map(row).collect();
    println!("database | build p50 ms | build p99 ms | appends/s | append p99 ms");
    println!("---|---|---|---|---");
    for (at, pair) in pairs.iter().enumerate() {
        let (small, large) = (rows[2 * at], rows[2 * at + 1]);
        print_row(&format!("{}: small", pair.engine), small);
        print_row(&format!("{}: loaded", pair.engine), large);
        print_ratio(&format!("{}: loaded / small", pair.engine), large, small);
    }
    for (at, pair) in pairs.iter().enumerate().skip(1) {
        let name = format!("{} / {}", pair.engine, pairs[0].engine);
        print_ratio(&format!("{name}, small"), rows[2 * at], rows[0]);
        print_ratio(&format!("{name}, loaded"), rows[2 * at + 1], rows[1]);
    }
    println!();
}
