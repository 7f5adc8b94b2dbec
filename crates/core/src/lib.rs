//! ctxd's pure core: what a session is made of and every decision about it, with no
//! I/O. The service (the `ctxd` crate) loads, asks the core, persists and announces.
//!
//! One way, leaves first: `message` (the stored message, content parts, usage) ←
//! `turns` (turns, call/result pairs, where a view may start) ← `tokenize` (counters
//! per tokenizer family) ← `policy` (a session's policy and its thresholds, written
//! once) ← `budget` (regions of a request, the anchor to the provider's count, fitting
//! history) ← `compaction` (eviction, clearing plans, previews), `chunks` (fresh tail,
//! leaf and step chunks), `summarize` (the extractive summarizer, retention facts),
//! `ledger` (the task ledger: extraction, todos, its block) ←
//! `render` (provider formats), `ingest` (provider bodies read back as messages), both
//! over `media` (data: URIs, image types),
//! `validate` (request checks), `limits` (server bounds), `quota` (per-tenant quotas),
//! `events` (what an event says, cursors), `outlook` (the budget of a session's next
//! request, its status crossings), `fork` (what a fork reuses of its source),
//! `revert` (undoing compactions: the record, the aggregates restored, when automatic
//! compaction resumes), `tree` (subagent sessions' links to their parents), `error` (the
//! domain error).
//!
//! This crate's manifest lacks every network, database and runtime crate, so the
//! compiler keeps it pure; `tests/modules.rs` checks its dependency tree too.
pub mod append;
pub mod budget;
pub mod chunks;
pub mod compaction;
pub mod error;
pub mod events;
pub mod exchange;
pub mod export;
pub mod fit;
pub mod fork;
pub mod format;
pub mod ingest;
pub mod job;
pub mod ladder;
pub mod ledger;
pub mod limits;
pub mod listing;
mod media;
pub mod message;
pub mod outlook;
pub mod policy;
pub mod quota;
pub mod recall;
pub mod render;
pub mod revert;
pub mod session;
pub mod summarize;
pub mod tokenize;
pub mod tree;
pub mod turns;
pub mod validate;
