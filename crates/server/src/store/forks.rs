//! ForkSession's store side: what the engine reads of the source under its row lock to
//! decide the fork, and the one statement that writes the fork (decision 0019).
use std::sync::LazyLock;

use sqlx::types::Json;

use super::StoreResult;
use super::sessions::{SessionRow, count_live_sessions, lock_creations, with_session_columns};
use super::summaries::{CHILDREN_SQL, SummaryRow};
use super::{EVENTS_CHANNEL, SessionTx};
use crate::events::EventDetail;
use crate::message::ViewState;
use crate::metrics::metrics;
use crate::session::{Session, Summary};

/// Sums over a range of a session's log as it sees it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, sqlx::FromRow)]
pub struct LogSums {
    /// Token counts, as appended.
    pub tokens: i64,
    /// Tokens in the view of the messages not taken out of it by a step summary.
    pub view_tokens: i64,
    /// Bytes of text (`Message::counted_bytes`).
    pub bytes: i64,
    /// The newest turn (0: none).
    pub turn: i64,
}

/// A message a step summary had taken out of the view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summarized {
    pub seq: i64,
    pub token_count: i64,
    pub view_tokens: i64,
}

/// The fork to write, as the engine decided it.
pub struct NewFork<'a> {
    pub external_id: &'a str,
    pub policy: &'a serde_json::Value,
    pub metadata: &'a std::collections::BTreeMap<String, String>,
    pub at_seq: i64,
    pub turn_count: i64,
    pub log_tokens: i64,
    pub content_bytes: i64,
    pub view_tokens: i64,
    pub last_turn_tokens: i64,
    pub view_first_seq: i64,
    pub summary_tokens: i64,
    pub budget_status: crate::budget::Status,
    /// The source's summaries the fork starts with as its active ones.
    pub summaries: Vec<i64>,
    /// Messages back in the fork's view with a state of their own: (seq, state, tokens).
    pub restored: Vec<(i64, ViewState, i64)>,
    /// The fork's first event.
    pub event: EventDetail,
}

/// `sql` with each `{segments:$n}` written out as `sql/forks/segments.sql`, its tenant
/// parameter `$n`: where the session's messages are, read in the statement itself so
/// that every table it reads is filtered by the tenant.
pub(super) fn with_segments(sql: &str) -> String {
    const SEGMENTS: &str = include_str!("sql/forks/segments.sql");
    let mut out = String::with_capacity(sql.len() + SEGMENTS.len());
    let mut rest = sql;
    while let Some(start) = rest.find("{segments:") {
        let tail = &rest[start + "{segments:".len()..];
        let end = tail
            .find('}')
            .expect("a {segments:$n} placeholder is closed");
        out.push_str(&rest[..start]);
        out.push_str(&SEGMENTS.replace("{tenant}", &tail[..end]));
        rest = &tail[end + 1..];
    }
    out.push_str(rest);
    out
}

/// The fork statements with their segments written out (`with_segments`).
macro_rules! segmented {
    ($name:ident, $file:literal) => {
        pub(super) static $name: LazyLock<String> =
            LazyLock::new(|| with_segments(include_str!($file)));
    };
}
segmented!(SUMS_SQL, "sql/forks/sums.sql");
segmented!(TURN_START_SQL, "sql/forks/turn_start.sql");
segmented!(SUMMARIZED_SQL, "sql/forks/summarized.sql");
segmented!(VISIBLE_RANGE_SQL, "sql/forks/visible_range.sql");
segmented!(BY_SEQ_SQL, "sql/forks/by_seq.sql");
segmented!(IN_RANGE_SQL, "sql/forks/in_range.sql");
segmented!(TOOL_CALL_SQL, "sql/append/tool_call_fork.sql");
segmented!(PRIOR_STATES_SQL, "sql/revert/prior_states.sql");
segmented!(RECOUNT_SQL, "sql/revert/recount.sql");

static CREATE_SQL: LazyLock<String> =
    LazyLock::new(|| with_session_columns(include_str!("sql/forks/create.sql")));

impl SessionTx {
    /// How deep the locked session is in its fork lineage (0: not a fork).
    pub async fn lineage_depth(&mut self) -> StoreResult<i64> {
        let session_id = self.session.id;
        let depth: Option<i32> = sqlx::query_scalar(
            "select max(depth) from session_lineage where session_id = $1 and tenant_id = $2",
        )
        .bind(session_id)
        .bind(self.session.tenant_id)
        .fetch_one(self.conn())
        .await?;
        Ok(i64::from(depth.unwrap_or(0)))
    }

    /// The summaries directly under `parents` in the locked session's tree.
    pub async fn summary_children(&mut self, parents: &[i64]) -> StoreResult<Vec<Summary>> {
        let session_id = self.session.id;
        let rows: Vec<SummaryRow> = sqlx::query_as(CHILDREN_SQL.as_str())
            .bind(session_id)
            .bind(parents)
            .bind(self.session.tenant_id)
            .fetch_all(self.conn())
            .await?;
        Ok(rows.into_iter().map(Summary::from).collect())
    }

    /// Sums over seqs `first..=last` of the locked session's log (zeros when empty).
    pub async fn log_sums(&mut self, first: i64, last: i64) -> StoreResult<LogSums> {
        if first > last {
            return Ok(LogSums::default());
        }
        let session_id = self.session.id;
        Ok(sqlx::query_as(SUMS_SQL.as_str())
            .bind(session_id)
            .bind(first)
            .bind(last)
            .bind(self.session.tenant_id)
            .fetch_one(self.conn())
            .await?)
    }

    /// The seq of the newest user message at or before `seq` (None: none).
    pub async fn turn_start(&mut self, seq: i64) -> StoreResult<Option<i64>> {
        let session_id = self.session.id;
        Ok(sqlx::query_scalar(TURN_START_SQL.as_str())
            .bind(session_id)
            .bind(seq)
            .bind(self.session.tenant_id)
            .fetch_one(self.conn())
            .await?)
    }

    /// Messages among seqs `first..=last` a step summary took out of the view.
    pub async fn summarized(&mut self, first: i64, last: i64) -> StoreResult<Vec<Summarized>> {
        if first > last {
            return Ok(Vec::new());
        }
        let session_id = self.session.id;
        let rows: Vec<(i64, i64, i64)> = sqlx::query_as(SUMMARIZED_SQL.as_str())
            .bind(session_id)
            .bind(first)
            .bind(last)
            .bind(self.session.tenant_id)
            .fetch_all(self.conn())
            .await?;
        Ok(rows
            .into_iter()
            .map(|(seq, token_count, view_tokens)| Summarized {
                seq,
                token_count,
                view_tokens,
            })
            .collect())
    }

    /// The tenant's live sessions, counted under the tenant's creation lock (held to
    /// the commit), so forks and creates on every replica queue there.
    pub async fn live_sessions(&mut self, tenant_id: i64) -> StoreResult<u64> {
        lock_creations(self.conn(), tenant_id).await?;
        count_live_sessions(self.conn(), tenant_id).await
    }

    /// Writes the fork of the locked session with SESSION_FORKED on both (`fork.event`),
    /// and commits. A taken id surfaces as a unique violation, with nothing written.
    pub async fn create_fork(mut self, fork: NewFork<'_>) -> StoreResult<Session> {
        let source = self.session.clone();
        let (seqs, (states, tokens)): (Vec<i64>, (Vec<i16>, Vec<i32>)) = fork
            .restored
            .iter()
            .map(|&(seq, state, tokens)| {
                (
                    seq,
                    (state as i16, i32::try_from(tokens).unwrap_or(i32::MAX)),
                )
            })
            .unzip();
        let counts = [
            fork.turn_count,
            fork.log_tokens,
            fork.content_bytes,
            fork.view_tokens,
            fork.last_turn_tokens,
            fork.view_first_seq,
            fork.summary_tokens,
        ];
        let row: SessionRow = sqlx::query_as(CREATE_SQL.as_str())
            .bind(source.tenant_id)
            .bind(fork.external_id)
            .bind(Json(fork.policy))
            .bind(Json(fork.metadata))
            .bind(&source.external_id)
            .bind(source.id)
            .bind(fork.at_seq)
            .bind(source.base_seq)
            .bind(&counts[..])
            .bind(&fork.summaries)
            .bind(seqs)
            .bind(states)
            .bind(tokens)
            .bind(fork.event.kind() as i16)
            .bind(Json(&fork.event))
            .bind(EVENTS_CHANNEL)
            .bind(fork.budget_status.code())
            .fetch_one(self.conn())
            .await?;
        self.tx.commit().await?;
        // The fork's first event and the source's.
        metrics().event_written(fork.event.kind() as i16);
        metrics().event_written(fork.event.kind() as i16);
        Ok(Session::from(row))
    }
}
