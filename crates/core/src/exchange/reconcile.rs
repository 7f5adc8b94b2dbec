//! Which of a request's messages are new: the client sends its whole history each time;
//! what the session already holds is recognised by fingerprint.
//!
//! A fingerprint covers what the client's history says of a message: its role, text,
//! parts, tool calls and the call it answers. Reasoning and provider metadata are left
//! out: a client may drop earlier thinking from what it replays, and that is not a
//! rewrite of the conversation.
use sha2::{Digest, Sha256};

use crate::message::{Message, Part};

pub type Fingerprint = [u8; 32];

/// How a request's history stands to the stored session's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reconciled {
    /// The stored messages are its start: its messages from `new_from` on are new.
    Extends { new_from: usize },
    /// It differs from the stored history at `at` (or stops short of it): the first `at`
    /// messages are shared, the rest of the request is another branch.
    Diverges { at: usize },
}

pub fn fingerprint(message: &Message) -> Fingerprint {
    let mut hash = Sha256::new();
    let mut field = |bytes: &[u8]| {
        hash.update((bytes.len() as u64).to_le_bytes());
        hash.update(bytes);
    };
    field(&[message.role as u8]);
    field(message.content.as_bytes());
    for part in &message.parts {
        match part {
            Part::Text { text } => {
                field(b"text");
                field(text.as_bytes());
            }
            Part::Media { uri, mime_type, .. } => {
                field(b"media");
                field(uri.as_bytes());
                field(mime_type.as_bytes());
            }
            Part::Native { format, json } => {
                field(b"native");
                field(format.as_bytes());
                field(canonical_arguments(json).as_bytes());
            }
        }
    }
    for call in &message.tool_calls {
        field(b"call");
        field(call.id.as_bytes());
        field(call.name.as_bytes());
        field(canonical_arguments(&call.arguments).as_bytes());
    }
    field(message.tool_call_id.as_bytes());
    hash.finalize().into()
}

/// Arguments as JSON in one spelling (keys sorted, no spaces), so a call read from a
/// response and the same call replayed by the client agree.
fn canonical_arguments(arguments: &str) -> String {
    serde_json::from_str::<serde_json::Value>(arguments)
        .map_or_else(|_| arguments.to_string(), |value| value.to_string())
}

/// One digest of a whole sequence of fingerprints, in order.
pub fn chain(fingerprints: &[Fingerprint]) -> Fingerprint {
    let mut hash = Sha256::new();
    hash.update((fingerprints.len() as u64).to_le_bytes());
    for fingerprint in fingerprints {
        hash.update(fingerprint);
    }
    hash.finalize().into()
}

/// How `incoming` (a request's history) stands to `stored` (the session's).
pub fn reconcile(stored: &[Fingerprint], incoming: &[Fingerprint]) -> Reconciled {
    let shared = stored
        .iter()
        .zip(incoming)
        .take_while(|(a, b)| a == b)
        .count();
    if shared == stored.len() {
        Reconciled::Extends { new_from: shared }
    } else {
        Reconciled::Diverges { at: shared }
    }
}
