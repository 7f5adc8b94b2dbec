//! Integration tests: a real ctxd gRPC server on 127.0.0.1:0 over a real PostgreSQL
//! (a fresh database per test via `#[sqlx::test]`; DATABASE_URL comes from scripts/test).
mod api;
mod binary;
mod compaction;
mod connections;
mod corpus;
mod decode;
mod events;
mod expand;
mod harness;
mod jobs;
mod model_server;
mod properties;
mod recorded;
mod replicas;
mod small_window;
