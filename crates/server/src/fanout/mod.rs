//! Fan-out: events (what ctxd did to a session, the core's `events`, written with the
//! change by store/events.rs) delivered to subscribers on resumable streams.
//!
//! One [`Hub`] per replica LISTENs for commits, reads the new events in (tx, id) order
//! and broadcasts each as soon as it is visible, and again once it is *settled* (below
//! the visibility horizon: no transaction that could still commit an earlier position
//! is running). Session streams take the first copy (their seqs say what is missing);
//! tenant streams only settled ones. A subscriber reads its backlog from the table
//! first (subscribed to the broadcast before, so nothing falls between), then follows
//! the broadcast; when it lags behind the broadcast's buffer, or a session stream sees
//! a seq gap, it re-reads the table from its cursor. The table is the truth; the
//! broadcast only saves the reads.
//!
//! The parts, one way: the core's `events` (what an event says, cursors, settings: pure,
//! used by the store and the engine directly) ← `hub` (the replica's LISTEN and
//! fan-out, over the store) ← `subscribe` (one stream: backlog, then broadcast). The
//! engine opens a subscription (`engine/subscribe.rs`) and the API runs its stream.
mod hub;
mod shared;
mod subscribe;

pub use hub::{Broadcast, Hub};
pub use shared::SharedEvent;
pub use subscribe::{Item, Subscription, check_retained, current_cursor, stream};
