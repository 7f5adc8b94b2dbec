//! RevertCompaction in a fork: a compaction the fork made (a clearing of tool results it
//! inherited, and a summarization pass over inherited messages and summaries) reverted
//! gives back the fork's build byte for byte, with its view of every inherited message
//! (its overlay), while the source's build, view and summaries never change; a
//! compaction the fork inherited (a summary its source wrote) cannot be reverted in the
//! fork; and the source's own revert leaves the fork as it was.
use ctxd::pb;
use sqlx::PgPool;
use tonic::Code;

use super::{
    assert_restored, by_cursor, by_summary, compact, corpus_policy, corpus_session, log, of_kind,
    revert, session_events, snapshot,
};
use crate::fork::fork;
use crate::harness::*;

#[sqlx::test]
async fn a_revert_in_a_fork_restores_the_fork_and_leaves_the_source_alone(pool: PgPool) {
    let server = TestServer::start(pool.clone()).await;
    let mut client = server.client.clone();
    let count = corpus_session(&mut client, "s", &[0, 1, 2], corpus_policy()).await as i64;
    let start = snapshot(&mut client, "s").await.builds[0]
        .budget
        .unwrap()
        .breakdown
        .unwrap()
        .total_tokens;
    // The source summarizes part of its log first: the fork reuses those summaries.
    let done = compact(
        &mut client,
        "s",
        pb::CompactMode::Summarize,
        start * 85 / 100,
    )
    .await;
    assert!(done.applied, "{done:?}");
    let source_summary = session_events(&mut client, "s").await;
    let source_summary = of_kind(&source_summary, pb::EventKind::CompactionCompleted)
        .pop()
        .unwrap();
    let Some(pb::event::Detail::CompactionCompleted(source_completed)) = &source_summary.detail
    else {
        panic!("{source_summary:?}");
    };

    fork(&mut client, "s", None, "f").await.unwrap();
    let source_before = snapshot(&mut client, "s").await;
    let source_log = log(&mut client, "s", count).await;
    let fork_before = snapshot(&mut client, "f").await;
    let fork_log = log(&mut client, "f", count).await;
    assert!(
        !fork_before.summaries.is_empty(),
        "the fork reuses the source's summaries"
    );
    assert_eq!(
        fork_log, source_log,
        "the fork starts with the source's view"
    );

    // The fork clears tool results it inherited (its overlay), then summarizes further.
    let tokens = fork_before.builds[0]
        .budget
        .unwrap()
        .breakdown
        .unwrap()
        .total_tokens;
    let cleared = compact(
        &mut client,
        "f",
        pb::CompactMode::ClearToolResults,
        tokens * 3 / 4,
    )
    .await;
    assert!(
        cleared.applied && !cleared.cleared_seqs.is_empty(),
        "{cleared:?}"
    );
    let summarized = compact(&mut client, "f", pb::CompactMode::Summarize, tokens / 3).await;
    assert!(summarized.applied, "{summarized:?}");
    let compacted = snapshot(&mut client, "f").await;
    assert_ne!(compacted.aggregates, fork_before.aggregates);
    assert_ne!(log(&mut client, "f", count).await, fork_log);
    assert_restored(
        &snapshot(&mut client, "s").await,
        &source_before,
        "source after the fork compacted",
    );
    assert_eq!(log(&mut client, "s", count).await, source_log);

    // A summary the fork inherited is its source's compaction: not revertible here.
    let inherited = revert(
        &mut client,
        by_summary("f", source_completed.summary_id, false),
    )
    .await
    .unwrap_err();
    assert_eq!(inherited.code(), Code::FailedPrecondition, "{inherited:?}");
    assert!(inherited.message().contains("summary_id"), "{inherited:?}");
    assert_restored(
        &snapshot(&mut client, "f").await,
        &compacted,
        "after a refused revert",
    );

    // Reverting the fork's first compaction (the clearing) reverts the later one too.
    let events = session_events(&mut client, "f").await;
    let clearing = of_kind(&events, pb::EventKind::ToolResultsCleared)
        .pop()
        .unwrap();
    let dry = revert(&mut client, by_cursor("f", &clearing.cursor, true))
        .await
        .unwrap();
    assert!(!dry.applied);
    assert_restored(&snapshot(&mut client, "f").await, &compacted, "dry run");
    let done = revert(&mut client, by_cursor("f", &clearing.cursor, false))
        .await
        .unwrap();
    assert!(done.applied && done.reverted.len() >= 2, "{done:?}");
    assert_restored(
        &snapshot(&mut client, "f").await,
        &fork_before,
        "fork after its revert",
    );
    assert_eq!(
        log(&mut client, "f", count).await,
        fork_log,
        "the fork's view states"
    );
    assert_restored(
        &snapshot(&mut client, "s").await,
        &source_before,
        "source after the fork's revert",
    );
    assert_eq!(log(&mut client, "s", count).await, source_log);

    // The source's own revert changes the source, never the fork.
    let source_revert = revert(&mut client, by_cursor("s", &source_summary.cursor, false))
        .await
        .unwrap();
    assert!(source_revert.applied, "{source_revert:?}");
    assert_ne!(
        snapshot(&mut client, "s").await.summaries,
        source_before.summaries
    );
    assert_restored(
        &snapshot(&mut client, "f").await,
        &fork_before,
        "fork after the source's revert",
    );
    assert_eq!(log(&mut client, "f", count).await, fork_log);
}
