//! Settings: defaults, then an optional TOML file, then CTXD_* environment variables,
//! then flags (each later source wins). `ctxd serve --help` lists every setting.
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use figment::Figment;
use figment::providers::{Format, Serialized, Toml};
use serde::{Deserialize, Serialize};

use crate::auth::AnonymousAccess;
use crate::policy::{Policy, SummaryPlacement, TokenizerKind};
use crate::store::Pooler;
use crate::summarizer::model::{Api, Profile};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum LogFormat {
    Text,
    Json,
}

/// The server's effective configuration.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    pub listen: SocketAddr,
    pub metrics_listen: Option<SocketAddr>,
    pub database_url: Option<String>,
    /// PostgreSQL itself, for LISTEN and migrations, when `database_url` is a pooler.
    pub database_listen_url: Option<String>,
    pub database_pooler: Pooler,
    pub data_dir: PathBuf,
    pub db_max_connections: u32,
    pub insecure: bool,
    pub anonymous_access: AnonymousAccess,
    pub max_content_bytes: usize,
    pub max_request_bytes: usize,
    pub max_append_messages: usize,
    pub max_session_bytes: i64,
    /// Every tenant's quotas unless it has its own (`[quota]` in the TOML file).
    pub quota: crate::quota::Quotas,
    pub conn_handshake_timeout_secs: u64,
    pub conn_max_pending: usize,
    pub max_connections: usize,
    pub max_streams_per_connection: u32,
    pub http2_keepalive_interval_secs: u64,
    pub http2_keepalive_timeout_secs: u64,
    pub tcp_keepalive_secs: u64,
    pub conn_idle_timeout_secs: u64,
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
    pub tls_client_ca: Option<PathBuf>,
    pub log_format: LogFormat,
    pub log_filter: String,
    pub jobs_workers: usize,
    pub jobs_lease_secs: f64,
    pub jobs_poll_interval_ms: u64,
    pub jobs_max_attempts: i32,
    pub jobs_backoff_ms: u64,
    pub jobs_retention_secs: u64,
    pub jobs_notify_window_ms: u64,
    pub events_retention_secs: u64,
    pub view_cache_mb: usize,
    pub append_writers: usize,
    /// Tokenizer vocabularies built at start rather than on first use.
    pub preload_tokenizers: Vec<TokenizerKind>,
    pub default_policy: Policy,
    /// Summarizer profiles by name (TOML only: `[summarizers.NAME]`); `extractive` is
    /// always there.
    pub summarizers: BTreeMap<String, Profile>,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 50051)),
            metrics_listen: None,
            database_url: None,
            database_listen_url: None,
            database_pooler: Pooler::None,
            data_dir: PathBuf::from(".ctxd"),
            db_max_connections: 32,
            insecure: false,
            anonymous_access: AnonymousAccess::Loopback,
            max_content_bytes: 4 * 1024 * 1024,
            max_request_bytes: 64 * 1024 * 1024,
            max_append_messages: crate::limits::DEFAULT_MAX_APPEND_MESSAGES,
            max_session_bytes: crate::limits::DEFAULT_MAX_SESSION_BYTES,
            quota: crate::quota::Quotas::default(),
            conn_handshake_timeout_secs: 10,
            conn_max_pending: 1024,
            max_connections: 10_000,
            max_streams_per_connection: 1024,
            http2_keepalive_interval_secs: 60,
            http2_keepalive_timeout_secs: 20,
            tcp_keepalive_secs: 60,
            conn_idle_timeout_secs: 300,
            tls_cert: None,
            tls_key: None,
            tls_client_ca: None,
            log_format: LogFormat::Text,
            log_filter: "info,sqlx=warn".to_string(),
            jobs_workers: 2,
            jobs_lease_secs: 30.0,
            jobs_poll_interval_ms: 1000,
            jobs_max_attempts: 3,
            jobs_backoff_ms: 2000,
            jobs_retention_secs: 86_400,
            jobs_notify_window_ms: 20,
            events_retention_secs: 7 * 86_400,
            view_cache_mb: 256,
            append_writers: crate::store::DEFAULT_APPEND_WRITERS,
            preload_tokenizers: Vec::new(),
            default_policy: Policy::default(),
            summarizers: BTreeMap::new(),
        }
    }
}

/// Every setting as a flag with its environment variable. Unset flags fall through to
/// the TOML file, then the defaults.
#[derive(Debug, Clone, Default, Args, Serialize)]
pub struct ServeArgs {
    /// TOML file with settings (same names as the flags, with underscores; policy
    /// defaults under [default_policy]; quota defaults under [quota] without the quota_
    /// prefix; summarizer profiles under [summarizers.NAME]).
    #[arg(long, env = "CTXD_CONFIG")]
    #[serde(skip)]
    pub config: Option<PathBuf>,
    /// Address to serve gRPC on [default: 127.0.0.1:50051].
    #[arg(long, env = "CTXD_LISTEN")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub listen: Option<SocketAddr>,
    /// Address to serve Prometheus metrics on, as `GET /metrics` over HTTP (e.g.
    /// 127.0.0.1:9464); unset serves none [default: unset].
    #[arg(long, env = "CTXD_METRICS_LISTEN")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metrics_listen: Option<SocketAddr>,
    /// PostgreSQL URL. Unset: ctxd starts a private PostgreSQL in --data-dir.
    #[arg(long, env = "DATABASE_URL")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub database_url: Option<String>,
    /// PostgreSQL URL for the connections that LISTEN (job wake-ups, events) and for
    /// migrations, when --database-url goes through a pooler: notifications do not pass
    /// through PgBouncer's transaction pooling. Unset: --database-url.
    #[arg(long, env = "CTXD_DATABASE_LISTEN_URL")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub database_listen_url: Option<String>,
    /// What --database-url reaches: none (PostgreSQL, or a pooler in session mode) or
    /// transaction (a pooler in transaction pooling mode, e.g. PgBouncer with
    /// pool_mode = transaction: statements are not kept prepared and each runs in a
    /// transaction; needs --database-listen-url) [default: none].
    #[arg(long, env = "CTXD_DATABASE_POOLER")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub database_pooler: Option<Pooler>,
    /// Directory for the private PostgreSQL's data (used when no database URL is set)
    /// [default: .ctxd].
    #[arg(long, env = "CTXD_DATA_DIR")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_dir: Option<PathBuf>,
    /// Database connections in the pool [default: 32].
    #[arg(long, env = "CTXD_DB_MAX_CONNECTIONS")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub db_max_connections: Option<u32>,
    /// Allow --anonymous-access allow on a non-loopback address (anyone who can reach
    /// the port can read every session of the `default` tenant) [default: false].
    #[arg(long, env = "CTXD_INSECURE", num_args = 0..=1, default_missing_value = "true")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub insecure: Option<bool>,
    /// Calls without an API key, served as the `default` tenant: loopback (served when
    /// --listen is a loopback address, refused otherwise), allow (always; on a
    /// non-loopback address only with --insecure) or deny (never). Decided at start-up
    /// from this setting alone; creating or revoking keys never changes it [default:
    /// loopback].
    #[arg(long, env = "CTXD_ANONYMOUS_ACCESS")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub anonymous_access: Option<AnonymousAccess>,
    /// Largest text one message may carry, in bytes [default: 4194304].
    #[arg(long, env = "CTXD_MAX_CONTENT_BYTES")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_content_bytes: Option<usize>,
    /// Largest gRPC request accepted, in bytes [default: 67108864].
    #[arg(long, env = "CTXD_MAX_REQUEST_BYTES")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_request_bytes: Option<usize>,
    /// Most messages one AppendTurn (or CheckBudget's pending_messages) may carry; more
    /// is INVALID_ARGUMENT [default: 1000].
    #[arg(long, env = "CTXD_MAX_APPEND_MESSAGES")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_append_messages: Option<usize>,
    /// Most bytes of text one session may hold (content, parts, reasoning, tool calls of
    /// every message); an append past it is RESOURCE_EXHAUSTED [default: 67108864].
    #[arg(long, env = "CTXD_MAX_SESSION_BYTES")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_session_bytes: Option<i64>,
    /// Seconds a new connection gets to send the HTTP/2 preface (its first 24 bytes)
    /// before it is closed [default: 10].
    #[arg(long, env = "CTXD_CONN_HANDSHAKE_TIMEOUT_SECS")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conn_handshake_timeout_secs: Option<u64>,
    /// Connections still waiting for their HTTP/2 preface, at most; past it (or when
    /// the process runs out of file descriptors) the one waiting longest is closed
    /// [default: 1024].
    #[arg(long, env = "CTXD_CONN_MAX_PENDING")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conn_max_pending: Option<usize>,
    /// Established client connections, at most; new ones past it are closed at once
    /// [default: 10000].
    #[arg(long, env = "CTXD_MAX_CONNECTIONS")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_connections: Option<usize>,
    /// Concurrent RPCs (HTTP/2 streams) on one connection; a client waits for a free
    /// one [default: 1024].
    #[arg(long, env = "CTXD_MAX_STREAMS_PER_CONNECTION")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_streams_per_connection: Option<u32>,
    /// Seconds between HTTP/2 pings on a connection, to find peers that went away; 0
    /// sends none [default: 60].
    #[arg(long, env = "CTXD_HTTP2_KEEPALIVE_INTERVAL_SECS")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub http2_keepalive_interval_secs: Option<u64>,
    /// Seconds a peer has to answer a ping before its connection is closed
    /// [default: 20].
    #[arg(long, env = "CTXD_HTTP2_KEEPALIVE_TIMEOUT_SECS")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub http2_keepalive_timeout_secs: Option<u64>,
    /// Seconds a connection is silent before TCP keepalive probes start; 0 turns them
    /// off [default: 60].
    #[arg(long, env = "CTXD_TCP_KEEPALIVE_SECS")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tcp_keepalive_secs: Option<u64>,
    /// Seconds an established connection may go with no RPC in flight (no request
    /// being handled, no response stream such as SubscribeEvents open) before it is
    /// closed; HTTP/2 pings do not count as activity, and a connection with an RPC in
    /// flight is never closed for this; 0 never closes idle connections; at most 2592000
    /// [default: 300].
    #[arg(long, env = "CTXD_CONN_IDLE_TIMEOUT_SECS")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conn_idle_timeout_secs: Option<u64>,
    /// Serve TLS with this certificate chain (PEM, leaf first); needs --tls-key.
    /// Re-read with the key and client CA on SIGHUP: new connections use the new files,
    /// established ones keep theirs; a reload that fails keeps the files in force
    /// [default: none, plaintext].
    #[arg(long, env = "CTXD_TLS_CERT")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tls_cert: Option<PathBuf>,
    /// The private key of --tls-cert (PEM: PKCS#8, PKCS#1 or SEC1).
    #[arg(long, env = "CTXD_TLS_KEY")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tls_key: Option<PathBuf>,
    /// Mutual TLS: CA certificates (PEM) a client's certificate must chain to; a client
    /// without such a certificate is refused in the TLS handshake. Needs --tls-cert
    /// [default: none, no client certificates asked for].
    #[arg(long, env = "CTXD_TLS_CLIENT_CA")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tls_client_ca: Option<PathBuf>,
    /// Log format [default: text].
    #[arg(long, env = "CTXD_LOG_FORMAT")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_format: Option<LogFormat>,
    /// Log filter, tracing-subscriber syntax [default: info,sqlx=warn].
    #[arg(long, env = "CTXD_LOG")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_filter: Option<String>,
    /// Job worker tasks in this replica; 0 runs none [default: 2].
    #[arg(long, env = "CTXD_JOBS_WORKERS")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jobs_workers: Option<usize>,
    /// Seconds a claimed job stays claimed without renewal; a job whose worker died is
    /// taken again after it [default: 30].
    #[arg(long, env = "CTXD_JOBS_LEASE_SECS")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jobs_lease_secs: Option<f64>,
    /// Queue polling period when no notification arrives, in ms [default: 1000].
    #[arg(long, env = "CTXD_JOBS_POLL_INTERVAL_MS")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jobs_poll_interval_ms: Option<u64>,
    /// Attempts a job gets before it is discarded [default: 3].
    #[arg(long, env = "CTXD_JOBS_MAX_ATTEMPTS")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jobs_max_attempts: Option<i32>,
    /// First retry delay of a failed job in ms, doubled per attempt, with jitter
    /// [default: 2000].
    #[arg(long, env = "CTXD_JOBS_BACKOFF_MS")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jobs_backoff_ms: Option<u64>,
    /// Seconds finished jobs are kept [default: 86400].
    #[arg(long, env = "CTXD_JOBS_RETENTION_SECS")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jobs_retention_secs: Option<u64>,
    /// At most one new-job NOTIFY per this many ms per replica (polling covers the
    /// rest) [default: 20].
    #[arg(long, env = "CTXD_JOBS_NOTIFY_WINDOW_MS")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jobs_notify_window_ms: Option<u64>,
    /// Seconds events are kept for SubscribeEvents' backlog [default: 604800].
    #[arg(long, env = "CTXD_EVENTS_RETENTION_SECS")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub events_retention_secs: Option<u64>,
    /// Memory for this replica's cache of session views, in MiB: a build reads only the
    /// messages appended since the replica's last build of the same view; 0 turns it
    /// off [default: 256].
    #[arg(long, env = "CTXD_VIEW_CACHE_MB")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub view_cache_mb: Option<usize>,
    /// Appends to different sessions are written together, one statement and one
    /// commit for all that queued while a writer was busy; this many such statements
    /// run at once [default: 1].
    #[arg(long, env = "CTXD_APPEND_WRITERS")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub append_writers: Option<usize>,
    /// Tokenizer vocabularies to build at start (comma-separated: o200k_base,
    /// cl100k_base, deepseek_v3), so no request waits for one; the others are built on
    /// first use (about 90, 35 and 1 200 ms; 66, 32 and 58 MB) [default: none].
    #[arg(long, env = "CTXD_PRELOAD_TOKENIZERS", value_delimiter = ',', value_parser = TokenizerKind::from_name)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preload_tokenizers: Option<Vec<TokenizerKind>>,
    #[command(flatten)]
    pub quota: crate::quotas::QuotaArgs,
    #[command(flatten)]
    pub default_policy: PolicyArgs,
}

/// Defaults for sessions that do not set a policy field.
#[derive(Debug, Clone, Default, Args, Serialize)]
#[command(next_help_heading = "Session policy defaults")]
pub struct PolicyArgs {
    /// Context window in tokens [default: 128000].
    #[arg(
        long = "policy-context-window-tokens",
        env = "CTXD_POLICY_CONTEXT_WINDOW_TOKENS"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_window_tokens: Option<i64>,
    /// Tokens reserved for the reply [default: 16000].
    #[arg(
        long = "policy-max-output-tokens",
        env = "CTXD_POLICY_MAX_OUTPUT_TOKENS"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<i64>,
    /// Tokenizer: o200k_base, cl100k_base, deepseek_v3 or heuristic [default: o200k_base].
    #[arg(long = "policy-tokenizer", env = "CTXD_POLICY_TOKENIZER", value_parser = TokenizerKind::from_name)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokenizer: Option<TokenizerKind>,
    /// Characters per token for the heuristic tokenizer [default: 4.0].
    #[arg(
        long = "policy-heuristic-chars-per-token",
        env = "CTXD_POLICY_HEURISTIC_CHARS_PER_TOKEN"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub heuristic_chars_per_token: Option<f64>,
    /// Fraction of the window past which old tool results are cleared [default: 0.60].
    #[arg(long = "policy-clear-threshold", env = "CTXD_POLICY_CLEAR_THRESHOLD")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clear_threshold: Option<f64>,
    /// Fraction of the window compaction brings a request down to [default: 0.20].
    #[arg(long = "policy-clear-target", env = "CTXD_POLICY_CLEAR_TARGET")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clear_target: Option<f64>,
    /// Fraction of the window past which summarization is due [default: 0.75].
    #[arg(
        long = "policy-summarize-threshold",
        env = "CTXD_POLICY_SUMMARIZE_THRESHOLD"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summarize_threshold: Option<f64>,
    /// Fraction of the window a request may never exceed [default: 1.0].
    #[arg(long = "policy-hard-limit", env = "CTXD_POLICY_HARD_LIMIT")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hard_limit: Option<f64>,
    /// Newest messages protected from compaction, by count [default: 32].
    #[arg(
        long = "policy-fresh-tail-messages",
        env = "CTXD_POLICY_FRESH_TAIL_MESSAGES"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fresh_tail_messages: Option<i64>,
    /// Newest messages protected from compaction, by tokens [default: 20000].
    #[arg(
        long = "policy-fresh-tail-tokens",
        env = "CTXD_POLICY_FRESH_TAIL_TOKENS"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fresh_tail_tokens: Option<i64>,
    /// Newest tool output kept whole when clearing, in tokens [default: 40000].
    #[arg(
        long = "policy-tool-output-protect-tokens",
        env = "CTXD_POLICY_TOOL_OUTPUT_PROTECT_TOKENS"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_output_protect_tokens: Option<i64>,
    /// Clearing happens only when it saves at least this many tokens [default: 20000].
    #[arg(
        long = "policy-clear-min-savings-tokens",
        env = "CTXD_POLICY_CLEAR_MIN_SAVINGS_TOKENS"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clear_min_savings_tokens: Option<i64>,
    /// Tool results above this size are evicted to a preview [default: 20000].
    #[arg(
        long = "policy-eviction-threshold-tokens",
        env = "CTXD_POLICY_EVICTION_THRESHOLD_TOKENS"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eviction_threshold_tokens: Option<i64>,
    /// Leaf summary chunk size in messages [default: 8].
    #[arg(
        long = "policy-leaf-chunk-messages",
        env = "CTXD_POLICY_LEAF_CHUNK_MESSAGES"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leaf_chunk_messages: Option<i64>,
    /// Leaf summary chunk size in tokens [default: 20000].
    #[arg(
        long = "policy-leaf-chunk-tokens",
        env = "CTXD_POLICY_LEAF_CHUNK_TOKENS"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leaf_chunk_tokens: Option<i64>,
    /// Target size of a leaf summary [default: 1200].
    #[arg(
        long = "policy-leaf-target-tokens",
        env = "CTXD_POLICY_LEAF_TARGET_TOKENS"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leaf_target_tokens: Option<i64>,
    /// Same-depth summaries condensed together [default: 4].
    #[arg(long = "policy-condense-fanin", env = "CTXD_POLICY_CONDENSE_FANIN")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub condense_fanin: Option<i64>,
    /// Target size of a condensed summary [default: 2000].
    #[arg(
        long = "policy-condensed-target-tokens",
        env = "CTXD_POLICY_CONDENSED_TARGET_TOKENS"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub condensed_target_tokens: Option<i64>,
    /// Where summaries go: system or user [default: system].
    #[arg(long = "policy-summary-placement", env = "CTXD_POLICY_SUMMARY_PLACEMENT", value_parser = parse_placement)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary_placement: Option<SummaryPlacement>,
    /// Summarizer profile [default: extractive].
    #[arg(
        long = "policy-summarizer-profile",
        env = "CTXD_POLICY_SUMMARIZER_PROFILE"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summarizer_profile: Option<String>,
    /// Flat token cost of a media item without an estimate [default: 1000].
    #[arg(
        long = "policy-media-item-tokens",
        env = "CTXD_POLICY_MEDIA_ITEM_TOKENS"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub media_item_tokens: Option<i64>,
    /// Consecutive failed automatic compactions before it pauses [default: 3].
    #[arg(
        long = "policy-compaction-failure-limit",
        env = "CTXD_POLICY_COMPACTION_FAILURE_LIMIT"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compaction_failure_limit: Option<i64>,
}

fn parse_placement(value: &str) -> Result<SummaryPlacement, String> {
    match value {
        "system" => Ok(SummaryPlacement::System),
        "user" => Ok(SummaryPlacement::User),
        _ => Err("expected system or user".into()),
    }
}

/// The longest idle timeout accepted: 30 days.
const MAX_IDLE_TIMEOUT_SECS: u64 = 30 * 86_400;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("configuration: {0}")]
    Figment(#[from] Box<figment::Error>),
    #[error("configuration: {0}")]
    Invalid(String),
}

impl Config {
    /// Merges defaults, the TOML file, and the flags/environment, then validates.
    pub fn load(args: &ServeArgs) -> Result<Config, ConfigError> {
        let mut figment = Figment::from(Serialized::defaults(Config::default()));
        if let Some(path) = &args.config {
            if !path.exists() {
                return Err(ConfigError::Invalid(format!(
                    "the config file {} does not exist",
                    path.display()
                )));
            }
            figment = figment.merge(Toml::file(path));
        }
        figment = figment.merge(Serialized::defaults(args));
        let config: Config = figment.extract().map_err(Box::new)?;
        config
            .default_policy
            .validate("default_policy")
            .map_err(|error| ConfigError::Invalid(error.to_string()))?;
        for (name, profile) in &config.summarizers {
            if name == crate::engine::EXTRACTIVE && profile.api != Api::Extractive {
                return Err(ConfigError::Invalid(format!(
                    "summarizers.{name}: the name {name} is the built-in summarizer's; pick another"
                )));
            }
            profile.validate(name).map_err(ConfigError::Invalid)?;
        }
        let profile = &config.default_policy.summarizer_profile;
        if profile != crate::engine::EXTRACTIVE && !config.summarizers.contains_key(profile) {
            return Err(ConfigError::Invalid(format!(
                "default_policy.summarizer_profile names {profile:?}, which no [summarizers.{profile}] section configures"
            )));
        }
        if !(config.jobs_lease_secs >= 1.0 && config.jobs_lease_secs.is_finite()) {
            return Err(ConfigError::Invalid(
                "jobs_lease_secs must be at least 1".into(),
            ));
        }
        if config.jobs_poll_interval_ms == 0 {
            return Err(ConfigError::Invalid(
                "jobs_poll_interval_ms must be at least 1".into(),
            ));
        }
        if config.events_retention_secs == 0 {
            return Err(ConfigError::Invalid(
                "events_retention_secs must be at least 1".into(),
            ));
        }
        if config.jobs_max_attempts < 1 {
            return Err(ConfigError::Invalid(
                "jobs_max_attempts must be at least 1".into(),
            ));
        }
        if config.max_append_messages == 0 {
            return Err(ConfigError::Invalid(
                "max_append_messages must be at least 1".into(),
            ));
        }
        if config.max_session_bytes < 1 {
            return Err(ConfigError::Invalid(
                "max_session_bytes must be at least 1".into(),
            ));
        }
        config
            .quota
            .validate("quota.")
            .map_err(ConfigError::Invalid)?;
        if config.append_writers == 0 {
            return Err(ConfigError::Invalid(
                "append_writers must be at least 1".into(),
            ));
        }
        for (name, value) in [
            (
                "conn_handshake_timeout_secs",
                config.conn_handshake_timeout_secs,
            ),
            ("conn_max_pending", config.conn_max_pending as u64),
            ("max_connections", config.max_connections as u64),
            (
                "max_streams_per_connection",
                config.max_streams_per_connection.into(),
            ),
            (
                "http2_keepalive_timeout_secs",
                config.http2_keepalive_timeout_secs,
            ),
        ] {
            if value == 0 {
                return Err(ConfigError::Invalid(format!("{name} must be at least 1")));
            }
        }
        if config.conn_idle_timeout_secs > MAX_IDLE_TIMEOUT_SECS {
            return Err(ConfigError::Invalid(format!(
                "conn_idle_timeout_secs must be at most {MAX_IDLE_TIMEOUT_SECS} (0 turns it off)"
            )));
        }
        config.check_database_urls()?;
        if config.db_max_connections == 0 {
            return Err(ConfigError::Invalid(
                "db_max_connections must be at least 1".into(),
            ));
        }
        config.check_tls()?;
        Ok(config)
    }

    /// Certificate and key come together; a client CA needs them.
    fn check_tls(&self) -> Result<(), ConfigError> {
        match (&self.tls_cert, &self.tls_key) {
            (Some(_), None) | (None, Some(_)) => Err(ConfigError::Invalid(
                "tls_cert and tls_key (--tls-cert, --tls-key) must be given together".into(),
            )),
            (None, None) if self.tls_client_ca.is_some() => Err(ConfigError::Invalid(
                "tls_client_ca (--tls-client-ca) needs tls_cert and tls_key (--tls-cert, --tls-key)"
                    .into(),
            )),
            _ => Ok(()),
        }
    }

    /// The files of the server's TLS configuration; `None`: plaintext.
    pub fn tls_files(&self) -> Option<crate::tls::TlsFiles> {
        Some(crate::tls::TlsFiles {
            cert: self.tls_cert.clone()?,
            key: self.tls_key.clone()?,
            client_ca: self.tls_client_ca.clone(),
        })
    }
}

impl Config {
    /// A listen URL or a pooler only mean something with a database URL; a transaction
    /// pooler needs the listen URL (LISTEN would otherwise go through it, and hear
    /// nothing).
    fn check_database_urls(&self) -> Result<(), ConfigError> {
        if self.database_url.is_none() {
            if self.database_listen_url.is_some() {
                return Err(ConfigError::Invalid(
                    "database_listen_url needs database_url (without it ctxd runs a private PostgreSQL)".into(),
                ));
            }
            if self.database_pooler != Pooler::None {
                return Err(ConfigError::Invalid(
                    "database_pooler needs database_url (without it ctxd runs a private PostgreSQL)".into(),
                ));
            }
        }
        if self.database_pooler == Pooler::Transaction && self.database_listen_url.is_none() {
            return Err(ConfigError::Invalid(
                "database_pooler = transaction needs database_listen_url: LISTEN does not pass through a transaction pooler".into(),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_override_file_and_file_overrides_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ctxd.toml");
        std::fs::write(
            &path,
            "listen = \"127.0.0.1:6000\"\ndb_max_connections = 7\n[default_policy]\ncontext_window_tokens = 64000\nmax_output_tokens = 8000\n",
        )
        .unwrap();
        let mut args = ServeArgs {
            config: Some(path),
            ..Default::default()
        };
        args.db_max_connections = Some(9);
        let config = Config::load(&args).unwrap();
        assert_eq!(config.listen.port(), 6000);
        assert_eq!(config.db_max_connections, 9);
        assert_eq!(config.default_policy.context_window_tokens, 64_000);
        assert_eq!(config.default_policy.clear_threshold, 0.60);
        assert_eq!(config.metrics_listen, None);
    }

    #[test]
    fn metrics_listen_comes_from_the_file_or_the_flag() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ctxd.toml");
        std::fs::write(&path, "metrics_listen = \"127.0.0.1:9464\"\n").unwrap();
        let mut args = ServeArgs {
            config: Some(path),
            ..Default::default()
        };
        let config = Config::load(&args).unwrap();
        assert_eq!(
            config.metrics_listen,
            Some("127.0.0.1:9464".parse().unwrap())
        );
        args.metrics_listen = Some("0.0.0.0:9100".parse().unwrap());
        let config = Config::load(&args).unwrap();
        assert_eq!(config.metrics_listen, Some("0.0.0.0:9100".parse().unwrap()));
    }

    #[test]
    fn bad_policy_default_is_rejected_naming_the_field() {
        let mut args = ServeArgs::default();
        args.default_policy.clear_threshold = Some(2.0);
        let error = Config::load(&args).unwrap_err().to_string();
        assert!(error.contains("default_policy.clear_threshold"), "{error}");
    }

    #[test]
    fn preloaded_tokenizers_come_from_the_flag_or_the_file() {
        use clap::Parser;
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            serve: ServeArgs,
        }
        let cli = Cli::try_parse_from(["ctxd", "--preload-tokenizers", "o200k_base,deepseek-v3"])
            .unwrap();
        assert_eq!(
            Config::load(&cli.serve).unwrap().preload_tokenizers,
            vec![TokenizerKind::O200kBase, TokenizerKind::DeepseekV3]
        );
        let error = Cli::try_parse_from(["ctxd", "--preload-tokenizers", "gpt2"])
            .err()
            .unwrap()
            .to_string();
        assert!(error.contains("--preload-tokenizers"), "{error}");
        assert!(Config::default().preload_tokenizers.is_empty());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ctxd.toml");
        std::fs::write(&path, "preload_tokenizers = [\"cl100k_base\"]\n").unwrap();
        let args = ServeArgs {
            config: Some(path),
            ..Default::default()
        };
        assert_eq!(
            Config::load(&args).unwrap().preload_tokenizers,
            vec![TokenizerKind::Cl100kBase]
        );
    }

    #[test]
    fn a_transaction_pooler_needs_a_listen_url_and_both_need_a_database_url() {
        use clap::Parser;
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            serve: ServeArgs,
        }
        let load = |args: &[&str]| Config::load(&Cli::try_parse_from(args).unwrap().serve);
        let pooled = ["ctxd", "--database-url", "postgres://pgbouncer/ctxd"];
        let error = load(&[&pooled[..], &["--database-pooler", "transaction"]].concat());
        let error = error.unwrap_err().to_string();
        assert!(error.contains("database_listen_url"), "{error}");
        let direct = ["--database-listen-url", "postgres://db/ctxd"];
        let config =
            load(&[&pooled[..], &direct, &["--database-pooler", "transaction"]].concat()).unwrap();
        assert_eq!(config.database_pooler, Pooler::Transaction);
        assert_eq!(config.database_listen_url.as_deref(), Some(direct[1]));
        assert_eq!(load(&pooled).unwrap().database_pooler, Pooler::None);
        // Built, not parsed: clap would read DATABASE_URL from the environment.
        let args = ServeArgs {
            database_listen_url: Some(direct[1].into()),
            ..Default::default()
        };
        let error = Config::load(&args).unwrap_err().to_string();
        assert!(
            error.contains("database_listen_url needs database_url"),
            "{error}"
        );
        assert!(Cli::try_parse_from(["ctxd", "--database-pooler", "statement"]).is_err());
    }

    #[test]
    fn zero_append_writers_is_rejected_naming_the_setting() {
        let args = ServeArgs {
            append_writers: Some(0),
            ..Default::default()
        };
        let error = Config::load(&args).unwrap_err().to_string();
        assert!(error.contains("append_writers"), "{error}");
        let args = ServeArgs {
            append_writers: Some(3),
            ..Default::default()
        };
        assert_eq!(Config::load(&args).unwrap().append_writers, 3);
    }

    #[test]
    fn zero_connection_limits_are_rejected_naming_the_setting() {
        let args = ServeArgs {
            max_connections: Some(0),
            ..Default::default()
        };
        let error = Config::load(&args).unwrap_err().to_string();
        assert!(error.contains("max_connections"), "{error}");
        let args = ServeArgs {
            conn_handshake_timeout_secs: Some(0),
            ..Default::default()
        };
        let error = Config::load(&args).unwrap_err().to_string();
        assert!(error.contains("conn_handshake_timeout_secs"), "{error}");
        let args = ServeArgs {
            http2_keepalive_interval_secs: Some(0),
            tcp_keepalive_secs: Some(0),
            ..Default::default()
        };
        let limits =
            crate::connections::ConnectionLimits::from_config(&Config::load(&args).unwrap());
        assert_eq!(limits.http2_keepalive_interval, None);
        assert_eq!(limits.tcp_keepalive, None);
    }

    #[test]
    fn tls_certificate_and_key_come_together_naming_the_flags() {
        for (cert, key, ca) in [
            (Some("c.pem"), None, None),
            (None, Some("k.pem"), None),
            (None, None, Some("ca.pem")),
            (Some("c.pem"), None, Some("ca.pem")),
        ] {
            let args = ServeArgs {
                tls_cert: cert.map(PathBuf::from),
                tls_key: key.map(PathBuf::from),
                tls_client_ca: ca.map(PathBuf::from),
                ..Default::default()
            };
            let error = Config::load(&args).unwrap_err().to_string();
            assert!(
                error.contains("--tls-cert") && error.contains("--tls-key"),
                "{error}"
            );
        }
        assert_eq!(
            Config::load(&ServeArgs::default()).unwrap().tls_files(),
            None
        );
        let args = ServeArgs {
            tls_cert: Some("c.pem".into()),
            tls_key: Some("k.pem".into()),
            ..Default::default()
        };
        let files = Config::load(&args).unwrap().tls_files().unwrap();
        assert_eq!(
            (files.cert.to_str(), files.client_ca),
            (Some("c.pem"), None)
        );
    }

    #[test]
    fn idle_timeout_defaults_to_300_s_and_0_turns_it_off() {
        let limits = crate::connections::ConnectionLimits::from_config(
            &Config::load(&ServeArgs::default()).unwrap(),
        );
        assert_eq!(
            limits.idle_timeout,
            Some(std::time::Duration::from_secs(300))
        );
        let args = ServeArgs {
            conn_idle_timeout_secs: Some(0),
            ..Default::default()
        };
        let limits =
            crate::connections::ConnectionLimits::from_config(&Config::load(&args).unwrap());
        assert_eq!(limits.idle_timeout, None);
        let args = ServeArgs {
            conn_idle_timeout_secs: Some(u64::MAX),
            ..Default::default()
        };
        let error = Config::load(&args).unwrap_err().to_string();
        assert!(error.contains("conn_idle_timeout_secs"), "{error}");
    }
}
