//! Events: what ctxd did to a session, written with the change (store/events.rs) and
//! delivered on resumable streams.
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
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use sqlx::postgres::PgListener;
use tokio::sync::{broadcast, mpsc};
use tokio_util::sync::CancellationToken;

use crate::error::{Error, Result, quoted};
use crate::store::{EVENTS_CHANNEL, EventRow, Store};

/// The proto's EventKind numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i16)]
pub enum EventKind {
    CompactionStarted = 1,
    CompactionCompleted = 2,
    CompactionFailed = 3,
    ToolResultsCleared = 4,
    OutputEvicted = 5,
    BudgetThresholdCrossed = 6,
    SessionDeleted = 7,
}

/// The proto's CompactionKind numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactionKind {
    Summarize = 1,
    Fallback = 2,
    Emergency = 3,
}

/// What an event says, stored as JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventDetail {
    CompactionStarted {
        compaction: CompactionKind,
        job_id: i64,
        attempt: i32,
    },
    CompactionCompleted {
        compaction: CompactionKind,
        level: i32,
        tokens_before: i64,
        tokens_after: i64,
        messages_before: i64,
        messages_after: i64,
        first_seq: i64,
        last_seq: i64,
        summary_id: i64,
        summaries_written: i32,
        duration_ms: i64,
        job_id: i64,
    },
    CompactionFailed {
        compaction: CompactionKind,
        error: String,
        job_id: i64,
        attempt: i32,
        will_retry: bool,
    },
    ToolResultsCleared {
        seqs: Vec<i64>,
        tokens_before: i64,
        tokens_after: i64,
    },
    OutputEvicted {
        seq: i64,
        tool_name: String,
        tokens: i64,
        preview_tokens: i64,
    },
    BudgetThresholdCrossed {
        previous_status: i32,
        status: i32,
        used_tokens: i64,
        context_window: i64,
    },
    SessionDeleted,
}

impl EventDetail {
    pub fn kind(&self) -> EventKind {
        match self {
            EventDetail::CompactionStarted { .. } => EventKind::CompactionStarted,
            EventDetail::CompactionCompleted { .. } => EventKind::CompactionCompleted,
            EventDetail::CompactionFailed { .. } => EventKind::CompactionFailed,
            EventDetail::ToolResultsCleared { .. } => EventKind::ToolResultsCleared,
            EventDetail::OutputEvicted { .. } => EventKind::OutputEvicted,
            EventDetail::BudgetThresholdCrossed { .. } => EventKind::BudgetThresholdCrossed,
            EventDetail::SessionDeleted => EventKind::SessionDeleted,
        }
    }
}

/// A place in the (tx, id) order: the writing transaction's id, then the event id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Position {
    pub tx: i64,
    pub id: i64,
}

impl Position {
    pub const START: Position = Position { tx: 0, id: 0 };
}

/// Where a stream stands: a session stream counts the session's seqs, a tenant stream
/// positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cursor {
    Session(i64),
    Tenant(Position),
}

impl Cursor {
    /// The cursor a client passes back: `<seq>` for a session stream, `<tx>.<id>` for a
    /// tenant stream.
    pub fn encode(&self) -> String {
        match self {
            Cursor::Session(seq) => seq.to_string(),
            Cursor::Tenant(position) => format!("{}.{}", position.tx, position.id),
        }
    }

    /// Parses `after` for a session stream (`session` true) or a tenant stream.
    pub fn parse(after: &str, session: bool) -> Result<Cursor> {
        let number = |text: &str| text.parse::<i64>().ok().filter(|n| *n >= 0);
        match (session, after.split_once('.')) {
            (true, None) => number(after).map(Cursor::Session).ok_or_else(|| {
                Error::invalid(
                    "after",
                    format!("{} is not a cursor of a session's stream (an event's `cursor`, e.g. \"12\")", quoted(after)),
                )
            }),
            (false, Some((tx, id))) => match (number(tx), number(id)) {
                (Some(tx), Some(id)) => Ok(Cursor::Tenant(Position { tx, id })),
                _ => Err(Error::invalid(
                    "after",
                    format!("{} is not a cursor of a tenant stream (an event's `cursor`)", quoted(after)),
                )),
            },
            (true, Some(_)) => Err(Error::invalid(
                "after",
                "is a tenant stream's cursor; a session stream resumes from a cursor it delivered",
            )),
            (false, None) => Err(Error::invalid(
                "after",
                "is a session stream's cursor; a tenant stream (no session_id) resumes from a cursor it delivered",
            )),
        }
    }
}

/// The hub's settings.
#[derive(Debug, Clone)]
pub struct EventsConfig {
    /// How long events are kept.
    pub retention: Duration,
    /// How often the hub looks for events without a notification (a listener that was
    /// reconnecting misses them).
    pub poll_interval: Duration,
    /// Events the broadcast holds for a slow subscriber before it must re-read the table.
    pub buffer: usize,
}

impl Default for EventsConfig {
    fn default() -> EventsConfig {
        EventsConfig {
            retention: Duration::from_secs(7 * 86_400),
            poll_interval: Duration::from_secs(1),
            buffer: 4096,
        }
    }
}

/// Rows read per statement.
const PAGE: i64 = 500;

/// An event as the hub fans it out, and whether it is settled (below the horizon).
pub type Broadcast = (Arc<EventRow>, bool);

/// The replica's event fan-out.
pub struct Hub {
    store: Store,
    sender: broadcast::Sender<Broadcast>,
    shutdown: CancellationToken,
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
            match PgListener::connect_with(hub.store.pool()).await {
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
                            let _ = hub.sender.send((Arc::new(row), true));
                        } else {
                            held = true;
                            if early.insert(row.id) {
                                let _ = hub.sender.send((Arc::new(row), false));
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
                Some(l) => match l.recv().await {
                    Ok(_) => {
                        // Coalesce a burst: one read serves every notification queued.
                        while l.next_buffered().is_some() {}
                        true
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

/// Deletes events past the retention, every few minutes (at most an hour apart).
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
    }
}

/// What one stream follows.
#[derive(Debug, Clone)]
pub struct Subscription {
    pub tenant_id: i64,
    /// sessions.id of a session stream; None for the tenant's.
    pub session_id: Option<i64>,
    /// Kinds delivered (empty: all).
    pub kinds: Vec<EventKind>,
    pub cursor: Cursor,
    pub heartbeat: Duration,
}

/// One item of a stream.
#[derive(Debug)]
pub enum Item {
    Event(Arc<EventRow>, Cursor),
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
            let (oldest, newest) = store.session_event_bounds(session_id).await?;
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
    row: Arc<EventRow>,
    out: &mpsc::Sender<Item>,
    ended: &mut bool,
) -> bool {
    let kind = row.detail.0.kind();
    if subscription.session_id.is_some() && kind == EventKind::SessionDeleted {
        *ended = true;
    }
    if !subscription.kinds.is_empty() && !subscription.kinds.contains(&kind) {
        return true;
    }
    out.send(Item::Event(row, subscription.cursor))
        .await
        .is_ok()
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
        let rows: Vec<EventRow> = match (subscription.cursor, subscription.session_id) {
            (Cursor::Session(seq), Some(session_id)) => {
                store.session_events(session_id, seq, PAGE).await?
            }
            (Cursor::Tenant(position), None) => store
                .events_after(Some(subscription.tenant_id), position, PAGE)
                .await?
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
            if !deliver(subscription, Arc::new(row), out, ended).await || *ended {
                return Ok(());
            }
        }
        if count < PAGE {
            return Ok(());
        }
    }
}

/// A SubscribeEvents request, validated by [`open`].
#[derive(Debug, Clone)]
pub struct SubscribeRequest {
    /// Empty: every session of the tenant.
    pub session_id: String,
    pub kinds: Vec<EventKind>,
    pub after: String,
    pub from_now: bool,
    /// 0: the default.
    pub heartbeat_interval_ms: u32,
}

/// Heartbeat interval when the request does not say, and the bounds it may ask for.
const DEFAULT_HEARTBEAT_MS: u32 = 15_000;
const MIN_HEARTBEAT_MS: u32 = 100;
const MAX_HEARTBEAT_MS: u32 = 600_000;

/// Checks a request and says where its stream starts.
pub async fn open(
    engine: &crate::engine::Engine,
    tenant_id: i64,
    request: SubscribeRequest,
) -> Result<Subscription> {
    let heartbeat_ms = match request.heartbeat_interval_ms {
        0 => DEFAULT_HEARTBEAT_MS,
        ms if (MIN_HEARTBEAT_MS..=MAX_HEARTBEAT_MS).contains(&ms) => ms,
        ms => {
            return Err(Error::invalid(
                "heartbeat_interval_ms",
                format!(
                    "must be 0 (default {DEFAULT_HEARTBEAT_MS}) or between {MIN_HEARTBEAT_MS} and {MAX_HEARTBEAT_MS}, got {ms}"
                ),
            ));
        }
    };
    if request.from_now && !request.after.is_empty() {
        return Err(Error::invalid(
            "from_now",
            "cannot be combined with after: resume from a cursor, or start from now",
        ));
    }
    let session = if request.session_id.is_empty() {
        None
    } else {
        crate::engine::validate_session_id(&request.session_id)?;
        let row = engine
            .get_session(tenant_id, &request.session_id)
            .await?
            .row;
        Some((row.id, row.event_seq))
    };
    let store = engine.store();
    let cursor = if request.from_now {
        current_cursor(store, tenant_id, session).await?
    } else if request.after.is_empty() {
        match session {
            Some(_) => Cursor::Session(0),
            None => Cursor::Tenant(Position::START),
        }
    } else {
        Cursor::parse(&request.after, session.is_some())?
    };
    let subscription = Subscription {
        tenant_id,
        session_id: session.map(|(id, _)| id),
        kinds: request.kinds,
        cursor,
        heartbeat: Duration::from_millis(u64::from(heartbeat_ms)),
    };
    if !request.after.is_empty() {
        check_retained(store, &subscription).await?;
    }
    Ok(subscription)
}
