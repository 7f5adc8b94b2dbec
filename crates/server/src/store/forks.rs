//! ForkSession's store side: what the engine reads of the source under its row lock to
//! decide the fork, and the one statement that writes the fork (decision 0019).
use std::sync::LazyLock;

use sqlx::types::Json;

use super::StoreResult;
use super::sessions::{SessionRow, count_live_sessions, with_session_columns};
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

static CREATE_SQL: LazyLock<String> =
    LazyLock::new(|| with_session_columns(include_str!("sql/forks/create.sql")));

impl SessionTx {
    /// How deep the locked session is in its fork lineage (0: not a fork).
    pub async fn lineage_depth(&mut self) -> StoreResult<i64> {
        let session_id = self.session.id;
        let depth: Option<i32> =
            sqlx::query_scalar("select max(depth) from session_lineage where session_id = $1")
                .bind(session_id)
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
        Ok(sqlx::query_as(include_str!("sql/forks/sums.sql"))
            .bind(session_id)
            .bind(first)
            .bind(last)
            .fetch_one(self.conn())
            .await?)
    }

    /// The seq of the newest user message at or before `seq` (None: none).
    pub async fn turn_start(&mut self, seq: i64) -> StoreResult<Option<i64>> {
        let session_id = self.session.id;
        Ok(sqlx::query_scalar(include_str!("sql/forks/turn_start.sql"))
            .bind(session_id)
            .bind(seq)
            .fetch_one(self.conn())
            .await?)
    }

    /// Messages among seqs `first..=last` a step summary took out of the view.
    pub async fn summarized(&mut self, first: i64, last: i64) -> StoreResult<Vec<Summarized>> {
        if first > last {
            return Ok(Vec::new());
        }
        let session_id = self.session.id;
        let rows: Vec<(i64, i64, i64)> = sqlx::query_as(include_str!("sql/forks/summarized.sql"))
            .bind(session_id)
            .bind(first)
            .bind(last)
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

    /// The tenant's live sessions, counted under a lock on the tenant's row (held to
    /// the commit), so forks and creates on every replica queue there.
    pub async fn live_sessions(&mut self, tenant_id: i64) -> StoreResult<u64> {
        sqlx::query("select 1 from tenants where id = $1 for update")
            .bind(tenant_id)
            .execute(self.conn())
            .await?;
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
        let row: SessionRow = sqlx::query_as(CREATE_SQL.as_str())
            .bind(source.tenant_id)
            .bind(fork.external_id)
            .bind(Json(fork.policy))
            .bind(Json(fork.metadata))
            .bind(&source.external_id)
            .bind(source.id)
            .bind(fork.at_seq)
            .bind(source.base_seq)
            .bind(fork.turn_count)
            .bind(fork.log_tokens)
            .bind(fork.content_bytes)
            .bind(fork.view_tokens)
            .bind(fork.last_turn_tokens)
            .bind(fork.view_first_seq)
            .bind(fork.summary_tokens)
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
