//! Summarization jobs through the faults: the load's sessions use a model-backed
//! summarizer (a fake model on loopback), so their appends enqueue jobs that the
//! replicas' workers run while the faults strike. Once the load stops the queue is let
//! settle (a job whose worker lost its connection is taken again after its lease);
//! then every job enqueued must have completed: none lost, none discarded.
use std::time::{Duration, Instant};

use sqlx::Connection as _;

/// What became of the jobs.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Jobs {
    pub enqueued: i64,
    pub completed: i64,
    pub discarded: i64,
    /// Neither completed nor discarded once the queue had time to settle.
    pub lost: i64,
}

/// The jobs' outcome, once none is waiting or running (at most 90 s: three leases and
/// the retries' backoff).
pub async fn settled(url: &str) -> Jobs {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        if let Some(jobs) = count(url).await
            && (jobs.lost == 0 || Instant::now() >= deadline)
        {
            return jobs;
        }
        assert!(
            Instant::now() < deadline,
            "the jobs table could not be read"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn count(url: &str) -> Option<Jobs> {
    let mut conn = sqlx::PgConnection::connect(url).await.ok()?;
    let rows: Vec<(String, i64)> =
        sqlx::query_as("select state, count(*) from jobs group by state")
            .fetch_all(&mut conn)
            .await
            .ok()?;
    let mut jobs = Jobs::default();
    for (state, count) in rows {
        jobs.enqueued += count;
        match state.as_str() {
            "completed" => jobs.completed += count,
            "discarded" => jobs.discarded += count,
            _ => jobs.lost += count,
        }
    }
    Some(jobs)
}
