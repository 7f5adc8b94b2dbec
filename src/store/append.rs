//! AppendTurn's writes: one statement under the session's row lock, then the commit.
use std::collections::HashSet;

use super::{SessionTx, SessionUpdate};
use crate::message::{Message, Role, ViewState};

/// A message ready to insert: seq, turn and token count assigned by the engine.
#[derive(Debug, Clone)]
pub struct NewMessage<'a> {
    pub seq: i64,
    pub turn: i64,
    pub token_count: i64,
    /// Tokens as rendered in the view (the preview's when evicted).
    pub view_tokens: i64,
    pub view_state: ViewState,
    pub message: &'a Message,
}

fn json_or_null<T: serde::Serialize>(items: &[T]) -> Option<String> {
    if items.is_empty() {
        return None;
    }
    serde_json::to_string(items).ok()
}

impl SessionTx {
    /// Inserts the batch, records new tool calls (`calls`: id, seq of the call) and
    /// answers (`answers`: id, seq of the result), writes the session's new aggregates,
    /// and commits.
    pub async fn commit_append(
        mut self,
        batch: &[NewMessage<'_>],
        calls: &[(String, i64)],
        answers: &[(String, i64)],
        update: SessionUpdate,
    ) -> Result<(), sqlx::Error> {
        let mut seqs = Vec::with_capacity(batch.len());
        let mut turns = Vec::with_capacity(batch.len());
        let mut roles = Vec::with_capacity(batch.len());
        let mut contents = Vec::with_capacity(batch.len());
        let mut parts = Vec::with_capacity(batch.len());
        let mut reasonings = Vec::with_capacity(batch.len());
        let mut tool_calls = Vec::with_capacity(batch.len());
        let mut tool_call_ids = Vec::with_capacity(batch.len());
        let mut names = Vec::with_capacity(batch.len());
        let mut metadata = Vec::with_capacity(batch.len());
        let mut pinned = Vec::with_capacity(batch.len());
        let mut token_counts = Vec::with_capacity(batch.len());
        let mut view_tokens = Vec::with_capacity(batch.len());
        let mut view_states = Vec::with_capacity(batch.len());
        for new in batch {
            let message = new.message;
            seqs.push(new.seq);
            turns.push(new.turn);
            roles.push(message.role as i16);
            contents.push(message.content.as_str());
            parts.push(json_or_null(&message.parts));
            reasonings.push(message.reasoning.as_str());
            tool_calls.push(json_or_null(&message.tool_calls));
            tool_call_ids.push(message.tool_call_id.as_str());
            names.push(message.name.as_str());
            metadata.push(serde_json::to_string(&message.metadata).unwrap_or_else(|_| "{}".into()));
            pinned.push(message.pinned);
            token_counts.push(i32::try_from(new.token_count).unwrap_or(i32::MAX));
            view_tokens.push(i32::try_from(new.view_tokens).unwrap_or(i32::MAX));
            view_states.push(new.view_state as i16);
        }

        // A call answered within the batch is inserted with its result seq: sub-statements
        // of one statement do not see each other's rows.
        let new_ids: HashSet<&str> = calls.iter().map(|(id, _)| id.as_str()).collect();
        let answer_of = |id: &str| answers.iter().find(|(answered, _)| answered == id);
        let call_ids: Vec<&str> = calls.iter().map(|(id, _)| id.as_str()).collect();
        let call_seqs: Vec<i64> = calls.iter().map(|(_, seq)| *seq).collect();
        let result_seqs: Vec<Option<i64>> = calls
            .iter()
            .map(|(id, _)| answer_of(id).map(|(_, seq)| *seq))
            .collect();
        let (answer_ids, answer_seqs): (Vec<&str>, Vec<i64>) = answers
            .iter()
            .filter(|(id, _)| !new_ids.contains(id.as_str()))
            .map(|(id, seq)| (id.as_str(), *seq))
            .unzip();

        let anchor = update.anchor.as_ref();
        sqlx::query(include_str!("sql/append.sql"))
            .bind(self.session.id)
            .bind(seqs)
            .bind(turns)
            .bind(roles)
            .bind(contents)
            .bind(parts)
            .bind(reasonings)
            .bind(tool_calls)
            .bind(tool_call_ids)
            .bind(names)
            .bind(metadata)
            .bind(pinned)
            .bind(token_counts)
            .bind(call_ids)
            .bind(call_seqs)
            .bind(result_seqs)
            .bind(answer_ids)
            .bind(answer_seqs)
            .bind(update.version)
            .bind(update.message_count)
            .bind(update.turn_count)
            .bind(update.log_tokens)
            .bind(update.view_tokens)
            .bind(update.last_turn_tokens)
            .bind(anchor.map(|a| a.reported_tokens))
            .bind(anchor.map(|a| a.fixed_tokens))
            .bind(anchor.map(|a| a.history_tokens))
            .bind(anchor.map(|a| a.first_seq))
            .bind(anchor.map(|a| a.last_seq))
            .bind(anchor.map(|a| a.view_epoch))
            .bind(anchor.and_then(|a| a.error))
            .bind(update.usage.0)
            .bind(update.usage.1)
            .bind(update.usage.2)
            .bind(anchor.map(|a| a.delta_ratio))
            .bind(view_tokens)
            .bind(view_states)
            .bind(update.evicted)
            .bind(batch.iter().any(|new| new.message.role == Role::User))
            .execute(self.conn())
            .await?;
        self.finish().await
    }
}
