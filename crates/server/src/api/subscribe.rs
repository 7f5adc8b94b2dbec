//! SubscribeEvents: the kinds filter, opening the subscription, the stream task.

use tokio_stream::StreamExt as _;
use tracing::Instrument;

use super::convert::{event_kind_from_pb, item_to_pb};
use super::{ContextApi, EventStream};
use crate::engine::SubscribeRequest;
use crate::error::{Error, Result};
use crate::fanout;
use crate::pb;

pub(super) async fn subscribe_events(
    api: &ContextApi,
    tenant: i64,
    req: pb::SubscribeEventsRequest,
) -> Result<EventStream> {
    let kinds = req
        .kinds
        .iter()
        .enumerate()
        .map(|(index, &kind)| {
            event_kind_from_pb(kind).ok_or_else(|| {
                Error::invalid(
                    format!("kinds[{index}]"),
                    format!("{kind} is not an event kind (1 to 10)"),
                )
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let subscription = api
        .engine
        .subscribe(
            tenant,
            SubscribeRequest {
                session_id: req.session_id,
                tree_root_session_id: req.tree_root_session_id,
                kinds,
                after: req.after,
                from_now: req.from_now,
                heartbeat_interval_ms: req.heartbeat_interval_ms,
            },
        )
        .await?;
    let (sender, receiver) = tokio::sync::mpsc::channel(64);
    tokio::spawn(
        fanout::stream(api.hub.clone(), subscription, sender).instrument(tracing::Span::current()),
    );
    let stream = tokio_stream::wrappers::ReceiverStream::new(receiver).map(item_to_pb);
    Ok(Box::pin(stream) as EventStream)
}
