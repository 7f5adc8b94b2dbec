//! An event as the hub broadcasts it to every stream of the replica: the row, and its
//! message as the first stream to send it encoded it, kept for the others.
use std::sync::OnceLock;

use bytes::Bytes;

use crate::events::{Cursor, Event};

/// One event, shared by the streams that deliver it. A stream's message of an event
/// depends only on the event and the stream's cursor after it, which is the event's
/// seq on a session stream and its position on a tenant stream: one encoding serves
/// every stream of a kind.
#[derive(Debug)]
pub struct SharedEvent {
    event: Event,
    session_stream: OnceLock<(Cursor, Bytes)>,
    tenant_stream: OnceLock<(Cursor, Bytes)>,
}

impl SharedEvent {
    pub fn new(event: Event) -> SharedEvent {
        SharedEvent {
            event,
            session_stream: OnceLock::new(),
            tenant_stream: OnceLock::new(),
        }
    }

    /// The message of this event for a stream now at `cursor`: the one encoded before
    /// for the same cursor, or `encode`'s (then kept).
    pub fn encoded(&self, cursor: Cursor, encode: impl FnOnce() -> Bytes) -> Bytes {
        let slot = match cursor {
            Cursor::Session(_) => &self.session_stream,
            Cursor::Tenant(_) => &self.tenant_stream,
        };
        if let Some((at, bytes)) = slot.get()
            && *at == cursor
        {
            return bytes.clone();
        }
        let bytes = encode();
        // Another stream may have been first; either encoding is the same.
        let _ = slot.set((cursor, bytes.clone()));
        bytes
    }
}

impl std::ops::Deref for SharedEvent {
    type Target = Event;

    fn deref(&self) -> &Event {
        &self.event
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::{EventDetail, Position};

    fn event() -> Event {
        Event {
            id: 5,
            tenant_id: 1,
            session_id: 2,
            external_id: "s".into(),
            session_seq: 3,
            tx: 9,
            kind: 0,
            session_version: 4,
            detail: EventDetail::SessionDeleted,
            created_at: chrono::Utc::now(),
        }
    }

    #[test]
    fn encodes_once_per_cursor() {
        let shared = SharedEvent::new(event());
        let session = Cursor::Session(3);
        let tenant = Cursor::Tenant(Position { tx: 9, id: 5 });
        assert_eq!(shared.encoded(session, || Bytes::from("s")), "s");
        assert_eq!(shared.encoded(session, || unreachable!()), "s");
        assert_eq!(shared.encoded(tenant, || Bytes::from("t")), "t");
        assert_eq!(shared.encoded(tenant, || unreachable!()), "t");
        // Another cursor of the same kind is not served the kept bytes.
        assert_eq!(shared.encoded(Cursor::Session(4), || Bytes::from("x")), "x");
        assert_eq!(shared.encoded(session, || unreachable!()), "s");
        assert_eq!(shared.session_seq, 3);
    }
}
