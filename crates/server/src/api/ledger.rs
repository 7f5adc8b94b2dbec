//! UpdateLedger: the client's todos and notes.
use super::ContextApi;
use super::convert::{entry_to_pb, notes_from_pb, todos_from_pb};
use crate::engine::LedgerUpdate;
use crate::error::{Error, Result};
use crate::ledger::todos::MAX_UPDATES;
use crate::pb;

pub(super) async fn update_ledger(
    api: &ContextApi,
    tenant: i64,
    req: pb::UpdateLedgerRequest,
) -> Result<pb::UpdateLedgerResponse> {
    // Bounded before anything is converted.
    for (field, count) in [("todos", req.todos.len()), ("notes", req.notes.len())] {
        if count > MAX_UPDATES {
            return Err(Error::invalid(
                field,
                format!("must hold at most {MAX_UPDATES} {field} per request"),
            ));
        }
    }
    let update = LedgerUpdate {
        session_id: req.session_id,
        todos: todos_from_pb(req.todos)?,
        notes: notes_from_pb(req.notes),
    };
    let updated = api.engine.update_ledger(tenant, update).await?;
    Ok(pb::UpdateLedgerResponse {
        version: updated.version,
        kept_done_todo_ids: updated.kept_done,
        entries: updated.entries.iter().map(entry_to_pb).collect(),
    })
}
