//! The API end to end through a real server and database.
use ctxd::pb;
use sqlx::PgPool;
use tonic::Code;

use crate::harness::*;

#[sqlx::test]
async fn session_lifecycle(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();

    let only_output = pb::Policy {
        max_output_tokens: Some(8_000),
        ..Default::default()
    };
    let session = create(&mut client, "s-1", only_output).await;
    let policy = session.policy.unwrap();
    assert_eq!(
        policy.context_window_tokens,
        Some(32_000),
        "window = 4 x output"
    );
    assert_eq!(policy.clear_threshold, Some(0.60));
    assert_eq!(session.version, 0);

    let again = client
        .create_session(pb::CreateSessionRequest {
            session_id: "s-1".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(again.code(), Code::AlreadyExists);

    let generated = create(&mut client, "", pb::Policy::default()).await;
    assert_eq!(generated.session_id.len(), 36, "a UUID is generated");

    let bad = client
        .create_session(pb::CreateSessionRequest {
            session_id: "bad".into(),
            policy: Some(pb::Policy {
                clear_threshold: Some(1.5),
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(bad.code(), Code::InvalidArgument);
    assert_eq!(violated_fields(&bad), ["policy.clear_threshold"]);
    let missing = client
        .get_session(pb::GetSessionRequest {
            session_id: "bad".into(),
            include_view: false,
        })
        .await
        .unwrap_err();
    assert_eq!(
        missing.code(),
        Code::NotFound,
        "a rejected create stores nothing"
    );

    append(&mut client, "s-1", vec![user("hello"), assistant("hi")])
        .await
        .unwrap();
    let deleted = client
        .delete_session(pb::DeleteSessionRequest {
            session_id: "s-1".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(deleted.deleted_messages, 2);
    let gone = client
        .get_session(pb::GetSessionRequest {
            session_id: "s-1".into(),
            include_view: false,
        })
        .await
        .unwrap_err();
    assert_eq!(gone.code(), Code::NotFound);
    let append_gone = append(&mut client, "s-1", vec![user("x")])
        .await
        .unwrap_err();
    assert_eq!(append_gone.code(), Code::NotFound);
    server.stop().await;
}

#[sqlx::test]
async fn append_assigns_gap_free_seqs_turns_and_versions(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    create(&mut client, "s", window(100_000, 10_000)).await;
    let first = append(
        &mut client,
        "s",
        vec![user("list files"), call(&["c1", "c2"])],
    )
    .await
    .unwrap();
    assert_eq!(first.seqs, [1, 2]);
    assert_eq!(first.version, 1);
    let second = append(
        &mut client,
        "s",
        vec![
            result("c2", "b.txt"),
            result("c1", "a.txt"),
            assistant("two files"),
        ],
    )
    .await
    .unwrap();
    assert_eq!(second.seqs, [3, 4, 5]);
    assert_eq!(second.version, 2);
    let third = append(&mut client, "s", vec![user("thanks")])
        .await
        .unwrap();
    assert_eq!(third.seqs, [6]);

    let built = build(&mut client, "s", pb::OutputFormat::Neutral)
        .await
        .unwrap();
    let seqs: Vec<i64> = built.messages.iter().map(|m| m.seq).collect();
    assert_eq!(seqs, [1, 2, 3, 4, 5, 6]);
    let turns: Vec<i64> = built.messages.iter().map(|m| m.turn).collect();
    assert_eq!(turns, [1, 1, 1, 1, 1, 2]);
    assert!(built.messages.iter().all(|m| m.token_count > 0));
    assert_eq!(built.version, 3);

    let session = client
        .get_session(pb::GetSessionRequest {
            session_id: "s".into(),
            include_view: false,
        })
        .await
        .unwrap()
        .into_inner()
        .session
        .unwrap();
    assert_eq!(
        (session.message_count, session.turn_count, session.version),
        (6, 2, 3)
    );
    let sum: i64 = built.messages.iter().map(|m| m.token_count).sum();
    assert_eq!(session.log_tokens, sum);
    assert_eq!(session.view_tokens, sum);
    server.stop().await;
}

#[sqlx::test]
async fn invalid_appends_name_the_field_and_change_nothing(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    create(&mut client, "s", window(100_000, 10_000)).await;
    append(
        &mut client,
        "s",
        vec![user("go"), call(&["c1"]), result("c1", "ok")],
    )
    .await
    .unwrap();

    let big = "x".repeat(1024 * 1024 + 1);
    let cases: Vec<(Vec<pb::Message>, &str)> = vec![
        (
            vec![user("a"), text(pb::Role::Unspecified, "b")],
            "messages[1].role",
        ),
        (vec![result("nope", "r")], "messages[0].tool_call_id"),
        (vec![result("c1", "again")], "messages[0].tool_call_id"),
        (vec![call(&[""])], "messages[0].tool_calls[0].id"),
        (vec![call(&["c1"])], "messages[0].tool_calls[0].id"),
        (vec![assistant("")], "messages[0].content"),
        (vec![user(&big)], "messages[0].content"),
        (
            vec![text(pb::Role::Tool, "no id")],
            "messages[0].tool_call_id",
        ),
        (
            vec![call(&["d1"]), result("d1", "x"), result("d1", "y")],
            "messages[2].tool_call_id",
        ),
        (vec![], "messages"),
    ];
    for (messages, field) in cases {
        let status = append(&mut client, "s", messages).await.unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument, "{field}: {status:?}");
        assert_eq!(violated_fields(&status), [field], "{}", status.message());
        assert!(status.message().starts_with(field), "{}", status.message());
    }
    let session = client
        .get_session(pb::GetSessionRequest {
            session_id: "s".into(),
            include_view: false,
        })
        .await
        .unwrap()
        .into_inner()
        .session
        .unwrap();
    assert_eq!(
        (session.version, session.message_count),
        (1, 3),
        "nothing was written"
    );
    // The rejected d1 call was not recorded: it can still be made.
    append(&mut client, "s", vec![call(&["d1"]), result("d1", "x")])
        .await
        .unwrap();
    server.stop().await;
}

#[sqlx::test]
async fn expected_version_and_idempotency(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    create(&mut client, "s", window(100_000, 10_000)).await;
    append(&mut client, "s", vec![user("one")]).await.unwrap();

    let stale = client
        .append_turn(pb::AppendTurnRequest {
            session_id: "s".into(),
            messages: vec![assistant("two")],
            expected_version: Some(0),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(stale.code(), Code::Aborted);
    {
        use tonic_types::StatusExt;
        let info = stale.get_error_details().error_info().cloned().unwrap();
        assert_eq!(info.metadata["current_version"], "1");
    }
    let ok = client
        .append_turn(pb::AppendTurnRequest {
            session_id: "s".into(),
            messages: vec![assistant("two")],
            expected_version: Some(1),
            idempotency_key: "k-1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        (ok.version, ok.seqs.clone(), ok.replayed),
        (2, vec![2], false)
    );
    let retry = client
        .append_turn(pb::AppendTurnRequest {
            session_id: "s".into(),
            messages: vec![assistant("two")],
            expected_version: Some(1),
            idempotency_key: "k-1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        (retry.version, retry.seqs, retry.replayed),
        (2, vec![2], true)
    );
    let reused = client
        .append_turn(pb::AppendTurnRequest {
            session_id: "s".into(),
            messages: vec![assistant("something else")],
            idempotency_key: "k-1".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(reused.code(), Code::InvalidArgument);
    assert_eq!(violated_fields(&reused), ["idempotency_key"]);
    let session = client
        .get_session(pb::GetSessionRequest {
            session_id: "s".into(),
            include_view: false,
        })
        .await
        .unwrap()
        .into_inner()
        .session
        .unwrap();
    assert_eq!(session.message_count, 2);
    server.stop().await;
}

#[sqlx::test]
async fn build_fits_by_summarizing_oldest_whole_turns_and_fails_when_nothing_fits(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    create(&mut client, "s", window(1_000, 200)).await;
    let long = "word ".repeat(60);
    for turn in 0..8 {
        let id = format!("t{turn}");
        append(
            &mut client,
            "s",
            vec![
                user(&long),
                call(&[&id]),
                result(&id, &long),
                assistant("done"),
            ],
        )
        .await
        .unwrap();
    }
    let built = build(&mut client, "s", pb::OutputFormat::Neutral)
        .await
        .unwrap();
    let budget = built.budget.unwrap();
    let breakdown = budget.breakdown.unwrap();
    assert!(breakdown.total_tokens + breakdown.output_reserve_tokens <= 1_000);
    assert!(breakdown.headroom_tokens >= 0);
    // The oldest whole turns went into summaries covering 1..first_seq-1 exactly once
    // (and, compacting deep, the older steps of the newest turn after its user message).
    let trimmed = built.trimmed.unwrap();
    assert_eq!(trimmed.turns, 0, "{trimmed:?}");
    assert!(!built.summaries.is_empty());
    assert_summaries_cover_once(&built, 32);
    assert_eq!((built.first_seq - 1) % 4, 0, "turn-aligned");
    // In the system prompt; a summary of the newest turn's steps brings the block after
    // that turn's user message (the default placement, AFTER_TASK).
    let steps = built
        .summaries
        .iter()
        .any(|s| s.first_seq > built.first_seq);
    let block = if steps {
        &built.messages[1].content
    } else {
        &built.system_prompt
    };
    assert!(block.contains(&built.summaries[0].content));
    assert_eq!(built.messages[0].role, pb::Role::User as i32);
    assert_eq!(built.last_seq, 32);
    assert_provider_valid(&built.messages);

    // A newest turn bigger than the window cannot be sent at all.
    append(&mut client, "s", vec![user(&"word ".repeat(2_000))])
        .await
        .unwrap();
    let status = build(&mut client, "s", pb::OutputFormat::Neutral)
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::FailedPrecondition);
    assert!(
        status.message().contains("newest turn"),
        "{}",
        status.message()
    );
    let check = client
        .check_budget(pb::CheckBudgetRequest {
            session_id: "s".into(),
            system_prompt: "You are a careful coding agent.".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .budget
        .unwrap();
    assert_eq!(check.status, pb::BudgetStatus::Over as i32);
    assert_eq!(
        check.recommended_action,
        pb::RecommendedAction::ReduceRequest as i32
    );
    server.stop().await;
}

#[sqlx::test]
async fn build_drops_an_incomplete_step_but_keeps_the_open_one(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    create(&mut client, "s", window(100_000, 10_000)).await;
    append(
        &mut client,
        "s",
        vec![user("q"), call(&["A", "B"]), result("A", "a")],
    )
    .await
    .unwrap();
    // Still open: kept.
    let open = build(&mut client, "s", pb::OutputFormat::Neutral)
        .await
        .unwrap();
    assert_eq!(open.messages.len(), 3);
    // No provider takes a request ending with an unanswered call: every provider body
    // ends before the open step.
    for format in [
        pb::OutputFormat::OpenaiChat,
        pb::OutputFormat::OpenaiResponses,
        pb::OutputFormat::AnthropicMessages,
        pb::OutputFormat::Gemini,
    ] {
        let built = build(&mut client, "s", format).await.unwrap();
        let trimmed = built.trimmed.unwrap();
        assert_eq!(trimmed.incomplete_step_messages, 2, "{format:?}");
        assert_eq!(built.last_seq, 1, "{format:?}");
        let body = built.json;
        assert!(body.contains("\"q\""), "{format:?}: {body}");
        assert!(
            !body.contains("\"A\""),
            "{format:?} sends the open step: {body}"
        );
    }
    // The user moved on without answering B: the step is dropped with its partial result.
    append(&mut client, "s", vec![user("never mind"), assistant("ok")])
        .await
        .unwrap();
    let built = build(&mut client, "s", pb::OutputFormat::Neutral)
        .await
        .unwrap();
    let seqs: Vec<i64> = built.messages.iter().map(|m| m.seq).collect();
    assert_eq!(seqs, [1, 4, 5]);
    assert_eq!(built.trimmed.unwrap().incomplete_step_messages, 2);
    server.stop().await;
}

#[sqlx::test]
async fn provider_formats(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    create(&mut client, "s", window(100_000, 4_000)).await;
    append(
        &mut client,
        "s",
        vec![
            user("what is here?"),
            call(&["a", "b"]),
            result("a", "x"),
            result("b", "y"),
            user("and?"),
            assistant("done"),
        ],
    )
    .await
    .unwrap();
    let openai = build(&mut client, "s", pb::OutputFormat::OpenaiChat)
        .await
        .unwrap();
    let body: serde_json::Value = serde_json::from_str(&openai.json).unwrap();
    assert!(openai.messages.is_empty());
    assert_eq!(body["messages"][0]["role"], "system");
    assert_eq!(body["messages"].as_array().unwrap().len(), 7);
    assert_eq!(body["messages"][2]["tool_calls"][1]["id"], "b");
    assert_eq!(body["messages"][4]["tool_call_id"], "b");
    assert_eq!(body["tools"][0]["function"]["name"], "bash");

    let anthropic = build(&mut client, "s", pb::OutputFormat::AnthropicMessages)
        .await
        .unwrap();
    let body: serde_json::Value = serde_json::from_str(&anthropic.json).unwrap();
    // The system prompt as a text block carrying the cache breakpoint after the tools.
    assert_eq!(body["system"][0]["text"], "You are a careful coding agent.");
    assert_eq!(body["system"][0]["cache_control"]["type"], "ephemeral");
    assert_eq!(body["max_tokens"], 4_000);
    let roles: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant"]);
    assert_eq!(body["messages"][2]["content"][0]["type"], "tool_result");
    assert_eq!(body["messages"][2]["content"][2]["text"], "and?");
    assert_eq!(body["tools"][0]["input_schema"]["required"][0], "command");
    server.stop().await;
}

#[sqlx::test]
async fn usage_anchors_estimates_and_check_budget_warns(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    create(&mut client, "s", window(10_000, 1_000)).await;
    append(&mut client, "s", vec![user("start")]).await.unwrap();
    let first = build(&mut client, "s", pb::OutputFormat::Neutral)
        .await
        .unwrap();
    let first_total = first.budget.unwrap().breakdown.unwrap().total_tokens;
    assert_eq!(
        first_total,
        first
            .budget
            .unwrap()
            .breakdown
            .unwrap()
            .tokenizer_total_tokens
    );
    // The provider counted 10 % more than ctxd did.
    let reported = first_total * 11 / 10 + 1;
    client
        .append_turn(pb::AppendTurnRequest {
            session_id: "s".into(),
            messages: vec![call(&["c1"])],
            usage: Some(pb::Usage {
                input_tokens: reported,
                output_tokens: 20,
                cached_input_tokens: 0,
            }),
            ..Default::default()
        })
        .await
        .unwrap();
    append(&mut client, "s", vec![result("c1", "ok")])
        .await
        .unwrap();
    let second = build(&mut client, "s", pb::OutputFormat::Neutral)
        .await
        .unwrap();
    let breakdown = second.budget.unwrap().breakdown.unwrap();
    assert_eq!(
        breakdown.estimate_source,
        pb::EstimateSource::Anchored as i32
    );
    assert!(
        breakdown.total_tokens > reported,
        "anchored on the reported figure"
    );
    let anchored_delta = breakdown.total_tokens - reported;
    let counted_delta = breakdown.tokenizer_total_tokens - first_total;
    assert!(
        anchored_delta >= counted_delta,
        "the delta is scaled by the anchor's ratio"
    );
    let session = client
        .get_session(pb::GetSessionRequest {
            session_id: "s".into(),
            include_view: false,
        })
        .await
        .unwrap()
        .into_inner()
        .session
        .unwrap();
    let estimator = session.estimator.unwrap();
    assert_eq!(estimator.samples, 1);
    assert_eq!(estimator.anchor_input_tokens, reported);
    let expected = (first_total - reported) as f64 / reported as f64 * 100.0;
    assert!((estimator.last_error_pct - expected).abs() < 1e-9);
    assert_eq!(session.usage_total.unwrap().output_tokens, 20);

    // CheckBudget with pending messages crossing the thresholds.
    let check = |pending: Vec<pb::Message>| {
        let mut client = client.clone();
        async move {
            client
                .check_budget(pb::CheckBudgetRequest {
                    session_id: "s".into(),
                    pending_messages: pending,
                    ..Default::default()
                })
                .await
                .unwrap()
                .into_inner()
                .budget
                .unwrap()
        }
    };
    assert_eq!(check(vec![]).await.status, pb::BudgetStatus::Ok as i32);
    let warn = check(vec![user(&"word ".repeat(6_500))]).await;
    assert_eq!(warn.status, pb::BudgetStatus::Warn as i32);
    let over = check(vec![user(&"word ".repeat(9_000))]).await;
    assert_eq!(over.status, pb::BudgetStatus::Over as i32);
    server.stop().await;
}

#[sqlx::test]
async fn tenants_are_isolated_and_a_denying_server_requires_keys(pool: PgPool) {
    let store = ctxd::store::Store::new(pool.clone());
    let server = TestServer::start(pool).await;
    let mut anonymous = server.client.clone();
    create(&mut anonymous, "shared-name", window(10_000, 1_000)).await;

    let key_a = ctxd::auth::generate_key().unwrap();
    let key_b = ctxd::auth::generate_key().unwrap();
    store
        .add_api_key("a", &ctxd::auth::hash_key(&key_a), "a")
        .await
        .unwrap();
    store
        .add_api_key("b", &ctxd::auth::hash_key(&key_b), "b")
        .await
        .unwrap();
    // Whether a call without a key is served is the server's setting, not the key
    // table's: a server started with `deny` refuses it.
    server.stop().await;
    let server = TestServer::start_with_options(
        store.pool().clone(),
        TestServer::default_config(),
        ctxd::server::ServeOptions {
            anonymous_access: ctxd::auth::AnonymousAccess::Deny,
            ..Default::default()
        },
    )
    .await;

    let with_key = |key: &str, session: &str| {
        let mut request = tonic::Request::new(pb::GetSessionRequest {
            session_id: session.into(),
            include_view: false,
        });
        request
            .metadata_mut()
            .insert("authorization", format!("Bearer {key}").parse().unwrap());
        request
    };
    let mut client = server.client.clone();
    let status = client
        .get_session(pb::GetSessionRequest {
            session_id: "shared-name".into(),
            include_view: false,
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::Unauthenticated);
    let status = client
        .get_session(with_key("ctxd_wrong", "shared-name"))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::Unauthenticated);

    let mut create_a = tonic::Request::new(pb::CreateSessionRequest {
        session_id: "mine".into(),
        ..Default::default()
    });
    create_a
        .metadata_mut()
        .insert("authorization", format!("Bearer {key_a}").parse().unwrap());
    client.create_session(create_a).await.unwrap();
    client.get_session(with_key(&key_a, "mine")).await.unwrap();
    let other = client
        .get_session(with_key(&key_b, "mine"))
        .await
        .unwrap_err();
    assert_eq!(
        other.code(),
        Code::NotFound,
        "another tenant's session is invisible"
    );
    let default_one = client
        .get_session(with_key(&key_a, "shared-name"))
        .await
        .unwrap_err();
    assert_eq!(default_one.code(), Code::NotFound);
    server.stop().await;
}

#[sqlx::test]
async fn health_and_reflection(pool: PgPool) {
    use tonic_health::pb::health_check_response::ServingStatus;
    use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};
    use tonic_reflection::pb::v1;
    use tonic_reflection::pb::v1alpha as alpha;

    let server = TestServer::start(pool).await;
    let channel = channel(server.addr).await;
    let mut health = HealthClient::new(channel.clone());
    let status = health
        .check(HealthCheckRequest {
            service: "ctxd.v1.ContextService".into(),
        })
        .await
        .unwrap()
        .into_inner()
        .status();
    assert_eq!(status, ServingStatus::Serving);

    let request = v1::ServerReflectionRequest {
        host: String::new(),
        message_request: Some(v1::server_reflection_request::MessageRequest::ListServices(
            String::new(),
        )),
    };
    let mut reflection = v1::server_reflection_client::ServerReflectionClient::new(channel.clone());
    let mut stream = reflection
        .server_reflection_info(tokio_stream::iter(vec![request]))
        .await
        .unwrap()
        .into_inner();
    let response = stream.message().await.unwrap().unwrap();
    let Some(v1::server_reflection_response::MessageResponse::ListServicesResponse(list)) =
        response.message_response
    else {
        panic!("unexpected reflection response");
    };
    let names: Vec<String> = list.service.into_iter().map(|s| s.name).collect();
    assert!(
        names.contains(&"ctxd.v1.ContextService".to_string()),
        "{names:?}"
    );

    // v1alpha: fetch the file that defines the service and check its six RPCs.
    let request = alpha::ServerReflectionRequest {
        host: String::new(),
        message_request: Some(
            alpha::server_reflection_request::MessageRequest::FileContainingSymbol(
                "ctxd.v1.ContextService".into(),
            ),
        ),
    };
    let mut reflection = alpha::server_reflection_client::ServerReflectionClient::new(channel);
    let mut stream = reflection
        .server_reflection_info(tokio_stream::iter(vec![request]))
        .await
        .unwrap()
        .into_inner();
    let response = stream.message().await.unwrap().unwrap();
    let Some(alpha::server_reflection_response::MessageResponse::FileDescriptorResponse(files)) =
        response.message_response
    else {
        panic!("unexpected reflection response");
    };
    use prost::Message as _;
    let file = prost_types::FileDescriptorProto::decode(files.file_descriptor_proto[0].as_slice())
        .unwrap();
    let service = file
        .service
        .iter()
        .find(|s| s.name() == "ContextService")
        .unwrap();
    let methods: Vec<&str> = service.method.iter().map(|m| m.name()).collect();
    assert_eq!(
        methods,
        [
            "CreateSession",
            "GetSession",
            "ListSessions",
            "DeleteSession",
            "FinishSession",
            "ForkSession",
            "AppendTurn",
            "AnswerRecall",
            "AppendNative",
            "BuildMessages",
            "CheckBudget",
            "Expand",
            "Compact",
            "RevertCompaction",
            "GetJob",
            "Search",
            "SubscribeEvents",
            "UpdateLedger",
            "ExportSession",
            "ImportSession"
        ]
    );
    server.stop().await;
}
