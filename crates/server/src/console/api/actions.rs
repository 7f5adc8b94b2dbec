//! A session's actions, each asked for by POST from the console's page after a
//! confirmation there: `actions/compact?dry_run=` (Compact, clearing then summarizing
//! down to the policy's target), `actions/revert?event=&dry_run=` (RevertCompaction of
//! the compaction an event announced, and every later one) and `actions/fork?at=&id=`
//! (ForkSession at a message). A dry run is the default: only `dry_run=false` applies.
use serde_json::{Value, json};

use super::{Console, Query};
use crate::engine::{CompactMode, CompactRequest, ForkRequest, RevertRequest, RevertTarget};
use crate::error::{Error, Result};

const ACTIONS: [&str; 3] = ["compact", "revert", "fork"];

/// Whether `path` names a session's action.
pub(crate) fn is_action(path: &str) -> bool {
    let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    matches!(parts.as_slice(), ["api", "sessions", _, "actions", name] if ACTIONS.contains(name))
}

pub(crate) async fn act(
    console: &Console,
    tenant: i64,
    call: &str,
    query: &Query<'_>,
) -> Result<Value> {
    let parts: Vec<&str> = call.split('/').collect();
    let ["sessions", id, "actions", name] = parts.as_slice() else {
        return Err(Error::not_found("no such console action"));
    };
    // The engine checks the id and the tenant, as for the RPCs.
    let id = id.to_string();
    match *name {
        "compact" => compact(console, tenant, id, dry_run(query)?).await,
        "revert" => revert(console, tenant, id, query).await,
        "fork" => fork(console, tenant, id, query).await,
        _ => Err(Error::not_found("no such console action")),
    }
}

/// A dry run unless `dry_run=false`.
fn dry_run(query: &Query<'_>) -> Result<bool> {
    match query.text("dry_run")? {
        None | Some("true") => Ok(true),
        Some("false") => Ok(false),
        Some(_) => Err(Error::invalid("dry_run", "must be true or false")),
    }
}

async fn compact(console: &Console, tenant: i64, id: String, dry_run: bool) -> Result<Value> {
    let request = CompactRequest {
        session_id: id,
        mode: CompactMode::Auto,
        target_tokens: 0,
        dry_run,
        wait: None,
    };
    let done = console.engine.compact(tenant, request).await?;
    Ok(json!({
        "tokens_before": done.tokens_before,
        "tokens_after": done.tokens_after,
        "cleared": done.cleared_seqs.len(),
        "summarized": done.summarized_seqs.map(|(first, last)| [first, last]),
        "applied": done.applied,
        "job_id": done.job_id,
        "version": done.version,
    }))
}

async fn revert(console: &Console, tenant: i64, id: String, query: &Query<'_>) -> Result<Value> {
    let event = query.number("event", 1..=i64::MAX, 0)?;
    if event == 0 {
        return Err(Error::invalid(
            "event",
            "names the compaction's event (its seq)",
        ));
    }
    let request = RevertRequest {
        session_id: id,
        target: RevertTarget::EventCursor(event.to_string()),
        dry_run: dry_run(query)?,
        expected_version: None,
    };
    let done = console.engine.revert_compaction(tenant, request).await?;
    Ok(json!({
        "compactions": done.compactions.len(),
        "restored": done.restored_seqs.len(),
        "tokens_before": done.tokens_before,
        "tokens_after": done.tokens_after,
        "applied": done.applied,
        "version": done.version,
    }))
}

async fn fork(console: &Console, tenant: i64, id: String, query: &Query<'_>) -> Result<Value> {
    let at = query.number("at", 0..=i64::MAX, -1)?;
    if at < 0 {
        return Err(Error::invalid(
            "at",
            "names the last message the fork shares (a seq)",
        ));
    }
    let request = ForkRequest {
        source_session_id: id,
        at_seq: Some(at),
        session_id: query.decoded("id")?.unwrap_or_default(),
        overrides: Default::default(),
        metadata: Default::default(),
    };
    let forked = console.engine.fork_session(tenant, request).await?;
    Ok(json!({"id": forked.row.external_id, "messages": forked.row.message_count}))
}
