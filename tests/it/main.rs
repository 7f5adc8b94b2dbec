//! Integration tests: a real ctxd gRPC server on 127.0.0.1:0 over a real PostgreSQL
//! (a fresh database per test via `#[sqlx::test]`; DATABASE_URL comes from scripts/test).
mod api;
mod binary;
mod caps;
mod compaction;
mod connections;
mod corpus;
mod decode;
mod events;
mod expand;
mod hardening;
mod harness;
mod hostile;
mod jobs;
mod keys;
mod metrics;
mod model_server;
mod native_openai;
mod otlp;
mod pgbouncer;
mod properties;
mod quotas;
mod recorded;
mod replicas;
mod retention;
mod small_window;
mod tls;
