//! `sessions/{id}/messages`: a page of messages with what the model sees of each, and
//! `sessions/{id}/messages/{seq}`: one original, whole.
use std::collections::HashMap;

use serde_json::{Value, json};

use super::{Console, MAX_PAGE, Query, clip, expand, info, role_name, state_name};
use crate::compaction::Render;
use crate::engine::{ExpandRequest, ExpandTarget};
use crate::error::{Error, Result};
use crate::message::ViewState;
use crate::validate::validate_session_id;

pub(super) async fn messages(
    console: &Console,
    tenant: i64,
    id: &str,
    query: &Query<'_>,
) -> Result<Value> {
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

pub(super) async fn original(console: &Console, tenant: i64, id: &str, seq: &str) -> Result<Value> {
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
