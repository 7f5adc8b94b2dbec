//! `ctxd inspect SESSION`: what a person looks at when a session misbehaves — the
//! window by region against the thresholds, the summaries with their depth and
//! coverage, what compaction did, how well estimates track the provider, and the
//! session's place in its tree (parent, children, what the subtree used). Read-only: it
//! calls GetSession on a running server.
use std::fmt::Write as _;

use crate::client::ClientTls;
use ctxd_server::pb;
use ctxd_server::pb::context_service_client::ContextServiceClient;

pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Connects to `addr` (with `tls`, when it names a CA), reads the session and prints
/// the report.
pub async fn run(
    addr: &str,
    tls: &ClientTls,
    api_key: Option<&str>,
    session_id: &str,
    json: bool,
) -> Result<String, BoxError> {
    let channel = crate::client::connect(
        addr,
        tls,
        std::time::Duration::from_secs(5),
        std::time::Duration::from_secs(30),
    )
    .await?;
    let mut client = ContextServiceClient::new(channel);
    let request = crate::client::with_key(
        pb::GetSessionRequest {
            session_id: session_id.into(),
            include_view: true,
        },
        api_key,
    )?;
    let response = client
        .get_session(request)
        .await
        .map_err(|status| format!("GetSession: {}", status.message()))?
        .into_inner();
    let session = response
        .session
        .as_ref()
        .ok_or("the server returned no session")?;
    if json {
        return Ok(format!("{}\n", crate::inspect_json::report(&response)));
    }
    let mut text = report(session, &response.summaries, response.budget.as_ref());
    text.push_str(&tree_report(&response));
    Ok(text)
}

/// The session's place in its tree: its parent, its children, its subtree's totals.
pub fn tree_report(response: &pb::GetSessionResponse) -> String {
    let mut out = String::new();
    let Some(session) = &response.session else {
        return out;
    };
    let _ = write!(out, "\ntree: ");
    if session.depth == 0 {
        let _ = write!(out, "a root");
    } else if session.parent_session_id.is_empty() {
        let _ = write!(
            out,
            "child of a deleted session (its tool call {}), depth {}",
            session.parent_tool_call_id, session.depth
        );
    } else {
        let _ = write!(
            out,
            "child of {} (its tool call {}), depth {}",
            session.parent_session_id, session.parent_tool_call_id, session.depth
        );
    }
    match &session.finished_at {
        Some(at) => {
            let _ = writeln!(out, "; finished at {}", time(at));
        }
        None => {
            let _ = writeln!(out, "; open");
        }
    }
    let _ = writeln!(
        out,
        "children ({} of {}):",
        response.children.len(),
        response.children_total
    );
    for child in &response.children {
        let _ = writeln!(
            out,
            "  {:<32} tool call {:<24} {}",
            child.session_id,
            child.parent_tool_call_id,
            if child.finished { "finished" } else { "open" }
        );
    }
    if let Some(subtree) = &response.subtree {
        let usage = subtree.usage_total.unwrap_or_default();
        let _ = writeln!(
            out,
            "subtree: {} sessions, {} log tokens; usage reported {} input ({} cached), {} output",
            subtree.sessions,
            subtree.log_tokens,
            usage.input_tokens,
            usage.cached_input_tokens,
            usage.output_tokens
        );
    }
    out
}

/// A timestamp as RFC 3339, seconds.
fn time(at: &prost_types::Timestamp) -> String {
    u32::try_from(at.nanos)
        .ok()
        .and_then(|nanos| chrono::DateTime::from_timestamp(at.seconds, nanos))
        .map_or_else(
            || "?".to_string(),
            |at| at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        )
}

fn pct(part: i64, whole: i64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

/// The report, as text.
pub fn report(
    session: &pb::Session,
    summaries: &[pb::Summary],
    budget: Option<&pb::BudgetReport>,
) -> String {
    let mut out = String::new();
    let policy = session.policy.clone().unwrap_or_default();
    let window = policy.context_window_tokens.unwrap_or(0);
    let fraction = |f: Option<f64>| {
        let f = f.unwrap_or(0.0);
        format!("{f:.2} ({} tokens)", (f * window as f64) as i64)
    };
    let _ = writeln!(
        out,
        "session {}  version {}  messages {}  turns {}",
        session.session_id, session.version, session.message_count, session.turn_count
    );
    if !session.forked_from_session_id.is_empty() {
        let _ = writeln!(
            out,
            "forked from {} at seq {} (seqs 1-{} shared with it)",
            session.forked_from_session_id, session.forked_at_seq, session.forked_at_seq
        );
    }
    let _ = writeln!(
        out,
        "log {} tokens; view {} tokens ({:.1} % of the log)",
        session.log_tokens,
        session.view_tokens,
        pct(session.view_tokens, session.log_tokens)
    );
    let _ = writeln!(
        out,
        "policy: window {window}, output reserve {}, clear at {}, down to {}, summarize at {}, hard limit {}",
        policy.max_output_tokens.unwrap_or(0),
        fraction(policy.clear_threshold),
        fraction(policy.clear_target),
        fraction(policy.summarize_threshold),
        fraction(policy.hard_limit),
    );
    if let Some(budget) = budget {
        write_budget(&mut out, budget, window);
    }
    write_summaries(&mut out, summaries);
    write_figures(&mut out, session);
    out
}

/// The next request's regions against the window, its status and the next action.
fn write_budget(out: &mut String, budget: &pb::BudgetReport, window: i64) {
    let Some(b) = &budget.breakdown else {
        return;
    };
    let _ = writeln!(
        out,
        "\nnext request (system prompt and tools as last built):"
    );
    for (name, tokens) in [
        ("system", b.system_tokens),
        ("tools", b.tool_tokens),
        ("summaries", b.summary_tokens),
        ("history", b.history_tokens),
        ("output reserve", b.output_reserve_tokens),
    ] {
        let _ = writeln!(
            out,
            "  {name:<15}{tokens:>9}  {:>5.1} %",
            pct(tokens, window)
        );
    }
    let status = pb::BudgetStatus::try_from(budget.status).map_or("?".to_string(), |s| {
        s.as_str_name()
            .trim_start_matches("BUDGET_STATUS_")
            .to_string()
    });
    let action =
        pb::RecommendedAction::try_from(budget.recommended_action).map_or("?".to_string(), |a| {
            a.as_str_name()
                .trim_start_matches("RECOMMENDED_ACTION_")
                .to_string()
        });
    let _ = writeln!(
        out,
        "  {:<15}{:>9}  {:>5.1} %  of {window}; headroom {}; {status}, next: {action}",
        "prompt total",
        b.total_tokens,
        pct(b.total_tokens, window),
        b.headroom_tokens
    );
}

/// The active summaries, one line each.
fn write_summaries(out: &mut String, summaries: &[pb::Summary]) {
    let _ = writeln!(out, "\nsummaries ({} active):", summaries.len());
    for s in summaries {
        let _ = writeln!(
            out,
            "  #{:<6} depth {}  seqs {:>5}-{:<5} {:>6} tokens for {:>7} replaced; mentions {}/{} paths, commands and identifiers",
            s.summary_id,
            s.depth,
            s.first_seq,
            s.last_seq,
            s.token_count,
            s.source_tokens,
            s.facts - s.facts_lost,
            s.facts
        );
    }
}

/// What compaction did, and how the estimator has done.
fn write_figures(out: &mut String, session: &pb::Session) {
    if let Some(c) = &session.compaction {
        let _ = writeln!(
            out,
            "\ncompaction: {} tool results cleared, {} evicted, {} summaries written; \
             {:.1} % of {} builds kept the cached prefix; {} consecutive failures{}",
            c.cleared_messages,
            c.evicted_messages,
            c.summaries_written,
            c.cache_stable_pct,
            c.builds,
            c.consecutive_failures,
            if c.paused {
                " (automatic compaction PAUSED)"
            } else {
                ""
            }
        );
    }
    if let Some(e) = &session.estimator {
        let _ = writeln!(
            out,
            "estimator: {} usage reports; mean error {:.2} %, max {:.2} %, last {:+.2} %",
            e.samples, e.mean_abs_error_pct, e.max_abs_error_pct, e.last_error_pct
        );
    }
}
