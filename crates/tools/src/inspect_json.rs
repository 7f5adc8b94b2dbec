//! `ctxd inspect SESSION --json`: what the text report shows, as one JSON object — the
//! session's counts and place (parent, fork source), the budget of its next request by
//! region, its status and recommended action, the summaries in the view (span, depth,
//! tokens, what they kept), its children and its subtree's totals — for scripts and
//! bug reports.
use serde_json::{Value, json};

use ctxd_server::pb;

/// The report of `response` (a GetSession with its view) as JSON.
pub fn report(response: &pb::GetSessionResponse) -> Value {
    let session = response.session.clone().unwrap_or_default();
    json!({
        "session": {
            "id": session.session_id,
            "version": session.version,
            "messages": session.message_count,
            "turns": session.turn_count,
            "log_tokens": session.log_tokens,
            "view_tokens": session.view_tokens,
            "parent_session_id": session.parent_session_id,
            "parent_tool_call_id": session.parent_tool_call_id,
            "depth": session.depth,
            "forked_from_session_id": session.forked_from_session_id,
            "forked_at_seq": session.forked_at_seq,
            "finished": session.finished_at.is_some(),
        },
        "budget": response.budget.as_ref().map(budget),
        "summaries": response.summaries.iter().map(summary).collect::<Vec<_>>(),
        "children": response.children.iter().map(|child| json!({
            "id": child.session_id,
            "parent_tool_call_id": child.parent_tool_call_id,
            "finished": child.finished,
        })).collect::<Vec<_>>(),
        "children_total": response.children_total,
        "subtree": response.subtree.as_ref().map(|subtree| json!({
            "sessions": subtree.sessions,
            "log_tokens": subtree.log_tokens,
        })),
    })
}

fn budget(budget: &pb::BudgetReport) -> Value {
    let b = budget.breakdown.unwrap_or_default();
    let name = |text: &str, prefix: &str| text.trim_start_matches(prefix).to_lowercase();
    json!({
        "system_tokens": b.system_tokens,
        "summary_tokens": b.summary_tokens,
        "history_tokens": b.history_tokens,
        "tool_tokens": b.tool_tokens,
        "output_reserve_tokens": b.output_reserve_tokens,
        "total_tokens": b.total_tokens,
        "context_window_tokens": b.context_window_tokens,
        "headroom_tokens": b.headroom_tokens,
        "status": pb::BudgetStatus::try_from(budget.status)
            .map(|s| name(s.as_str_name(), "BUDGET_STATUS_"))
            .unwrap_or_default(),
        "recommended_action": pb::RecommendedAction::try_from(budget.recommended_action)
            .map(|a| name(a.as_str_name(), "RECOMMENDED_ACTION_"))
            .unwrap_or_default(),
    })
}

fn summary(summary: &pb::Summary) -> Value {
    json!({
        "id": summary.summary_id,
        "depth": summary.depth,
        "first_seq": summary.first_seq,
        "last_seq": summary.last_seq,
        "tokens": summary.token_count,
        "source_tokens": summary.source_tokens,
        "facts": summary.facts,
        "facts_lost": summary.facts_lost,
    })
}
