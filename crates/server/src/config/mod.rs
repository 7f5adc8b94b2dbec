//! Settings: defaults, then an optional TOML file, then CTXD_* environment variables,
//! then flags (each later source wins). `ctxd serve --help` lists every setting.
mod args;
mod policy_args;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;

use clap::ValueEnum;
use figment::Figment;
use figment::providers::{Format, Serialized, Toml};
use serde::{Deserialize, Serialize};

use crate::auth::AnonymousAccess;
use crate::policy::{Policy, TokenizerKind};
use crate::store::Pooler;
use crate::summarizer::model::{Api, Profile};

pub use args::ServeArgs;
pub use policy_args::PolicyArgs;

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
    pub proxy_listen: Option<SocketAddr>,
    pub console_listen: Option<SocketAddr>,
    pub upstream_openai: String,
    pub upstream_anthropic: String,
    pub upstream_gemini: String,
    pub proxy_max_body_bytes: usize,
    /// The endpoint's sessions get the recall tools.
    pub proxy_recall_tools: bool,
    /// Recall rounds per agent request at most.
    pub proxy_recall_rounds: u32,
    pub database_url: Option<String>,
    /// PostgreSQL itself, for LISTEN and migrations, when `database_url` is a pooler.
    pub database_listen_url: Option<String>,
    pub database_pooler: Pooler,
    /// Serve without applying migrations (refusing an older schema).
    pub no_migrate: bool,
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
    /// Appends written by `ctxd_append` even on one PostgreSQL.
    pub append_by_function: bool,
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
            proxy_listen: None,
            console_listen: None,
            upstream_openai: "https://api.openai.com".to_string(),
            upstream_anthropic: "https://api.anthropic.com".to_string(),
            upstream_gemini: "https://generativelanguage.googleapis.com".to_string(),
            proxy_max_body_bytes: 16 * 1024 * 1024,
            proxy_recall_tools: false,
            proxy_recall_rounds: 3,
            database_url: None,
            database_listen_url: None,
            database_pooler: Pooler::None,
            no_migrate: false,
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
            append_by_function: false,
            preload_tokenizers: Vec::new(),
            default_policy: Policy::default(),
            summarizers: BTreeMap::new(),
        }
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
    /// The anonymous access in force: `loopback` serves calls without a key only to the
    /// zero-setup run, on ctxd's own private PostgreSQL; with a configured database
    /// (DATABASE_URL) it refuses them, as `deny` does. Nothing fails open.
    pub fn anonymous_mode(&self) -> AnonymousAccess {
        match (self.anonymous_access, &self.database_url) {
            (AnonymousAccess::Loopback, Some(_)) => AnonymousAccess::Deny,
            (mode, _) => mode,
        }
    }

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
        config.check_summarizers()?;
        config.check_minimums()?;
        config
            .quota
            .validate("quota.")
            .map_err(ConfigError::Invalid)?;
        config.check_upstreams()?;
        if !(1..=crate::recall::MAX_ROUNDS).contains(&config.proxy_recall_rounds) {
            return Err(ConfigError::Invalid(format!(
                "proxy_recall_rounds must be between 1 and {}",
                crate::recall::MAX_ROUNDS
            )));
        }
        if config.conn_idle_timeout_secs > MAX_IDLE_TIMEOUT_SECS {
            return Err(ConfigError::Invalid(format!(
                "conn_idle_timeout_secs must be at most {MAX_IDLE_TIMEOUT_SECS} (0 turns it off)"
            )));
        }
        config.check_database_urls()?;
        config.check_tls()?;
        Ok(config)
    }

    /// The default policy, and the summarizer profiles it and the sessions may name.
    fn check_summarizers(&self) -> Result<(), ConfigError> {
        self.default_policy
            .validate("default_policy")
            .map_err(|error| ConfigError::Invalid(error.to_string()))?;
        for (name, profile) in &self.summarizers {
            if name == crate::engine::EXTRACTIVE && profile.api != Api::Extractive {
                return Err(ConfigError::Invalid(format!(
                    "summarizers.{name}: the name {name} is the built-in summarizer's; pick another"
                )));
            }
            profile.validate(name).map_err(ConfigError::Invalid)?;
        }
        let profile = &self.default_policy.summarizer_profile;
        if profile != crate::engine::EXTRACTIVE && !self.summarizers.contains_key(profile) {
            return Err(ConfigError::Invalid(format!(
                "default_policy.summarizer_profile names {profile:?}, which no [summarizers.{profile}] section configures"
            )));
        }
        Ok(())
    }

    /// The settings that must be at least 1.
    fn check_minimums(&self) -> Result<(), ConfigError> {
        if !(self.jobs_lease_secs >= 1.0 && self.jobs_lease_secs.is_finite()) {
            return Err(ConfigError::Invalid(
                "jobs_lease_secs must be at least 1".into(),
            ));
        }
        let minimums: [(&str, i128); 13] = [
            ("jobs_poll_interval_ms", self.jobs_poll_interval_ms.into()),
            ("events_retention_secs", self.events_retention_secs.into()),
            ("jobs_max_attempts", i128::from(self.jobs_max_attempts)),
            ("max_append_messages", self.max_append_messages as i128),
            ("max_session_bytes", self.max_session_bytes as i128),
            ("proxy_max_body_bytes", self.proxy_max_body_bytes as i128),
            ("append_writers", self.append_writers as i128),
            (
                "conn_handshake_timeout_secs",
                self.conn_handshake_timeout_secs.into(),
            ),
            ("conn_max_pending", self.conn_max_pending as i128),
            ("max_connections", self.max_connections as i128),
            (
                "max_streams_per_connection",
                self.max_streams_per_connection.into(),
            ),
            (
                "http2_keepalive_timeout_secs",
                self.http2_keepalive_timeout_secs.into(),
            ),
            ("db_max_connections", i128::from(self.db_max_connections)),
        ];
        for (name, value) in minimums {
            if value < 1 {
                return Err(ConfigError::Invalid(format!("{name} must be at least 1")));
            }
        }
        Ok(())
    }

    /// The provider endpoint's upstreams are http(s) URLs.
    fn check_upstreams(&self) -> Result<(), ConfigError> {
        for (name, url) in [
            ("upstream_openai", &self.upstream_openai),
            ("upstream_anthropic", &self.upstream_anthropic),
            ("upstream_gemini", &self.upstream_gemini),
        ] {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(ConfigError::Invalid(format!(
                    "{name} must be an http:// or https:// URL"
                )));
            }
        }
        Ok(())
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
