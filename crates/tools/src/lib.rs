//! ctxd's tools, clients of a running server over gRPC: `client` (the connection),
//! `replay` (recorded agent sessions played through the API), `eval` (the compaction
//! eval against the anchors' strategies), `inspect` (one session's report, text or
//! JSON), `events_cli` (a session's event log, followed) and `session_file` (a
//! session exported to a file and imported from one).
pub mod client;
pub mod eval;
pub mod events_cli;
pub mod inspect;
pub mod inspect_json;
pub mod replay;
pub mod session_file;
pub mod tune;
