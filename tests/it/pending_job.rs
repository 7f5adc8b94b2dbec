//! The summarization job an append past the threshold finds pending. A replica keeps
//! it with its cached session row (appends do not read it); a job can end without
//! touching the session row, so an append that relied on one that ended enqueues the
//! next, and never reports a job that is no longer pending.
use std::sync::Arc;

use ctxd::engine::EngineConfig;
use ctxd::pb;
use ctxd::policy::Policy;
use ctxd::summarizer::model::{Api, ModelSummarizer, Profile};
use sqlx::PgPool;

use crate::harness::{Client, TestServer, append, call, result, user};
use crate::jobs::{fill, profile};
use crate::model_server::{Behavior, ModelServer};

/// Whether the job is pending.
async fn pending(pool: &PgPool, job_id: i64) -> bool {
    sqlx::query_scalar(
        "select state in ('available', 'running', 'retryable') from jobs where id = $1",
    )
    .bind(job_id)
    .fetch_one(pool)
    .await
    .unwrap()
}

/// The summarization job an append to session "p" reports.
async fn job_of(client: &mut Client, messages: Vec<pb::Message>) -> i64 {
    append(client, "p", messages)
        .await
        .unwrap()
        .summarization_job_id
}

/// Ends a job without touching its session's row.
async fn cancel(pool: &PgPool, job_id: i64) {
    let ended =
        sqlx::query("update jobs set state = 'cancelled', finished_at = now() where id = $1")
            .bind(job_id)
            .execute(pool)
            .await
            .unwrap();
    assert_eq!(ended.rows_affected(), 1);
}

#[sqlx::test(migrations = "./migrations")]
async fn an_append_relying_on_a_job_that_ended_enqueues_the_next(pool: PgPool) {
    // The model never answers and the worker waits for it: a claimed job stays running.
    let model = ModelServer::start(Behavior::Hang).await;
    let mut config = EngineConfig::new(Policy::default(), 1024 * 1024);
    let profile = Profile {
        timeout_secs: 600.0,
        ..profile(&model, Api::Openai)
    };
    let summarizer = ModelSummarizer::with_key(profile, Some("key".into())).unwrap();
    config
        .summarizers
        .insert("model".into(), Some(Arc::new(summarizer)));
    let server = TestServer::start_with(pool.clone(), config).await;
    let mut client = server.client.clone();

    // Past the threshold every append reports the one pending job.
    let jobs = fill(&mut client, "p", 12).await;
    assert!(jobs.len() > 3, "{jobs:?}");
    assert!(jobs.iter().all(|&job| job == jobs[0]), "{jobs:?}");
    let first = jobs[0];
    assert!(pending(&pool, first).await);
    assert_eq!(job_of(&mut client, vec![user("one more")]).await, first);

    // The job ends without touching the session row.
    cancel(&pool, first).await;

    // The next append enqueues a new job and reports it; the one after relies on it.
    let second = job_of(&mut client, vec![user("and another")]).await;
    assert!(second > first, "{second} after {first}");
    assert!(pending(&pool, second).await);
    assert_eq!(job_of(&mut client, vec![user("and a third")]).await, second);

    // Again, with an append written by a statement of its own (its large tool result
    // is evicted: an event, which batched appends do not carry).
    cancel(&pool, second).await;
    let big = "lines of output ".repeat(2_000);
    let appended = append(&mut client, "p", vec![call(&["big"]), result("big", &big)])
        .await
        .unwrap();
    assert_eq!(appended.evicted_seqs.len(), 1);
    let third = appended.summarization_job_id;
    assert!(third > second, "{third} after {second}");
    assert!(pending(&pool, third).await);
    let pending_jobs: i64 = sqlx::query_scalar(
        "select count(*) from jobs where state in ('available', 'running', 'retryable')",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(pending_jobs, 1);
    server.stop().await;
}
