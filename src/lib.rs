//! ctxd: a context-management service for LLM agents. Agents keep their conversation
//! here over gRPC; ctxd returns the message array to send, always within the model's
//! window and provider-valid, and keeps every original message.
//!
//! Layout (docs/architecture.md draws it): `api` (gRPC edge) → `engine` (the operations,
//! one file per operation group in `src/engine/`) → `summarizer`, `fanout` → `store`
//! (PostgreSQL; its rows stay inside it). The pure core is its own crate, `crates/core`
//! (`ctxd-core`), without any I/O crate; its modules are re-exported here under their own
//! names (`ctxd::message`, `ctxd::policy`, ...).
pub use ctxd_core::{
    append, budget, chunks, compaction, error, events, exchange, fit, fork, format, ingest, job,
    ledger, limits, listing, message, outlook, policy, quota, render, revert, session, summarize,
    tokenize, tree, turns, validate,
};

pub mod accept;
pub mod admin;
pub mod api;
pub mod auth;
pub mod client;
pub mod codec;
pub mod config;
pub mod connections;
pub mod console;
pub mod engine;
pub mod eval;
pub mod events_cli;
pub mod fanout;
pub mod front_doors;
pub mod indexer;
pub mod inspect;
pub mod inspect_json;
pub mod jobs;
pub mod localpg;
pub mod metrics;
pub mod pb;
pub mod proxy;
pub mod quotas;
pub mod readiness;
pub mod replay;
pub mod server;
pub mod store;
pub mod summarizer;
pub mod telemetry;
pub mod tls;
