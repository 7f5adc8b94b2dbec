//! A property test through the real server: random appends, builds, compactions (every
//! mode) and reverts (dry or not) of random earlier compactions. After every revert the
//! view is what it was just before the reverted compaction (summaries, every message's
//! view state and tokens, and with nothing appended since the aggregates and the build
//! byte for byte as recorded then), the revert names exactly the compactions in force
//! from it on, and the kept aggregates equal a recount of the rows; every build is
//! within budget and provider-valid; Expand always returns what was appended.
use std::collections::{BTreeSet, HashMap};

use ctxd::pb;
use proptest::prelude::*;
use prost::Message as _;

use super::{by_cursor, kept_and_recounted, revert, session_events};
use crate::harness::*;

#[derive(Debug, Clone)]
enum Op {
    /// A turn: user words, steps of tool results (sizes), an answer.
    Append(usize, Vec<Vec<usize>>),
    Build,
    /// A build, then a Compact: mode (0 auto, 1 clear, 2 summarize, 3 emergency),
    /// target as a percentage of the request now.
    Compact(u8, i64),
    /// Revert one of the compactions recorded so far (by index, modulo), maybe dry.
    Revert(prop::sample::Index, bool),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (1usize..300, prop::collection::vec(prop::collection::vec(prop_oneof![4 => 1usize..300, 1 => 300usize..2_500], 1..3), 0..3))
            .prop_map(|(words, steps)| Op::Append(words, steps)),
        2 => Just(Op::Build),
        3 => (0u8..4, 10i64..90).prop_map(|(mode, percent)| Op::Compact(mode, percent)),
        4 => (any::<prop::sample::Index>(), any::<bool>()).prop_map(|(at, dry)| Op::Revert(at, dry)),
    ]
}

fn words(n: usize, salt: usize) -> String {
    (0..n)
        .map(|i| format!("w{}s{}", i % 89, salt % 13))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The session's view as it can be read without changing it.
#[derive(Debug, Clone, PartialEq)]
struct View {
    summaries: Vec<pb::Summary>,
    /// (seq, view state, view tokens) of every message.
    states: Vec<(i64, i32, i64)>,
    /// Message count, view tokens, summary tokens, cleared messages, summaries written.
    aggregates: [i64; 5],
}

async fn view(client: &mut Client, id: &str) -> View {
    let got = client
        .get_session(pb::GetSessionRequest {
            session_id: id.into(),
            include_view: true,
        })
        .await
        .unwrap()
        .into_inner();
    let session = got.session.unwrap();
    let stats = session.compaction.unwrap();
    let states = if session.message_count == 0 {
        Vec::new()
    } else {
        super::log(client, id, session.message_count)
            .await
            .iter()
            .map(|m| (m.seq, m.view_state, m.view_token_count))
            .collect()
    };
    View {
        summaries: got.summaries,
        states,
        aggregates: [
            session.message_count,
            session.view_tokens,
            stats.summary_tokens,
            stats.cleared_messages,
            stats.summaries_written,
        ],
    }
}

/// A build, checked: within the limit and provider-valid (or refused because the newest
/// turn alone cannot fit). Encoded with the version zeroed.
async fn checked_build(client: &mut Client, id: &str, limit: i64) -> Option<Vec<u8>> {
    match build(client, id, pb::OutputFormat::OpenaiChat).await {
        Ok(mut built) => {
            let total = built.budget.unwrap().breakdown.unwrap().total_tokens;
            assert!(total <= limit, "{total} > {limit}");
            assert_provider_valid(&built.messages);
            built.version = 0;
            Some(built.encode_to_vec())
        }
        Err(status) => {
            assert_eq!(status.code(), tonic::Code::FailedPrecondition, "{status:?}");
            None
        }
    }
}

/// A compaction the test can revert: its event, and the view just before it.
struct Point {
    cursor: String,
    seq: i64,
    before: View,
}

#[test]
fn reverts_give_back_the_view_before_the_compaction() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (server, pool) = runtime.block_on(async {
        let pool = fresh_database("ctxd_revert_prop").await;
        (TestServer::start(pool.clone()).await, pool)
    });
    let counter = std::sync::atomic::AtomicU64::new(0);
    // What the cases exercised: reverts made, dry runs, builds compared byte for byte.
    let (reverts, dry_runs, compared) = (
        std::sync::atomic::AtomicU64::new(0),
        std::sync::atomic::AtomicU64::new(0),
        std::sync::atomic::AtomicU64::new(0),
    );
    let count = |counter: &std::sync::atomic::AtomicU64| {
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    };
    let config = ProptestConfig {
        cases: 48,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    proptest!(config, |(ops in prop::collection::vec(op(), 6..24), size in 3_000i64..14_000, divisor in 3i64..8)| {
        let id = format!("r{}", counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
        let mut client = server.client.clone();
        let limit = size - size / divisor;
        runtime.block_on(async {
            create(&mut client, &id, pb::Policy {
                tool_output_protect_tokens: Some(size / 10),
                ..window(size, size / divisor)
            }).await;
            let mut sent: Vec<pb::Message> = Vec::new();
            let mut calls = 0;
            let mut points: Vec<Point> = Vec::new();
            // Compactions in force (event session_seq → cursor), and the newest event
            // seen.
            let mut live: BTreeSet<(i64, String)> = BTreeSet::new();
            let mut seen = 0;
            // Builds by the view they were made on.
            let mut builds: HashMap<String, Vec<u8>> = HashMap::new();
            let mut now = view(&mut client, &id).await;
            // A Compact comes right after a build, so the build before its compaction
            // is recorded.
            let steps: Vec<Op> = ops
                .iter()
                .flat_map(|op| match op {
                    Op::Compact(..) => vec![Op::Build, op.clone()],
                    _ => vec![op.clone()],
                })
                .collect();
            for op in &steps {
                let before = now.clone();
                match op {
                    Op::Append(user_words, steps) => {
                        let mut batch = vec![user(&words(*user_words, sent.len()))];
                        for step in steps {
                            let ids: Vec<String> = step.iter().map(|_| { calls += 1; format!("c{calls}") }).collect();
                            let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
                            batch.push(call(&refs));
                            for (call_id, size) in ids.iter().zip(step) {
                                batch.push(result(call_id, &words(*size, calls)));
                            }
                        }
                        batch.push(assistant("done"));
                        sent.extend(batch.clone());
                        append(&mut client, &id, batch).await.unwrap();
                    }
                    Op::Build => {}
                    Op::Compact(mode, percent) => {
                        let mode = [pb::CompactMode::Auto, pb::CompactMode::ClearToolResults, pb::CompactMode::Summarize, pb::CompactMode::Emergency][*mode as usize];
                        let tokens = client.check_budget(pb::CheckBudgetRequest { session_id: id.clone(), ..Default::default() })
                            .await.unwrap().into_inner().budget.unwrap().breakdown.unwrap().total_tokens;
                        client.compact(pb::CompactRequest {
                            session_id: id.clone(),
                            mode: mode as i32,
                            target_tokens: (tokens * percent / 100).max(1),
                            wait: true,
                            ..Default::default()
                        }).await.unwrap();
                    }
                    Op::Revert(at, dry_run) => {
                        let open: Vec<&Point> = points.iter().filter(|p| live.contains(&(p.seq, p.cursor.clone()))).collect();
                        if open.is_empty() {
                            continue;
                        }
                        let point = open[at.index(open.len())];
                        let done = revert(&mut client, by_cursor(&id, &point.cursor, *dry_run)).await.unwrap();
                        // Exactly the compactions in force from it on, newest first.
                        let expected: Vec<String> = live.iter().rev().filter(|(seq, _)| *seq >= point.seq).map(|(_, cursor)| cursor.clone()).collect();
                        let named: Vec<String> = done.reverted.iter().map(|r| r.event_cursor.clone()).collect();
                        prop_assert_eq!(&named, &expected);
                        prop_assert_eq!(done.applied, !dry_run);
                        let after = view(&mut client, &id).await;
                        count(if *dry_run { &dry_runs } else { &reverts });
                        if *dry_run {
                            prop_assert_eq!(&after, &before, "a dry run changed the view");
                        } else {
                            live.retain(|(seq, _)| *seq < point.seq);
                            let count = point.before.aggregates[0] as usize;
                            prop_assert_eq!(&after.summaries, &point.before.summaries);
                            prop_assert_eq!(&after.states[..count], &point.before.states[..]);
                            // Appended since: as they entered the view (whole or evicted).
                            for (seq, state, _) in &after.states[count..] {
                                prop_assert!(*state == pb::ViewState::Full as i32 || *state == pb::ViewState::Evicted as i32, "seq {} is {}", seq, state);
                            }
                            if after.states.len() == count {
                                prop_assert_eq!(after.aggregates, point.before.aggregates);
                            }
                        }
                        let (kept, recounted) = kept_and_recounted(&pool, &id).await;
                        prop_assert_eq!(kept, recounted);
                        // Held: this build compacts nothing; made on a view built before, it is
                        // that build byte for byte.
                        let key = format!("{:?}", view(&mut client, &id).await);
                        let built = checked_build(&mut client, &id, limit).await;
                        if let (Some(built), Some(earlier), false) = (&built, builds.get(&key), *dry_run) {
                            count(&compared);
                            prop_assert!(built == earlier, "the build after the revert differs from the one made on that view");
                        }
                    }
                }
                let built = match op {
                    Op::Build => checked_build(&mut client, &id, limit).await,
                    _ => None,
                };
                now = view(&mut client, &id).await;
                if let Some(built) = built {
                    // What a build returns on the view it leaves (compacted first, if due).
                    builds.insert(format!("{now:?}"), built);
                }
                // The compactions this op committed; the first can be reverted to `before`.
                let events = session_events(&mut client, &id).await;
                let mut first = true;
                for event in events.iter().filter(|e| e.session_seq > seen) {
                    let compaction = event.kind == pb::EventKind::ToolResultsCleared as i32
                        || event.kind == pb::EventKind::CompactionCompleted as i32;
                    if compaction {
                        live.insert((event.session_seq, event.cursor.clone()));
                        if first && !matches!(op, Op::Revert(..)) {
                            points.push(Point { cursor: event.cursor.clone(), seq: event.session_seq, before: before.clone() });
                        }
                        first = false;
                    }
                }
                seen = events.last().map_or(seen, |e| e.session_seq);
            }
            // Nothing appended is lost, whatever was compacted and reverted.
            if !sent.is_empty() {
                let log = super::log(&mut client, &id, sent.len() as i64).await;
                prop_assert_eq!(log.len(), sent.len());
                for (got, want) in log.iter().zip(&sent) {
                    prop_assert_eq!(&got.content, &want.content);
                    prop_assert_eq!(&got.tool_calls, &want.tool_calls);
                    prop_assert_eq!(&got.tool_call_id, &want.tool_call_id);
                }
            }
            Ok(())
        })?;
    });
    runtime.block_on(server.stop());
    let read =
        |counter: &std::sync::atomic::AtomicU64| counter.load(std::sync::atomic::Ordering::Relaxed);
    println!(
        "reverts {}, dry runs {}, builds compared {}",
        read(&reverts),
        read(&dry_runs),
        read(&compared)
    );
    assert!(
        read(&reverts) >= 10 && read(&dry_runs) >= 5 && read(&compared) >= 5,
        "too little exercised"
    );
}
