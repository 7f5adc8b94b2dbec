//! RevertCompaction refuses bad input with the right status and a message naming the
//! field, and changes nothing: the session's version, its builds and its events stay.
use ctxd::pb;
use sqlx::PgPool;
use tonic::Code;

use super::{Snapshot, by_cursor, by_summary, of_kind, revert, session_events, snapshot};
use crate::events::{evicting_turn, small_policy};
use crate::harness::*;

/// What must not change: the version, the builds and aggregates, the events.
async fn state(client: &mut Client, id: &str) -> (i64, Snapshot, usize) {
    let version = session(client, id).await.version;
    let snapshot = snapshot(client, id).await;
    (version, snapshot, session_events(client, id).await.len())
}

/// A session with evicted outputs, a clearing and a summarization pass.
async fn compacted_session(client: &mut Client, id: &str) -> Vec<pb::Event> {
    let policy = pb::Policy {
        tool_output_protect_tokens: Some(100),
        ..small_policy()
    };
    create(client, id, policy).await;
    for turn in 0..4 {
        evicting_turn(client, id, turn).await;
    }
    for mode in [
        pb::CompactMode::ClearToolResults,
        pb::CompactMode::Summarize,
    ] {
        let done = client
            .compact(pb::CompactRequest {
                session_id: id.into(),
                mode: mode as i32,
                target_tokens: 200,
                wait: true,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        assert!(done.applied, "{mode:?}: {done:?}");
    }
    session_events(client, id).await
}

fn completed_summary(event: &pb::Event) -> i64 {
    match &event.detail {
        Some(pb::event::Detail::CompactionCompleted(done)) => done.summary_id,
        _ => panic!("{event:?}"),
    }
}

#[sqlx::test]
async fn bad_input_is_refused_naming_the_field_and_changes_nothing(pool: PgPool) {
    let store = ctxd::store::Store::new(pool.clone());
    let server = TestServer::start(pool.clone()).await;
    let mut client = server.client.clone();
    let events = compacted_session(&mut client, "s").await;
    let other = compacted_session(&mut client, "t").await;
    let evicted = of_kind(&events, pb::EventKind::OutputEvicted).remove(0);
    let started = of_kind(&events, pb::EventKind::CompactionStarted).remove(0);
    let clearing = of_kind(&events, pb::EventKind::ToolResultsCleared).remove(0);
    let pass = of_kind(&events, pb::EventKind::CompactionCompleted).remove(0);
    let others_clearing = of_kind(&other, pb::EventKind::ToolResultsCleared).remove(0);
    let others_pass = of_kind(&other, pb::EventKind::CompactionCompleted).remove(0);
    // A tenant stream's cursor (`<tx>.<id>`) of the other session's pass, as the table
    // holds it (a tenant stream delivers it once settled).
    let (tx, event_id): (i64, i64) =
        sqlx::query_as("select tx, id from events where external_id = 't' and session_seq = $1")
            .bind(others_pass.session_seq)
            .fetch_one(&pool)
            .await
            .unwrap();
    let others_tenant_cursor = format!("{tx}.{event_id}");
    // The other session's clearing as if committed by a server from before reverts:
    // no record.
    sqlx::query(
        "delete from compactions c using sessions s
         where c.session_id = s.id and s.external_id = 't' and c.event_seq = $1",
    )
    .bind(others_clearing.session_seq)
    .execute(&pool)
    .await
    .unwrap();
    let key_b = ctxd::auth::generate_key().unwrap();
    store
        .add_api_key("b", &ctxd::auth::hash_key(&key_b), "b")
        .await
        .unwrap();

    let before = state(&mut client, "s").await;
    let long = "7".repeat(300);
    let cases: Vec<(pb::RevertCompactionRequest, Code, &str)> = vec![
        (
            pb::RevertCompactionRequest {
                compaction: None,
                ..by_cursor("s", "", false)
            },
            Code::InvalidArgument,
            "compaction",
        ),
        (
            by_cursor("s", "", false),
            Code::InvalidArgument,
            "event_cursor",
        ),
        (
            by_cursor("s", "abc", false),
            Code::InvalidArgument,
            "event_cursor",
        ),
        (
            by_cursor("s", "0", false),
            Code::InvalidArgument,
            "event_cursor",
        ),
        (
            by_cursor("s", "-4", false),
            Code::InvalidArgument,
            "event_cursor",
        ),
        (
            by_cursor("s", "3.x", false),
            Code::InvalidArgument,
            "event_cursor",
        ),
        (
            by_cursor("s", &long, false),
            Code::InvalidArgument,
            "event_cursor",
        ),
        (
            by_summary("s", 0, false),
            Code::InvalidArgument,
            "summary_id",
        ),
        (
            by_summary("s", -9, false),
            Code::InvalidArgument,
            "summary_id",
        ),
        (
            by_cursor("", &pass.cursor, false),
            Code::InvalidArgument,
            "session_id",
        ),
        (
            by_cursor("nobody", &pass.cursor, false),
            Code::NotFound,
            "session",
        ),
        (
            pb::RevertCompactionRequest {
                expected_version: Some(-1),
                ..by_cursor("s", &pass.cursor, false)
            },
            Code::InvalidArgument,
            "expected_version",
        ),
        (
            pb::RevertCompactionRequest {
                expected_version: Some(before.0 + 5),
                ..by_cursor("s", &pass.cursor, false)
            },
            Code::Aborted,
            "version",
        ),
        // Not a compaction: eviction at append, a start, a cursor past the end.
        (
            by_cursor("s", &evicted.cursor, false),
            Code::InvalidArgument,
            "OUTPUT_EVICTED",
        ),
        (
            by_cursor("s", &started.cursor, false),
            Code::InvalidArgument,
            "COMPACTION_STARTED",
        ),
        (
            by_cursor("s", "99999", false),
            Code::NotFound,
            "event_cursor",
        ),
        (
            by_summary("s", 99_999_999, false),
            Code::NotFound,
            "summary_id",
        ),
        // Another session's compaction, by a summary it wrote or a tenant cursor.
        (
            by_summary("s", completed_summary(&others_pass), false),
            Code::NotFound,
            "summary_id",
        ),
        (
            by_cursor("s", &others_tenant_cursor, false),
            Code::NotFound,
            "event_cursor",
        ),
        // A compaction committed before compactions were recorded.
        (
            by_cursor("t", &others_clearing.cursor, false),
            Code::FailedPrecondition,
            "event_cursor",
        ),
    ];
    for (request, code, named) in cases {
        let what = format!("{request:?}");
        let status = revert(&mut client, request.clone()).await.unwrap_err();
        assert_eq!(status.code(), code, "{what}: {status:?}");
        assert!(
            status.message().contains(named),
            "{what}: {}",
            status.message()
        );
        assert!(status.message().len() < 400, "{what}: {}", status.message());
        if code == Code::InvalidArgument {
            let fields = violated_fields(&status);
            assert!(!fields.is_empty(), "{what}: no field violation");
        }
        // A dry run of the same is refused the same way.
        let dry = revert(
            &mut client,
            pb::RevertCompactionRequest {
                dry_run: true,
                ..request
            },
        )
        .await
        .unwrap_err();
        assert_eq!(dry.code(), code, "{what} (dry run)");
    }
    // A tenant stream's cursor names the compaction as its session's cursor does.
    let dry = revert(&mut client, by_cursor("t", &others_tenant_cursor, true))
        .await
        .unwrap();
    assert_eq!(
        dry.reverted.last().unwrap().event_cursor,
        others_pass.cursor
    );
    // Another tenant: the session does not exist for it.
    let mut keyed = tonic::Request::new(by_cursor("s", &pass.cursor, false));
    keyed
        .metadata_mut()
        .insert("authorization", format!("Bearer {key_b}").parse().unwrap());
    let status = client.revert_compaction(keyed).await.unwrap_err();
    assert_eq!(status.code(), Code::NotFound, "{status:?}");
    let after = state(&mut client, "s").await;
    assert_eq!(after.0, before.0, "version");
    super::assert_restored(&after.1, &before.1, "after bad input");
    assert_eq!(after.2, before.2, "events");

    // Once is all: a compaction already reverted (alone, or with an earlier one).
    let done = revert(&mut client, by_cursor("s", &clearing.cursor, false))
        .await
        .unwrap();
    assert!(
        done.reverted.len() >= 2,
        "the clearing and the passes after it: {done:?}"
    );
    let reverted = state(&mut client, "s").await;
    for request in [
        by_cursor("s", &clearing.cursor, false),
        by_cursor("s", &pass.cursor, true),
        by_summary("s", completed_summary(&pass), false),
    ] {
        let status = revert(&mut client, request.clone()).await.unwrap_err();
        assert_eq!(
            status.code(),
            Code::FailedPrecondition,
            "{request:?}: {status:?}"
        );
        assert!(
            status.message().contains("already reverted"),
            "{}",
            status.message()
        );
    }
    let after = state(&mut client, "s").await;
    assert_eq!(after.0, reverted.0);
    super::assert_restored(&after.1, &reverted.1, "after refused reverts");
    assert_eq!(after.2, reverted.2);
    server.stop().await;
}
