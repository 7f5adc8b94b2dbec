//! A replica's cache of session views, so a build reads only what was appended since the
//! previous one instead of the whole log.
//!
//! Why it is exact: every change to a stored message's view (clearing, summarizing,
//! emergency compaction) moves the session to a new view epoch in the transaction that
//! makes it, and an append only adds messages past the session's `message_count`. So an
//! entry of the session's current view epoch and first seq holds exactly what the table
//! holds for the messages it covers, and only the messages appended since it was filled
//! need fetching. The key is the session's row id, which a deleted and recreated session
//! never reuses. Nothing another replica needs lives here: a miss reads the table, and
//! every replica checks its entry against the session row it has just read.
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use crate::message::{Part, StoredMessage};

/// Which view an entry holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ViewKey {
    pub view_epoch: i64,
    pub first_seq: i64,
}

/// The view's messages up to and including `through_seq` (messages a step summary
/// covers are not in it).
#[derive(Debug, Clone)]
pub struct CachedView {
    pub key: ViewKey,
    pub through_seq: i64,
    pub messages: Arc<Vec<StoredMessage>>,
}

/// A session's view as a build reads it: the first `len` messages of a list shared with
/// the replica's cache, so a build that only reads them copies nothing; [`View::to_mut`]
/// gives a build that changes its view a copy of its own.
#[derive(Debug, Clone, Default)]
pub struct View {
    shared: Arc<Vec<StoredMessage>>,
    len: usize,
    owned: Option<Vec<StoredMessage>>,
}

impl View {
    pub(super) fn shared(shared: Arc<Vec<StoredMessage>>, len: usize) -> View {
        View {
            len: len.min(shared.len()),
            shared,
            owned: None,
        }
    }

    /// The messages to change, copied first while they are shared.
    pub fn to_mut(&mut self) -> &mut Vec<StoredMessage> {
        self.owned
            .get_or_insert_with(|| self.shared[..self.len].to_vec())
    }
}

impl From<Vec<StoredMessage>> for View {
    fn from(messages: Vec<StoredMessage>) -> View {
        View {
            owned: Some(messages),
            ..View::default()
        }
    }
}

impl std::ops::Deref for View {
    type Target = [StoredMessage];

    fn deref(&self) -> &[StoredMessage] {
        self.owned.as_deref().unwrap_or(&self.shared[..self.len])
    }
}

/// Least-recently-used entries within a byte budget (an estimate of what the messages
/// take in memory).
#[derive(Debug)]
pub struct ViewCache {
    capacity_bytes: usize,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    entries: HashMap<i64, Entry>,
    /// Last use → session, oldest first.
    recency: BTreeMap<u64, i64>,
    clock: u64,
    bytes: usize,
}

#[derive(Debug)]
struct Entry {
    view: CachedView,
    bytes: usize,
    used: u64,
}

/// What a message costs the cache beyond its text: the struct, the allocations.
const MESSAGE_OVERHEAD_BYTES: usize = 256;
/// What an entry costs beyond its messages (the maps' slots, the key), so even empty
/// views count against the budget.
const ENTRY_OVERHEAD_BYTES: usize = 128;

impl ViewCache {
    /// A cache of at most `capacity_bytes`; 0 turns it off.
    pub fn new(capacity_bytes: usize) -> ViewCache {
        ViewCache {
            capacity_bytes,
            inner: Mutex::new(Inner::default()),
        }
    }

    pub fn enabled(&self) -> bool {
        self.capacity_bytes > 0
    }

    /// The session's entry when it holds `key`'s view.
    pub fn get(&self, session_id: i64, key: ViewKey) -> Option<CachedView> {
        if !self.enabled() {
            return None;
        }
        let mut inner = self.lock();
        inner.clock += 1;
        let now = inner.clock;
        let entry = inner.entries.get_mut(&session_id)?;
        if entry.view.key != key {
            return None;
        }
        let previous = std::mem::replace(&mut entry.used, now);
        let view = entry.view.clone();
        inner.recency.remove(&previous);
        inner.recency.insert(now, session_id);
        Some(view)
    }

    /// Keeps `view` as the session's entry (replacing an older one), evicting the least
    /// recently used entries past the budget. A view larger than a quarter of the budget
    /// is not kept: it would push out many others.
    pub fn put(&self, session_id: i64, view: CachedView) {
        let bytes = view_bytes(&view.messages);
        if !self.enabled() || bytes > self.capacity_bytes / 4 {
            self.remove(session_id);
            return;
        }
        let mut inner = self.lock();
        inner.clock += 1;
        let now = inner.clock;
        if let Some(old) = inner.entries.remove(&session_id) {
            inner.recency.remove(&old.used);
            inner.bytes -= old.bytes;
        }
        inner.entries.insert(
            session_id,
            Entry {
                view,
                bytes,
                used: now,
            },
        );
        inner.recency.insert(now, session_id);
        inner.bytes += bytes;
        while inner.bytes > self.capacity_bytes {
            let Some((_, oldest)) = inner.recency.pop_first() else {
                break;
            };
            if let Some(evicted) = inner.entries.remove(&oldest) {
                inner.bytes -= evicted.bytes;
            }
        }
    }

    pub fn remove(&self, session_id: i64) {
        self.take_entry(session_id);
    }

    /// Removes and returns the session's entry when it holds `key`'s view, so a caller
    /// that extends it can reuse its messages without copying them.
    pub fn take(&self, session_id: i64, key: ViewKey) -> Option<CachedView> {
        if !self.enabled() {
            return None;
        }
        self.take_entry(session_id)
            .map(|entry| entry.view)
            .filter(|view| view.key == key)
    }

    fn take_entry(&self, session_id: i64) -> Option<Entry> {
        let mut inner = self.lock();
        let old = inner.entries.remove(&session_id)?;
        inner.recency.remove(&old.used);
        inner.bytes -= old.bytes;
        Some(old)
    }

    /// Entries and the bytes they are estimated to take.
    pub(super) fn usage(&self) -> (usize, usize) {
        let inner = self.lock();
        (inner.entries.len(), inner.bytes)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // The data stays consistent even if a holder panicked: every update above
        // completes before it could.
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

fn view_bytes(messages: &[StoredMessage]) -> usize {
    ENTRY_OVERHEAD_BYTES
        + messages
            .iter()
            .map(|stored| {
                let m = &stored.message;
                MESSAGE_OVERHEAD_BYTES
                    + m.content.len()
                    + m.reasoning.len()
                    + m.tool_call_id.len()
                    + m.name.len()
                    + m.parts.iter().map(part_bytes).sum::<usize>()
                    + m.tool_calls
                        .iter()
                        .map(|c| c.id.len() + c.name.len() + c.arguments.len() + 64)
                        .sum::<usize>()
                    + m.metadata
                        .iter()
                        .map(|(k, v)| k.len() + v.len() + 48)
                        .sum::<usize>()
            })
            .sum::<usize>()
}

fn part_bytes(part: &Part) -> usize {
    64 + match part {
        Part::Text { text } => text.len(),
        Part::Media { uri, mime_type, .. } => uri.len() + mime_type.len(),
        Part::Native { format, json } => format.len() + json.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{Message, Role, ViewState};

    fn view(epoch: i64, sizes: &[usize]) -> CachedView {
        let messages = sizes
            .iter()
            .enumerate()
            .map(|(index, &size)| StoredMessage {
                seq: index as i64 + 1,
                turn: 1,
                token_count: 1,
                view_tokens: 1,
                view_state: ViewState::Full,
                created_at: chrono::DateTime::UNIX_EPOCH,
                message: Message::text(Role::User, "x".repeat(size)),
            })
            .collect::<Vec<_>>();
        CachedView {
            key: ViewKey {
                view_epoch: epoch,
                first_seq: 1,
            },
            through_seq: sizes.len() as i64,
            messages: Arc::new(messages),
        }
    }

    fn key(epoch: i64) -> ViewKey {
        ViewKey {
            view_epoch: epoch,
            first_seq: 1,
        }
    }

    #[test]
    fn an_entry_serves_only_its_own_view() {
        let cache = ViewCache::new(1 << 20);
        cache.put(7, view(3, &[10, 20]));
        assert_eq!(cache.get(7, key(3)).unwrap().through_seq, 2);
        assert!(cache.get(7, key(4)).is_none(), "another epoch");
        assert!(
            cache
                .get(
                    7,
                    ViewKey {
                        view_epoch: 3,
                        first_seq: 2
                    }
                )
                .is_none(),
            "another first seq"
        );
        assert!(cache.get(8, key(3)).is_none(), "another session");
        // A newer view replaces the entry and its bytes.
        cache.put(7, view(4, &[10]));
        assert!(cache.get(7, key(3)).is_none());
        assert_eq!(
            cache.usage(),
            (1, ENTRY_OVERHEAD_BYTES + MESSAGE_OVERHEAD_BYTES + 10)
        );
    }

    #[test]
    fn the_least_recently_used_go_first_and_the_budget_holds() {
        let one = ENTRY_OVERHEAD_BYTES + MESSAGE_OVERHEAD_BYTES + 1_000;
        let cache = ViewCache::new(4 * one);
        for session in 1..=4 {
            cache.put(session, view(0, &[1_000]));
        }
        // Session 1 is used again, so 2 is now the oldest.
        assert!(cache.get(1, key(0)).is_some());
        cache.put(5, view(0, &[1_000]));
        assert!(cache.get(2, key(0)).is_none());
        for session in [1, 3, 4, 5] {
            assert!(cache.get(session, key(0)).is_some(), "session {session}");
        }
        let (entries, bytes) = cache.usage();
        assert_eq!((entries, bytes), (4, 4 * one));
    }

    #[test]
    fn take_hands_the_entry_over_and_forgets_it() {
        let cache = ViewCache::new(1 << 20);
        cache.put(7, view(3, &[10, 20]));
        let taken = cache.take(7, key(3)).unwrap();
        assert_eq!(taken.through_seq, 2);
        assert_eq!(
            Arc::strong_count(&taken.messages),
            1,
            "the cache let go of it"
        );
        assert!(cache.get(7, key(3)).is_none());
        assert_eq!(cache.usage(), (0, 0));
        // Another view's entry is dropped, not handed over.
        cache.put(7, view(3, &[10]));
        assert!(cache.take(7, key(4)).is_none());
        assert_eq!(cache.usage(), (0, 0));
    }

    #[test]
    fn too_large_a_view_or_a_zero_budget_keeps_nothing() {
        let cache = ViewCache::new(4_000);
        cache.put(1, view(0, &[100]));
        cache.put(1, view(1, &[2_000]));
        assert!(cache.get(1, key(0)).is_none(), "the older entry went too");
        assert!(cache.get(1, key(1)).is_none());
        assert_eq!(cache.usage(), (0, 0));
        let off = ViewCache::new(0);
        off.put(1, view(0, &[1]));
        assert!(off.get(1, key(0)).is_none());
    }
}
