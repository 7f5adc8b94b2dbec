//! `sessions/{id}/live?after=CURSOR`: one session's events as they commit, from the same
//! subscription SubscribeEvents serves (the backlog after the cursor first, then live),
//! as JSON lines — `{"event": …}` in the history's shape (its `seq` is the cursor to
//! resume after), and every second `{"heartbeat": {"cursor", "version", "messages"}}`
//! with the session's version, so the page shows new messages as well. The page reads
//! it with fetch (it sends the key as a header, which EventSource cannot) and, when the
//! stream breaks, opens it again after the last cursor it saw.
use std::time::Duration;

use bytes::Bytes;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::Console;
use super::api::event_json;
use super::query::Query;
use crate::engine::SubscribeRequest;
use crate::error::Result;
use crate::fanout::{self, Item};

/// How often a quiet stream says where it is and the session's version.
const HEARTBEAT: Duration = Duration::from_secs(1);
/// Lines buffered for a slow reader before the stream waits for it.
const BUFFERED_LINES: usize = 64;

/// Opens the stream: errors in the request (an unknown session, a bad or expired cursor)
/// are answered before any line.
pub(super) async fn open(
    console: &Console,
    tenant: i64,
    id: &str,
    query: &Query<'_>,
) -> Result<mpsc::Receiver<Bytes>> {
    let after = query.text("after")?.unwrap_or("").to_string();
    let subscription = console
        .engine
        .subscribe(
            tenant,
            SubscribeRequest {
                session_id: id.to_string(),
                tree_root_session_id: String::new(),
                kinds: Vec::new(),
                after,
                from_now: false,
                heartbeat_interval_ms: HEARTBEAT.as_millis() as u32,
            },
        )
        .await?;
    let (items, mut from_hub) = mpsc::channel(BUFFERED_LINES);
    tokio::spawn(fanout::stream(console.hub.clone(), subscription, items));
    let (lines, out) = mpsc::channel(BUFFERED_LINES);
    let engine = console.engine.clone();
    let id = id.to_string();
    tokio::spawn(async move {
        while let Some(item) = from_hub.recv().await {
            let Some(line) = line_of(&engine, tenant, &id, item).await else {
                break;
            };
            let mut bytes = line.to_string().into_bytes();
            bytes.push(b'\n');
            // The page went away: stop (the hub's task ends with its channel).
            if lines.send(Bytes::from(bytes)).await.is_err() {
                break;
            }
        }
    });
    Ok(out)
}

/// The line for one item of the subscription; None ends the stream (shutting down, a
/// failed read, the session gone).
async fn line_of(
    engine: &crate::engine::Engine,
    tenant: i64,
    id: &str,
    item: Item,
) -> Option<Value> {
    match item {
        Item::Event(event, _) => Some(json!({"event": event_json(&event)})),
        Item::Heartbeat(cursor) => {
            let row = engine.get_session(tenant, id).await.ok()?.row;
            Some(json!({"heartbeat": {
                "cursor": cursor.encode(),
                "version": row.version,
                "messages": row.message_count,
            }}))
        }
        Item::ShuttingDown | Item::Failed(_) => None,
    }
}
