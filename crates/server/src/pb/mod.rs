//! Generated protocol types, client and server; one message written by hand
//! ([`SubscribeEventsResponse`], see its module).
#![allow(clippy::all, missing_docs)]
tonic::include_proto!("ctxd.v1");

mod event_stream;

pub use event_stream::{SubscribeEventsResponse, subscribe_events_response};

/// The encoded descriptor set of proto/, served by reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/ctxd_descriptor.bin"));
