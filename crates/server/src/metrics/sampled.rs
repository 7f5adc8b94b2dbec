//! Gauges read when metrics are collected: the job queue (from the latest reading of
//! the jobs table, which the job workers' sampler refreshes every few seconds — a scrape
//! never queries the database), the database pools (their connections and the requests
//! waiting for one) and the view cache (read in memory from the store).
use std::sync::{Arc, Mutex, OnceLock};

use opentelemetry::KeyValue;
use opentelemetry::metrics::{Meter, ObservableGauge};

/// One reading of the jobs table's unfinished jobs.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct JobQueueSample {
    pub available: i64,
    pub running: i64,
    pub retryable: i64,
    /// Available or retryable jobs whose `run_at` has come: what workers can claim now.
    pub due: i64,
    /// Seconds since the `run_at` of the longest-waiting due job; 0 when none is due.
    pub oldest_due_secs: f64,
}

/// One database pool's connections.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PoolFigures {
    /// Connections open (in use and idle).
    pub size: u32,
    /// Connections open and idle.
    pub idle: usize,
    /// The pool's maximum.
    pub max: u32,
    /// Requests waiting for a connection.
    pub pending: usize,
}

/// The database pools and the view cache, as the store sees them.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PoolSample {
    /// The pool every statement but AppendTurn's uses.
    pub main: PoolFigures,
    /// AppendTurn's pool, when it is one of its own.
    pub append: Option<PoolFigures>,
    /// The LISTEN connections' pool, when it is one of its own (straight to PostgreSQL
    /// beside a transaction pooler).
    pub listen: Option<PoolFigures>,
    /// Bytes the view cache estimates its entries take.
    pub view_cache_bytes: usize,
    /// Sessions the view cache holds.
    pub view_cache_entries: usize,
}

impl PoolSample {
    /// Each pool with its `db.client.connection.pool.name`.
    fn pools(&self) -> impl Iterator<Item = (&'static str, PoolFigures)> {
        [
            ("main", Some(self.main)),
            ("append", self.append),
            ("listen", self.listen),
        ]
        .into_iter()
        .filter_map(|(name, figures)| Some((name, figures?)))
    }
}

type PoolSource = Box<dyn Fn() -> PoolSample + Send + Sync>;

/// What the gauges read.
#[derive(Default)]
pub(super) struct Sampled {
    jobs: Mutex<Option<JobQueueSample>>,
    pool: OnceLock<PoolSource>,
}

impl Sampled {
    pub(super) fn set_job_queue(&self, sample: JobQueueSample) {
        *self.jobs.lock().unwrap_or_else(|e| e.into_inner()) = Some(sample);
    }

    pub(super) fn observe_pool(&self, source: PoolSource) {
        let _ = self.pool.set(source);
    }

    fn job_queue(&self) -> Option<JobQueueSample> {
        *self.jobs.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn pool(&self) -> Option<PoolSample> {
        self.pool.get().map(|source| source())
    }
}

/// Registers the gauges on `meter`, each reading `sampled`.
pub(super) fn register(
    meter: &Meter,
    sampled: &Arc<Sampled>,
) -> (Vec<ObservableGauge<i64>>, Vec<ObservableGauge<f64>>) {
    let (mut gauges, oldest) = job_gauges(meter, sampled);
    gauges.extend(pool_gauges(meter, sampled));
    gauges.extend(cache_gauges(meter, sampled));
    (gauges, vec![oldest])
}

/// The job queue's gauges (by state, claimable now), and the oldest due job's age.
fn job_gauges(
    meter: &Meter,
    sampled: &Arc<Sampled>,
) -> (Vec<ObservableGauge<i64>>, ObservableGauge<f64>) {
    let jobs = Arc::clone(sampled);
    let by_state = meter
        .i64_observable_gauge("ctxd.jobs")
        .with_unit("{job}")
        .with_description("Unfinished jobs in the queue (all replicas), by state")
        .with_callback(move |observer| {
            if let Some(sample) = jobs.job_queue() {
                for (state, count) in [
                    ("available", sample.available),
                    ("running", sample.running),
                    ("retryable", sample.retryable),
                ] {
                    observer.observe(count, &[KeyValue::new("ctxd.job.state", state)]);
                }
            }
        })
        .build();
    let jobs = Arc::clone(sampled);
    let depth = meter
        .i64_observable_gauge("ctxd.jobs.queue.depth")
        .with_unit("{job}")
        .with_description("Jobs a worker could claim now (available or retryable, due)")
        .with_callback(move |observer| {
            if let Some(sample) = jobs.job_queue() {
                observer.observe(sample.due, &[]);
            }
        })
        .build();
    let jobs = Arc::clone(sampled);
    let oldest = meter
        .f64_observable_gauge("ctxd.jobs.oldest_due.age")
        .with_unit("s")
        .with_description("How long the longest-waiting claimable job has been due")
        .with_callback(move |observer| {
            if let Some(sample) = jobs.job_queue() {
                observer.observe(sample.oldest_due_secs, &[]);
            }
        })
        .build();
    (vec![by_state, depth], oldest)
}

/// The database pools' gauges: connections by state, the most, requests waiting.
fn pool_gauges(meter: &Meter, sampled: &Arc<Sampled>) -> Vec<ObservableGauge<i64>> {
    let pool = Arc::clone(sampled);
    let connections = meter
        .i64_observable_gauge("db.client.connection.count")
        .with_unit("{connection}")
        .with_description("Database connections of this replica's pool, by state (used, idle)")
        .with_callback(move |observer| {
            let Some(sample) = pool.pool() else {
                return;
            };
            for (name, figures) in sample.pools() {
                let idle = figures.idle as i64;
                let used = (i64::from(figures.size) - idle).max(0);
                for (state, count) in [("used", used), ("idle", idle)] {
                    observer.observe(
                        count,
                        &[
                            KeyValue::new("db.client.connection.pool.name", name),
                            KeyValue::new("db.client.connection.state", state),
                        ],
                    );
                }
            }
        })
        .build();
    let pool = Arc::clone(sampled);
    let max = meter
        .i64_observable_gauge("db.client.connection.max")
        .with_unit("{connection}")
        .with_description("The most database connections this replica's pool opens")
        .with_callback(move |observer| {
            let Some(sample) = pool.pool() else {
                return;
            };
            for (name, figures) in sample.pools() {
                observer.observe(
                    i64::from(figures.max),
                    &[KeyValue::new("db.client.connection.pool.name", name)],
                );
            }
        })
        .build();
    let pool = Arc::clone(sampled);
    let pending = meter
        .i64_observable_gauge("db.client.connection.pending_requests")
        .with_unit("{request}")
        .with_description("Requests waiting for a connection of this replica's pool")
        .with_callback(move |observer| {
            let Some(sample) = pool.pool() else {
                return;
            };
            for (name, figures) in sample.pools() {
                observer.observe(
                    i64::try_from(figures.pending).unwrap_or(i64::MAX),
                    &[KeyValue::new("db.client.connection.pool.name", name)],
                );
            }
        })
        .build();
    vec![connections, max, pending]
}

/// The view cache's gauges: its bytes and its sessions.
fn cache_gauges(meter: &Meter, sampled: &Arc<Sampled>) -> Vec<ObservableGauge<i64>> {
    let pool = Arc::clone(sampled);
    let cache_bytes = meter
        .i64_observable_gauge("ctxd.view_cache.size")
        .with_unit("By")
        .with_description("Bytes the session view cache estimates its entries take")
        .with_callback(move |observer| {
            if let Some(sample) = pool.pool() {
                observer.observe(sample.view_cache_bytes as i64, &[]);
            }
        })
        .build();
    let pool = Arc::clone(sampled);
    let cache_entries = meter
        .i64_observable_gauge("ctxd.view_cache.entries")
        .with_unit("{session}")
        .with_description("Sessions the session view cache holds")
        .with_callback(move |observer| {
            if let Some(sample) = pool.pool() {
                observer.observe(sample.view_cache_entries as i64, &[]);
            }
        })
        .build();
    vec![cache_bytes, cache_entries]
}
