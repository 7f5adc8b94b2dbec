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
    let jobs = fill(&mut client, "p", 20).await;
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

/// The store's side: a write relying on a remembered pending job that ended races, and
/// the replica keeps the row with the job corrected (the append decides again without
/// a read); a row another writer changed is forgotten (the append reads). Both for the
/// batched statement and the single one (a budget status rides only on the latter).
#[sqlx::test(migrations = "./migrations")]
async fn a_write_that_relied_on_an_ended_job_corrects_the_cached_row(pool: PgPool) {
    use ctxd::store::{AppendWrite, Appended, Store};

    use crate::replicas::{one_more, only_messages};

    let server = TestServer::start(pool.clone()).await;
    let mut client = server.client.clone();
    let store = Store::new(pool.clone());
    let tenant = store.default_tenant().await.unwrap();
    for alone in [false, true] {
        let id = if alone { "single" } else { "batched" };
        crate::harness::create(&mut client, id, Default::default()).await;
        let job: i64 = sqlx::query_scalar(
            // Due in an hour: the server's own workers leave it to the test.
            "insert into jobs (tenant_id, session_id, kind, max_attempts, run_at)
             select tenant_id, id, 'summarize', 3, now() + interval '1 hour'
             from sessions where external_id = $1
             returning id",
        )
        .bind(id)
        .fetch_one(&pool)
        .await
        .unwrap();
        let message = ctxd::message::Message::text(ctxd::message::Role::User, "one");
        // Writes `message` on `state`, relying on `pending` as the summarization job.
        let write = |state: ctxd::store::AppendState, pending: Option<i64>| {
            let store = store.clone();
            let message = message.clone();
            async move {
                let (batch, update) = one_more(&state.session, &message, 3);
                let budget_status = alone.then_some(state.session.budget_status);
                let write = AppendWrite {
                    pending: Some(("summarize", pending)),
                    budget_status,
                    ..only_messages(&batch, update)
                };
                store.append(state, write).await.unwrap()
            }
        };
        let cached = || store.cached_append_state(tenant, id, &[]);

        // Read, written: the row is cached with the job the read found.
        let state = store
            .append_state(tenant, id, &[], None, false)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(state.pending_jobs.get("summarize"), Some(&job));
        assert!(matches!(
            write(state, Some(job)).await,
            Appended::Applied { .. }
        ));
        let state = cached().unwrap_or_else(|| panic!("{id}: cached after the write"));
        assert!(state.pending_known);
        assert_eq!(state.pending_jobs.get("summarize"), Some(&job), "{id}");

        // The job ends without touching the row: the write relying on it races, and the
        // row stays cached with no job pending; relying on that, the next write applies.
        cancel(&pool, job).await;
        assert_eq!(write(state, Some(job)).await, Appended::Raced, "{id}");
        let state = cached().unwrap_or_else(|| panic!("{id}: kept after the job was corrected"));
        assert!(state.pending_known);
        assert_eq!(state.pending_jobs.get("summarize"), None, "{id}");
        assert!(matches!(write(state, None).await, Appended::Applied { .. }));

        // Another writer changes the row: the write races and the row is forgotten.
        let state = cached().unwrap_or_else(|| panic!("{id}: cached after the write"));
        append(&mut client, id, vec![user("elsewhere")])
            .await
            .unwrap();
        assert_eq!(write(state, None).await, Appended::Raced, "{id}");
        assert!(cached().is_none(), "{id}");
    }
    server.stop().await;
}
