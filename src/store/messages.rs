//! The message log: batch inserts and reads of the view.
use std::collections::BTreeMap;

use sqlx::types::Json;

use super::{SessionTx, Store};
use crate::message::{Message, Part, Role, StoredMessage, ToolCall, ViewState};

/// A message ready to insert: seq, turn and token count assigned by the engine.
#[derive(Debug, Clone)]
pub struct NewMessage<'a> {
    pub seq: i64,
    pub turn: i64,
    pub token_count: i64,
    pub message: &'a Message,
}

#[derive(sqlx::FromRow)]
struct MessageRow {
    seq: i64,
    turn: i64,
    role: i16,
    content: String,
    parts: Option<Json<Vec<Part>>>,
    reasoning: String,
    tool_calls: Option<Json<Vec<ToolCall>>>,
    tool_call_id: String,
    name: String,
    metadata: Json<BTreeMap<String, String>>,
    pinned: bool,
    token_count: i32,
    view_state: i16,
    created_at: chrono::DateTime<chrono::Utc>,
}

impl MessageRow {
    fn into_stored(self) -> StoredMessage {
        StoredMessage {
            seq: self.seq,
            turn: self.turn,
            token_count: i64::from(self.token_count),
            view_state: ViewState::from_i16(self.view_state),
            created_at: self.created_at,
            message: Message {
                // The column only ever holds values written from a `Role`.
                role: Role::from_i32(i32::from(self.role)).unwrap_or(Role::User),
                content: self.content,
                parts: self.parts.map(|Json(parts)| parts).unwrap_or_default(),
                reasoning: self.reasoning,
                tool_calls: self.tool_calls.map(|Json(calls)| calls).unwrap_or_default(),
                tool_call_id: self.tool_call_id,
                name: self.name,
                metadata: self.metadata.0,
                pinned: self.pinned,
            },
        }
    }
}

fn json_or_null<T: serde::Serialize>(items: &[T]) -> Option<String> {
    if items.is_empty() {
        return None;
    }
    serde_json::to_string(items).ok()
}

impl SessionTx {
    /// Inserts a batch of messages in one statement.
    pub async fn insert_messages(&mut self, batch: &[NewMessage<'_>]) -> Result<(), sqlx::Error> {
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
        }
        let session_id = self.session.id;
        sqlx::query(
            "insert into messages (session_id, seq, turn, role, content, parts, reasoning,
                tool_calls, tool_call_id, name, metadata, pinned, token_count)
             select $1, m.seq, m.turn, m.role, m.content, m.parts::jsonb, m.reasoning,
                m.tool_calls::jsonb, m.tool_call_id, m.name, m.metadata::jsonb, m.pinned,
                m.token_count
             from unnest($2::bigint[], $3::bigint[], $4::smallint[], $5::text[], $6::text[],
                $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::bool[],
                $13::int[])
                as m(seq, turn, role, content, parts, reasoning, tool_calls, tool_call_id,
                     name, metadata, pinned, token_count)",
        )
        .bind(session_id)
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
        .execute(self.conn())
        .await?;
        Ok(())
    }
}

impl Store {
    /// The messages of the view from `first_seq` on, in order.
    pub async fn view_messages(
        &self,
        session_id: i64,
        first_seq: i64,
    ) -> Result<Vec<StoredMessage>, sqlx::Error> {
        let rows: Vec<MessageRow> = sqlx::query_as(
            "select seq, turn, role, content, parts, reasoning, tool_calls, tool_call_id, name,
                metadata, pinned, token_count, view_state, created_at
             from messages where session_id = $1 and seq >= $2 order by seq",
        )
        .bind(session_id)
        .bind(first_seq)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.into_iter().map(MessageRow::into_stored).collect())
    }
}
