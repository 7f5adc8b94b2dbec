//! FinishSession: one transaction with the parent's append, a finished session refusing
//! appends, events on both sides, and every bad finish changing nothing.
use ctxd::pb;
use sqlx::PgPool;
use tonic::Code;

use super::{create_child, field_of, finish, get, parent_calling, refused};
use crate::events::until_live;
use crate::harness::*;

#[sqlx::test]
async fn finishing_is_one_transaction_and_a_finished_session_takes_no_appends(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    parent_calling(&mut client, "p", &["c1", "c2"]).await;
    create_child(&mut client, "k1", "p", "c1", window(8_000, 1_000))
        .await
        .unwrap();
    create_child(&mut client, "k2", "p", "c2", window(8_000, 1_000))
        .await
        .unwrap();
    append(&mut client, "k1", vec![user("look at the build log")])
        .await
        .unwrap();

    // The parent answered c2 itself: k2's answer is refused, and k2 is not finished.
    append(&mut client, "p", vec![result("c2", "done by hand")])
        .await
        .unwrap();
    let (p_before, k2_before) = (
        session(&mut client, "p").await,
        session(&mut client, "k2").await,
    );
    assert_eq!(
        refused(finish(&mut client, "k2", "late answer", true).await),
        (Code::FailedPrecondition, "append_to_parent".into())
    );
    let (p_after, k2_after) = (
        session(&mut client, "p").await,
        session(&mut client, "k2").await,
    );
    assert_eq!(
        (p_after.version, p_after.message_count),
        (p_before.version, p_before.message_count)
    );
    assert_eq!(k2_after.version, k2_before.version);
    assert!(k2_after.finished_at.is_none(), "nothing changed");

    let k1_before = session(&mut client, "k1").await;
    let finished = finish(&mut client, "k1", "the log says: disk full", true)
        .await
        .unwrap();
    let result_seq = finished.parent_append.unwrap().seqs[0];
    assert_eq!(result_seq, p_before.message_count + 1);
    let k1 = session(&mut client, "k1").await;
    assert_eq!(k1.version, k1_before.version + 1);
    assert!(k1.finished_at.is_some());

    // A finished session takes no appends, of either kind, and is not finished twice.
    let status = append(&mut client, "k1", vec![user("one more thing")])
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::FailedPrecondition, "{status:?}");
    assert_eq!(field_of(&status), "session_id");
    assert!(status.message().contains("finished"), "{status:?}");
    let native = append_native(
        &mut client,
        "k1",
        pb::OutputFormat::OpenaiChat,
        "",
        r#"[{"role": "user", "content": "and another"}]"#,
    )
    .await;
    assert_eq!(
        refused(native),
        (Code::FailedPrecondition, "session_id".into())
    );
    assert_eq!(
        refused(finish(&mut client, "k1", "", false).await),
        (Code::FailedPrecondition, "session_id".into())
    );
    assert_eq!(session(&mut client, "k1").await.version, k1.version);
    // Reading and building a finished session still work.
    build(&mut client, "k1", pb::OutputFormat::Neutral)
        .await
        .unwrap();

    // k2 ends without an answer: the parent hears of it, its log does not change.
    let p_before = session(&mut client, "p").await;
    let ended = finish(&mut client, "k2", "", false).await.unwrap();
    assert!(ended.parent_append.is_none());
    assert_eq!(ended.parent_session_id, "p");
    let p_after = session(&mut client, "p").await;
    assert_eq!(
        (p_after.version, p_after.message_count),
        (p_before.version, p_before.message_count)
    );

    // SESSION_FINISHED on both sides, in each session's own stream.
    let finished_events = |events: Vec<pb::Event>| -> Vec<pb::SessionFinished> {
        events
            .into_iter()
            .filter_map(|event| match event.detail {
                Some(pb::event::Detail::SessionFinished(finished)) => {
                    assert_eq!(event.kind, pb::EventKind::SessionFinished as i32);
                    Some(finished)
                }
                _ => None,
            })
            .collect()
    };
    let on = |child: &str, result_seq: i64| pb::SessionFinished {
        child_session_id: child.into(),
        parent_session_id: "p".into(),
        parent_tool_call_id: if child == "k1" { "c1" } else { "c2" }.into(),
        result_seq,
    };
    let mut stream = client
        .subscribe_events(pb::SubscribeEventsRequest {
            session_id: "p".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        finished_events(until_live(&mut stream).await),
        [on("k1", result_seq), on("k2", 0)]
    );
    let mut stream = client
        .subscribe_events(pb::SubscribeEventsRequest {
            session_id: "k1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let events = until_live(&mut stream).await;
    assert_eq!(events.last().unwrap().session_version, k1.version);
    assert_eq!(finished_events(events), [on("k1", result_seq)]);

    let children = get(&mut client, "p").await.children;
    assert_eq!(
        children
            .iter()
            .map(|c| (
                c.session_id.as_str(),
                c.parent_tool_call_id.as_str(),
                c.finished
            ))
            .collect::<Vec<_>>(),
        [("k1", "c1", true), ("k2", "c2", true)]
    );
    server.stop().await;
}
#[sqlx::test]
async fn bad_finishes_are_refused_naming_the_field_and_change_nothing(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    parent_calling(&mut client, "p", &["c1", "c2"]).await;
    create(&mut client, "lone", window(8_000, 1_000)).await;
    create_child(&mut client, "k", "p", "c1", window(8_000, 1_000))
        .await
        .unwrap();
    create_child(&mut client, "orphan", "p", "c2", window(8_000, 1_000))
        .await
        .unwrap();
    let before: Vec<pb::Session> = futures::future::join_all(["p", "k", "lone"].map(|id| {
        let mut client = client.clone();
        async move { session(&mut client, id).await }
    }))
    .await;

    let cases = [
        (
            "k",
            "an answer",
            false,
            Code::InvalidArgument,
            "final_answer",
        ),
        ("k", "", true, Code::InvalidArgument, "final_answer"),
        (
            "k",
            "bad\0answer",
            true,
            Code::InvalidArgument,
            "final_answer",
        ),
        (
            "lone",
            "an answer",
            true,
            Code::FailedPrecondition,
            "append_to_parent",
        ),
        ("no such!", "", false, Code::InvalidArgument, "session_id"),
    ];
    for (id, answer, append_to_parent, code, field) in cases {
        let status = finish(&mut client, id, answer, append_to_parent)
            .await
            .unwrap_err();
        assert_eq!(
            (status.code(), field_of(&status).as_str()),
            (code, field),
            "{id}: {status:?}"
        );
    }
    let oversized = "x".repeat(1024 * 1024 + 1);
    assert_eq!(
        refused(finish(&mut client, "k", &oversized, true).await),
        (Code::InvalidArgument, "final_answer".into())
    );
    assert_eq!(
        finish(&mut client, "nobody", "", false)
            .await
            .unwrap_err()
            .code(),
        Code::NotFound
    );
    for (id, was) in ["p", "k", "lone"].iter().zip(&before) {
        let now = session(&mut client, id).await;
        assert_eq!(
            (now.version, now.message_count, now.finished_at.is_some()),
            (was.version, was.message_count, false),
            "{id} unchanged"
        );
    }

    // The parent deleted: the child may end, but its answer has nowhere to go.
    client
        .delete_session(pb::DeleteSessionRequest {
            session_id: "p".into(),
        })
        .await
        .unwrap();
    let orphan = session(&mut client, "orphan").await;
    assert_eq!(
        (
            orphan.parent_session_id.as_str(),
            orphan.parent_tool_call_id.as_str(),
            orphan.depth
        ),
        ("", "c2", 1),
        "the parent is gone, the link's call and depth remain"
    );
    assert_eq!(
        refused(finish(&mut client, "orphan", "an answer", true).await),
        (Code::FailedPrecondition, "append_to_parent".into())
    );
    assert!(session(&mut client, "orphan").await.finished_at.is_none());
    let ended = finish(&mut client, "orphan", "", false).await.unwrap();
    assert_eq!(ended.parent_session_id, "");
    // A session named as the deleted parent was is not its parent.
    parent_calling(&mut client, "p", &["c1"]).await;
    assert_eq!(
        refused(finish(&mut client, "k", "an answer", true).await),
        (Code::FailedPrecondition, "append_to_parent".into())
    );
    assert_eq!(session(&mut client, "p").await.message_count, 2);
    server.stop().await;
}
