//! AppendTurn's store side: one read of everything the append decides on, then one
//! statement that writes it all and commits, applied only if the session row is still as
//! it was read (optimistic concurrency on the row's xmin): two round trips instead of a
//! locked transaction's five or six. An append that keeps racing other writers of its
//! session reads under the row lock instead, and then always gets through.
use std::collections::HashMap;
use std::sync::LazyLock;

use sqlx::types::Json;
use sqlx::{FromRow, Postgres, Row, Transaction};

use super::append_write::{AppendWrite, ChildFinish, Seen, count_finish_events, write_finish};
use super::batch;
use super::pooler::Conn;
use super::sessions::{SessionRow, with_session_columns};
use super::Store;
use super::{StoreError, StoreResult};
use crate::message::ToolCall;
use crate::metrics::metrics;
use crate::session::Session;

/// What an append decides on, read in one statement (one snapshot).
pub struct AppendState {
    pub session: Session,
    /// The row version read (its xmin): the write applies only while it is current.
    row_version: String,
    /// The session's pending jobs, by kind.
    pub pending_jobs: HashMap<String, i64>,
    /// Whether `pending_jobs` is known: read, or (assumed) kept with the cached row.
    pub pending_known: bool,
    /// Tool calls the session has among those asked for: id → seq of its result.
    pub known_calls: HashMap<String, Option<i64>>,
    /// The request hash and response of an earlier append under the same key.
    pub idempotent: Option<(Vec<u8>, serde_json::Value)>,
    /// The transaction holding the row lock, when read with it.
    locked: Option<Transaction<'static, Postgres>>,
    /// Taken from the replica's row cache instead of read: the session row is as this
    /// replica's last statement on it left it, `pending_jobs` as the replica last knew
    /// them (unless not `pending_known`), and `known_calls` holds the calls the batch
    /// answers, assumed made and unanswered. The write checks the row and the calls
    /// with the row version, the pending job it relies on with `AppendWrite::pending`,
    /// and writes nothing when any fails.
    pub assumed: bool,
    /// A child session FinishSession ends with this append (which carries its final
    /// answer): written after the append, before the commit. Only with `locked`.
    pub(super) finish: Option<ChildFinish>,
}

/// How an append's write went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Appended {
    /// Written; with the id of the job it enqueued (`None` when it enqueued none). A
    /// job of that kind cannot have appeared since the read: every enqueue touches the
    /// session row, so the write would have found it changed.
    Applied { job_id: Option<i64> },
    /// The session changed after the read: nothing was written.
    Raced,
}

/// Tries of an append on the replica's cached row before it reads.
const CACHED_APPEND_ATTEMPTS: usize = 2;

/// An append's tries on the session row this replica cached: at most
/// [`CACHED_APPEND_ATTEMPTS`], the second only when the first lost a race and the replica
/// then knows the session's pending jobs. After the tries (none left, or the caller
/// stopped on a verdict the cached row might explain), the append reads and decides with
/// what the database holds; after a failure that may have come after the write
/// committed, the caller calls [`CachedTries::failed`] and returns it (deciding again
/// could append twice).
pub struct CachedTries<'a> {
    store: &'a Store,
    tenant_id: i64,
    external_id: &'a str,
    tried: usize,
}

impl CachedTries<'_> {
    /// The next try's state, when there is one and `eligible` accepts it. `answered`:
    /// the calls the batch answers that it does not make itself.
    pub fn next(
        &mut self,
        answered: &[&str],
        eligible: impl Fn(&AppendState) -> bool,
    ) -> Option<AppendState> {
        if self.tried == CACHED_APPEND_ATTEMPTS {
            return None;
        }
        let first = self.tried == 0;
        self.tried += 1;
        self.store
            .cached_append_state(self.tenant_id, self.external_id, answered)
            .filter(|state| eligible(state) && (first || state.pending_known))
    }

    /// A try failed in a way that may have followed its write: the next append reads.
    pub fn failed(&self) {
        self.store
            .forget_cached_row(self.tenant_id, self.external_id);
    }
}

/// The session row with what an append needs.
static STATE_SQL: LazyLock<String> =
    LazyLock::new(|| with_session_columns(include_str!("sql/append/state.sql")));

impl Store {
    /// The append's state without a read, from the session row as this replica's last
    /// statement on it left it; `None` when the replica has none. `answered`: the calls
    /// the batch answers that it does not make itself.
    pub fn cached_append_state(
        &self,
        tenant_id: i64,
        external_id: &str,
        answered: &[&str],
    ) -> Option<AppendState> {
        let (session, row_version, pending) = self.rows.get(tenant_id, external_id)?;
        Some(AppendState {
            session,
            row_version,
            pending_known: pending.is_some(),
            pending_jobs: pending.unwrap_or_default(),
            known_calls: answered.iter().map(|id| (id.to_string(), None)).collect(),
            idempotent: None,
            locked: None,
            assumed: true,
            finish: None,
        })
    }

    /// Drops the session's cached row, so its next append reads.
    pub fn forget_cached_row(&self, tenant_id: i64, external_id: &str) {
        self.rows.forget(tenant_id, external_id);
    }

    /// The tries of an append on the session row this replica cached, without a read
    /// ([`CachedTries`]).
    pub fn cached_tries<'a>(&'a self, tenant_id: i64, external_id: &'a str) -> CachedTries<'a> {
        CachedTries {
            store: self,
            tenant_id,
            external_id,
            tried: 0,
        }
    }

    /// The append's read; `None` when the tenant has no such session. `call_ids`: the
    /// tool calls the batch makes or answers; `key`: its idempotency key. With `lock`,
    /// the read takes the session's row lock and holds it until the write.
    pub async fn append_state(
        &self,
        tenant_id: i64,
        external_id: &str,
        call_ids: &[String],
        key: Option<&str>,
        lock: bool,
    ) -> StoreResult<Option<AppendState>> {
        if lock {
            let tx = self.append_pool.begin().await?;
            return self
                .locked_append_state(tx, tenant_id, external_id, call_ids, key)
                .await;
        }
        let row = sqlx::query(STATE_SQL.as_str())
            .bind(tenant_id)
            .bind(external_id)
            .bind(call_ids)
            .bind(key)
            .fetch_optional(self.append_db())
            .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        Ok(Some(append_state_of(&row, None)?))
    }

    /// The append's read in `tx`, after taking the session's row lock there (held until
    /// the write commits); `None` when the tenant has no such session.
    pub(super) async fn locked_append_state(
        &self,
        mut tx: Transaction<'static, Postgres>,
        tenant_id: i64,
        external_id: &str,
        call_ids: &[String],
        key: Option<&str>,
    ) -> StoreResult<Option<AppendState>> {
        // The lock first, the read in a statement of its own: a `for update` that
        // waited for another writer returns that writer's row, but its subqueries
        // would still read the tables as they were before the wait.
        let found: Option<i64> = sqlx::query_scalar(
            "select id from sessions where tenant_id = $1 and external_id = $2 for update",
        )
        .bind(tenant_id)
        .bind(external_id)
        .fetch_optional(Conn::new(&mut tx, self.pooler))
        .await?;
        if found.is_none() {
            return Ok(None);
        }
        let row = sqlx::query(STATE_SQL.as_str())
            .bind(tenant_id)
            .bind(external_id)
            .bind(call_ids)
            .bind(key)
            .fetch_optional(Conn::new(&mut tx, self.pooler))
            .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        Ok(Some(append_state_of(&row, Some(tx))?))
    }
}

/// The append's state from the row [`STATE_SQL`] read, holding `locked` when read under
/// the row lock.
fn append_state_of(
    row: &sqlx::postgres::PgRow,
    locked: Option<Transaction<'static, Postgres>>,
) -> StoreResult<AppendState> {
    let pending: Option<Json<HashMap<String, i64>>> = row.try_get("pending_jobs")?;
    // [call id, seq of its result or null] per known call.
    type KnownCalls = Vec<(String, Option<i64>)>;
    let known: Option<Json<KnownCalls>> = row.try_get("known_calls")?;
    let idempotent: Option<Json<(String, serde_json::Value)>> = row.try_get("idempotent")?;
    Ok(AppendState {
        session: Session::from(SessionRow::from_row(row)?),
        row_version: row.try_get("row_version")?,
        pending_jobs: pending.map(|Json(pending)| pending).unwrap_or_default(),
        pending_known: true,
        known_calls: known
            .map(|Json(known)| known.into_iter().collect())
            .unwrap_or_default(),
        idempotent: idempotent
            .and_then(|Json((hash, response))| hex::decode(hash).ok().map(|hash| (hash, response))),
        locked,
        assumed: false,
        finish: None,
    })
}

/// The query reading tool call `$2` of session `$1` (a fork's inherited calls included).
pub(super) fn tool_call_sql(session: &Session) -> &'static str {
    if session.inherits() {
        super::forks::TOOL_CALL_SQL.as_str()
    } else {
        include_str!("sql/append/tool_call.sql")
    }
}

impl Store {
    /// The function name of a tool call the session of `state` has seen ("" when
    /// unknown); read in `state`'s transaction when it holds the lock.
    pub async fn tool_name(&self, state: &mut AppendState, call_id: &str) -> StoreResult<String> {
        let query = sqlx::query_scalar(tool_call_sql(&state.session))
            .bind(state.session.id)
            .bind(call_id)
            .bind(state.session.tenant_id);
        let call: Option<Json<ToolCall>> = match state.locked.as_mut() {
            Some(tx) => query.fetch_optional(Conn::new(tx, self.pooler)).await?,
            None => query.fetch_optional(self.db()).await?,
        };
        Ok(call.map(|Json(call)| call.name).unwrap_or_default())
    }

    /// Writes the append, and commits, if the session row is still as `state` read it.
    pub async fn append(
        &self,
        state: AppendState,
        write: AppendWrite<'_>,
    ) -> StoreResult<Appended> {
        let AppendState {
            session,
            row_version,
            pending_jobs,
            pending_known,
            locked,
            assumed,
            finish,
            ..
        } = state;
        let mut finished_events = 0;
        let (appended, after, seen) = match locked {
            Some(mut tx) => {
                let conn = Conn::new(&mut tx, self.pooler);
                let written = write_append(conn, &session, &row_version, assumed, &write).await?;
                if let (Some(finish), Appended::Applied { .. }) = (&finish, written.0) {
                    let conn = Conn::new(&mut tx, self.pooler);
                    finished_events = write_finish(conn, finish).await?.1;
                }
                tx.commit().await?;
                written
            }
            None if finish.is_some() => {
                return Err(StoreError::Other(sqlx::Error::Protocol(
                    "a session's finish rides only on an append under the row lock".into(),
                )));
            }
            None => {
                let item = batch::Item::of(&session, &row_version, assumed, &write);
                match written(self.batcher().write(item).await) {
                    Ok(written) => written,
                    Err(batch::Outcome::Failed(error)) => return Err(error.into()),
                    // The batch did not write it.
                    Err(_) => {
                        let conn = self.append_db();
                        write_append(conn, &session, &row_version, assumed, &write).await?
                    }
                }
            }
        };
        if matches!(appended, Appended::Applied { .. }) {
            for event in &write.events {
                metrics().event_written(event.kind() as i16);
            }
        }
        match (after, &finish) {
            // The finish wrote the parent's row again (its event seq) and the child's.
            (Some(_), Some(finish)) => {
                count_finish_events(finish, finished_events);
                self.rows.forget(session.tenant_id, &session.external_id);
                self.rows
                    .forget(session.tenant_id, &finish.child_external_id);
            }
            (Some((row, version)), None) => {
                let pending =
                    pending_after(pending_known.then_some(pending_jobs), &write, appended);
                self.rows.put(row, version, pending)
            }
            (None, _) => match (seen, write.pending) {
                (Some(seen), Some((kind, _)))
                    if seen.row_version.as_ref() == Some(&row_version) =>
                {
                    self.rows.remember_pending(
                        (session.tenant_id, &session.external_id),
                        &row_version,
                        (kind, seen.pending),
                    )
                }
                _ => self.rows.forget(session.tenant_id, &session.external_id),
            },
        }
        Ok(appended)
    }
}

/// The session's pending jobs after a write that applied, as far as the replica knows
/// them: those known before, with the job the write enqueued; unknown when it meant to
/// enqueue one and found one of the kind already pending.
fn pending_after(
    before: Option<HashMap<String, i64>>,
    write: &AppendWrite<'_>,
    appended: Appended,
) -> Option<HashMap<String, i64>> {
    let mut pending = before?;
    match (write.job, appended) {
        (Some((job, _)), Appended::Applied { job_id: Some(id) }) => {
            pending.insert(job.kind.to_string(), id);
        }
        (Some(_), _) => return None,
        (None, _) => {}
    }
    Some(pending)
}

/// Writes the append alone on `conn` (waiting for the session row's lock) if the
/// session row is still at `row_version` (and, `assumed`, the batch's tool-call
/// references hold); with the row as the write left it and its new version when it
/// applied.
async fn write_append<'c>(
    conn: impl sqlx::Executor<'c, Database = Postgres>,
    session: &Session,
    row_version: &str,
    assumed: bool,
    write: &AppendWrite<'_>,
) -> StoreResult<Written> {
    let mut items = [batch::Item::of(session, row_version, assumed, write)];
    let outcome = batch::statement::write(conn, &mut items, true).await?.pop();
    // Alone, an append waits for its row: it is written or it raced.
    match outcome.map(written) {
        Some(Ok(written)) => Ok(written),
        _ => Err(StoreError::Other(sqlx::Error::Protocol(
            "an append alone was neither written nor raced".into(),
        ))),
    }
}

/// An append's write: whether it applied, the row as it left it with its new version,
/// and (not applied) what it saw of the pending job it relied on.
type Written = (Appended, Option<(Session, String)>, Option<Seen>);

/// `outcome` as a write's, unless the batch did not write it (or does not know).
fn written(outcome: batch::Outcome) -> Result<Written, batch::Outcome> {
    match outcome {
        batch::Outcome::Applied(row, version, job_id) => {
            Ok((Appended::Applied { job_id }, Some((*row, version)), None))
        }
        batch::Outcome::Raced(seen) => Ok((Appended::Raced, None, seen)),
        other => Err(other),
    }
}
