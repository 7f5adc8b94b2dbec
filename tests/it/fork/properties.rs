//! Random trees of forks through the real server: random appends (tool steps left open
//! across appends), forks at any seq of any session, compactions of every kind, reverts
//! of any active summary's compaction (its own, or refused as its source's), builds
//! (which compact when due) and deletions. After every operation, every live session's
//! Expand equals the messages appended to it (its shared prefix included), and every
//! session the operation was not on returns exactly what it returned before (history
//! with view states, active summaries, counters); at the end every session builds
//! provider-valid and within budget.
use ctxd::pb;
use proptest::prelude::*;

use super::{assert_view_consistent, fork, history, written};
use crate::harness::*;

/// Sessions a tree grows to at most.
const MAX_SESSIONS: usize = 5;
const WINDOW: i64 = 6_000;
const OUTPUT: i64 = 1_000;

#[derive(Debug, Clone)]
enum Op {
    /// A turn to a session: a user message, `steps` tool steps, an answer; the last step
    /// left open (its result comes with the session's next append) when `open`.
    Append {
        session: usize,
        words: usize,
        steps: usize,
        open: bool,
    },
    /// A fork of a session at `frac` of its log.
    Fork {
        session: usize,
        frac: f64,
    },
    Compact {
        session: usize,
        mode: i32,
        target: i64,
    },
    /// RevertCompaction of the pass that wrote the `pick`-th active summary (after an
    /// emergency compaction when the session has none).
    Revert {
        session: usize,
        pick: usize,
    },
    Build {
        session: usize,
    },
    Delete {
        session: usize,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (any::<usize>(), 1usize..700, 0usize..3, prop::bool::weighted(0.3))
            .prop_map(|(session, words, steps, open)| Op::Append { session, words, steps, open }),
        3 => (any::<usize>(), 0.0f64..=1.0).prop_map(|(session, frac)| Op::Fork { session, frac }),
        2 => (any::<usize>(), 1i32..=4, 0i64..3_000)
            .prop_map(|(session, mode, target)| Op::Compact { session, mode, target }),
        2 => (any::<usize>(), any::<usize>()).prop_map(|(session, pick)| Op::Revert { session, pick }),
        1 => any::<usize>().prop_map(|session| Op::Build { session }),
        1 => any::<usize>().prop_map(|session| Op::Delete { session }),
    ]
}

/// A live session of the tree as the test knows it.
#[derive(Debug, Clone)]
struct Branch {
    id: String,
    log: Vec<pb::Message>,
    /// The call of the last append's open step, to answer first in the next one.
    open: Option<String>,
}

fn words(n: usize, tag: &str) -> String {
    (0..n)
        .map(|i| format!("{tag}w{}", i % 89))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Everything a session returns without changing: its history with view states, its
/// active summaries and its counters.
async fn returns(
    client: &mut Client,
    id: &str,
) -> (Vec<pb::Message>, Vec<pb::Summary>, pb::Session) {
    let history = history(client, id).await;
    let view = client
        .get_session(pb::GetSessionRequest {
            session_id: id.into(),
            include_view: true,
        })
        .await
        .unwrap()
        .into_inner();
    let mut row = view.session.unwrap();
    // Times move on their own.
    row.updated_at = None;
    (history, view.summaries, row)
}

#[test]
fn forks_appends_compactions_and_reverts_never_cross_branches() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(async {
        let pool = fresh_database("ctxd_fork_prop").await;
        TestServer::start(pool).await
    });
    let counter = std::sync::atomic::AtomicU64::new(0);
    // Reverts that went through: a revert refused every time would prove nothing.
    let reverted = std::sync::atomic::AtomicU64::new(0);
    let config = ProptestConfig {
        cases: 24,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    proptest!(config, |(ops in prop::collection::vec(op(), 4..18))| {
        let case = counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut client = server.client.clone();
        runtime.block_on(async {
            let root = format!("t{case}");
            create(&mut client, &root, window(WINDOW, OUTPUT)).await;
            let mut branches = vec![Branch { id: root, log: Vec::new(), open: None }];
            let mut made = 0usize;
            let mut calls = 0usize;
            for op in &ops {
                if branches.is_empty() {
                    break;
                }
                let target = match op {
                    Op::Append { session, .. } | Op::Fork { session, .. } | Op::Compact { session, .. }
                    | Op::Revert { session, .. } | Op::Build { session } | Op::Delete { session } => {
                        session % branches.len()
                    }
                };
                let target_id = branches[target].id.clone();
                let mut others = Vec::new();
                for branch in branches.iter().filter(|b| b.id != target_id) {
                    others.push((branch.id.clone(), returns(&mut client, &branch.id).await));
                }
                match op {
                    Op::Append { words: size, steps, open, .. } => {
                        let branch = &mut branches[target];
                        let mut batch = Vec::new();
                        if let Some(call_id) = branch.open.take() {
                            batch.push(result(&call_id, &words(size / 2 + 1, &format!("{}r", branch.id))));
                        }
                        batch.push(user(&words(*size, &branch.id)));
                        for step in 0..*steps {
                            calls += 1;
                            let call_id = format!("c{case}x{calls}");
                            batch.push(call(&[&call_id]));
                            if *open && step + 1 == *steps {
                                branch.open = Some(call_id);
                            } else {
                                batch.push(result(&call_id, &words(size * 2, &format!("{}t", branch.id))));
                            }
                        }
                        if branch.open.is_none() {
                            batch.push(assistant(&format!("{} done", branch.id)));
                        }
                        append(&mut client, &branch.id, batch.clone()).await.unwrap();
                        branch.log.extend(batch);
                    }
                    Op::Fork { frac, .. } => {
                        if branches.len() < MAX_SESSIONS {
                            let source = branches[target].clone();
                            let at = (source.log.len() as f64 * frac).floor() as i64;
                            made += 1;
                            let id = format!("{}-f{made}", source.id);
                            let forked = fork(&mut client, &source.id, Some(at), &id).await.unwrap();
                            prop_assert_eq!(forked.message_count, at);
                            let log = source.log[..at as usize].to_vec();
                            // A step open at the cut stays open in the fork.
                            let open = open_call(&log);
                            branches.push(Branch { id, log, open });
                        }
                    }
                    Op::Compact { mode, target: tokens, .. } => {
                        let result = client
                            .compact(pb::CompactRequest {
                                session_id: target_id.clone(),
                                mode: *mode,
                                target_tokens: *tokens,
                                wait: true,
                                ..Default::default()
                            })
                            .await;
                        if let Err(status) = result {
                            prop_assert_eq!(status.code(), tonic::Code::FailedPrecondition, "{}", status.message());
                        }
                    }
                    Op::Revert { pick, .. } => {
                        let mut summaries = active_summaries(&mut client, &target_id).await;
                        if summaries.is_empty() {
                            // Something to revert: an emergency compaction first (refused
                            // when there is too little to summarize).
                            let _ = client
                                .compact(pb::CompactRequest {
                                    session_id: target_id.clone(),
                                    mode: pb::CompactMode::Emergency as i32,
                                    ..Default::default()
                                })
                                .await;
                            summaries = active_summaries(&mut client, &target_id).await;
                        }
                        if !summaries.is_empty() {
                            let summary_id = summaries[pick % summaries.len()].summary_id;
                            let result = client
                                .revert_compaction(pb::RevertCompactionRequest {
                                    session_id: target_id.clone(),
                                    compaction: Some(pb::revert_compaction_request::Compaction::SummaryId(summary_id)),
                                    ..Default::default()
                                })
                                .await;
                            // A summary the fork reuses from its source is reverted there.
                            match result {
                                Ok(_) => {
                                    reverted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                                }
                                Err(status) => {
                                    prop_assert_eq!(status.code(), tonic::Code::FailedPrecondition, "{}", status.message());
                                }
                            }
                        }
                    }
                    Op::Build { .. } => {
                        check_build(&mut client, &target_id).await?;
                    }
                    Op::Delete { .. } => {
                        client
                            .delete_session(pb::DeleteSessionRequest { session_id: target_id.clone() })
                            .await
                            .unwrap();
                        branches.remove(target);
                    }
                }
                // Every other session returns what it returned before.
                for (id, before) in others {
                    let after = returns(&mut client, &id).await;
                    prop_assert!(after == before, "{:?} on {} changed {}", op, target_id, id);
                }
                // Every session's history is what was appended to it, and its view
                // tokens are what the history says of its view.
                for branch in &branches {
                    assert_view_consistent(&mut client, &branch.id).await;
                    let got = history(&mut client, &branch.id).await;
                    prop_assert_eq!(got.len(), branch.log.len(), "{} after {:?}", branch.id, op);
                    for (got, want) in got.iter().zip(&branch.log) {
                        prop_assert_eq!(written(got), written(want), "{} seq {}", branch.id, got.seq);
                    }
                }
            }
            for branch in &branches {
                check_build(&mut client, &branch.id).await?;
            }
            Ok(())
        })?;
    });
    runtime.block_on(server.stop());
    assert!(
        reverted.load(std::sync::atomic::Ordering::Relaxed) > 0,
        "no revert went through in any case"
    );
}

/// A session's active summaries, oldest first.
async fn active_summaries(client: &mut Client, id: &str) -> Vec<pb::Summary> {
    session_view(client, id).await.summaries
}

/// The call of a last step left unanswered at the end of `log`, if any.
fn open_call(log: &[pb::Message]) -> Option<String> {
    let last = log.last()?;
    (last.role == pb::Role::Assistant as i32 && !last.tool_calls.is_empty())
        .then(|| last.tool_calls[0].id.clone())
}

async fn check_build(client: &mut Client, id: &str) -> Result<(), TestCaseError> {
    match build(client, id, pb::OutputFormat::Neutral).await {
        Ok(built) => {
            let breakdown = built.budget.unwrap().breakdown.unwrap();
            prop_assert!(
                breakdown.total_tokens <= WINDOW - OUTPUT,
                "{} over budget: {}",
                id,
                breakdown.total_tokens
            );
            assert_provider_valid(&built.messages);
            // Each seq at most once, in one summary or in the history; exactly once when
            // nothing was left out to fit.
            let count = session(client, id).await.message_count as usize;
            let mut seen = vec![0u32; count + 1];
            for summary in &built.summaries {
                for seq in summary.first_seq..=summary.last_seq {
                    seen[seq as usize] += 1;
                }
            }
            for message in &built.messages {
                seen[message.seq as usize] += 1;
            }
            prop_assert!(
                seen.iter().all(|&n| n <= 1),
                "{} covers twice: {:?}",
                id,
                seen
            );
            let trimmed = built.trimmed.unwrap_or_default();
            if trimmed.turns == 0 && trimmed.summaries == 0 && trimmed.incomplete_step_messages == 0
            {
                prop_assert!(
                    seen[1..].iter().all(|&n| n == 1),
                    "{} leaves out: {:?}",
                    id,
                    seen
                );
            }
        }
        Err(status) => {
            // Only when the newest turn alone cannot fit.
            prop_assert_eq!(
                status.code(),
                tonic::Code::FailedPrecondition,
                "{}",
                status.message()
            );
        }
    }
    Ok(())
}
