//! The console's JSON API, each call for the caller's tenant (GET; the session actions
//! by POST, `actions.rs`):
//!
//! - `sessions?id=&meta=&page_token=` — a page of the tenant's sessions, latest
//!   activity first; those whose id starts with `id`, whose metadata holds `meta`
//!   (`key=value`), when given;
//! - `sessions/{id}` — the session, its window as its last build counted it (system
//!   prompt with the ledger's block, tools, summaries, the history it sent by view
//!   state, output reserve, headroom) and the thresholds;
//! - `sessions/{id}/builds` — the budget of its recorded builds (the newest 500), for the
//!   chart of tokens against the window;
//! - `sessions/{id}/messages?from=&limit=` — messages with seq, turn, role, tokens and
//!   view state; a cleared or evicted one with the placeholder the model sees;
//! - `sessions/{id}/messages/{seq}` — one original, whole (Expand);
//! - `sessions/{id}/events?after=` — the session's events after a seq (its compaction
//!   history);
//! - `sessions/{id}/live?after=` — the same events as they commit, and the session's
//!   version every second, as a stream of JSON lines (`console/live.rs`);
//! - `sessions/{id}/summaries`, `sessions/{id}/summaries/{summary}/sources`,
//!   `sessions/{id}/ledger` — its summaries, what one covers, its task ledger.

use serde_json::{Value, json};

use super::Console;
use super::query::Query;

mod actions;
mod history;
mod messages;
mod window;
use crate::engine::{ExpandRequest, ExpandTarget, ListRequest, SessionInfo};
use crate::error::{Error, Result};
use crate::message::{Role, StoredMessage, ViewState};
use crate::store::SessionFilter;
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
        ["sessions", id] => window::session(console, tenant, id).await,
        ["sessions", id, "messages"] => messages::messages(console, tenant, id, query).await,
        ["sessions", id, "messages", seq] => messages::original(console, tenant, id, seq).await,
        ["sessions", id, "builds"] => window::builds(console, tenant, id).await,
        ["sessions", id, "events"] => history::events(console, tenant, id, query).await,
        ["sessions", id, "summaries"] => history::summaries(console, tenant, id).await,
        ["sessions", id, "summaries", summary, "sources"] => {
            history::sources(console, tenant, id, summary).await
        }
        ["sessions", id, "summaries", summary, "children"] => {
            history::children(console, tenant, id, summary).await
        }
        ["sessions", id, "ledger"] => history::ledger(console, tenant, id).await,
        _ => Err(Error::not_found("no such console API call")),
    }
}

pub(super) use actions::{act, is_action};
pub(super) use history::event_json;

async fn sessions(console: &Console, tenant: i64, query: &Query<'_>) -> Result<Value> {
    let metadata = match query.decoded("meta")?.filter(|meta| !meta.is_empty()) {
        None => Vec::new(),
        Some(pair) => {
            let (key, value) = pair
                .split_once('=')
                .ok_or_else(|| Error::invalid("meta", "must be key=value"))?;
            vec![(key.to_string(), value.to_string())]
        }
    };
    let id_prefix = query.decoded("id")?.filter(|id| !id.is_empty());
    let request = ListRequest {
        page_size: 100,
        page_token: query.text("page_token")?.unwrap_or("").to_string(),
        filter: SessionFilter {
            metadata,
            id_prefix,
            ..SessionFilter::default()
        },
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
