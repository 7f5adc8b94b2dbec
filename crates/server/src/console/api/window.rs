//! `sessions/{id}`: the session, its window as its last build counted it, and the
//! thresholds.
use std::collections::HashMap;

use serde_json::{Value, json};

use super::{Console, info, state_name};
use crate::error::Result;

pub(super) async fn session(console: &Console, tenant: i64, id: &str) -> Result<Value> {
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

/// Builds the chart shows at most (the newest).
const CHARTED_BUILDS: i64 = 500;

/// `sessions/{id}/builds`: the budget of the session's recorded builds, oldest first —
/// each with its regions, estimate and window (a build that repeated the last one is
/// not recorded again).
pub(super) async fn builds(console: &Console, tenant: i64, id: &str) -> Result<Value> {
    let info = info(console, tenant, id).await?;
    let points = console
        .engine
        .store()
        .build_history(&info.row, CHARTED_BUILDS)
        .await?;
    Ok(json!({"builds": points, "recorded": info.row.builds.count}))
}
