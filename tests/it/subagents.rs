//! Subagent sessions: a child created for a parent's tool call, with its own policy;
//! FinishSession appending its answer as that call's result in one transaction
//! (`finish.rs`); GetSession's parent, children and subtree sums, Search and
//! SubscribeEvents scoped to one tree (`scope.rs`); and every bad input refused naming
//! its field, with nothing written.
mod finish;
mod scope;

use ctxd::pb;
use sqlx::PgPool;
use tonic::Code;

use crate::harness::*;

pub(super) async fn create_child(
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

pub(super) async fn finish(
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

pub(super) async fn get(client: &mut Client, id: &str) -> pb::GetSessionResponse {
    get_session(client, id, false).await
}

/// The field a refusal names: a BadRequest field or a PreconditionFailure subject.
pub(super) fn field_of(status: &tonic::Status) -> String {
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
pub(super) fn refused(result: Result<impl std::fmt::Debug, tonic::Status>) -> (Code, String) {
    let status = result.expect_err("refused");
    (status.code(), field_of(&status))
}

/// Roughly `count` tokens of distinct words.
pub(super) fn words(count: usize, salt: usize) -> String {
    (0..count)
        .map(|i| format!("v{}y{}", (i * 7 + salt) % 211, salt % 13))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One turn with a tool call and its result of about `tokens` tokens.
pub(super) async fn tool_turn(client: &mut Client, id: &str, turn: usize, tokens: usize) {
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
pub(super) async fn parent_calling(client: &mut Client, id: &str, calls: &[&str]) {
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
    for turn in 0..20 {
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

/// A fork of a subagent's session is a root session: no parent link, depth 0, open
/// even though its source was finished, and not among the parent's children; the child
/// keeps its link and stays finished.
#[sqlx::test]
async fn a_fork_of_a_subagent_session_is_a_root_session(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    parent_calling(&mut client, "root", &["a"]).await;
    create_child(&mut client, "child", "root", "a", window(8_000, 1_000))
        .await
        .unwrap();
    tool_turn(&mut client, "child", 1, 50).await;
    finish(&mut client, "child", "the build needs libssl", true)
        .await
        .unwrap();

    let forked = crate::fork::fork(&mut client, "child", None, "child-retry")
        .await
        .unwrap();
    assert_eq!(forked.parent_session_id, "");
    assert_eq!(forked.parent_tool_call_id, "");
    assert_eq!(forked.depth, 0);
    assert!(forked.finished_at.is_none(), "{forked:?}");
    assert_eq!(forked.forked_from_session_id, "child");
    append(&mut client, "child-retry", vec![user("try again")])
        .await
        .unwrap();

    let child = get(&mut client, "child").await.session.unwrap();
    assert_eq!(child.parent_session_id, "root");
    assert_eq!(child.depth, 1);
    assert!(child.finished_at.is_some());
    let root = get(&mut client, "root").await;
    let children: Vec<&str> = root
        .children
        .iter()
        .map(|c| c.session_id.as_str())
        .collect();
    assert_eq!(children, ["child"]);
    assert_eq!(root.subtree.unwrap().sessions, 2);
}
