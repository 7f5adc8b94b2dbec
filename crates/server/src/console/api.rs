//! The console's JSON API, read-only, each call for the caller's tenant:
//!
//! - `sessions?page_token=` — a page of the tenant's sessions, latest activity first;
//! - `sessions/{id}` — the session, its window as its last build counted it (system
//!   prompt with the ledger's block, tools, summaries, the history it sent by view
//!   state, output reserve, headroom) and the thresholds;
//! - `sessions/{id}/messages?from=&limit=` — messages with seq, turn, role, tokens and
//!   view state; a cleared or evicted one with the placeholder the model sees;
//! - `sessions/{id}/messages/{seq}` — one original, whole (Expand);
//! - `sessions/{id}/events?after=` — the session's events after a seq (its compaction
//!   history; polled for what is new).
use std::collections::HashMap;

use serde_json::{Value, json};

use super::Console;
use super::query::Query;
use crate::compaction::Render;
use crate::engine::{ExpandRequest, ExpandTarget, ListRequest, SessionInfo};
use crate::error::{Error, Result};
use crate::message::{Role, StoredMessage, ViewState};
use crate::validate::validate_session_id;

/// Messages in one page at most.
const MAX_PAGE: i64 = 200;
/// Characters of a message's text a list shows.
const PREVIEW_CHARS: usize = 400;

pub(super) async fn call(
    console: &Console,
    tenant: i64,
    call: &str,
    query: &Query<'_>,
) -> Result<Value> {
    let parts: Vec<&str> = call.split('/').collect();
    match parts.as_slice() {
        ["sessions"] => sessions(console, tenant, query).await,
        ["sessions", id] => session(console, tenant, id).await,
        ["sessions", id, "messages"] => messages(console, tenant, id, query).await,
        ["sessions", id, "messages", seq] => original(console, tenant, id, seq).await,
        ["sessions", id, "events"] => events(console, tenant, id, query).await,
        _ => Err(Error::not_found("no such console API call")),
    }
}

async fn sessions(console: &Console, tenant: i64, query: &Query<'_>) -> Result<Value> {
    let request = ListRequest {
        page_size: 100,
        page_token: query.text("page_token")?.unwrap_or("").to_string(),
        filter: Default::default(),
    };
    let listing = console.engine.list_sessions(tenant, request).await?;
    let sessions: Vec<Value> = listing
        .sessions
        .iter()
        .map(|(info, link)| {
            let row = &info.row;
            json!({
                "id": row.external_id,
                "parent": link.as_ref().and_then(|link| link.parent_session_id.clone()),
                "forked_from": row.forked_from,
                "messages": row.message_count,
                "turns": row.turn_count,
                "budget_status": format!("{:?}", row.budget_status),
                "metadata": row.metadata,
                "finished": row.finished_at.is_some(),
                "updated_at": row.updated_at.to_rfc3339(),
            })
        })
        .collect();
    Ok(json!({"sessions": sessions, "next_page_token": listing.next_page_token}))
}

async fn info(console: &Console, tenant: i64, id: &str) -> Result<SessionInfo> {
    validate_session_id(id)?;
    console.engine.get_session(tenant, id).await
}

async fn session(console: &Console, tenant: i64, id: &str) -> Result<Value> {
    let info = info(console, tenant, id).await?;
    let row = &info.row;
    let policy = &info.row.policy;
    // The history the last build sent, by view state: the view's provider-valid
    // messages (as the build keeps them) within the build's first and last seq.
    // The view as builds read it (the replica's view cache).
    let view = console.engine.store().view(row).await?;
    let sent = (row.builds.last.first_seq, row.builds.last.last_seq);
    let mut by_state: HashMap<&str, i64> = HashMap::new();
    for index in crate::turns::provider_valid(&view) {
        let message = &view[index];
        if (sent.0..=sent.1).contains(&message.seq) {
            *by_state.entry(state_name(message)).or_default() += message.view_tokens;
        }
    }
    let view_report = console.engine.session_view(&info).await?.report;
    Ok(json!({
        "id": row.external_id,
        "version": row.version,
        "messages": row.message_count,
        "turns": row.turn_count,
        "view_first_seq": row.view_first_seq,
        "budget_status": format!("{:?}", row.budget_status),
        "window": {
            "context_window": policy.context_window_tokens,
            "output_reserve": policy.max_output_tokens,
            "limit": policy.limit_tokens(),
            "clear_threshold": policy.clear_threshold_tokens(),
            "summarize_threshold": policy.summarize_threshold_tokens(),
        },
        "last_build": {
            "system": row.builds.last.system_tokens,
            "tools": row.builds.last.tool_tokens,
            "history": row.builds.last.history_tokens,
            "estimate": row.builds.last.estimate_tokens,
            "first_seq": row.builds.last.first_seq,
            "last_seq": row.builds.last.last_seq,
        },
        "summaries": row.summary_tokens,
        "history_by_state": by_state,
        "next_request": {
            "system": view_report.regions.system_tokens,
            "tools": view_report.regions.tool_tokens,
            "summaries": view_report.regions.summary_tokens,
            "history": view_report.regions.history_tokens,
            "estimate": view_report.estimate.total_tokens,
        },
    }))
}

async fn expand(
    console: &Console,
    tenant: i64,
    id: &str,
    first_seq: i64,
    last_seq: i64,
) -> Result<crate::engine::Expanded> {
    let request = ExpandRequest {
        session_id: id.to_string(),
        target: ExpandTarget::Range {
            first_seq,
            last_seq,
        },
        max_tokens: 0,
    };
    console.engine.expand(tenant, request).await
}

fn state_name(message: &StoredMessage) -> &'static str {
    match message.view_state {
        ViewState::Full if message.message.pinned => "pinned",
        ViewState::Full => "full",
        ViewState::Cleared => "cleared",
        ViewState::Evicted => "evicted",
        ViewState::Summarized => "summarized",
    }
}

async fn messages(console: &Console, tenant: i64, id: &str, query: &Query<'_>) -> Result<Value> {
    let info = info(console, tenant, id).await?;
    let count = info.row.message_count;
    let from = query.number("from", 1..=count.max(1), 1)?;
    let limit = query.number("limit", 1..=MAX_PAGE, 100)?;
    if count == 0 {
        return Ok(json!({"messages": [], "total": 0}));
    }
    let last = (from + limit - 1).min(count);
    let page = expand(console, tenant, id, from, last).await?.messages;
    let names: HashMap<&str, &str> = page
        .iter()
        .flat_map(|m| &m.message.tool_calls)
        .map(|call| (call.id.as_str(), call.name.as_str()))
        .collect();
    let render = Render::new(&info.row.policy);
    let view_first = info.row.view_first_seq;
    let listed: Vec<Value> = page
        .iter()
        .map(|stored| {
            let message = &stored.message;
            let summarized = stored.seq < view_first || stored.view_state == ViewState::Summarized;
            let seen = match stored.view_state {
                ViewState::Cleared | ViewState::Evicted => {
                    let name = names
                        .get(message.tool_call_id.as_str())
                        .copied()
                        .unwrap_or("unknown");
                    let shown = render.message(
                        message,
                        stored.view_state,
                        stored.seq,
                        stored.token_count,
                        name,
                    );
                    Some(clip(&shown.content))
                }
                _ => None,
            };
            json!({
                "seq": stored.seq,
                "turn": stored.turn,
                "role": role_name(message.role),
                "tokens": stored.token_count,
                "view_tokens": stored.view_tokens,
                "state": if summarized { "summarized" } else { state_name(stored) },
                "text": clip(&message.content),
                "tool_calls": message.tool_calls.iter().map(|c| c.name.clone()).collect::<Vec<_>>(),
                "tool_call_id": message.tool_call_id,
                "model_sees": seen,
            })
        })
        .collect();
    Ok(json!({"messages": listed, "total": count}))
}

async fn original(console: &Console, tenant: i64, id: &str, seq: &str) -> Result<Value> {
    validate_session_id(id)?;
    let seq: i64 = seq
        .parse()
        .ok()
        .filter(|seq| *seq >= 1)
        .ok_or_else(|| Error::invalid("seq", "must be a whole number from 1"))?;
    let request = ExpandRequest {
        session_id: id.to_string(),
        target: ExpandTarget::List(vec![seq]),
        max_tokens: 0,
    };
    let expanded = console.engine.expand(tenant, request).await?;
    let stored = expanded
        .messages
        .first()
        .ok_or_else(|| Error::not_found(format!("message {seq}")))?;
    let message = &stored.message;
    Ok(json!({
        "seq": stored.seq,
        "role": role_name(message.role),
        "content": message.content,
        "tool_calls": message.tool_calls.iter().map(|c| json!({"id": c.id, "name": c.name, "arguments": c.arguments})).collect::<Vec<_>>(),
        "tool_call_id": message.tool_call_id,
        "tokens": stored.token_count,
    }))
}

async fn events(console: &Console, tenant: i64, id: &str, query: &Query<'_>) -> Result<Value> {
    let info = info(console, tenant, id).await?;
    let after = query.number("after", 0..=i64::MAX, 0)?;
    let store = console.engine.store();
    let events = store.session_events(info.row.id, after, MAX_PAGE).await?;
    let listed: Vec<Value> = events
        .iter()
        .map(|event| {
            json!({
                "seq": event.session_seq,
                "kind": format!("{:?}", event.detail.kind()),
                "at": event.created_at.to_rfc3339(),
                "version": event.session_version,
                "detail": event.detail,
            })
        })
        .collect();
    Ok(json!({"events": listed, "version": info.row.version, "messages": info.row.message_count}))
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    }
}

/// At most `PREVIEW_CHARS` characters, marked when cut.
fn clip(text: &str) -> String {
    let mut clipped: String = text.chars().take(PREVIEW_CHARS).collect();
    if clipped.len() < text.len() {
        clipped.push('…');
    }
    clipped
}
