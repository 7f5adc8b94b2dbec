//! A session's outlook: the budget of its next request as its row and view stand — what
//! CheckBudget answers, what an append reports, and when the budget status moves.
use crate::budget::{self, Estimate, Regions, Report};
use crate::events::EventDetail;
use crate::message::StoredMessage;
use crate::policy::Policy;
use crate::session::{Session, Summary};
use crate::summarize;
use crate::tokenize::REPLY_PRIMING;

/// The summaries region of a request: the block of summaries as the policy's tokenizer
/// counts it at most (each summary, its framing, the block's header).
pub fn summary_region(summaries: &[Summary], policy: &Policy) -> i64 {
    summarize::block_tokens(
        summaries.iter().map(|s| i64::from(s.token_count)),
        &policy.counter(),
    )
}

/// The budget report of a session's next request as its row stands: the system prompt
/// and tools of the latest build, the summaries and the view.
pub fn row_report(policy: &Policy, row: &Session) -> Report {
    let regions = Regions {
        system_tokens: row.builds.last.system_tokens.max(REPLY_PRIMING),
        summary_tokens: row.summary_tokens,
        history_tokens: row.view_tokens,
        tool_tokens: row.builds.last.tool_tokens,
    };
    session_report(
        policy,
        policy.max_output_tokens,
        row,
        regions,
        row.last_turn_tokens,
    )
}

/// The session's new budget status and its BUDGET_THRESHOLD_CROSSED event, when
/// `report` moves it off `previous`.
pub fn budget_crossing(
    previous: budget::Status,
    report: &Report,
) -> Option<(budget::Status, EventDetail)> {
    let status = report.status;
    (status != previous).then(|| {
        (
            status,
            EventDetail::BudgetThresholdCrossed {
                previous_status: i32::from(previous.code()),
                status: i32::from(status.code()),
                used_tokens: report.estimate.total_tokens,
                context_window: report.context_window_tokens,
            },
        )
    })
}

/// The budget of the next request over the session's whole view, from its aggregates.
pub fn session_report(
    policy: &Policy,
    reserve: i64,
    row: &Session,
    regions: Regions,
    newest_turn_tokens: i64,
) -> Report {
    let estimate: Estimate = budget::estimate(
        row.anchor().as_ref(),
        row.view_epoch,
        row.view_first_seq,
        row.message_count,
        regions.fixed_tokens(),
        regions.history_tokens,
    );
    let minimum = regions.fixed_tokens() + newest_turn_tokens;
    let minimum_fits = minimum <= policy.limit_tokens() - reserve;
    budget::report(policy, reserve, regions, estimate, minimum_fits)
}

/// The estimate of a request carrying the whole view with `fixed` tokens around it.
pub fn view_estimate(row: &Session, view: &[StoredMessage], fixed: i64) -> Estimate {
    let history: i64 = view.iter().map(|m| m.view_tokens).sum();
    budget::estimate(
        row.anchor().as_ref(),
        row.view_epoch,
        view.first().map_or(0, |m| m.seq),
        view.last().map_or(0, |m| m.seq),
        fixed,
        history,
    )
}
