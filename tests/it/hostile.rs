//! Hostile input: random field values into every unary RPC never give INTERNAL, never
//! take the server down, and every error stays small (a client's metadata limit is
//! 8–16 KiB; ctxd keeps message + details under 2 KiB). Random bytes: `decode.rs`.
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, TestRunner};
use sqlx::PgPool;
use tonic::Code;

use ctxd::pb;

use crate::harness::{Client, TestServer, append, call, create, result, user, window};

/// What every answer must be: anything but INTERNAL (or UNKNOWN, a crashed handler), and
/// an error's message and details under 2 KiB together.
pub fn check(what: &str, outcome: Result<(), tonic::Status>) {
    let Err(status) = outcome else { return };
    assert!(
        !matches!(status.code(), Code::Internal | Code::Unknown),
        "{what}: {:?} {:.300}",
        status.code(),
        status.message()
    );
    let size = status.message().len() + status.details().len();
    assert!(
        size < 2048,
        "{what}: {:?} error of {size} bytes: {:.300}",
        status.code(),
        status.message()
    );
}

fn text() -> BoxedStrategy<String> {
    prop_oneof![
        Just(String::new()),
        Just("s".to_string()),
        Just("call-1".to_string()),
        Just("call-2".to_string()),
        ".{0,24}",
        "[a-z0-9_:.-]{1,16}",
        (any::<char>(), 100..12_000usize).prop_map(|(c, n)| c.to_string().repeat(n)),
        Just("a\0b".to_string()),
        Just("{\"command\": \"ls\"}".to_string()),
    ]
    .boxed()
}

fn number() -> BoxedStrategy<i64> {
    prop_oneof![
        -3..12i64,
        any::<i64>(),
        Just(i64::MAX),
        Just(i64::MIN),
        Just(100_000_000i64),
        Just(100_000_001i64),
    ]
    .boxed()
}

fn ratio() -> BoxedStrategy<f64> {
    prop_oneof![
        any::<f64>(),
        0.0..1.5f64,
        Just(1e-300),
        Just(f64::NAN),
        Just(f64::INFINITY),
    ]
    .boxed()
}

fn enum_value() -> BoxedStrategy<i32> {
    prop_oneof![-2..8i32, any::<i32>()].boxed()
}

fn message() -> BoxedStrategy<pb::Message> {
    let part = prop_oneof![
        text().prop_map(pb::content_part::Part::Text),
        (text(), text(), any::<u32>()).prop_map(|(uri, mime_type, token_estimate)| {
            pb::content_part::Part::Media(pb::MediaRef {
                uri,
                mime_type,
                token_estimate,
            })
        }),
    ];
    let tool_call = (text(), text(), text()).prop_map(|(id, name, arguments_json)| pb::ToolCall {
        id,
        name,
        arguments_json,
    });
    (
        enum_value(),
        text(),
        prop::collection::vec(prop::option::of(part), 0..3),
        text(),
        prop::collection::vec(tool_call, 0..3),
        text(),
        prop::collection::btree_map(text(), text(), 0..2),
    )
        .prop_map(
            |(role, content, parts, reasoning, tool_calls, tool_call_id, metadata)| pb::Message {
                role,
                content,
                parts: parts
                    .into_iter()
                    .map(|part| pb::ContentPart { part })
                    .collect(),
                reasoning,
                tool_calls,
                tool_call_id,
                metadata: metadata.into_iter().collect(),
                ..Default::default()
            },
        )
        .boxed()
}

fn policy() -> BoxedStrategy<Option<pb::Policy>> {
    let numbers = prop::collection::vec(prop::option::of(number()), 15);
    let ratios = prop::collection::vec(prop::option::of(ratio()), 6);
    let enums = prop::collection::vec(prop::option::of(enum_value()), 2);
    let flags = prop::option::of(any::<bool>());
    prop::option::of(
        (numbers, ratios, enums, prop::option::of(text()), flags).prop_map(
            |(n, r, e, summarizer_profile, recall_tools)| pb::Policy {
                context_window_tokens: n[0],
                max_output_tokens: n[1],
                fresh_tail_messages: n[2],
                fresh_tail_tokens: n[3],
                tool_output_protect_tokens: n[4],
                clear_min_savings_tokens: n[5],
                eviction_threshold_tokens: n[6],
                leaf_chunk_messages: n[7],
                leaf_chunk_tokens: n[8],
                leaf_target_tokens: n[9],
                condense_fanin: n[10],
                condensed_target_tokens: n[11],
                media_item_tokens: n[12],
                compaction_failure_limit: n[13],
                retention_seconds: n[14],
                heuristic_chars_per_token: r[0],
                clear_threshold: r[1],
                summarize_threshold: r[2],
                hard_limit: r[3],
                clear_target: r[4],
                ledger_fraction: r[5],
                tokenizer: e[0],
                summary_placement: e[1],
                summarizer_profile,
                recall_tools,
            },
        ),
    )
    .boxed()
}

fn tools() -> BoxedStrategy<Option<pb::Tools>> {
    let definition =
        (text(), text(), text()).prop_map(|(name, description, schema)| pb::ToolDefinition {
            name,
            description,
            parameters_json_schema: schema,
        });
    prop::option::of(prop_oneof![
        number().prop_map(pb::tools::Tools::TokenCount),
        prop::collection::vec(definition, 0..3)
            .prop_map(|items| pb::tools::Tools::Definitions(pb::ToolDefinitionList { items })),
    ])
    .prop_map(|tools| tools.map(|tools| pb::Tools { tools: Some(tools) }))
    .boxed()
}

fn usage() -> BoxedStrategy<Option<pb::Usage>> {
    prop::option::of((number(), number(), number()).prop_map(
        |(input_tokens, output_tokens, cached_input_tokens)| pb::Usage {
            input_tokens,
            output_tokens,
            cached_input_tokens,
        },
    ))
    .boxed()
}

fn timestamp() -> BoxedStrategy<Option<prost_types::Timestamp>> {
    prop::option::of(
        (any::<i64>(), any::<i32>())
            .prop_map(|(seconds, nanos)| prost_types::Timestamp { seconds, nanos }),
    )
    .boxed()
}

/// One random request to one RPC, sent through the generated client.
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)] // test values, built once each
enum Call {
    Create(pb::CreateSessionRequest),
    Get(pb::GetSessionRequest),
    Delete(pb::DeleteSessionRequest),
    Fork(pb::ForkSessionRequest),
    Append(pb::AppendTurnRequest),
    Build(pb::BuildMessagesRequest),
    Check(pb::CheckBudgetRequest),
    Expand(pb::ExpandRequest),
    Compact(pb::CompactRequest),
    Job(pb::GetJobRequest),
    Search(pb::SearchRequest),
    Finish(pb::FinishSessionRequest),
}

fn calls() -> BoxedStrategy<Call> {
    let target = prop::option::of(prop_oneof![
        (number(), number()).prop_map(|(first_seq, last_seq)| pb::expand_request::Target::Range(
            pb::SeqRange {
                first_seq,
                last_seq
            }
        )),
        prop::collection::vec(number(), 0..4)
            .prop_map(|seqs| pb::expand_request::Target::List(pb::SeqList { seqs })),
        number().prop_map(pb::expand_request::Target::SummaryId),
    ]);
    prop_oneof![
        (
            text(),
            policy(),
            prop::collection::hash_map(text(), text(), 0..2),
            text(),
            text()
        )
            .prop_map(
                |(session_id, policy, metadata, parent_session_id, parent_tool_call_id)| {
                    Call::Create(pb::CreateSessionRequest {
                        session_id,
                        policy,
                        metadata,
                        parent_session_id,
                        parent_tool_call_id,
                    })
                }
            ),
        (text(), text(), any::<bool>()).prop_map(|(session_id, final_answer, append_to_parent)| {
            Call::Finish(pb::FinishSessionRequest {
                session_id,
                final_answer,
                append_to_parent,
            })
        }),
        (text(), any::<bool>()).prop_map(|(session_id, include_view)| Call::Get(
            pb::GetSessionRequest {
                session_id,
                include_view
            }
        )),
        text().prop_map(|session_id| Call::Delete(pb::DeleteSessionRequest { session_id })),
        (
            text(),
            prop::option::of(number()),
            text(),
            policy(),
            prop::collection::hash_map(text(), text(), 0..2)
        )
            .prop_map(
                |(source_session_id, at_seq, session_id, policy, metadata)| Call::Fork(
                    pb::ForkSessionRequest {
                        source_session_id,
                        at_seq,
                        session_id,
                        policy,
                        metadata,
                    }
                )
            ),
        (
            text(),
            prop::collection::vec(message(), 0..4),
            prop::option::of(number()),
            text(),
            usage()
        )
            .prop_map(
                |(session_id, messages, expected_version, idempotency_key, usage)| {
                    Call::Append(pb::AppendTurnRequest {
                        session_id,
                        messages,
                        expected_version,
                        idempotency_key,
                        usage,
                    })
                }
            ),
        (
            text(),
            text(),
            tools(),
            prop::option::of(number()),
            enum_value()
        )
            .prop_map(
                |(session_id, system_prompt, tools, max_output_tokens, format)| {
                    Call::Build(pb::BuildMessagesRequest {
                        session_id,
                        system_prompt,
                        tools,
                        max_output_tokens,
                        format,
                    })
                }
            ),
        (
            text(),
            text(),
            tools(),
            prop::option::of(number()),
            prop::collection::vec(message(), 0..3)
        )
            .prop_map(
                |(session_id, system_prompt, tools, max_output_tokens, pending_messages)| {
                    Call::Check(pb::CheckBudgetRequest {
                        session_id,
                        system_prompt,
                        tools,
                        max_output_tokens,
                        pending_messages,
                    })
                }
            ),
        (text(), target, number()).prop_map(|(session_id, target, max_tokens)| Call::Expand(
            pb::ExpandRequest {
                session_id,
                target,
                max_tokens
            }
        )),
        // Waiting is left out: a random wait would only make the run long.
        (text(), enum_value(), number(), any::<bool>()).prop_map(
            |(session_id, mode, target_tokens, dry_run)| Call::Compact(pb::CompactRequest {
                session_id,
                mode,
                target_tokens,
                dry_run,
                wait: false,
                wait_timeout_ms: 0,
            })
        ),
        number().prop_map(|job_id| Call::Job(pb::GetJobRequest { job_id })),
        (
            text(),
            text(),
            prop::collection::vec(enum_value(), 0..3),
            timestamp(),
            timestamp(),
            enum_value(),
            number(),
            text()
        )
            .prop_map(
                |(session_id, query, roles, since, until, scope, limit, tree_root_session_id)| {
                    Call::Search(pb::SearchRequest {
                        session_id,
                        query,
                        roles,
                        since,
                        until,
                        scope,
                        limit: limit as u32,
                        tree_root_session_id,
                    })
                }
            ),
    ]
    .boxed()
}

async fn send(client: &mut Client, call: Call) -> Result<(), tonic::Status> {
    match call {
        Call::Create(request) => client.create_session(request).await.map(drop),
        Call::Get(request) => client.get_session(request).await.map(drop),
        Call::Delete(request) => client.delete_session(request).await.map(drop),
        Call::Fork(request) => client.fork_session(request).await.map(drop),
        Call::Append(request) => client.append_turn(request).await.map(drop),
        Call::Build(request) => client.build_messages(request).await.map(drop),
        Call::Check(request) => client.check_budget(request).await.map(drop),
        Call::Expand(request) => client.expand(request).await.map(drop),
        Call::Compact(request) => client.compact(request).await.map(drop),
        Call::Job(request) => client.get_job(request).await.map(drop),
        Call::Search(request) => client.search(request).await.map(drop),
        Call::Finish(request) => client.finish_session(request).await.map(drop),
    }
}

/// Random values in every field of every unary RPC, against a server holding a session
/// ("s") with a tool call ("call-1") and its result and an open one ("call-2"), so that
/// some requests reach past validation.
#[sqlx::test]
async fn random_field_values_never_answer_internal(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    create(&mut client, "s", window(8_000, 1_000)).await;
    append(&mut client, "s", vec![user("list the files")])
        .await
        .unwrap();
    append(&mut client, "s", vec![call(&["call-1"])])
        .await
        .unwrap();
    append(&mut client, "s", vec![result("call-1", "a.txt\nb.txt")])
        .await
        .unwrap();
    // An open call, which random children can be created for and finish into.
    append(&mut client, "s", vec![call(&["call-2"])])
        .await
        .unwrap();

    let mut runner = TestRunner::new(Config {
        cases: 400,
        ..Config::default()
    });
    let strategy = calls();
    for case in 0..400 {
        let call = strategy.new_tree(&mut runner).unwrap().current();
        let what = format!("case {case}: {call:.200?}");
        check(&what, send(&mut client, call).await);
    }
    // Still serving (the session may have been deleted by a random DeleteSession).
    let last = client
        .get_session(pb::GetSessionRequest {
            session_id: "s".into(),
            include_view: true,
        })
        .await;
    if let Err(status) = last {
        assert_eq!(status.code(), Code::NotFound, "{status:?}");
    }
    server.stop().await;
}
