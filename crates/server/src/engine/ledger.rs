//! The task ledger: UpdateLedger (the client's todos and notes, under the session's
//! lock), the ledger as GetSession returns it, and its block in a build.
use std::collections::HashSet;

use super::report::session_not_found;
use super::{Engine, SessionInfo, validate_session_id};
use crate::error::Result;
use crate::ledger::Entry;
use crate::ledger::render::{Block, left_to_summaries, render};
use crate::ledger::todos::{NoteUpdate, TodoUpdate, plan};
use crate::message::{StoredMessage, ViewState};
use crate::policy::Policy;
use crate::session::Summary;
use crate::tokenize::Counter;

#[derive(Debug, Clone)]
pub struct LedgerUpdate {
    pub session_id: String,
    pub todos: Vec<TodoUpdate>,
    pub notes: Vec<NoteUpdate>,
}

#[derive(Debug, Clone)]
pub struct LedgerUpdated {
    pub version: i64,
    /// Todos the request asked to leave done: they stayed done.
    pub kept_done: Vec<String>,
    /// The session's todos and notes after the update.
    pub entries: Vec<Entry>,
}

impl Engine {
    /// The session's whole ledger, in order of creation.
    pub async fn ledger(&self, info: &SessionInfo) -> Result<Vec<Entry>> {
        Ok(self.store.ledger(info.row.tenant_id, info.row.id).await?)
    }

    /// Sets todos and notes. Checked against what the session holds under its row lock;
    /// a refused request writes nothing.
    pub async fn update_ledger(
        &self,
        tenant_id: i64,
        request: LedgerUpdate,
    ) -> Result<LedgerUpdated> {
        validate_session_id(&request.session_id)?;
        let mut tx = self
            .store
            .lock_session(tenant_id, &request.session_id)
            .await?
            .ok_or_else(|| session_not_found(&request.session_id))?;
        let existing = tx.client_ledger().await?;
        // Dropping the transaction on a refusal rolls it back: nothing changes.
        let plan = plan(
            &existing,
            &request.todos,
            &request.notes,
            tx.session.message_count,
        )?;
        let session_id = tx.session.id;
        if plan.upserts.is_empty() && plan.removed_notes.is_empty() {
            // Nothing to change (no todo, or only removals of notes it does not have):
            // the session keeps its version.
            return Ok(LedgerUpdated {
                version: tx.session.version,
                kept_done: plan.kept_done,
                entries: existing,
            });
        }
        let version = tx.commit_ledger(&plan).await?;
        // The row changed under this replica's cached copy.
        self.store.forget_cached_row(tenant_id, &request.session_id);
        let entries = self
            .store
            .ledger(tenant_id, session_id)
            .await?
            .into_iter()
            .filter(|entry| !entry.kind.is_derived())
            .collect();
        Ok(LedgerUpdated {
            version,
            kept_done: plan.kept_done,
            entries,
        })
    }
}

/// The ledger's block for a build over `view` and `summaries`: the client's todos and
/// notes, and what the request no longer shows verbatim — files, commands and errors of
/// messages before the view, in a summary, or cleared, except what a summary's text
/// names as it is (`left_to_summaries`) — within the policy's cap. Messages the view shows whole or as an
/// eviction preview (decided at append) count as shown, so an append never changes the
/// block; seqs past `last_seq` (appended after the view was read) too.
pub(super) fn ledger_block(
    entries: &[Entry],
    view: &[StoredMessage],
    summaries: &[Summary],
    last_seq: i64,
    policy: &Policy,
    counter: &Counter,
) -> Option<Block> {
    if entries.is_empty() {
        return None;
    }
    // Nothing summarized, cleared or before the view, and nothing the client set: no
    // block (the common case until the first compaction, decided without allocating).
    let all_shown = summaries.is_empty()
        && view.len() as i64 == last_seq
        && view.first().is_none_or(|m| m.seq == 1)
        && view.iter().all(|m| m.view_state != ViewState::Cleared);
    if all_shown && entries.iter().all(|entry| entry.kind.is_derived()) {
        return None;
    }
    let shown: HashSet<i64> = view
        .iter()
        .filter(|m| m.view_state != ViewState::Cleared)
        .map(|m| m.seq)
        .collect();
    let hidden = |seq: i64| seq <= last_seq && !shown.contains(&seq);
    let texts: Vec<&str> = summaries.iter().map(|s| s.content.as_str()).collect();
    let entries: Vec<Entry> = entries
        .iter()
        .filter(|entry| !left_to_summaries(entry, &hidden, &texts))
        .cloned()
        .collect();
    let entries = entries.as_slice();
    let derived_hidden = entries
        .iter()
        .any(|e| !e.kind.is_derived() || e.seqs.iter().any(|&s| hidden(s)));
    if !derived_hidden {
        return None;
    }
    render(entries, &hidden, policy.ledger_cap_tokens(), &|text| {
        counter.text(text)
    })
}
