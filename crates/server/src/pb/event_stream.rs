//! `ctxd.v1.SubscribeEventsResponse`, written here instead of generated (build.rs maps
//! the message to this type) so that the server can send a message it encoded before:
//! an event goes to every stream that follows it — 1 000 tenant-wide streams make
//! 1 000 deliveries of each — and is encoded once for all of them
//! (`crate::fanout::SharedEvent`). On the wire it is the proto's message; a unit test
//! holds its fields to the descriptor's.
use bytes::{Buf, BufMut, Bytes};
use prost::encoding::{DecodeContext, WireType};
use prost::{DecodeError, Message};

/// One item of a SubscribeEvents stream.
#[derive(Clone, PartialEq, Default, Debug)]
pub struct SubscribeEventsResponse {
    /// What the message says. None in a message made with
    /// [`SubscribeEventsResponse::encoded`] (the server's: it only sends it).
    pub item: Option<subscribe_events_response::Item>,
    /// The whole message, encoded before; sent as it is.
    encoded: Option<Bytes>,
}

pub mod subscribe_events_response {
    /// The proto's `oneof item`.
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Item {
        #[prost(message, tag = "1")]
        Event(super::super::Event),
        #[prost(message, tag = "2")]
        Heartbeat(super::super::Heartbeat),
    }
}

impl SubscribeEventsResponse {
    pub fn new(item: subscribe_events_response::Item) -> SubscribeEventsResponse {
        SubscribeEventsResponse {
            item: Some(item),
            encoded: None,
        }
    }

    /// A message already encoded: `bytes` must be what encoding a message made with
    /// [`SubscribeEventsResponse::new`] gave (`encode_to_bytes`).
    pub fn encoded(bytes: Bytes) -> SubscribeEventsResponse {
        SubscribeEventsResponse {
            item: None,
            encoded: Some(bytes),
        }
    }

    /// The encoded message, shareable.
    pub fn encode_to_bytes(&self) -> Bytes {
        match &self.encoded {
            Some(bytes) => bytes.clone(),
            None => Bytes::from(self.encode_to_vec()),
        }
    }
}

impl Message for SubscribeEventsResponse {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        match (&self.encoded, &self.item) {
            (Some(bytes), _) => buf.put_slice(bytes),
            (None, Some(item)) => item.encode(buf),
            (None, None) => {}
        }
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        // Merging into an encoded message: what it says first.
        if let Some(encoded) = self.encoded.take() {
            self.item = SubscribeEventsResponse::decode(encoded)?.item;
        }
        match tag {
            1 | 2 => {
                subscribe_events_response::Item::merge(&mut self.item, tag, wire_type, buf, ctx)
                    .map_err(|mut error| {
                        error.push("SubscribeEventsResponse", "item");
                        error
                    })
            }
            _ => prost::encoding::skip_field(wire_type, tag, buf, ctx),
        }
    }

    fn encoded_len(&self) -> usize {
        match (&self.encoded, &self.item) {
            (Some(bytes), _) => bytes.len(),
            (None, Some(item)) => item.encoded_len(),
            (None, None) => 0,
        }
    }

    fn clear(&mut self) {
        self.item = None;
        self.encoded = None;
    }
}

#[cfg(test)]
mod tests {
    use super::subscribe_events_response::Item;
    use super::*;
    use prost_types::field_descriptor_proto::{Label, Type};

    fn event() -> Item {
        Item::Event(crate::pb::Event {
            event_id: 42,
            cursor: "7.42".into(),
            session_id: "s".into(),
            ..Default::default()
        })
    }

    /// The hand-written message has the proto's fields: the same numbers, names, types
    /// and oneof, and no others.
    #[test]
    fn has_the_fields_of_the_proto() {
        let set = prost_types::FileDescriptorSet::decode(crate::pb::FILE_DESCRIPTOR_SET).unwrap();
        let message = set
            .file
            .iter()
            .flat_map(|file| &file.message_type)
            .find(|message| message.name() == "SubscribeEventsResponse")
            .expect("the message is in the proto");
        let fields: Vec<_> = message
            .field
            .iter()
            .map(|field| {
                (
                    field.number(),
                    field.name(),
                    field.r#type(),
                    field.label(),
                    field.type_name(),
                    field.oneof_index,
                )
            })
            .collect();
        assert_eq!(
            fields,
            [
                (
                    1,
                    "event",
                    Type::Message,
                    Label::Optional,
                    ".ctxd.v1.Event",
                    Some(0)
                ),
                (
                    2,
                    "heartbeat",
                    Type::Message,
                    Label::Optional,
                    ".ctxd.v1.Heartbeat",
                    Some(0)
                ),
            ]
        );
        let oneofs: Vec<_> = message.oneof_decl.iter().map(|o| o.name()).collect();
        assert_eq!(oneofs, ["item"]);
    }

    /// An encoded message goes out byte for byte as the message it was made from, and
    /// decodes to it.
    #[test]
    fn an_encoded_message_is_the_message() {
        for item in [
            event(),
            Item::Heartbeat(crate::pb::Heartbeat {
                cursor: "9".into(),
                ..Default::default()
            }),
        ] {
            let message = SubscribeEventsResponse::new(item);
            let bytes = message.encode_to_bytes();
            let encoded = SubscribeEventsResponse::encoded(bytes.clone());
            assert_eq!(encoded.encoded_len(), message.encoded_len());
            assert_eq!(encoded.encode_to_vec(), bytes.to_vec());
            assert_eq!(encoded.encode_to_bytes(), bytes);
            assert_eq!(SubscribeEventsResponse::decode(bytes).unwrap(), message);
        }
    }

    /// Decoding merges like prost's own messages: unknown fields skipped, a later item
    /// replaces an earlier one, a merge into an encoded message keeps what it said.
    #[test]
    fn decodes_as_a_generated_message_would() {
        let mut bytes = SubscribeEventsResponse::new(event()).encode_to_vec();
        // Field 9, varint 1: unknown to this version.
        bytes.extend([0x48, 0x01]);
        assert_eq!(
            SubscribeEventsResponse::decode(&bytes[..]).unwrap(),
            SubscribeEventsResponse::new(event())
        );
        let heartbeat = SubscribeEventsResponse::new(Item::Heartbeat(Default::default()));
        let mut both = bytes.clone();
        both.extend(heartbeat.encode_to_vec());
        assert_eq!(
            SubscribeEventsResponse::decode(&both[..]).unwrap(),
            heartbeat
        );
        let mut merged = SubscribeEventsResponse::encoded(Bytes::from(bytes));
        merged.merge(&[0x48, 0x01][..]).unwrap();
        assert_eq!(merged, SubscribeEventsResponse::new(event()));
        assert!(SubscribeEventsResponse::decode(&[0x0a, 0x05, 0x08][..]).is_err());
    }
}
