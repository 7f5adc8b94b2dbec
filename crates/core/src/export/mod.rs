//! A session as a file: ExportSession writes it, ImportSession reads it back, on the same
//! server or another (`docs/api.md`, "Export and import").
//!
//! JSON lines, one record each, in this order: a `header` naming the format and its
//! version; the `session` (its id, policy, metadata and the state a build reads); every
//! `message` of its log with its view state in this session; the `summary` records it
//! sees (the trees under its active summaries, and those a revert took out of its view);
//! its `ledger` entries; an `end` record counting the records before it and carrying the
//! SHA-256 of every byte before it. The record types are this module's; a change to
//! them that an older reader would misread is a new [`VERSION`].
//!
//! Reading ([`read()`]) checks every record before anything is written: the format and
//! version, each message as an append would check it, the tool calls against their
//! results, the summaries' spans and tree, the ledger's kinds, the session's totals
//! against its messages and summaries, and the digest.
mod read;
mod records;

use sha2::{Digest, Sha256};

pub use read::{Import, Limits, read};
pub use records::{LedgerRecord, MessageRecord, SessionRecord, State, SummaryRecord};

use records::{End, Header, Record};

/// The format's name, in the header.
pub const FORMAT: &str = "ctxd.session";
/// The version this build writes and reads.
pub const VERSION: u32 = 1;

/// A session as the file holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    pub session: SessionRecord,
    pub messages: Vec<MessageRecord>,
    pub summaries: Vec<SummaryRecord>,
    pub ledger: Vec<LedgerRecord>,
}

/// The file of `snapshot`, exported at `now`.
pub fn write(snapshot: &Snapshot, now: chrono::DateTime<chrono::Utc>) -> Vec<u8> {
    let mut out = Vec::new();
    let mut records = 0u64;
    let mut line = |record: &Record, out: &mut Vec<u8>| {
        // The records are plain data: serializing them cannot fail.
        serde_json::to_writer(&mut *out, record).expect("a record serializes");
        out.push(b'\n');
        records += 1;
    };
    line(
        &Record::Header(Header {
            format: FORMAT.to_string(),
            version: VERSION,
            exported_at: now,
        }),
        &mut out,
    );
    line(
        &Record::Session(Box::new(snapshot.session.clone())),
        &mut out,
    );
    for message in &snapshot.messages {
        line(&Record::Message(message.clone()), &mut out);
    }
    for summary in &snapshot.summaries {
        line(&Record::Summary(summary.clone()), &mut out);
    }
    for entry in &snapshot.ledger {
        line(&Record::Ledger(entry.clone()), &mut out);
    }
    let end = End {
        records,
        sha256: hex(&Sha256::digest(&out)),
    };
    serde_json::to_writer(&mut out, &Record::End(end)).expect("a record serializes");
    out.push(b'\n');
    out
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// The largest file a server with `max_session_bytes` reads: the text four times over
/// (JSON escapes it, and a message's text may sit in its parts as well) and 16 MiB for
/// the rest.
pub fn max_file_bytes(max_session_bytes: i64) -> usize {
    usize::try_from(max_session_bytes.max(0))
        .unwrap_or(usize::MAX / 8)
        .saturating_mul(4)
        .saturating_add(16 << 20)
}
