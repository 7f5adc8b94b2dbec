//! SubscribeEvents: one stream's backlog from the table, then the hub's broadcast.
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{broadcast, mpsc};

use super::hub::{Hub, PAGE};
use super::shared::SharedEvent;
use crate::error::{Error, Result};
use crate::events::Event;
use crate::events::{Cursor, EventKind};
use crate::metrics::metrics;
use crate::store::Store;

/// What one stream follows.
#[derive(Debug, Clone)]
pub struct Subscription {
    pub tenant_id: i64,
    /// sessions.id of a session stream; None for the tenant's.
    pub session_id: Option<i64>,
    /// A tenant stream of one tree: sessions.id of its root (the stream has the root's
    /// events and its descendants', deleted ones included).
    pub tree_root: Option<i64>,
    /// Kinds delivered (empty: all).
    pub kinds: Vec<EventKind>,
    pub cursor: Cursor,
    pub heartbeat: Duration,
}

/// One item of a stream.
#[derive(Debug)]
pub enum Item {
    Event(Arc<SharedEvent>, Cursor),
    /// The stream's position (resuming from it skips nothing undelivered).
    Heartbeat(Cursor),
    /// The server is shutting down: the stream ends (the client resumes elsewhere).
    ShuttingDown,
    /// Reading the events failed: the stream ends with the error.
    Failed(Error),
}

/// Where a subscription starts when it asks for events from now on.
pub async fn current_cursor(
    store: &Store,
    tenant_id: i64,
    session: Option<(i64, i64)>,
) -> Result<Cursor> {
    Ok(match session {
        Some((_, event_seq)) => Cursor::Session(event_seq),
        None => Cursor::Tenant(store.events_horizon(Some(tenant_id)).await?),
    })
}

/// OUT_OF_RANGE when events after `cursor` were pruned: resuming would miss them.
pub async fn check_retained(store: &Store, subscription: &Subscription) -> Result<()> {
    let lost = match (subscription.cursor, subscription.session_id) {
        (Cursor::Session(after), Some(session_id)) => {
            let (oldest, newest) = store
                .session_event_bounds(subscription.tenant_id, session_id)
                .await?;
            match oldest {
                Some(oldest) => oldest > after + 1,
                None => newest > after,
            }
        }
        (Cursor::Tenant(after), None) => store.events_pruned(subscription.tenant_id).await? > after,
        _ => false,
    };
    if lost {
        return Err(Error::OutOfRange(format!(
            "after: events after cursor {:?} are past the events retention and were pruned; subscribe without `after` (oldest kept) or with from_now",
            subscription.cursor.encode()
        )));
    }
    Ok(())
}

/// Runs one stream until the client goes away, the server shuts down or (a session
/// stream) the session is deleted, or reading fails (sent as the stream's last item).
pub async fn stream(hub: Arc<Hub>, subscription: Subscription, out: mpsc::Sender<Item>) {
    let ending = match run(hub, subscription, out.clone()).await {
        Ok(true) => Some(Item::ShuttingDown),
        Ok(false) => None,
        Err(error) => Some(Item::Failed(error)),
    };
    if let Some(item) = ending {
        let _ = out.send(item).await;
    }
}

/// Backlog, a heartbeat, then live. True when it stopped for the server's shutdown.
async fn run(
    hub: Arc<Hub>,
    mut subscription: Subscription,
    out: mpsc::Sender<Item>,
) -> Result<bool> {
    // Subscribed before the backlog is read: nothing committed in between is missed.
    let mut live = hub.subscribe();
    let mut members = Members::default();
    let mut ended = false;
    backlog(&hub.store, &mut subscription, &out, &mut ended).await?;
    if ended
        || out
            .send(Item::Heartbeat(subscription.cursor))
            .await
            .is_err()
    {
        return Ok(false);
    }
    let mut beat = tokio::time::interval_at(
        tokio::time::Instant::now() + subscription.heartbeat,
        subscription.heartbeat,
    );
    beat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = hub.shutdown.cancelled() => return Ok(true),
            () = out.closed() => return Ok(false),
            _ = beat.tick() => {
                if out.send(Item::Heartbeat(subscription.cursor)).await.is_err() {
                    return Ok(false);
                }
            }
            received = live.recv() => match received {
                Ok((row, settled)) => {
                    if row.tenant_id != subscription.tenant_id
                        || (subscription.session_id.is_none() && !settled)
                        || subscription.session_id.is_some_and(|id| id != row.session_id)
                    {
                        continue;
                    }
                    if let Some(root) = subscription.tree_root
                        && !members
                            .contains(&hub.store, row.tenant_id, root, row.session_id)
                            .await?
                    {
                        continue;
                    }
                    let next = match subscription.cursor {
                        Cursor::Session(seq) if row.session_seq <= seq => continue,
                        // A seq gap: the broadcast's order (tx, id) can differ from the
                        // session's; the table has them in seq order.
                        Cursor::Session(seq) if row.session_seq > seq + 1 => None,
                        Cursor::Session(_) => Some(Cursor::Session(row.session_seq)),
                        Cursor::Tenant(position) if row.position() <= position => continue,
                        Cursor::Tenant(_) => Some(Cursor::Tenant(row.position())),
                    };
                    match next {
                        Some(cursor) => {
                            subscription.cursor = cursor;
                            if !deliver(&subscription, row, &out, &mut ended).await {
                                return Ok(false);
                            }
                        }
                        None => backlog(&hub.store, &mut subscription, &out, &mut ended).await?,
                    }
                    beat.reset();
                }
                // Fell behind the broadcast's buffer: the table has everything.
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    backlog(&hub.store, &mut subscription, &out, &mut ended).await?;
                }
                Err(broadcast::error::RecvError::Closed) => return Ok(true),
            },
        }
        if ended {
            return Ok(false);
        }
    }
}

/// Sends an event unless the kind filter skips it; false when the client is gone. A
/// session stream ends after its session's deletion.
async fn deliver(
    subscription: &Subscription,
    row: Arc<SharedEvent>,
    out: &mpsc::Sender<Item>,
    ended: &mut bool,
) -> bool {
    let kind = row.detail.kind();
    if subscription.session_id.is_some() && kind == EventKind::SessionDeleted {
        *ended = true;
    }
    if !subscription.kinds.is_empty() && !subscription.kinds.contains(&kind) {
        return true;
    }
    let lag = (chrono::Utc::now() - row.created_at)
        .to_std()
        .unwrap_or_default();
    let sent = out
        .send(Item::Event(row, subscription.cursor))
        .await
        .is_ok();
    if sent {
        metrics().event_delivered(lag);
    }
    sent
}

/// Delivers everything after the cursor the table has (below the horizon, for a tenant
/// stream).
async fn backlog(
    store: &Store,
    subscription: &mut Subscription,
    out: &mpsc::Sender<Item>,
    ended: &mut bool,
) -> Result<()> {
    loop {
        let rows: Vec<Event> = match (subscription.cursor, subscription.session_id) {
            (Cursor::Session(seq), Some(session_id)) => {
                store
                    .session_events(subscription.tenant_id, session_id, seq, PAGE)
                    .await?
            }
            (Cursor::Tenant(position), None) => match subscription.tree_root {
                None => {
                    store
                        .events_after(Some(subscription.tenant_id), position, PAGE)
                        .await?
                }
                Some(root) => {
                    store
                        .tree_events_after(subscription.tenant_id, root, position, PAGE)
                        .await?
                }
            }
            .into_iter()
            .take_while(|(_, visible)| *visible)
            .map(|(row, _)| row)
            .collect(),
            _ => {
                return Err(Error::internal(
                    "a stream's cursor does not match its scope",
                ));
            }
        };
        let count = rows.len() as i64;
        for row in rows {
            subscription.cursor = match subscription.cursor {
                Cursor::Session(_) => Cursor::Session(row.session_seq),
                Cursor::Tenant(_) => Cursor::Tenant(row.position()),
            };
            if !deliver(subscription, Arc::new(SharedEvent::new(row)), out, ended).await || *ended {
                return Ok(());
            }
        }
        if count < PAGE {
            return Ok(());
        }
    }
}

/// Which sessions a tree stream's root holds, as the stream has looked them up. A
/// session's ancestors are fixed when it is created (its link never changes), so an
/// answer, either way, stays true: each session is looked up once per stream.
#[derive(Debug, Default)]
struct Members {
    known: std::collections::HashMap<i64, bool>,
}

/// Sessions a stream remembers before it starts over (a lookup is one indexed read).
const MEMBERS_REMEMBERED: usize = 65_536;

impl Members {
    async fn contains(
        &mut self,
        store: &Store,
        tenant_id: i64,
        root: i64,
        session_id: i64,
    ) -> Result<bool> {
        if let Some(&member) = self.known.get(&session_id) {
            return Ok(member);
        }
        let member = session_id == root
            || crate::tree::in_tree(
                root,
                session_id,
                &store.ancestors(tenant_id, session_id).await?,
            );
        if self.known.len() >= MEMBERS_REMEMBERED {
            self.known.clear();
        }
        self.known.insert(session_id, member);
        Ok(member)
    }
}
