//! The command line of `ctxd serve`: every setting as a flag with its environment
//! variable, each `None` when unset so the TOML file and the defaults show through.
use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Args;
use serde::Serialize;

use super::LogFormat;
use super::policy_args::PolicyArgs;
use crate::auth::AnonymousAccess;
use crate::policy::TokenizerKind;
use crate::store::Pooler;

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
    /// Address to serve the provider endpoint on (the OpenAI, Anthropic and Gemini HTTP
    /// APIs in front of ctxd, for agents that only change their base URL; TLS as for
    /// gRPC); unset serves none [default: unset].
    #[arg(long, env = "CTXD_PROXY_LISTEN")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proxy_listen: Option<SocketAddr>,
    /// Address to serve the console on: a web page over this ctxd showing each session's
    /// window, messages, summaries, ledger and compaction history, with Compact, revert
    /// and fork behind confirmations (the same keys as gRPC; TLS as for gRPC); unset
    /// serves none [default: unset].
    #[arg(long, env = "CTXD_CONSOLE_LISTEN")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub console_listen: Option<SocketAddr>,
    /// Where the provider endpoint sends OpenAI requests (Chat Completions, Responses)
    /// [default: https://api.openai.com].
    #[arg(long, env = "CTXD_UPSTREAM_OPENAI")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upstream_openai: Option<String>,
    /// Where the provider endpoint sends Anthropic Messages requests [default:
    /// https://api.anthropic.com].
    #[arg(long, env = "CTXD_UPSTREAM_ANTHROPIC")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upstream_anthropic: Option<String>,
    /// Where the provider endpoint sends Gemini requests [default:
    /// https://generativelanguage.googleapis.com].
    #[arg(long, env = "CTXD_UPSTREAM_GEMINI")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upstream_gemini: Option<String>,
    /// Largest request body the provider endpoint takes, in bytes [default: 16777216].
    #[arg(long, env = "CTXD_PROXY_MAX_BODY_BYTES")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proxy_max_body_bytes: Option<usize>,
    /// Give the sessions the provider endpoint creates the recall tools: the model can
    /// search and expand what compaction took away, and the endpoint answers those calls
    /// and calls the upstream again itself, unseen by the agent. A streamed reply then
    /// reaches the client when the upstream has finished it (a recall call is known only
    /// then) [default: false].
    #[arg(long, env = "CTXD_PROXY_RECALL_TOOLS", num_args = 0..=1, default_missing_value = "true")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proxy_recall_tools: Option<bool>,
    /// Recall rounds the provider endpoint runs for one agent request at most (1 to 10);
    /// the call after the last goes without the recall tools [default: 3].
    #[arg(long, env = "CTXD_PROXY_RECALL_ROUNDS")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proxy_recall_rounds: Option<u32>,
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
    /// Serve without applying migrations: refuse to start, naming what is missing, when
    /// the database's schema lacks one this ctxd needs (apply them with `ctxd migrate`).
    /// A schema a newer ctxd migrated is used either way [default: false, serve applies
    /// pending migrations at start].
    #[arg(long, env = "CTXD_NO_MIGRATE", num_args = 0..=1, default_missing_value = "true")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_migrate: Option<bool>,
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
    /// --listen is a loopback address and ctxd runs its private PostgreSQL, i.e. no
    /// DATABASE_URL; refused otherwise), allow (always; on a non-loopback address only
    /// with --insecure) or deny (never). Decided at start-up from this setting and the
    /// database setting alone; creating or revoking keys never changes it [default:
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
    /// commit for what queued while a writer was busy (a burst in two halves); this
    /// many such statements run at once [default: 1].
    #[arg(long, env = "CTXD_APPEND_WRITERS")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub append_writers: Option<usize>,
    /// Write appends by the database function `ctxd_append`, as ctxd always does on a
    /// Citus cluster, rather than by one set-based statement (which writes about 1.6
    /// times as many appends a second on one PostgreSQL): to rehearse the cluster's
    /// write path on one PostgreSQL [default: false].
    #[arg(long, env = "CTXD_APPEND_BY_FUNCTION", num_args = 0..=1, default_missing_value = "true")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub append_by_function: Option<bool>,
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
