//! The events outbox: written with the change it describes, under the session's row
//! lock; read by one session's seq, or in (tx, id) order below the visibility horizon.
use std::sync::LazyLock;

use sqlx::types::Json;

use super::pooler::Conn;
use super::{SessionTx, Store, with_columns};
use super::{StoreError, StoreResult};
use crate::events::{Event, EventDetail, Position};
use crate::metrics::metrics;

/// The channel an event's commit is announced on (payload: the event id).
pub const EVENTS_CHANNEL: &str = "ctxd_events";

/// An event row as read: private to the store, which hands out [`Event`]s.
#[derive(sqlx::FromRow)]
struct EventRow {
    id: i64,
    tenant_id: i64,
    session_id: i64,
    external_id: String,
    session_seq: i64,
    tx: i64,
    kind: i16,
    session_version: i64,
    detail: Json<EventDetail>,
    created_at: chrono::DateTime<chrono::Utc>,
}

impl From<EventRow> for Event {
    fn from(row: EventRow) -> Event {
        Event {
            id: row.id,
            tenant_id: row.tenant_id,
            session_id: row.session_id,
            external_id: row.external_id,
            session_seq: row.session_seq,
            tx: row.tx,
            kind: row.kind,
            session_version: row.session_version,
            detail: row.detail.0,
            created_at: row.created_at,
        }
    }
}

/// Every event column: the `{columns}` of statements that read whole rows into
/// [`Event`].
const EVENT_COLUMNS: &str = "id, tenant_id, session_id, external_id, session_seq, tx, kind, \
    session_version, detail, created_at";

static SESSION_EVENTS_SQL: LazyLock<String> =
    LazyLock::new(|| with_columns(include_str!("sql/events/session_events.sql"), EVENT_COLUMNS));
static EVENTS_AFTER_SQL: LazyLock<String> =
    LazyLock::new(|| with_columns(include_str!("sql/events/after.sql"), EVENT_COLUMNS));
static TREE_EVENTS_AFTER_SQL: LazyLock<String> =
    LazyLock::new(|| with_columns(include_str!("sql/events/after_tree.sql"), EVENT_COLUMNS));

impl SessionTx {
    /// Queues an event for this transaction; it is written just before the commit,
    /// stamped with the session's version then.
    pub fn add_event(&mut self, detail: EventDetail) {
        self.events.push(detail);
    }

    /// The budget status the session's latest event saw.
    pub fn budget_status(&self) -> crate::budget::Status {
        self.budget_status.unwrap_or(self.session.budget_status)
    }

    /// Records a new budget status (with the crossing event queued by the caller).
    pub fn set_budget_status(&mut self, status: crate::budget::Status) {
        self.budget_status = Some(status);
    }

    /// Writes the queued events (per-session seqs taken from the locked row), announces
    /// them, and commits.
    pub(super) async fn finish(mut self) -> StoreResult<()> {
        if !self.events.is_empty() {
            let kinds: Vec<i16> = self.events.iter().map(|e| e.kind() as i16).collect();
            let details: Vec<Json<&EventDetail>> = self.events.iter().map(Json).collect();
            sqlx::query(include_str!("sql/events/write.sql"))
                .bind(self.session.id)
                .bind(kinds)
                .bind(details)
                .bind(self.budget_status.map(crate::budget::Status::code))
                .bind(EVENTS_CHANNEL)
                .bind(self.session.tenant_id)
                .execute(Conn::new(&mut self.tx, self.pooler))
                .await?;
        }
        self.tx.commit().await.map_err(StoreError::from)?;
        for event in &self.events {
            metrics().event_written(event.kind() as i16);
        }
        Ok(())
    }
}

impl Store {
    /// One session's events after `after_seq`, in seq order.
    pub async fn session_events(
        &self,
        tenant_id: i64,
        session_id: i64,
        after_seq: i64,
        limit: i64,
    ) -> StoreResult<Vec<Event>> {
        let rows: Vec<EventRow> = sqlx::query_as(SESSION_EVENTS_SQL.as_str())
            .bind(session_id)
            .bind(after_seq)
            .bind(limit)
            .bind(tenant_id)
            .fetch_all(self.db())
            .await?;
        Ok(rows.into_iter().map(Event::from).collect())
    }

    /// Events after `after` in (tx, id) order, of one tenant or (None) all, each with
    /// whether it is below the visibility horizon (its transaction, and every older one,
    /// has ended). The visible ones form a prefix: only those may be delivered now.
    pub async fn events_after(
        &self,
        tenant_id: Option<i64>,
        after: Position,
        limit: i64,
    ) -> StoreResult<Vec<(Event, bool)>> {
        let horizon = self.horizon_xid().await?;
        let rows: Vec<VisibleRow> = sqlx::query_as(EVENTS_AFTER_SQL.as_str())
            .bind(tenant_id)
            .bind(after.tx)
            .bind(after.id)
            .bind(limit)
            .bind(horizon)
            .fetch_all(self.db())
            .await?;
        Ok(rows
            .into_iter()
            .map(|r| (Event::from(r.row), r.visible))
            .collect())
    }

    /// [`Store::events_after`] of one tenant, only the events of the session `root`
    /// (sessions.id) and of its descendants (deleted ones included).
    pub async fn tree_events_after(
        &self,
        tenant_id: i64,
        root: i64,
        after: Position,
        limit: i64,
    ) -> StoreResult<Vec<(Event, bool)>> {
        let horizon = self.horizon_xid().await?;
        let rows: Vec<VisibleRow> = sqlx::query_as(TREE_EVENTS_AFTER_SQL.as_str())
            .bind(tenant_id)
            .bind(after.tx)
            .bind(after.id)
            .bind(limit)
            .bind(root)
            .bind(horizon)
            .fetch_all(self.db())
            .await?;
        Ok(rows
            .into_iter()
            .map(|r| (Event::from(r.row), r.visible))
            .collect())
    }

    /// The newest position below the visibility horizon: where a reader that wants only
    /// what comes next starts.
    pub async fn events_horizon(&self, tenant_id: Option<i64>) -> StoreResult<Position> {
        let horizon = self.horizon_xid().await?;
        let row: Option<(i64, i64)> = sqlx::query_as(include_str!("sql/events/horizon.sql"))
            .bind(tenant_id)
            .bind(horizon)
            .fetch_optional(self.db())
            .await?;
        Ok(row.map_or(Position::START, |(tx, id)| Position { tx, id }))
    }

    /// The visibility horizon: every transaction whose id is below it has ended, so an
    /// event whose `tx` is below it is visible to every later statement and no event
    /// below it is still to come. Read by a statement of its own, before the events
    /// are: on a distributed database the transaction ids are the coordinator's (it
    /// evaluates the column default of every write it routes), while a read of the
    /// events runs on the node holding them, whose snapshot would be another node's
    /// (docs/decisions/0028-citus-distribution.md).
    async fn horizon_xid(&self) -> StoreResult<i64> {
        Ok(
            sqlx::query_scalar("select pg_snapshot_xmin(pg_current_snapshot())::text::bigint")
                .fetch_one(self.db())
                .await?,
        )
    }

    /// The newest position pruning removed from a tenant's events.
    pub async fn events_pruned(&self, tenant_id: i64) -> StoreResult<Position> {
        let row: Option<(i64, i64)> =
            sqlx::query_as("select tx, id from events_pruned where tenant_id = $1")
                .bind(tenant_id)
                .fetch_optional(self.db())
                .await?;
        Ok(row.map_or(Position::START, |(tx, id)| Position { tx, id }))
    }

    /// A session's oldest kept event seq (None: none kept) and its newest seq.
    pub async fn session_event_bounds(
        &self,
        tenant_id: i64,
        session_id: i64,
    ) -> StoreResult<(Option<i64>, i64)> {
        sqlx::query_as(include_str!("sql/events/bounds.sql"))
            .bind(session_id)
            .bind(tenant_id)
            .fetch_optional(self.db())
            .await
            .map(|row| row.unwrap_or((None, 0)))
            .map_err(StoreError::from)
    }

    /// Deletes events older than `retention`, remembering per tenant the newest position
    /// removed. Returns how many went.
    pub async fn prune_events(&self, retention: std::time::Duration) -> StoreResult<u64> {
        sqlx::query_scalar(include_str!("sql/events/prune.sql"))
            .bind(retention.as_secs_f64())
            .fetch_one(self.db())
            .await
            .map(|n: i64| n as u64)
            .map_err(StoreError::from)
    }
}

#[derive(sqlx::FromRow)]
struct VisibleRow {
    #[sqlx(flatten)]
    row: EventRow,
    visible: bool,
}
