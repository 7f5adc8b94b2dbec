//! SubscribeEvents, opened: the request checked and the stream's start found (a cursor
//! to resume from, the start, or now). Delivery is the events module's.
use std::time::Duration;

use super::{Engine, validate_session_id};
use crate::error::{Error, Result};
use crate::events::{Cursor, EventKind, Position};
use crate::fanout::{Subscription, check_retained, current_cursor};

/// A SubscribeEvents request, validated by [`Engine::subscribe`].
#[derive(Debug, Clone)]
pub struct SubscribeRequest {
    /// Empty: every session of the tenant.
    pub session_id: String,
    /// Non-empty: only this session and its descendants (not with `session_id`).
    pub tree_root_session_id: String,
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

impl Engine {
    /// Checks a SubscribeEvents request and says where its stream starts; the stream
    /// itself is `events::stream`, fed by the replica's hub.
    pub async fn subscribe(
        &self,
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
        let tree_root = self
            .tree_root(
                tenant_id,
                &request.tree_root_session_id,
                !request.session_id.is_empty(),
            )
            .await?;
        let session = if request.session_id.is_empty() {
            None
        } else {
            validate_session_id(&request.session_id)?;
            let row = self.get_session(tenant_id, &request.session_id).await?.row;
            Some((row.id, row.event_seq))
        };
        let store = self.store();
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
            tree_root,
            kinds: request.kinds,
            cursor,
            heartbeat: Duration::from_millis(u64::from(heartbeat_ms)),
        };
        if !request.after.is_empty() {
            check_retained(store, &subscription).await?;
        }
        Ok(subscription)
    }
}
