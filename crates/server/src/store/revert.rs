//! Compaction records and undoing compactions, under the session's row lock: each
//! compaction writes its record in its own transaction (what the view held before it);
//! a revert finds one, takes it and every later one back, and recounts the view.
use std::sync::LazyLock;

use super::StoreResult;
use super::{SessionTx, Store, with_columns};
use crate::revert::{Compaction, CompactionRecord};
use crate::session::{Session, Summary};

/// A compaction record as read: private to the store, which hands out
/// [`CompactionRecord`]s.
#[derive(sqlx::FromRow)]
struct CompactionRow {
    id: i64,
    event_seq: i64,
    compaction: i16,
    view_epoch_before: i64,
    view_first_seq_before: i64,
    view_tokens_delta: i64,
    summary_tokens_delta: i64,
    seqs: Vec<i64>,
    summary_ids: Vec<i64>,
    first_seq: i64,
    last_seq: i64,
    reverted_by_seq: Option<i64>,
}

impl From<CompactionRow> for CompactionRecord {
    fn from(row: CompactionRow) -> CompactionRecord {
        CompactionRecord {
            id: row.id,
            event_seq: row.event_seq,
            compaction: Compaction::from_i16(row.compaction),
            view_epoch_before: row.view_epoch_before,
            view_first_seq_before: row.view_first_seq_before,
            view_tokens_delta: row.view_tokens_delta,
            summary_tokens_delta: row.summary_tokens_delta,
            seqs: row.seqs,
            summary_ids: row.summary_ids,
            first_seq: row.first_seq,
            last_seq: row.last_seq,
            reverted_by: row.reverted_by_seq,
        }
    }
}

const COLUMNS: &str = "id, event_seq, compaction, view_epoch_before, view_first_seq_before, \
    view_tokens_delta, summary_tokens_delta, seqs, summary_ids, first_seq, last_seq, \
    reverted_by_seq";

static FIND_SQL: LazyLock<String> =
    LazyLock::new(|| with_columns(include_str!("sql/revert/find.sql"), COLUMNS));
static CHAIN_SQL: LazyLock<String> =
    LazyLock::new(|| with_columns(include_str!("sql/revert/chain.sql"), COLUMNS));

/// What a compaction changes, recorded in its transaction before the change is written
/// (the store reads the messages' view state before it from the table).
#[derive(Debug, Clone)]
pub struct NewCompaction {
    pub compaction: Compaction,
    /// The session_seq its event gets ([`SessionTx::queued_event_seq`]).
    pub event_seq: i64,
    /// What it changes in the session's view tokens and summary tokens (after - before).
    pub view_tokens_delta: i64,
    pub summary_tokens_delta: i64,
    /// The messages whose view state it changes.
    pub seqs: Vec<i64>,
    /// The summaries it wrote.
    pub summary_ids: Vec<i64>,
    /// A summarization pass's covered messages (0, 0 for a clearing).
    pub first_seq: i64,
    pub last_seq: i64,
}

/// The session row after a revert.
#[derive(Debug, Clone, Copy)]
pub struct RevertUpdate {
    pub view_first_seq: i64,
    pub view_tokens: i64,
    pub summary_tokens: i64,
    pub cleared_messages: i64,
    pub summaries_written: i64,
    pub view_epoch: i64,
    /// The anchor's view epoch restamped, when the session has an anchor.
    pub anchor_view_epoch: Option<i64>,
    pub last_build_view_epoch: i64,
    pub resume_log_tokens: i64,
}

/// A session's view aggregates as its rows give them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recount {
    /// Tokens of the messages in the view.
    pub view_tokens: i64,
    /// Tokens of each active summary's text (in no particular order).
    pub summary_token_counts: Vec<i64>,
    /// The last seq the active summaries before the view cover (0: none).
    pub covered_through: i64,
}

impl SessionTx {
    /// The session_seq the newest queued event gets when this transaction commits.
    pub fn queued_event_seq(&self) -> i64 {
        self.session.event_seq + self.events.len() as i64
    }

    /// Records a compaction about to be written in this transaction (before its view
    /// changes, whose state before it reads here).
    pub async fn record_compaction(&mut self, new: &NewCompaction) -> StoreResult<()> {
        let session = &self.session;
        let (id, tenant) = (session.id, session.tenant_id);
        let (epoch, first_seq) = (session.view_epoch, session.view_first_seq);
        // Read, then written by a statement of its own (sql/revert/prior_states.sql).
        let (seqs, states, tokens): (Vec<i64>, Vec<i16>, Vec<i32>) =
            sqlx::query_as(super::forks::PRIOR_STATES_SQL.as_str())
                .bind(id)
                .bind(&new.seqs)
                .bind(tenant)
                .fetch_one(self.conn())
                .await?;
        sqlx::query(include_str!("sql/revert/record.sql"))
            .bind(id)
            .bind(new.event_seq)
            .bind(new.compaction.to_i16())
            .bind(epoch)
            .bind(first_seq)
            .bind(new.view_tokens_delta)
            .bind(new.summary_tokens_delta)
            .bind(seqs)
            .bind(states)
            .bind(tokens)
            .bind(&new.summary_ids)
            .bind(new.first_seq)
            .bind(new.last_seq)
            .bind(tenant)
            .execute(self.conn())
            .await?;
        Ok(())
    }

    /// The compaction whose event has session_seq `event_seq`.
    pub async fn compaction_by_event(
        &mut self,
        event_seq: i64,
    ) -> StoreResult<Option<CompactionRecord>> {
        self.find_compaction(Some(event_seq), None).await
    }

    /// The compaction that wrote summary `summary_id`.
    pub async fn compaction_by_summary(
        &mut self,
        summary_id: i64,
    ) -> StoreResult<Option<CompactionRecord>> {
        self.find_compaction(None, Some(summary_id)).await
    }

    async fn find_compaction(
        &mut self,
        event_seq: Option<i64>,
        summary_id: Option<i64>,
    ) -> StoreResult<Option<CompactionRecord>> {
        let session_id = self.session.id;
        let row: Option<CompactionRow> = sqlx::query_as(FIND_SQL.as_str())
            .bind(session_id)
            .bind(event_seq)
            .bind(summary_id)
            .bind(self.session.tenant_id)
            .fetch_optional(self.conn())
            .await?;
        Ok(row.map(CompactionRecord::from))
    }

    /// The compactions a revert of `record_id` undoes: it and every later one still in
    /// force, newest first.
    pub async fn compactions_from(&mut self, record_id: i64) -> StoreResult<Vec<CompactionRecord>> {
        let session_id = self.session.id;
        let rows: Vec<CompactionRow> = sqlx::query_as(CHAIN_SQL.as_str())
            .bind(session_id)
            .bind(record_id)
            .bind(self.session.tenant_id)
            .fetch_all(self.conn())
            .await?;
        Ok(rows.into_iter().map(CompactionRecord::from).collect())
    }

    /// The session_seq of this session's event `event_id` (a tenant stream's cursor),
    /// while it is kept.
    pub async fn event_seq_of(&mut self, event_id: i64) -> StoreResult<Option<i64>> {
        let session_id = self.session.id;
        Ok(sqlx::query_scalar(
            "select session_seq from events
                 where session_id = $1 and tenant_id = $3 and id = $2",
        )
        .bind(session_id)
        .bind(event_id)
        .bind(self.session.tenant_id)
        .fetch_optional(self.conn())
        .await?)
    }

    /// The kind (EventKind number) of this session's event `event_seq`, while it is kept.
    pub async fn event_kind_at(&mut self, event_seq: i64) -> StoreResult<Option<i16>> {
        let session_id = self.session.id;
        Ok(sqlx::query_scalar(
            "select kind from events
                 where session_id = $1 and tenant_id = $3 and session_seq = $2",
        )
        .bind(session_id)
        .bind(event_seq)
        .bind(self.session.tenant_id)
        .fetch_optional(self.conn())
        .await?)
    }

    /// Whether this session has a summary `summary_id`.
    pub async fn has_summary(&mut self, summary_id: i64) -> StoreResult<bool> {
        let session_id = self.session.id;
        Ok(sqlx::query_scalar(
            "select exists (select 1 from summaries
                where session_id = $1 and tenant_id = $3 and id = $2)",
        )
        .bind(session_id)
        .bind(summary_id)
        .bind(self.session.tenant_id)
        .fetch_one(self.conn())
        .await?)
    }

    /// Whether this session reads summary `summary_id` of an ancestor (a fork's
    /// inherited summary: its source's compaction, not this session's).
    pub async fn inherits_summary(&mut self, summary_id: i64) -> StoreResult<bool> {
        let session_id = self.session.id;
        Ok(sqlx::query_scalar(
            "select exists (select 1 from summary_links
                     where session_id = $1 and tenant_id = $3 and summary_id = $2)
                 or exists (select 1 from summaries su
                     join session_lineage l on l.ancestor_id = su.session_id
                         and l.tenant_id = $3
                     where l.session_id = $1 and su.tenant_id = $3 and su.id = $2
                       and su.id <= l.summary_limit and su.last_seq <= l.last_seq)",
        )
        .bind(session_id)
        .bind(summary_id)
        .bind(self.session.tenant_id)
        .fetch_one(self.conn())
        .await?)
    }

    /// Undoes `chain` (a compaction and every later one in force), marking it undone by
    /// the event with session_seq `event_seq`, and sets the session row to `update`.
    /// Returns the messages whose view state came back, in seq order.
    pub async fn undo_compactions(
        &mut self,
        chain: &[CompactionRecord],
        event_seq: i64,
        update: &RevertUpdate,
    ) -> StoreResult<Vec<i64>> {
        let session_id = self.session.id;
        let ids: Vec<i64> = chain.iter().map(|record| record.id).collect();
        let summary_ids: Vec<i64> = chain
            .iter()
            .flat_map(|record| record.summary_ids.iter().copied())
            .collect();
        // View states go back the one way they are written (decision 0019): a fork's
        // state of an inherited message in its overlay, the session's own rows after
        // their current state is pushed down to the forks reading them.
        let dependants = self.lock_dependants().await?;
        let base_seq = self.session.base_seq;
        let restored: Vec<i64> = sqlx::query_scalar(include_str!("sql/revert/restore.sql"))
            .bind(session_id)
            .bind(&ids)
            .bind(base_seq)
            .bind(&dependants)
            .bind(self.session.tenant_id)
            .fetch_one(self.conn())
            .await?;
        sqlx::query(include_str!("sql/revert/undo.sql"))
            .bind(session_id)
            .bind(&ids)
            .bind(&summary_ids)
            .bind(event_seq)
            .bind(self.session.tenant_id)
            .execute(self.conn())
            .await?;
        sqlx::query(include_str!("sql/revert/session.sql"))
            .bind(session_id)
            .bind(update.view_first_seq)
            .bind(update.view_tokens)
            .bind(update.summary_tokens)
            .bind(update.cleared_messages)
            .bind(update.summaries_written)
            .bind(update.view_epoch)
            .bind(update.anchor_view_epoch)
            .bind(update.last_build_view_epoch)
            .bind(update.resume_log_tokens)
            .bind(self.session.tenant_id)
            .execute(self.conn())
            .await?;
        Ok(restored)
    }

    /// The session's view aggregates recounted from its rows as this transaction sees
    /// them.
    pub async fn recount_view(&mut self) -> StoreResult<Recount> {
        let session_id = self.session.id;
        let (view_tokens, summary_token_counts, covered_through): (i64, Vec<i64>, i64) =
            sqlx::query_as(super::forks::RECOUNT_SQL.as_str())
                .bind(session_id)
                .bind(self.session.tenant_id)
                .fetch_one(self.conn())
                .await?;
        Ok(Recount {
            view_tokens,
            summary_token_counts,
            covered_through,
        })
    }

    /// The active summaries as this transaction sees them, oldest first.
    pub async fn active_summaries(&mut self) -> StoreResult<Vec<Summary>> {
        let (session_id, tenant_id) = (self.session.id, self.session.tenant_id);
        super::summaries::active(self.conn(), session_id, tenant_id).await
    }

    /// Ends the transaction without writing anything (a dry run).
    pub async fn rollback(self) -> StoreResult<()> {
        self.tx.rollback().await?;
        Ok(())
    }
}

impl Store {
    /// Lifts the wait of automatic compaction after a revert (a manual Compact).
    pub async fn lift_compaction_hold(&self, session: &Session) -> StoreResult<()> {
        sqlx::query(
            "update sessions set compaction_resume_log_tokens = 0
             where id = $1 and tenant_id = $2",
        )
        .bind(session.id)
        .bind(session.tenant_id)
        .execute(self.db())
        .await?;
        Ok(())
    }

    /// The summaries reverts took out of the view, most recently reverted first, at
    /// most `limit`.
    pub async fn reverted_summaries(
        &self,
        session: &Session,
        limit: i64,
    ) -> StoreResult<Vec<Summary>> {
        super::summaries::reverted(self.db(), session, limit).await
    }
}
