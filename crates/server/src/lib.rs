//! The ctxd service: agents keep their conversation here over gRPC (and the providers'
//! own HTTP APIs); ctxd returns the message array to send, always within the model's
//! window and provider-valid, and keeps every original message.
//!
//! Layout (docs/architecture.md draws it): `api` (gRPC edge), `proxy` (the provider
//! endpoint) and `console` (the read-only web page) → `engine` (the operations, one file
//! per operation group in `engine/`) → `summarizer`, `fanout` → `store` (PostgreSQL; its
//! rows stay inside it). The pure core is its own crate, `ctxd-core`, without any I/O
//! crate; its modules are re-exported here under their own names (`message`, `policy`, ...).
pub use ctxd_core::{
    append, budget, chunks, compaction, error, events, exchange, export, fit, fork, format, ingest,
    job, ladder, ledger, limits, listing, message, outlook, policy, quota, recall, render, revert,
    session, summarize, tokenize, tree, turns, validate,
};

pub mod accept;
pub mod admin;
pub mod api;
pub mod auth;
pub mod codec;
pub mod config;
pub mod connections;
pub mod console;
pub mod engine;
pub mod fanout;
pub mod front_doors;
pub mod heap;
pub mod indexer;
pub mod jobs;
pub mod metrics;
pub mod ops_http;
pub mod pb;
pub mod proxy;
pub mod quotas;
pub mod readiness;
pub mod server;
pub mod store;
pub mod summarizer;
pub mod telemetry;
pub mod tls;
