//! What the operations share about a session row: its policy, the budget status noted
//! in a transaction, and the errors naming a missing or finished session. The budget
//! of its next request is the core's (`crate::outlook`).
use crate::budget::Report;
use crate::error::{Error, quoted};
pub(super) use crate::outlook::{
    budget_crossing, row_report, session_report, summary_region, view_estimate,
};
use crate::session::Session;

/// Announces a move to another budget status (either way) with the transaction.
pub(super) fn note_budget(tx: &mut crate::store::SessionTx, report: &Report) {
    if let Some((status, event)) = budget_crossing(tx.budget_status(), report) {
        tx.add_event(event);
        tx.set_budget_status(status);
    }
}

pub(super) fn session_not_found(session_id: &str) -> Error {
    Error::not_found(format!("session {}", quoted(session_id)))
}

/// FAILED_PRECONDITION for an append to a session FinishSession ended.
pub(super) fn session_finished(session: &Session) -> Error {
    let at = session
        .finished_at
        .map(|at| {
            format!(
                " at {}",
                at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
            )
        })
        .unwrap_or_default();
    Error::precondition(
        "session_id",
        format!(
            "session {} was finished{at}: a finished session takes no more appends",
            quoted(&session.external_id)
        ),
    )
}
