//! What a summary reports it kept of its span is counted against the raw messages it
//! covers — for a condensed summary too, not against its children's text.
use std::collections::BTreeSet;

use ctxd::pb;
use sqlx::PgPool;

use crate::harness::*;

/// Per turn: many distinct commands, more in all than a condensed summary of
/// [`CONDENSED_TARGET`] tokens can list.
const COMMANDS_PER_TURN: usize = 30;
const CONDENSED_TARGET: i64 = 400;

fn command(turn: usize, k: usize) -> String {
    format!("grep -n needle{k} src/turn{turn}/file{k}.rs")
}

/// One turn: the request, one assistant step with many tool calls, their results, and
/// the answer.
fn turn(turn: usize) -> Vec<pb::Message> {
    let ids: Vec<String> = (0..COMMANDS_PER_TURN)
        .map(|k| format!("t{turn}c{k}"))
        .collect();
    let mut step = assistant("Searching.");
    step.tool_calls = ids
        .iter()
        .enumerate()
        .map(|(k, id)| pb::ToolCall {
            id: id.clone(),
            name: "bash".into(),
            arguments_json: serde_json::json!({ "command": command(turn, k) }).to_string(),
        })
        .collect();
    let mut messages = vec![user(&format!("Turn {turn}: find the needles.")), step];
    messages.extend(ids.iter().map(|id| result(id, "1: found")));
    messages.push(assistant(&format!("Turn {turn} done.")));
    messages
}

#[sqlx::test]
async fn condensed_summaries_count_commands_against_the_raw_messages(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    create(
        &mut client,
        "s",
        pb::Policy {
            leaf_chunk_messages: Some(4),
            condense_fanin: Some(2),
            fresh_tail_messages: Some(4),
            condensed_target_tokens: Some(CONDENSED_TARGET),
            ..window(100_000, 10_000)
        },
    )
    .await;
    for n in 0..4 {
        append(&mut client, "s", turn(n)).await.unwrap();
    }
    let compacted = client
        .compact(pb::CompactRequest {
            session_id: "s".into(),
            mode: pb::CompactMode::Summarize as i32,
            target_tokens: 1,
            wait: true,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(compacted.applied);
    let view = client
        .get_session(pb::GetSessionRequest {
            session_id: "s".into(),
            include_view: true,
        })
        .await
        .unwrap()
        .into_inner();
    let condensed = view
        .summaries
        .iter()
        .find(|s| s.depth >= 1)
        .expect("two leaves were condensed");

    // The commands of the raw messages it covers, from the originals.
    let originals = client
        .expand(pb::ExpandRequest {
            session_id: "s".into(),
            target: Some(pb::expand_request::Target::SummaryId(condensed.summary_id)),
            max_tokens: 0,
        })
        .await
        .unwrap()
        .into_inner()
        .messages;
    assert_eq!(originals.first().unwrap().seq, condensed.first_seq);
    assert_eq!(originals.last().unwrap().seq, condensed.last_seq);
    let commands: BTreeSet<String> = originals
        .iter()
        .flat_map(|m| &m.tool_calls)
        .map(|call| {
            let arguments: serde_json::Value = serde_json::from_str(&call.arguments_json).unwrap();
            arguments["command"].as_str().unwrap().to_string()
        })
        .collect();
    let lost = commands
        .iter()
        .filter(|c| !condensed.content.contains(c.as_str()))
        .count() as i64;
    // The span has more commands than the condensed summary could list, and the text
    // lost some.
    assert!(
        commands.len() > 2 * COMMANDS_PER_TURN,
        "{} commands",
        commands.len()
    );
    assert!(lost > 0, "{}", condensed.content);
    assert_eq!(
        (condensed.commands, condensed.commands_lost),
        (commands.len() as i64, lost),
        "depth {} summary of seqs {}-{}:\n{}",
        condensed.depth,
        condensed.first_seq,
        condensed.last_seq,
        condensed.content
    );
    assert_eq!(
        condensed.facts,
        condensed.paths + condensed.commands + condensed.identifiers
    );
    assert_eq!(
        condensed.facts_lost,
        condensed.paths_lost + condensed.commands_lost + condensed.identifiers_lost
    );
    server.stop().await;
}
