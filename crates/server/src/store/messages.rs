//! Reads of the message log.
use std::collections::BTreeMap;
use std::sync::Arc;

use sqlx::types::Json;

use super::Store;
use super::StoreResult;
use super::views::{CachedView, View, ViewKey};
use crate::message::{Message, Part, Role, StoredMessage, ToolCall, ViewState};
use crate::metrics::{ViewLookup, metrics};
use crate::session::Session;

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
    view_tokens: i32,
    view_state: i16,
    created_at: chrono::DateTime<chrono::Utc>,
}

impl MessageRow {
    fn into_stored(self) -> StoredMessage {
        StoredMessage {
            seq: self.seq,
            turn: self.turn,
            token_count: i64::from(self.token_count),
            view_tokens: i64::from(self.view_tokens),
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

impl Store {
    /// The messages of the session's view as `row` describes it (from its view's first
    /// seq to its last message, without those a step summary covers), in order. Reads
    /// only the messages appended since this replica last read the same view epoch.
    pub async fn view(&self, row: &Session) -> StoreResult<View> {
        let key = ViewKey {
            view_epoch: row.view_epoch,
            first_seq: row.view_first_seq,
        };
        if let Some(cached) = self.views.get(row.id, key)
            && cached.through_seq >= row.message_count
        {
            // Everything is there (more, when read with an older session row: the view
            // as that row knew it).
            let len = cached
                .messages
                .partition_point(|m| m.seq <= row.message_count);
            metrics().view_cache_lookup(ViewLookup::Hit);
            return Ok(View::shared(cached.messages, len));
        }
        // Extend the entry, taken out of the cache so its messages move rather than
        // copy (unless a build still holds them; a concurrent build of the session reads
        // the table meanwhile).
        let (mut messages, from_seq) = match self.views.take(row.id, key) {
            Some(cached) => {
                let mut messages =
                    Arc::try_unwrap(cached.messages).unwrap_or_else(|shared| (*shared).clone());
                messages.retain(|m| m.seq <= row.message_count);
                (messages, cached.through_seq.min(row.message_count) + 1)
            }
            None => (Vec::new(), row.view_first_seq),
        };
        if self.views.enabled() {
            metrics().view_cache_lookup(if messages.is_empty() {
                ViewLookup::Miss
            } else {
                ViewLookup::Partial
            });
        }
        messages.extend(self.view_range(row, from_seq, row.message_count).await?);
        if !self.views.enabled() {
            return Ok(View::from(messages));
        }
        let messages = Arc::new(messages);
        self.views.put(
            row.id,
            CachedView {
                key,
                through_seq: row.message_count,
                messages: messages.clone(),
            },
        );
        let len = messages.len();
        Ok(View::shared(messages, len))
    }

    /// The view's messages with a seq from `first_seq` to `last_seq`, in order.
    async fn view_range(
        &self,
        row: &Session,
        first_seq: i64,
        last_seq: i64,
    ) -> StoreResult<Vec<StoredMessage>> {
        if first_seq > last_seq {
            return Ok(Vec::new());
        }
        // A range past what a fork inherits is its own rows, read as any session's.
        let sql = if row.inherits() && first_seq <= row.base_seq {
            super::forks::VISIBLE_RANGE_SQL.as_str()
        } else {
            include_str!("sql/messages/visible_range.sql")
        };
        let rows: Vec<MessageRow> = sqlx::query_as(sql)
            .bind(row.id)
            .bind(first_seq)
            .bind(last_seq)
            .bind(row.tenant_id)
            .fetch_all(self.db())
            .await?;
        Ok(rows.into_iter().map(MessageRow::into_stored).collect())
    }

    /// The messages whose seq is in `seqs`, in seq order.
    pub async fn messages_by_seq(
        &self,
        row: &Session,
        seqs: &[i64],
    ) -> StoreResult<Vec<StoredMessage>> {
        let sql = if row.inherits() && seqs.iter().any(|&seq| seq <= row.base_seq) {
            super::forks::BY_SEQ_SQL.as_str()
        } else {
            include_str!("sql/messages/by_seq.sql")
        };
        let rows: Vec<MessageRow> = sqlx::query_as(sql)
            .bind(row.id)
            .bind(seqs)
            .bind(row.tenant_id)
            .fetch_all(self.db())
            .await?;
        Ok(rows.into_iter().map(MessageRow::into_stored).collect())
    }

    /// The messages from `first_seq` to `last_seq` (inclusive) whose running token
    /// total stays within `max_tokens` (0: no cap; the first row always comes), in seq
    /// order.
    pub async fn messages_in_range(
        &self,
        row: &Session,
        first_seq: i64,
        last_seq: i64,
        max_tokens: i64,
    ) -> StoreResult<Vec<StoredMessage>> {
        let sql = if row.inherits() && first_seq <= row.base_seq {
            super::forks::IN_RANGE_SQL.as_str()
        } else {
            include_str!("sql/messages/in_range.sql")
        };
        let rows: Vec<MessageRow> = sqlx::query_as(sql)
            .bind(row.id)
            .bind(first_seq)
            .bind(last_seq)
            .bind(max_tokens)
            .bind(row.tenant_id)
            .fetch_all(self.db())
            .await?;
        Ok(rows.into_iter().map(MessageRow::into_stored).collect())
    }
}
