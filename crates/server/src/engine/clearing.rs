//! The clearing pass: old tool results become placeholders, planned on a view and
//! committed when the session has not changed since.
use std::collections::HashMap;

use super::Engine;
use super::report::{note_budget, row_report, session_not_found};
use crate::compaction;
use crate::error::Result;
use crate::events::EventDetail;
use crate::message::{Role, StoredMessage, ViewState};
use crate::metrics::{CompactionMetric, metrics};
use crate::policy::Policy;
use crate::recall;
use crate::revert::Compaction;
use crate::session::Session;
use crate::store::{Clearing, NewCompaction};
use crate::tokenize::REPLY_PRIMING;

/// Tool results to clear: (seq, tokens as a placeholder), and the tokens saved.
#[derive(Debug, Clone, Default)]
pub(super) struct ClearingPlan {
    pub(super) cleared: Vec<(i64, i64)>,
    pub(super) saved: i64,
}

/// A clearing that was committed: the session row after it.
pub(super) struct Cleared {
    pub(super) row: Session,
    pub(super) cleared: Vec<(i64, i64)>,
}

impl Engine {
    /// Persists a clearing plan made on `row`'s version; `Err(current version)` when the
    /// session has changed since (the plan may no longer be right).
    pub(super) async fn apply_clearing(
        &self,
        tenant_id: i64,
        row: &Session,
        policy: &Policy,
        plan: &ClearingPlan,
    ) -> Result<std::result::Result<Cleared, i64>> {
        let Some(mut tx) = self.store.lock_session(tenant_id, &row.external_id).await? else {
            return Err(session_not_found(&row.external_id));
        };
        if tx.session.id != row.id || tx.session.version != row.version {
            return Ok(Err(tx.session.version));
        }
        let mut after = tx.session.clone();
        after.view_tokens -= plan.saved;
        after.view_epoch += 1;
        after.version += 1;
        after.cleared_messages += plan.cleared.len() as i64;
        let around = row.builds.last.system_tokens.max(REPLY_PRIMING) + row.builds.last.tool_tokens;
        let tokens_before = around + row.summary_tokens + row.view_tokens;
        tx.add_event(EventDetail::ToolResultsCleared {
            seqs: plan.cleared.iter().map(|(seq, _)| *seq).collect(),
            tokens_before,
            tokens_after: tokens_before - plan.saved,
        });
        // Recorded (with the results' view before) so that RevertCompaction can undo it.
        let record = NewCompaction {
            compaction: Compaction::Clearing,
            event_seq: tx.queued_event_seq(),
            view_tokens_delta: -plan.saved,
            summary_tokens_delta: 0,
            seqs: plan.cleared.iter().map(|(seq, _)| *seq).collect(),
            summary_ids: Vec::new(),
            first_seq: 0,
            last_seq: 0,
        };
        tx.record_compaction(&record).await?;
        note_budget(&mut tx, &row_report(policy, &after));
        tx.commit_clearing(&Clearing {
            cleared: plan.cleared.clone(),
            view_tokens: after.view_tokens,
        })
        .await?;
        metrics().compaction_committed(
            CompactionMetric::Clearing,
            0,
            plan.saved,
            plan.cleared.len() as i64,
        );
        tracing::info!(
            session_id = %row.external_id,
            cleared = plan.cleared.len(),
            tokens_saved = plan.saved,
            "cleared old tool results"
        );
        Ok(Ok(Cleared {
            row: after,
            cleared: plan.cleared.clone(),
        }))
    }
}

/// Tool name of every call in `messages`, by call id.
pub(super) fn tool_names<'a>(
    messages: impl IntoIterator<Item = &'a StoredMessage>,
) -> HashMap<String, String> {
    messages
        .into_iter()
        .flat_map(|m| &m.message.tool_calls)
        .map(|call| (call.id.clone(), call.name.clone()))
        .collect()
}

/// Plans clearing on a view: which tool results to turn into placeholders to shed
/// `to_shed` tokens, with each placeholder's token count.
pub(super) fn plan_clearing(
    policy: &Policy,
    view: &[StoredMessage],
    to_shed: i64,
    min_savings: i64,
) -> ClearingPlan {
    if to_shed <= 0 {
        return ClearingPlan::default();
    }
    let render = compaction::Render::new(policy);
    let names = tool_names(view);
    let placeholder_tokens = |message: &StoredMessage| {
        let name = names
            .get(&message.message.tool_call_id)
            .map_or("unknown", String::as_str);
        render.counter.message(&render.message(
            &message.message,
            ViewState::Cleared,
            message.seq,
            message.token_count,
            name,
        ))
    };
    let items: Vec<compaction::ViewItem> = view
        .iter()
        .map(|m| compaction::ViewItem {
            role: m.message.role,
            view_state: m.view_state,
            pinned: m.message.pinned,
            view_tokens: m.view_tokens,
            cleared_tokens: if m.message.role == Role::Tool && m.view_state != ViewState::Cleared {
                placeholder_tokens(m)
            } else {
                m.view_tokens
            },
            recall: m.message.metadata.contains_key(recall::ANSWER),
        })
        .collect();
    let plan = compaction::plan_clearing(
        &items,
        compaction::protected_tool_tokens(policy),
        to_shed,
        min_savings,
    );
    ClearingPlan {
        cleared: plan
            .indices
            .iter()
            .map(|&i| (view[i].seq, items[i].cleared_tokens))
            .collect(),
        saved: plan.tokens_saved,
    }
}

/// Marks the cleared messages of a view read before the clearing.
pub(super) fn apply_to_view(view: &mut [StoredMessage], cleared: &Cleared) {
    let tokens: HashMap<i64, i64> = cleared.cleared.iter().copied().collect();
    for message in view {
        if let Some(&placeholder) = tokens.get(&message.seq) {
            message.view_state = ViewState::Cleared;
            message.view_tokens = placeholder;
        }
    }
}
