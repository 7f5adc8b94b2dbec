//! Session rows: creation, lookup, the write lock, aggregates and estimation state.
use std::collections::HashMap;
use std::sync::LazyLock;

use sqlx::types::Json;
use sqlx::{FromRow, Row};

use super::StoreResult;
use super::pooler::Conn;
use super::{SessionTx, Store, with_columns};
use crate::session::{Builds, Session};

/// A session row as read: private to the store, which hands out [`Session`]s.
#[derive(sqlx::FromRow)]
pub(super) struct SessionRow {
    id: i64,
    tenant_id: i64,
    external_id: String,
    policy: Json<crate::policy::Policy>,
    metadata: Json<std::collections::BTreeMap<String, String>>,
    version: i64,
    message_count: i64,
    turn_count: i64,
    log_tokens: i64,
    /// Bytes of text in the log (`Message::counted_bytes` of every message).
    content_bytes: i64,
    view_tokens: i64,
    last_turn_tokens: i64,
    view_first_seq: i64,
    view_epoch: i64,
    last_build_first_seq: i64,
    last_build_last_seq: i64,
    last_build_system_tokens: i64,
    last_build_tool_tokens: i64,
    last_build_history_tokens: i64,
    last_build_estimate_tokens: i64,
    anchor_reported_tokens: i64,
    anchor_fixed_tokens: i64,
    anchor_history_tokens: i64,
    anchor_first_seq: i64,
    anchor_last_seq: i64,
    anchor_view_epoch: i64,
    anchor_delta_ratio: f64,
    est_samples: i64,
    est_abs_err_sum: f64,
    est_max_abs_err: f64,
    est_last_err: f64,
    usage_input_tokens: i64,
    usage_output_tokens: i64,
    usage_cached_tokens: i64,
    cleared_messages: i64,
    evicted_messages: i64,
    last_build_view_epoch: i64,
    builds: i64,
    extending_builds: i64,
    summary_tokens: i64,
    summaries_written: i64,
    compaction_failures: i32,
    event_seq: i64,
    budget_status: i16,
    compaction_resume_log_tokens: i64,
    finished_at: Option<chrono::DateTime<chrono::Utc>>,
    forked_from: Option<String>,
    base_seq: i64,
    base_bytes: i64,
    created_at: chrono::DateTime<chrono::Utc>,
    updated_at: chrono::DateTime<chrono::Utc>,
}

impl From<SessionRow> for Session {
    fn from(row: SessionRow) -> Session {
        Session {
            id: row.id,
            tenant_id: row.tenant_id,
            external_id: row.external_id,
            policy: row.policy.0,
            metadata: row.metadata.0,
            version: row.version,
            message_count: row.message_count,
            turn_count: row.turn_count,
            log_tokens: row.log_tokens,
            content_bytes: row.content_bytes,
            view_tokens: row.view_tokens,
            last_turn_tokens: row.last_turn_tokens,
            view_first_seq: row.view_first_seq,
            view_epoch: row.view_epoch,
            anchor: (row.anchor_reported_tokens > 0).then_some(crate::budget::Anchor {
                reported_tokens: row.anchor_reported_tokens,
                fixed_tokens: row.anchor_fixed_tokens,
                history_tokens: row.anchor_history_tokens,
                first_seq: row.anchor_first_seq,
                last_seq: row.anchor_last_seq,
                view_epoch: row.anchor_view_epoch,
                delta_ratio: row.anchor_delta_ratio,
            }),
            est_samples: row.est_samples,
            est_abs_err_sum: row.est_abs_err_sum,
            est_max_abs_err: row.est_max_abs_err,
            est_last_err: row.est_last_err,
            usage_input_tokens: row.usage_input_tokens,
            usage_output_tokens: row.usage_output_tokens,
            usage_cached_tokens: row.usage_cached_tokens,
            cleared_messages: row.cleared_messages,
            evicted_messages: row.evicted_messages,
            builds: Builds {
                count: row.builds,
                extending: row.extending_builds,
                last: BuildRecord {
                    first_seq: row.last_build_first_seq,
                    last_seq: row.last_build_last_seq,
                    system_tokens: row.last_build_system_tokens,
                    tool_tokens: row.last_build_tool_tokens,
                    history_tokens: row.last_build_history_tokens,
                    estimate_tokens: row.last_build_estimate_tokens,
                    view_epoch: row.last_build_view_epoch,
                },
            },
            summary_tokens: row.summary_tokens,
            summaries_written: row.summaries_written,
            compaction_failures: row.compaction_failures,
            event_seq: row.event_seq,
            budget_status: crate::budget::Status::from_code(row.budget_status),
            compaction_resume_log_tokens: row.compaction_resume_log_tokens,
            finished_at: row.finished_at,
            forked_from: row.forked_from,
            base_seq: row.base_seq,
            base_bytes: row.base_bytes,
            created_at: row.created_at,
            updated_at: row.updated_at,
        }
    }
}

pub use crate::append::{AnchorUpdate, SessionUpdate};

pub use crate::session::BuildRecord;

/// What a clearing pass changes: (seq, tokens in the view as a placeholder) per message,
/// and the session's new view total.
#[derive(Debug, Clone)]
pub struct Clearing {
    pub cleared: Vec<(i64, i64)>,
    pub view_tokens: i64,
}

/// Every session column, in [`Session`]'s order: the `{columns}` of statements that
/// read whole rows into it.
pub(super) const SESSION_COLUMNS: &str = "id, tenant_id, external_id, policy, metadata, version, \
    message_count, turn_count, log_tokens, content_bytes, view_tokens, last_turn_tokens, \
    view_first_seq, view_epoch, last_build_first_seq, last_build_last_seq, \
    last_build_system_tokens, last_build_tool_tokens, last_build_history_tokens, \
    last_build_estimate_tokens, anchor_reported_tokens, anchor_fixed_tokens, \
    anchor_history_tokens, anchor_first_seq, anchor_last_seq, anchor_view_epoch, \
    anchor_delta_ratio, est_samples, est_abs_err_sum, est_max_abs_err, est_last_err, \
    usage_input_tokens, usage_output_tokens, usage_cached_tokens, cleared_messages, \
    evicted_messages, last_build_view_epoch, builds, extending_builds, summary_tokens, \
    summaries_written, compaction_failures, event_seq, budget_status, compaction_resume_log_tokens, \
    finished_at, forked_from, base_seq, base_bytes, created_at, updated_at";

/// `sql` with its `{columns}` as [`SESSION_COLUMNS`].
pub(super) fn with_session_columns(sql: &str) -> String {
    with_columns(sql, SESSION_COLUMNS)
}

static LOCK_SQL: LazyLock<String> =
    LazyLock::new(|| with_session_columns(include_str!("sql/sessions/lock.sql")));
static CREATE_SQL: LazyLock<String> =
    LazyLock::new(|| with_session_columns(include_str!("sql/sessions/create.sql")));
static SESSION_SQL: LazyLock<String> = LazyLock::new(|| {
    with_session_columns("select {columns} from sessions where tenant_id = $1 and external_id = $2")
});
static RECORD_BUILD_SQL: LazyLock<String> =
    LazyLock::new(|| with_session_columns(include_str!("sql/sessions/record_build.sql")));

/// The session's row, locked, with its pending jobs by kind (read in the same statement,
/// so an enqueue that finds one pending needs no statement of its own).
pub(super) async fn lock(
    conn: Conn<'_>,
    tenant_id: i64,
    external_id: &str,
) -> StoreResult<Option<(Session, HashMap<String, i64>)>> {
    let row = sqlx::query(LOCK_SQL.as_str())
        .bind(tenant_id)
        .bind(external_id)
        .fetch_optional(conn)
        .await?;
    let Some(row) = row else {
        return Ok(None);
    };
    let pending: Option<Json<HashMap<String, i64>>> = row.try_get("pending_jobs")?;
    Ok(Some((
        Session::from(SessionRow::from_row(&row)?),
        pending.map(|pending| pending.0).unwrap_or_default(),
    )))
}

/// What the console's chart keeps of a build beside its record: the ledger's block (in
/// the record's system tokens), the summaries' region with it, and the window.
#[derive(Debug, Clone, Copy)]
pub struct ChartPoint {
    pub ledger_tokens: i64,
    pub summary_tokens: i64,
    pub window_tokens: i64,
}

/// A session's creation in progress (see [`Store::begin_create`]): nothing is written
/// until [`CreateTx::insert`] commits; dropped, it writes nothing.
pub struct CreateTx {
    pub(super) tx: sqlx::Transaction<'static, sqlx::Postgres>,
    pub(super) pooler: super::Pooler,
    pub(super) tenant_id: i64,
    /// The tenant's sessions, counted under its row lock; None when not counted.
    pub live: Option<u64>,
}

/// A new session's link to its parent (`session_links`).
#[derive(Debug, Clone)]
pub struct NewLink {
    /// sessions.id of the parent.
    pub parent_id: i64,
    pub parent_tool_call_id: String,
    /// sessions.id of every ancestor, root first, the parent last.
    pub ancestors: Vec<i64>,
}

static CREATE_LINKED_SQL: LazyLock<String> =
    LazyLock::new(|| with_session_columns(include_str!("sql/sessions/create_linked.sql")));

impl CreateTx {
    /// Inserts the session (and its link to a parent, when it has one) and commits. A
    /// taken id surfaces as a unique violation.
    pub async fn insert(
        mut self,
        external_id: &str,
        policy: &crate::policy::Policy,
        metadata: &std::collections::BTreeMap<String, String>,
        link: Option<&NewLink>,
    ) -> StoreResult<Session> {
        let row: SessionRow = sqlx::query_as(CREATE_LINKED_SQL.as_str())
            .bind(self.tenant_id)
            .bind(external_id)
            .bind(Json(policy))
            .bind(Json(metadata))
            .bind(link.map(|link| link.parent_id))
            .bind(link.map(|link| link.parent_tool_call_id.as_str()))
            .bind(link.map(|link| link.ancestors.as_slice()))
            .fetch_one(Conn::new(&mut self.tx, self.pooler))
            .await?;
        self.tx.commit().await?;
        Ok(Session::from(row))
    }
}

/// Takes the tenant's creation lock until the transaction ends: creates and forks that
/// count the tenant's live sessions queue here on every replica. An advisory lock, not
/// the tenant's row: on a distributed database a row lock on a reference table takes
/// every node into the transaction, which then commits in two phases.
pub(super) async fn lock_creations(conn: Conn<'_>, tenant_id: i64) -> StoreResult<()> {
    sqlx::query("select pg_advisory_xact_lock(hashtextextended('ctxd.creations', $1))")
        .bind(tenant_id)
        .execute(conn)
        .await?;
    Ok(())
}

/// The tenant's live sessions (not hidden), counted in the caller's transaction after it
/// took the tenant's creation lock (`lock_creations`).
pub(super) async fn count_live_sessions(conn: Conn<'_>, tenant_id: i64) -> StoreResult<u64> {
    let live: i64 = sqlx::query_scalar(
        "select count(*) from sessions where tenant_id = $1 and deleted_at is null",
    )
    .bind(tenant_id)
    .fetch_one(conn)
    .await?;
    Ok(u64::try_from(live).unwrap_or(0))
}

/// What a create under the live-sessions quota did.
#[derive(Debug)]
pub enum Creation {
    Created(Box<Session>),
    /// The tenant holds this many sessions, its quota or more: nothing was inserted.
    Full {
        live: u64,
    },
}

impl Store {
    /// Inserts a session. A taken id surfaces as a unique violation.
    pub async fn create_session(
        &self,
        tenant_id: i64,
        external_id: &str,
        policy: &crate::policy::Policy,
        metadata: &std::collections::BTreeMap<String, String>,
    ) -> StoreResult<Session> {
        let row: SessionRow = sqlx::query_as(CREATE_SQL.as_str())
            .bind(tenant_id)
            .bind(external_id)
            .bind(Json(policy))
            .bind(Json(metadata))
            .fetch_one(self.db())
            .await?;
        Ok(Session::from(row))
    }

    /// Inserts a session unless the tenant already holds `live_sessions` (its quota):
    /// counted under the tenant's creation lock, so creates on every replica queue
    /// there and the count is exact. A taken id surfaces as a unique violation.
    pub async fn create_session_within(
        &self,
        tenant_id: i64,
        external_id: &str,
        policy: &crate::policy::Policy,
        metadata: &std::collections::BTreeMap<String, String>,
        live_sessions: u64,
    ) -> StoreResult<Creation> {
        let create = self.begin_create(tenant_id, true).await?;
        if let Some(live) = create.live.filter(|&live| live >= live_sessions) {
            return Ok(Creation::Full { live });
        }
        let session = create.insert(external_id, policy, metadata, None).await?;
        Ok(Creation::Created(Box::new(session)))
    }

    /// Starts a session's creation in a transaction of its own. With `count_live`, it
    /// first takes the tenant's creation lock (`lock_creations`) and counts the tenant's sessions under it
    /// (`live`), so creates on every replica queue there and a quota's count is exact.
    pub async fn begin_create(&self, tenant_id: i64, count_live: bool) -> StoreResult<CreateTx> {
        let mut tx = self.pool.begin().await?;
        let mut live = None;
        if count_live {
            lock_creations(Conn::new(&mut tx, self.pooler), tenant_id).await?;
            // A statement of its own, after the lock: its snapshot sees every create that
            // committed before this one got the lock.
            live = Some(count_live_sessions(Conn::new(&mut tx, self.pooler), tenant_id).await?);
        }
        Ok(CreateTx {
            tx,
            pooler: self.pooler,
            tenant_id,
            live,
        })
    }

    pub async fn session(&self, tenant_id: i64, external_id: &str) -> StoreResult<Option<Session>> {
        let row: Option<SessionRow> = sqlx::query_as(SESSION_SQL.as_str())
            .bind(tenant_id)
            .bind(external_id)
            .fetch_optional(self.db())
            .await?;
        Ok(row.map(Session::from))
    }

    /// Records what a build sent, and whether it extended the previous one (the prefix
    /// a provider caches stayed the same). Losing this record in a crash only costs one
    /// anchor, so it commits without waiting for the WAL flush.
    pub async fn record_build(
        &self,
        session: &Session,
        build: BuildRecord,
        extends_previous: bool,
        chart: ChartPoint,
    ) -> StoreResult<()> {
        // One statement (its own transaction) with an asynchronous commit. The row it
        // leaves goes to the replica's row cache, so the session's next append here need
        // not read it.
        let row = sqlx::query(RECORD_BUILD_SQL.as_str())
            .bind(session.id)
            .bind(build.first_seq)
            .bind(build.last_seq)
            .bind(build.system_tokens)
            .bind(build.history_tokens)
            .bind(build.estimate_tokens)
            .bind(build.tool_tokens)
            .bind(build.view_epoch)
            .bind(extends_previous)
            .bind(chart.ledger_tokens)
            .bind(chart.summary_tokens)
            .bind(chart.window_tokens)
            .bind(session.tenant_id)
            .fetch_optional(self.db())
            .await?;
        if let Some(row) = row {
            self.rows.put_keeping_jobs(
                Session::from(SessionRow::from_row(&row)?),
                row.try_get("row_version")?,
            );
        }
        Ok(())
    }
}

impl Store {
    /// Sets the loop guard's count of consecutive failed automatic compactions.
    pub async fn set_compaction_failures(
        &self,
        session: &Session,
        failures: i32,
    ) -> StoreResult<()> {
        sqlx::query(
            "update sessions set compaction_failures = $2 where id = $1 and tenant_id = $3",
        )
        .bind(session.id)
        .bind(failures)
        .bind(session.tenant_id)
        .execute(self.db())
        .await?;
        Ok(())
    }
}

impl SessionTx {
    /// The transaction's connection, as its statements use it.
    pub(super) fn conn(&mut self) -> Conn<'_> {
        Conn::new(&mut self.tx, self.pooler)
    }

    /// Turns tool results into placeholders, moves the session to a new view epoch (the
    /// provider's cached prefix is gone) and a new version, and commits.
    pub async fn commit_clearing(mut self, clearing: &Clearing) -> StoreResult<()> {
        self.set_view_states(crate::message::ViewState::Cleared, &clearing.cleared)
            .await?;
        let session_id = self.session.id;
        sqlx::query(include_str!("sql/sessions/clearing.sql"))
            .bind(session_id)
            .bind(clearing.view_tokens)
            .bind(clearing.cleared.len() as i64)
            .bind(self.session.tenant_id)
            .execute(self.conn())
            .await?;
        self.finish().await
    }
}
