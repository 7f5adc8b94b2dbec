//! The server's memory, read from outside: `ctxd serve` (this build's binary) as its own
//! process with a view cache of `cache_mb`, its resident set (VmRSS) and peak (VmHWM)
//! from /proc — idle; after `sessions` sessions of recorded messages have each been
//! appended and built (the cache full, evicting); during and after a burst of
//! `streams` SubscribeEvents streams and `burst_clients` clients appending messages of
//! `burst_mb` MB and building them; and `settle` after the burst.
//!
//!   CTXD_BENCH_ONLY=memory cargo bench --bench core
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ctxd::pb;
use ctxd::pb::context_service_client::ContextServiceClient;
use tonic::transport::Channel;

use crate::fresh_database;

/// How much the memory part does.
pub struct MemoryScale {
    pub cache_mb: usize,
    pub sessions: usize,
    pub messages_per_session: usize,
    pub clients: usize,
    pub streams: usize,
    pub burst_clients: usize,
    pub burst_appends: usize,
    pub burst_mb: usize,
    pub settle: Duration,
}

pub const FULL: MemoryScale = MemoryScale {
    cache_mb: 64,
    sessions: 10_000,
    messages_per_session: 40,
    clients: 16,
    streams: 1_000,
    burst_clients: 32,
    burst_appends: 4,
    burst_mb: 4,
    settle: Duration::from_secs(15),
};

pub const SMOKE: MemoryScale = MemoryScale {
    cache_mb: 8,
    sessions: 10,
    messages_per_session: 10,
    clients: 2,
    streams: 4,
    burst_clients: 2,
    burst_appends: 1,
    burst_mb: 1,
    settle: Duration::from_millis(100),
};

/// The server process; stopped when dropped.
struct Server {
    child: Child,
    addr: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    async fn start(url: &str, scale: &MemoryScale) -> Server {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let addr = format!("127.0.0.1:{port}");
        let child = Command::new(env!("CARGO_BIN_EXE_ctxd"))
            .args(["serve", "--listen", &addr])
            .args(["--view-cache-mb", &scale.cache_mb.to_string()])
            .env("DATABASE_URL", url)
            .env("CTXD_ANONYMOUS_ACCESS", "allow")
            .env("CTXD_LOG", "warn")
            .stdout(Stdio::null())
            .spawn()
            .expect("start ctxd serve");
        let server = Server { child, addr };
        server.connected().await;
        server
    }

    /// A client, once the server answers (within 60 s).
    async fn connected(&self) -> ContextServiceClient<Channel> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let endpoint =
                tonic::transport::Endpoint::from_shared(format!("http://{}", self.addr)).unwrap();
            if let Ok(channel) = endpoint.connect().await {
                return ContextServiceClient::new(channel)
                    .max_decoding_message_size(usize::MAX)
                    .max_encoding_message_size(usize::MAX);
            }
            assert!(Instant::now() < deadline, "ctxd did not serve within 60 s");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// (resident MB, peak resident MB) from /proc.
    fn rss(&self) -> (f64, f64) {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("the server's /proc status");
        let field = |name: &str| {
            status
                .lines()
                .find(|line| line.starts_with(name))
                .and_then(|line| line.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
                .map_or(0.0, |kb| kb / 1024.0)
        };
        (field("VmRSS:"), field("VmHWM:"))
    }
}

fn row(server: &Server, label: &str, bound: usize) {
    let (rss, peak) = server.rss();
    println!("{label} | {rss:.0} | {peak:.0} | {:.0}", rss - bound as f64);
}

pub async fn run(url: &str, corpus: &[pb::Message], scale: &MemoryScale) {
    let (pool, database) = fresh_database(url).await;
    pool.close().await;
    let db_url = database_url(url, &database);
    let server = Server::start(&db_url, scale).await;
    println!("## Memory of the server process");
    println!();
    println!(
        "`ctxd serve --view-cache-mb {}` (this build), its resident set read from \
         /proc/PID/status. Sessions: {} of {} recorded messages each, appended and built \
         once each by {} clients. Burst: {} SubscribeEvents streams open while {} clients \
         each append {} messages of {} MB to sessions of their own and build after each; \
         then the streams close. Settled: {} s later, nothing running.",
        scale.cache_mb,
        scale.sessions,
        scale.messages_per_session,
        scale.clients,
        scale.streams,
        scale.burst_clients,
        scale.burst_appends,
        scale.burst_mb,
        scale.settle.as_secs()
    );
    println!();
    println!("moment | RSS MB | peak RSS MB | RSS − cache bound MB");
    println!("---|---|---|---");
    row(&server, "idle", scale.cache_mb);
    sessions(&server, corpus, scale).await;
    row(&server, "sessions appended and built", scale.cache_mb);
    let streams = streams(&server, scale.streams).await;
    burst(&server, scale).await;
    row(&server, "burst done, streams open", scale.cache_mb);
    drop(streams);
    tokio::time::sleep(scale.settle).await;
    row(&server, "settled", scale.cache_mb);
    println!();
    drop(server);
    crate::drop_database(url, &database).await;
}

/// `url` naming `database` instead of its own (`postgres://who@host:port/db?params`).
fn database_url(url: &str, database: &str) -> String {
    let (base, query) = url
        .split_once('?')
        .map_or((url, None), |(b, q)| (b, Some(q)));
    let authority_end = base.find("://").map_or(0, |at| at + 3);
    let server = match base[authority_end..].find('/') {
        Some(slash) => &base[..authority_end + slash],
        None => base,
    };
    match query {
        Some(query) => format!("{server}/{database}?{query}"),
        None => format!("{server}/{database}"),
    }
}

/// Every session created, filled in one AppendTurn, and built once.
async fn sessions(server: &Server, corpus: &[pb::Message], scale: &MemoryScale) {
    let corpus = Arc::new(corpus.to_vec());
    let mut tasks = Vec::new();
    for index in 0..scale.clients {
        let mut client = server.connected().await;
        let corpus = corpus.clone();
        let (sessions, clients, size) = (scale.sessions, scale.clients, scale.messages_per_session);
        tasks.push(tokio::spawn(async move {
            for session in (index..sessions).step_by(clients) {
                let id = format!("memory-{session}");
                let start = (session * 7) % (corpus.len() - size);
                let start = (start..corpus.len() - size)
                    .find(|&at| corpus[at].role == pb::Role::User as i32)
                    .unwrap_or(0);
                let messages = corpus[start..start + size].to_vec();
                crate::session_with(&mut client, &id, &messages, None, None).await;
                client
                    .build_messages(pb::BuildMessagesRequest {
                        session_id: id,
                        ..Default::default()
                    })
                    .await
                    .expect("BuildMessages");
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
}

/// `count` tenant-wide SubscribeEvents streams, open until dropped.
async fn streams(
    server: &Server,
    count: usize,
) -> Vec<tonic::Streaming<pb::SubscribeEventsResponse>> {
    let mut client = server.connected().await;
    let mut streams = Vec::new();
    for _ in 0..count {
        let stream = client
            .subscribe_events(pb::SubscribeEventsRequest::default())
            .await
            .expect("SubscribeEvents")
            .into_inner();
        streams.push(stream);
    }
    streams
}

/// Clients appending large messages to sessions of their own, building after each.
async fn burst(server: &Server, scale: &MemoryScale) {
    let text: Arc<str> = "x".repeat(scale.burst_mb * 1_000_000 - 1_000).into();
    let mut tasks = Vec::new();
    for index in 0..scale.burst_clients {
        let mut client = server.connected().await;
        let text = text.clone();
        let appends = scale.burst_appends;
        tasks.push(tokio::spawn(async move {
            let id = format!("burst-{index}");
            crate::session_with(&mut client, &id, &[], None, None).await;
            for n in 0..appends {
                let mut message = pb::Message {
                    role: pb::Role::User as i32,
                    content: format!("{n} {text}"),
                    ..Default::default()
                };
                message.content.truncate(text.len());
                client
                    .append_turn(pb::AppendTurnRequest {
                        session_id: id.clone(),
                        messages: vec![message],
                        ..Default::default()
                    })
                    .await
                    .expect("AppendTurn");
                client
                    .build_messages(pb::BuildMessagesRequest {
                        session_id: id.clone(),
                        ..Default::default()
                    })
                    .await
                    .expect("BuildMessages");
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
}
