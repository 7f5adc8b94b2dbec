//! Subagent sessions: a child created for a parent's tool call, with its own policy;
//! FinishSession appending its answer as that call's result in one transaction;
//! GetSession's parent, children and subtree sums; Search and SubscribeEvents scoped to
//! one tree; and every bad input refused naming its field, with nothing written.
use std::collections::BTreeSet;

use ctxd::pb;
use sqlx::PgPool;
use tonic::Code;

use crate::events::{evicting_turn, next_event, small_policy, until_live};
use crate::harness::*;

async fn create_child(
    client: &mut Client,
    id: &str,
    parent: &str,
    call: &str,
    policy: pb::Policy,
) -> Result<pb::Session, tonic::Status> {
    client
        .create_session(pb::CreateSessionRequest {
            session_id: id.into(),
            policy: Some(policy),
            parent_session_id: parent.into(),
            parent_tool_call_id: call.into(),
            ..Default::default()
        })
        .await
        .map(|response| response.into_inner().session.unwrap())
}

async fn finish(
    client: &mut Client,
    id: &str,
    answer: &str,
    append_to_parent: bool,
) -> Result<pb::FinishSessionResponse, tonic::Status> {
    client
        .finish_session(pb::FinishSessionRequest {
            session_id: id.into(),
            final_answer: answer.into(),
            append_to_parent,
        })
        .await
        .map(tonic::Response::into_inner)
}

async fn get(client: &mut Client, id: &str) -> pb::GetSessionResponse {
    client
        .get_session(pb::GetSessionRequest {
            session_id: id.into(),
            include_view: false,
        })
        .await
        .unwrap()
        .into_inner()
}

/// The field a refusal names: a BadRequest field or a PreconditionFailure subject.
fn field_of(status: &tonic::Status) -> String {
    use tonic_types::StatusExt;
    let details = status.get_error_details();
    if let Some(bad) = details.bad_request() {
        return bad.field_violations[0].field.clone();
    }
    if let Some(failed) = details.precondition_failure() {
        return failed.violations[0].subject.clone();
    }
    panic!("no field named in {status:?}")
}

/// A code and the field its status names.
fn refused(result: Result<impl std::fmt::Debug, tonic::Status>) -> (Code, String) {
    let status = result.expect_err("refused");
    (status.code(), field_of(&status))
}

/// Roughly `count` tokens of distinct words.
fn words(count: usize, salt: usize) -> String {
    (0..count)
        .map(|i| format!("v{}y{}", (i * 7 + salt) % 211, salt % 13))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One turn with a tool call and its result of about `tokens` tokens.
async fn tool_turn(client: &mut Client, id: &str, turn: usize, tokens: usize) {
    let call_id = format!("{id}-t{turn}");
    append(
        client,
        id,
        vec![
            user(&format!("step {turn}: read the next file")),
            call(&[&call_id]),
            result(&call_id, &words(tokens, turn)),
            assistant(&format!("read {turn}")),
        ],
    )
    .await
    .unwrap();
}

/// A parent whose last step calls `calls`, still unanswered.
async fn parent_calling(client: &mut Client, id: &str, calls: &[&str]) {
    create(client, id, window(200_000, 8_000)).await;
    append(
        client,
        id,
        vec![user("Find out why the build fails."), call(calls)],
    )
    .await
    .unwrap();
}

#[sqlx::test]
async fn a_child_with_a_smaller_window_compacts_alone_and_its_answer_is_the_tool_result(
    pool: PgPool,
) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    create(&mut client, "lead", window(200_000, 8_000)).await;
    // The parent holds more than the child's whole window, far under its own.
    for turn in 0..12 {
        tool_turn(&mut client, "lead", turn, 120).await;
    }
    append(
        &mut client,
        "lead",
        vec![user("Find out why the build fails."), call(&["spawn-1"])],
    )
    .await
    .unwrap();
    let child_policy = pb::Policy {
        fresh_tail_messages: Some(4),
        leaf_chunk_messages: Some(4),
        ..window(4_000, 500)
    };
    let child = create_child(&mut client, "lead.sub", "lead", "spawn-1", child_policy)
        .await
        .unwrap();
    assert_eq!(
        (
            child.parent_session_id.as_str(),
            child.parent_tool_call_id.as_str(),
            child.depth
        ),
        ("lead", "spawn-1", 1)
    );
    assert_eq!(
        child.policy.unwrap().context_window_tokens,
        Some(4_000),
        "the child keeps its own policy"
    );
    for turn in 0..12 {
        tool_turn(&mut client, "lead.sub", turn, 120).await;
        let built = build(&mut client, "lead.sub", pb::OutputFormat::Neutral)
            .await
            .unwrap();
        let budget = built.budget.unwrap();
        assert_ne!(budget.status, pb::BudgetStatus::Over as i32);
        assert!(budget.breakdown.unwrap().total_tokens <= 4_000 - 500);
        assert_provider_valid(&built.messages);
    }
    let lead_built = build(&mut client, "lead", pb::OutputFormat::Neutral)
        .await
        .unwrap();
    assert_eq!(
        lead_built.first_seq, 1,
        "the parent's view starts at its start"
    );
    assert!(lead_built.summaries.is_empty());
    let child_stats = session(&mut client, "lead.sub").await.compaction.unwrap();
    let lead_before = session(&mut client, "lead").await;
    let lead_stats = lead_before.compaction.unwrap();
    assert!(
        child_stats.summaries_written + child_stats.cleared_messages > 0,
        "the child compacted in its own window: {child_stats:?}"
    );
    assert_eq!(
        (lead_stats.summaries_written, lead_stats.cleared_messages),
        (0, 0),
        "the parent did not"
    );

    let answer = "The build fails because src/lib.rs lacks a semicolon at line 12.";
    let child_before = session(&mut client, "lead.sub").await;
    let finished = finish(&mut client, "lead.sub", answer, true).await.unwrap();
    let appended = finished.parent_append.unwrap();
    let result_seq = lead_before.message_count + 1;
    assert_eq!(appended.seqs, [result_seq]);
    assert_eq!(appended.version, lead_before.version + 1);
    assert_eq!(finished.version, child_before.version + 1);
    assert_eq!(
        (
            finished.parent_session_id.as_str(),
            finished.parent_tool_call_id.as_str()
        ),
        ("lead", "spawn-1")
    );
    let lead_after = session(&mut client, "lead").await;
    assert_eq!(lead_after.version, appended.version);
    assert_eq!(lead_after.message_count, result_seq);
    assert!(session(&mut client, "lead.sub").await.finished_at.is_some());

    // The parent's request now carries the answer as the tool call's result.
    let neutral = build(&mut client, "lead", pb::OutputFormat::Neutral)
        .await
        .unwrap();
    assert_provider_valid(&neutral.messages);
    let last = neutral.messages.last().unwrap();
    assert_eq!(
        (last.role, last.tool_call_id.as_str(), last.content.as_str()),
        (pb::Role::Tool as i32, "spawn-1", answer)
    );
    assert_eq!(
        last.metadata
            .get("ctxd.subagent_session_id")
            .map(String::as_str),
        Some("lead.sub")
    );
    let body = json_body(&mut client, "lead", pb::OutputFormat::OpenaiChat).await;
    let messages = body["messages"].as_array().unwrap();
    let tail = &messages[messages.len() - 2..];
    assert_eq!(tail[0]["tool_calls"][0]["id"], "spawn-1");
    assert_eq!(tail[1]["role"], "tool");
    assert_eq!(tail[1]["tool_call_id"], "spawn-1");
    assert_eq!(tail[1]["content"], answer);
    server.stop().await;
}

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
async fn bad_links_are_refused_naming_the_field_and_nothing_is_created(pool: PgPool) {
    let store = ctxd::store::Store::new(pool.clone());
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    parent_calling(&mut client, "root", &["a", "b"]).await;
    append(&mut client, "root", vec![result("b", "answered")])
        .await
        .unwrap();
    let policy = || window(8_000, 1_000);

    let mut cases: Vec<(&str, &str, &str, Code, &str)> = vec![
        // (new id, parent, call, code, field)
        ("n1", "", "a", Code::InvalidArgument, "parent_session_id"),
        (
            "n2",
            "root",
            "",
            Code::InvalidArgument,
            "parent_tool_call_id",
        ),
        ("n3", "n3", "a", Code::InvalidArgument, "parent_session_id"),
        (
            "n4",
            "bad id!",
            "a",
            Code::InvalidArgument,
            "parent_session_id",
        ),
        (
            "n5",
            "root",
            "zzz",
            Code::InvalidArgument,
            "parent_tool_call_id",
        ),
        (
            "n6",
            "root",
            "b",
            Code::InvalidArgument,
            "parent_tool_call_id",
        ),
    ];
    let long_call = "c".repeat(513);
    cases.push((
        "n7",
        "root",
        &long_call,
        Code::InvalidArgument,
        "parent_tool_call_id",
    ));
    for (id, parent, call_id, code, field) in cases {
        let status = create_child(&mut client, id, parent, call_id, policy())
            .await
            .unwrap_err();
        assert_eq!(
            (status.code(), field_of(&status).as_str()),
            (code, field),
            "{id}: {status:?}"
        );
        assert_eq!(
            client
                .get_session(pb::GetSessionRequest {
                    session_id: id.into(),
                    include_view: false,
                })
                .await
                .unwrap_err()
                .code(),
            Code::NotFound,
            "{id} was not created"
        );
    }

    // An unknown parent and another tenant's are the same NOT_FOUND, naming the field.
    let key = ctxd::auth::generate_key().unwrap();
    store
        .add_api_key("other", &ctxd::auth::hash_key(&key), "other")
        .await
        .unwrap();
    let keyed = |message: pb::CreateSessionRequest| {
        let mut request = tonic::Request::new(message);
        request
            .metadata_mut()
            .insert("authorization", format!("Bearer {key}").parse().unwrap());
        request
    };
    let mut theirs = client.clone();
    theirs
        .create_session(keyed(pb::CreateSessionRequest {
            session_id: "theirs".into(),
            ..Default::default()
        }))
        .await
        .unwrap();
    let other_tenant = create_child(&mut client, "n8", "theirs", "a", policy())
        .await
        .unwrap_err();
    let unknown = create_child(&mut client, "n8", "nobody", "a", policy())
        .await
        .unwrap_err();
    assert_eq!(other_tenant.code(), Code::NotFound);
    assert_eq!(unknown.code(), Code::NotFound);
    assert_eq!(
        other_tenant.message().replace("theirs", "X"),
        unknown.message().replace("nobody", "X"),
        "another tenant's parent is indistinguishable from no parent"
    );
    assert!(
        unknown.message().starts_with("parent_session_id: "),
        "{unknown:?}"
    );
    // ...and from the other side too: our root is no parent of theirs.
    let status = theirs
        .create_session(keyed(pb::CreateSessionRequest {
            session_id: "their-child".into(),
            parent_session_id: "root".into(),
            parent_tool_call_id: "a".into(),
            ..Default::default()
        }))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::NotFound);

    // Depth: a chain 8 levels below the root takes no child.
    let mut parent = "root".to_string();
    for level in 1..=8 {
        let id = format!("level{level}");
        let call_id = format!("go{level}");
        let spawned_by = if level == 1 { "a" } else { call_id.as_str() };
        create_child(&mut client, &id, &parent, spawned_by, policy())
            .await
            .unwrap();
        let next_call = format!("go{}", level + 1);
        append(
            &mut client,
            &id,
            vec![user("delegate"), call(&[&next_call])],
        )
        .await
        .unwrap();
        assert_eq!(session(&mut client, &id).await.depth, level);
        parent = id;
    }
    let status = create_child(&mut client, "level9", "level8", "go9", policy())
        .await
        .unwrap_err();
    assert_eq!(
        (status.code(), field_of(&status).as_str()),
        (Code::FailedPrecondition, "parent_session_id"),
        "{status:?}"
    );
    assert!(status.message().contains('8'), "{status:?}");
    assert_eq!(get(&mut client, "level8").await.children_total, 0);

    // No cycle: a link is made only for a new session, so a session can never be
    // linked under its own descendant (the id is taken: ALREADY_EXISTS), and the
    // existing root stays a root.
    let status = create_child(&mut client, "root", "level7", "go8", policy())
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::AlreadyExists, "{status:?}");
    let root = session(&mut client, "root").await;
    assert_eq!((root.parent_session_id.as_str(), root.depth), ("", 0));
    assert_eq!(get(&mut client, "level7").await.children_total, 1);

    // A finished parent takes no children.
    parent_calling(&mut client, "done", &["d1"]).await;
    finish(&mut client, "done", "", false).await.unwrap();
    let status = create_child(&mut client, "n9", "done", "d1", policy())
        .await
        .unwrap_err();
    assert_eq!(
        (status.code(), field_of(&status).as_str()),
        (Code::FailedPrecondition, "parent_session_id")
    );
    assert!(status.message().contains("finished"), "{status:?}");
    assert_eq!(get(&mut client, "done").await.children_total, 0);
    assert_eq!(get(&mut client, "root").await.children_total, 1);
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

#[sqlx::test]
async fn get_session_lists_parent_and_children_and_sums_the_subtree(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    parent_calling(&mut client, "r", &["ca", "cb"]).await;
    create_child(&mut client, "a", "r", "ca", window(8_000, 1_000))
        .await
        .unwrap();
    create_child(&mut client, "b", "r", "cb", window(8_000, 1_000))
        .await
        .unwrap();
    append(
        &mut client,
        "a",
        vec![user("split the work"), call(&["ca1"])],
    )
    .await
    .unwrap();
    create_child(&mut client, "a1", "a", "ca1", window(8_000, 1_000))
        .await
        .unwrap();
    create(&mut client, "stranger", window(8_000, 1_000)).await;
    // Each session reports usage of its own model calls.
    for (index, id) in ["r", "a", "b", "a1", "stranger"].iter().enumerate() {
        let n = index as i64 + 1;
        client
            .append_turn(pb::AppendTurnRequest {
                session_id: id.to_string(),
                messages: vec![user(&words(50 * n as usize, index)), assistant("noted")],
                usage: Some(pb::Usage {
                    input_tokens: 1_000 * n,
                    output_tokens: 100 * n,
                    cached_input_tokens: 10 * n,
                }),
                ..Default::default()
            })
            .await
            .unwrap();
    }
    finish(&mut client, "b", "", false).await.unwrap();

    let r = get(&mut client, "r").await;
    assert_eq!(
        r.children
            .iter()
            .map(|c| (
                c.session_id.as_str(),
                c.parent_tool_call_id.as_str(),
                c.finished,
                c.finished_at.is_some()
            ))
            .collect::<Vec<_>>(),
        [("a", "ca", false, false), ("b", "cb", true, true)]
    );
    assert_eq!(r.children_total, 2);
    let rs = r.session.unwrap();
    assert_eq!((rs.parent_session_id.as_str(), rs.depth), ("", 0));
    let reader = client.clone();
    let log_tokens = |ids: &[&str]| {
        let mut client = reader.clone();
        let ids: Vec<String> = ids.iter().map(|id| id.to_string()).collect();
        async move {
            let mut sum = 0;
            for id in ids {
                sum += session(&mut client, &id).await.log_tokens;
            }
            sum
        }
    };
    // r=1, a=2, b=3, a1=4 (stranger=5 is not in the tree).
    let expected = |ns: &[i64], log_tokens: i64| pb::SubtreeTotals {
        sessions: ns.len() as i64,
        log_tokens,
        usage_total: Some(pb::Usage {
            input_tokens: ns.iter().map(|n| 1_000 * n).sum(),
            output_tokens: ns.iter().map(|n| 100 * n).sum(),
            cached_input_tokens: ns.iter().map(|n| 10 * n).sum(),
        }),
    };
    assert_eq!(
        r.subtree.unwrap(),
        expected(&[1, 2, 3, 4], log_tokens(&["r", "a", "b", "a1"]).await)
    );
    let a = get(&mut client, "a").await;
    let a_session = a.session.unwrap();
    assert_eq!(
        (
            a_session.parent_session_id.as_str(),
            a_session.parent_tool_call_id.as_str(),
            a_session.depth
        ),
        ("r", "ca", 1)
    );
    assert_eq!(
        a.children
            .iter()
            .map(|c| c.session_id.as_str())
            .collect::<Vec<_>>(),
        ["a1"]
    );
    assert_eq!(
        a.subtree.unwrap(),
        expected(&[2, 4], log_tokens(&["a", "a1"]).await)
    );
    let a1 = get(&mut client, "a1").await;
    assert_eq!(a1.session.unwrap().depth, 2);
    assert!(a1.children.is_empty());
    assert_eq!(
        a1.subtree.unwrap(),
        expected(&[4], log_tokens(&["a1"]).await)
    );

    // Deleting the middle: a1 loses its parent but stays in r's tree.
    client
        .delete_session(pb::DeleteSessionRequest {
            session_id: "a".into(),
        })
        .await
        .unwrap();
    let r = get(&mut client, "r").await;
    assert_eq!(
        r.children
            .iter()
            .map(|c| c.session_id.as_str())
            .collect::<Vec<_>>(),
        ["b"]
    );
    assert_eq!(
        r.subtree.unwrap(),
        expected(&[1, 3, 4], log_tokens(&["r", "b", "a1"]).await)
    );
    let a1 = session(&mut client, "a1").await;
    assert_eq!((a1.parent_session_id.as_str(), a1.depth), ("", 2));
    server.stop().await;
}

/// Two trees and a stranger: r1 ← c1 ← g1 and r2 ← c2.
async fn two_trees(client: &mut Client) {
    for root in ["r1", "r2"] {
        create(client, root, small_policy()).await;
        append(
            client,
            root,
            vec![user("delegate"), call(&[&format!("{root}-x")])],
        )
        .await
        .unwrap();
    }
    create_child(client, "c1", "r1", "r1-x", small_policy())
        .await
        .unwrap();
    create_child(client, "c2", "r2", "r2-x", small_policy())
        .await
        .unwrap();
    append(
        client,
        "c1",
        vec![user("delegate"), call(&["c1-x", "c1-y"])],
    )
    .await
    .unwrap();
    create_child(client, "g1", "c1", "c1-x", small_policy())
        .await
        .unwrap();
    create(client, "stranger", small_policy()).await;
}

#[sqlx::test]
async fn search_scoped_to_a_tree_finds_exactly_that_tree(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    two_trees(&mut client).await;
    for id in ["r1", "c1", "g1", "r2", "c2", "stranger"] {
        append(
            &mut client,
            id,
            vec![user(&format!("the zebra crossing in {id}"))],
        )
        .await
        .unwrap();
    }
    let searcher = client.clone();
    let search = |session_id: &str, tree: &str| {
        let mut client = searcher.clone();
        let request = pb::SearchRequest {
            session_id: session_id.into(),
            tree_root_session_id: tree.into(),
            query: "zebra".into(),
            limit: 100,
            ..Default::default()
        };
        async move { client.search(request).await.map(|r| r.into_inner()) }
    };
    let found = |response: pb::SearchResponse| -> BTreeSet<String> {
        response
            .hits
            .into_iter()
            .map(|hit| hit.session_id)
            .collect()
    };
    let set = |ids: &[&str]| ids.iter().map(|id| id.to_string()).collect::<BTreeSet<_>>();
    assert_eq!(
        found(search("", "r1").await.unwrap()),
        set(&["r1", "c1", "g1"])
    );
    assert_eq!(found(search("", "c1").await.unwrap()), set(&["c1", "g1"]));
    assert_eq!(found(search("", "r2").await.unwrap()), set(&["r2", "c2"]));
    assert_eq!(
        found(search("", "stranger").await.unwrap()),
        set(&["stranger"])
    );
    assert_eq!(found(search("", "").await.unwrap()).len(), 6);
    assert_eq!(
        refused(search("r1", "r1").await),
        (Code::InvalidArgument, "tree_root_session_id".into())
    );
    assert_eq!(
        refused(search("", "bad id!").await),
        (Code::InvalidArgument, "tree_root_session_id".into())
    );
    let unknown = search("", "nobody").await.unwrap_err();
    assert_eq!(unknown.code(), Code::NotFound);
    assert!(
        unknown.message().starts_with("tree_root_session_id: "),
        "{unknown:?}"
    );
    server.stop().await;
}

#[sqlx::test]
async fn a_tree_stream_delivers_exactly_that_trees_events(pool: PgPool) {
    let server = TestServer::start(pool.clone()).await;
    let mut client = server.client.clone();
    two_trees(&mut client).await;
    // A backlog in every session.
    for (turn, id) in ["r1", "c1", "g1", "r2", "c2", "stranger"]
        .iter()
        .enumerate()
    {
        evicting_turn(&mut client, id, turn).await;
    }
    let subscriber = client.clone();
    let subscribe = |tree: &str| {
        let mut client = subscriber.clone();
        let request = pb::SubscribeEventsRequest {
            tree_root_session_id: tree.into(),
            heartbeat_interval_ms: 200,
            ..Default::default()
        };
        async move { client.subscribe_events(request).await }
    };
    let mut stream = subscribe("r1").await.unwrap().into_inner();
    let mut seen = until_live(&mut stream).await;
    let sessions = |events: &[pb::Event]| -> BTreeSet<String> {
        events.iter().map(|e| e.session_id.clone()).collect()
    };
    assert_eq!(
        sessions(&seen),
        ["c1", "g1", "r1"].map(String::from).into(),
        "the backlog is the tree's"
    );

    // Live: the other tree and the stranger first, then a new grandchild, g1's
    // deletion and, last, an event of the new one; the tree stream must see exactly
    // the tree's, the new member and the deleted one included.
    for (turn, id) in ["r2", "c2", "stranger"].iter().enumerate() {
        evicting_turn(&mut client, id, 10 + turn).await;
    }
    create_child(&mut client, "g2", "c1", "c1-y", small_policy())
        .await
        .unwrap();
    evicting_turn(&mut client, "r1", 20).await;
    client
        .delete_session(pb::DeleteSessionRequest {
            session_id: "g1".into(),
        })
        .await
        .unwrap();
    evicting_turn(&mut client, "g2", 21).await;
    // Exactly the tree's events in the table, in the table's (tx, id) order.
    let expected: Vec<(i64, String)> = sqlx::query_as(
        "select id, external_id from events
         where external_id in ('r1', 'c1', 'g1', 'g2') order by tx, id",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    // Anything else the stream let through would come before the last of them.
    while seen.len() < expected.len() {
        seen.push(next_event(&mut stream).await.unwrap());
    }
    let delivered: Vec<(i64, String)> = seen
        .iter()
        .map(|e| (e.event_id, e.session_id.clone()))
        .collect();
    assert_eq!(delivered, expected);
    assert!(
        seen.iter()
            .any(|e| e.session_id == "g1" && e.kind == pb::EventKind::SessionDeleted as i32),
        "a deleted member's deletion is the tree's"
    );

    // Resuming from a cursor stays in the tree: the stream's next event is g2's.
    let cursor = seen[seen.len() - 2].cursor.clone();
    let mut resumed = client
        .subscribe_events(pb::SubscribeEventsRequest {
            tree_root_session_id: "c1".into(),
            after: cursor,
            heartbeat_interval_ms: 200,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let again = until_live(&mut resumed).await;
    assert_eq!(
        again.iter().map(|e| e.event_id).collect::<Vec<_>>(),
        [seen.last().unwrap().event_id]
    );

    let both = client
        .subscribe_events(pb::SubscribeEventsRequest {
            session_id: "r1".into(),
            tree_root_session_id: "r1".into(),
            ..Default::default()
        })
        .await;
    assert_eq!(
        refused(both.map(|_| ())),
        (Code::InvalidArgument, "tree_root_session_id".into())
    );
    match subscribe("nobody").await {
        Err(status) => assert_eq!(status.code(), Code::NotFound),
        Ok(_) => panic!("a tree stream of no session"),
    }
    server.stop().await;
}
