//! AppendTurn's store side: one read of everything the append decides on, then one
//! statement that writes it all and commits, applied only if the session row is still as
//! it was read (optimistic concurrency on the row's xmin): two round trips instead of a
//! locked transaction's five or six. An append that keeps racing other writers of its
//! session reads under the row lock instead, and then always gets through.
use std::collections::HashMap;
use std::sync::LazyLock;

use sqlx::types::Json;
use sqlx::{FromRow, Postgres, Row, Transaction};

use super::append_write::{
    AppendWrite, ChildFinish, MessageColumns, PgQuery, Seen, call_rows, count_finish_events,
    write_finish,
};
use super::batch;
use super::jobs::JOBS_CHANNEL;
use super::pooler::Conn;
use super::sessions::{SessionRow, with_session_columns};
use super::{EVENTS_CHANNEL, Store};
use super::{StoreError, StoreResult};
use crate::events::EventDetail;
use crate::message::{Role, ToolCall};
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
                let written = self
                    .write_alone(conn, &session, (&row_version, assumed), &write)
                    .await?;
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
                let item = batch::Item::of(
                    &session,
                    &row_version,
                    assumed,
                    &write,
                    self.append_by_function,
                );
                let batched = match item {
                    Some(item) => Some(self.batcher().write(item).await),
                    None => None,
                };
                match batched.map(written) {
                    Some(Ok(written)) => written,
                    Some(Err(batch::Outcome::Failed(error))) => return Err(error.into()),
                    // Parts a batch does not carry, or the batch did not write it.
                    None | Some(Err(_)) => {
                        let conn = self.append_db();
                        self.write_alone(conn, &session, (&row_version, assumed), &write)
                            .await?
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

impl Store {
    /// Writes the append alone on `conn` (waiting for the session row's lock), by the
    /// composed statement or by `ctxd_append` (`Store::append_by_function`): the row as
    /// the write left it, with its new version, when it applied.
    async fn write_alone<'c>(
        &self,
        conn: impl sqlx::Executor<'c, Database = Postgres>,
        session: &Session,
        (row_version, assumed): (&str, bool),
        write: &AppendWrite<'_>,
    ) -> StoreResult<Written> {
        if !self.append_by_function {
            return write_append(conn, session, row_version, assumed, write).await;
        }
        let item = batch::Item::of(session, row_version, assumed, write, true);
        let mut items: Vec<batch::Item> = item.into_iter().collect();
        let outcome = batch::function::write(conn, &mut items, true).await?.pop();
        // Alone, an append waits for its row: it is written or it raced.
        match outcome.map(written) {
            Some(Ok(written)) => Ok(written),
            _ => Err(StoreError::Other(sqlx::Error::Protocol(
                "an append alone was neither written nor raced".into(),
            ))),
        }
    }
}

/// `outcome` as a write's, unless it is not one (the batch did not write the append,
/// or does not know whether it did).
fn written(outcome: batch::Outcome) -> Result<Written, batch::Outcome> {
    match outcome {
        batch::Outcome::Applied(row, version, job_id) => {
            Ok((Appended::Applied { job_id }, Some((*row, version)), None))
        }
        batch::Outcome::Raced(seen) => Ok((Appended::Raced, None, seen)),
        other => Err(other),
    }
}

/// An append's write: whether it applied, the row as it left it with its new version,
/// and (not applied) what it saw of the pending job it relied on.
type Written = (Appended, Option<(Session, String)>, Option<Seen>);

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

/// The session's pending job of the kind an append relies on: checked by its write, and
/// reported when the write did not apply (`Seen`).
const PENDING_JOB: &str = include_str!("sql/append/pending.sql");

/// The session's update, returning the whole row for the row cache; by whether it also
/// checks what an assumed state did not read (`sql/append/assumed.sql`) and the pending
/// job an append relies on (`sql/append/pending.sql`).
static SESSION_PARTS: LazyLock<[[String; 2]; 2]> = LazyLock::new(|| {
    let part = |assumed: bool, pending: bool| {
        let mut guard = String::new();
        if assumed {
            guard.push_str(include_str!("sql/append/assumed.sql"));
        }
        if pending {
            guard.push_str(&format!(
                "\n        and {PENDING_JOB} is not distinct from $60"
            ));
        }
        with_session_columns(&include_str!("sql/append/session.sql").replace("{assumed}", &guard))
    };
    [
        [part(false, false), part(false, true)],
        [part(true, false), part(true, true)],
    ]
});

/// The append statement for `write`: only the parts it has rows for, since PostgreSQL
/// opens a table and every index of it for each part, rows or not (a tenth of its CPU
/// per append in the benchmark's profile when every part was always there). Static
/// texts only; the values are parameters.
fn append_sql(write: &AppendWrite<'_>, assumed: bool, fork: bool) -> String {
    // With an assumed state the session's update also checks what was not read.
    let session = &SESSION_PARTS[usize::from(assumed)][usize::from(write.pending.is_some())];
    let mut parts = vec![session.as_str(), include_str!("sql/append/messages.sql")];
    if !write.calls.is_empty() {
        parts.push(include_str!("sql/append/calls.sql"));
    }
    if !write.answers.is_empty() {
        parts.push(if fork {
            include_str!("sql/append/answers_fork.sql")
        } else {
            include_str!("sql/append/answers.sql")
        });
    }
    if write.job.is_some() {
        parts.push(include_str!("sql/append/job.sql"));
    }
    match (write.idempotency.is_some(), write.job.is_some()) {
        (true, true) => parts.push(include_str!("sql/append/idempotency_job.sql")),
        (true, false) => parts.push(include_str!("sql/append/idempotency.sql")),
        (false, _) => {}
    }
    if !write.events.is_empty() {
        parts.push(include_str!("sql/append/events.sql"));
    }
    if write.has_ledger() {
        parts.push(include_str!("sql/append/ledger.sql"));
    }
    // The session row as the write left it, with its new version, for the row cache:
    // null columns when the write did not apply.
    let mut sql = format!(
        "with {}
select s.id is not null as applied, s.*",
        parts.join(
            ",
"
        )
    );
    sql.push_str(match write.job {
        Some((_, true)) => {
            ", (select id from enqueued) as job_id,
             case when exists (select 1 from enqueued) then pg_notify($54, '') end as jobs_notified"
        }
        Some((_, false)) => ", (select id from enqueued) as job_id",
        None => ", null::bigint as job_id",
    });
    if write.pending.is_some() {
        // What a write relying on a remembered pending job sees (`Seen`).
        sql.push_str(
            ", (select x.xmin::text from sessions x where x.id = $1 and x.tenant_id = $61)\n                as row_version_now, ",
        );
        sql.push_str(PENDING_JOB);
        sql.push_str(" as pending_now");
    }
    if !write.events.is_empty() {
        sql.push_str(
            ", case when exists (select 1 from inserted_events)
                then pg_notify($53, (select max(id) from inserted_events)::text) end
                as events_notified",
        );
    }
    sql.push_str(" from (select 1) as one left join s on true");
    sql
}

/// Writes the append if the session row is still at `row_version` (and, `assumed`, the
/// batch's tool-call references hold); with the row as the write left it and its new
/// version when it applied.
async fn write_append<'c>(
    conn: impl sqlx::Executor<'c, Database = Postgres>,
    session: &Session,
    row_version: &str,
    assumed: bool,
    write: &AppendWrite<'_>,
) -> StoreResult<Written> {
    let mut columns = MessageColumns::default();
    for new in write.batch {
        columns.push(0, new);
    }
    let (new_calls, earlier_answers) = call_rows(write.calls, write.answers);
    let mut ledger = super::ledger::LedgerParameters::default();
    ledger.push(0, session.id, write.ledger);
    let sql = append_sql(write, assumed, session.inherits());
    let query = sqlx::query(sqlx::AssertSqlSafe(sql.as_str())).bind(session.id);
    let query = bind_messages(query, &columns, &new_calls, &earlier_answers);
    let query = bind_update(query, write, &columns, row_version);
    let write_query = bind_effects(query, write, session, &ledger);
    let row = write_query.fetch_one(conn).await?;
    if !row.try_get::<bool, _>("applied")? {
        let seen = match write.pending {
            Some(_) => Some(Seen {
                row_version: row.try_get("row_version_now")?,
                pending: row.try_get("pending_now")?,
            }),
            None => None,
        };
        return Ok((Appended::Raced, None, seen));
    }
    let after = (
        Session::from(SessionRow::from_row(&row)?),
        row.try_get("row_version")?,
    );
    Ok((
        Appended::Applied {
            job_id: row.try_get("job_id")?,
        },
        Some(after),
        None,
    ))
}

/// Parameters 2–18: the messages, the tool calls they make and the earlier calls they
/// answer.
fn bind_messages<'q>(
    query: PgQuery<'q>,
    columns: &'q MessageColumns,
    calls: &'q [(String, i64, Option<i64>)],
    answers: &'q [(String, i64)],
) -> PgQuery<'q> {
    query
        .bind(&columns.seqs)
        .bind(&columns.turns)
        .bind(&columns.roles)
        .bind(&columns.contents)
        .bind(&columns.parts)
        .bind(&columns.reasonings)
        .bind(&columns.tool_calls)
        .bind(&columns.tool_call_ids)
        .bind(&columns.names)
        .bind(&columns.metadata)
        .bind(&columns.pinned)
        .bind(&columns.token_counts)
        .bind(
            calls
                .iter()
                .map(|(id, _, _)| id.as_str())
                .collect::<Vec<&str>>(),
        )
        .bind(calls.iter().map(|(_, seq, _)| *seq).collect::<Vec<i64>>())
        .bind(
            calls
                .iter()
                .map(|(_, _, result)| *result)
                .collect::<Vec<Option<i64>>>(),
        )
        .bind(
            answers
                .iter()
                .map(|(id, _)| id.as_str())
                .collect::<Vec<&str>>(),
        )
        .bind(answers.iter().map(|(_, seq)| *seq).collect::<Vec<i64>>())
}

/// Parameters 19–40: the row's new aggregates, its anchor, the view entries, the guard.
fn bind_update<'q>(
    query: PgQuery<'q>,
    write: &'q AppendWrite<'_>,
    columns: &'q MessageColumns,
    row_version: &'q str,
) -> PgQuery<'q> {
    let update = &write.update;
    let anchor = update.anchor.as_ref();
    query
        .bind(update.version)
        .bind(update.message_count)
        .bind(update.turn_count)
        .bind(update.log_tokens)
        .bind(update.view_tokens)
        .bind(update.last_turn_tokens)
        .bind(anchor.map(|a| a.anchor.reported_tokens))
        .bind(anchor.map(|a| a.anchor.fixed_tokens))
        .bind(anchor.map(|a| a.anchor.history_tokens))
        .bind(anchor.map(|a| a.anchor.first_seq))
        .bind(anchor.map(|a| a.anchor.last_seq))
        .bind(anchor.map(|a| a.anchor.view_epoch))
        .bind(anchor.and_then(|a| a.error))
        .bind(update.usage.0)
        .bind(update.usage.1)
        .bind(update.usage.2)
        .bind(anchor.map(|a| a.anchor.delta_ratio))
        .bind(&columns.view_tokens)
        .bind(&columns.view_states)
        .bind(update.evicted)
        .bind(write.batch.iter().any(|new| new.message.role == Role::User))
        .bind(row_version)
}

/// Parameters 41–61: events, budget status, idempotency record, job, channels, the
/// task ledger's rows, the pending-job guard and the session's tenant (every table the
/// statement reads or writes is filtered by it: one shard's rows on a distributed
/// database, docs/decisions/0028-citus-distribution.md).
fn bind_effects<'q>(
    query: PgQuery<'q>,
    write: &'q AppendWrite<'_>,
    session: &Session,
    ledger: &'q super::ledger::LedgerParameters,
) -> PgQuery<'q> {
    let job = write.job.map(|(job, _)| job);
    let idempotency = write.idempotency.as_ref();
    query
        .bind(
            write
                .events
                .iter()
                .map(|e| e.kind() as i16)
                .collect::<Vec<i16>>(),
        )
        .bind(
            write
                .events
                .iter()
                .map(Json)
                .collect::<Vec<Json<&EventDetail>>>(),
        )
        .bind(write.budget_status.map(crate::budget::Status::code))
        .bind(idempotency.map(|(key, _, _)| *key))
        .bind(idempotency.map(|(_, hash, _)| *hash))
        .bind(idempotency.map(|(_, _, response)| Json(response)))
        .bind(job.map(|job| job.kind))
        .bind(job.map(|job| Json(&job.args)))
        .bind(job.map(|job| job.priority))
        .bind(job.map(|job| job.max_attempts))
        .bind(job.map(|job| job.notify_done))
        .bind(write.job.is_some_and(|(_, notify)| notify))
        .bind(EVENTS_CHANNEL)
        .bind(JOBS_CHANNEL)
        .bind(session.builds.count)
        .bind(write.update.content_bytes)
        .bind(Json(&ledger.entries))
        .bind(Json(&ledger.runs))
        .bind(write.pending.map(|(kind, _)| kind))
        .bind(write.pending.and_then(|(_, id)| id))
        .bind(session.tenant_id)
}
