//! Conversions between the proto types and the core's, one file per type group;
//! timestamps, which all of them use, are here.
mod events;
mod jobs;
mod ledger;
mod messages;
mod policy;
mod search;
mod session;

use crate::error::{Error, Result};

pub(super) use events::{event_kind_from_pb, item_to_pb};
pub(super) use jobs::job_message;
pub(super) use ledger::{entry_to_pb, notes_from_pb, todos_from_pb};
pub(super) use messages::{
    message_to_pb, messages_from_pb, provider_of, stored_to_pb, tools_from_pb,
};
pub(super) use policy::overrides_from_pb;
pub use policy::tokenizer_to_pb;
pub(super) use search::hit_to_pb;
pub(super) use session::{
    child_to_pb, report_to_pb, session_to_pb, subtree_to_pb, summary_to_pb, with_link,
};

fn timestamp(at: chrono::DateTime<chrono::Utc>) -> prost_types::Timestamp {
    prost_types::Timestamp {
        seconds: at.timestamp(),
        nanos: at.timestamp_subsec_nanos() as i32,
    }
}

pub(in crate::api) fn time_from_pb(
    field: &str,
    at: prost_types::Timestamp,
) -> Result<chrono::DateTime<chrono::Utc>> {
    u32::try_from(at.nanos)
        .ok()
        .and_then(|nanos| chrono::DateTime::from_timestamp(at.seconds, nanos))
        .ok_or_else(|| Error::invalid(field, "is not a valid timestamp"))
}
