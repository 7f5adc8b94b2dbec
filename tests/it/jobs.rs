//! Summarization jobs: the queue, the workers, the model-backed summarizers against a
//! real HTTP server speaking each API, failures and retries, several replicas on one
//! database, and a replica killed while it holds a job.
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use ctxd::engine::EngineConfig;
use ctxd::job::JobState;
use ctxd::pb;
use ctxd::policy::Policy;
use ctxd::summarizer::model::{Api, ModelSummarizer, Profile};
use sqlx::PgPool;

use crate::binary::{free_port, terminate, wait_serving};
use crate::harness::{Client, TestServer, append, assistant, build, call, create, result, user};
use crate::model_server::{Behavior, MODEL_SUMMARY, ModelServer};

const KEY: &str = "test-key-123";

pub(crate) fn profile(server: &ModelServer, api: Api) -> Profile {
    Profile {
        api,
        base_url: match api {
            Api::Openai => format!("{}/v1", server.base_url()),
            _ => server.base_url(),
        },
        model: "test-model".into(),
        api_key_env: None,
        timeout_secs: 0.5,
        max_retries: 1,
        ..Profile::extractive()
    }
}

fn model_config(server: &ModelServer, api: Api) -> EngineConfig {
    let mut config = EngineConfig::new(Policy::default(), 1024 * 1024);
    let model = ModelSummarizer::with_key(profile(server, api), Some(KEY.into())).unwrap();
    config
        .summarizers
        .insert("model".into(), Some(Arc::new(model)));
    config.job_backoff = Duration::from_millis(10);
    config
}

fn words(count: usize, salt: usize) -> String {
    (0..count)
        .map(|i| format!("w{}", (i * 7 + salt) % 97))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A session whose summarizer is the "model" profile, in an 8 000-token window, with
/// `turns` turns of about 450 tokens. Returns the summarization jobs appends reported.
pub(crate) async fn fill(client: &mut Client, id: &str, turns: usize) -> Vec<i64> {
    fill_in(client, id, turns, 8_000).await
}

/// [`fill`] in a `window`-token window.
async fn fill_in(client: &mut Client, id: &str, turns: usize, window: i64) -> Vec<i64> {
    create(
        client,
        id,
        pb::Policy {
            context_window_tokens: Some(window),
            max_output_tokens: Some(1_000),
            summarizer_profile: Some("model".into()),
            ..Default::default()
        },
    )
    .await;
    let mut jobs = Vec::new();
    for turn in 0..turns {
        let call_id = format!("c{turn}");
        let batches = [
            vec![user(&format!(
                "question {turn}: read notes/{turn}.txt {}",
                words(40, turn)
            ))],
            vec![call(&[&call_id])],
            vec![result(&call_id, &words(300, turn))],
            vec![assistant(&format!("answer {turn} {}", words(30, turn)))],
        ];
        for batch in batches {
            let appended = append(client, id, batch).await.unwrap();
            if appended.summarization_job_id > 0 {
                jobs.push(appended.summarization_job_id);
            }
        }
    }
    jobs
}

fn summarize_and_wait(id: &str) -> pb::CompactRequest {
    pb::CompactRequest {
        session_id: id.into(),
        mode: pb::CompactMode::Summarize as i32,
        wait: true,
        wait_timeout_ms: 120_000,
        ..Default::default()
    }
}

async fn job(client: &mut Client, job_id: i64) -> pb::Job {
    client
        .get_job(pb::GetJobRequest { job_id })
        .await
        .unwrap()
        .into_inner()
}

fn result_of(job: &pb::Job) -> serde_json::Value {
    serde_json::from_str(&job.result_json).unwrap()
}

/// The active summaries cover 1..n once, in order, and no range was summarized twice.
async fn assert_applied_once(pool: &PgPool, external_id: &str) {
    let active: Vec<(i64, i64)> = sqlx::query_as(
        "select first_seq, last_seq from summaries s join sessions x on x.id = s.session_id
             and x.tenant_id = s.tenant_id
         where x.external_id = $1 and s.parent_id is null order by first_seq",
    )
    .bind(external_id)
    .fetch_all(pool)
    .await
    .unwrap();
    assert!(!active.is_empty(), "{external_id}: no summaries");
    let mut next = 1;
    for (first, last) in &active {
        // Step summaries inside the newest turn may start later; never earlier.
        assert!(
            *first >= next,
            "{external_id}: overlapping summaries {active:?}"
        );
        next = last + 1;
    }
    let duplicated: i64 = sqlx::query_scalar(
        "select count(*) from (
            select first_seq, last_seq, depth from summaries s join sessions x on x.id = s.session_id
             and x.tenant_id = s.tenant_id
            where x.external_id = $1 group by 1, 2, 3 having count(*) > 1) d",
    )
    .bind(external_id)
    .fetch_one(pool)
    .await
    .unwrap();
    assert_eq!(duplicated, 0, "{external_id}: a range was summarized twice");
}

#[sqlx::test]
async fn model_summarizers_speak_openai_and_anthropic(pool: PgPool) {
    for api in [Api::Openai, Api::Anthropic] {
        let model = ModelServer::start(Behavior::Answer).await;
        let server = TestServer::start_with(pool.clone(), model_config(&model, api)).await;
        let mut client = server.client.clone();
        let id = format!("{api:?}");
        let jobs = fill(&mut client, &id, 20).await;
        assert!(
            !jobs.is_empty(),
            "crossing the summarize threshold enqueues a job"
        );
        let compacted = client
            .compact(summarize_and_wait(&id))
            .await
            .unwrap()
            .into_inner();
        let ended = compacted.job.unwrap();
        assert_eq!(ended.state, pb::JobState::Completed as i32, "{ended:?}");
        let first = job(&mut client, jobs[0]).await;
        assert_eq!(first.state, pb::JobState::Completed as i32, "{first:?}");
        assert_eq!(first.kind, "summarize");
        assert_eq!(first.session_id, id);
        let outcome = result_of(&first);
        assert_eq!(outcome["due"], true);
        assert_eq!(outcome["summarized_first_seq"], 1);
        assert!(outcome["tokens_after"].as_i64() < outcome["tokens_before"].as_i64());

        let built = build(&mut client, &id, pb::OutputFormat::Neutral)
            .await
            .unwrap();
        assert!(
            built
                .summaries
                .iter()
                .any(|s| s.content.contains(MODEL_SUMMARY)),
            "{:?}",
            built.summaries
        );
        assert_applied_once(&pool, &id).await;

        let requests = model.requests();
        assert!(!requests.is_empty());
        for request in &requests {
            assert_eq!(request.body["model"], "test-model");
            match api {
                Api::Openai => {
                    assert_eq!(request.path, "/v1/chat/completions");
                    assert_eq!(request.headers["authorization"], format!("Bearer {KEY}"));
                    assert_eq!(request.body["messages"][0]["role"], "system");
                }
                _ => {
                    assert_eq!(request.path, "/v1/messages");
                    assert_eq!(request.headers["x-api-key"], KEY);
                    assert_eq!(request.headers["anthropic-version"], "2023-06-01");
                    assert!(request.body["system"].as_str().unwrap().contains("summary"));
                }
            }
        }
        // The oldest messages went to the model as a transcript.
        let transcript = requests[0].body.to_string();
        assert!(transcript.contains("notes/0.txt"), "{transcript}");
        server.stop().await;
    }
}

#[sqlx::test]
async fn a_failing_summarizer_retries_then_is_discarded_while_compaction_progresses(pool: PgPool) {
    for (index, (behavior, error)) in [
        (Behavior::Status500, "HTTP 500"),
        (Behavior::Garbage, "unusable"),
        (Behavior::Slow(3_000), "did not answer within"),
        (Behavior::Down, "could not be reached"),
    ]
    .into_iter()
    .enumerate()
    {
        let model = ModelServer::start(behavior).await;
        let server = TestServer::start_with(pool.clone(), model_config(&model, Api::Openai)).await;
        let mut client = server.client.clone();
        let id = format!("failing-{index}");
        fill(&mut client, &id, 20).await;
        let compacted = client
            .compact(summarize_and_wait(&id))
            .await
            .unwrap()
            .into_inner();
        let ended = compacted.job.unwrap();
        assert_eq!(ended.state, pb::JobState::Discarded as i32, "{ended:?}");
        assert_eq!(ended.attempts, 3, "every attempt was used");
        assert!(ended.last_error.contains(error), "{}", ended.last_error);
        assert!(
            ended
                .last_error
                .contains("deterministic truncation was applied"),
            "{}",
            ended.last_error
        );
        assert!(ended.run_at.unwrap().seconds >= ended.created_at.unwrap().seconds);
        // The last attempt escalated to deterministic truncation: the session shrank.
        assert!(
            compacted.tokens_after < compacted.tokens_before,
            "{} -> {}",
            compacted.tokens_before,
            compacted.tokens_after
        );
        let built = build(&mut client, &id, pb::OutputFormat::Neutral)
            .await
            .unwrap();
        assert!(!built.summaries.is_empty());
        assert!(
            built
                .summaries
                .iter()
                .all(|s| !s.content.contains(MODEL_SUMMARY))
        );
        assert_applied_once(&pool, &id).await;
        // Each failed attempt of the Compact's job was announced; only the last says it
        // will not retry.
        let failures: Vec<serde_json::Value> = sqlx::query_scalar(
            "select detail from events where external_id = $1 and kind = 3
             and (detail ->> 'job_id')::bigint = $2 order by session_seq",
        )
        .bind(&id)
        .bind(ended.job_id)
        .fetch_all(&pool)
        .await
        .unwrap();
        let retries: Vec<bool> = failures
            .iter()
            .map(|f| f["will_retry"].as_bool().unwrap())
            .collect();
        assert_eq!(retries, [true, true, false], "{failures:?}");
        assert!(failures[0]["error"].as_str().unwrap().contains(error));
        if behavior != Behavior::Down {
            assert!(model.requests().len() >= 3, "one call at least per attempt");
        }
        server.stop().await;
    }
}

#[sqlx::test]
async fn get_job_is_tenant_scoped_and_validated(pool: PgPool) {
    let model = ModelServer::start(Behavior::Answer).await;
    let server = TestServer::start_with(pool.clone(), model_config(&model, Api::Openai)).await;
    let mut client = server.client.clone();
    let jobs = fill(&mut client, "s", 20).await;
    let other: i64 = sqlx::query_scalar("insert into tenants (name) values ('other') returning id")
        .fetch_one(&pool)
        .await
        .unwrap();
    let store = ctxd::store::Store::new(pool.clone());
    assert!(store.job(other, jobs[0]).await.unwrap().is_none());
    let missing = client
        .get_job(pb::GetJobRequest { job_id: 1 << 40 })
        .await
        .unwrap_err();
    assert_eq!(missing.code(), tonic::Code::NotFound);
    let bad = client
        .get_job(pb::GetJobRequest { job_id: 0 })
        .await
        .unwrap_err();
    assert_eq!(bad.code(), tonic::Code::InvalidArgument);
    assert!(bad.message().starts_with("job_id"), "{}", bad.message());
    let bad_wait = client
        .compact(pb::CompactRequest {
            wait_timeout_ms: 700_000,
            ..summarize_and_wait("s")
        })
        .await
        .unwrap_err();
    assert!(
        bad_wait.message().starts_with("wait_timeout_ms"),
        "{}",
        bad_wait.message()
    );
    let unknown = client
        .create_session(pb::CreateSessionRequest {
            session_id: "x".into(),
            policy: Some(pb::Policy {
                summarizer_profile: Some("nope".into()),
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(unknown.code(), tonic::Code::InvalidArgument);
    assert!(
        unknown.message().starts_with("policy.summarizer_profile"),
        "{}",
        unknown.message()
    );
    server.stop().await;
}

/// The URL of this test's database (DATABASE_URL with its database replaced).
async fn database_url(pool: &PgPool) -> String {
    let name: String = sqlx::query_scalar("select current_database()")
        .fetch_one(pool)
        .await
        .unwrap();
    let base = std::env::var("DATABASE_URL").expect("DATABASE_URL");
    let (head, query) = match base.split_once('?') {
        Some((head, query)) => (head.to_string(), format!("?{query}")),
        None => (base.clone(), String::new()),
    };
    let authority = head.find("://").unwrap() + 3;
    let path = head[authority..]
        .find('/')
        .map_or(head.len(), |at| authority + at);
    format!("{}/{name}{query}", &head[..path])
}

struct Replica {
    addr: String,
    child: Child,
}

/// A `ctxd serve` process on the test's database, its "model" profile on `model`.
async fn replica(dir: &std::path::Path, url: &str, model: &ModelServer, extra: &[&str]) -> Replica {
    let config = dir.join("ctxd.toml");
    std::fs::write(&config, model.profile_toml()).unwrap();
    let addr = format!("127.0.0.1:{}", free_port());
    let config_path = config.to_str().unwrap().to_string();
    let mut args = vec![
        "serve",
        "--listen",
        &addr,
        "--config",
        &config_path,
        "--jobs-poll-interval-ms",
        "100",
    ];
    args.extend_from_slice(extra);
    let mut child = Command::new(env!("CARGO_BIN_EXE_ctxd"))
        .args(&args)
        .env("DATABASE_URL", url)
        // On its test database, a deployment refuses calls without a key unless told.
        .env("CTXD_ANONYMOUS_ACCESS", "allow")
        .env("CTXD_TEST_MODEL_KEY", KEY)
        .env("CTXD_LOG", "warn")
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    wait_serving(&addr, &mut child).await;
    Replica { addr, child }
}

async fn client_of(replica: &Replica) -> Client {
    pb::context_service_client::ContextServiceClient::new(
        crate::harness::channel(replica.addr.parse().unwrap()).await,
    )
}

#[sqlx::test]
async fn three_replicas_share_a_burst_of_jobs_each_applied_once(pool: PgPool) {
    let url = database_url(&pool).await;
    burst_of_jobs_applied_once(&pool, &url, "r").await;
}

/// The burst of the test above on the database at `url` (`pool`), in sessions named
/// from `prefix` (also run on a Citus cluster, tests/it/citus.rs).
pub(crate) async fn burst_of_jobs_applied_once(pool: &PgPool, url: &str, prefix: &str) {
    let model = ModelServer::start(Behavior::Answer).await;
    let dir = tempfile::tempdir().unwrap();
    let mut replicas = Vec::new();
    for _ in 0..3 {
        replicas.push(replica(dir.path(), url, &model, &["--jobs-workers", "2"]).await);
    }
    let mut clients = Vec::new();
    for replica in &replicas {
        clients.push(client_of(replica).await);
    }
    // Sessions filled through different replicas: each append past the threshold
    // enqueues (at most one pending job per session); every replica's workers claim.
    let sessions: Vec<String> = (0..12).map(|i| format!("{prefix}{i}")).collect();
    let mut fills = Vec::new();
    for (index, id) in sessions.iter().enumerate() {
        let mut client = clients[index % 3].clone();
        let id = id.clone();
        fills.push(tokio::spawn(
            async move { fill(&mut client, &id, 20).await },
        ));
    }
    let mut first_jobs = Vec::new();
    for fill in fills {
        first_jobs.push(fill.await.unwrap()[0]);
    }
    // A Compact through yet another replica waits for each session's work to end.
    for (index, id) in sessions.iter().enumerate() {
        let compacted = clients[(index + 1) % 3]
            .compact(summarize_and_wait(id))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(compacted.job.unwrap().state, pb::JobState::Completed as i32);
    }
    let mut workers = std::collections::BTreeSet::new();
    for &job_id in &first_jobs {
        let ended = job(&mut clients[0], job_id).await;
        assert_eq!(ended.state, pb::JobState::Completed as i32, "{ended:?}");
        let outcome = result_of(&ended);
        workers.insert(
            outcome["worker"]
                .as_str()
                .unwrap()
                .rsplit_once('-')
                .unwrap()
                .0
                .to_string(),
        );
    }
    assert!(
        workers.len() >= 2,
        "the jobs spread over replicas: {workers:?}"
    );
    for id in &sessions {
        assert_applied_once(pool, id).await;
    }
    let unfinished: i64 =
        sqlx::query_scalar("select count(*) from jobs where state not in ('completed')")
            .fetch_one(pool)
            .await
            .unwrap();
    assert_eq!(unfinished, 0);
    for replica in replicas {
        terminate(replica.child).await;
    }
}

#[sqlx::test]
async fn a_job_held_by_a_killed_replica_is_finished_by_another(pool: PgPool) {
    let url = database_url(&pool).await;
    // The first summarizer call never gets an answer: the replica making it holds the
    // job when it is killed.
    let model = ModelServer::start(Behavior::HangFirst).await;
    let dir = tempfile::tempdir().unwrap();
    let lease = ["--jobs-workers", "1", "--jobs-lease-secs", "1"];
    let mut doomed = replica(dir.path(), &url, &model, &lease).await;
    let mut client = client_of(&doomed).await;
    let jobs = fill(&mut client, "k", 20).await;
    model.received.notified().await;
    doomed.child.kill().unwrap();
    doomed.child.wait().unwrap();
    let held: (String, i32) = sqlx::query_as("select state, attempts from jobs where id = $1")
        .bind(jobs[0])
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(
        held,
        ("running".to_string(), 1),
        "the killed replica held the job"
    );

    let survivor = replica(dir.path(), &url, &model, &lease).await;
    let mut client = client_of(&survivor).await;
    let compacted = client
        .compact(summarize_and_wait("k"))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(compacted.job.unwrap().state, pb::JobState::Completed as i32);
    let rescued = job(&mut client, jobs[0]).await;
    assert_eq!(rescued.state, pb::JobState::Completed as i32, "{rescued:?}");
    assert_eq!(rescued.attempts, 2, "claimed again after the lease lapsed");
    assert!(
        rescued.last_error.contains("lease expired"),
        "{}",
        rescued.last_error
    );
    // The rescued attempt counted as a failed one, announced as retried.
    let failures = failure_events(&pool, jobs[0]).await;
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert_eq!((failures[0].0, failures[0].1), (1, true), "{failures:?}");
    assert!(failures[0].2.contains("lease expired"), "{failures:?}");
    assert_applied_once(&pool, "k").await;
    let built = build(&mut client, "k", pb::OutputFormat::Neutral)
        .await
        .unwrap();
    assert!(
        built
            .summaries
            .iter()
            .any(|s| s.content.contains(MODEL_SUMMARY))
    );
    terminate(survivor.child).await;
}

/// The COMPACTION_FAILED events of a job, in order: (attempt, will_retry, error).
async fn failure_events(pool: &PgPool, job_id: i64) -> Vec<(i64, bool, String)> {
    let details: Vec<serde_json::Value> = sqlx::query_scalar(
        "select detail from events where kind = 3 and (detail ->> 'job_id')::bigint = $1
         order by session_seq",
    )
    .bind(job_id)
    .fetch_all(pool)
    .await
    .unwrap();
    details
        .iter()
        .map(|d| {
            (
                d["attempt"].as_i64().unwrap(),
                d["will_retry"].as_bool().unwrap(),
                d["error"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// A job whose worker is killed on each of its attempts ends as an exhausted job ends:
/// each rescued attempt is announced, and a worker of the next replica applies the
/// deterministic fallback on the last one, bringing the session back within budget
/// without the client appending again.
#[sqlx::test]
async fn a_job_whose_worker_dies_on_its_last_attempt_ends_with_the_fallback(pool: PgPool) {
    let url = database_url(&pool).await;
    // No summarizer call is ever answered: the replica making one holds the job (its
    // lease renewed) until it is killed.
    let model = ModelServer::start(Behavior::Hang).await;
    let dir = tempfile::tempdir().unwrap();
    let flags = [
        "--jobs-workers",
        "1",
        "--jobs-lease-secs",
        "1",
        "--jobs-max-attempts",
        "2",
    ];
    let mut holder = Killed(replica(dir.path(), &url, &model, &flags).await);
    let mut client = client_of(&holder.0).await;
    let jobs = fill_in(&mut client, "d", 20, 4_000).await;
    let job_id = jobs[0];
    let over: i16 =
        sqlx::query_scalar("select budget_status from sessions where external_id = 'd'")
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(
        over,
        pb::BudgetStatus::Over as i16,
        "filled past the window"
    );
    for attempt in 1..=2 {
        // This replica's worker claimed attempt `attempt` and called the model.
        model.received.notified().await;
        holder.0.child.kill().unwrap();
        holder.0.child.wait().unwrap();
        let held: (String, i32) = sqlx::query_as("select state, attempts from jobs where id = $1")
            .bind(job_id)
            .fetch_one(&pool)
            .await
            .unwrap();
        assert_eq!(
            held,
            ("running".to_string(), attempt),
            "the killed replica held it"
        );
        // The next replica rescues the job once the lease lapses: a retry the first
        // time, the fallback run the second.
        holder = Killed(replica(dir.path(), &url, &model, &flags).await);
    }
    let mut client = client_of(&holder.0).await;
    // Its end is announced to nobody (no Compact waits on it): read until it ends.
    let ended = crate::support::poll(
        Duration::from_secs(60),
        Duration::from_millis(20),
        async || {
            let ended = job(&mut client, job_id).await;
            let finished = [
                pb::JobState::Completed,
                pb::JobState::Discarded,
                pb::JobState::Cancelled,
            ]
            .iter()
            .any(|state| ended.state == *state as i32);
            finished.then_some(ended)
        },
    )
    .await
    .expect("the job ended within 60 s");
    assert_eq!(ended.state, pb::JobState::Discarded as i32, "{ended:?}");
    assert_eq!(ended.attempts, 2, "{ended:?}");
    assert!(ended.last_error.contains("lease expired"), "{ended:?}");
    assert!(
        ended
            .last_error
            .contains("deterministic truncation was applied"),
        "{ended:?}"
    );
    let failures = failure_events(&pool, job_id).await;
    assert_eq!(
        failures
            .iter()
            .map(|(attempt, retry, _)| (*attempt, *retry))
            .collect::<Vec<_>>(),
        [(1, true), (2, false)],
        "one event per rescued attempt: {failures:?}"
    );
    assert!(
        failures
            .iter()
            .all(|(_, _, error)| error.contains("lease expired")),
        "{failures:?}"
    );
    // The fallback did not wait on the model again: one call per killed attempt.
    assert_eq!(model.requests().len(), 2);
    assert_applied_once(&pool, "d").await;
    // Back within budget with no append since the fill.
    let session = client
        .get_session(pb::GetSessionRequest {
            session_id: "d".into(),
            include_view: true,
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!session.summaries.is_empty());
    assert!(
        session
            .summaries
            .iter()
            .all(|s| !s.content.contains(MODEL_SUMMARY))
    );
    let budget = session.budget.unwrap();
    assert_ne!(budget.status, pb::BudgetStatus::Over as i32, "{budget:?}");
    let stored: i16 =
        sqlx::query_scalar("select budget_status from sessions where external_id = 'd'")
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(
        i32::from(stored),
        budget.status,
        "the recorded status follows"
    );
}

/// A replica killed when dropped, also when an assertion fails first.
struct Killed(Replica);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.child.kill();
        let _ = self.0.child.wait();
    }
}

/// The rescue directly, run by several replicas at once: each rescued attempt is
/// counted and announced once; one before the last is retried at once, the last one
/// becomes due again as its fallback run (the same attempt), and a fallback run whose
/// worker stopped too is discarded, announced.
#[sqlx::test]
async fn concurrent_rescues_announce_each_rescued_attempt_once(pool: PgPool) {
    use ctxd::store::{NewJob, NotifyGate, Store};
    let store = Store::new(pool.clone());
    let tenant = store.default_tenant().await.unwrap();
    let policy = Policy::default();
    store
        .create_session(tenant, "rescued", &policy, &Default::default())
        .await
        .unwrap();
    let mut tx = store
        .lock_session(tenant, "rescued")
        .await
        .unwrap()
        .unwrap();
    let new = NewJob {
        kind: "summarize",
        args: serde_json::json!({"reason": "threshold", "target_tokens": 0}),
        priority: 0,
        max_attempts: 2,
        notify_done: false,
    };
    let (id, _) = tx
        .enqueue_job(&new, &NotifyGate::new(Duration::ZERO))
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let rescue_everywhere = || async {
        let rescues = (0..4).map(|_| store.rescue_jobs());
        futures::future::join_all(rescues)
            .await
            .into_iter()
            .map(Result::unwrap)
            .sum::<u64>()
    };
    // A worker that claims the job and dies: its lease is made to have lapsed (a
    // second ago; now() may read the same on the next statement).
    let dead = |expected_attempt: i32| {
        let store = store.clone();
        let pool = pool.clone();
        async move {
            let claimed = store
                .claim_job("dead", Duration::from_secs(60))
                .await
                .unwrap()
                .unwrap();
            assert_eq!((claimed.id, claimed.attempts), (id, expected_attempt));
            sqlx::query("update jobs set lease_until = now() - interval '1 second' where id = $1")
                .bind(id)
                .execute(&pool)
                .await
                .unwrap();
            claimed
        }
    };

    assert!(!dead(1).await.fallback);
    assert_eq!(rescue_everywhere().await, 1, "rescued once");
    let retried = store.job(tenant, id).await.unwrap().unwrap();
    assert_eq!(
        (retried.state, retried.attempts, retried.fallback),
        (JobState::Retryable, 1, false)
    );
    assert!(retried.run_at <= chrono::Utc::now());
    let failures = failure_events(&pool, id).await;
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert_eq!((failures[0].0, failures[0].1), (1, true));
    assert!(failures[0].2.contains("lease expired"), "{failures:?}");

    // The last attempt: its fallback run is due, counted as that attempt; its worker
    // writes the attempt's event.
    assert!(!dead(2).await.fallback);
    assert_eq!(rescue_everywhere().await, 1);
    let pending = store.job(tenant, id).await.unwrap().unwrap();
    assert_eq!(
        (pending.state, pending.fallback),
        (JobState::Retryable, true)
    );
    assert_eq!(failure_events(&pool, id).await.len(), 1);
    let fallback = dead(2).await;
    assert!(fallback.fallback);
    assert!(fallback.last_error.unwrap().contains("lease expired"));

    // The fallback run's worker stopped too: discarded, announced.
    assert_eq!(rescue_everywhere().await, 1);
    let discarded = store.job(tenant, id).await.unwrap().unwrap();
    assert_eq!(
        (discarded.state, discarded.attempts),
        (JobState::Discarded, 2)
    );
    assert!(discarded.finished_at.is_some());
    let failures = failure_events(&pool, id).await;
    assert_eq!(
        failures
            .iter()
            .map(|(attempt, retry, _)| (*attempt, *retry))
            .collect::<Vec<_>>(),
        [(1, true), (2, false)],
        "{failures:?}"
    );
    assert_eq!(rescue_everywhere().await, 0, "nothing left to rescue");
}

/// The queue's batch call directly: ends recorded only for the worker holding the job,
/// claims handed to the workers that asked, by priority, at most one each.
#[sqlx::test]
async fn a_batch_records_held_ends_and_claims_one_job_per_taker(pool: PgPool) {
    use ctxd::job::JobEnd;
    use ctxd::store::{JobEnding, NewJob, NotifyGate, Store};
    let store = Store::new(pool.clone());
    let tenant = store.default_tenant().await.unwrap();
    let policy = Policy::default();
    let gate = NotifyGate::new(Duration::ZERO);
    let mut ids = Vec::new();
    for (index, priority) in [0_i16, 0, 10, 0].into_iter().enumerate() {
        let external_id = format!("batch-{index}");
        store
            .create_session(tenant, &external_id, &policy, &Default::default())
            .await
            .unwrap();
        let mut tx = store
            .lock_session(tenant, &external_id)
            .await
            .unwrap()
            .unwrap();
        let job = NewJob {
            kind: "noop",
            args: serde_json::json!({}),
            priority,
            max_attempts: 2,
            notify_done: false,
        };
        let (id, created) = tx.enqueue_job(&job, &gate).await.unwrap();
        assert!(created);
        // A second enqueue in the same session finds the pending job.
        assert_eq!(tx.enqueue_job(&job, &gate).await.unwrap(), (id, false));
        tx.commit().await.unwrap();
        ids.push(id);
    }
    let lease = Duration::from_secs(30);
    // Priority first, then age.
    let first = store.claim_job("w1", lease).await.unwrap().unwrap();
    assert_eq!(first.id, ids[2]);
    assert_eq!((first.state, first.attempts), (JobState::Running, 1));
    let second = store.claim_job("w2", lease).await.unwrap().unwrap();
    assert_eq!(second.id, ids[0]);

    let completed = JobEnd::Completed(serde_json::json!({"ok": true}));
    let failed = JobEnd::Failed {
        error: "model down".into(),
        retry_in: Some(Duration::from_secs(60)),
    };
    let finished = store
        .finish_jobs(
            &[
                JobEnding {
                    id: first.id,
                    tenant_id: tenant,
                    worker: "w1",
                    end: &completed,
                },
                // Not w3's job: nothing changes.
                JobEnding {
                    id: second.id,
                    tenant_id: tenant,
                    worker: "w3",
                    end: &completed,
                },
            ],
            &["w1", "w2", "w3"],
            lease,
        )
        .await
        .unwrap();
    assert_eq!(finished.held, vec![first.id]);
    // Two jobs were due (ids[1], ids[3]): two takers get one each, the third none.
    let mut claimed: Vec<(String, i64)> = finished
        .claimed
        .iter()
        .map(|(worker, job)| (worker.clone(), job.id))
        .collect();
    claimed.sort();
    assert_eq!(claimed.len(), 2, "{claimed:?}");
    assert!(claimed.iter().all(|(_, id)| *id == ids[1] || *id == ids[3]));
    assert_ne!(claimed[0].0, claimed[1].0, "one job per taker");

    let done = store.job(tenant, first.id).await.unwrap().unwrap();
    assert_eq!(done.state, JobState::Completed);
    assert_eq!(done.result.unwrap()["ok"], true);
    let untouched = store.job(tenant, second.id).await.unwrap().unwrap();
    assert_eq!(untouched.state, JobState::Running);

    // A retryable failure waits for its backoff; on the last attempt it is discarded.
    let finished = store
        .finish_jobs(
            &[JobEnding {
                id: second.id,
                tenant_id: tenant,
                worker: "w2",
                end: &failed,
            }],
            &["w2"],
            lease,
        )
        .await
        .unwrap();
    assert_eq!(finished.held, vec![second.id]);
    assert!(finished.claimed.is_empty(), "nothing else is due");
    let retrying = store.job(tenant, second.id).await.unwrap().unwrap();
    assert_eq!(retrying.state, JobState::Retryable);
    assert_eq!(retrying.last_error.as_deref(), Some("model down"));
    assert!(retrying.run_at > chrono::Utc::now() + chrono::Duration::seconds(50));
    sqlx::query("update jobs set run_at = now() where id = $1")
        .bind(second.id)
        .execute(&pool)
        .await
        .unwrap();
    let again = store.claim_job("w2", lease).await.unwrap().unwrap();
    assert_eq!((again.id, again.attempts), (second.id, 2));
    store
        .finish_jobs(
            &[JobEnding {
                id: second.id,
                tenant_id: tenant,
                worker: "w2",
                end: &failed,
            }],
            &[],
            lease,
        )
        .await
        .unwrap();
    let discarded = store.job(tenant, second.id).await.unwrap().unwrap();
    assert_eq!(discarded.state, JobState::Discarded);
    assert!(discarded.finished_at.is_some());

    // A later transaction finds the pending job through its lock; a more urgent request
    // (as Compact makes) takes it over while no worker has started it, and only raises
    // the urgency of a running one.
    store
        .create_session(tenant, "batch-4", &policy, &Default::default())
        .await
        .unwrap();
    let threshold = NewJob {
        kind: "noop",
        args: serde_json::json!({"reason": "threshold"}),
        priority: 0,
        max_attempts: 2,
        notify_done: false,
    };
    let mut tx = store
        .lock_session(tenant, "batch-4")
        .await
        .unwrap()
        .unwrap();
    let (waiting, created) = tx.enqueue_job(&threshold, &gate).await.unwrap();
    assert!(created);
    tx.commit().await.unwrap();
    let urgent = NewJob {
        args: serde_json::json!({"reason": "compact"}),
        priority: 10,
        notify_done: true,
        ..threshold.clone()
    };
    let running = claimed[0].1;
    let running_session = if running == ids[1] {
        "batch-1"
    } else {
        "batch-3"
    };
    for (session, id) in [("batch-4", waiting), (running_session, running)] {
        let mut tx = store.lock_session(tenant, session).await.unwrap().unwrap();
        assert_eq!(tx.enqueue_job(&urgent, &gate).await.unwrap(), (id, false));
        tx.commit().await.unwrap();
    }
    let urgency: std::collections::HashMap<i64, (serde_json::Value, i16, bool)> =
        sqlx::query_as::<_, (i64, serde_json::Value, i16, bool)>(
            "select id, args, priority, notify_done from jobs where id = any($1)",
        )
        .bind([waiting, running])
        .fetch_all(&pool)
        .await
        .unwrap()
        .into_iter()
        .map(|(id, args, priority, notify)| (id, (args, priority, notify)))
        .collect();
    assert_eq!(
        urgency[&waiting],
        (serde_json::json!({"reason": "compact"}), 10, true)
    );
    assert_eq!(urgency[&running], (serde_json::json!({}), 10, true));

    // Pruning deletes finished jobs past the retention, and only those.
    assert_eq!(
        store.prune_jobs(Duration::from_secs(3600)).await.unwrap(),
        0
    );
    assert_eq!(store.prune_jobs(Duration::ZERO).await.unwrap(), 2);
    assert!(store.job(tenant, first.id).await.unwrap().is_none());
    let left: i64 = sqlx::query_scalar("select count(*) from jobs")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(left, 3, "the two running jobs and the waiting one stay");
}
