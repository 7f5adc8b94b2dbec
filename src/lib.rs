//! ctxd: a context-management service for LLM agents. Agents keep their conversation
//! here over gRPC; ctxd returns the message array to send, always within the model's
//! window and provider-valid, and keeps every original message.
//!
//! Layout: `api` (gRPC edge) → `engine` (operations, one file per operation group in
//! `src/engine/`) → `store` (PostgreSQL). The pure core — `tokenize`, `turns`, `budget`,
//! `compaction`, `chunks`, `summarize`, `policy`, `render`, `message`, `validate`,
//! `limits` — has no I/O.
pub mod api;
pub mod auth;
pub mod budget;
pub mod chunks;
pub mod codec;
pub mod compaction;
pub mod config;
pub mod connections;
pub mod engine;
pub mod error;
pub mod events;
pub mod inspect;
pub mod jobs;
pub mod limits;
pub mod llm;
pub mod localpg;
pub mod message;
pub mod policy;
pub mod render;
pub mod replay;
pub mod search;
pub mod server;
pub mod store;
pub mod summarize;
pub mod telemetry;
pub mod tokenize;
pub mod turns;
pub mod validate;
pub mod writer;

/// Generated protocol types, client and server.
pub mod pb {
    #![allow(clippy::all, missing_docs)]
    tonic::include_proto!("ctxd.v1");

    /// The encoded descriptor set of proto/, served by reflection.
    pub const FILE_DESCRIPTOR_SET: &[u8] =
        include_bytes!(concat!(env!("OUT_DIR"), "/ctxd_descriptor.bin"));
}
