//! The `ctxd` binary's library: the service (`ctxd-server`), its tools (`ctxd-tools`)
//! and the private PostgreSQL launcher (`ctxd-localpg`) under one name, as the binary,
//! the integration tests and the benchmarks use them (`ctxd::store`, `ctxd::replay`, ...).
pub use ctxd_localpg as localpg;
pub use ctxd_server::*;
pub use ctxd_tools::{client, eval, events_cli, inspect, inspect_json, replay, session_file, tune};
