//! The appends of a batch (or one append alone) written by one call of `ctxd_append`
//! (migration 0030) and one commit, each under its own guard: plain statements on each
//! append's tenant, which a database distributed by tenant runs on the node holding it
//! (statement.rs's set-based statement it would plan in parts). Slower on one
//! PostgreSQL (docs/benchmarks.md), so used there only when asked.
use std::sync::LazyLock;

use sqlx::Postgres;

use super::super::EVENTS_CHANNEL;
use super::super::jobs::{JOBS_CHANNEL, NewJob};
use super::super::ledger::LedgerParameters;
use super::super::sessions::with_session_columns;
use super::rows::{outcomes, take_messages};
use super::{Item, Outcome};
use crate::events::EventDetail;

static WRITE_SQL: LazyLock<String> =
    LazyLock::new(|| with_session_columns(include_str!("../sql/append/write.sql")));

/// Writes `items` (their messages taken out of them) by one statement on `db`: an
/// outcome for each, in order. `wait`: an append whose session row another transaction
/// holds waits for it; otherwise its outcome is `Alone`.
pub(in crate::store) async fn write<'c>(
    db: impl sqlx::Executor<'c, Database = Postgres>,
    items: &mut [Item],
    wait: bool,
) -> Result<Vec<Outcome>, sqlx::Error> {
    let rows: Vec<i32> = items
        .iter()
        .map(|item| item.messages.seqs.len() as i32)
        .collect();
    let (users, messages) = take_messages(items);
    let mut first_row = 1;
    let parameters: Vec<ItemParameter<'_>> = (0..)
        .zip(items.iter())
        .zip(users.into_iter().zip(rows))
        .map(|((index, item), (lifts_pause, rows))| {
            let parameter = ItemParameter::of(index, item, lifts_pause, (first_row, rows));
            first_row += rows;
            parameter
        })
        .collect();
    let query = sqlx::query(WRITE_SQL.as_str())
        .bind(wait)
        .bind(sqlx::types::Json(&parameters));
    let rows = messages
        .bind_columns(query)
        .bind(&messages.view_states)
        .bind(EVENTS_CHANNEL)
        .bind(JOBS_CHANNEL)
        .fetch_all(db)
        .await?;
    outcomes(&rows, items, true)
}

/// One append as `ctxd_append` reads it (`p_items`, one object each).
#[derive(serde::Serialize)]
struct ItemParameter<'a> {
    item: i32,
    session: i64,
    tenant: i64,
    row_version: &'a str,
    assumed: bool,
    builds: i64,
    version: i64,
    message_count: i64,
    turn_count: i64,
    log_tokens: i64,
    view_tokens: i64,
    last_turn_tokens: i64,
    content_bytes: i64,
    anchor_reported: Option<i64>,
    anchor_fixed: Option<i64>,
    anchor_history: Option<i64>,
    anchor_first_seq: Option<i64>,
    anchor_last_seq: Option<i64>,
    anchor_view_epoch: Option<i64>,
    anchor_delta_ratio: Option<f64>,
    error: Option<f64>,
    usage_input: i64,
    usage_output: i64,
    usage_cached: i64,
    evicted: i64,
    lifts_pause: bool,
    budget: Option<i16>,
    pending_kind: Option<&'static str>,
    pending_job: Option<i64>,
    fork: bool,
    /// Its messages: rows `first_row ..` (from 1) of the message columns, `rows` of them.
    first_row: i32,
    rows: i32,
    call_ids: Vec<&'a str>,
    call_seqs: Vec<i64>,
    call_results: Vec<Option<i64>>,
    answer_ids: Vec<&'a str>,
    answer_seqs: Vec<i64>,
    event_kinds: Vec<i16>,
    event_details: &'a [EventDetail],
    job: Option<JobParameter<'a>>,
    idempotency: Option<IdempotencyParameter<'a>>,
    #[serde(flatten)]
    ledger: LedgerParameters<'a>,
}

/// The job an append enqueues unless one of its kind is pending.
#[derive(serde::Serialize)]
struct JobParameter<'a> {
    #[serde(flatten)]
    job: &'a NewJob,
    /// Whether its enqueue announces itself (`NotifyGate`).
    announce: bool,
}

/// The response an append keeps under its idempotency key.
#[derive(serde::Serialize)]
struct IdempotencyParameter<'a> {
    key: &'a str,
    /// The request's hash, in hex.
    hash: String,
    response: &'a serde_json::Value,
}

impl<'a> ItemParameter<'a> {
    /// Batch item `index`; its messages are rows `rows.0 ..` of the columns, `rows.1`
    /// of them.
    fn of(index: i32, item: &'a Item, lifts_pause: bool, rows: (i32, i32)) -> Self {
        let update = &item.update;
        let anchor = update.anchor.as_ref().map(|a| &a.anchor);
        let (calls, answers) = &item.calls;
        ItemParameter {
            item: index,
            session: item.session,
            tenant: item.tenant,
            row_version: &item.row_version,
            assumed: item.assumed,
            builds: item.builds,
            version: update.version,
            message_count: update.message_count,
            turn_count: update.turn_count,
            log_tokens: update.log_tokens,
            view_tokens: update.view_tokens,
            last_turn_tokens: update.last_turn_tokens,
            content_bytes: update.content_bytes,
            anchor_reported: anchor.map(|a| a.reported_tokens),
            anchor_fixed: anchor.map(|a| a.fixed_tokens),
            anchor_history: anchor.map(|a| a.history_tokens),
            anchor_first_seq: anchor.map(|a| a.first_seq),
            anchor_last_seq: anchor.map(|a| a.last_seq),
            anchor_view_epoch: anchor.map(|a| a.view_epoch),
            anchor_delta_ratio: anchor.map(|a| a.delta_ratio),
            error: update.anchor.as_ref().and_then(|a| a.error),
            usage_input: update.usage.0,
            usage_output: update.usage.1,
            usage_cached: update.usage.2,
            evicted: update.evicted,
            lifts_pause,
            budget: item.budget_status.map(crate::budget::Status::code),
            pending_kind: item.pending.map(|(kind, _)| kind),
            pending_job: item.pending.and_then(|(_, id)| id),
            fork: item.fork,
            first_row: rows.0,
            rows: rows.1,
            call_ids: calls.iter().map(|(id, _, _)| id.as_str()).collect(),
            call_seqs: calls.iter().map(|(_, seq, _)| *seq).collect(),
            call_results: calls.iter().map(|(_, _, result)| *result).collect(),
            answer_ids: answers.iter().map(|(id, _)| id.as_str()).collect(),
            answer_seqs: answers.iter().map(|(_, seq)| *seq).collect(),
            event_kinds: item.events.iter().map(|e| e.kind() as i16).collect(),
            event_details: &item.events,
            job: item.job.as_ref().map(|(job, announce)| JobParameter {
                job,
                announce: *announce,
            }),
            idempotency: item.idempotency.as_ref().map(|(key, hash, response)| {
                IdempotencyParameter {
                    key,
                    hash: hex::encode(hash),
                    response,
                }
            }),
            ledger: {
                let mut ledger = LedgerParameters::default();
                ledger.push(index, item.session, &item.ledger);
                ledger
            },
        }
    }
}
