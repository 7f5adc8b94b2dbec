//! The quota defaults as flags and environment variables (`--quota-…`,
//! `CTXD_QUOTA_…`); in the TOML file they are the `[quota]` table.
use clap::Args;
use serde::Serialize;

/// Every tenant's quotas unless `ctxd tenant quota` sets its own; 0 turns one off.
#[derive(Debug, Clone, Default, Args, Serialize)]
#[command(next_help_heading = "Tenant quota defaults (0: off; `ctxd tenant quota` overrides)")]
pub struct QuotaArgs {
    /// RPCs one tenant may make per second on this replica (a token bucket; with R
    /// replicas a tenant can reach R times it); past it RESOURCE_EXHAUSTED with RetryInfo
    /// [default: 0].
    #[arg(
        id = "quota_requests_per_sec",
        long = "quota-requests-per-sec",
        env = "CTXD_QUOTA_REQUESTS_PER_SEC"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requests_per_sec: Option<f64>,
    /// RPCs a tenant may make at once after a quiet spell; 0: one second's worth
    /// [default: 0].
    #[arg(
        id = "quota_requests_burst",
        long = "quota-requests-burst",
        env = "CTXD_QUOTA_REQUESTS_BURST"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requests_burst: Option<u64>,
    /// Bytes of text one tenant's AppendTurns may add per minute on this replica (a
    /// token bucket holding one minute's worth) [default: 0].
    #[arg(
        id = "quota_append_bytes_per_min",
        long = "quota-append-bytes-per-min",
        env = "CTXD_QUOTA_APPEND_BYTES_PER_MIN"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub append_bytes_per_min: Option<u64>,
    /// Sessions one tenant may hold; CreateSession past it is RESOURCE_EXHAUSTED (exact
    /// across replicas) [default: 0].
    #[arg(
        id = "quota_live_sessions",
        long = "quota-live-sessions",
        env = "CTXD_QUOTA_LIVE_SESSIONS"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub live_sessions: Option<u64>,
    /// Bytes of text all of one tenant's sessions may hold; an append past it is
    /// RESOURCE_EXHAUSTED (each replica re-reads the sum every 2 s) [default: 0].
    #[arg(
        id = "quota_stored_bytes",
        long = "quota-stored-bytes",
        env = "CTXD_QUOTA_STORED_BYTES"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stored_bytes: Option<u64>,
}
