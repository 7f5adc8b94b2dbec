//! Benchmarks of the core, printed as the markdown tables of docs/benchmarks.md:
//!
//!   cargo bench --bench core
//!
//! - BuildMessages on sessions of 200 and 2 000 recorded messages with 16 concurrent
//!   clients (one connection each), p50 / p99, against a raw SQL fetch of the same rows
//!   with 16 concurrent tasks and against the transport floor (the same response from a
//!   server doing nothing else, `parts/floor.rs`) in the same run;
//! - AppendTurn throughput and latency with 32 sessions appending concurrently, without
//!   and with summarization jobs enqueued by the appends (no-op workers draining them),
//!   against the raw SQL write and that write behind gRPC (the floor), and at an offered
//!   2 000 appends/s (open loop);
//! - the job queue: claim + complete throughput of no-op jobs against the bare commit
//!   rate, enqueue → claim latency woken by NOTIFY and by polling alone;
//! - events: commit → subscriber latency and deliveries per second with 1 000
//!   SubscribeEvents streams on one replica (session streams and tenant streams);
//! - ForkSession of sources of 200, 2 000 and 20 000 messages (at the last seq and at the
//!   middle) against CreateSession in the same run, alternating: time and WAL bytes
//!   (`parts/forks.rs`);
//! - exact token counting speed on the recorded corpus, and on 1 MB without whitespace,
//!   for o200k_base, cl100k_base and deepseek_v3.
//!
//! The server, its clients and PostgreSQL share the machine. The database is a fresh one
//! on DATABASE_URL's server when that is set, otherwise a private PostgreSQL started in a
//! temporary directory exactly as `ctxd serve` starts its own (default settings, fsync on).
//!
//! - the provider endpoint's added latency against a fake upstream, and its first byte
//!   (`parts/proxy.rs`).
//!
//! - cost as the data grows: the BuildMessages and AppendTurn rows against a database of
//!   1 000 000 recorded messages in 10 000 sessions and against a small one, alternating,
//!   and the loaded database's bytes on disk (`parts/scale.rs`; only with
//!   `CTXD_BENCH_ONLY=scale`, the load takes minutes; `CTXD_BENCH_LOADED_MESSAGES=n`
//!   loads n in n / 100 sessions; `CTXD_BENCH_CITUS_URLS=SMALL,LOADED`, two databases on
//!   a Citus coordinator, measures them in the same run: `scripts/citus/bench`).
//! - the server process's resident memory, idle, with 10 000 sessions built, through a
//!   burst of 4 MB messages and 1 000 event streams, and after (`parts/memory.rs`; only
//!   with `CTXD_BENCH_ONLY=memory`).
//!
//! `CTXD_BENCH_ONLY=counting`, `build`, `append`, `jobs`, `events`, `forks`, `proxy`,
//! `metrics`, `scale` or `memory` runs one part;
//! `CTXD_BENCH_METRICS=1` records the metrics as `ctxd serve --metrics-listen` does.
//!
//! `cargo test --all-targets` runs this binary without `--bench`: then it does a smoke
//! run with tiny sizes, so the code keeps working; those figures mean nothing.
#[path = "parts/disk.rs"]
mod disk;
#[path = "parts/events.rs"]
mod fanout;
#[path = "parts/floor.rs"]
mod floor;
#[path = "parts/forks.rs"]
mod forking;
#[path = "parts/scale.rs"]
mod growth;
#[path = "parts/proxy.rs"]
mod proxying;
#[path = "parts/jobs.rs"]
mod queue;
#[path = "../tests/it/recorded.rs"]
#[allow(dead_code)]
mod recorded;
#[path = "parts/metrics.rs"]
mod recording;
#[path = "parts/memory.rs"]
mod resident;
#[path = "parts/counting.rs"]
mod tokens;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ctxd::engine::{Engine, EngineConfig};
use ctxd::localpg::LocalPostgres;
use ctxd::pb;
use ctxd::pb::context_service_client::ContextServiceClient;
use ctxd::policy::Policy;
use ctxd::store::Store;
use ctxd::summarizer::model::{ModelSummarizer, Profile};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{PgPool, Row};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tonic::transport::Channel;

/// The summarizer profile of the sessions whose appends enqueue jobs.
const MODEL_PROFILE: &str = "bench-model";

/// How much work each part does.
struct Scale {
    session_sizes: [usize; 2],
    build_clients: usize,
    /// Timed BuildMessages per client, per session size.
    build_requests: [usize; 2],
    /// Window of the "compaction on" case.
    compacted_window: i64,
    append_sessions: usize,
    appends_per_session: usize,
    counting_rounds: usize,
}

const FULL: Scale = Scale {
    session_sizes: [200, 2_000],
    build_clients: 16,
    build_requests: [200, 25],
    compacted_window: 16_000,
    append_sessions: 32,
    appends_per_session: 200,
    counting_rounds: 3,
};

const SMOKE: Scale = Scale {
    session_sizes: [20, 40],
    build_clients: 2,
    build_requests: [3, 2],
    compacted_window: 4_000,
    append_sessions: 2,
    appends_per_session: 5,
    counting_rounds: 1,
};

fn main() {
    // A panic in any task ends the run: otherwise the other tasks would wait at their
    // barrier for the one that died, and the run (in CI, the smoke run) would hang.
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        report(info);
        std::process::exit(101);
    }));
    let full = std::env::args().any(|arg| arg == "--bench");
    let (scale, job_scale, event_scale) = if full {
        (FULL, queue::FULL, fanout::FULL)
    } else {
        (SMOKE, queue::SMOKE, fanout::SMOKE)
    };
    // CTXD_BENCH_REPEAT=n: n times as many timed builds and appends, long enough to
    // profile (the agent-loop case's sessions grow n times as long: not comparable).
    let repeat: usize = std::env::var("CTXD_BENCH_REPEAT")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1)
        .max(1);
    let scale = Scale {
        build_requests: scale.build_requests.map(|n| n * repeat),
        appends_per_session: scale.appends_per_session * repeat,
        ..scale
    };
    // CTXD_BENCH_LOG=warn (a tracing filter) shows what the server and workers log.
    let _telemetry = std::env::var("CTXD_BENCH_LOG").ok().map(|filter| {
        ctxd::telemetry::init(ctxd::config::LogFormat::Text, &filter).expect("log filter")
    });
    // CTXD_BENCH_METRICS=1 records every metric as `ctxd serve --metrics-listen` does
    // (the instruments are no-ops otherwise), to measure what recording costs.
    let _metrics = std::env::var("CTXD_BENCH_METRICS")
        .is_ok_and(|v| v == "1")
        .then(|| {
            let pipeline = ctxd::metrics::MetricsPipeline::new(false, true)
                .expect("metrics pipeline")
                .expect("a pull pipeline");
            ctxd::metrics::install(&pipeline.meter());
            pipeline
        });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    runtime.block_on(run(&scale, &job_scale, &event_scale, full));
}

async fn run(
    scale: &Scale,
    job_scale: &queue::JobScale,
    event_scale: &fanout::EventScale,
    full: bool,
) {
    let corpus = corpus_messages();
    let texts = corpus_texts();
    println!(
        "# ctxd core benchmarks{}",
        if full {
            ""
        } else {
            " (smoke run: figures mean nothing)"
        }
    );
    println!();
    machine();
    // CTXD_BENCH_ONLY=counting|build|append|jobs|events|forks runs one part (for profiling).
    let only = std::env::var("CTXD_BENCH_ONLY").ok();
    let part = |name: &str| only.as_deref().is_none_or(|only| only == name);
    if part("counting") {
        tokens::counting(&texts, scale.counting_rounds, full);
    }

    let temp = tempfile::tempdir().expect("temp dir");
    let (url, local) = match std::env::var("DATABASE_URL") {
        Ok(url) => (url, None),
        Err(_) => {
            let local = LocalPostgres::start(&temp.path().join("pg"))
                .await
                .expect("start a private PostgreSQL (set DATABASE_URL to use another)");
            (local.url(), Some(local))
        }
    };
    let (pool, database) = fresh_database(&url).await;
    let mut config = EngineConfig::new(Policy::default(), 4 * 1024 * 1024);
    // A model-backed profile, so appends past the threshold enqueue summarization jobs;
    // no-op workers take them, the model is never called.
    let profile: Profile = serde_json::from_value(serde_json::json!({
        "api": "openai", "base_url": "http://127.0.0.1:9", "model": "none"
    }))
    .unwrap();
    config.summarizers.insert(
        MODEL_PROFILE.into(),
        Some(Arc::new(ModelSummarizer::with_key(profile, None).unwrap())),
    );
    // The server's store as `ctxd serve` connects it (its pools and their settings).
    let store = Store::connect_with(
        url.parse::<PgConnectOptions>()
            .expect("database URL")
            .database(&database),
        64,
    )
    .await
    .expect("connect the server's store")
    // CTXD_APPEND_WRITERS as `ctxd serve` reads it (default 1).
    .append_writers(
        std::env::var("CTXD_APPEND_WRITERS")
            .ok()
            .and_then(|writers| writers.parse().ok())
            .unwrap_or(ctxd::store::DEFAULT_APPEND_WRITERS),
    )
    // CTXD_APPEND_BY_FUNCTION as `ctxd serve` reads it: appends by ctxd_append.
    .append_by_function(std::env::var("CTXD_APPEND_BY_FUNCTION").is_ok_and(|v| v == "true"));
    let engine = Engine::new(store.clone(), config);
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let shutdown = CancellationToken::new();
    let server = tokio::spawn(ctxd::server::serve(
        engine.clone(),
        listener,
        ctxd::server::ServeOptions::default(),
        shutdown.clone(),
    ));
    if part("build") {
        // A second replica on the same database that reads every view from the table,
        // for this part only: every replica runs its own search indexer, and the other
        // parts measure one replica.
        let uncached = Engine::new(store.clone().view_cache_bytes(0), engine.config().clone());
        let uncached_listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let uncached_addr = uncached_listener.local_addr().unwrap();
        let stop_uncached = CancellationToken::new();
        let uncached_server = tokio::spawn(ctxd::server::serve(
            uncached,
            uncached_listener,
            ctxd::server::ServeOptions::default(),
            stop_uncached.clone(),
        ));
        build_messages([addr, uncached_addr], &pool, &corpus, scale).await;
        stop_uncached.cancel();
        uncached_server
            .await
            .unwrap()
            .expect("server without a view cache");
    }
    if part("append") {
        append_turn(addr, &pool, &corpus, scale).await;
    }
    if part("jobs") {
        queue::run(&pool, job_scale).await;
    }
    if part("events") {
        fanout::run(addr, &pool, event_scale).await;
    }
    if part("proxy") {
        let proxy_scale = if full {
            proxying::FULL
        } else {
            proxying::SMOKE
        };
        proxying::run(addr, &engine, &store, &corpus, &proxy_scale).await;
    }
    if part("forks") {
        let fork_scale = if full { forking::FULL } else { forking::SMOKE };
        forking::run(addr, &pool, &store, &corpus, &fork_scale).await;
    }
    if only.as_deref() == Some("scale") || (!full && part("scale")) {
        growth::run(&url, &corpus, &growth_scale(full)).await;
    }
    if only.as_deref() == Some("memory") || (!full && part("memory")) {
        let memory_scale = if full {
            resident::FULL
        } else {
            resident::SMOKE
        };
        // CTXD_BENCH_VIEW_CACHE_MB=n: the server's view cache instead of the part's.
        let memory_scale = resident::MemoryScale {
            cache_mb: std::env::var("CTXD_BENCH_VIEW_CACHE_MB")
                .ok()
                .and_then(|mb| mb.parse().ok())
                .unwrap_or(memory_scale.cache_mb),
            ..memory_scale
        };
        resident::run(&url, &corpus, &memory_scale).await;
    }

    shutdown.cancel();
    server.await.unwrap().expect("server");
    pool.close().await;
    if part("metrics") {
        recording::run(if full {
            &recording::FULL
        } else {
            &recording::SMOKE
        });
    }
    store.close().await;
    drop_database(&url, &database).await;
    if let Some(local) = local {
        local.stop().await.expect("stop the private PostgreSQL");
    }
}

/// The scale part's sizes: `CTXD_BENCH_LOADED_MESSAGES=n` loads n messages in n / 100
/// sessions instead of the full million, `CTXD_BENCH_SCALE_ROUNDS=n` times n rounds
/// instead of five.
fn growth_scale(full: bool) -> growth::GrowthScale {
    if !full {
        return growth::SMOKE;
    }
    let number = |name: &str| {
        std::env::var(name)
            .ok()
            .and_then(|n| n.parse::<usize>().ok())
    };
    let messages = number("CTXD_BENCH_LOADED_MESSAGES").unwrap_or(growth::FULL.messages);
    growth::GrowthScale {
        messages,
        sessions: (messages / 100).max(1),
        rounds: number("CTXD_BENCH_SCALE_ROUNDS").unwrap_or(growth::FULL.rounds),
        ..growth::FULL
    }
}

fn machine() {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|line| line.starts_with("model name"))
                .and_then(|line| line.split(':').nth(1))
                .map(|name| name.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!("Machine: {cpu}, {cores} cores available.");
    println!();
}

/// Every message of the corpus, sessions one after another, with tool-call ids made
/// unique per session so the concatenation is one valid log.
fn corpus_messages() -> Vec<pb::Message> {
    let mut all = Vec::new();
    for (index, path) in recorded::corpus_files().iter().enumerate() {
        for (mut message, _) in recorded::load(path).messages {
            for call in &mut message.tool_calls {
                call.id = format!("s{index}-{}", call.id);
            }
            if !message.tool_call_id.is_empty() {
                message.tool_call_id = format!("s{index}-{}", message.tool_call_id);
            }
            all.push(message);
        }
    }
    all
}

/// `n` messages of the corpus from `start` on, repeated as needed, each repetition's
/// tool-call ids its own.
fn replayed(corpus: &[pb::Message], start: usize, n: usize) -> Vec<pb::Message> {
    (0..n)
        .map(|i| {
            let at = start + i;
            let mut message = corpus[at % corpus.len()].clone();
            let round = at / corpus.len();
            for call in &mut message.tool_calls {
                call.id = format!("r{round}-{}", call.id);
            }
            if !message.tool_call_id.is_empty() {
                message.tool_call_id = format!("r{round}-{}", message.tool_call_id);
            }
            message
        })
        .collect()
}

/// Every text the corpus carries: system prompts, contents, tool-call arguments.
fn corpus_texts() -> Vec<String> {
    let mut texts = Vec::new();
    for path in recorded::corpus_files() {
        let recorded = recorded::load(&path);
        texts.push(recorded.system);
        for (message, _) in recorded.messages {
            texts.push(message.content);
            texts.extend(
                message
                    .tool_calls
                    .into_iter()
                    .map(|call| call.arguments_json),
            );
        }
    }
    texts
}

async fn admin(url: &str) -> (PgPool, PgConnectOptions) {
    let options: PgConnectOptions = url.parse().expect("database URL");
    let admin = PgPoolOptions::new()
        .max_connections(1)
        .connect_with(options.clone())
        .await
        .expect("connect to PostgreSQL");
    (admin, options)
}

async fn drop_database(url: &str, name: &str) {
    let (admin, _) = admin(url).await;
    sqlx::query(sqlx::AssertSqlSafe(format!("drop database {name}")))
        .execute(&admin)
        .await
        .expect("drop the benchmark database");
    admin.close().await;
}

async fn fresh_database(url: &str) -> (PgPool, String) {
    let (admin, options) = admin(url).await;
    let name = format!("ctxd_bench_{}", uuid::Uuid::new_v4().simple());
    sqlx::query(sqlx::AssertSqlSafe(format!("create database {name}")))
        .execute(&admin)
        .await
        .expect("create the benchmark database");
    admin.close().await;
    let pool = PgPoolOptions::new()
        .max_connections(64)
        .connect_with(options.database(&name))
        .await
        .expect("connect to the benchmark database");
    ctxd::store::MIGRATOR.run(&pool).await.expect("migrations");
    (pool, name)
}

async fn client(addr: SocketAddr) -> ContextServiceClient<Channel> {
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect()
        .await
        .expect("connect to the server");
    ContextServiceClient::new(channel)
        .max_decoding_message_size(usize::MAX)
        .max_encoding_message_size(usize::MAX)
}

/// Creates a session with `window` (`None`: one that holds everything) and the
/// summarizer `profile` (`None`: the default), and appends `messages` to it.
async fn session_with(
    client: &mut ContextServiceClient<Channel>,
    session_id: &str,
    messages: &[pb::Message],
    window: Option<i64>,
    profile: Option<&str>,
) {
    client
        .create_session(pb::CreateSessionRequest {
            session_id: session_id.into(),
            policy: Some(pb::Policy {
                context_window_tokens: Some(window.unwrap_or(50_000_000)),
                max_output_tokens: Some(window.map_or(16_000, |w| w / 4)),
                summarizer_profile: profile.map(str::to_string),
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .expect("CreateSession");
    for batch in messages.chunks(50) {
        client
            .append_turn(pb::AppendTurnRequest {
                session_id: session_id.into(),
                messages: batch.to_vec(),
                ..Default::default()
            })
            .await
            .expect("AppendTurn");
    }
}

#[derive(Debug)]
struct Latencies(Vec<Duration>);

/// Rounds in which the floors and ctxd alternate (each a share of the case's calls).
const FLOOR_ROUNDS: usize = 3;

impl Latencies {
    fn quantile_ms(&mut self, q: f64) -> f64 {
        self.0.sort();
        let index = ((self.0.len() - 1) as f64 * q).round() as usize;
        self.0[index].as_secs_f64() * 1e3
    }
}

/// Runs `requests` calls of `work` on each of `clients` concurrent tasks after a
/// warm-up; returns every call's latency (as `work` measured it: the part it times) and
/// the wall time of the timed part.
async fn concurrent<S, F, Fut>(states: Vec<S>, requests: usize, work: F) -> (Latencies, Duration)
where
    S: Send + 'static,
    F: Fn(&mut S) -> Fut + Send + Sync + Clone + 'static,
    Fut: std::future::Future<Output = Duration> + Send,
{
    let warm_up = (requests / 10).max(1);
    let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(states.len() + 1));
    let mut tasks = Vec::new();
    for mut state in states {
        let barrier = barrier.clone();
        let work = work.clone();
        tasks.push(tokio::spawn(async move {
            for _ in 0..warm_up {
                work(&mut state).await;
            }
            barrier.wait().await;
            let mut latencies = Vec::with_capacity(requests);
            for _ in 0..requests {
                latencies.push(work(&mut state).await);
            }
            latencies
        }));
    }
    barrier.wait().await;
    let started = Instant::now();
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await.unwrap());
    }
    (Latencies(all), started.elapsed())
}

/// One BuildMessages case: session size, timed builds per client, window, whether a
/// message is appended before each build, concurrent clients and the output format.
struct BuildCase {
    size: usize,
    requests: usize,
    window: Option<i64>,
    append_first: bool,
    clients: usize,
    format: pb::OutputFormat,
}

async fn build_messages(
    [addr, uncached_addr]: [SocketAddr; 2],
    pool: &PgPool,
    corpus: &[pb::Message],
    scale: &Scale,
) {
    println!("## BuildMessages");
    println!();
    println!(
        "{} concurrent clients, each on its own connection building its own session of \
         that many recorded messages; NEUTRAL format unless the case names another, the bash tool. Two replicas on the \
         database: one with its view cache (the default), one without (every build reads \
         the view from the table); each case runs on one, then the other. Raw SQL: the \
         same rows fetched with sqlx (`select … from messages where session_id = $1 and \
         seq >= $2 order by seq`) by {} concurrent tasks, one per session.",
        scale.build_clients, scale.build_clients
    );
    println!();
    println!(
        "case | response KB | calls | cached p50 ms | p99 ms | cache off p50 ms | p99 ms | raw SQL p50 ms | p99 ms | cached p99 / raw | cache off p99 / raw | cached builds/s"
    );
    println!("---|---|---|---|---|---|---|---|---|---|---|---");
    let mut setup = client(addr).await;
    // The third case: the smaller session in a 16 000-token window, so every build runs
    // on a compacted view (summaries, cleared results) — compaction on. The fourth: an
    // agent's loop, a new message appended (not timed) before each timed build. The
    // fifth: one client alone, the latency without queueing for the two cores. The last
    // two: the provider JSON bodies instead of proto messages.
    let clients = scale.build_clients;
    let case = |size: usize, requests: usize| BuildCase {
        size,
        requests,
        window: None,
        append_first: false,
        clients,
        format: pb::OutputFormat::Neutral,
    };
    let [small, large] = scale.session_sizes;
    let [small_requests, large_requests] = scale.build_requests;
    let cases = [
        case(small, small_requests),
        case(large, large_requests),
        BuildCase {
            window: Some(scale.compacted_window),
            ..case(small, small_requests)
        },
        BuildCase {
            append_first: true,
            ..case(small, small_requests)
        },
        BuildCase {
            clients: 1,
            ..case(small, small_requests)
        },
        BuildCase {
            format: pb::OutputFormat::OpenaiChat,
            ..case(small, small_requests)
        },
        BuildCase {
            format: pb::OutputFormat::AnthropicMessages,
            ..case(small, small_requests)
        },
    ];
    let mut floors = Vec::new();
    // CTXD_BENCH_BUILD_CASE=n runs only the n-th case (0-based), e.g. under a profiler.
    let only_case: Option<usize> = std::env::var("CTXD_BENCH_BUILD_CASE")
        .ok()
        .and_then(|n| n.parse().ok());
    for (index, case) in cases.into_iter().enumerate() {
        if only_case.is_some_and(|only| only != index) {
            continue;
        }
        let BuildCase {
            size,
            requests,
            window,
            append_first,
            clients,
            format,
        } = case;
        let messages = &corpus[..size.min(corpus.len())];
        let mut sessions = Vec::new();
        let mut fetchers = Vec::new();
        for client in 0..clients {
            let session_id = format!("bench-build-{index}-{client}");
            session_with(&mut setup, &session_id, messages, window, None).await;
            let session_pk: i64 =
                sqlx::query_scalar("select id from sessions where external_id = $1")
                    .bind(&session_id)
                    .fetch_one(pool)
                    .await
                    .expect("session row");
            let request = pb::BuildMessagesRequest {
                session_id,
                system_prompt: "You are a helpful assistant that can interact with a computer."
                    .into(),
                tools: Some(ctxd::replay::bash_tool()),
                format: format as i32,
                ..Default::default()
            };
            sessions.push(request);
            fetchers.push((pool.clone(), session_pk));
        }
        let sample = setup
            .build_messages(sessions[0].clone())
            .await
            .unwrap()
            .into_inner();
        // Every recorded session ends on a tool call that was never answered; inside the
        // concatenation such a step is left out (it is not the last), nothing else is.
        let trimmed = sample.trimmed.unwrap_or_default();
        assert_eq!(trimmed.turns, 0, "nothing trimmed");
        if window.is_none() {
            let built = match format {
                pb::OutputFormat::OpenaiChat => {
                    let body: serde_json::Value =
                        serde_json::from_str(&sample.json).expect("a JSON body");
                    // The system prompt is the first message.
                    body["messages"].as_array().expect("messages").len() - 1
                }
                pb::OutputFormat::AnthropicMessages => {
                    // Messages merge there: its tool results are the built tool messages.
                    let body: serde_json::Value =
                        serde_json::from_str(&sample.json).expect("a JSON body");
                    let results = body["messages"]
                        .as_array()
                        .expect("messages")
                        .iter()
                        .flat_map(|m| m["content"].as_array().expect("blocks"))
                        .filter(|block| block["type"] == "tool_result")
                        .count();
                    let neutral = setup
                        .build_messages(pb::BuildMessagesRequest {
                            format: pb::OutputFormat::Neutral as i32,
                            ..sessions[0].clone()
                        })
                        .await
                        .expect("BuildMessages")
                        .into_inner();
                    // The body ends where the NEUTRAL view's open last step (if any)
                    // starts: the body's last_seq.
                    let sent: Vec<&pb::Message> = neutral
                        .messages
                        .iter()
                        .filter(|m| m.seq <= sample.last_seq)
                        .collect();
                    let tool_messages = sent
                        .iter()
                        .filter(|m| m.role == pb::Role::Tool as i32)
                        .count();
                    assert_eq!(results, tool_messages, "every tool result is in the body");
                    sent.len()
                }
                _ => sample.messages.len(),
            };
            assert_eq!(
                built + trimmed.incomplete_step_messages as usize,
                messages.len(),
                "the whole session is built: {format:?}, {trimmed:?}, last seq {}",
                sample.last_seq
            );
        } else {
            assert!(!sample.summaries.is_empty(), "the view is compacted");
        }
        let response_kb = prost::Message::encoded_len(&sample) as f64 / 1024.0;

        let mut timed = Vec::new();
        for server in [addr, uncached_addr] {
            let mut states = Vec::new();
            for request in &sessions {
                states.push((client(server).await, request.clone()));
            }
            let (latencies, wall) = concurrent(states, requests, move |(client, request)| {
                let mut client = client.clone();
                let request = request.clone();
                async move {
                    if append_first {
                        client
                            .append_turn(pb::AppendTurnRequest {
                                session_id: request.session_id.clone(),
                                messages: vec![pb::Message {
                                    role: pb::Role::User as i32,
                                    content: "Go on with the next step.".into(),
                                    ..Default::default()
                                }],
                                ..Default::default()
                            })
                            .await
                            .expect("AppendTurn");
                    }
                    let started = Instant::now();
                    let response = client.build_messages(request).await.expect("BuildMessages");
                    std::hint::black_box(response);
                    started.elapsed()
                }
            })
            .await;
            timed.push((latencies, wall));
        }
        let (mut raw, _) = concurrent(fetchers.clone(), requests, |(pool, session_pk)| {
            let pool = pool.clone();
            let session_pk = *session_pk;
            async move {
                let started = Instant::now();
                let rows = sqlx::query(
                    "select seq, turn, role, content, parts, reasoning, tool_calls, tool_call_id, name,
                        metadata, pinned, token_count, view_state, created_at
                     from messages where session_id = $1 and seq >= $2 order by seq",
                )
                .bind(session_pk)
                .bind(1_i64)
                .fetch_all(&pool)
                .await
                .expect("raw fetch");
                let bytes: usize = rows.iter().map(|row| row.get::<&str, _>("content").len()).sum();
                std::hint::black_box(bytes);
                started.elapsed()
            }
        })
        .await;
        // The transport floor for the plain cases: the same response, built beforehand,
        // from a server that does nothing else, to as many clients.
        let plain = window.is_none()
            && !append_first
            && clients == scale.build_clients
            && format == pb::OutputFormat::Neutral;
        // Both floors and ctxd (cached) again, alternating round by round so that a
        // noisy stretch of the run falls on all three alike.
        let floor_latencies = if plain {
            let session_pks: HashMap<String, i64> = sessions
                .iter()
                .zip(&fetchers)
                .map(|(request, (_, pk))| (request.session_id.clone(), *pk))
                .collect();
            let mut servers = Vec::new();
            for read_row in [false, true] {
                servers.push(
                    floor::serve(floor::Floor {
                        build: sample.clone(),
                        pool: pool.clone(),
                        sessions: session_pks.clone(),
                        read_row,
                    })
                    .await,
                );
            }
            servers.push(addr);
            let mut latencies: Vec<Latencies> =
                servers.iter().map(|_| Latencies(Vec::new())).collect();
            for _round in 0..FLOOR_ROUNDS {
                for (server, merged) in servers.iter().zip(&mut latencies) {
                    let mut states = Vec::new();
                    for request in &sessions {
                        states.push((client(*server).await, request.clone()));
                    }
                    let per_round = requests.div_ceil(FLOOR_ROUNDS);
                    let (round, _) = concurrent(states, per_round, |(client, request)| {
                        let mut client = client.clone();
                        let request = request.clone();
                        async move {
                            let started = Instant::now();
                            let response =
                                client.build_messages(request).await.expect("BuildMessages");
                            std::hint::black_box(response);
                            started.elapsed()
                        }
                    })
                    .await;
                    merged.0.extend(round.0);
                }
            }
            Some(latencies)
        } else {
            None
        };
        let [(mut cached, cached_wall), (mut off, _)] = <[_; 2]>::try_from(timed).unwrap();
        let calls = cached.0.len();
        let (c50, c99) = (cached.quantile_ms(0.5), cached.quantile_ms(0.99));
        let (o50, o99) = (off.quantile_ms(0.5), off.quantile_ms(0.99));
        let (r50, r99) = (raw.quantile_ms(0.5), raw.quantile_ms(0.99));
        let mut label = match (window, append_first) {
            (Some(window), _) => {
                format!("{} messages, window {window} (compacted)", messages.len())
            }
            (None, true) => format!(
                "{} messages, one appended before each build",
                messages.len()
            ),
            (None, false) => format!("{} messages", messages.len()),
        };
        if clients == 1 {
            label.push_str(", one client");
        }
        if format != pb::OutputFormat::Neutral {
            label.push_str(&format!(
                ", {}",
                format.as_str_name().trim_start_matches("OUTPUT_FORMAT_")
            ));
        }
        println!(
            "{label} | {response_kb:.0} | {calls} | {c50:.2} | {c99:.2} | {o50:.2} | {o99:.2} | {r50:.2} | {r99:.2} | {:.2} | {:.2} | {:.0}",
            c99 / r99,
            o99 / r99,
            calls as f64 / cached_wall.as_secs_f64()
        );
        if let Some(latencies) = floor_latencies {
            let [mut transport, mut read, mut ctxd] =
                <[Latencies; 3]>::try_from(latencies).unwrap_or_else(|_| unreachable!());
            floors.push((
                label,
                response_kb,
                [
                    transport.quantile_ms(0.5),
                    transport.quantile_ms(0.99),
                    read.quantile_ms(0.5),
                    read.quantile_ms(0.99),
                    ctxd.quantile_ms(0.5),
                    ctxd.quantile_ms(0.99),
                ],
            ));
        }
    }
    println!();
    println!(
        "Floors: the same response, built beforehand, from a server that does nothing else \
         (transport), and that server reading the session's row by its primary key before \
         each answer (one read), to as many clients on their own connections; ctxd cached \
         measured again beside them, the three alternating in {FLOOR_ROUNDS} rounds \
         (benches/parts/floor.rs)."
    );
    println!();
    println!(
        "case | response KB | transport p50 / p99 ms | one read p50 / p99 ms | ctxd p50 / p99 ms | ctxd / one read p50 | ctxd / one read p99 | ctxd / transport p99"
    );
    println!("---|---|---|---|---|---|---|---");
    for (label, response_kb, [t50, t99, r50, r99, c50, c99]) in floors {
        println!(
            "{label} | {response_kb:.0} | {t50:.2} / {t99:.2} | {r50:.2} / {r99:.2} | {c50:.2} / {c99:.2} | {:.2} | {:.2} | {:.2}",
            c50 / r50,
            c99 / r99,
            c99 / t99
        );
    }
    println!();
}

async fn append_turn(addr: SocketAddr, pool: &PgPool, corpus: &[pb::Message], scale: &Scale) {
    println!("## AppendTurn");
    println!();
    println!(
        "{} sessions appending concurrently, one client connection each, one recorded \
         message per AppendTurn (the corpus in order: user, assistant with tool calls, tool \
         results), {} appends per session after a warm-up. Rows: a window that holds \
         everything; then a 16 000-token window with the built-in summarizer (nothing \
         enqueued), with a model-backed profile and no workers (every append past the \
         summarize threshold runs the enqueue and finds the pending job), and with 2 no-op \
         workers in the same process completing each job at once (appends past the \
         threshold enqueue a new job each time one has completed; the model is never \
         called and nothing is summarized).",
        scale.append_sessions, scale.appends_per_session
    );
    println!();
    println!(
        "window | summarization jobs | sessions | appends | appends/s | p50 ms | p99 ms | jobs enqueued"
    );
    println!("---|---|---|---|---|---|---|---");
    let cases: [(Option<i64>, Option<&str>, bool, &str); 4] = [
        (None, None, false, "off (extractive)"),
        (Some(16_000), None, false, "off (extractive)"),
        (
            Some(16_000),
            Some(MODEL_PROFILE),
            false,
            "enqueued, pending",
        ),
        (
            Some(16_000),
            Some(MODEL_PROFILE),
            true,
            "enqueued, no-op workers",
        ),
    ];
    for (case, (window, profile, with_workers, label)) in cases.into_iter().enumerate() {
        let (workers, shutdown) = if with_workers {
            let runner = queue::NoopRunner::new(Store::new(pool.clone()), usize::MAX);
            let shutdown = CancellationToken::new();
            let workers = ctxd::jobs::start(
                runner,
                queue::worker_config(2, Duration::from_secs(1)),
                tokio::sync::broadcast::channel(16).0,
                shutdown.clone(),
            );
            (Some(workers), shutdown)
        } else {
            (None, CancellationToken::new())
        };
        let mut states = Vec::new();
        for index in 0..scale.append_sessions {
            let mut client = client(addr).await;
            let session_id = format!("bench-append-{case}-{index}");
            session_with(&mut client, &session_id, &[], window, profile).await;
            states.push((client, session_id, session_start(corpus, index)));
        }
        let (mut latencies, wall) = timed_appends(states, corpus, scale.appends_per_session).await;
        shutdown.cancel();
        if let Some(mut workers) = workers {
            while workers.join_next().await.is_some() {}
        }
        let enqueued: i64 = sqlx::query_scalar("select count(*) from jobs")
            .fetch_one(pool)
            .await
            .expect("count jobs");
        queue::clear_jobs(pool).await;
        let appends = latencies.0.len();
        println!(
            "{} | {label} | {} | {appends} | {:.0} | {:.2} | {:.2} | {enqueued}",
            window.map_or("holds everything".to_string(), |w| w.to_string()),
            scale.append_sessions,
            appends as f64 / wall.as_secs_f64(),
            latencies.quantile_ms(0.5),
            latencies.quantile_ms(0.99)
        );
    }
    raw_appends(addr, pool, corpus, scale).await;
    paced_appends(addr, pool, corpus, scale).await;
    println!();
}

/// Offered load instead of saturation: the same 32 sessions (a window that holds
/// everything), each appending on a fixed schedule so that together they offer
/// `APPEND_OFFERED_RATE` appends per second, open loop: each latency counts from the time
/// the append was due, so an append that starts late because the one before ran long is
/// charged the wait (no coordinated omission).
async fn paced_appends(addr: SocketAddr, pool: &PgPool, corpus: &[pb::Message], scale: &Scale) {
    let mut setup = client(addr).await;
    let sessions = empty_sessions(&mut setup, pool, "paced", scale).await;
    let interval = Duration::from_secs_f64(scale.append_sessions as f64 / APPEND_OFFERED_RATE);
    let warm_up = (scale.appends_per_session / 10).max(1);
    let corpus = std::sync::Arc::new(corpus.to_vec());
    let start = tokio::time::Instant::now() + Duration::from_millis(100);
    let mut tasks = Vec::new();
    for (index, (session_id, _)) in sessions.into_iter().enumerate() {
        let mut client = client(addr).await;
        let corpus = corpus.clone();
        let appends = scale.appends_per_session;
        // Sessions spread over the interval, so the offered load is even.
        let offset = interval.mul_f64(index as f64 / scale.append_sessions as f64);
        let first = session_start(&corpus, index);
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::with_capacity(appends);
            for k in 0..warm_up + appends {
                let due = start + offset + interval * k as u32;
                tokio::time::sleep_until(due).await;
                let message = corpus[(first + k) % corpus.len()].clone();
                client
                    .append_turn(pb::AppendTurnRequest {
                        session_id: session_id.clone(),
                        messages: vec![message],
                        ..Default::default()
                    })
                    .await
                    .expect("AppendTurn");
                if k >= warm_up {
                    latencies.push(due.elapsed());
                }
            }
            (latencies, tokio::time::Instant::now())
        }));
    }
    let (mut all, mut done) = (Vec::new(), start);
    for task in tasks {
        let (latencies, finished) = task.await.expect("paced appends");
        all.extend(latencies);
        done = done.max(finished);
    }
    // The rate achieved: from when the first timed append was due to the last one's end.
    let wall = done - (start + interval * warm_up as u32);
    append_row(
        &format!(
            "holds everything, offered {APPEND_OFFERED_RATE:.0}/s | off (extractive), open loop: latency from when each append was due"
        ),
        scale,
        Latencies(all),
        wall,
    );
}

/// Where the `index`th appending session starts in the corpus: at a user message, a
/// different one for each of ten sessions in turn, so sessions differ and every tool
/// result follows its call.
fn session_start(corpus: &[pb::Message], index: usize) -> usize {
    corpus
        .iter()
        .enumerate()
        .filter(|(_, m)| m.role == pb::Role::User as i32)
        .nth(index % 10)
        .map_or(0, |(at, _)| at)
}

/// The appends per second the paced case offers (the throughput target).
const APPEND_OFFERED_RATE: f64 = 2_000.0;

/// Each client appends the corpus' messages one per AppendTurn, in order from where its
/// state says, to its session; `appends` timed appends each.
async fn timed_appends(
    states: Vec<(ContextServiceClient<Channel>, String, usize)>,
    corpus: &[pb::Message],
    appends: usize,
) -> (Latencies, Duration) {
    let corpus = std::sync::Arc::new(corpus.to_vec());
    concurrent(states, appends, move |(client, session_id, next)| {
        let mut client = client.clone();
        let message = corpus[*next % corpus.len()].clone();
        let session_id = session_id.clone();
        *next += 1;
        async move {
            let started = Instant::now();
            client
                .append_turn(pb::AppendTurnRequest {
                    session_id,
                    messages: vec![message],
                    ..Default::default()
                })
                .await
                .expect("AppendTurn");
            started.elapsed()
        }
    })
    .await
}

/// `scale.append_sessions` new empty sessions named after `kind`: (id, row id) each.
async fn empty_sessions(
    setup: &mut ContextServiceClient<Channel>,
    pool: &PgPool,
    kind: &str,
    scale: &Scale,
) -> Vec<(String, i64)> {
    let mut sessions = Vec::new();
    for index in 0..scale.append_sessions {
        let session_id = format!("bench-append-{kind}-{index}");
        session_with(setup, &session_id, &[], None, None).await;
        let session_pk: i64 = sqlx::query_scalar("select id from sessions where external_id = $1")
            .bind(&session_id)
            .fetch_one(pool)
            .await
            .expect("session row");
        sessions.push((session_id, session_pk));
    }
    sessions
}

/// The baseline: the least an append can write, straight from sqlx — the message row
/// and the session's counters, one statement in its own durable transaction — by as
/// many concurrent tasks, one per session, each on its own connection.
async fn raw_appends(addr: SocketAddr, pool: &PgPool, corpus: &[pb::Message], scale: &Scale) {
    let mut setup = client(addr).await;
    let mut states = Vec::new();
    for (index, (_, session_pk)) in empty_sessions(&mut setup, pool, "raw", scale)
        .await
        .into_iter()
        .enumerate()
    {
        states.push((pool.clone(), session_pk, index * 7));
    }
    let corpus = std::sync::Arc::new(corpus.to_vec());
    let (latencies, wall) = concurrent(states, scale.appends_per_session, {
        let corpus = corpus.clone();
        move |(pool, session_pk, next): &mut (PgPool, i64, usize)| {
            let pool = pool.clone();
            let session_pk = *session_pk;
            let message = corpus[*next % corpus.len()].clone();
            *next += 1;
            async move {
                let started = Instant::now();
                floor::raw_append(&pool, session_pk, &message).await;
                started.elapsed()
            }
        }
    })
    .await;
    append_row(
        "raw SQL baseline | (one statement: message row + session counters)",
        scale,
        latencies,
        wall,
    );

    // The same statement behind gRPC: AppendTurn on the floor server, which runs it and
    // answers, with as many clients, one connection each.
    let sessions: HashMap<String, i64> = empty_sessions(&mut setup, pool, "floor", scale)
        .await
        .into_iter()
        .collect();
    let floor_addr = floor::serve(floor::Floor {
        build: pb::BuildMessagesResponse::default(),
        pool: pool.clone(),
        sessions: sessions.clone(),
        read_row: false,
    })
    .await;
    let mut states = Vec::new();
    for (index, session_id) in sessions.into_keys().enumerate() {
        states.push((client(floor_addr).await, session_id, index * 7));
    }
    let (latencies, wall) = timed_appends(states, &corpus, scale.appends_per_session).await;
    append_row(
        "gRPC floor: that statement behind AppendTurn | (no validation, counting or response)",
        scale,
        latencies,
        wall,
    );
}

/// A baseline's row of the AppendTurn table (no jobs column).
fn append_row(label: &str, scale: &Scale, mut latencies: Latencies, wall: Duration) {
    let appends = latencies.0.len();
    println!(
        "{label} | {} | {appends} | {:.0} | {:.2} | {:.2} | ",
        scale.append_sessions,
        appends as f64 / wall.as_secs_f64(),
        latencies.quantile_ms(0.5),
        latencies.quantile_ms(0.99)
    );
}
