//! What an append writes — the write itself, and its messages and tool calls as the
//! column arrays the statements unnest — shared by the single write (append.rs) and the
//! batched one (batch/), so batch/ does not use append.rs (append.rs uses batch/).
use std::collections::HashSet;

use super::jobs::NewJob;
use super::sessions::SessionUpdate;
use crate::events::EventDetail;

pub use crate::append::NewMessage;

/// A statement being bound.
pub(super) type PgQuery<'q> = sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments>;

/// Everything one append writes.
pub struct AppendWrite<'a> {
    pub batch: &'a [NewMessage<'a>],
    /// New tool calls: (id, seq of the message making it).
    pub calls: &'a [(String, i64)],
    /// Answers: (call id, seq of the result).
    pub answers: &'a [(String, i64)],
    pub update: SessionUpdate,
    pub events: Vec<EventDetail>,
    /// The session's new budget status, when it changed.
    pub budget_status: Option<crate::budget::Status>,
    /// Key, request hash and the response to replay for it.
    pub idempotency: Option<(&'a str, &'a [u8], serde_json::Value)>,
    /// A job to enqueue (none of its kind is pending), and whether to announce it.
    pub job: Option<(&'a NewJob, bool)>,
    /// A kind of job and the id of the one pending (None: none is) that the append
    /// decided on without reading them: the write applies only if that still holds.
    pub pending: Option<(&'static str, Option<i64>)>,
    /// The task ledger's share of the batch.
    pub ledger: &'a crate::ledger::extract::Extracted,
}

impl AppendWrite<'_> {
    /// Whether the write has ledger rows to merge.
    pub(super) fn has_ledger(&self) -> bool {
        !self.ledger.entries.is_empty() || !self.ledger.outcomes.is_empty()
    }
}

/// What a write that relied on a remembered pending job (`AppendWrite::pending`) saw
/// when it did not apply: the session row's version and the job of that kind pending.
/// With the row as the replica cached it, the pending job was what failed: the replica
/// corrects what it remembers and the append decides again without a read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Seen {
    pub row_version: Option<String>,
    pub pending: Option<i64>,
}

/// New tool calls with the seq of their result when the batch answers them too (a
/// sub-statement cannot see rows another one inserts), and the answers to calls of
/// earlier appends.
pub(super) type CallRows = (Vec<(String, i64, Option<i64>)>, Vec<(String, i64)>);

pub(super) fn call_rows(calls: &[(String, i64)], answers: &[(String, i64)]) -> CallRows {
    let new_ids: HashSet<&str> = calls.iter().map(|(id, _)| id.as_str()).collect();
    let answer_of = |id: &str| answers.iter().find(|(answered, _)| answered == id);
    let new_calls = calls
        .iter()
        .map(|(id, seq)| (id.clone(), *seq, answer_of(id).map(|(_, seq)| *seq)))
        .collect();
    let earlier = answers
        .iter()
        .filter(|(id, _)| !new_ids.contains(id.as_str()))
        .cloned()
        .collect();
    (new_calls, earlier)
}

/// The columns of appended messages, one array each, as the statements unnest them;
/// `items` names the batch item each message belongs to.
#[derive(Debug, Default)]
pub(super) struct MessageColumns {
    pub items: Vec<i32>,
    pub seqs: Vec<i64>,
    pub turns: Vec<i64>,
    pub roles: Vec<i16>,
    pub contents: Vec<String>,
    pub parts: Vec<Option<String>>,
    pub reasonings: Vec<String>,
    pub tool_calls: Vec<Option<String>>,
    pub tool_call_ids: Vec<String>,
    pub names: Vec<String>,
    pub metadata: Vec<String>,
    pub pinned: Vec<bool>,
    pub token_counts: Vec<i32>,
    pub view_tokens: Vec<i32>,
    pub view_states: Vec<i16>,
}

impl MessageColumns {
    pub(super) fn push(&mut self, item: i32, new: &NewMessage<'_>) {
        let message = new.message;
        self.items.push(item);
        self.seqs.push(new.seq);
        self.turns.push(new.turn);
        self.roles.push(message.role as i16);
        self.contents.push(message.content.clone());
        self.parts.push(json_or_null(&message.parts));
        self.reasonings.push(message.reasoning.clone());
        self.tool_calls.push(json_or_null(&message.tool_calls));
        self.tool_call_ids.push(message.tool_call_id.clone());
        self.names.push(message.name.clone());
        self.metadata
            .push(serde_json::to_string(&message.metadata).unwrap_or_else(|_| "{}".into()));
        self.pinned.push(message.pinned);
        self.token_counts
            .push(i32::try_from(new.token_count).unwrap_or(i32::MAX));
        self.view_tokens
            .push(i32::try_from(new.view_tokens).unwrap_or(i32::MAX));
        self.view_states.push(new.view_state as i16);
    }

    /// `query` with the batch statements' message columns bound in their order, seqs
    /// through view tokens (statement.rs and function.rs; the view states follow
    /// elsewhere in each).
    pub(super) fn bind_columns<'q>(&'q self, query: PgQuery<'q>) -> PgQuery<'q> {
        query
            .bind(&self.seqs)
            .bind(&self.turns)
            .bind(&self.roles)
            .bind(&self.contents)
            .bind(&self.parts)
            .bind(&self.reasonings)
            .bind(&self.tool_calls)
            .bind(&self.tool_call_ids)
            .bind(&self.names)
            .bind(&self.metadata)
            .bind(&self.pinned)
            .bind(&self.token_counts)
            .bind(&self.view_tokens)
    }

    /// The bytes of the messages' texts (what makes a statement large).
    pub(super) fn bytes(&self) -> usize {
        let optional =
            |texts: &[Option<String>]| -> usize { texts.iter().flatten().map(String::len).sum() };
        let texts = |texts: &[String]| -> usize { texts.iter().map(String::len).sum() };
        texts(&self.contents)
            + texts(&self.reasonings)
            + texts(&self.metadata)
            + optional(&self.parts)
            + optional(&self.tool_calls)
    }

    /// Adds `other`'s messages as batch item `item`'s.
    pub(super) fn extend(&mut self, item: i32, other: MessageColumns) {
        self.items.extend(other.items.iter().map(|_| item));
        self.seqs.extend(other.seqs);
        self.turns.extend(other.turns);
        self.roles.extend(other.roles);
        self.contents.extend(other.contents);
        self.parts.extend(other.parts);
        self.reasonings.extend(other.reasonings);
        self.tool_calls.extend(other.tool_calls);
        self.tool_call_ids.extend(other.tool_call_ids);
        self.names.extend(other.names);
        self.metadata.extend(other.metadata);
        self.pinned.extend(other.pinned);
        self.token_counts.extend(other.token_counts);
        self.view_tokens.extend(other.view_tokens);
        self.view_states.extend(other.view_states);
    }
}

fn json_or_null<T: serde::Serialize>(items: &[T]) -> Option<String> {
    if items.is_empty() {
        return None;
    }
    serde_json::to_string(items).ok()
}

/// A session finished by FinishSession: the child's row gets its end and a new version,
/// and SESSION_FINISHED goes on the child and on its parent. Written after the parent
/// append that carries its final answer, in that append's transaction — or alone.
#[derive(Debug, Clone)]
pub struct ChildFinish {
    /// sessions.id of the child, whose row lock the transaction holds, and its name.
    pub child_id: i64,
    pub child_external_id: String,
    /// The tenant of both.
    pub tenant_id: i64,
    /// sessions.id of the parent; None when it has none (any more).
    pub parent_id: Option<i64>,
    pub detail: EventDetail,
}

/// Writes `finish` in the transaction of `conn`: the child's new version (`None` when
/// the child was already finished: nothing written) and how many events it wrote, to
/// count once the transaction commits.
pub(super) async fn write_finish<'c>(
    conn: impl sqlx::Executor<'c, Database = sqlx::Postgres>,
    finish: &ChildFinish,
) -> super::StoreResult<(Option<i64>, i64)> {
    let (version, events): (Option<i64>, i64) = sqlx::query_as(include_str!("sql/tree/finish.sql"))
        .bind(finish.child_id)
        .bind(finish.parent_id)
        .bind(finish.detail.kind() as i16)
        .bind(sqlx::types::Json(&finish.detail))
        .bind(super::EVENTS_CHANNEL)
        .bind(finish.tenant_id)
        .fetch_one(conn)
        .await?;
    Ok((version, events))
}

/// Counts the events a committed [`write_finish`] wrote.
pub(super) fn count_finish_events(finish: &ChildFinish, events: i64) {
    for _ in 0..events {
        crate::metrics::metrics().event_written(finish.detail.kind() as i16);
    }
}
