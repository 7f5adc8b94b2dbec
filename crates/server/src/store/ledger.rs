//! The task ledger's rows: read per session, written by the append's statement
//! (`sql/append/ledger.sql`) and by UpdateLedger under the session's row lock.
use std::sync::Arc;

use super::StoreResult;
use super::{SessionTx, Store};
use crate::ledger::extract::Extracted;
use crate::ledger::todos::Plan;
use crate::ledger::{Entry, Kind, Run, TodoStatus};
use crate::session::Session;

/// A ledger row as read: private to the store, which hands out [`Entry`]s.
#[derive(sqlx::FromRow)]
struct EntryRow {
    id: i64,
    kind: i16,
    key: String,
    text: String,
    seqs: Vec<i64>,
    run_seqs: Vec<i64>,
    run_codes: Vec<i32>,
    status: Option<i16>,
}

impl EntryRow {
    /// `None` for a kind this build does not know (a newer replica wrote it).
    fn entry(self) -> Option<Entry> {
        Some(Entry {
            kind: Kind::from_i16(self.kind)?,
            key: self.key,
            text: self.text,
            seqs: self.seqs,
            runs: self
                .run_seqs
                .into_iter()
                .zip(self.run_codes)
                .map(|(result_seq, exit_code)| Run {
                    result_seq,
                    exit_code,
                })
                .collect(),
            status: self.status.and_then(TodoStatus::from_i16),
            position: self.id,
        })
    }
}

const SELECT: &str = "select id, kind, key, text, seqs, run_seqs, run_codes, status \
    from ledger_entries where session_id = $1 and tenant_id = $2";

/// A ledger entry an append yields, as the append statements' JSON parameter carries
/// it (`sql/append/ledger.sql`, `sql/append/batch_ledger.sql`); `item` names the batch
/// item it belongs to (the single statement ignores it).
#[derive(serde::Serialize)]
pub(super) struct EntryParameter<'a> {
    item: i32,
    kind: i16,
    key: &'a str,
    text: &'a str,
    seqs: &'a [i64],
    run_seqs: Vec<i64>,
    run_codes: Vec<i32>,
    call_id: Option<&'a str>,
}

/// An exit status an append's result shows for a call of an earlier append. `session`
/// (the session row's id) lets the statement find the command by its call index,
/// (session, call id), rather than by the call id alone across every session.
#[derive(serde::Serialize)]
pub(super) struct RunParameter<'a> {
    item: i32,
    session: i64,
    call_id: &'a str,
    seq: i64,
    exit_code: i32,
}

/// The append statements' ledger parameters: the entries the appends yield, and the
/// exit statuses they show for calls of earlier appends.
#[derive(Default, serde::Serialize)]
pub(super) struct LedgerParameters<'a> {
    #[serde(rename = "ledger")]
    pub entries: Vec<EntryParameter<'a>>,
    pub runs: Vec<RunParameter<'a>>,
}

impl<'a> LedgerParameters<'a> {
    /// Adds `extracted`'s rows as batch item `item`'s, an append to the session whose
    /// row id is `session`.
    pub(super) fn push(&mut self, item: i32, session: i64, extracted: &'a Extracted) {
        self.entries
            .extend(extracted.entries.iter().map(|found| EntryParameter {
                item,
                kind: found.kind as i16,
                key: &found.key,
                text: &found.text,
                seqs: &found.seqs,
                run_seqs: found.runs.iter().map(|run| run.result_seq).collect(),
                run_codes: found.runs.iter().map(|run| run.exit_code).collect(),
                call_id: found.call_id.as_deref(),
            }));
        self.runs
            .extend(extracted.outcomes.iter().map(|outcome| RunParameter {
                item,
                session,
                call_id: &outcome.call_id,
                seq: outcome.seq,
                exit_code: outcome.exit_code,
            }));
    }
}

/// The bytes of `extracted`'s texts (what its rows add to a statement).
pub(super) fn ledger_bytes(extracted: &Extracted) -> usize {
    extracted
        .entries
        .iter()
        .map(|found| {
            found.key.len() + found.text.len() + found.call_id.as_ref().map_or(0, String::len)
        })
        .sum::<usize>()
        + extracted
            .outcomes
            .iter()
            .map(|outcome| outcome.call_id.len())
            .sum::<usize>()
}

/// The most entries a replica keeps of one session's ledger.
const LEDGER_ENTRIES_CACHED: usize = 4_096;
/// What an entry costs the cache beyond its texts and seqs: the struct, the
/// allocations.
const ENTRY_OVERHEAD_BYTES: usize = 160;
/// What a cached ledger costs beyond its entries (the map's slot, the Arc).
const LEDGER_OVERHEAD_BYTES: usize = 96;

/// A replica's copies of session ledgers, each as of a session version, so that a build
/// reads a ledger only when it changed. Exact: every change to a ledger (an append's
/// entries, UpdateLedger) moves the session to a new version in the transaction that
/// makes it, and the key is the session's row id, which a new session never reuses.
/// Within a byte budget (a share of the view cache's): when a ledger would pass it, the
/// cache starts over rather than track recency (a miss is one read).
#[derive(Debug, Default)]
pub(super) struct LedgerCache {
    capacity_bytes: usize,
    inner: std::sync::Mutex<Ledgers>,
}

#[derive(Debug, Default)]
struct Ledgers {
    entries: std::collections::HashMap<i64, VersionedLedger>,
    bytes: usize,
}

/// A session's ledger as of a session version, and what it is estimated to take.
type VersionedLedger = (i64, Arc<Vec<Entry>>, usize);

/// What a ledger takes in memory, estimated from its texts and seqs.
fn ledger_memory(ledger: &[Entry]) -> usize {
    LEDGER_OVERHEAD_BYTES
        + ledger
            .iter()
            .map(|entry| {
                ENTRY_OVERHEAD_BYTES
                    + entry.key.len()
                    + entry.text.len()
                    + entry.seqs.len() * 8
                    + entry.runs.len() * 16
            })
            .sum::<usize>()
}

impl LedgerCache {
    /// A cache of at most `capacity_bytes` (0: none).
    pub(super) fn new(capacity_bytes: usize) -> LedgerCache {
        LedgerCache {
            capacity_bytes,
            inner: Default::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Ledgers> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn get(&self, session_id: i64, version: i64) -> Option<Arc<Vec<Entry>>> {
        self.lock()
            .entries
            .get(&session_id)
            .filter(|(at, _, _)| *at == version)
            .map(|(_, ledger, _)| ledger.clone())
    }

    fn put(&self, session_id: i64, version: i64, ledger: Arc<Vec<Entry>>) {
        let bytes = ledger_memory(&ledger);
        if bytes > self.capacity_bytes / 4 {
            return;
        }
        let mut inner = self.lock();
        if let Some((_, _, old)) = inner.entries.remove(&session_id) {
            inner.bytes -= old;
        }
        if inner.bytes + bytes > self.capacity_bytes {
            inner.entries.clear();
            inner.bytes = 0;
        }
        inner.entries.insert(session_id, (version, ledger, bytes));
        inner.bytes += bytes;
    }

    /// Ledgers kept and the bytes they are estimated to take.
    pub(super) fn usage(&self) -> (usize, usize) {
        let inner = self.lock();
        (inner.entries.len(), inner.bytes)
    }
}

impl Store {
    /// The ledger of the session `row` describes, as of its version: this replica's copy
    /// when it has one of that version (with the view cache on), else read.
    pub async fn ledger_at(&self, row: &Session) -> StoreResult<Arc<Vec<Entry>>> {
        let caching = self.views.enabled();
        if caching && let Some(ledger) = self.ledgers.get(row.id, row.version) {
            return Ok(ledger);
        }
        let ledger = Arc::new(self.ledger(row.tenant_id, row.id).await?);
        if caching && ledger.len() <= LEDGER_ENTRIES_CACHED {
            self.ledgers.put(row.id, row.version, ledger.clone());
        }
        Ok(ledger)
    }

    /// The session's ledger, in order of creation.
    pub async fn ledger(&self, tenant_id: i64, session_id: i64) -> StoreResult<Vec<Entry>> {
        let sql = format!("{SELECT} order by id");
        let rows: Vec<EntryRow> = sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(session_id)
            .bind(tenant_id)
            .fetch_all(self.db())
            .await?;
        Ok(rows.into_iter().filter_map(EntryRow::entry).collect())
    }
}

impl SessionTx {
    /// The session's todos and notes, read under its lock.
    pub async fn client_ledger(&mut self) -> StoreResult<Vec<Entry>> {
        let sql = format!("{SELECT} and kind in (4, 5) order by id");
        let rows: Vec<EntryRow> = sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(self.session.id)
            .bind(self.session.tenant_id)
            .fetch_all(self.conn())
            .await?;
        Ok(rows.into_iter().filter_map(EntryRow::entry).collect())
    }

    /// Writes a planned UpdateLedger, moves the session to a new version and commits;
    /// returns that version.
    pub async fn commit_ledger(mut self, plan: &Plan) -> StoreResult<i64> {
        let session_id = self.session.id;
        let kinds: Vec<i16> = plan.upserts.iter().map(|e| e.kind as i16).collect();
        let keys: Vec<&str> = plan.upserts.iter().map(|e| e.key.as_str()).collect();
        let texts: Vec<&str> = plan.upserts.iter().map(|e| e.text.as_str()).collect();
        let seqs: Vec<i64> = plan
            .upserts
            .iter()
            .map(|e| e.seqs.last().copied().unwrap_or(0))
            .collect();
        let statuses: Vec<Option<i16>> = plan
            .upserts
            .iter()
            .map(|e| e.status.map(|s| s as i16))
            .collect();
        sqlx::query(include_str!("sql/ledger/update.sql"))
            .bind(session_id)
            .bind(kinds)
            .bind(keys)
            .bind(texts)
            .bind(seqs)
            .bind(statuses)
            .bind(&plan.removed_notes)
            .bind(self.session.tenant_id)
            .execute(self.conn())
            .await?;
        let version: i64 = sqlx::query_scalar(
            "update sessions set version = version + 1, updated_at = now() \
             where id = $1 and tenant_id = $2 returning version",
        )
        .bind(session_id)
        .bind(self.session.tenant_id)
        .fetch_one(self.conn())
        .await?;
        self.finish().await?;
        Ok(version)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ledger(entries: usize, text: usize) -> Arc<Vec<Entry>> {
        Arc::new(
            (0..entries)
                .map(|n| Entry {
                    kind: Kind::Command,
                    key: format!("cmd {n}"),
                    text: "x".repeat(text),
                    seqs: vec![1, 2, 3],
                    runs: Vec::new(),
                    status: None,
                    position: n as i64,
                })
                .collect(),
        )
    }

    #[test]
    fn ledgers_stay_within_their_bytes() {
        let cache = LedgerCache::new(100_000);
        for session in 0..200 {
            cache.put(session, 1, ledger(10, 100));
            assert!(cache.usage().1 <= 100_000, "{:?}", cache.usage());
        }
        let newest = cache.get(199, 1).expect("the newest ledger is kept");
        assert_eq!(newest.len(), 10);
        assert!(cache.get(199, 2).is_none(), "another version is a miss");
        // One ledger over a quarter of the budget is not kept.
        cache.put(500, 1, ledger(100, 300));
        assert!(cache.get(500, 1).is_none());
        assert!(LedgerCache::new(0).get(1, 1).is_none());
    }
}
