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
fn turns(tag: &str, from: usize, count: usize, size: usize) -> Vec<Vec<pb::Message>> {
    (from..from + count)
        .map(|turn| {
            let id = format!("{tag}-call-{turn}");
            let body: String = (0..size).map(|i| format!("{tag}{turn}w{} ", i % 50)).collect();
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

    let built = build(&mut client, "f", pb::OutputFormat::Neutral).await.unwrap();
    assert_provider_valid(&built.messages);
    let seqs: Vec<i64> = built.messages.iter().map(|m| m.seq).collect();
    assert_eq!(seqs, (1..=fork_log.len() as i64).collect::<Vec<_>>());
    for (got, want) in built.messages.iter().zip(&fork_log) {
        assert_eq!(got.content, want.content);
    }
}
