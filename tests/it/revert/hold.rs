//! After a revert automatic compaction waits: builds send the restored view (within
//! budget) without compacting, and a job enqueued before the revert does nothing, until
//! the log has grown past the mark the revert set; a Compact lifts the wait at once.
use std::time::Duration;

use ctxd::pb;
use sqlx::PgPool;

use super::{by_cursor, corpus_session, of_kind, revert, session_events, snapshot};
use crate::harness::*;

/// The session's compactions so far (clearings and summarization passes), oldest first.
async fn compactions(client: &mut Client, id: &str) -> Vec<pb::Event> {
    session_events(client, id)
        .await
        .into_iter()
        .filter(|e| {
            e.kind == pb::EventKind::ToolResultsCleared as i32
                || e.kind == pb::EventKind::CompactionCompleted as i32
        })
        .collect()
}

/// A build within the window's limit and provider-valid.
async fn checked_build(client: &mut Client, id: &str, limit: i64) -> pb::BuildMessagesResponse {
    let built = build(client, id, pb::OutputFormat::Neutral).await.unwrap();
    let total = built.budget.unwrap().breakdown.unwrap().total_tokens;
    assert!(total <= limit, "{total} > {limit}");
    assert_provider_valid(&built.messages);
    built
}

/// A small turn: about 400 tokens.
fn small_turn(turn: usize) -> Vec<pb::Message> {
    let words: Vec<String> = (0..150).map(|i| format!("note{}x{turn}", i % 37)).collect();
    vec![
        user(&format!("Turn {turn}: {}", words.join(" "))),
        assistant(&format!("Noted {turn}.")),
    ]
}

#[sqlx::test]
async fn automatic_compaction_waits_for_the_session_to_grow_or_a_compact(pool: PgPool) {
    let server = TestServer::start(pool.clone()).await;
    let mut client = server.client.clone();
    let policy = pb::Policy {
        context_window_tokens: Some(64_000),
        max_output_tokens: Some(4_000),
        tool_output_protect_tokens: Some(4_000),
        ..Default::default()
    };
    let limit = 60_000;
    corpus_session(&mut client, "s", &[0, 7], policy).await;
    checked_build(&mut client, "s", limit).await;
    let automatic = compactions(&mut client, "s").await;
    assert!(!automatic.is_empty(), "the builds compacted by themselves");

    let done = revert(&mut client, by_cursor("s", &automatic[0].cursor, false))
        .await
        .unwrap();
    let resume = done.resume_at_log_tokens;
    let stats = session(&mut client, "s").await.compaction.unwrap();
    assert!(stats.compaction_held && stats.resume_at_log_tokens == resume);
    let held = snapshot(&mut client, "s").await;

    // A job enqueued before the revert (here: held back until after it) does nothing.
    let job_id: i64 = sqlx::query_scalar(
        "insert into jobs (tenant_id, session_id, kind, args, priority, max_attempts, run_at)
         select tenant_id, id, 'summarize', '{\"reason\": \"compact\", \"target_tokens\": 0}',
             10, 3, now() + interval '1 hour'
         from sessions where external_id = 's' returning id",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    sqlx::query("update jobs set run_at = now() where id = $1")
        .bind(job_id)
        .execute(&pool)
        .await
        .unwrap();
    let every = Duration::from_millis(50);
    let job = crate::support::poll(Duration::from_secs(30), every, async || {
        let job = client
            .get_job(pb::GetJobRequest { job_id })
            .await
            .unwrap()
            .into_inner();
        assert!(job.state != pb::JobState::Discarded as i32, "{job:?}");
        (job.state == pb::JobState::Completed as i32).then_some(job)
    })
    .await
    .expect("the job completed within 30 s");
    let result: serde_json::Value = serde_json::from_str(&job.result_json).unwrap();
    assert_eq!(result["held"], true, "{result}");
    assert_eq!(result["due"], false, "{result}");
    super::assert_restored(
        &snapshot(&mut client, "s").await,
        &held,
        "after the held job",
    );

    // Builds while the log grows send the restored view, within budget, uncompacted.
    let mut turn = 0;
    loop {
        append(&mut client, "s", small_turn(turn)).await.unwrap();
        turn += 1;
        let log_tokens = session(&mut client, "s").await.log_tokens;
        checked_build(&mut client, "s", limit).await;
        let now = compactions(&mut client, "s").await;
        if log_tokens >= resume {
            assert!(
                now.len() > automatic.len(),
                "compaction resumed at {log_tokens} of {resume}"
            );
            break;
        }
        assert_eq!(
            now.len(),
            automatic.len(),
            "held at {log_tokens} of {resume}"
        );
        assert!(
            session(&mut client, "s")
                .await
                .compaction
                .unwrap()
                .compaction_held
        );
        assert!(turn < 200, "the log never reached {resume}");
    }
    assert!(turn > 1, "the wait lasted more than one turn");
    assert!(
        !session(&mut client, "s")
            .await
            .compaction
            .unwrap()
            .compaction_held
    );

    // Reverted again, an explicit Compact compacts at once and lifts the wait.
    let latest = compactions(&mut client, "s").await;
    let first_new = &latest[automatic.len()];
    revert(&mut client, by_cursor("s", &first_new.cursor, false))
        .await
        .unwrap();
    assert!(
        session(&mut client, "s")
            .await
            .compaction
            .unwrap()
            .compaction_held
    );
    let compacted = client
        .compact(pb::CompactRequest {
            session_id: "s".into(),
            mode: pb::CompactMode::Auto as i32,
            wait: true,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(compacted.applied, "{compacted:?}");
    assert!(
        !session(&mut client, "s")
            .await
            .compaction
            .unwrap()
            .compaction_held
    );
    let events = session_events(&mut client, "s").await;
    assert_eq!(of_kind(&events, pb::EventKind::CompactionReverted).len(), 2);
    server.stop().await;
}
