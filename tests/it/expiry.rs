//! Sessions past their policy's retention_seconds: the background sweep deletes them,
//! each announced by its SESSION_DELETED event, leaving no row of theirs in any table
//! (but the events, the stream's record, which the events retention prunes);
//! a fork keeps what it shares with an expired source; sessions without retention, or
//! changed since, stay. The sessions' last change is moved back in the table rather than
//! waited for.
use std::collections::BTreeSet;
use std::time::Duration;

use ctxd::pb;
use sqlx::PgPool;
use tonic::Streaming;

use crate::events::{next_event, subscribe, until_live};
use crate::harness::*;

/// A retention of one hour; the expired sessions' last change is set two hours back.
const HOUR: i64 = 3_600;

fn retained(seconds: i64) -> pb::Policy {
    pb::Policy {
        retention_seconds: Some(seconds),
        eviction_threshold_tokens: Some(200),
        leaf_chunk_messages: Some(4),
        fresh_tail_messages: Some(4),
        ..window(16_000, 2_000)
    }
}

/// A turn with two commands and long results (evicted at append), so the session has
/// rows in the messages, tool calls, ledger and evicted-content tables.
fn turn(n: usize) -> Vec<pb::Message> {
    let a = format!("t{n}a");
    let b = format!("t{n}b");
    let mut step = assistant("Looking.");
    step.tool_calls = [(&a, "ls src"), (&b, "pytest -x tests")]
        .into_iter()
        .map(|(id, command)| pb::ToolCall {
            id: id.clone(),
            name: "bash".into(),
            arguments_json: serde_json::json!({ "command": format!("{command} # {n}") })
                .to_string(),
        })
        .collect();
    vec![
        user(&format!("Turn {n}: fix the failing test.")),
        step,
        result(&a, &format!("file{n}.py\n").repeat(200)),
        result(
            &b,
            &format!("FAILED test_{n} - AssertionError\n").repeat(100),
        ),
        assistant(&format!("Turn {n} done.")),
    ]
}

/// A session with a log, a build, an idempotent append and a summary.
async fn filled(client: &mut Client, id: &str, retention: i64) {
    create(client, id, retained(retention)).await;
    for n in 0..6 {
        append(client, id, turn(n)).await.unwrap();
    }
    build(client, id, pb::OutputFormat::OpenaiChat)
        .await
        .unwrap();
    client
        .append_turn(pb::AppendTurnRequest {
            session_id: id.into(),
            messages: vec![user("One more thing.")],
            idempotency_key: format!("{id}-last"),
            ..Default::default()
        })
        .await
        .unwrap();
    client
        .compact(pb::CompactRequest {
            session_id: id.into(),
            mode: pb::CompactMode::Summarize as i32,
            wait: true,
            ..Default::default()
        })
        .await
        .unwrap();
}

/// The table's id of session `external_id`.
async fn session_row(pool: &PgPool, external_id: &str) -> i64 {
    sqlx::query_scalar("select id from sessions where external_id = $1")
        .bind(external_id)
        .fetch_one(pool)
        .await
        .unwrap()
}

/// Moves a session's last change two hours back.
async fn age(pool: &PgPool, external_id: &str) {
    sqlx::query(
        "update sessions set updated_at = now() - interval '2 hours' where external_id = $1",
    )
    .bind(external_id)
    .execute(pool)
    .await
    .unwrap();
}

/// Every (table, column) that holds a session's id: those whose foreign key points at
/// sessions, and every other `session_id` of the same type, so a table added without
/// the key is covered too. Not `events`: a deleted session's events are the stream's
/// record, pruned by the events retention. (A subagent's session_links row stays by
/// design, for tree streams; the sessions here are not subagents.)
async fn session_references(pool: &PgPool) -> Vec<(String, String)> {
    sqlx::query_as(
        "select c.conrelid::regclass::text, a.attname::text
         from pg_constraint c
         cross join unnest(c.conkey, c.confkey) as k(col, ref)
         join pg_attribute a on a.attrelid = c.conrelid and a.attnum = k.col
         join pg_attribute r on r.attrelid = c.confrelid and r.attnum = k.ref
         where c.contype = 'f' and c.confrelid = 'sessions'::regclass and r.attname = 'id'
         union
         select table_name::text, column_name::text
         from information_schema.columns
         where table_schema = 'public' and column_name = 'session_id'
             and data_type = 'bigint' and table_name <> 'events'
         order by 1, 2",
    )
    .fetch_all(pool)
    .await
    .unwrap()
}

/// The tables (and columns) holding rows of session row `id`, with their counts.
async fn rows_of(pool: &PgPool, id: i64) -> Vec<(String, i64)> {
    let mut found = Vec::new();
    for (table, column) in session_references(pool).await {
        let count: i64 =
            // Names read from the catalog, not from a client.
            sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
                "select count(*) from {table} where {column} = $1"
            )))
                .bind(id)
                .fetch_one(pool)
                .await
                .unwrap();
        if count > 0 {
            found.push((format!("{table}.{column}"), count));
        }
    }
    let sessions: i64 = sqlx::query_scalar("select count(*) from sessions where id = $1")
        .bind(id)
        .fetch_one(pool)
        .await
        .unwrap();
    if sessions > 0 {
        found.push(("sessions.id".into(), sessions));
    }
    found
}

async fn deletions(client: &mut Client) -> Streaming<pb::SubscribeEventsResponse> {
    let request = pb::SubscribeEventsRequest {
        kinds: vec![pb::EventKind::SessionDeleted as i32],
        ..Default::default()
    };
    let mut stream = subscribe(client, request).await;
    until_live(&mut stream).await;
    stream
}

/// How long the sweep may take to delete what expired (it runs every 100 ms here).
const PATIENCE: Duration = Duration::from_secs(60);

/// Reads SESSION_DELETED events until every session of `expected` has had one; fails
/// past the patience.
async fn until_deleted(stream: &mut Streaming<pb::SubscribeEventsResponse>, expected: &[&str]) {
    let waited = tokio::time::timeout(PATIENCE, deleted(stream, expected)).await;
    assert!(waited.is_ok(), "not every expired session was deleted");
}

async fn deleted(stream: &mut Streaming<pb::SubscribeEventsResponse>, expected: &[&str]) {
    let mut waiting: BTreeSet<String> = expected.iter().map(|s| s.to_string()).collect();
    while !waiting.is_empty() {
        let event = next_event(stream).await.expect("the stream ended");
        assert_eq!(event.kind, pb::EventKind::SessionDeleted as i32);
        assert!(
            waiting.remove(&event.session_id),
            "{} deleted, not one of {waiting:?}",
            event.session_id
        );
    }
}

#[sqlx::test]
async fn expired_sessions_go_with_every_row_and_their_event(pool: PgPool) {
    let server = TestServer::start(pool.clone()).await;
    let mut client = server.client.clone();
    filled(&mut client, "expired", HOUR).await;
    filled(&mut client, "no-retention", 0).await;
    filled(&mut client, "recent", HOUR).await;
    let expired = session_row(&pool, "expired").await;
    let before = rows_of(&pool, expired).await;
    assert!(
        before.len() > 5,
        "the session should have rows in many tables: {before:?}"
    );
    let mut stream = deletions(&mut client).await;
    age(&pool, "expired").await;
    age(&pool, "no-retention").await;

    until_deleted(&mut stream, &["expired"]).await;
    assert_eq!(rows_of(&pool, expired).await, Vec::<(String, i64)>::new());
    let status = client
        .get_session(pb::GetSessionRequest {
            session_id: "expired".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::NotFound);
    // The sweep that deleted "expired" saw the others and kept them: one without
    // retention (however old), one changed within its retention.
    for kept in ["no-retention", "recent"] {
        build(&mut client, kept, pb::OutputFormat::OpenaiChat)
            .await
            .unwrap();
    }
    // A session re-created under the expired one's name starts afresh.
    create(&mut client, "expired", retained(HOUR)).await;
    assert_eq!(session(&mut client, "expired").await.message_count, 0);
    server.stop().await;
}

#[sqlx::test]
async fn a_fork_keeps_what_it_shares_with_an_expired_source(pool: PgPool) {
    let server = TestServer::start(pool.clone()).await;
    let mut client = server.client.clone();
    filled(&mut client, "source", HOUR).await;
    let before = build(&mut client, "source", pb::OutputFormat::OpenaiChat)
        .await
        .unwrap();
    client
        .fork_session(pb::ForkSessionRequest {
            source_session_id: "source".into(),
            session_id: "fork".into(),
            // Without retention of its own to expire by.
            policy: Some(pb::Policy {
                retention_seconds: Some(0),
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .unwrap();
    let source = session_row(&pool, "source").await;
    let mut stream = deletions(&mut client).await;
    age(&pool, "source").await;

    until_deleted(&mut stream, &["source"]).await;
    let status = client
        .get_session(pb::GetSessionRequest {
            session_id: "source".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::NotFound);
    let forked = build(&mut client, "fork", pb::OutputFormat::OpenaiChat)
        .await
        .unwrap();
    assert_eq!(
        forked.messages, before.messages,
        "the fork lost shared messages"
    );
    // The fork's deletion takes the hidden source with it: nothing of it remains.
    client
        .delete_session(pb::DeleteSessionRequest {
            session_id: "fork".into(),
        })
        .await
        .unwrap();
    assert_eq!(rows_of(&pool, source).await, Vec::<(String, i64)>::new());
    server.stop().await;
}

#[sqlx::test]
async fn a_backlog_of_expired_sessions_goes_in_batches(pool: PgPool) {
    let server = TestServer::start(pool.clone()).await;
    let mut client = server.client.clone();
    let count = ctxd::jobs::RETENTION_BATCH as usize * 2 + 5;
    let names: Vec<String> = (0..count).map(|n| format!("s{n}")).collect();
    for name in &names {
        create(&mut client, name, retained(HOUR)).await;
        append(&mut client, name, vec![user("hello")])
            .await
            .unwrap();
    }
    let mut stream = deletions(&mut client).await;
    sqlx::query("update sessions set updated_at = now() - interval '2 hours'")
        .execute(&pool)
        .await
        .unwrap();
    let expected: Vec<&str> = names.iter().map(String::as_str).collect();
    until_deleted(&mut stream, &expected).await;
    let left: i64 = sqlx::query_scalar("select count(*) from sessions")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(left, 0);
    server.stop().await;
}
