//! Reverted summarization passes: leaf and condensed summaries (by a summary they
//! wrote), and the step summaries of one long turn (by their event's cursor), each time
//! the build before the compaction back byte for byte and the aggregates adding up.
use ctxd::pb;
use sqlx::PgPool;

use super::{
    as_appended, assert_aggregates_add_up, assert_restored, by_cursor, by_summary, compact,
    corpus_policy, corpus_session, log, of_kind, revert, session_events, snapshot,
};
use crate::harness::*;

#[sqlx::test]
async fn reverted_summaries_leaf_and_condensed_give_back_each_earlier_build(pool: PgPool) {
    let server = TestServer::start(pool.clone()).await;
    let mut client = server.client.clone();
    let count = corpus_session(&mut client, "s", &[0, 7, 9, 15, 1], corpus_policy()).await as i64;
    let appended = as_appended(log(&mut client, "s", count).await);
    // Three Compacts, each down to less: a snapshot before each, and the first
    // compaction each committed.
    let mut snapshots = vec![snapshot(&mut client, "s").await];
    let mut firsts: Vec<pb::Event> = Vec::new();
    let mut seen = 0;
    let start = snapshots[0].builds[0]
        .budget
        .unwrap()
        .breakdown
        .unwrap()
        .total_tokens;
    for fraction in [80, 55, 35] {
        let done = compact(
            &mut client,
            "s",
            pb::CompactMode::Summarize,
            start * fraction / 100,
        )
        .await;
        assert!(done.applied, "{done:?}");
        let events = of_kind(
            &session_events(&mut client, "s").await,
            pb::EventKind::CompactionCompleted,
        );
        assert!(
            events.len() > seen,
            "Compact to {fraction}% committed nothing"
        );
        firsts.push(events[seen].clone());
        seen = events.len();
        snapshots.push(snapshot(&mut client, "s").await);
        assert_aggregates_add_up(&pool, "s").await;
    }
    let summaries = &snapshots.last().unwrap().summaries;
    assert!(
        summaries.iter().any(|s| s.depth >= 1),
        "no condensed summary: {:?}",
        summaries
            .iter()
            .map(|s| (s.depth, s.first_seq, s.last_seq))
            .collect::<Vec<_>>()
    );
    assert!(snapshots[3].aggregates[6].1 > snapshots[0].aggregates[6].1);

    // Newest first: each Compact's first pass named by a summary it wrote (leaf or
    // condensed); the build is the one before that Compact.
    for index in (0..3).rev() {
        let Some(pb::event::Detail::CompactionCompleted(completed)) = &firsts[index].detail else {
            panic!("{:?}", firsts[index]);
        };
        let dry = revert(&mut client, by_summary("s", completed.summary_id, true))
            .await
            .unwrap();
        assert!(!dry.applied);
        assert_restored(
            &snapshot(&mut client, "s").await,
            &snapshots[index + 1],
            "dry run",
        );
        let done = revert(&mut client, by_summary("s", completed.summary_id, false))
            .await
            .unwrap();
        assert!(done.applied);
        assert_eq!(
            done.reverted.last().unwrap().event_cursor,
            firsts[index].cursor
        );
        assert!(
            done.reverted
                .iter()
                .all(|r| r.kind == pb::EventKind::CompactionCompleted as i32)
        );
        assert_eq!(done.summaries, snapshots[index].summaries);
        assert_restored(
            &snapshot(&mut client, "s").await,
            &snapshots[index],
            "reverted summaries",
        );
        assert_aggregates_add_up(&pool, "s").await;
        // The reverted summaries stay readable, marked.
        let view = client
            .get_session(pb::GetSessionRequest {
                session_id: "s".into(),
                include_view: true,
            })
            .await
            .unwrap()
            .into_inner();
        let written: Vec<i64> = done
            .reverted
            .iter()
            .flat_map(|r| r.summary_ids.clone())
            .collect();
        for id in &written {
            let listed = view.reverted_summaries.iter().find(|s| s.summary_id == *id);
            assert!(
                listed.is_some_and(|s| s.reverted),
                "summary {id} not listed as reverted"
            );
            let covered = client
                .expand(pb::ExpandRequest {
                    session_id: "s".into(),
                    target: Some(pb::expand_request::Target::SummaryId(*id)),
                    max_tokens: 0,
                })
                .await
                .unwrap()
                .into_inner();
            assert!(!covered.messages.is_empty());
        }
    }
    assert_eq!(as_appended(log(&mut client, "s", count).await), appended);
    assert_eq!(
        of_kind(
            &session_events(&mut client, "s").await,
            pb::EventKind::CompactionReverted
        )
        .len(),
        3
    );
    server.stop().await;
}

#[sqlx::test]
async fn step_summaries_of_one_long_turn_come_back_into_the_view(pool: PgPool) {
    let server = TestServer::start(pool.clone()).await;
    let mut client = server.client.clone();
    // One trajectory: one turn, so summarizing takes its older steps.
    let count = corpus_session(&mut client, "s", &[6], corpus_policy()).await as i64;
    let before = snapshot(&mut client, "s").await;
    let tokens = before.builds[0]
        .budget
        .unwrap()
        .breakdown
        .unwrap()
        .total_tokens;
    let done = compact(&mut client, "s", pb::CompactMode::Summarize, tokens / 2).await;
    assert!(done.applied, "{done:?}");
    let summarized = log(&mut client, "s", count).await;
    let taken: Vec<i64> = summarized
        .iter()
        .filter(|m| m.view_state == pb::ViewState::Summarized as i32)
        .map(|m| m.seq)
        .collect();
    assert!(!taken.is_empty());
    let events = session_events(&mut client, "s").await;
    let first = of_kind(&events, pb::EventKind::CompactionCompleted).remove(0);

    let reverted = revert(&mut client, by_cursor("s", &first.cursor, false))
        .await
        .unwrap();
    assert!(
        reverted.reverted.iter().all(|r| !r.seqs.is_empty()),
        "step passes take messages out"
    );
    assert!(taken.iter().all(|seq| reverted.restored_seqs.contains(seq)));
    assert_restored(
        &snapshot(&mut client, "s").await,
        &before,
        "reverted step summaries",
    );
    assert_aggregates_add_up(&pool, "s").await;
    let restored = log(&mut client, "s", count).await;
    assert!(
        restored
            .iter()
            .all(|m| m.view_state != pb::ViewState::Summarized as i32)
    );
    server.stop().await;
}
