//! The job queue table: enqueue (inside the transaction that makes a job necessary),
//! claim under a lease with FOR UPDATE SKIP LOCKED, finish, retry, rescue, prune.
use std::sync::LazyLock;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use sqlx::types::Json;
use sqlx::{FromRow, Row};

use super::StoreResult;
use super::{SessionTx, Store, with_columns};
use crate::events::{CompactionKind, EventDetail};
use crate::job::{Job, JobEnd, JobState, RESCUE_ERROR};

/// The channel workers listen on for new jobs.
pub const JOBS_CHANNEL: &str = "ctxd_jobs";
/// The channel a job's end is announced on (payload: the job id), when someone waits.
pub const JOB_DONE_CHANNEL: &str = "ctxd_job_done";

/// A job row as read: private to the store, which hands out [`Job`]s.
#[derive(sqlx::FromRow)]
struct JobRow {
    id: i64,
    tenant_id: i64,
    session_id: i64,
    external_id: String,
    kind: String,
    state: String,
    priority: i16,
    attempts: i32,
    max_attempts: i32,
    run_at: chrono::DateTime<chrono::Utc>,
    args: Json<serde_json::Value>,
    result: Option<Json<serde_json::Value>>,
    last_error: Option<String>,
    created_at: chrono::DateTime<chrono::Utc>,
    finished_at: Option<chrono::DateTime<chrono::Utc>>,
    /// The worker of this job's last attempt stopped (the job was rescued): this run
    /// ends that attempt with the deterministic fallback, without the model, and the
    /// job as an exhausted one ends (`last_error` says why).
    fallback: bool,
}

impl TryFrom<JobRow> for Job {
    type Error = sqlx::Error;

    fn try_from(row: JobRow) -> Result<Job, sqlx::Error> {
        Ok(Job {
            id: row.id,
            tenant_id: row.tenant_id,
            session_id: row.session_id,
            external_id: row.external_id,
            kind: row.kind,
            state: JobState::from_db(&row.state).map_err(|e| sqlx::Error::Decode(Box::new(e)))?,
            priority: row.priority,
            attempts: row.attempts,
            max_attempts: row.max_attempts,
            run_at: row.run_at,
            args: row.args.0,
            result: row.result.map(|json| json.0),
            last_error: row.last_error,
            created_at: row.created_at,
            finished_at: row.finished_at,
            fallback: row.fallback,
        })
    }
}

/// A job [`Store::rescue_jobs`] rescued: the attempt its worker did not finish.
#[derive(Debug, sqlx::FromRow)]
struct Rescued {
    attempt: i32,
    /// It was the last attempt: due again as its fallback run.
    fallback_run: bool,
    /// It was the fallback run: discarded.
    discarded: bool,
    notify_done: bool,
}

/// A job to enqueue.
#[derive(Debug, Clone, serde::Serialize)]
pub struct NewJob {
    pub kind: &'static str,
    pub args: serde_json::Value,
    pub priority: i16,
    pub max_attempts: i32,
    /// Someone will wait for this job's end: announce it.
    pub notify_done: bool,
}

/// Limits the NOTIFYs that announce new jobs to one per window per process: every
/// commit carrying a NOTIFY takes a global lock in PostgreSQL, so a burst of enqueues
/// must not each carry one. Workers woken by the first claim until the queue is empty,
/// and polling picks up anything enqueued after they went back to sleep.
#[derive(Debug)]
pub struct NotifyGate {
    window_ms: i64,
    last_ms: AtomicI64,
}

impl NotifyGate {
    pub fn new(window: Duration) -> NotifyGate {
        NotifyGate {
            window_ms: window.as_millis() as i64,
            last_ms: AtomicI64::new(i64::MIN / 2),
        }
    }

    /// True when this enqueue should carry a NOTIFY.
    pub fn take(&self) -> bool {
        let now = chrono::Utc::now().timestamp_millis();
        let last = self.last_ms.load(Ordering::Relaxed);
        now - last >= self.window_ms
            && self
                .last_ms
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
    }

    /// Gives the window back after a `take` whose enqueue did not happen (the write
    /// found the session changed, or a job was already pending), so the next enqueue
    /// announces its job instead of leaving it to polling.
    pub fn release(&self) {
        self.last_ms.store(i64::MIN / 2, Ordering::Relaxed);
    }
}

/// The columns of [`Job`] (of `jobs j`): the `{columns}` of statements that read it.
/// A job row's columns (`j`) but its session's name.
const JOB_COLUMNS: &str = "j.id, j.tenant_id, j.session_id, \
    j.kind, j.state, j.priority, j.attempts, j.max_attempts, j.run_at, j.args, j.result, \
    j.last_error, j.created_at, j.finished_at, j.fallback";

static FINISH_SQL: LazyLock<String> =
    LazyLock::new(|| with_columns(include_str!("sql/jobs/finish.sql"), JOB_COLUMNS));
static JOB_SQL: LazyLock<String> = LazyLock::new(|| {
    with_columns(
        "select {columns}, s.external_id from jobs j
         join sessions s on s.id = j.session_id and s.tenant_id = $1
         where j.tenant_id = $1 and j.id = $2",
        JOB_COLUMNS,
    )
});

impl SessionTx {
    /// Enqueues a job for this session in this transaction (it exists only if the
    /// transaction commits). When one of the kind is already pending, that one's id is
    /// returned and nothing is added (it only takes on this request's urgency):
    /// `(id, created)`.
    pub async fn enqueue_job(
        &mut self,
        job: &NewJob,
        gate: &NotifyGate,
    ) -> StoreResult<(i64, bool)> {
        let session_id = self.session.id;
        let tenant_id = self.session.tenant_id;
        // Pending when the lock was taken (read in the same statement) or enqueued
        // earlier in this transaction: that one. Every enqueue holds the session's lock,
        // so none can appear meanwhile; one that ends meanwhile ends as it would have
        // right after an insert found it pending.
        let (id, created) = match self.pending_jobs.get(job.kind) {
            Some(&id) => (id, false),
            None => {
                let (id, created): (i64, bool) =
                    sqlx::query_as(include_str!("sql/jobs/enqueue.sql"))
                        .bind(tenant_id)
                        .bind(session_id)
                        .bind(job.kind)
                        .bind(Json(&job.args))
                        .bind(job.priority)
                        .bind(job.max_attempts)
                        .bind(job.notify_done)
                        .fetch_one(self.conn())
                        .await?;
                self.pending_jobs.insert(job.kind.to_string(), id);
                (id, created)
            }
        };
        if created {
            if gate.take() {
                sqlx::query("select pg_notify($1, '')")
                    .bind(JOBS_CHANNEL)
                    .execute(self.conn())
                    .await?;
            }
        } else if job.notify_done || job.priority > 0 {
            // The pending one must announce its end to this waiter and go first; a more
            // urgent request (a Compact after a threshold job) also replaces its
            // arguments while no worker has started it.
            sqlx::query(include_str!("sql/jobs/merge.sql"))
                .bind(id)
                .bind(job.notify_done)
                .bind(job.priority)
                .bind(Json(&job.args))
                .bind(tenant_id)
                .execute(self.conn())
                .await?;
        }
        Ok((id, created))
    }

    /// Commits the transaction.
    pub async fn commit(self) -> StoreResult<()> {
        self.finish().await
    }
}

/// A job's end, as its worker reports it.
#[derive(Debug)]
pub struct JobEnding<'a> {
    pub id: i64,
    pub tenant_id: i64,
    pub worker: &'a str,
    pub end: &'a JobEnd,
}

/// What [`Store::finish_jobs`] did.
#[derive(Debug, Default)]
pub struct Finished {
    /// The jobs whose ends were recorded (their workers still held them).
    pub held: Vec<i64>,
    /// Jobs claimed, with the worker each is for.
    pub claimed: Vec<(String, Job)>,
}

// The queue's own bookkeeping (claim, finish) commits without waiting for
// the WAL flush: PostgreSQL makes it visible at once and flushes it with the next
// synchronous commit, within ~3 × wal_writer_delay otherwise. Were PostgreSQL itself to
// crash in that window, a claim reverts to a due job and a finish to a running job whose
// lease lapses and is rescued; either way the job runs again, and its effect commits
// synchronously in the session's own transaction, guarded by the session's state, so it
// is never applied twice. Enqueueing stays inside the synchronous transaction that
// makes the job necessary.
impl Store {
    /// Claims the next due job for `worker` until `lease` from now, counting an attempt.
    pub async fn claim_job(&self, worker: &str, lease: Duration) -> StoreResult<Option<Job>> {
        let mut finished = self.finish_jobs(&[], &[worker], lease).await?;
        Ok(finished.claimed.pop().map(|(_, job)| job))
    }

    /// Extends the lease of a job `worker` still holds; false when it no longer does.
    pub async fn extend_lease(
        &self,
        id: i64,
        tenant_id: i64,
        worker: &str,
        lease: Duration,
    ) -> StoreResult<bool> {
        let updated = sqlx::query(include_str!("sql/jobs/extend_lease.sql"))
            .bind(id)
            .bind(worker)
            .bind(lease.as_secs_f64())
            .bind(tenant_id)
            .execute(self.db())
            .await?;
        Ok(updated.rows_affected() == 1)
    }

    /// Ends jobs and claims due ones in one call (the function of migration 0006): each
    /// of `ends` is recorded if its worker still holds the job (otherwise its lease
    /// lapsed and it was rescued, and nothing changes); each worker in `takers` gets the
    /// next due job, if any, under `lease`. One commit for a whole batch.
    pub async fn finish_jobs(
        &self,
        ends: &[JobEnding<'_>],
        takers: &[&str],
        lease: Duration,
    ) -> StoreResult<Finished> {
        let mut ids = Vec::with_capacity(ends.len());
        let mut tenants = Vec::with_capacity(ends.len());
        let mut workers = Vec::with_capacity(ends.len());
        let mut states = Vec::with_capacity(ends.len());
        let mut results: Vec<Option<String>> = Vec::with_capacity(ends.len());
        let mut errors: Vec<Option<&str>> = Vec::with_capacity(ends.len());
        let mut delays = Vec::with_capacity(ends.len());
        for ending in ends {
            let (result, error, delay) = match ending.end {
                JobEnd::Completed(result) => (Some(result.to_string()), None, 0.0),
                JobEnd::Failed {
                    error,
                    retry_in: Some(delay),
                } => (None, Some(error.as_str()), delay.as_secs_f64()),
                JobEnd::Failed {
                    error,
                    retry_in: None,
                } => (None, Some(error.as_str()), 0.0),
                JobEnd::Cancelled(reason) => (None, Some(reason.as_str()), 0.0),
            };
            let state = ending.end.state();
            ids.push(ending.id);
            tenants.push(ending.tenant_id);
            workers.push(ending.worker);
            states.push(state.as_str());
            results.push(result);
            errors.push(error);
            delays.push(delay);
        }
        let rows = sqlx::query(FINISH_SQL.as_str())
            .bind(&ids)
            .bind(&tenants)
            .bind(&workers)
            .bind(&states)
            .bind(&results)
            .bind(&errors)
            .bind(&delays)
            .bind(takers)
            .bind(lease.as_secs_f64())
            .bind(JOB_DONE_CHANNEL)
            .fetch_all(self.db())
            .await?;
        let mut finished = Finished::default();
        for row in rows {
            if let Some(held) = row.try_get::<Option<i64>, _>("held")? {
                finished.held.push(held);
            } else {
                let job = Job::try_from(JobRow::from_row(&row)?)?;
                let worker: Option<String> = row.try_get("locked_by")?;
                finished.claimed.push((worker.unwrap_or_default(), job));
            }
        }
        Ok(finished)
    }

    /// Gives a claimed job back untouched (shutdown): available again, the attempt not
    /// counted.
    pub async fn release_job(&self, id: i64, tenant_id: i64, worker: &str) -> StoreResult<()> {
        sqlx::query(include_str!("sql/jobs/release.sql"))
            .bind(id)
            .bind(worker)
            .bind(tenant_id)
            .execute(self.db())
            .await?;
        sqlx::query("select pg_notify($1, '')")
            .bind(JOBS_CHANNEL)
            .execute(self.db())
            .await?;
        Ok(())
    }

    /// Rescues running jobs whose lease lapsed (their worker died or stalled), each in
    /// a transaction under its session's lock (the lock every writer of the session's
    /// events takes) that also writes the rescued attempt's COMPACTION_FAILED event. An
    /// attempt before the last is retried at once; the last one is made due again as
    /// its fallback run (see [`Job::fallback`]), whose worker ends it and writes its
    /// event; a fallback run whose worker stopped too is discarded. Safe to run in
    /// several replicas at once (see sql/jobs/rescue.sql). Returns how many.
    pub async fn rescue_jobs(&self) -> StoreResult<u64> {
        let lapsed: Vec<(i64, i64, String)> = sqlx::query_as(include_str!("sql/jobs/lapsed.sql"))
            .fetch_all(self.db())
            .await?;
        let mut rescued = 0;
        for (id, tenant_id, external_id) in lapsed {
            let Some(mut tx) = self.lock_session(tenant_id, &external_id).await? else {
                continue;
            };
            let row: Option<Rescued> = sqlx::query_as(include_str!("sql/jobs/rescue.sql"))
                .bind(id)
                .bind(RESCUE_ERROR)
                .bind(tenant_id)
                .fetch_optional(tx.conn())
                .await?;
            if let Some(row) = row {
                rescued += 1;
                if row.discarded && row.notify_done {
                    sqlx::query("select pg_notify($1, $2::text)")
                        .bind(JOB_DONE_CHANNEL)
                        .bind(id)
                        .execute(tx.conn())
                        .await?;
                }
                if !row.fallback_run {
                    tx.add_event(EventDetail::CompactionFailed {
                        compaction: CompactionKind::Summarize,
                        error: if row.discarded {
                            format!("{RESCUE_ERROR} during its deterministic fallback")
                        } else {
                            RESCUE_ERROR.to_string()
                        },
                        job_id: id,
                        attempt: row.attempt,
                        will_retry: !row.discarded,
                    });
                }
            }
            tx.commit().await?;
        }
        if rescued > 0 {
            sqlx::query("select pg_notify($1, '')")
                .bind(JOBS_CHANNEL)
                .execute(self.db())
                .await?;
        }
        Ok(rescued)
    }

    /// The unfinished jobs of every tenant, for the queue gauges (one statement).
    pub async fn job_queue_sample(&self) -> StoreResult<crate::metrics::JobQueueSample> {
        let (available, running, retryable, due, oldest_due_secs): (i64, i64, i64, i64, f64) =
            sqlx::query_as(include_str!("sql/jobs/queue_sample.sql"))
                .fetch_one(self.db())
                .await?;
        Ok(crate::metrics::JobQueueSample {
            available,
            running,
            retryable,
            due,
            oldest_due_secs,
        })
    }

    /// Deletes finished jobs older than `retention`.
    pub async fn prune_jobs(&self, retention: Duration) -> StoreResult<u64> {
        let pruned = sqlx::query(include_str!("sql/jobs/prune.sql"))
            .bind(retention.as_secs_f64())
            .execute(self.db())
            .await?;
        Ok(pruned.rows_affected())
    }

    /// A job by id, within a tenant.
    pub async fn job(&self, tenant_id: i64, id: i64) -> StoreResult<Option<Job>> {
        let row: Option<JobRow> = sqlx::query_as(JOB_SQL.as_str())
            .bind(tenant_id)
            .bind(id)
            .fetch_optional(self.db())
            .await?;
        Ok(row.map(Job::try_from).transpose()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_released_window_lets_the_next_enqueue_notify() {
        let gate = NotifyGate::new(Duration::from_secs(3600));
        assert!(gate.take());
        assert!(!gate.take(), "the window is spent");
        gate.release();
        assert!(gate.take(), "given back");
        assert!(!gate.take());
    }
}
