//! Property tests through the real server: random sessions (parallel tool calls,
//! incomplete steps, pinned and oversized tool results) and random budgets, with or
//! without a Compact before the build. BuildMessages is never over budget, never returns
//! an orphaned tool call or result, preserves the log's order and never clears or evicts
//! a pinned message; Expand returns every appended message byte-exact.
use ctxd::pb;
use proptest::prelude::*;

use crate::harness::*;

#[derive(Debug, Clone)]
struct Step {
    results: Vec<usize>,
    /// Leave one call unanswered.
    incomplete: bool,
    /// Pin the first result.
    pin: bool,
}

#[derive(Debug, Clone)]
struct Turn {
    user_words: usize,
    steps: Vec<(Step, Vec<usize>)>,
    answer: bool,
}

fn turn() -> impl Strategy<Value = Turn> {
    let step = (
        1usize..=3,
        any::<bool>(),
        prop::collection::vec(prop_oneof![4 => 1usize..300, 1 => 300usize..3_000], 3),
        any::<u8>(),
    )
        .prop_map(|(calls, incomplete, sizes, seed)| {
            let mut order: Vec<usize> = (0..calls).collect();
            order.rotate_left(seed as usize % calls);
            (
                Step {
                    results: order,
                    incomplete: incomplete && seed % 4 == 0,
                    pin: seed % 5 == 1,
                },
                sizes,
            )
        });
    (
        1usize..400,
        prop::collection::vec(step, 0..3),
        any::<bool>(),
    )
        .prop_map(|(user_words, steps, answer)| Turn {
            user_words,
            steps,
            answer,
        })
}

fn words(n: usize) -> String {
    (0..n)
        .map(|i| format!("w{}", i % 97))
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn build_is_within_budget_provider_valid_and_ordered() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(async {
        let pool = fresh_database("ctxd_prop").await;
        TestServer::start(pool).await
    });
    let counter = std::sync::atomic::AtomicU64::new(0);
    let config = ProptestConfig {
        cases: 48,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    proptest!(config, |(turns in prop::collection::vec(turn(), 1..8), size in 600i64..12_000, divisor in 2i64..8, compact_to in prop::option::of(0i64..6_000))| {
        let id = format!("p{}", counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
        let mut client = server.client.clone();
        runtime.block_on(async {
            create(&mut client, &id, window(size, size / divisor)).await;
            let mut call_no = 0;
            let mut sent = Vec::new();
            for turn in &turns {
                let mut batch = vec![user(&words(turn.user_words))];
                for (step, sizes) in &turn.steps {
                    let ids: Vec<String> = step.results.iter().map(|_| { call_no += 1; format!("c{call_no}") }).collect();
                    let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
                    batch.push(call(&refs));
                    let answered = if step.incomplete { step.results.len() - 1 } else { step.results.len() };
                    for (rank, &which) in step.results.iter().take(answered).enumerate() {
                        let mut tool_result = result(&ids[which], &words(sizes[which]));
                        tool_result.pinned = step.pin && rank == 0;
                        batch.push(tool_result);
                    }
                }
                if turn.answer {
                    batch.push(assistant("done"));
                }
                sent.extend(batch.clone());
                append(&mut client, &id, batch).await.unwrap();
            }
            if let Some(target_tokens) = compact_to {
                let compacted = client
                    .compact(pb::CompactRequest {
                        session_id: id.clone(),
                        target_tokens,
                        wait: true,
                        ..Default::default()
                    })
                    .await
                    .unwrap()
                    .into_inner();
                prop_assert!(compacted.tokens_after <= compacted.tokens_before);
            }
            let limit = size - size / divisor;
            match build(&mut client, &id, pb::OutputFormat::Neutral).await {
                Ok(built) => {
                    let breakdown = built.budget.unwrap().breakdown.unwrap();
                    prop_assert!(breakdown.total_tokens <= limit, "{} > {}", breakdown.total_tokens, limit);
                    assert_provider_valid(&built.messages);
                    let seqs: Vec<i64> = built.messages.iter().map(|m| m.seq).filter(|&s| s > 0).collect();
                    prop_assert!(seqs.windows(2).all(|w| w[0] < w[1]), "order: {:?}", seqs);
                    if let Some(first) = built.messages.first() {
                        prop_assert_eq!(first.role, pb::Role::User as i32);
                    }
                    // The summaries (default placement): after the user message the
                    // request starts with when they cover steps after it, else in the
                    // system prompt; every one of them, once.
                    let blocks: Vec<usize> = (0..built.messages.len()).filter(|&i| built.messages[i].seq == 0).collect();
                    let steps = built.summaries.iter().any(|s| seqs.first().is_some_and(|&first| s.first_seq > first));
                    let block = if steps {
                        prop_assert_eq!(&blocks, &vec![1]);
                        prop_assert_eq!(built.messages[1].role, pb::Role::User as i32);
                        built.messages[1].content.as_str()
                    } else {
                        prop_assert!(blocks.is_empty(), "{:?}", blocks);
                        built.system_prompt.as_str()
                    };
                    for summary in &built.summaries {
                        prop_assert!(block.contains(&summary.content));
                    }
                    // Every message is in the request at most once: in the history or
                    // inside one summary. With nothing left out, exactly once.
                    let trimmed = built.trimmed.unwrap_or_default();
                    let mut seen = vec![0u32; sent.len() + 1];
                    for summary in &built.summaries {
                        for seq in summary.first_seq..=summary.last_seq {
                            seen[seq as usize] += 1;
                        }
                    }
                    for message in &built.messages {
                        seen[message.seq as usize] += 1;
                    }
                    prop_assert!(seen.iter().all(|&n| n <= 1), "covered twice: {:?}", seen);
                    if trimmed.turns == 0 && trimmed.summaries == 0 && trimmed.incomplete_step_messages == 0 {
                        prop_assert!(seen[1..].iter().all(|&n| n == 1), "not covered: {:?}", seen);
                    }
                    for message in built.messages.iter().filter(|m| m.pinned) {
                        prop_assert_eq!(message.view_state, pb::ViewState::Full as i32, "pinned seq {}", message.seq);
                    }
                    // Pinned messages are in the request: whole in the history, or
                    // verbatim inside the summary that covers them (unless the step they
                    // belong to was never completed and cannot be sent at all).
                    if trimmed.turns == 0 && trimmed.summaries == 0 && trimmed.incomplete_step_messages == 0 {
                        for (index, message) in sent.iter().enumerate().filter(|(_, m)| m.pinned) {
                            let seq = index as i64 + 1;
                            let present = built.messages.iter().any(|m| m.seq == seq)
                                || built.summaries.iter().any(|s| {
                                    (s.first_seq..=s.last_seq).contains(&seq) && s.content.contains(&message.content)
                                });
                            prop_assert!(present, "pinned seq {} is missing from the request", seq);
                        }
                    }
                }
                Err(status) => {
                    prop_assert_eq!(status.code(), tonic::Code::FailedPrecondition, "{}", status.message());
                    // Justified: the newest turn alone does not fit.
                    use tonic_types::StatusExt;
                    let info = status.get_error_details().error_info().cloned().unwrap();
                    let figure = |name: &str| info.metadata[name].parse::<i64>().unwrap();
                    prop_assert!(
                        figure("system_tokens") + figure("tool_tokens") + figure("newest_turn_tokens") > figure("available_tokens")
                    );
                }
            }
            // Nothing appended is lost, whatever the view shows.
            let expanded = client
                .expand(pb::ExpandRequest {
                    session_id: id.clone(),
                    target: Some(pb::expand_request::Target::Range(pb::SeqRange {
                        first_seq: 1,
                        last_seq: sent.len() as i64,
                    })),
                    max_tokens: 0,
                })
                .await
                .unwrap()
                .into_inner();
            prop_assert_eq!(expanded.messages.len(), sent.len());
            for (got, want) in expanded.messages.iter().zip(&sent) {
                prop_assert_eq!(&got.content, &want.content);
                prop_assert_eq!(&got.tool_calls, &want.tool_calls);
                prop_assert_eq!(&got.tool_call_id, &want.tool_call_id);
                prop_assert_eq!(got.pinned, want.pinned);
                if got.pinned {
                    // Never cleared or evicted; a summary may cover it (verbatim).
                    prop_assert!(
                        got.view_state == pb::ViewState::Full as i32
                            || got.view_state == pb::ViewState::Summarized as i32,
                        "pinned seq {} is {:?}", got.seq, got.view_state
                    );
                }
            }
            Ok(())
        })?;
    });
    runtime.block_on(server.stop());
}
