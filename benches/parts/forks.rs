//! ForkSession against CreateSession in the same run: sources of 200, 2 000 and 20 000
//! recorded messages (the corpus, repeated with fresh tool-call ids), each forked at its
//! last seq and at its middle seq, alternating with creates of empty sessions round by
//! round. Per call: the client's wall time and the WAL the database wrote meanwhile
//! (`pg_current_wal_lsn()` before and after; nothing else writes during a call: the
//! search indexer has caught up before the timed rounds). Medians over the rounds.
use std::time::Instant;

use ctxd::pb;
use ctxd::pb::context_service_client::ContextServiceClient;
use ctxd::store::Store;
use sqlx::PgPool;
use tonic::transport::Channel;

/// How much work the forks part does.
pub struct ForkScale {
    pub sizes: &'static [usize],
    pub rounds: usize,
}

pub const FULL: ForkScale = ForkScale {
    sizes: &[200, 2_000, 20_000],
    rounds: 7,
};

pub const SMOKE: ForkScale = ForkScale {
    sizes: &[20, 40],
    rounds: 2,
};

/// Messages per AppendTurn while the sources are filled (the server's default maximum).
const BATCH: usize = 1_000;

async fn wal(pool: &PgPool) -> String {
    sqlx::query_scalar("select pg_current_wal_lsn()::text")
        .fetch_one(pool)
        .await
        .expect("WAL position")
}

async fn wal_bytes(pool: &PgPool, from: &str) -> i64 {
    sqlx::query_scalar("select pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::bigint")
        .bind(from)
        .fetch_one(pool)
        .await
        .expect("WAL bytes")
}

/// Runs `call`, returning its wall time in ms and the WAL bytes written meanwhile.
async fn measured<F, Fut>(pool: &PgPool, call: F) -> (f64, i64)
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let from = wal(pool).await;
    let started = Instant::now();
    call().await;
    let ms = started.elapsed().as_secs_f64() * 1e3;
    (ms, wal_bytes(pool, &from).await)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    values[values.len() / 2]
}

pub async fn run(
    addr: std::net::SocketAddr,
    pool: &PgPool,
    store: &Store,
    corpus: &[pb::Message],
    scale: &ForkScale,
) {
    let channel = Channel::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect()
        .await
        .expect("connect");
    let mut client = ContextServiceClient::new(channel);
    for &size in scale.sizes {
        let source = format!("fork-source-{size}");
        client
            .create_session(pb::CreateSessionRequest {
                session_id: source.clone(),
                policy: Some(pb::Policy {
                    context_window_tokens: Some(200_000),
                    max_output_tokens: Some(8_000),
                    ..Default::default()
                }),
                ..Default::default()
            })
            .await
            .expect("create a source");
        for batch in crate::replayed(corpus, 0, size).chunks(BATCH) {
            client
                .append_turn(pb::AppendTurnRequest {
                    session_id: source.clone(),
                    messages: batch.to_vec(),
                    ..Default::default()
                })
                .await
                .expect("fill a source");
        }
    }
    // The indexer catches up now, so that it writes nothing during the timed calls.
    while store.index_some(10_000, true).await.expect("index") > 0 {}

    println!("## ForkSession against CreateSession\n");
    println!(
        "Sources of recorded messages (no compaction); per round, for each size: a \
         CreateSession of an empty session, a ForkSession at the source's last seq and one \
         at its middle seq, in turn; {} rounds, medians. WAL: bytes the database wrote \
         during the call (`pg_current_wal_lsn()` difference).\n",
        scale.rounds
    );
    println!(
        "| source messages | CreateSession ms | fork at last seq ms | fork at middle ms | CreateSession WAL bytes | fork at last WAL bytes | fork at middle WAL bytes |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    let mut figures: Vec<[Vec<(f64, i64)>; 3]> = scale
        .sizes
        .iter()
        .map(|_| [Vec::new(), Vec::new(), Vec::new()])
        .collect();
    for round in 0..scale.rounds {
        for (index, &size) in scale.sizes.iter().enumerate() {
            let source = format!("fork-source-{size}");
            let created = measured(pool, || {
                let mut client = client.clone();
                let id = format!("plain-{size}-{round}");
                async move {
                    client
                        .create_session(pb::CreateSessionRequest {
                            session_id: id,
                            policy: Some(pb::Policy {
                                context_window_tokens: Some(200_000),
                                max_output_tokens: Some(8_000),
                                ..Default::default()
                            }),
                            ..Default::default()
                        })
                        .await
                        .expect("create");
                }
            })
            .await;
            let mut forks = Vec::new();
            for (name, at_seq) in [("last", None), ("middle", Some(size as i64 / 2))] {
                let figure = measured(pool, || {
                    let mut client = client.clone();
                    let request = pb::ForkSessionRequest {
                        source_session_id: source.clone(),
                        at_seq,
                        session_id: format!("fork-{name}-{size}-{round}"),
                        ..Default::default()
                    };
                    async move {
                        let fork = client.fork_session(request).await.expect("fork");
                        let fork = fork.into_inner().session.expect("a session");
                        assert_eq!(fork.message_count, at_seq.unwrap_or(size as i64));
                    }
                })
                .await;
                forks.push(figure);
            }
            figures[index][0].push(created);
            figures[index][1].push(forks[0]);
            figures[index][2].push(forks[1]);
        }
    }
    for (index, &size) in scale.sizes.iter().enumerate() {
        let ms = |which: usize| median(figures[index][which].iter().map(|f| f.0).collect());
        let bytes =
            |which: usize| median(figures[index][which].iter().map(|f| f.1 as f64).collect());
        println!(
            "| {size} | {:.2} | {:.2} | {:.2} | {:.0} | {:.0} | {:.0} |",
            ms(0),
            ms(1),
            ms(2),
            bytes(0),
            bytes(1),
            bytes(2)
        );
    }
    println!();
}
