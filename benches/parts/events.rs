//! Event fan-out: 1 000 SubscribeEvents streams on one replica. Events are written the
//! way the engine writes them (a session transaction carrying the event, announced at
//! commit); latency runs from the event's created_at (its transaction's start, so the
//! commit is included) to its arrival at a subscriber over gRPC.
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ctxd::events::EventDetail;
use ctxd::pb;
use ctxd::store::Store;
use sqlx::PgPool;
use tokio::sync::Barrier;

use super::{Latencies, client};

pub struct EventScale {
    pub sessions: usize,
    /// Streams in all (spread over `connections` HTTP/2 connections).
    pub subscribers: usize,
    pub connections: usize,
    /// Paced phase: events per second, and for how long.
    pub paced_rate: u64,
    pub paced_secs: u64,
    /// Burst phase: events per session, written as fast as eight writers can.
    pub burst_per_session: usize,
}

pub const FULL: EventScale = EventScale {
    sessions: 100,
    subscribers: 1_000,
    connections: 10,
    paced_rate: 200,
    paced_secs: 10,
    burst_per_session: 20,
};

pub const SMOKE: EventScale = EventScale {
    sessions: 2,
    subscribers: 4,
    connections: 2,
    paced_rate: 20,
    paced_secs: 1,
    burst_per_session: 2,
};

pub async fn run(addr: SocketAddr, pool: &PgPool, scale: &EventScale) {
    println!("## Events");
    println!();
    let store = Store::new(pool.clone());
    println!(
        "{} subscribers on one replica over {} connections; commit → subscriber latency from the \
         event's transaction start to its arrival over gRPC. Paced: {} events/s for {} s (tenant \
         streams also a quarter of that). Burst: {} events per session from 8 writers as fast as \
         they commit.",
        scale.subscribers,
        scale.connections,
        scale.paced_rate,
        scale.paced_secs,
        scale.burst_per_session
    );
    println!();
    println!(
        "streams | events | deliveries | p50 ms | p99 ms | max ms | events/s committed | deliveries/s"
    );
    println!("---|---|---|---|---|---|---|---");
    for tenant_wide in [false, true] {
        let prefix = if tenant_wide { "fan-t" } else { "fan-s" };
        let mut seed = client(addr).await;
        for index in 0..scale.sessions {
            seed.create_session(pb::CreateSessionRequest {
                session_id: format!("{prefix}-{index}"),
                ..Default::default()
            })
            .await
            .expect("CreateSession");
        }
        // Paced at the full rate, for tenant streams also at a quarter of it (each event
        // is a delivery to every one of them), then a burst.
        let mut phases = vec![Some(scale.paced_rate)];
        if tenant_wide {
            phases.push(Some((scale.paced_rate / 4).max(1)));
        }
        phases.push(None);
        for rate in phases {
            let events = match rate {
                Some(rate) => {
                    ((rate * scale.paced_secs) as usize).div_ceil(scale.sessions) * scale.sessions
                }
                None => scale.burst_per_session * scale.sessions,
            };
            let phase = match rate {
                Some(rate) => format!("{rate}/s"),
                None => "burst".to_string(),
            };
            let per_subscriber = if tenant_wide {
                events
            } else {
                events / scale.sessions
            };
            let ready = Arc::new(Barrier::new(scale.subscribers + 1));
            let mut subscribers = Vec::new();
            let mut channels = Vec::new();
            for _ in 0..scale.connections {
                channels.push(client(addr).await);
            }
            for index in 0..scale.subscribers {
                let mut client = channels[index % scale.connections].clone();
                let session_id = if tenant_wide {
                    String::new()
                } else {
                    format!("{prefix}-{}", index % scale.sessions)
                };
                let ready = ready.clone();
                subscribers.push(tokio::spawn(async move {
                    let mut stream = client
                        .subscribe_events(pb::SubscribeEventsRequest {
                            session_id,
                            from_now: true,
                            ..Default::default()
                        })
                        .await
                        .expect("SubscribeEvents")
                        .into_inner();
                    // The first heartbeat: live from here.
                    stream.message().await.expect("stream").expect("heartbeat");
                    ready.wait().await;
                    let mut latencies = Vec::with_capacity(per_subscriber);
                    while latencies.len() < per_subscriber {
                        let item = stream.message().await.expect("stream").expect("ended");
                        if let Some(pb::subscribe_events_response::Item::Event(event)) = item.item {
                            let at = event.created_at.expect("created_at");
                            let created =
                                chrono::DateTime::from_timestamp(at.seconds, at.nanos as u32)
                                    .expect("timestamp");
                            let lag = chrono::Utc::now() - created;
                            latencies.push(lag.to_std().unwrap_or_default());
                        }
                    }
                    (latencies, Instant::now())
                }));
            }
            ready.wait().await;
            let started = Instant::now();
            let writers = if rate.is_some() { 1 } else { 8 };
            let committed = write(&store, prefix, scale.sessions, events, writers, rate).await;
            let mut all = Vec::new();
            let mut last = started;
            for subscriber in subscribers {
                let (latencies, done) = subscriber.await.expect("subscriber");
                all.extend(latencies);
                last = last.max(done);
            }
            let deliveries = all.len();
            let mut latencies = Latencies(all);
            let max = latencies.quantile_ms(1.0);
            println!(
                "{} ({phase}) | {events} | {deliveries} | {:.2} | {:.2} | {max:.1} | {:.0} | {:.0}",
                if tenant_wide { "tenant" } else { "session" },
                latencies.quantile_ms(0.5),
                latencies.quantile_ms(0.99),
                events as f64 / committed.as_secs_f64(),
                deliveries as f64 / (last - started).as_secs_f64(),
            );
        }
    }
    println!();
}

/// Writes `events` events round-robin over the sessions from `writers` tasks, at `rate`
/// per second in all (None: as fast as they commit); returns the time it took.
async fn write(
    store: &Store,
    prefix: &str,
    sessions: usize,
    events: usize,
    writers: usize,
    rate: Option<u64>,
) -> Duration {
    let started = Instant::now();
    let tenant = store.default_tenant().await.expect("tenant");
    let mut tasks = Vec::new();
    for writer in 0..writers {
        let store = store.clone();
        let prefix = prefix.to_string();
        tasks.push(tokio::spawn(async move {
            let mut tick = rate.map(|rate| {
                let mut tick = tokio::time::interval(Duration::from_secs_f64(1.0 / rate as f64));
                tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
                tick
            });
            for index in (writer..events).step_by(writers) {
                if let Some(tick) = tick.as_mut() {
                    tick.tick().await;
                }
                let session = format!("{prefix}-{}", index % sessions);
                let mut tx = store
                    .lock_session(tenant, &session)
                    .await
                    .expect("lock")
                    .expect("session");
                tx.add_event(EventDetail::OutputEvicted {
                    seq: index as i64,
                    tool_name: "bash".into(),
                    tokens: 20_000,
                    preview_tokens: 2_000,
                });
                tx.commit().await.expect("commit");
            }
        }));
    }
    for task in tasks {
        task.await.expect("writer");
    }
    started.elapsed()
}
