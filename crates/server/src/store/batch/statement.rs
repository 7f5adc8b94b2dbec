//! The batch statement: all of a batch's appends written by one statement and one
//! commit, each under its own guard, and what each append's outcome is.
use std::sync::LazyLock;

use sqlx::Connection as _;
use sqlx::types::Json;

use super::super::append_write::{MessageColumns, PgQuery};
use super::super::jobs::{JOBS_CHANNEL, NewJob};
use super::super::ledger::LedgerParameters;
use super::super::pool::Pool;
use super::super::pooler::{Conn, Pooler};
use super::super::sessions::with_session_columns;
use super::super::{AnchorUpdate, EVENTS_CHANNEL};
use super::rows::{outcomes, take_messages};
use super::{Held, Item, Outcome, Writing};
use crate::events::EventDetail;

/// The parameters the batch statement always has; its events' and jobs' come after.
const BASE_PARAMETERS: usize = 55;

/// The batch statement with the parts it has rows for — events, jobs, the task ledger's
/// entries, exit statuses of earlier calls — indexed `[events][jobs][entries][runs]`:
/// PostgreSQL opens a table and every index of it for each part, rows or not
/// (append.rs's `append_sql` likewise).
type Variants = [[[[String; 2]; 2]; 2]; 2];

static BATCH_SQL: LazyLock<Variants> = LazyLock::new(|| {
    let sql = |events: bool, jobs: bool, entries: bool, runs: bool| {
        let mut ledger = String::new();
        if entries {
            ledger.push_str(",\n");
            ledger.push_str(include_str!("../sql/append/batch_ledger.sql"));
        }
        if runs {
            // An entry the batch merges above takes no run here.
            let merged = if entries {
                "
      and not exists (
          select 1 from batch_ledger_found f
          where f.session_id = l.session_id and f.kind = l.kind and f.key = l.key)"
            } else {
                ""
            };
            ledger.push_str(",\n");
            ledger.push_str(
                &include_str!("../sql/append/batch_ledger_runs.sql").replace("{merged}", merged),
            );
        }
        // The parts' parameters follow the base ones, numbered here so that every
        // variant's are dense. One NOTIFY each for the batch: an uncorrelated subquery
        // runs once.
        let (mut parts, mut outputs, mut next) = (String::new(), String::new(), BASE_PARAMETERS);
        if events {
            parts.push_str(",\n");
            parts.push_str(&numbered(
                include_str!("../sql/append/batch_events.sql"),
                "$E",
                next,
            ));
            outputs.push_str(&format!(
                ",
    (select pg_notify(${}, max(id)::text) from batch_events having count(*) > 0)
        as events_notified",
                next + 5
            ));
            next += 5;
        }
        if jobs {
            parts.push_str(",\n");
            parts.push_str(&numbered(
                include_str!("../sql/append/batch_jobs.sql"),
                "$J",
                next,
            ));
            outputs.push_str(&format!(
                ",
    (select q.id from batch_jobs q where q.session_id = s.id) as job_id,
    (select pg_notify(${}, '') from batch_jobs having count(*) > 0 and ${}::bool)
        as jobs_notified",
                next + 7,
                next + 8
            ));
        }
        with_session_columns(
            &include_str!("../sql/append/batch.sql")
                .replace("{parts}", &parts)
                .replace("{outputs}", &outputs)
                .replace("{ledger}", &ledger),
        )
    };
    let both = [false, true];
    both.map(|events| {
        both.map(|jobs| both.map(|entries| both.map(|runs| sql(events, jobs, entries, runs))))
    })
});

/// `sql` with its parameters `{prefix}1`, `{prefix}2`, … numbered from `after + 1`.
fn numbered(sql: &str, prefix: &str, after: usize) -> String {
    let mut sql = sql.to_string();
    // Highest first, so that `$E1` does not rewrite the start of `$E10`.
    for n in (1..=9).rev() {
        sql = sql.replace(&format!("{prefix}{n}"), &format!("${}", after + n));
    }
    sql
}

/// One statement for all of `items` on `held` or a connection from `pool`; an outcome
/// for each, in order, and the connection when the statement succeeded on it (one
/// that failed goes back to the pool, which tests it).
pub(super) async fn write_batch(
    pool: &Pool,
    (pooler, writing): (Pooler, Writing),
    held: Option<Held>,
    mut items: Vec<Item>,
) -> (Vec<Outcome>, Option<Held>) {
    let written = async {
        let mut conn = match held {
            Some(conn) => conn,
            None => pool.acquire().await?,
        };
        let outcomes = match pooler {
            Pooler::None => run(Conn::new(&mut conn, pooler), &mut items, writing).await?,
            // Both of the unnamed statement's round trips on one server connection.
            Pooler::Transaction => {
                let mut tx = conn.begin().await?;
                let outcomes = run(Conn::new(&mut tx, pooler), &mut items, writing).await?;
                tx.commit().await?;
                outcomes
            }
        };
        Ok((outcomes, conn))
    };
    match written.await {
        Ok((outcomes, conn)) => (outcomes, Some(conn)),
        Err(error) => (failed(&items, error), None),
    }
}

/// Writes the batch by the set-based statement or by `ctxd_append`.
async fn run(
    db: Conn<'_>,
    items: &mut [Item],
    writing: Writing,
) -> Result<Vec<Outcome>, sqlx::Error> {
    if writing.by_function {
        super::function::write(db, items, false).await
    } else {
        run_batch(db, items).await
    }
}

/// The outcomes of a batch whose statement failed with `error`.
fn failed(items: &[Item], error: sqlx::Error) -> Vec<Outcome> {
    match error {
        sqlx::Error::Database(error) => {
            tracing::warn!(
                appends = items.len(),
                %error,
                "the database refused a batch of appends; writing each alone"
            );
            items.iter().map(|_| Outcome::Alone).collect()
        }
        error => items
            .iter()
            .map(|_| Outcome::Failed(again(&error)))
            .collect(),
    }
}

async fn run_batch(db: Conn<'_>, items: &mut [Item]) -> Result<Vec<Outcome>, sqlx::Error> {
    let (users, messages) = take_messages(items);
    let items = &*items;
    let links = Links::of(items);
    let mut ledger = LedgerParameters::default();
    for (index, item) in (0..).zip(items) {
        ledger.push(index, item.session, &item.ledger);
    }
    let events = EventColumns::of(items);
    let jobs: Vec<(i32, &NewJob, bool)> = (0..)
        .zip(items)
        .filter_map(|(index, item)| item.job.as_ref().map(|(job, notify)| (index, job, *notify)))
        .collect();
    let sql = &BATCH_SQL[usize::from(!events.items.is_empty())][usize::from(!jobs.is_empty())]
        [usize::from(!ledger.entries.is_empty())][usize::from(!ledger.runs.is_empty())];
    let query = sqlx::query(sqlx::AssertSqlSafe(sql.as_str()));
    let query = bind_updates(query, items, users);
    let query = bind_messages(query, &messages, links);
    let query = bind_rest(query, items, &ledger);
    let query = bind_events(query, &events);
    let query = bind_jobs(query, &jobs);
    let rows = query.fetch_all(db).await?;
    outcomes(&rows, items, !jobs.is_empty())
}

/// The tool calls the appends make and answer, as columns.
#[derive(Default)]
struct Links<'a> {
    call_items: Vec<i32>,
    call_ids: Vec<&'a str>,
    call_seqs: Vec<i64>,
    result_seqs: Vec<Option<i64>>,
    answer_items: Vec<i32>,
    answer_ids: Vec<&'a str>,
    answer_seqs: Vec<i64>,
}

impl<'a> Links<'a> {
    fn of(items: &'a [Item]) -> Links<'a> {
        let mut links = Links::default();
        for (index, item) in (0..).zip(items) {
            for (id, seq, result) in &item.calls.0 {
                links.call_items.push(index);
                links.call_ids.push(id.as_str());
                links.call_seqs.push(*seq);
                links.result_seqs.push(*result);
            }
            for (id, seq) in &item.calls.1 {
                links.answer_items.push(index);
                links.answer_ids.push(id.as_str());
                links.answer_seqs.push(*seq);
            }
        }
        links
    }
}

/// Parameters 1–25: each append's guard and the session row's new aggregates.
fn bind_updates<'q>(query: PgQuery<'q>, items: &'q [Item], users: Vec<bool>) -> PgQuery<'q> {
    let column = |f: &dyn Fn(&Item) -> i64| items.iter().map(f).collect::<Vec<i64>>();
    let anchor = |f: &dyn Fn(&AnchorUpdate) -> Option<f64>| {
        items
            .iter()
            .map(|item| item.update.anchor.as_ref().and_then(f))
            .collect::<Vec<Option<f64>>>()
    };
    let anchored = |f: &dyn Fn(&AnchorUpdate) -> i64| {
        items
            .iter()
            .map(|item| item.update.anchor.as_ref().map(f))
            .collect::<Vec<Option<i64>>>()
    };
    query
        .bind((0..items.len() as i32).collect::<Vec<i32>>())
        .bind(column(&|item| item.session))
        .bind(
            items
                .iter()
                .map(|item| item.row_version.as_str())
                .collect::<Vec<&str>>(),
        )
        .bind(items.iter().map(|item| item.assumed).collect::<Vec<bool>>())
        .bind(column(&|item| item.update.version))
        .bind(column(&|item| item.update.message_count))
        .bind(column(&|item| item.update.turn_count))
        .bind(column(&|item| item.update.log_tokens))
        .bind(column(&|item| item.update.view_tokens))
        .bind(column(&|item| item.update.last_turn_tokens))
        .bind(column(&|item| item.builds))
        .bind(anchored(&|a| a.anchor.reported_tokens))
        .bind(anchored(&|a| a.anchor.fixed_tokens))
        .bind(anchored(&|a| a.anchor.history_tokens))
        .bind(anchored(&|a| a.anchor.first_seq))
        .bind(anchored(&|a| a.anchor.last_seq))
        .bind(anchored(&|a| a.anchor.view_epoch))
        .bind(anchor(&|a| Some(a.anchor.delta_ratio)))
        .bind(anchor(&|a| a.error))
        .bind(column(&|item| item.update.usage.0))
        .bind(column(&|item| item.update.usage.1))
        .bind(column(&|item| item.update.usage.2))
        .bind(column(&|item| item.update.evicted))
        .bind(users)
        .bind(column(&|item| item.calls.1.len() as i64))
}

/// Parameters 26–47: the messages, the tool calls made and answered, the view states.
fn bind_messages<'q>(
    query: PgQuery<'q>,
    messages: &'q MessageColumns,
    links: Links<'q>,
) -> PgQuery<'q> {
    messages
        .bind_columns(query.bind(&messages.items))
        .bind(links.call_items)
        .bind(links.call_ids)
        .bind(links.call_seqs)
        .bind(links.result_seqs)
        .bind(links.answer_items)
        .bind(links.answer_ids)
        .bind(links.answer_seqs)
        .bind(&messages.view_states)
}

/// Parameters 48–54: content bytes, the task ledger's rows, the pending-job guards,
/// the event counts and the budget statuses.
fn bind_rest<'q>(
    query: PgQuery<'q>,
    items: &'q [Item],
    ledger: &'q LedgerParameters,
) -> PgQuery<'q> {
    query
        .bind(
            items
                .iter()
                .map(|item| item.update.content_bytes)
                .collect::<Vec<i64>>(),
        )
        .bind(sqlx::types::Json(&ledger.entries))
        .bind(sqlx::types::Json(&ledger.runs))
        .bind(
            items
                .iter()
                .map(|item| item.pending.map(|(kind, _)| kind))
                .collect::<Vec<Option<&str>>>(),
        )
        .bind(
            items
                .iter()
                .map(|item| item.pending.and_then(|(_, id)| id))
                .collect::<Vec<Option<i64>>>(),
        )
        .bind(
            items
                .iter()
                .map(|item| item.events.len() as i64)
                .collect::<Vec<i64>>(),
        )
        .bind(
            items
                .iter()
                .map(|item| item.budget_status.map(crate::budget::Status::code))
                .collect::<Vec<Option<i16>>>(),
        )
        .bind(tenants(items))
}

/// The batch's tenants, each once.
fn tenants(items: &[Item]) -> Vec<i64> {
    let mut tenants: Vec<i64> = items.iter().map(|item| item.tenant).collect();
    tenants.sort_unstable();
    tenants.dedup();
    tenants
}

/// The events' parameters, when the batch has events.
fn bind_events<'q>(query: PgQuery<'q>, events: &'q EventColumns) -> PgQuery<'q> {
    if events.items.is_empty() {
        return query;
    }
    query
        .bind(&events.items)
        .bind(&events.ords)
        .bind(&events.kinds)
        .bind(&events.details)
        .bind(EVENTS_CHANNEL)
}

/// The jobs' parameters, when the batch enqueues jobs.
fn bind_jobs<'q>(query: PgQuery<'q>, jobs: &[(i32, &'q NewJob, bool)]) -> PgQuery<'q> {
    if jobs.is_empty() {
        return query;
    }
    query
        .bind(jobs.iter().map(|job| job.0).collect::<Vec<i32>>())
        .bind(jobs.iter().map(|job| job.1.kind).collect::<Vec<&str>>())
        .bind(jobs.iter().map(|job| Json(&job.1.args)).collect::<Vec<_>>())
        .bind(jobs.iter().map(|job| job.1.priority).collect::<Vec<i16>>())
        .bind(
            jobs.iter()
                .map(|job| job.1.max_attempts)
                .collect::<Vec<i32>>(),
        )
        .bind(
            jobs.iter()
                .map(|job| job.1.notify_done)
                .collect::<Vec<bool>>(),
        )
        .bind(JOBS_CHANNEL)
        .bind(jobs.iter().any(|job| job.2))
}

/// `error`, once more for another append of the batch: a connection's or the pool's
/// failure stays one (the service answers UNAVAILABLE), anything else is a protocol
/// error with the same text (logged, never sent to the client).
fn again(error: &sqlx::Error) -> sqlx::Error {
    match error {
        sqlx::Error::Io(io) => sqlx::Error::Io(std::io::Error::new(io.kind(), io.to_string())),
        sqlx::Error::PoolTimedOut => sqlx::Error::PoolTimedOut,
        sqlx::Error::PoolClosed => sqlx::Error::PoolClosed,
        other => sqlx::Error::Protocol(other.to_string()),
    }
}

/// The batch's events as the statement's columns: for each, its append's index in the
/// batch, its place among that append's events (from 1), its kind and its detail.
#[derive(Default)]
struct EventColumns<'a> {
    items: Vec<i32>,
    ords: Vec<i64>,
    kinds: Vec<i16>,
    details: Vec<Json<&'a EventDetail>>,
}

impl<'a> EventColumns<'a> {
    fn of(items: &'a [Item]) -> EventColumns<'a> {
        let mut columns = EventColumns::default();
        for (index, item) in items.iter().enumerate() {
            for (ord, event) in (1i64..).zip(&item.events) {
                columns.items.push(index as i32);
                columns.ords.push(ord);
                columns.kinds.push(event.kind() as i16);
                columns.details.push(Json(event));
            }
        }
        columns
    }
}
