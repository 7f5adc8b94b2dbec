//! What the integration tests share beyond the server harness.

use std::future::Future;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

/// Polls `condition` until it holds or 30 s pass, for what no event announces (work a
/// server finishes after answering); whether it came true.
pub async fn wait_until<F, Fut>(mut condition: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    poll(
        Duration::from_secs(30),
        Duration::from_millis(20),
        async || condition().await.then_some(()),
    )
    .await
    .is_some()
}

/// Asks `probe` every `every` until it answers, for at most `patience`: its answer, or
/// `None` when the patience ran out. The one poll-with-deadline loop of the tests, for
/// what no event announces.
pub async fn poll<T>(
    patience: Duration,
    every: Duration,
    mut probe: impl AsyncFnMut() -> Option<T>,
) -> Option<T> {
    let deadline = Instant::now() + patience;
    loop {
        if let Some(answer) = probe().await {
            return Some(answer);
        }
        if Instant::now() >= deadline {
            return None;
        }
        tokio::time::sleep(every).await;
    }
}

/// The newest PostgreSQL server installation's binaries.
pub fn pg_bin() -> PathBuf {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .expect("PostgreSQL server binaries in /usr/lib/postgresql")
        .map(|entry| entry.unwrap().path().join("bin"))
        .filter(|dir| dir.join("postgres").exists())
        .collect();
    dirs.sort();
    dirs.pop()
        .expect("a PostgreSQL server in /usr/lib/postgresql/*/bin")
}

/// The user PostgreSQL runs as when the tests run as root (it refuses root).
pub fn postgres_user() -> (u32, u32) {
    let id = |flag: &str| -> u32 {
        let output = Command::new("id")
            .args([flag, "postgres"])
            .output()
            .unwrap();
        String::from_utf8(output.stdout)
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    (id("-u"), id("-g"))
}

/// Every original of a session, seqs 1 to `last_seq`, a hundred at a time (a session of
/// large tool results is megabytes: one response would pass the client's 4 MB limit).
pub async fn expand_all(
    client: &mut ctxd::pb::context_service_client::ContextServiceClient<tonic::transport::Channel>,
    session_id: &str,
    last_seq: i64,
) -> Vec<ctxd::pb::Message> {
    use ctxd::pb;
    let mut out = Vec::new();
    let mut next = 1;
    while next >= 1 && next <= last_seq {
        let page = client
            .expand(pb::ExpandRequest {
                session_id: session_id.to_string(),
                target: Some(pb::expand_request::Target::Range(pb::SeqRange {
                    first_seq: next,
                    last_seq: (next + 99).min(last_seq),
                })),
                max_tokens: 0,
            })
            .await
            .unwrap()
            .into_inner();
        out.extend(page.messages);
        next = if page.next_seq == 0 {
            (next + 100).min(last_seq + 1)
        } else {
            page.next_seq
        };
    }
    out
}
