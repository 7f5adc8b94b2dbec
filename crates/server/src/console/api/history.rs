//! What happened to a session: `events?after=` (its compaction history, polled for what
//! is new), `summaries` (the active summaries, leaf and condensed),
//! `summaries/{id}/sources` (the messages a summary covers), `summaries/{id}/children`
//! (the summaries a condensed one was made of) and `ledger` (the task ledger: todos,
//! notes, files, commands, errors).
use serde_json::{Value, json};

use super::{Console, MAX_PAGE, Query, clip, info, role_name};
use crate::engine::{ExpandRequest, ExpandTarget};
use crate::error::{Error, Result};

pub(super) async fn events(
    console: &Console,
    tenant: i64,
    id: &str,
    query: &Query<'_>,
) -> Result<Value> {
    let info = info(console, tenant, id).await?;
    let after = query.number("after", 0..=i64::MAX, 0)?;
    let store = console.engine.store();
    let events = store
        .session_events(info.row.tenant_id, info.row.id, after, MAX_PAGE)
        .await?;
    let listed: Vec<Value> = events.iter().map(event_json).collect();
    Ok(json!({"events": listed, "version": info.row.version, "messages": info.row.message_count}))
}

/// One event as the page shows it (its `seq` is also the cursor of a session stream).
pub(in crate::console) fn event_json(event: &crate::events::Event) -> Value {
    json!({
        "seq": event.session_seq,
        "kind": format!("{:?}", event.detail.kind()),
        "at": event.created_at.to_rfc3339(),
        "version": event.session_version,
        "detail": event.detail,
    })
}

/// Levels of the summary tree a lookup walks down at most.
const MAX_TREE_DEPTH: usize = 16;

/// The active summaries, oldest span first: each with its span, level (leaf or
/// condensed), depth, tokens, the tokens of what it covers, and its text.
pub(super) async fn summaries(console: &Console, tenant: i64, id: &str) -> Result<Value> {
    let info = info(console, tenant, id).await?;
    let mut summaries = console.engine.store().active_summaries(&info.row).await?;
    summaries.sort_by_key(|summary| summary.first_seq);
    Ok(json!({"summaries": listed(&summaries)}))
}

/// The summaries a condensed one was made of, found by walking down from the session's
/// active summaries (so only a summary of this session's tree is opened).
pub(super) async fn children(
    console: &Console,
    tenant: i64,
    id: &str,
    summary: &str,
) -> Result<Value> {
    let info = info(console, tenant, id).await?;
    let wanted = summary_id(summary)?;
    let store = console.engine.store();
    let mut level: Vec<i64> = store
        .active_summaries(&info.row)
        .await?
        .iter()
        .map(|summary| summary.id)
        .collect();
    for _ in 0..MAX_TREE_DEPTH {
        if level.is_empty() {
            break;
        }
        if level.contains(&wanted) {
            let children = store.summary_children(&info.row, &[wanted]).await?;
            return Ok(json!({"summary": wanted, "summaries": listed(&children)}));
        }
        let below = store.summary_children(&info.row, &level).await?;
        level = below.iter().map(|summary| summary.id).collect();
    }
    Err(Error::not_found(format!("summary {wanted}")))
}

fn summary_id(summary: &str) -> Result<i64> {
    summary
        .parse()
        .ok()
        .filter(|summary| *summary >= 1)
        .ok_or_else(|| Error::invalid("summary", "must be a whole number from 1"))
}

fn listed(summaries: &[crate::session::Summary]) -> Vec<Value> {
    summaries
        .iter()
        .map(|summary| {
            json!({
                "id": summary.id,
                "first_seq": summary.first_seq,
                "last_seq": summary.last_seq,
                "depth": summary.depth,
                "kind": if summary.depth == 0 { "leaf" } else { "condensed" },
                "tokens": summary.token_count,
                "source_tokens": summary.source_tokens,
                "facts": summary.facts,
                "facts_lost": summary.facts_lost,
                "content": summary.content,
            })
        })
        .collect()
}

/// The messages a summary covers (Expand of the summary), a line each.
pub(super) async fn sources(
    console: &Console,
    tenant: i64,
    id: &str,
    summary: &str,
) -> Result<Value> {
    let info = info(console, tenant, id).await?;
    let summary_id = summary_id(summary)?;
    let request = ExpandRequest {
        session_id: info.row.external_id.clone(),
        target: ExpandTarget::Summary(summary_id),
        max_tokens: 0,
    };
    let expanded = console.engine.expand(tenant, request).await?;
    let listed: Vec<Value> = expanded
        .messages
        .iter()
        .map(|stored| {
            json!({
                "seq": stored.seq,
                "role": role_name(stored.message.role),
                "tokens": stored.token_count,
                "text": clip(&stored.message.content),
            })
        })
        .collect();
    Ok(json!({"summary": summary_id, "sources": listed}))
}

/// The task ledger: each entry's kind, text, status (todos), the seqs it came from,
/// and a command's exit codes.
pub(super) async fn ledger(console: &Console, tenant: i64, id: &str) -> Result<Value> {
    let info = info(console, tenant, id).await?;
    let entries = console.engine.ledger(&info).await?;
    let listed: Vec<Value> = entries
        .iter()
        .map(|entry| {
            json!({
                "kind": format!("{:?}", entry.kind).to_lowercase(),
                "text": clip(&entry.text),
                "status": entry.status.map(|status| format!("{status:?}").to_lowercase()),
                "seqs": entry.seqs,
                "exit_codes": entry.runs.iter().map(|run| run.exit_code).collect::<Vec<_>>(),
            })
        })
        .collect();
    Ok(json!({"entries": listed}))
}
