//! ForkSession: a fork shares its source's log up to a seq and then diverges; Expand,
//! Search and BuildMessages of each side see exactly that side's history, compaction on
//! one side never changes what the other returns, deleting the source leaves the fork
//! whole, and bad input changes nothing.
mod inputs;
mod properties;

use ctxd::pb;
use sqlx::PgPool;

use crate::harness::*;
use crate::recorded::{corpus_files, load};

pub(crate) async fn fork(
    client: &mut Client,
    source: &str,
    at_seq: Option<i64>,
    id: &str,
) -> Result<pb::Session, tonic::Status> {
    client
        .fork_session(pb::ForkSessionRequest {
            source_session_id: source.into(),
            at_seq,
            session_id: id.into(),
            ..Default::default()
        })
        .await
        .map(|response| response.into_inner().session.unwrap())
}

/// Every message of a session's log (its whole history), through Expand.
pub(crate) async fn history(client: &mut Client, id: &str) -> Vec<pb::Message> {
    let count = session(client, id).await.message_count;
    if count == 0 {
        return Vec::new();
    }
    client
        .expand(pb::ExpandRequest {
            session_id: id.into(),
            target: Some(pb::expand_request::Target::Range(pb::SeqRange {
                first_seq: 1,
                last_seq: count,
            })),
            max_tokens: 0,
        })
        .await
        .unwrap()
        .into_inner()
        .messages
}

/// The client-written fields of a message, what a history must hold byte-exact.
pub(crate) fn written(message: &pb::Message) -> pb::Message {
    pb::Message {
        seq: 0,
        turn: 0,
        token_count: 0,
        view_state: 0,
        view_token_count: 0,
        created_at: None,
        ..message.clone()
    }
}

pub(crate) fn assert_history(got: &[pb::Message], want: &[pb::Message], id: &str) {
    assert_eq!(got.len(), want.len(), "{id}: history length");
    for (index, (got, want)) in got.iter().zip(want).enumerate() {
        assert_eq!(got.seq, index as i64 + 1, "{id}: seq");
        assert_eq!(written(got), written(want), "{id}: seq {}", index + 1);
    }
}

/// A session's view tokens are what its history says of its view: the tokens in the
/// view of every message past the summarized prefix that no step summary took out.
pub(crate) async fn assert_view_consistent(client: &mut Client, id: &str) {
    let view = client
        .get_session(pb::GetSessionRequest {
            session_id: id.into(),
            include_view: true,
        })
        .await
        .unwrap()
        .into_inner();
    let mut spans: Vec<(i64, i64)> = view
        .summaries
        .iter()
        .map(|s| (s.first_seq, s.last_seq))
        .collect();
    spans.sort();
    let mut covered = 0;
    for (first, last) in spans {
        if first == covered + 1 {
            covered = last;
        }
    }
    let tokens: i64 = history(client, id)
        .await
        .iter()
        .filter(|m| m.seq > covered && m.view_state != pb::ViewState::Summarized as i32)
        .map(|m| m.view_token_count)
        .sum();
    let row = view.session.unwrap();
    assert_eq!(
        tokens, row.view_tokens,
        "{id}: the view's tokens by its history"
    );
}

async fn search(client: &mut Client, id: &str, query: &str) -> Vec<pb::SearchHit> {
    client
        .search(pb::SearchRequest {
            session_id: id.into(),
            query: query.into(),
            limit: 100,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .hits
}

async fn compact(client: &mut Client, id: &str, mode: pb::CompactMode, target_tokens: i64) {
    client
        .compact(pb::CompactRequest {
            session_id: id.into(),
            mode: mode as i32,
            target_tokens,
            wait: true,
            ..Default::default()
        })
        .await
        .unwrap();
}

/// What a session returns: its whole history with view states, and a build.
async fn snapshot(client: &mut Client, id: &str) -> (Vec<pb::Message>, pb::BuildMessagesResponse) {
    let history = history(client, id).await;
    let built = build(client, id, pb::OutputFormat::Neutral).await.unwrap();
    (history, built)
}

/// A tool-using session of `turns` turns, each with two tool results of `size` words,
/// each word tagged with the session's `tag` and the turn.
pub(crate) fn turns(tag: &str, from: usize, count: usize, size: usize) -> Vec<Vec<pb::Message>> {
    (from..from + count)
        .map(|turn| {
            let id = format!("{tag}-call-{turn}");
            let body: String = (0..size)
                .map(|i| format!("{tag}{turn}w{} ", i % 50))
                .collect();
            vec![
                user(&format!("{tag} question {turn} about module_{tag}_{turn}")),
                call(&[&id]),
                result(&id, &body),
                assistant(&format!("{tag} answer {turn}")),
            ]
        })
        .collect()
}

#[sqlx::test]
async fn a_fork_shares_the_prefix_and_then_diverges(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    create(&mut client, "src", window(200_000, 8_000)).await;
    let mut src_log = Vec::new();
    for batch in turns("shared", 0, 5, 20) {
        src_log.extend(batch.clone());
        append(&mut client, "src", batch).await.unwrap();
    }
    let at = 12; // the end of the third turn
    let forked = fork(&mut client, "src", Some(at), "f").await.unwrap();
    assert_eq!(forked.message_count, at);
    assert_eq!(forked.forked_from_session_id, "src");
    assert_eq!(forked.forked_at_seq, at);
    assert_eq!(forked.turn_count, 3);
    let source = session(&mut client, "src").await;
    assert_eq!(source.forked_from_session_id, "");

    let mut fork_log = src_log[..at as usize].to_vec();
    for batch in turns("forkonly", 10, 2, 20) {
        fork_log.extend(batch.clone());
        append(&mut client, "f", batch).await.unwrap();
    }
    for batch in turns("srconly", 20, 2, 20) {
        src_log.extend(batch.clone());
        append(&mut client, "src", batch).await.unwrap();
    }
    assert_history(&history(&mut client, "f").await, &fork_log, "f");
    assert_history(&history(&mut client, "src").await, &src_log, "src");

    // The fork's counters are its own log's.
    let f = session(&mut client, "f").await;
    assert_eq!(f.message_count, fork_log.len() as i64);
    assert_eq!(f.turn_count, 5);

    let built = build(&mut client, "f", pb::OutputFormat::Neutral)
        .await
        .unwrap();
    assert_provider_valid(&built.messages);
    let seqs: Vec<i64> = built.messages.iter().map(|m| m.seq).collect();
    assert_eq!(seqs, (1..=fork_log.len() as i64).collect::<Vec<_>>());
    for (got, want) in built.messages.iter().zip(&fork_log) {
        assert_eq!(got.content, want.content);
    }
}

/// Every text a build sends: the history and the summaries.
fn built_text(built: &pb::BuildMessagesResponse) -> String {
    let mut text = built.system_prompt.clone();
    for message in &built.messages {
        text.push_str(&message.content);
    }
    for summary in &built.summaries {
        text.push_str(&summary.content);
    }
    text
}

/// A recorded agent session forked mid-turn after the source summarized: both sides
/// grow and compact (clearing and summaries) in turn, and neither side's compaction
/// changes what the other returns; Expand, Search and BuildMessages of each see exactly
/// its own history.
#[sqlx::test]
async fn a_corpus_session_forks_and_each_side_compacts_alone(pool: PgPool) {
    let server = TestServer::start(pool.clone()).await;
    let mut client = server.client.clone();
    let recorded = load(&corpus_files()[0]);
    // Clearing reaches back into the shared messages: little tool output protected.
    let policy = pb::Policy {
        tool_output_protect_tokens: Some(500),
        clear_min_savings_tokens: Some(100),
        ..window(128_000, 8_000)
    };
    create(&mut client, "src", policy).await;
    let mut src_log: Vec<pb::Message> = Vec::new();
    for (message, _) in &recorded.messages {
        src_log.push(message.clone());
        append(&mut client, "src", vec![message.clone()])
            .await
            .unwrap();
    }
    // Summaries of the older part before the fork: the fork reuses those within its cut
    // and shares part of the source's view (which the source then clears).
    let total = build(&mut client, "src", pb::OutputFormat::Neutral)
        .await
        .unwrap()
        .budget
        .unwrap()
        .breakdown
        .unwrap()
        .total_tokens;
    compact(
        &mut client,
        "src",
        pb::CompactMode::Summarize,
        total * 2 / 3,
    )
    .await;
    let before = client
        .get_session(pb::GetSessionRequest {
            session_id: "src".into(),
            include_view: true,
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!before.summaries.is_empty(), "the source summarized");
    let view_first_seq = before.summaries.last().unwrap().last_seq + 1;
    let at = (view_first_seq + src_log.len() as i64) / 2;
    assert!(
        at > view_first_seq + 4,
        "the fork shares part of the source's view"
    );
    fork(&mut client, "src", Some(at), "f").await.unwrap();
    // A second fork at the same seq that only ever reads.
    fork(&mut client, "src", Some(at), "h").await.unwrap();
    let mut fork_log = src_log[..at as usize].to_vec();
    // The fork starts with the source's summaries (the same rows) and its view.
    let start = client
        .get_session(pb::GetSessionRequest {
            session_id: "f".into(),
            include_view: true,
        })
        .await
        .unwrap()
        .into_inner();
    assert!(
        start.summaries == before.summaries,
        "the fork reuses the summaries"
    );

    // A fork cut inside the first summary reuses what of it lies within the cut and
    // has the rest back in its view.
    let first = &before.summaries[0];
    let inside = (first.first_seq + first.last_seq) / 2;
    fork(&mut client, "src", Some(inside), "g").await.unwrap();
    let g = client
        .get_session(pb::GetSessionRequest {
            session_id: "g".into(),
            include_view: true,
        })
        .await
        .unwrap()
        .into_inner();
    for summary in &g.summaries {
        assert!(summary.last_seq <= inside);
    }
    let g_built = build(&mut client, "g", pb::OutputFormat::Neutral)
        .await
        .unwrap();
    assert_provider_valid(&g_built.messages);
    assert_summaries_cover_once(&g_built, inside);
    assert_history(
        &history(&mut client, "g").await,
        &src_log[..inside as usize],
        "g",
    );

    for batch in turns("forkonly", 100, 4, 300) {
        fork_log.extend(batch.clone());
        append(&mut client, "f", batch).await.unwrap();
    }
    for batch in turns("srconly", 200, 4, 300) {
        src_log.extend(batch.clone());
        append(&mut client, "src", batch).await.unwrap();
    }

    // The fork clears and summarizes first (condensing what it shares with the source),
    // then the source compacts: each time the other side returns exactly what it
    // returned before.
    let src_before = snapshot(&mut client, "src").await;
    let fork_before = snapshot(&mut client, "f").await;
    let reader = snapshot(&mut client, "h").await;
    assert!(src_before.0 != fork_before.0);
    compact(&mut client, "f", pb::CompactMode::ClearToolResults, 2_000).await;
    let fork_cleared = snapshot(&mut client, "f").await;
    assert!(fork_cleared != fork_before, "the fork cleared");
    assert!(
        snapshot(&mut client, "src").await == src_before,
        "the fork's clearing changed the source"
    );
    compact(&mut client, "f", pb::CompactMode::Summarize, 3_000).await;
    let fork_after = snapshot(&mut client, "f").await;
    assert!(fork_after != fork_cleared, "the fork summarized");
    assert!(
        snapshot(&mut client, "src").await == src_before,
        "the fork's summary changed the source"
    );
    compact(&mut client, "src", pb::CompactMode::ClearToolResults, 2_000).await;
    compact(&mut client, "src", pb::CompactMode::Summarize, 3_000).await;
    assert!(
        snapshot(&mut client, "src").await != src_before,
        "the source compacted"
    );
    assert!(
        snapshot(&mut client, "f").await == fork_after,
        "the source's compaction changed the fork"
    );
    assert!(
        snapshot(&mut client, "h").await == reader,
        "compaction on either side changed another fork"
    );
    for id in ["f", "src", "g", "h"] {
        assert_view_consistent(&mut client, id).await;
    }

    // Each history whole, byte-exact.
    assert_history(&history(&mut client, "f").await, &fork_log, "f");
    assert_history(&history(&mut client, "src").await, &src_log, "src");

    // Builds: provider-valid, each with only its own side's words.
    for (id, own, other) in [("f", "forkonly", "srconly"), ("src", "srconly", "forkonly")] {
        let built = build(&mut client, id, pb::OutputFormat::Neutral)
            .await
            .unwrap();
        assert_provider_valid(&built.messages);
        assert_summaries_cover_once(&built, session(&mut client, id).await.message_count);
        let text = built_text(&built);
        assert!(text.contains(own), "{id} builds with its own turns");
        assert!(
            !text.contains(other),
            "{id} builds with the other side's turns"
        );
        // Every summary it sends expands to its own history.
        let log = if id == "f" { &fork_log } else { &src_log };
        for summary in &built.summaries {
            let expanded = client
                .expand(pb::ExpandRequest {
                    session_id: id.into(),
                    target: Some(pb::expand_request::Target::SummaryId(summary.summary_id)),
                    max_tokens: 0,
                })
                .await
                .unwrap()
                .into_inner();
            let first = summary.first_seq as usize - 1;
            assert_history_from(
                &expanded.messages,
                &log[first..=summary.last_seq as usize - 1],
                first,
            );
        }
    }

    // Search sees each side's own history: its own words, never the other side's, and
    // the shared ones in both.
    let f_own = search(&mut client, "f", "forkonly").await;
    assert!(!f_own.is_empty());
    assert!(
        f_own
            .iter()
            .all(|h| h.session_id == "f" && (h.seq == 0 || h.seq > at))
    );
    assert!(
        search(&mut client, "f", "srconly").await.is_empty(),
        "the fork finds the source's later turns"
    );
    assert!(
        search(&mut client, "src", "forkonly").await.is_empty(),
        "the source finds the fork's turns"
    );
    let shared_word = shared_word(&src_log[..at as usize]);
    let in_fork = search(&mut client, "f", &shared_word).await;
    assert!(
        in_fork.iter().any(|h| h.seq > 0 && h.seq <= at),
        "the fork finds shared messages by {shared_word:?}"
    );
    let tenant = client
        .search(pb::SearchRequest {
            query: shared_word.clone(),
            limit: 100,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .hits;
    let sessions: std::collections::BTreeSet<&str> =
        tenant.iter().map(|h| h.session_id.as_str()).collect();
    assert_eq!(
        sessions,
        ["f", "g", "h", "src"].into(),
        "a shared message is in every history"
    );
    server.stop().await;
}

pub(crate) fn assert_history_from(got: &[pb::Message], want: &[pb::Message], offset: usize) {
    assert_eq!(got.len(), want.len());
    for (index, (got, want)) in got.iter().zip(want).enumerate() {
        assert_eq!(got.seq, (offset + index) as i64 + 1);
        assert_eq!(written(got), written(want), "seq {}", got.seq);
    }
}

/// A word of a user message of `log` long enough to be searched for.
fn shared_word(log: &[pb::Message]) -> String {
    log.iter()
        .filter(|m| m.role == pb::Role::User as i32)
        .flat_map(|m| m.content.split(|c: char| !c.is_ascii_alphabetic()))
        .find(|word| word.len() >= 8)
        .expect("a long word in a shared user message")
        .to_lowercase()
}

/// Deleting the source (or a fork between) hides what forks still read: the fork keeps
/// working whole, the name is free again, and the hidden rows go with the last fork.
#[sqlx::test]
async fn deleting_the_source_never_breaks_the_fork(pool: PgPool) {
    let server = TestServer::start(pool.clone()).await;
    let mut client = server.client.clone();
    create(&mut client, "src", window(200_000, 8_000)).await;
    let mut log = Vec::new();
    for batch in turns("shared", 0, 6, 200) {
        log.extend(batch.clone());
        append(&mut client, "src", batch).await.unwrap();
    }
    compact(&mut client, "src", pb::CompactMode::Summarize, 1_500).await;
    fork(&mut client, "src", Some(16), "f1").await.unwrap();
    fork(&mut client, "f1", Some(14), "f2").await.unwrap();
    let f1_log = log[..16].to_vec();
    let mut f2_log = log[..14].to_vec();
    let f2_before = snapshot(&mut client, "f2").await;

    let deleted = client
        .delete_session(pb::DeleteSessionRequest {
            session_id: "src".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(deleted.deleted_messages, log.len() as i64);
    let gone = client
        .get_session(pb::GetSessionRequest {
            session_id: "src".into(),
            include_view: false,
        })
        .await
        .unwrap_err();
    assert_eq!(gone.code(), tonic::Code::NotFound);
    // The name is free again, and the new session shares nothing with the old one.
    create(&mut client, "src", window(200_000, 8_000)).await;
    assert!(history(&mut client, "src").await.is_empty());
    assert!(search(&mut client, "src", "shared0w1").await.is_empty());
    // The tenant searches live sessions only: the hidden one's rows are found through
    // the forks that hold them.
    let tenant = client
        .search(pb::SearchRequest {
            query: "shared5w1".into(),
            limit: 100,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .hits;
    assert!(
        tenant
            .iter()
            .all(|h| h.session_id != "src" && !h.session_id.starts_with('#'))
    );

    assert!(
        snapshot(&mut client, "f2").await == f2_before,
        "deleting the source changed the fork"
    );
    assert_history(&history(&mut client, "f1").await, &f1_log, "f1");
    // Deleting the fork between leaves the fork of the fork whole too.
    client
        .delete_session(pb::DeleteSessionRequest {
            session_id: "f1".into(),
        })
        .await
        .unwrap();
    assert!(
        snapshot(&mut client, "f2").await == f2_before,
        "deleting the fork between changed f2"
    );
    for batch in turns("after", 50, 3, 200) {
        f2_log.extend(batch.clone());
        append(&mut client, "f2", batch).await.unwrap();
    }
    compact(&mut client, "f2", pb::CompactMode::ClearToolResults, 1_000).await;
    compact(&mut client, "f2", pb::CompactMode::Summarize, 1_500).await;
    assert_history(&history(&mut client, "f2").await, &f2_log, "f2");
    let built = build(&mut client, "f2", pb::OutputFormat::Neutral)
        .await
        .unwrap();
    assert_provider_valid(&built.messages);
    assert!(
        !search(&mut client, "f2", "shared1w3").await.is_empty(),
        "f2 finds its inherited messages"
    );

    let hidden = || async {
        sqlx::query_scalar::<_, i64>("select count(*) from sessions where deleted_at is not null")
            .fetch_one(&pool)
            .await
            .unwrap()
    };
    assert_eq!(
        hidden().await,
        2,
        "src and f1 are hidden while f2 reads them"
    );
    client
        .delete_session(pb::DeleteSessionRequest {
            session_id: "f2".into(),
        })
        .await
        .unwrap();
    assert_eq!(
        hidden().await,
        0,
        "the hidden sessions go with the last fork reading them"
    );
    let leftovers: i64 = sqlx::query_scalar(
        "select (select count(*) from session_lineage) + (select count(*) from message_views) \
         + (select count(*) from summary_links) \
         + (select count(*) from messages where session_id not in (select id from sessions))",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(leftovers, 0);
    server.stop().await;
}

/// SESSION_FORKED is the fork's first event and is on the source's stream too, each
/// saying which session was forked, into which, at which seq.
#[sqlx::test]
async fn a_fork_is_announced_on_both_streams(pool: PgPool) {
    use crate::events::{next_event, until_live};
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    create(&mut client, "src", window(200_000, 8_000)).await;
    for batch in turns("shared", 0, 2, 10) {
        append(&mut client, "src", batch).await.unwrap();
    }
    let mut source_stream = client
        .subscribe_events(pb::SubscribeEventsRequest {
            session_id: "src".into(),
            heartbeat_interval_ms: 200,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    until_live(&mut source_stream).await;
    let forked = client
        .fork_session(pb::ForkSessionRequest {
            source_session_id: "src".into(),
            at_seq: None,
            session_id: String::new(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .session
        .unwrap();
    assert!(!forked.session_id.is_empty(), "an id is generated");
    assert_eq!(
        forked.message_count, 8,
        "unset at_seq is the source's last seq"
    );
    let want = pb::SessionForked {
        source_session_id: "src".into(),
        fork_session_id: forked.session_id.clone(),
        at_seq: 8,
    };
    let on_source = next_event(&mut source_stream).await.unwrap();
    assert_eq!(on_source.kind, pb::EventKind::SessionForked as i32);
    assert_eq!(on_source.session_id, "src");
    assert_eq!(
        on_source.detail,
        Some(pb::event::Detail::SessionForked(want.clone()))
    );
    let mut fork_stream = client
        .subscribe_events(pb::SubscribeEventsRequest {
            session_id: forked.session_id.clone(),
            heartbeat_interval_ms: 200,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let backlog = until_live(&mut fork_stream).await;
    assert_eq!(backlog.len(), 1, "{backlog:?}");
    assert_eq!(backlog[0].session_seq, 1);
    assert_eq!(backlog[0].session_id, forked.session_id);
    assert_eq!(
        backlog[0].detail,
        Some(pb::event::Detail::SessionForked(want))
    );
    server.stop().await;
}
