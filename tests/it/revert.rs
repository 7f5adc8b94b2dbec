//! RevertCompaction end to end on sessions of the recorded corpus: a clearing, leaf and
//! condensed summaries and step summaries reverted, each time the build equal byte for
//! byte to the build before the compaction (same request), the aggregates equal and
//! equal to a recount of the rows, the event on the stream, automatic compaction held
//! until the session grows or a Compact; reverting an earlier compaction reverts the
//! later ones; a dry run changes nothing. Summaries: `revert/summaries.rs`; the wait
//! of automatic compaction: `revert/hold.rs`; bad input: `revert/input.rs`; in a fork: `revert/fork.rs`; random
//! sequences: `revert/properties.rs`.
mod fork;
mod hold;
mod input;
mod properties;
mod summaries;

use ctxd::pb;
use prost::Message as _;
use sqlx::PgPool;
use tonic::Code;

use crate::events::until_live;
use crate::harness::*;
use crate::recorded::{corpus_files, load};

/// A session of the corpus trajectories `files`, one after the other (each starts with
/// its task as a user message: a turn each). The last assistant message is appended
/// with the provider's count of the build before it, so the session has an anchor.
pub(crate) async fn corpus_session(
    client: &mut Client,
    id: &str,
    files: &[usize],
    policy: pb::Policy,
) -> usize {
    create(client, id, policy).await;
    let paths = corpus_files();
    let mut messages: Vec<pb::Message> = Vec::new();
    for &file in files {
        messages.extend(load(&paths[file]).messages.into_iter().map(|(m, _)| m));
    }
    let last_answer = messages
        .iter()
        .rposition(|m| m.role == pb::Role::Assistant as i32)
        .unwrap();
    for chunk in messages[..last_answer].chunks(100) {
        append(client, id, chunk.to_vec()).await.unwrap();
    }
    let built = build(client, id, pb::OutputFormat::Neutral).await.unwrap();
    let counted = built
        .budget
        .unwrap()
        .breakdown
        .unwrap()
        .tokenizer_total_tokens;
    client
        .append_turn(pb::AppendTurnRequest {
            session_id: id.into(),
            messages: messages[last_answer..].to_vec(),
            usage: Some(pb::Usage {
                input_tokens: counted + counted / 40,
                output_tokens: 100,
                cached_input_tokens: 0,
            }),
            ..Default::default()
        })
        .await
        .unwrap();
    messages.len()
}

/// A large window (nothing compacts by itself), only the newest 4 000 tokens of tool
/// output protected from clearing, small chunks, condensing by pairs.
pub(crate) fn corpus_policy() -> pb::Policy {
    pb::Policy {
        context_window_tokens: Some(1_000_000),
        max_output_tokens: Some(8_000),
        tool_output_protect_tokens: Some(4_000),
        leaf_chunk_tokens: Some(4_000),
        condense_fanin: Some(2),
        ..Default::default()
    }
}

/// What a revert must restore: the builds of the same requests (encoded, the version
/// zeroed), the session's aggregates, its summaries, and the log.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Snapshot {
    builds: Vec<pb::BuildMessagesResponse>,
    aggregates: Vec<(&'static str, i64)>,
    summaries: Vec<pb::Summary>,
}

pub(crate) async fn snapshot(client: &mut Client, id: &str) -> Snapshot {
    let mut builds = Vec::new();
    for format in [
        pb::OutputFormat::Neutral,
        pb::OutputFormat::AnthropicMessages,
    ] {
        let mut built = build(client, id, format).await.unwrap();
        built.version = 0;
        builds.push(built);
    }
    let view = client
        .get_session(pb::GetSessionRequest {
            session_id: id.into(),
            include_view: true,
        })
        .await
        .unwrap()
        .into_inner();
    let session = view.session.unwrap();
    let compaction = session.compaction.unwrap();
    Snapshot {
        builds,
        aggregates: vec![
            ("message_count", session.message_count),
            ("turn_count", session.turn_count),
            ("log_tokens", session.log_tokens),
            ("view_tokens", session.view_tokens),
            ("cleared_messages", compaction.cleared_messages),
            ("evicted_messages", compaction.evicted_messages),
            ("summaries_written", compaction.summaries_written),
            ("summary_tokens", compaction.summary_tokens),
        ],
        summaries: view.summaries,
    }
}

/// `got` is `want`: the builds byte for byte (said briefly when not), the aggregates and
/// the summaries.
pub(crate) fn assert_restored(got: &Snapshot, want: &Snapshot, what: &str) {
    for (index, (got, want)) in got.builds.iter().zip(&want.builds).enumerate() {
        if got.encode_to_vec() != want.encode_to_vec() {
            let seqs = |b: &pb::BuildMessagesResponse| {
                b.messages
                    .iter()
                    .map(|m| (m.seq, m.view_state))
                    .collect::<Vec<_>>()
            };
            panic!(
                "{what}: build {index} differs: messages {:?} vs {:?}; summaries {:?} vs {:?}; budget {:?} vs {:?}",
                seqs(got).len(),
                seqs(want).len(),
                got.summaries
                    .iter()
                    .map(|s| s.summary_id)
                    .collect::<Vec<_>>(),
                want.summaries
                    .iter()
                    .map(|s| s.summary_id)
                    .collect::<Vec<_>>(),
                got.budget,
                want.budget
            );
        }
    }
    assert_eq!(got.aggregates, want.aggregates, "{what}: aggregates");
    assert_eq!(got.summaries, want.summaries, "{what}: summaries");
}

/// The session's kept view aggregates and the same recounted from its rows: (view
/// tokens, summary tokens) twice.
pub(crate) async fn kept_and_recounted(pool: &PgPool, id: &str) -> ((i64, i64), (i64, i64)) {
    let (view, summaries, recounted_view, summary_counts, policy): (
        i64,
        i64,
        i64,
        Vec<i64>,
        serde_json::Value,
    ) = sqlx::query_as(
        "select s.view_tokens, s.summary_tokens,
            (select coalesce(sum(m.view_tokens), 0)::bigint from messages m
             where m.session_id = s.id and m.seq >= s.view_first_seq and m.view_state <> 4),
            (select coalesce(array_agg(su.token_count::bigint), '{}') from summaries su
             where su.session_id = s.id and su.parent_id is null and su.reverted_at is null),
            s.policy
         from sessions s where s.external_id = $1",
    )
    .bind(id)
    .fetch_one(pool)
    .await
    .unwrap();
    // The summaries' block as the session's tokenizer counts it (each summary with its
    // framing, the block's header).
    let policy: ctxd::policy::Policy = serde_json::from_value(policy).unwrap();
    let recounted_summaries = ctxd::summarize::block_tokens(summary_counts, &policy.counter());
    ((view, summaries), (recounted_view, recounted_summaries))
}

pub(crate) async fn assert_aggregates_add_up(pool: &PgPool, id: &str) {
    let (kept, recounted) = kept_and_recounted(pool, id).await;
    assert_eq!(kept, recounted, "kept (view, summary) tokens vs the rows");
}

/// Every event of the session so far.
pub(crate) async fn session_events(client: &mut Client, id: &str) -> Vec<pb::Event> {
    let mut stream = client
        .subscribe_events(pb::SubscribeEventsRequest {
            session_id: id.into(),
            heartbeat_interval_ms: 200,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    until_live(&mut stream).await
}

pub(crate) fn of_kind(events: &[pb::Event], kind: pb::EventKind) -> Vec<pb::Event> {
    events
        .iter()
        .filter(|e| e.kind == kind as i32)
        .cloned()
        .collect()
}

pub(crate) fn by_cursor(id: &str, cursor: &str, dry_run: bool) -> pb::RevertCompactionRequest {
    pb::RevertCompactionRequest {
        session_id: id.into(),
        compaction: Some(pb::revert_compaction_request::Compaction::EventCursor(
            cursor.into(),
        )),
        dry_run,
        expected_version: None,
    }
}

pub(crate) fn by_summary(id: &str, summary_id: i64, dry_run: bool) -> pb::RevertCompactionRequest {
    pb::RevertCompactionRequest {
        compaction: Some(pb::revert_compaction_request::Compaction::SummaryId(
            summary_id,
        )),
        ..by_cursor(id, "", dry_run)
    }
}

pub(crate) async fn revert(
    client: &mut Client,
    request: pb::RevertCompactionRequest,
) -> Result<pb::RevertCompactionResponse, tonic::Status> {
    client
        .revert_compaction(request)
        .await
        .map(tonic::Response::into_inner)
}

/// Every message of the log, as Expand returns it.
pub(crate) async fn log(client: &mut Client, id: &str, last_seq: i64) -> Vec<pb::Message> {
    client
        .expand(pb::ExpandRequest {
            session_id: id.into(),
            target: Some(pb::expand_request::Target::Range(pb::SeqRange {
                first_seq: 1,
                last_seq,
            })),
            max_tokens: 0,
        })
        .await
        .unwrap()
        .into_inner()
        .messages
}

/// The log as appended: what Expand returns without the view's state.
pub(crate) fn as_appended(messages: Vec<pb::Message>) -> Vec<pb::Message> {
    messages
        .into_iter()
        .map(|m| pb::Message {
            view_state: 0,
            view_token_count: 0,
            ..m
        })
        .collect()
}

pub(crate) async fn compact(
    client: &mut Client,
    id: &str,
    mode: pb::CompactMode,
    target_tokens: i64,
) -> pb::CompactResponse {
    client
        .compact(pb::CompactRequest {
            session_id: id.into(),
            mode: mode as i32,
            target_tokens,
            wait: true,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
}

async fn info(client: &mut Client, id: &str) -> pb::Session {
    session(client, id).await
}

#[sqlx::test]
async fn a_reverted_clearing_gives_back_the_build_byte_for_byte(pool: PgPool) {
    let server = TestServer::start(pool.clone()).await;
    let mut client = server.client.clone();
    let count = corpus_session(&mut client, "s", &[0, 1, 2], corpus_policy()).await as i64;
    let before = snapshot(&mut client, "s").await;
    let appended = as_appended(log(&mut client, "s", count).await);
    let tokens = before.builds[0]
        .budget
        .unwrap()
        .breakdown
        .unwrap()
        .total_tokens;

    let cleared = compact(
        &mut client,
        "s",
        pb::CompactMode::ClearToolResults,
        tokens / 2,
    )
    .await;
    assert!(
        cleared.applied && cleared.cleared_seqs.len() > 3,
        "{cleared:?}"
    );
    let compacted = snapshot(&mut client, "s").await;
    assert_ne!(compacted.aggregates, before.aggregates);
    let events = session_events(&mut client, "s").await;
    let clearing = of_kind(&events, pb::EventKind::ToolResultsCleared)
        .pop()
        .unwrap();

    // A dry run says what would come back and changes nothing.
    let version = info(&mut client, "s").await.version;
    let dry = revert(&mut client, by_cursor("s", &clearing.cursor, true))
        .await
        .unwrap();
    assert!(!dry.applied);
    assert_eq!(dry.version, version);
    assert_eq!(dry.restored_seqs, cleared.cleared_seqs);
    assert_eq!(dry.reverted.len(), 1);
    assert_eq!(dry.reverted[0].event_cursor, clearing.cursor);
    assert_eq!(
        dry.reverted[0].kind,
        pb::EventKind::ToolResultsCleared as i32
    );
    assert_eq!(dry.reverted[0].seqs, cleared.cleared_seqs);
    assert!(dry.tokens_after > dry.tokens_before);
    assert_restored(
        &snapshot(&mut client, "s").await,
        &compacted,
        "after a dry run",
    );
    let session = info(&mut client, "s").await;
    assert_eq!(session.version, version);
    assert!(!session.compaction.unwrap().compaction_held);
    assert_eq!(session_events(&mut client, "s").await.len(), events.len());

    let done = revert(&mut client, by_cursor("s", &clearing.cursor, false))
        .await
        .unwrap();
    assert!(done.applied);
    assert_eq!(done.version, version + 1);
    assert_eq!(done.restored_seqs, cleared.cleared_seqs);
    assert_eq!(
        (done.tokens_before, done.tokens_after),
        (dry.tokens_before, dry.tokens_after)
    );
    assert_restored(
        &snapshot(&mut client, "s").await,
        &before,
        "reverted clearing",
    );
    assert_aggregates_add_up(&pool, "s").await;
    // The estimate is anchored again: the provider's count belongs to this view.
    let breakdown = before.builds[0].budget.unwrap().breakdown.unwrap();
    assert_eq!(
        breakdown.estimate_source,
        pb::EstimateSource::Anchored as i32
    );
    assert_eq!(as_appended(log(&mut client, "s", count).await), appended);

    let events = session_events(&mut client, "s").await;
    let reverted = of_kind(&events, pb::EventKind::CompactionReverted);
    assert_eq!(reverted.len(), 1);
    let Some(pb::event::Detail::CompactionReverted(detail)) = &reverted[0].detail else {
        panic!("{:?}", reverted[0]);
    };
    assert_eq!(detail.event_seqs, [clearing.session_seq]);
    assert_eq!(detail.restored_seqs, cleared.cleared_seqs);
    assert!(detail.summary_ids.is_empty());
    assert_eq!(detail.resume_at_log_tokens, done.resume_at_log_tokens);
    let session = info(&mut client, "s").await;
    let stats = session.compaction.unwrap();
    assert!(stats.compaction_held);
    assert_eq!(stats.resume_at_log_tokens, done.resume_at_log_tokens);
    assert!(done.resume_at_log_tokens > session.log_tokens);

    // Once is all: the same compaction again is refused, nothing changed.
    let status = revert(&mut client, by_cursor("s", &clearing.cursor, false))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::FailedPrecondition, "{status:?}");
    assert!(
        status.message().contains("already reverted"),
        "{}",
        status.message()
    );
    assert_eq!(info(&mut client, "s").await.version, version + 1);

    // An explicit Compact lifts the wait and clears the same results again.
    let again = compact(
        &mut client,
        "s",
        pb::CompactMode::ClearToolResults,
        tokens / 2,
    )
    .await;
    assert_eq!(again.cleared_seqs, cleared.cleared_seqs);
    assert!(
        !info(&mut client, "s")
            .await
            .compaction
            .unwrap()
            .compaction_held
    );
    assert_restored(
        &snapshot(&mut client, "s").await,
        &compacted,
        "cleared again",
    );
    server.stop().await;
}

#[sqlx::test]
async fn reverting_an_earlier_compaction_reverts_every_later_one(pool: PgPool) {
    let server = TestServer::start(pool.clone()).await;
    let mut client = server.client.clone();
    let count = corpus_session(&mut client, "s", &[0, 7, 9, 15], corpus_policy()).await as i64;
    let before = snapshot(&mut client, "s").await;
    let tokens = before.builds[0]
        .budget
        .unwrap()
        .breakdown
        .unwrap()
        .total_tokens;
    compact(
        &mut client,
        "s",
        pb::CompactMode::ClearToolResults,
        tokens * 8 / 10,
    )
    .await;
    compact(
        &mut client,
        "s",
        pb::CompactMode::Summarize,
        tokens * 5 / 10,
    )
    .await;
    compact(
        &mut client,
        "s",
        pb::CompactMode::ClearToolResults,
        tokens * 3 / 10,
    )
    .await;
    let events = session_events(&mut client, "s").await;
    let clearings = of_kind(&events, pb::EventKind::ToolResultsCleared);
    let passes = of_kind(&events, pb::EventKind::CompactionCompleted);
    assert_eq!(clearings.len(), 2, "two clearings");
    assert!(!passes.is_empty());

    let done = revert(&mut client, by_cursor("s", &clearings[0].cursor, false))
        .await
        .unwrap();
    let cursors: Vec<&str> = done
        .reverted
        .iter()
        .map(|r| r.event_cursor.as_str())
        .collect();
    let mut expected: Vec<&pb::Event> = clearings.iter().chain(&passes).collect();
    expected.sort_by_key(|e| std::cmp::Reverse(e.session_seq));
    let expected: Vec<&str> = expected.iter().map(|e| e.cursor.as_str()).collect();
    assert_eq!(cursors, expected, "newest first, every later compaction");
    assert_restored(&snapshot(&mut client, "s").await, &before, "all reverted");
    assert_aggregates_add_up(&pool, "s").await;
    assert!(
        log(&mut client, "s", count)
            .await
            .iter()
            .all(|m| m.view_state == pb::ViewState::Full as i32)
    );

    // Each of the later ones is now reverted too.
    for event in clearings.iter().chain(&passes) {
        let status = revert(&mut client, by_cursor("s", &event.cursor, false))
            .await
            .unwrap_err();
        assert_eq!(status.code(), Code::FailedPrecondition, "{}", event.cursor);
    }
    server.stop().await;
}
