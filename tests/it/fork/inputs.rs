//! ForkSession's bad input (each refused with the status the service uses and the field
//! named, nothing changed), the tenant's boundary, forks at either end, and a fork
//! refusing the tool-call references its source would refuse.
use ctxd::pb;
use sqlx::PgPool;
use tonic::Code;

use super::{assert_history, fork, history, turns};
use crate::harness::*;

/// What a refused fork must leave as it was: the source's row and stream, and every
/// session of the tenant.
async fn state(pool: &PgPool, client: &mut Client) -> (pb::Session, Vec<(String, i64, i64)>) {
    let rows: Vec<(String, i64, i64)> =
        sqlx::query_as("select external_id, event_seq, version from sessions order by id")
            .fetch_all(pool)
            .await
            .unwrap();
    (session(client, "src").await, rows)
}

fn request(at_seq: Option<i64>, id: &str) -> pb::ForkSessionRequest {
    pb::ForkSessionRequest {
        source_session_id: "src".into(),
        at_seq,
        session_id: id.into(),
        ..Default::default()
    }
}

#[sqlx::test]
async fn bad_input_names_the_field_and_changes_nothing(pool: PgPool) {
    let server = TestServer::start(pool.clone()).await;
    let mut client = server.client.clone();
    create(&mut client, "src", window(100_000, 4_000)).await;
    create(&mut client, "taken", window(100_000, 4_000)).await;
    for batch in turns("shared", 0, 2, 10) {
        append(&mut client, "src", batch).await.unwrap();
    }
    let before = state(&pool, &mut client).await;
    let cases: Vec<(pb::ForkSessionRequest, Code, &str)> = vec![
        (request(Some(9), "f"), Code::InvalidArgument, "at_seq"),
        (
            request(Some(i64::MAX), "f"),
            Code::InvalidArgument,
            "at_seq",
        ),
        (request(Some(-1), "f"), Code::InvalidArgument, "at_seq"),
        (
            request(Some(i64::MIN), "f"),
            Code::InvalidArgument,
            "at_seq",
        ),
        (request(None, "taken"), Code::AlreadyExists, "session_id"),
        (request(None, "src"), Code::AlreadyExists, "session_id"),
        (
            request(None, "bad id!"),
            Code::InvalidArgument,
            "session_id",
        ),
        (
            request(None, &"x".repeat(200)),
            Code::InvalidArgument,
            "session_id",
        ),
        (
            pb::ForkSessionRequest {
                source_session_id: "missing".into(),
                ..request(None, "f")
            },
            Code::NotFound,
            "source_session_id",
        ),
        (
            pb::ForkSessionRequest {
                source_session_id: "no/such".into(),
                ..request(None, "f")
            },
            Code::InvalidArgument,
            "source_session_id",
        ),
        (
            pb::ForkSessionRequest {
                policy: Some(pb::Policy {
                    tokenizer: Some(pb::Tokenizer::Cl100kBase as i32),
                    ..Default::default()
                }),
                ..request(None, "f")
            },
            Code::InvalidArgument,
            "policy.tokenizer",
        ),
        (
            pb::ForkSessionRequest {
                policy: Some(pb::Policy {
                    context_window_tokens: Some(1_000),
                    max_output_tokens: Some(2_000),
                    ..Default::default()
                }),
                ..request(None, "f")
            },
            Code::InvalidArgument,
            "policy.max_output_tokens",
        ),
        (
            pb::ForkSessionRequest {
                policy: Some(pb::Policy {
                    summarizer_profile: Some("nowhere".into()),
                    ..Default::default()
                }),
                ..request(None, "f")
            },
            Code::InvalidArgument,
            "policy.summarizer_profile",
        ),
        (
            pb::ForkSessionRequest {
                metadata: [("k".to_string(), "nul\0".to_string())].into(),
                ..request(None, "f")
            },
            Code::InvalidArgument,
            "metadata[\"k\"]",
        ),
    ];
    for (request, code, field) in cases {
        let status = client.fork_session(request.clone()).await.unwrap_err();
        assert_eq!(status.code(), code, "{request:?}: {}", status.message());
        match code {
            Code::InvalidArgument => assert_eq!(
                violated_fields(&status),
                [field.to_string()],
                "{request:?}: {}",
                status.message()
            ),
            _ => assert!(
                status.message().contains(field),
                "{request:?}: {}",
                status.message()
            ),
        }
        assert!(status.message().len() < 400, "{}", status.message());
        assert_eq!(
            state(&pool, &mut client).await,
            before,
            "{request:?} changed something"
        );
    }
    // A policy override that is valid applies over the source's policy.
    let forked = client
        .fork_session(pb::ForkSessionRequest {
            policy: Some(pb::Policy {
                context_window_tokens: Some(50_000),
                ..Default::default()
            }),
            metadata: [("branch".to_string(), "b".to_string())].into(),
            ..request(Some(4), "f")
        })
        .await
        .unwrap()
        .into_inner()
        .session
        .unwrap();
    let policy = forked.requested_policy.unwrap();
    assert_eq!(policy.context_window_tokens, Some(50_000));
    assert_eq!(policy.tokenizer, Some(pb::Tokenizer::O200kBase as i32));
    assert_eq!(forked.metadata["branch"], "b");
    server.stop().await;
}

/// Another tenant's session cannot be forked, nor can a fork reach across tenants.
#[sqlx::test]
async fn another_tenants_session_is_not_found(pool: PgPool) {
    let store = ctxd::store::Store::new(pool.clone());
    let key = ctxd::auth::generate_key().unwrap();
    store
        .add_api_key("other", &ctxd::auth::hash_key(&key), "other")
        .await
        .unwrap();
    let server = TestServer::start(pool.clone()).await;
    let mut client = server.client.clone();
    create(&mut client, "src", window(100_000, 4_000)).await;
    append(&mut client, "src", vec![user("mine")])
        .await
        .unwrap();
    let with_key = |request: pb::ForkSessionRequest| {
        let mut request = tonic::Request::new(request);
        request
            .metadata_mut()
            .insert("authorization", format!("Bearer {key}").parse().unwrap());
        request
    };
    let before: i64 = sqlx::query_scalar("select count(*) from sessions")
        .fetch_one(&pool)
        .await
        .unwrap();
    let status = client
        .fork_session(with_key(request(None, "theirs")))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::NotFound, "{}", status.message());
    assert!(status.message().contains("source_session_id"));
    let after: i64 = sqlx::query_scalar("select count(*) from sessions")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(before, after);
    server.stop().await;
}

/// A fork at 0 shares nothing; at the end it has its source's whole view; a fork of a
/// fork reads through both.
#[sqlx::test]
async fn forks_at_either_end_and_of_forks(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    create(&mut client, "src", window(200_000, 8_000)).await;
    let mut log = Vec::new();
    for batch in turns("shared", 0, 4, 100) {
        log.extend(batch.clone());
        append(&mut client, "src", batch).await.unwrap();
    }
    let empty = fork(&mut client, "src", Some(0), "empty").await.unwrap();
    assert_eq!(
        (empty.message_count, empty.log_tokens, empty.view_tokens),
        (0, 0, 0)
    );
    assert_eq!(empty.forked_from_session_id, "src");
    assert!(history(&mut client, "empty").await.is_empty());
    append(&mut client, "empty", vec![user("fresh start")])
        .await
        .unwrap();
    assert_eq!(history(&mut client, "empty").await.len(), 1);

    let whole = fork(&mut client, "src", None, "whole").await.unwrap();
    let source = session(&mut client, "src").await;
    assert_eq!(
        (
            whole.message_count,
            whole.turn_count,
            whole.log_tokens,
            whole.view_tokens
        ),
        (
            source.message_count,
            source.turn_count,
            source.log_tokens,
            source.view_tokens
        )
    );
    let src_built = build(&mut client, "src", pb::OutputFormat::OpenaiChat)
        .await
        .unwrap();
    let whole_built = build(&mut client, "whole", pb::OutputFormat::OpenaiChat)
        .await
        .unwrap();
    assert_eq!(
        src_built.json, whole_built.json,
        "a fork at the end builds what its source builds"
    );

    // A fork mid-way counts as its own history: the counters equal a session that was
    // sent the same messages.
    let mid = fork(&mut client, "src", Some(10), "mid").await.unwrap();
    create(&mut client, "replayed", window(200_000, 8_000)).await;
    append(&mut client, "replayed", log[..10].to_vec())
        .await
        .unwrap();
    let replayed = session(&mut client, "replayed").await;
    assert_eq!(
        (
            mid.message_count,
            mid.turn_count,
            mid.log_tokens,
            mid.view_tokens
        ),
        (
            replayed.message_count,
            replayed.turn_count,
            replayed.log_tokens,
            replayed.view_tokens
        )
    );
    let second = fork(&mut client, "mid", Some(6), "second").await.unwrap();
    assert_eq!(second.forked_from_session_id, "mid");
    // `ctxd inspect` shows where a fork comes from, and nothing for one that is not.
    let address = server.addr.to_string();
    let report = ctxd::inspect::run(&address, &Default::default(), None, "second", false)
        .await
        .unwrap();
    assert!(report.contains("forked from mid at seq 6"), "{report}");
    let report = ctxd::inspect::run(&address, &Default::default(), None, "src", false)
        .await
        .unwrap();
    assert!(!report.contains("forked from"), "{report}");
    append(&mut client, "mid", turns("midonly", 9, 1, 5).concat())
        .await
        .unwrap();
    let mut second_log = log[..6].to_vec();
    let extra = turns("secondonly", 7, 1, 5).concat();
    second_log.extend(extra.clone());
    append(&mut client, "second", extra).await.unwrap();
    assert_history(&history(&mut client, "second").await, &second_log, "second");
    server.stop().await;
}

/// A fork knows the tool calls it shares: an inherited call answered within the cut
/// cannot be answered again nor its id reused, one answered only after the cut is still
/// open in the fork, and answering it there leaves the source's answer alone.
#[sqlx::test]
async fn a_fork_checks_tool_calls_as_its_source_would(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    create(&mut client, "src", window(200_000, 8_000)).await;
    append(
        &mut client,
        "src",
        vec![
            user("go"),
            call(&["a"]),
            result("a", "done a"),
            call(&["b"]),
        ],
    )
    .await
    .unwrap();
    append(&mut client, "src", vec![result("b", "done b in src")])
        .await
        .unwrap();
    // At 4 the call "b" is open in the fork, answered at 5 in the source.
    fork(&mut client, "src", Some(4), "f").await.unwrap();
    for (messages, field) in [
        (vec![result("a", "again")], "messages[0].tool_call_id"),
        (vec![call(&["a"])], "messages[0].tool_calls[0].id"),
        (vec![call(&["b"])], "messages[0].tool_calls[0].id"),
        (vec![result("zz", "unknown")], "messages[0].tool_call_id"),
    ] {
        let status = append(&mut client, "f", messages).await.unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument);
        assert_eq!(violated_fields(&status), [field]);
        assert_eq!(session(&mut client, "f").await.message_count, 4);
    }
    append(&mut client, "f", vec![result("b", "done b in the fork")])
        .await
        .unwrap();
    let status = append(&mut client, "f", vec![result("b", "twice")])
        .await
        .unwrap_err();
    assert_eq!(violated_fields(&status), ["messages[0].tool_call_id"]);
    // The source's answer is its own; both build provider-valid with their own answer.
    for (id, answer) in [("src", "done b in src"), ("f", "done b in the fork")] {
        let built = build(&mut client, id, pb::OutputFormat::Neutral)
            .await
            .unwrap();
        assert_provider_valid(&built.messages);
        assert_eq!(built.messages.last().unwrap().content, answer);
    }
    let status = append(&mut client, "src", vec![result("b", "twice")])
        .await
        .unwrap_err();
    assert_eq!(violated_fields(&status), ["messages[0].tool_call_id"]);
    // A new call in the fork, answered in a later append: the fork's own row.
    append(&mut client, "f", vec![call(&["c"])]).await.unwrap();
    append(&mut client, "f", vec![result("c", "done c")])
        .await
        .unwrap();
    // The source never saw "c".
    let status = append(&mut client, "src", vec![result("c", "x")])
        .await
        .unwrap_err();
    assert_eq!(violated_fields(&status), ["messages[0].tool_call_id"]);
    server.stop().await;
}
