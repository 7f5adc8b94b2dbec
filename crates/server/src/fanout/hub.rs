//! The replica's event fan-out: LISTENs for commits, broadcasts the new events in
//! (tx, id) order, and prunes events past their retention.
use std::sync::Arc;
use std::time::Duration;

use sqlx::postgres::PgListener;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use super::shared::SharedEvent;
use crate::events::EventsConfig;
use crate::store::{EVENTS_CHANNEL, Store};

/// Rows read per statement.
pub(super) const PAGE: i64 = 500;

/// An event as the hub fans it out, and whether it is settled (below the horizon).
pub type Broadcast = (Arc<SharedEvent>, bool);

/// The replica's event fan-out.
pub struct Hub {
    pub(super) store: Store,
    sender: broadcast::Sender<Broadcast>,
    pub(super) shutdown: CancellationToken,
}

impl Hub {
    /// Starts the listener and the pruning sweep; both stop with `shutdown`.
    pub fn start(store: Store, config: EventsConfig, shutdown: CancellationToken) -> Arc<Hub> {
        let (sender, _) = broadcast::channel(config.buffer.max(16));
        let hub = Arc::new(Hub {
            store,
            sender,
            shutdown,
        });
        tokio::spawn(listen(hub.clone(), config.poll_interval));
        tokio::spawn(prune(hub.clone(), config.retention));
        hub
    }

    /// Every event committed from now on, for one subscriber: settled copies in (tx, id)
    /// order, unsettled ones as soon as they are seen.
    pub fn subscribe(&self) -> broadcast::Receiver<Broadcast> {
        self.sender.subscribe()
    }
}

/// LISTENs for event commits and broadcasts the new rows once each, in (tx, id) order,
/// holding back rows above the visibility horizon until it moves.
async fn listen(hub: Arc<Hub>, poll_interval: Duration) {
    let mut cursor = loop {
        match hub.store.events_horizon(None).await {
            Ok(position) => break position,
            Err(error) => {
                tracing::warn!(%error, "event hub cannot read the events table; retrying");
                tokio::select! {
                    () = hub.shutdown.cancelled() => return,
                    () = tokio::time::sleep(poll_interval) => {}
                }
            }
        }
    };
    let mut listener: Option<PgListener> = None;
    // Rows broadcast before they settled (their settled copy follows).
    let mut early: std::collections::HashSet<i64> = std::collections::HashSet::new();
    // Rows above the horizon: look again soon, backing off while it stays.
    let mut held_retry = Duration::ZERO;
    loop {
        if listener.is_none() {
            match hub.store.listener().await {
                Ok(mut connected) => match connected.listen(EVENTS_CHANNEL).await {
                    Ok(()) => listener = Some(connected),
                    Err(error) => tracing::warn!(%error, "event hub cannot LISTEN; polling"),
                },
                Err(error) => tracing::warn!(%error, "event hub cannot connect; polling"),
            }
        }
        // Read everything visible now (also right after (re)connecting).
        let mut held = false;
        loop {
            match hub.store.events_after(None, cursor, PAGE).await {
                Ok(rows) => {
                    let full = rows.len() as i64 == PAGE;
                    // Settled rows come first (the order is by tx); no receiver is fine.
                    for (row, settled) in rows {
                        if settled {
                            cursor = row.position();
                            early.remove(&row.id);
                            let _ = hub.sender.send((Arc::new(SharedEvent::new(row)), true));
                        } else {
                            held = true;
                            if early.insert(row.id) {
                                let _ = hub.sender.send((Arc::new(SharedEvent::new(row)), false));
                            }
                        }
                    }
                    if held || !full {
                        break;
                    }
                }
                Err(error) => {
                    tracing::warn!(%error, "event hub cannot read new events; retrying");
                    break;
                }
            }
        }
        let wait = if held {
            held_retry =
                (held_retry * 2).clamp(Duration::from_millis(2), Duration::from_millis(100));
            held_retry
        } else {
            held_retry = Duration::ZERO;
            poll_interval
        };
        let notified = async {
            match listener.as_mut() {
                Some(l) => match l.try_recv().await {
                    Ok(Some(_)) => {
                        // Coalesce a burst: one read serves every notification queued.
                        while l.next_buffered().is_some() {}
                        true
                    }
                    Ok(None) => {
                        tracing::warn!("event hub lost its connection; reconnecting");
                        false
                    }
                    Err(error) => {
                        tracing::warn!(%error, "event hub lost its connection; reconnecting");
                        false
                    }
                },
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = hub.shutdown.cancelled() => return,
            ok = notified => if !ok { listener = None; },
            () = tokio::time::sleep(wait) => {}
        }
    }
}

/// Deletes events past the retention, every few minutes (at most an hour apart), and
/// then the tree links nothing refers to any more.
async fn prune(hub: Arc<Hub>, retention: Duration) {
    let every = (retention / 10).clamp(Duration::from_secs(1), Duration::from_secs(3600));
    loop {
        tokio::select! {
            () = hub.shutdown.cancelled() => return,
            () = tokio::time::sleep(every) => {}
        }
        match hub.store.prune_events(retention).await {
            Ok(0) => {}
            Ok(pruned) => tracing::info!(pruned, "pruned events past their retention"),
            Err(error) => tracing::warn!(%error, "pruning events failed"),
        }
        // Then the tree links of deleted sessions whose last events just went.
        match hub.store.prune_links().await {
            Ok(0) => {}
            Ok(pruned) => tracing::info!(pruned, "pruned the tree links of deleted sessions"),
            Err(error) => tracing::warn!(%error, "pruning tree links failed"),
        }
    }
}
