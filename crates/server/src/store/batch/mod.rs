//! Appends to different sessions written together: one statement and one commit for
//! all the appends waiting when a writer comes free. PostgreSQL's cost of a small write
//! is mostly per statement and per commit (executor start and finish, the protocol,
//! the WAL flush), not per row, so under concurrent load a batch of appends costs little
//! more than one. Each append in a batch keeps its own guard and outcome: it applies
//! only if its session row is as its append decided on, exactly as alone, and its
//! task-ledger rows ride with its messages under that guard.
//!
//! No timer: a batch is whatever is queued when one of the `writers` statements in
//! flight finishes, so an append on an idle replica is written at once, alone. A batch
//! takes at most half of what is waiting and what the last batch will send back
//! (`balanced`), so that a burst does not settle into alternating batches of one and
//! of all the rest: a batch's round trip is mostly fixed, and while a lone append is
//! written the requests of all the others compete with it for the cores (measured in
//! docs/benchmarks.md, "Balanced batches"). A batch carries its appends' events,
//! budget-status changes and summarization jobs, with one NOTIFY for all its events
//! and at most one for its jobs; appends with an idempotency key, and appends under the
//! row lock, are written alone by their own statement (`Item::of`).
//!
//! A writer keeps its connection from one batch to the next while appends are waiting
//! (`Held`): sqlx pings a pooled connection when it hands it out and again when it
//! takes it back, two round trips a batch on the serial chain AppendTurn's throughput
//! hangs on. Once nothing waits the connection goes back to the pool, so a kept one is
//! only ever reused the moment its last batch has succeeded on it.
use std::collections::{HashSet, VecDeque};
use std::time::Instant;

use sqlx::Postgres;
use sqlx::pool::PoolConnection;
use tokio::sync::{mpsc, oneshot};

use super::append_write::{AppendWrite, CallRows, MessageColumns, Seen, call_rows};
use super::jobs::NewJob;
use super::ledger::ledger_bytes;
use super::pool::Pool;
use super::pooler::Pooler;
use super::sessions::SessionUpdate;
use crate::events::EventDetail;
use crate::ledger::extract::Extracted;
use crate::metrics::metrics;
use crate::session::Session;
use statement::write_batch;

pub(super) mod function;
mod rows;
mod statement;

/// One append's write, owned (it crosses to the writer's task).
pub(super) struct Item {
    pub session: i64,
    pub tenant: i64,
    /// The row version the append decided on.
    pub row_version: String,
    /// Decided on the replica's cached row: the write also checks the version, the
    /// build count and the tool-call references (`sql/append/assumed.sql`, per item).
    pub assumed: bool,
    pub builds: i64,
    /// The pending job the append relies on (`AppendWrite::pending`).
    pub pending: Option<(&'static str, Option<i64>)>,
    pub update: SessionUpdate,
    pub messages: MessageColumns,
    pub calls: CallRows,
    /// The session is a fork: an answer to a call it inherited inserts a row of its own.
    pub fork: bool,
    /// The task ledger's share of the append.
    pub ledger: Extracted,
    /// The events the append announces, in order.
    pub events: Vec<EventDetail>,
    /// The session's new budget status, when the append changes it.
    pub budget_status: Option<crate::budget::Status>,
    /// The job the append enqueues unless one of its kind is pending, and whether its
    /// enqueue announces itself (`NotifyGate`).
    pub job: Option<(NewJob, bool)>,
    /// Key, request hash and the response to replay for it (`ctxd_append` only).
    pub idempotency: Option<(String, Vec<u8>, serde_json::Value)>,
}

impl Item {
    /// `write` as a batch item, decided on `session` at `row_version`; `None` when it
    /// has parts the batch statement does not carry (an idempotency key), so it is
    /// written alone — unless `by_function`: `ctxd_append` carries every part.
    pub(super) fn of(
        session: &Session,
        row_version: &str,
        assumed: bool,
        write: &AppendWrite<'_>,
        by_function: bool,
    ) -> Option<Item> {
        // A fork's answer to a call it inherited inserts a row of its own, which only
        // the single statement does (sql/append/answers_fork.sql).
        let alone =
            write.idempotency.is_some() || (session.inherits() && !write.answers.is_empty());
        if alone && !by_function {
            return None;
        }
        let mut messages = MessageColumns::default();
        for new in write.batch {
            messages.push(0, new);
        }
        Some(Item {
            session: session.id,
            tenant: session.tenant_id,
            row_version: row_version.to_string(),
            assumed,
            builds: session.builds.count,
            pending: write.pending,
            update: write.update.clone(),
            messages,
            calls: call_rows(write.calls, write.answers),
            fork: session.inherits(),
            ledger: write.ledger.clone(),
            events: write.events.clone(),
            budget_status: write.budget_status,
            job: write.job.map(|(job, notify)| (job.clone(), notify)),
            idempotency: write
                .idempotency
                .as_ref()
                .map(|(key, hash, response)| (key.to_string(), hash.to_vec(), response.clone())),
        })
    }

    /// The bytes of its texts (what makes a statement large).
    fn bytes(&self) -> usize {
        self.messages.bytes() + ledger_bytes(&self.ledger)
    }
}

/// How one append of a batch went.
pub(super) enum Outcome {
    /// Written: the session row as the write left it, with its new row version, and
    /// the id of the job it enqueued (`None` when it enqueued none).
    Applied(Box<Session>, String, Option<i64>),
    /// The session row changed after the append's read, or (`Seen`) the pending job
    /// it relied on is not the pending one: nothing written.
    Raced(Option<Seen>),
    /// Not written by the batch: the database refused its statement (nothing of it
    /// was written), or another transaction held this append's session row. Written
    /// alone, it waits for that lock by itself, or says what is wrong with it.
    Alone,
    /// The batch's outcome is unknown (the connection failed): it may have committed.
    Failed(sqlx::Error),
}

type Pending = (Item, oneshot::Sender<Outcome>);

/// A writer's connection, kept for the next batch.
type Held = PoolConnection<Postgres>;

/// Appends in one batch at most; the rest wait for the next.
const MAX_BATCH: usize = 64;

/// Message bytes in one batch at most (an append larger than this goes alone), so a
/// batch of large appends does not become one huge statement.
const MAX_BATCH_BYTES: usize = 4 * 1024 * 1024;

/// How the batches are written.
#[derive(Debug, Clone, Copy)]
pub(super) struct Writing {
    /// Each batch holds one tenant's appends (a distributed database).
    pub by_tenant: bool,
    /// By `ctxd_append` (function.rs), not by the set-based statement (statement.rs).
    pub by_function: bool,
}

/// The queue of appends and the task that writes them in batches.
#[derive(Debug)]
pub(super) struct Batcher {
    queue: mpsc::UnboundedSender<Pending>,
}

impl Batcher {
    /// Starts the writer: at most `writers` batch statements in flight on `pool`
    /// (behind `pooler`), written as `writing` says.
    pub(super) fn start(pool: Pool, pooler: Pooler, writers: usize, writing: Writing) -> Batcher {
        let (queue, pending) = mpsc::unbounded_channel();
        tokio::spawn(dispatch(pool, pooler, writers.max(1), writing, pending));
        Batcher { queue }
    }

    /// Writes `item` with whatever else is waiting.
    pub(super) async fn write(&self, item: Item) -> Outcome {
        let (done, outcome) = oneshot::channel();
        if self.queue.send((item, done)).is_err() {
            return Outcome::Failed(stopped());
        }
        outcome.await.unwrap_or_else(|_| Outcome::Failed(stopped()))
    }
}

/// Writes whatever is waiting as a batch whenever fewer than `writers` batches are in
/// flight. A batch holds a session at most once, and no session of a batch still in
/// flight (two batches locking the same rows could deadlock each other); such appends
/// wait, in order, for a later batch. Ends when the store is dropped and nothing is
/// left to write.
async fn dispatch(
    pool: Pool,
    pooler: Pooler,
    writers: usize,
    writing: Writing,
    mut pending: mpsc::UnboundedReceiver<Pending>,
) {
    let (finished_tx, mut finished) = mpsc::unbounded_channel::<(Vec<i64>, Option<Held>)>();
    let mut in_flight: HashSet<i64> = HashSet::new();
    let mut held: Vec<Held> = Vec::new();
    let mut running = 0;
    let mut waiting: VecDeque<Pending> = VecDeque::new();
    // The size of the last batch started: its appends' callers come back meanwhile.
    let mut last = 0;
    let mut open = true;
    loop {
        if running < writers {
            while let Ok(next) = pending.try_recv() {
                waiting.push_back(next);
            }
            let limit = balanced(waiting.len(), last);
            let batch = next_batch(&mut waiting, &in_flight, limit, writing.by_tenant);
            if !batch.is_empty() {
                last = batch.len();
                let sessions: Vec<i64> = batch.iter().map(|(item, _)| item.session).collect();
                in_flight.extend(&sessions);
                running += 1;
                let (pool, finished) = (pool.clone(), finished_tx.clone());
                let conn = held.pop();
                tokio::spawn(async move {
                    // Frees the writer and its sessions however the task ends.
                    let mut finished = Finished(finished, sessions, None);
                    let (items, done): (Vec<Item>, Vec<oneshot::Sender<Outcome>>) =
                        batch.into_iter().unzip();
                    let (appends, started) = (items.len(), Instant::now());
                    let (outcomes, conn) = write_batch(&pool, (pooler, writing), conn, items).await;
                    metrics().append_batch_written(appends, started.elapsed());
                    finished.2 = conn;
                    drop(finished);
                    for (done, outcome) in done.into_iter().zip(outcomes) {
                        // The append's caller may have gone (its RPC cancelled).
                        let _ = done.send(outcome);
                    }
                });
                continue;
            }
        }
        if waiting.is_empty() {
            // Nothing to write: kept connections go back to the pool.
            held.clear();
        }
        if !open && waiting.is_empty() && running == 0 {
            return;
        }
        tokio::select! {
            next = pending.recv(), if open => match next {
                Some(next) => waiting.push_back(next),
                None => open = false,
            },
            Some((sessions, conn)) = finished.recv() => {
                running -= 1;
                for session in sessions {
                    in_flight.remove(&session);
                }
                held.extend(conn);
            }
        }
    }
}

/// Tells the dispatcher, when dropped, that a batch of these sessions is done, and
/// hands back the connection it succeeded on.
struct Finished(
    mpsc::UnboundedSender<(Vec<i64>, Option<Held>)>,
    Vec<i64>,
    Option<Held>,
);

impl Drop for Finished {
    fn drop(&mut self) {
        let _ = self.0.send((std::mem::take(&mut self.1), self.2.take()));
    }
}

/// The error of an append whose writer is gone (the store is shutting down).
fn stopped() -> sqlx::Error {
    sqlx::Error::PoolClosed
}

/// Batches up to this size are never split to balance them: a second statement's
/// fixed cost is not worth it for a few appends (a judgement; 8 was not tuned).
const BALANCE_FROM: usize = 8;

/// The most appends the next batch takes when `waiting` appends wait and the last batch
/// held `last`: half of both together (the last batch's callers send their next
/// appends while this batch is written), so that batches of one and of all the rest
/// even out to two halves within a batch or two. Never below `BALANCE_FROM`.
fn balanced(waiting: usize, last: usize) -> usize {
    waiting.saturating_add(last).div_ceil(2).max(BALANCE_FROM)
}

/// The next batch from `waiting`, in order (appends whose RPC was cancelled meanwhile
/// are dropped, unwritten): appends whose session is neither in flight nor already in
/// the batch, up to `limit` and `MAX_BATCH` appends and `MAX_BATCH_BYTES`, sorted by
/// session (so that batches of different replicas lock shared rows in the same order);
/// the rest keep their places. `by_tenant`: only appends of the first one's tenant.
fn next_batch(
    waiting: &mut VecDeque<Pending>,
    in_flight: &HashSet<i64>,
    limit: usize,
    by_tenant: bool,
) -> Vec<Pending> {
    let mut batch: Vec<Pending> = Vec::new();
    let mut bytes = 0;
    let mut taken = HashSet::new();
    let mut blocked = HashSet::new();
    let mut rest = VecDeque::with_capacity(waiting.len());
    for next in waiting.drain(..) {
        if next.1.is_closed() {
            // Its RPC was cancelled while it waited: the client was told it failed.
            continue;
        }
        let session = next.0.session;
        let size = next.0.bytes();
        let tenant_fits = !by_tenant || batch.first().is_none_or(|b| b.0.tenant == next.0.tenant);
        if batch.len() < MAX_BATCH.min(limit)
            && tenant_fits
            && (batch.is_empty() || bytes + size <= MAX_BATCH_BYTES)
            && !in_flight.contains(&session)
            && !blocked.contains(&session)
            && taken.insert(session)
        {
            bytes += size;
            batch.push(next);
        } else {
            // Later appends of this session wait behind this one.
            blocked.insert(session);
            rest.push_back(next);
        }
    }
    *waiting = rest;
    batch.sort_by_key(|(item, _)| item.session);
    batch
}

#[cfg(test)]
mod tests {
    use super::{BALANCE_FROM, MAX_BATCH, balanced};
    use proptest::prelude::*;

    /// The next batch's size in a closed loop of `clients`, each with one append at a
    /// time, when the batch just written held `last` and all the others wait.
    fn next(clients: usize, last: usize) -> usize {
        let waiting = clients - last;
        waiting.min(balanced(waiting, last)).min(MAX_BATCH)
    }

    proptest! {
        /// A batch always takes something when anything waits, and never splits what a
        /// second statement would cost more to write than it gains.
        #[test]
        fn a_batch_takes_at_least_half_and_never_splits_a_small_queue(
            waiting in 0usize..10_000,
            last in 0usize..10_000,
        ) {
            let limit = balanced(waiting, last);
            prop_assert!(limit >= BALANCE_FROM);
            prop_assert!(limit >= waiting.div_ceil(2));
        }

        /// Whatever split a burst starts from, a closed loop's batches are two halves
        /// from the second batch on (and stay so), where without the limit they would
        /// alternate between the split's two sizes for as long as nothing disturbs them.
        #[test]
        fn a_closed_loop_settles_into_halves(
            clients in (2 * BALANCE_FROM)..=MAX_BATCH,
            first in 1usize..MAX_BATCH,
        ) {
            let first = first.min(clients - 1);
            let mut last = next(clients, next(clients, first));
            for _ in 0..8 {
                prop_assert!(last.abs_diff(clients / 2) <= 1, "{clients} clients: {last}");
                last = next(clients, last);
            }
        }
    }
}
