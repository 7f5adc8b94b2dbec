//! Defects found by driving ctxd from outside, each reproduced as it was found: access
//! that failed open, figures that overflowed, errors that echoed whole inputs, and sizes
//! nobody bounded.
use ctxd::engine::EngineConfig;
use ctxd::limits::Limits;
use ctxd::pb;
use ctxd::policy::Policy;
use sqlx::PgPool;
use tonic::Code;
use tonic_types::StatusExt;

use crate::harness::{
    Client, TestServer, append, call, create, result, session, user, violated_fields, window,
};

fn get(session_id: &str) -> pb::GetSessionRequest {
    pb::GetSessionRequest {
        session_id: session_id.into(),
        include_view: false,
    }
}

fn with_key<T>(message: T, key: &str) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    request
        .metadata_mut()
        .insert("authorization", format!("Bearer {key}").parse().unwrap());
    request
}

/// A GetSession the server refuses as unauthenticated.
async fn refused(client: &mut Client, request: tonic::Request<pb::GetSessionRequest>) {
    let status = client.get_session(request).await.unwrap_err();
    assert_eq!(status.code(), Code::Unauthenticated, "{status:?}");
}

async fn add_key(store: &ctxd::store::Store, tenant: &str) -> String {
    let key = ctxd::auth::generate_key().unwrap();
    store
        .add_api_key(tenant, &ctxd::auth::hash_key(&key), tenant)
        .await
        .unwrap();
    key
}

/// A server with its own anonymous-access setting.
async fn start_with_access(pool: PgPool, access: ctxd::auth::AnonymousAccess) -> TestServer {
    TestServer::start_with_options(
        pool,
        TestServer::default_config(),
        ctxd::server::ServeOptions {
            anonymous_access: access,
            ..Default::default()
        },
    )
    .await
}

/// Defect 1: with every key revoked, a call without a key used to be served as the
/// `default` tenant. Who may call without a key is the server's setting alone: a
/// denying server refuses such calls whatever is done to the keys, and a revoked key is
/// always refused.
#[sqlx::test]
async fn revoking_every_key_never_opens_anonymous_access(pool: PgPool) {
    let store = ctxd::store::Store::new(pool.clone());
    let key = add_key(&store, "a").await;
    let server = start_with_access(pool.clone(), ctxd::auth::AnonymousAccess::Deny).await;
    let mut client = server.client.clone();
    refused(&mut client, tonic::Request::new(get("anon"))).await;
    sqlx::query("update api_keys set revoked_at = now()")
        .execute(&pool)
        .await
        .unwrap();
    server.stop().await;
    for access in [
        ctxd::auth::AnonymousAccess::Deny,
        ctxd::auth::AnonymousAccess::Loopback,
    ] {
        let server = start_with_access(pool.clone(), access).await;
        let mut client = server.client.clone();
        let anonymous = client
            .create_session(pb::CreateSessionRequest {
                session_id: "anon".into(),
                ..Default::default()
            })
            .await;
        match access {
            ctxd::auth::AnonymousAccess::Deny => {
                assert_eq!(anonymous.unwrap_err().code(), Code::Unauthenticated)
            }
            _ => drop(anonymous.unwrap()),
        }
        refused(&mut client, with_key(get("anon"), &key)).await;
        server.stop().await;
    }
}

/// Keys created or deleted while a server runs never change who may call without one:
/// a loopback server keeps serving keyless calls (as `default`, which sees no other
/// tenant's session) past the time the old start-up ratchet took to close, and a
/// denying server keeps refusing them after every key is gone.
#[sqlx::test]
async fn keys_never_change_who_may_call_without_one(pool: PgPool) {
    let store = ctxd::store::Store::new(pool.clone());
    let server = TestServer::start(pool.clone()).await;
    let mut client = server.client.clone();
    create(&mut client, "open", window(8_000, 1_000)).await;
    let key = add_key(&store, "a").await;
    let mut keyed = tonic::Request::new(pb::CreateSessionRequest {
        session_id: "a-only".into(),
        ..Default::default()
    });
    keyed
        .metadata_mut()
        .insert("authorization", format!("Bearer {key}").parse().unwrap());
    client.create_session(keyed).await.unwrap();
    // No event could say "the server changed its mind", so the keyless calls go on for
    // longer than the key cache (and the old ratchet's re-check) took, each served.
    let until =
        std::time::Instant::now() + ctxd::auth::CACHE_TTL + std::time::Duration::from_secs(1);
    while std::time::Instant::now() < until {
        client.get_session(get("open")).await.unwrap();
        let other = client.get_session(get("a-only")).await.unwrap_err();
        assert_eq!(other.code(), Code::NotFound, "{other:?}");
        tokio::task::yield_now().await;
    }
    server.stop().await;

    let server = start_with_access(pool.clone(), ctxd::auth::AnonymousAccess::Deny).await;
    let mut client = server.client.clone();
    client
        .get_session(with_key(get("a-only"), &key))
        .await
        .unwrap();
    sqlx::query("delete from api_keys")
        .execute(&pool)
        .await
        .unwrap();
    let until =
        std::time::Instant::now() + ctxd::auth::CACHE_TTL + std::time::Duration::from_secs(1);
    while std::time::Instant::now() < until {
        refused(&mut client, tonic::Request::new(get("open"))).await;
        tokio::task::yield_now().await;
    }
    refused(&mut client, with_key(get("a-only"), &key)).await;
    server.stop().await;
}

/// Anonymous access denied by setting: a server without any key refuses keyless calls.
#[sqlx::test]
async fn anonymous_access_can_be_denied_at_start(pool: PgPool) {
    let server = TestServer::start_with_options(
        pool,
        EngineConfig::new(Policy::default(), 1024 * 1024),
        ctxd::server::ServeOptions {
            anonymous_access: ctxd::auth::AnonymousAccess::Deny,
            ..Default::default()
        },
    )
    .await;
    let status = server
        .client
        .clone()
        .get_session(get("any"))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::Unauthenticated);
    server.stop().await;
}

async fn append_usage(
    client: &mut Client,
    id: &str,
    usage: pb::Usage,
) -> Result<(), tonic::Status> {
    client
        .append_turn(pb::AppendTurnRequest {
            session_id: id.into(),
            messages: vec![crate::harness::assistant("done")],
            usage: Some(usage),
            ..Default::default()
        })
        .await
        .map(drop)
}

/// Defect 3: a usage of 2^63-1 was accepted, and the next one overflowed the session's
/// totals (INTERNAL on every later append with usage).
#[sqlx::test]
async fn implausible_usage_is_refused_naming_the_field(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    create(&mut client, "u", window(8_000, 1_000)).await;
    append(&mut client, "u", vec![user("hi")]).await.unwrap();
    let cases = [
        (i64::MAX, 0, 0, "usage.input_tokens"),
        (100_000_001, 0, 0, "usage.input_tokens"),
        (-1, 0, 0, "usage.input_tokens"),
        (10, i64::MAX, 0, "usage.output_tokens"),
        (10, 0, -5, "usage.cached_input_tokens"),
    ];
    for (input_tokens, output_tokens, cached_input_tokens, field) in cases {
        let usage = pb::Usage {
            input_tokens,
            output_tokens,
            cached_input_tokens,
        };
        let status = append_usage(&mut client, "u", usage).await.unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
        assert_eq!(violated_fields(&status), vec![field.to_string()]);
    }
    // The largest plausible figures, twice: the totals hold them.
    for _ in 0..2 {
        let usage = pb::Usage {
            input_tokens: 100_000_000,
            output_tokens: 100_000_000,
            cached_input_tokens: 100_000_000,
        };
        append_usage(&mut client, "u", usage).await.unwrap();
        append(&mut client, "u", vec![user("again")]).await.unwrap();
    }
    let stored = session(&mut client, "u").await;
    assert_eq!(stored.message_count, 5, "refused appends wrote nothing");
    server.stop().await;
}

/// Defect 4: a tools token count of 2^63-1 wrapped the budget's sum to a negative total;
/// a heuristic of 1e-300 characters per token counted every text as one token.
#[sqlx::test]
async fn client_token_counts_are_bounded(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    create(&mut client, "t", window(8_000, 1_000)).await;
    append(&mut client, "t", vec![user("hello world")])
        .await
        .unwrap();
    let huge = || {
        Some(pb::Tools {
            tools: Some(pb::tools::Tools::TokenCount(i64::MAX)),
        })
    };
    let status = client
        .build_messages(pb::BuildMessagesRequest {
            session_id: "t".into(),
            tools: huge(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    assert_eq!(
        violated_fields(&status),
        vec!["tools.token_count".to_string()]
    );
    let status = client
        .check_budget(pb::CheckBudgetRequest {
            session_id: "t".into(),
            tools: huge(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(
        violated_fields(&status),
        vec!["tools.token_count".to_string()]
    );
    let media = pb::Message {
        role: pb::Role::User as i32,
        parts: vec![pb::ContentPart {
            part: Some(pb::content_part::Part::Media(pb::MediaRef {
                uri: "file://a.png".into(),
                mime_type: "image/png".into(),
                token_estimate: u32::MAX,
            })),
        }],
        ..Default::default()
    };
    let status = append(&mut client, "t", vec![media]).await.unwrap_err();
    assert_eq!(
        violated_fields(&status),
        vec!["messages[0].parts[0].media.token_estimate".to_string()]
    );

    let status = client
        .create_session(pb::CreateSessionRequest {
            session_id: "h".into(),
            policy: Some(pb::Policy {
                tokenizer: Some(pb::Tokenizer::Heuristic as i32),
                heuristic_chars_per_token: Some(1e-300),
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(
        violated_fields(&status),
        vec!["policy.heuristic_chars_per_token".to_string()]
    );
    server.stop().await;
}

/// Every error's message and details together, in bytes.
fn error_bytes(status: &tonic::Status) -> usize {
    status.message().len() + status.details().len()
}

/// Defect 6: a 10 KB id was repeated whole in the message and again in the details; a
/// 1 MiB one made a trailer grpc-core clients reject.
#[sqlx::test]
async fn errors_clip_what_they_echo(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    create(&mut client, "e", window(8_000, 1_000)).await;
    append(&mut client, "e", vec![user("hi")]).await.unwrap();
    for size in [10_000, 1 << 20] {
        let long = "x".repeat(size);
        let status = client.get_session(get(&long)).await.unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument);
        assert!(
            error_bytes(&status) < 2048,
            "{} bytes",
            error_bytes(&status)
        );
        assert!(status.message().contains('…'), "{}", status.message());
        assert_eq!(violated_fields(&status), vec!["session_id".to_string()]);

        let status = append(&mut client, "e", vec![result(&long, "out")])
            .await
            .unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument);
        assert!(
            error_bytes(&status) < 2048,
            "{} bytes",
            error_bytes(&status)
        );

        let status = client
            .create_session(pb::CreateSessionRequest {
                session_id: "p".into(),
                policy: Some(pb::Policy {
                    summarizer_profile: Some(long.clone()),
                    ..Default::default()
                }),
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument);
        assert!(
            error_bytes(&status) < 2048,
            "{} bytes",
            error_bytes(&status)
        );
        let details = status.get_error_details();
        let violation = &details.bad_request().unwrap().field_violations[0];
        assert!(
            violation.description.len() < 512,
            "{}",
            violation.description.len()
        );
    }
    server.stop().await;
}

/// Defect 11: one AppendTurn of 100 000 messages and an 80 MB session were accepted.
#[sqlx::test]
async fn appends_and_sessions_are_bounded(pool: PgPool) {
    let mut config = EngineConfig::new(Policy::default(), 1024 * 1024);
    config.limits = Limits {
        max_append_messages: 50,
        max_session_bytes: 200_000,
    };
    let server = TestServer::start_with(pool, config).await;
    let mut client = server.client.clone();
    create(&mut client, "b", window(128_000, 16_000)).await;
    let many: Vec<pb::Message> = (0..51).map(|i| user(&format!("m{i}"))).collect();
    let status = append(&mut client, "b", many.clone()).await.unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    assert!(
        status.message().contains("max_append_messages"),
        "{}",
        status.message()
    );
    let status = client
        .check_budget(pb::CheckBudgetRequest {
            session_id: "b".into(),
            pending_messages: many,
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(
        violated_fields(&status),
        vec!["pending_messages".to_string()]
    );

    // 90 000 bytes twice fit; a third passes 200 000 and writes nothing.
    append(&mut client, "b", vec![user("start")]).await.unwrap();
    append(&mut client, "b", vec![call(&["c1"])]).await.unwrap();
    append(&mut client, "b", vec![result("c1", &"y".repeat(90_000))])
        .await
        .unwrap();
    append(&mut client, "b", vec![user(&"z".repeat(90_000))])
        .await
        .unwrap();
    let before = session(&mut client, "b").await;
    let status = append(&mut client, "b", vec![user(&"w".repeat(30_000))])
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
    assert!(
        status.message().contains("max_session_bytes"),
        "{}",
        status.message()
    );
    let quota = status.get_error_details();
    let violation = &quota.quota_failure().unwrap().violations[0];
    assert_eq!(violation.subject, "max_session_bytes");
    let after = session(&mut client, "b").await;
    assert_eq!(after.message_count, before.message_count);
    assert_eq!(after.version, before.version);
    // A small one still fits.
    append(&mut client, "b", vec![user("small")]).await.unwrap();
    server.stop().await;
}

/// Migration 0010 measures the sessions that existed before it field by field as the
/// code counts `content_bytes` at append: the same figure for a session with text and
/// media parts, reasoning, a name, tool calls and a result.
#[sqlx::test]
async fn the_session_bytes_backfill_measures_as_appends_do(pool: PgPool) {
    let server = TestServer::start(pool.clone()).await;
    let mut client = server.client.clone();
    create(&mut client, "m", window(128_000, 16_000)).await;
    let parts = pb::Message {
        role: pb::Role::User as i32,
        content: "look at these é".into(),
        name: "alice".into(),
        parts: vec![
            pb::ContentPart {
                part: Some(pb::content_part::Part::Text("a \"quoted\" part".into())),
            },
            pb::ContentPart {
                part: Some(pb::content_part::Part::Media(pb::MediaRef {
                    uri: "https://example.com/a.png".into(),
                    mime_type: "image/png".into(),
                    token_estimate: 85,
                })),
            },
        ],
        ..Default::default()
    };
    append(&mut client, "m", vec![parts]).await.unwrap();
    let mut calls = call(&["c1", "c2"]);
    calls.reasoning = "I should list the files".into();
    append(&mut client, "m", vec![calls]).await.unwrap();
    append(
        &mut client,
        "m",
        vec![result("c1", "a.txt"), result("c2", "b\n")],
    )
    .await
    .unwrap();
    let kept: i64 = sqlx::query_scalar("select content_bytes from sessions")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert!(kept > 0);
    let migration = include_str!("../../migrations/0010_session_bytes.sql");
    let backfill = &migration[migration.find("update sessions").unwrap()..];
    sqlx::query("update sessions set content_bytes = 0")
        .execute(&pool)
        .await
        .unwrap();
    sqlx::query(backfill).execute(&pool).await.unwrap();
    let measured: i64 = sqlx::query_scalar("select content_bytes from sessions")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(measured, kept);
    server.stop().await;
}
