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
    from ledger_entries where session_id = $1";

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
#[derive(Default)]
pub(super) struct LedgerParameters<'a> {
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

/// Sessions whose ledger a replica keeps, and the most entries it keeps of one.
const LEDGERS_CACHED: usize = 4_096;
const LEDGER_ENTRIES_CACHED: usize = 4_096;

/// A replica's copies of session ledgers, each as of a session version, so that a build
/// reads a ledger only when it changed. Exact: every change to a ledger (an append's
/// entries, UpdateLedger) moves the session to a new version in the transaction that
/// makes it, and the key is the session's row id, which a new session never reuses.
#[derive(Debug, Default)]
pub(super) struct LedgerCache {
    entries: std::sync::Mutex<std::collections::HashMap<i64, VersionedLedger>>,
}

/// A session's ledger as of a session version.
type VersionedLedger = (i64, Arc<Vec<Entry>>);

impl LedgerCache {
    fn get(&self, session_id: i64, version: i64) -> Option<Arc<Vec<Entry>>> {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries
            .get(&session_id)
            .filter(|(at, _)| *at == version)
            .map(|(_, ledger)| ledger.clone())
    }

    fn put(&self, session_id: i64, version: i64, ledger: Arc<Vec<Entry>>) {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if entries.len() >= LEDGERS_CACHED && !entries.contains_key(&session_id) {
            // Start over rather than track recency: a miss is one read.
            entries.clear();
        }
        entries.insert(session_id, (version, ledger));
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
        let ledger = Arc::new(self.ledger(row.id).await?);
        if caching && ledger.len() <= LEDGER_ENTRIES_CACHED {
            self.ledgers.put(row.id, row.version, ledger.clone());
        }
        Ok(ledger)
    }

    /// The session's ledger, in order of creation.
    pub async fn ledger(&self, session_id: i64) -> StoreResult<Vec<Entry>> {
        let sql = format!("{SELECT} order by id");
        let rows: Vec<EntryRow> = sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(session_id)
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
            .execute(self.conn())
            .await?;
        let version: i64 = sqlx::query_scalar(
            "update sessions set version = version + 1, updated_at = now() where id = $1 \
             returning version",
        )
        .bind(session_id)
        .fetch_one(self.conn())
        .await?;
        self.finish().await?;
        Ok(version)
    }
}
