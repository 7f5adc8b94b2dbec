//! The operator's commands for tenants and API keys: `ctxd tenant create|list|quota` and
//! `ctxd key create|list|revoke|rotate`. They work on the configured database, or on
//! the private PostgreSQL of the data directory, also while `ctxd serve` runs on it
//! (`LocalPostgres::start_or_attach`). A key is printed once, when it is made; the
//! database keeps only its SHA-256 and its first characters (the prefix), which is all
//! a listing shows.
mod duration;
mod quota;
mod table;

use std::time::Duration;

use chrono::{DateTime, Utc};
use clap::{Args, Subcommand};
use serde_json::json;

use crate::auth::{self, CACHE_TTL, PREFIX_CHARS};
use crate::config::ServeArgs;
use crate::store::{KeyRecord, NewKey, Rotation, Store, StoreError, TenantRecord};

pub use duration::{MAX_EXPIRY, MAX_GRACE};
pub use quota::QuotaChanges;

/// The longest tenant name.
const MAX_TENANT_NAME: usize = 200;

/// A rotation's old key stays valid this long unless `--grace` says otherwise.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(3600);

/// `ctxd tenant …`.
#[derive(Debug, Subcommand)]
pub enum TenantCommand {
    /// Create a tenant (or add a key to an existing one) and print a new API key once.
    Create {
        /// The tenant's name (1 to 200 characters).
        name: String,
        #[command(flatten)]
        expiry: Expiry,
        /// Print a JSON object (with the key) instead of the key alone.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        args: ServeArgs,
    },
    /// List the tenants: name, id, created, active key count.
    List {
        /// Print JSON lines instead of a table.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        args: ServeArgs,
    },
    /// Set a tenant's own quotas (the others keep the server's --quota-… defaults) and
    /// print the quotas in force; servers apply a change within 5 s.
    Quota {
        /// The tenant's name.
        name: String,
        #[command(flatten)]
        changes: QuotaChanges,
        /// Print a JSON object instead of a table.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        args: ServeArgs,
    },
}

/// `ctxd key …`.
#[derive(Debug, Subcommand)]
pub enum KeyCommand {
    /// Create an API key for an existing tenant and print it once.
    Create {
        /// The tenant the key belongs to.
        #[arg(long)]
        tenant: String,
        #[command(flatten)]
        expiry: Expiry,
        /// Print a JSON object (with the key) instead of the key alone.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        args: ServeArgs,
    },
    /// List API keys: id, tenant, prefix (never the key), created, expires, revoked,
    /// status.
    List {
        /// Only this tenant's keys.
        #[arg(long)]
        tenant: Option<String>,
        /// Print JSON lines instead of a table.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        args: ServeArgs,
    },
    /// Revoke an API key, by id, by prefix (when only one active key has it) or by the
    /// whole key. Every server refuses it within 5 s.
    Revoke {
        /// The key's id, its prefix as `ctxd key list` shows it, or the key itself.
        key: String,
        /// Print a JSON object instead of a sentence.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        args: ServeArgs,
    },
    /// Replace an active API key: print a new key for the same tenant once; the old key
    /// expires after the grace period. For a leaked key, use `revoke` (or `--grace 0`).
    Rotate {
        /// The key's id, its prefix as `ctxd key list` shows it, or the key itself.
        key: String,
        /// How long the old key keeps working, e.g. 0, 15m, 1h, 7d (at most 30d)
        /// [default: 1h].
        #[arg(long)]
        grace: Option<String>,
        #[command(flatten)]
        expiry: Expiry,
        /// Print a JSON object (with the new key) instead of the key alone.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        args: ServeArgs,
    },
}

/// When a new key stops working; by default it never does.
#[derive(Debug, Clone, Default, Args)]
pub struct Expiry {
    /// The key expires this long from now, e.g. 90d, 12h, 1h30m (at most 3650d).
    #[arg(long, conflicts_with = "expires_at")]
    pub expires_in: Option<String>,
    /// The key expires at this time, RFC 3339, e.g. 2026-01-31T00:00:00Z (at most ten
    /// years ahead).
    #[arg(long)]
    pub expires_at: Option<String>,
}

impl Expiry {
    /// The expiry these flags ask for, checked; `now` is when the command runs.
    fn at(&self, now: DateTime<Utc>) -> Result<Option<DateTime<Utc>>, AdminError> {
        let at = match (&self.expires_in, &self.expires_at) {
            (Some(text), _) => {
                let after =
                    duration::bounded(text, "--expires-in", Duration::from_secs(1), MAX_EXPIRY)?;
                let after = chrono::Duration::from_std(after)
                    .map_err(|_| AdminError::Invalid("--expires-in: out of range".into()))?;
                Some(now + after)
            }
            (None, Some(text)) => Some(duration::future_time(text, "--expires-at", now)?),
            (None, None) => None,
        };
        Ok(at)
    }
}

/// Why an admin command did nothing; each says what to do instead.
#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    /// A flag or argument out of its bounds; the message names it.
    #[error("{0}")]
    Invalid(String),
    #[error("no tenant is named {0}: create it with `ctxd tenant create NAME`")]
    NoTenant(String),
    #[error("no API key matches {0} (see `ctxd key list`)")]
    NoKey(String),
    #[error("{prefix} is the prefix of several active keys (ids {ids}): give the id instead")]
    Ambiguous { prefix: String, ids: String },
    #[error(
        "key {id} is {state}: only an active key can be rotated; create one with `ctxd key create`"
    )]
    Inactive { id: i64, state: &'static str },
    #[error("a random key could not be made: {0}")]
    Random(#[from] getrandom::Error),
    #[error("database error: {0}")]
    Store(#[from] StoreError),
}

impl From<String> for AdminError {
    fn from(message: String) -> AdminError {
        AdminError::Invalid(message)
    }
}

impl TenantCommand {
    /// The database settings the command runs with.
    pub fn serve_args(&self) -> &ServeArgs {
        match self {
            TenantCommand::Create { args, .. }
            | TenantCommand::List { args, .. }
            | TenantCommand::Quota { args, .. } => args,
        }
    }

    /// Runs the command; what it prints on stdout (stderr gets the notes for people).
    pub async fn run(&self, store: &Store) -> Result<String, AdminError> {
        let now = Utc::now();
        match self {
            TenantCommand::Create {
                name, expiry, json, ..
            } => {
                check_tenant_name(name)?;
                let expires_at = expiry.at(now)?;
                let key = auth::generate_key()?;
                let hash = auth::hash_key(&key);
                let new = NewKey {
                    hash: &hash,
                    prefix: &auth::key_prefix(&key),
                    expires_at,
                };
                let (_, id) = store.create_tenant_with_key(name, &new).await?;
                Ok(new_key_output(id, name, &key, expires_at, *json))
            }
            TenantCommand::List { json, .. } => {
                let tenants = store.tenants().await?;
                Ok(tenant_listing(&tenants, *json))
            }
            TenantCommand::Quota {
                name,
                changes,
                json,
                args,
            } => {
                let defaults = crate::config::Config::load(args)
                    .map_err(|error| AdminError::Invalid(error.to_string()))?
                    .quota;
                quota::run(store, name, changes, &defaults, *json).await
            }
        }
    }
}

impl KeyCommand {
    /// The database settings the command runs with.
    pub fn serve_args(&self) -> &ServeArgs {
        match self {
            KeyCommand::Create { args, .. }
            | KeyCommand::List { args, .. }
            | KeyCommand::Revoke { args, .. }
            | KeyCommand::Rotate { args, .. } => args,
        }
    }

    /// Runs the command; what it prints on stdout (stderr gets the notes for people).
    pub async fn run(&self, store: &Store) -> Result<String, AdminError> {
        let now = Utc::now();
        match self {
            KeyCommand::Create {
                tenant,
                expiry,
                json,
                ..
            } => {
                check_tenant_name(tenant)?;
                let expires_at = expiry.at(now)?;
                let key = auth::generate_key()?;
                let hash = auth::hash_key(&key);
                let new = NewKey {
                    hash: &hash,
                    prefix: &auth::key_prefix(&key),
                    expires_at,
                };
                let id = store
                    .add_key(tenant, &new)
                    .await?
                    .ok_or_else(|| AdminError::NoTenant(crate::error::quoted(tenant)))?;
                Ok(new_key_output(id, tenant, &key, expires_at, *json))
            }
            KeyCommand::List { tenant, json, .. } => {
                if let Some(tenant) = tenant {
                    check_tenant_name(tenant)?;
                }
                let keys = store.keys(tenant.as_deref()).await?;
                Ok(key_listing(&keys, now, *json))
            }
            KeyCommand::Revoke { key, json, .. } => {
                let id = find_key(store, key).await?;
                let revoked = store
                    .revoke_key(id)
                    .await?
                    .ok_or_else(|| AdminError::NoKey(crate::error::quoted(key)))?;
                Ok(revoked_output(&revoked, *json))
            }
            KeyCommand::Rotate {
                key,
                grace,
                expiry,
                json,
                ..
            } => {
                let grace = match grace {
                    Some(text) => duration::bounded(text, "--grace", Duration::ZERO, MAX_GRACE)?,
                    None => DEFAULT_GRACE,
                };
                let expires_at = expiry.at(now)?;
                let id = find_key(store, key).await?;
                let new_key = auth::generate_key()?;
                let hash = auth::hash_key(&new_key);
                let new = NewKey {
                    hash: &hash,
                    prefix: &auth::key_prefix(&new_key),
                    expires_at,
                };
                match store.rotate_key(id, &new, grace).await? {
                    Rotation::Rotated { new_key_id, old } => {
                        eprintln!(
                            "key {} ({}) of tenant {:?} expires at {}",
                            old.id,
                            old.prefix,
                            old.tenant,
                            old.expires_at.map_or("-".into(), duration::rfc3339)
                        );
                        Ok(new_key_output(
                            new_key_id,
                            &old.tenant,
                            &new_key,
                            expires_at,
                            *json,
                        ))
                    }
                    Rotation::NotFound => Err(AdminError::NoKey(crate::error::quoted(key))),
                    Rotation::Inactive(old) => Err(AdminError::Inactive {
                        id: old.id,
                        state: status(&old, now),
                    }),
                }
            }
        }
    }
}

fn check_tenant_name(name: &str) -> Result<(), AdminError> {
    let chars = name.chars().count();
    if name.trim().is_empty() || chars > MAX_TENANT_NAME || name.chars().any(char::is_control) {
        return Err(AdminError::Invalid(format!(
            "the tenant name must be 1 to {MAX_TENANT_NAME} characters, not blank, without control characters"
        )));
    }
    Ok(())
}

/// The id of the key `text` names: an id, a whole key, or the prefix of exactly one
/// active key.
async fn find_key(store: &Store, text: &str) -> Result<i64, AdminError> {
    let text = text.trim();
    let not_found = || AdminError::NoKey(crate::error::quoted(text));
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        let id: i64 = text.parse().map_err(|_| not_found())?;
        return store.key(id).await?.map(|key| key.id).ok_or_else(not_found);
    }
    if auth::is_key(text) {
        let found = store.key_by_hash(&auth::hash_key(text)).await?;
        return found.map(|key| key.id).ok_or_else(not_found);
    }
    if text.is_empty() || text.chars().count() > PREFIX_CHARS {
        return Err(AdminError::Invalid(format!(
            "{} is neither a key id, a key prefix (at most {PREFIX_CHARS} characters, as `ctxd key list` shows it) nor a whole key",
            crate::error::quoted(text)
        )));
    }
    let matches = store.active_keys_by_prefix(text).await?;
    match matches.as_slice() {
        [] => Err(not_found()),
        [key] => Ok(key.id),
        several => Err(AdminError::Ambiguous {
            prefix: crate::error::quoted(text),
            ids: several
                .iter()
                .map(|key| key.id.to_string())
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

/// A key's state at `now`: active, expired or revoked.
fn status(key: &KeyRecord, now: DateTime<Utc>) -> &'static str {
    if key.revoked_at.is_some() {
        "revoked"
    } else if key.is_active(now) {
        "active"
    } else {
        "expired"
    }
}

fn optional_time(at: Option<DateTime<Utc>>) -> String {
    at.map_or_else(|| "-".into(), duration::rfc3339)
}

/// A new key on stdout (alone, so `KEY=$(ctxd key create …)` works, or as JSON), and a
/// note on stderr that it is shown only once.
fn new_key_output(
    id: i64,
    tenant: &str,
    key: &str,
    expires_at: Option<DateTime<Utc>>,
    json: bool,
) -> String {
    let expiry = expires_at.map_or_else(
        || "does not expire".into(),
        |at| format!("expires at {}", duration::rfc3339(at)),
    );
    eprintln!(
        "API key {id} for tenant {tenant:?} ({expiry}) printed {}; it is shown only once.",
        if json { "in the JSON" } else { "above" }
    );
    if json {
        let object = json!({
            "id": id,
            "tenant": tenant,
            "key": key,
            "prefix": auth::key_prefix(key),
            "expires_at": expires_at.map(duration::rfc3339),
        });
        format!("{object}\n")
    } else {
        format!("{key}\n")
    }
}

fn tenant_listing(tenants: &[TenantRecord], json: bool) -> String {
    if json {
        return tenants
            .iter()
            .map(|tenant| {
                let object = json!({
                    "id": tenant.id,
                    "name": tenant.name,
                    "created_at": duration::rfc3339(tenant.created_at),
                    "active_keys": tenant.active_keys,
                });
                format!("{object}\n")
            })
            .collect();
    }
    let rows: Vec<Vec<String>> = tenants
        .iter()
        .map(|tenant| {
            vec![
                tenant.name.clone(),
                tenant.id.to_string(),
                duration::rfc3339(tenant.created_at),
                tenant.active_keys.to_string(),
            ]
        })
        .collect();
    table::render(&["NAME", "ID", "CREATED", "ACTIVE KEYS"], &rows)
}

fn key_json(key: &KeyRecord, now: DateTime<Utc>) -> serde_json::Value {
    json!({
        "id": key.id,
        "tenant": key.tenant,
        "prefix": key.prefix,
        "created_at": duration::rfc3339(key.created_at),
        "expires_at": key.expires_at.map(duration::rfc3339),
        "revoked_at": key.revoked_at.map(duration::rfc3339),
        "status": status(key, now),
    })
}

fn key_listing(keys: &[KeyRecord], now: DateTime<Utc>, json: bool) -> String {
    if json {
        return keys
            .iter()
            .map(|key| format!("{}\n", key_json(key, now)))
            .collect();
    }
    let rows: Vec<Vec<String>> = keys
        .iter()
        .map(|key| {
            vec![
                key.id.to_string(),
                key.tenant.clone(),
                key.prefix.clone(),
                duration::rfc3339(key.created_at),
                optional_time(key.expires_at),
                optional_time(key.revoked_at),
                status(key, now).to_string(),
            ]
        })
        .collect();
    table::render(
        &[
            "ID", "TENANT", "PREFIX", "CREATED", "EXPIRES", "REVOKED", "STATUS",
        ],
        &rows,
    )
}

fn revoked_output(key: &KeyRecord, json: bool) -> String {
    if json {
        return format!("{}\n", key_json(key, Utc::now()));
    }
    format!(
        "revoked key {} ({}) of tenant {:?} at {}; every server refuses it within {} s\n",
        key.id,
        key.prefix,
        key.tenant,
        optional_time(key.revoked_at),
        CACHE_TTL.as_secs()
    )
}
