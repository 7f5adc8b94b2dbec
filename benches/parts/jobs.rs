//! The job queue alone: claim + complete throughput of no-op jobs against the machine's
//! bare commit rate, and enqueue → claim latency woken by NOTIFY and by polling alone.
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use ctxd::job::{Job, JobEnd};
use ctxd::jobs::{self, Runner, WorkerConfig};
use ctxd::policy::Policy;
use ctxd::store::{NewJob, NotifyGate, Store};
use sqlx::PgPool;
use tokio::sync::{Mutex, Notify, broadcast};
use tokio_util::sync::CancellationToken;

use super::Latencies;

/// How much work the queue part does.
pub struct JobScale {
    pub throughput_jobs: i64,
    pub throughput_workers: &'static [usize],
    pub latency_jobs: usize,
    pub latency_gap: Duration,
}

pub const FULL: JobScale = JobScale {
    throughput_jobs: 20_000,
    throughput_workers: &[2, 8, 16],
    latency_jobs: 300,
    latency_gap: Duration::from_millis(20),
};

pub const SMOKE: JobScale = JobScale {
    throughput_jobs: 50,
    throughput_workers: &[2],
    latency_jobs: 6,
    latency_gap: Duration::from_millis(5),
};

/// A runner that completes every job at once, noting when each was claimed.
#[derive(Clone)]
pub struct NoopRunner {
    store: Store,
    claimed: Arc<Mutex<HashMap<i64, Instant>>>,
    count: Arc<AtomicUsize>,
    /// Signalled when `count` reaches `expect`.
    all_claimed: Arc<Notify>,
    expect: usize,
}

impl NoopRunner {
    pub fn new(store: Store, expect: usize) -> NoopRunner {
        NoopRunner {
            store,
            claimed: Arc::default(),
            count: Arc::default(),
            all_claimed: Arc::default(),
            expect,
        }
    }
}

impl Runner for NoopRunner {
    fn store(&self) -> &Store {
        &self.store
    }

    async fn run(&self, job: &Job, _final_attempt: bool) -> JobEnd {
        let now = Instant::now();
        self.claimed.lock().await.insert(job.id, now);
        if self.count.fetch_add(1, Ordering::SeqCst) + 1 == self.expect {
            self.all_claimed.notify_one();
        }
        JobEnd::Completed(serde_json::json!({}))
    }
}

pub async fn run(pool: &PgPool, scale: &JobScale) {
    println!("## Job queue");
    println!();
    let store = Store::new(pool.clone());
    let tenant = store.default_tenant().await.expect("default tenant");
    throughput(pool, &store, tenant, scale).await;
    latency(pool, &store, tenant, scale).await;
}

/// `count` sessions named `{prefix}-N`, inserted directly.
async fn sessions(pool: &PgPool, tenant: i64, prefix: &str, count: i64) {
    let policy = serde_json::to_value(Policy::default()).unwrap();
    sqlx::query(
        "insert into sessions (tenant_id, external_id, policy)
         select $1, $2 || '-' || g, $3 from generate_series(1, $4) g",
    )
    .bind(tenant)
    .bind(prefix)
    .bind(policy)
    .bind(count)
    .execute(pool)
    .await
    .expect("insert sessions");
}

pub fn worker_config(workers: usize, poll_interval: Duration) -> WorkerConfig {
    WorkerConfig {
        workers,
        lease: Duration::from_secs(30),
        poll_interval,
        retention: Duration::from_secs(86_400),
    }
}

async fn throughput(pool: &PgPool, store: &Store, tenant: i64, scale: &JobScale) {
    let jobs = scale.throughput_jobs;
    println!(
        "Claim + complete: {jobs} no-op jobs queued beforehand (one per session), then the \
         workers of one replica start and run until the queue is empty. A worker's first \
         claim is one statement (FOR UPDATE SKIP LOCKED, lease); after that each job's end \
         and the claim of the next one are one statement, committed asynchronously (the \
         queue's bookkeeping only; see docs/decisions/0003-jobs.md). Baseline in the same \
         run: as many tasks committing one-row updates as fast as they can, with durable \
         commits (what every AppendTurn pays)."
    );
    println!();
    println!("workers | jobs | seconds | jobs/s | baseline commits/s | jobs/s ÷ commits/s");
    println!("---|---|---|---|---|---");
    for (round, &workers) in scale.throughput_workers.iter().enumerate() {
        let prefix = format!("bench-throughput-{round}");
        sessions(pool, tenant, &prefix, jobs).await;
        sqlx::query(
            "insert into jobs (tenant_id, session_id, kind, args, max_attempts)
             select tenant_id, id, 'noop', '{}', 3 from sessions where external_id like $1 || '-%'",
        )
        .bind(&prefix)
        .execute(pool)
        .await
        .expect("queue jobs");
        sqlx::query("vacuum analyze jobs")
            .execute(pool)
            .await
            .expect("vacuum");

        let runner = NoopRunner::new(store.clone(), jobs as usize);
        let shutdown = CancellationToken::new();
        let started = Instant::now();
        let mut tasks = jobs::start(
            runner.clone(),
            worker_config(workers, Duration::from_millis(100)),
            broadcast::channel(16).0,
            shutdown.clone(),
        );
        runner.all_claimed.notified().await;
        // The last claims finish on their own: wait for their commits.
        let mut done: i64 = 0;
        while done < jobs {
            done = sqlx::query_scalar(
                "select count(*) from jobs j join sessions s on s.id = j.session_id
                 where s.external_id like $1 || '-%' and j.state = 'completed'",
            )
            .bind(&prefix)
            .fetch_one(pool)
            .await
            .expect("count completed jobs");
            if done < jobs {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
        let elapsed = started.elapsed();
        shutdown.cancel();
        while tasks.join_next().await.is_some() {}

        let commits = bare_commits(
            pool,
            workers,
            Duration::from_secs(if jobs > 1_000 { 3 } else { 1 }),
        )
        .await;
        let rate = jobs as f64 / elapsed.as_secs_f64();
        println!(
            "{workers} | {jobs} | {:.2} | {rate:.0} | {commits:.0} | {:.2}",
            elapsed.as_secs_f64(),
            rate / commits
        );
        clear_jobs(pool).await;
    }
    println!();
}

/// Deletes every job, so the next part starts on an empty queue.
pub async fn clear_jobs(pool: &PgPool) {
    sqlx::query("delete from jobs")
        .execute(pool)
        .await
        .expect("clear jobs");
}

/// One-row update commits per second with `tasks` concurrent connections.
async fn bare_commits(pool: &PgPool, tasks: usize, duration: Duration) -> f64 {
    sqlx::query("create table if not exists bench_counter (id int primary key, n bigint)")
        .execute(pool)
        .await
        .expect("counter table");
    sqlx::query(
        "insert into bench_counter select g, 0 from generate_series(0, 63) g on conflict do nothing",
    )
    .execute(pool)
    .await
    .expect("counter rows");
    let started = Instant::now();
    let mut handles = Vec::new();
    for task in 0..tasks {
        let pool = pool.clone();
        handles.push(tokio::spawn(async move {
            let mut commits = 0u64;
            while started.elapsed() < duration {
                sqlx::query("update bench_counter set n = n + 1 where id = $1")
                    .bind(task as i32)
                    .execute(&pool)
                    .await
                    .expect("commit");
                commits += 1;
            }
            commits
        }));
    }
    let mut total = 0;
    for handle in handles {
        total += handle.await.unwrap();
    }
    total as f64 / started.elapsed().as_secs_f64()
}

async fn latency(pool: &PgPool, store: &Store, tenant: i64, scale: &JobScale) {
    println!(
        "Enqueue → claim: {} jobs enqueued one at a time {} ms apart, each in its own \
         session's transaction as AppendTurn does; latency from the enqueue's commit \
         returning to a worker holding the job (2 workers, one replica). The first 5 are a \
         warm-up.",
        scale.latency_jobs,
        scale.latency_gap.as_millis()
    );
    println!();
    println!("wake-up | p50 ms | p99 ms | max ms");
    println!("---|---|---|---");
    let never = Duration::from_secs(1_000_000_000);
    let modes = [
        (
            "NOTIFY (polling every 10 s)",
            Duration::ZERO,
            Duration::from_secs(10),
        ),
        (
            "polling every 100 ms, no NOTIFY",
            never,
            Duration::from_millis(100),
        ),
        (
            "polling every 1 s, no NOTIFY",
            never,
            Duration::from_secs(1),
        ),
    ];
    for (round, (label, window, poll)) in modes.into_iter().enumerate() {
        let prefix = format!("bench-latency-{round}");
        sessions(pool, tenant, &prefix, scale.latency_jobs as i64).await;
        let runner = NoopRunner::new(store.clone(), scale.latency_jobs);
        let shutdown = CancellationToken::new();
        let mut tasks = jobs::start(
            runner.clone(),
            worker_config(2, poll),
            broadcast::channel(16).0,
            shutdown.clone(),
        );
        // Let the listener connect before the first enqueue.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let gate = NotifyGate::new(window);
        let mut committed = HashMap::new();
        let mut pace = tokio::time::interval(scale.latency_gap);
        for index in 1..=scale.latency_jobs {
            pace.tick().await;
            let mut tx = store
                .lock_session(tenant, &format!("{prefix}-{index}"))
                .await
                .expect("lock")
                .expect("session");
            let job = NewJob {
                kind: "noop",
                args: serde_json::json!({}),
                priority: 0,
                max_attempts: 3,
                notify_done: false,
            };
            let (id, _) = tx.enqueue_job(&job, &gate).await.expect("enqueue");
            tx.commit().await.expect("commit");
            committed.insert(id, Instant::now());
        }
        runner.all_claimed.notified().await;
        shutdown.cancel();
        while tasks.join_next().await.is_some() {}
        let claimed = runner.claimed.lock().await;
        let mut ids: Vec<_> = committed.keys().copied().collect();
        ids.sort();
        let mut latencies = Latencies(
            ids.iter()
                .skip(5.min(ids.len() - 1))
                .map(|id| claimed[id].saturating_duration_since(committed[id]))
                .collect(),
        );
        println!(
            "{label} | {:.2} | {:.2} | {:.2}",
            latencies.quantile_ms(0.5),
            latencies.quantile_ms(0.99),
            latencies.quantile_ms(1.0)
        );
        clear_jobs(pool).await;
    }
    println!();
}
