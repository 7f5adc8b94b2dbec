//! The replica's cache of session rows as its own statements left them, which lets an
//! append skip its read (`store/append.rs`).
use std::collections::HashMap;

use crate::session::Session;

/// Session rows with their row version (xmin) as this replica's own statements on them
/// returned them — the append's write and the build's record — by (tenant, session id).
/// A row version names one version of the row, so a write guarded by it applies only
/// while the row is exactly the cached one. Bounded: when full it starts over.
///
/// With a row, the session's pending jobs as the replica last knew them (None:
/// unknown). A job can end without touching the session row, so this is a belief, not
/// a fact: an append that relies on it checks it in its write (`AppendWrite::pending`).
#[derive(Debug, Default)]
pub(super) struct RowCache {
    rows: std::sync::Mutex<HashMap<(i64, String), Cached>>,
}

/// A cached row, its version, and the pending jobs by kind as last known.
type Cached = (Session, String, Option<HashMap<String, i64>>);

/// Sessions a replica keeps rows for (about a kilobyte each).
const ROW_CACHE_SESSIONS: usize = 16_384;

impl RowCache {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(i64, String), Cached>> {
        // Entries are whole or absent: a panic while holding the lock leaves it usable.
        self.rows.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Keeps `row` at `version` with the pending jobs `pending` (None: unknown).
    pub(super) fn put(&self, row: Session, version: String, pending: Option<HashMap<String, i64>>) {
        let mut rows = self.lock();
        if rows.len() >= ROW_CACHE_SESSIONS {
            rows.clear();
        }
        rows.insert(
            (row.tenant_id, row.external_id.clone()),
            (row, version, pending),
        );
    }

    /// Keeps `row` at `version` after a write that enqueues no job: the pending jobs
    /// stay as the replica knew them with the entry it replaces (the same session's).
    pub(super) fn put_keeping_jobs(&self, row: Session, version: String) {
        let pending = self
            .lock()
            .get(&(row.tenant_id, row.external_id.clone()))
            .filter(|(old, _, _)| old.id == row.id)
            .and_then(|(_, _, pending)| pending.clone());
        self.put(row, version, pending);
    }

    /// Corrects what the entry at `version` knows of the pending job of `kind`.
    pub(super) fn remember_pending(
        &self,
        key: (i64, &str),
        version: &str,
        (kind, pending): (&str, Option<i64>),
    ) {
        let mut rows = self.lock();
        if let Some((_, at, jobs)) = rows.get_mut(&(key.0, key.1.to_string()))
            && at == version
        {
            let jobs = jobs.get_or_insert_default();
            match pending {
                Some(id) => jobs.insert(kind.to_string(), id),
                None => jobs.remove(kind),
            };
        }
    }

    pub(super) fn get(&self, tenant_id: i64, external_id: &str) -> Option<Cached> {
        self.lock()
            .get(&(tenant_id, external_id.to_string()))
            .cloned()
    }

    pub(super) fn forget(&self, tenant_id: i64, external_id: &str) {
        self.lock().remove(&(tenant_id, external_id.to_string()));
    }
}
