//! Recall through the real server: with the policy's recall_tools, BuildMessages offers
//! ctxd_recall_search and ctxd_recall_expand after the client's tools (counted in the
//! budget, in every format), and AnswerRecall answers a model's call to them: a search
//! finds a tool result the view no longer shows whole, an expand reads it back within
//! its cap, bad arguments come back as an error result (the session otherwise
//! unchanged), a retry is the first answer, and compaction clears recall answers first.
use ctxd::pb;
use serde_json::{Value, json};
use sqlx::PgPool;
use tonic::Code;

use crate::harness::*;

/// The tool result the model will need again: evicted at once (too big), then searched.
fn big_output() -> String {
    let mut text = String::from("collected 240 items\n");
    for n in 0..400 {
        text.push_str(&format!("tests/test_models.py::test_case_{n:03} PASSED\n"));
    }
    text.push_str(
        "tests/test_views.py::test_unicode_slug FAILED - AssertionError: zebrafish-slug\n",
    );
    text
}

fn policy(recall: bool) -> pb::Policy {
    pb::Policy {
        eviction_threshold_tokens: Some(300),
        recall_tools: Some(recall),
        ..window(16_000, 2_000)
    }
}

fn recall_call(id: &str, tool: &str, arguments: Value) -> pb::Message {
    pb::Message {
        role: pb::Role::Assistant as i32,
        tool_calls: vec![pb::ToolCall {
            id: id.into(),
            name: tool.into(),
            arguments_json: arguments.to_string(),
        }],
        ..Default::default()
    }
}

async fn answer(
    client: &mut Client,
    session: &str,
    call: &str,
) -> Result<pb::AppendTurnResponse, tonic::Status> {
    client
        .answer_recall(pb::AnswerRecallRequest {
            session_id: session.into(),
            tool_call_id: call.into(),
        })
        .await
        .map(tonic::Response::into_inner)
}

async fn message(client: &mut Client, session: &str, seq: i64) -> pb::Message {
    let mut expanded = client
        .expand(pb::ExpandRequest {
            session_id: session.into(),
            target: Some(pb::expand_request::Target::List(pb::SeqList {
                seqs: vec![seq],
            })),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    expanded.messages.remove(0)
}

#[sqlx::test]
async fn the_model_searches_then_expands_what_compaction_took(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    create(&mut client, "r", policy(true)).await;
    create(&mut client, "plain", policy(false)).await;

    // The tools: the client's, then ctxd's two, in the request's format and budget.
    let on = build(&mut client, "r", pb::OutputFormat::AnthropicMessages)
        .await
        .unwrap();
    let off = build(&mut client, "plain", pb::OutputFormat::AnthropicMessages)
        .await
        .unwrap();
    let names = |built: &pb::BuildMessagesResponse| -> Vec<String> {
        let body: Value = serde_json::from_str(&built.json).unwrap();
        body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        names(&on),
        ["bash", "ctxd_recall_search", "ctxd_recall_expand"]
    );
    assert_eq!(names(&off), ["bash"]);
    let tools = |built: &pb::BuildMessagesResponse| {
        built
            .budget
            .as_ref()
            .unwrap()
            .breakdown
            .as_ref()
            .unwrap()
            .tool_tokens
    };
    assert!(
        tools(&on) > tools(&off) + 100,
        "{} vs {}",
        tools(&on),
        tools(&off)
    );

    append(
        &mut client,
        "r",
        vec![user("Why does the slug test fail?"), call(&["t1"])],
    )
    .await
    .unwrap();
    let evicted = append(&mut client, "r", vec![result("t1", &big_output())])
        .await
        .unwrap();
    assert_eq!(evicted.evicted_seqs, [3], "the result is evicted at once");

    // The model searches for a word only the evicted output holds.
    append(
        &mut client,
        "r",
        vec![recall_call(
            "c1",
            "ctxd_recall_search",
            json!({"query": "zebrafish"}),
        )],
    )
    .await
    .unwrap();
    let searched = answer(&mut client, "r", "c1").await.unwrap();
    let found = message(&mut client, "r", searched.seqs[0]).await;
    assert_eq!(
        (found.tool_call_id.as_str(), found.name.as_str()),
        ("c1", "ctxd_recall_search")
    );
    assert!(
        found
            .content
            .contains("- seq 3 (tool result, not shown above)"),
        "{}",
        found.content
    );
    assert_eq!(
        found.metadata.get("ctxd.recall").map(String::as_str),
        Some("search")
    );
    // Asked again, the search names the output, not its own earlier answer or call.
    append(
        &mut client,
        "r",
        vec![recall_call(
            "c0",
            "ctxd_recall_search",
            json!({"query": "zebrafish"}),
        )],
    )
    .await
    .unwrap();
    let again = answer(&mut client, "r", "c0").await.unwrap();
    let again = message(&mut client, "r", again.seqs[0]).await.content;
    assert!(
        again.contains("- seq 3 ") && !again.contains(&format!("- seq {} ", searched.seqs[0])),
        "{again}"
    );

    // Then reads it back, within its cap, told where to go on.
    append(
        &mut client,
        "r",
        vec![recall_call(
            "c2",
            "ctxd_recall_expand",
            json!({"seqs": [3], "max_tokens": 300}),
        )],
    )
    .await
    .unwrap();
    let read = answer(&mut client, "r", "c2").await.unwrap();
    let text = message(&mut client, "r", read.seqs[0]).await.content;
    assert!(
        text.starts_with("[seq 3 · tool result · bash · not shown above]")
            || text.starts_with("[seq 3 · tool result"),
        "{text}"
    );
    assert!(
        text.contains("continue with first_seq 3 and offset") && text.len() <= 300 * 3 + 200,
        "{}",
        text.len()
    );
    append(
        &mut client,
        "r",
        vec![recall_call(
            "c3",
            "ctxd_recall_expand",
            json!({"first_seq": 3, "last_seq": 3, "max_tokens": 4000}),
        )],
    )
    .await
    .unwrap();
    let whole = answer(&mut client, "r", "c3").await.unwrap();
    assert!(
        whole.evicted_seqs.is_empty(),
        "an answer is read whole, not evicted"
    );
    // Read on from where each answer stopped, as the model is told, to the failing line.
    let (mut text, mut n) = (message(&mut client, "r", whole.seqs[0]).await.content, 0);
    while let Some((_, offset)) = text.rsplit_once("and offset ") {
        assert!(!text.contains("zebrafish") && n < 20, "{text}");
        let offset: i64 = offset.trim_end_matches(']').parse().unwrap();
        let id = format!("more{n}");
        let arguments =
            json!({"first_seq": 3, "last_seq": 3, "offset": offset, "max_tokens": 4000});
        append(
            &mut client,
            "r",
            vec![recall_call(&id, "ctxd_recall_expand", arguments)],
        )
        .await
        .unwrap();
        let more = answer(&mut client, "r", &id).await.unwrap();
        text = message(&mut client, "r", more.seqs[0]).await.content;
        n += 1;
    }
    assert!(
        text.contains("AssertionError: zebrafish-slug"),
        "the end came back: {text}"
    );
    assert!(n >= 2, "the result took several answers ({n})");

    // A retry is the first answer; nothing appended twice.
    let again = answer(&mut client, "r", "c3").await.unwrap();
    assert!(again.replayed);
    assert_eq!(again.seqs, whole.seqs);

    // Every request still fits, recall answers included.
    let built = build(&mut client, "r", pb::OutputFormat::OpenaiChat)
        .await
        .unwrap();
    let breakdown = built.budget.unwrap().breakdown.unwrap();
    assert!(breakdown.total_tokens <= breakdown.context_window_tokens);
}

#[sqlx::test]
async fn bad_calls_are_answered_or_refused_and_change_nothing_else(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    create(&mut client, "r", policy(true)).await;
    append(
        &mut client,
        "r",
        vec![user("go"), call(&["b1"]), result("b1", "ok")],
    )
    .await
    .unwrap();

    // Bad arguments: an error result naming the argument; the RPC succeeds.
    for (id, tool, arguments, says) in [
        ("e1", "ctxd_recall_expand", json!({"seqs": "three"}), "seqs"),
        ("e2", "ctxd_recall_search", json!({"limit": 3}), "query"),
        (
            "e3",
            "ctxd_recall_expand",
            json!({"summary_id": 99}),
            "summary",
        ),
        (
            "e4",
            "ctxd_recall_expand",
            json!({"first_seq": 50, "last_seq": 60}),
            "Error",
        ),
    ] {
        append(&mut client, "r", vec![recall_call(id, tool, arguments)])
            .await
            .unwrap();
        let before = session(&mut client, "r").await.version;
        let answered = answer(&mut client, "r", id).await.unwrap();
        assert_eq!(
            answered.version,
            before + 1,
            "{id}: one append, nothing else"
        );
        let result = message(&mut client, "r", answered.seqs[0]).await;
        assert!(
            result.content.starts_with("Error") || result.content.starts_with("Nothing"),
            "{id}: {}",
            result.content
        );
        assert!(result.content.contains(says), "{id}: {}", result.content);
        assert_eq!(
            result.metadata.get("ctxd.tool_error").map(String::as_str),
            Some("true"),
            "{id}"
        );
    }

    // Refused, nothing written: not a recall call, no such call, recall off, a bad id.
    let version = session(&mut client, "r").await.version;
    assert_eq!(
        answer(&mut client, "r", "b1").await.unwrap_err().code(),
        Code::InvalidArgument
    );
    assert_eq!(
        answer(&mut client, "r", "nope").await.unwrap_err().code(),
        Code::NotFound
    );
    assert_eq!(
        answer(&mut client, "r", "").await.unwrap_err().code(),
        Code::InvalidArgument
    );
    assert_eq!(
        answer(&mut client, "missing", "e1")
            .await
            .unwrap_err()
            .code(),
        Code::NotFound
    );
    create(&mut client, "off", policy(false)).await;
    append(
        &mut client,
        "off",
        vec![
            user("go"),
            recall_call("x", "ctxd_recall_search", json!({"query": "go"})),
        ],
    )
    .await
    .unwrap();
    assert_eq!(
        answer(&mut client, "off", "x").await.unwrap_err().code(),
        Code::FailedPrecondition
    );
    assert_eq!(session(&mut client, "r").await.version, version);

    // A client tool may not take a recall tool's name while recall is on.
    let status = client
        .build_messages(pb::BuildMessagesRequest {
            session_id: "r".into(),
            tools: Some(pb::Tools {
                tools: Some(pb::tools::Tools::Definitions(pb::ToolDefinitionList {
                    items: vec![pb::ToolDefinition {
                        name: "ctxd_recall_search".into(),
                        ..Default::default()
                    }],
                })),
            }),
            format: pb::OutputFormat::Neutral as i32,
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(
        violated_fields(&status),
        ["tools.definitions.items[0].name"]
    );
}

#[sqlx::test]
async fn compaction_clears_recall_answers_first(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    let policy = pb::Policy {
        eviction_threshold_tokens: Some(100_000),
        tool_output_protect_tokens: Some(0),
        recall_tools: Some(true),
        ..window(64_000, 2_000)
    };
    create(&mut client, "r", policy).await;
    // An older ordinary result, then a recall answer, then a newer ordinary result.
    append(
        &mut client,
        "r",
        vec![
            user("go"),
            call(&["a"]),
            result("a", &"old output line\n".repeat(300)),
        ],
    )
    .await
    .unwrap();
    append(
        &mut client,
        "r",
        vec![recall_call(
            "s",
            "ctxd_recall_expand",
            json!({"seqs": [3], "max_tokens": 4000}),
        )],
    )
    .await
    .unwrap();
    let recall_seq = answer(&mut client, "r", "s").await.unwrap().seqs[0];
    append(
        &mut client,
        "r",
        vec![call(&["b"]), result("b", &"new output line\n".repeat(300))],
    )
    .await
    .unwrap();
    // Shed a little: the recall answer goes, though the ordinary result at seq 3 is older.
    let view_tokens = session(&mut client, "r").await.view_tokens;
    let done = client
        .compact(pb::CompactRequest {
            session_id: "r".into(),
            mode: pb::CompactMode::ClearToolResults as i32,
            target_tokens: view_tokens - 200,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(done.cleared_seqs, [recall_seq], "{done:?}");
}
