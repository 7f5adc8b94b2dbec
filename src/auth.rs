//! API keys and tenant resolution. A key is `ctxd_` followed by 64 hex digits; only its
//! SHA-256 is stored. Lookups are cached for a few seconds so a request costs no extra
//! query in the steady state; a revoked key stops working within that time.
//!
//! Whether a call without a key is served (as the `default` tenant) is decided at
//! start-up by [`AnonymousAccess`] and can only ever close at run time: a server that has
//! seen a key never serves anonymous calls again, whatever happens to the key table.
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::store::Store;

const CACHE_TTL: Duration = Duration::from_secs(5);
const CACHE_MAX_ENTRIES: usize = 10_000;

/// Key hash → (its tenant, or none for an unknown key; when looked up).
type KeyCache = HashMap<Vec<u8>, (Option<i64>, Instant)>;

/// Whether calls without an API key are served, as the `default` tenant.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum AnonymousAccess {
    /// Served only if no API key had ever been created when the server started, and
    /// only until one is: the first key closes anonymous access for good.
    #[default]
    Auto,
    /// Always served (alongside keyed calls), even when keys exist.
    Allow,
    /// Never served: every call needs a key.
    Deny,
}

pub struct Auth {
    store: Store,
    default_tenant: i64,
    mode: AnonymousAccess,
    /// Whether a call without a key is served now; only ever goes from true to false.
    anonymous_open: AtomicBool,
    keys: Mutex<KeyCache>,
    /// When the key table was last seen without any key (Auto mode only).
    no_keys_seen: Mutex<Option<Instant>>,
}

/// A new random API key.
pub fn generate_key() -> std::result::Result<String, getrandom::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)?;
    Ok(format!("ctxd_{}", hex::encode(bytes)))
}

pub fn hash_key(key: &str) -> Vec<u8> {
    Sha256::digest(key.as_bytes()).to_vec()
}

/// What a listing may show of a key.
pub fn key_prefix(key: &str) -> String {
    key.chars().take(12).collect()
}

impl Auth {
    /// Decides anonymous access for this server's life: with `Auto`, open only if no key
    /// (active or revoked) exists now.
    pub async fn new(store: Store, mode: AnonymousAccess) -> Result<Auth> {
        let default_tenant = store.default_tenant().await?;
        let open = match mode {
            AnonymousAccess::Allow => true,
            AnonymousAccess::Deny => false,
            AnonymousAccess::Auto => !store.any_api_key_ever().await?,
        };
        Ok(Auth {
            store,
            default_tenant,
            mode,
            anonymous_open: AtomicBool::new(open),
            keys: Mutex::new(HashMap::new()),
            no_keys_seen: Mutex::new(open.then(Instant::now)),
        })
    }

    /// Whether a call without a key would be served right now.
    pub fn serves_anonymous(&self) -> bool {
        self.anonymous_open.load(Ordering::Acquire)
    }

    /// The tenant of a request, from its `authorization: Bearer <key>` metadata. Without
    /// a key, the default tenant while anonymous access is open.
    pub async fn tenant(&self, metadata: &tonic::metadata::MetadataMap) -> Result<i64> {
        let header = metadata.get("authorization").map(|value| value.to_str());
        let Some(header) = header else {
            if self.anonymous_still_open().await? {
                return Ok(self.default_tenant);
            }
            return Err(Error::Unauthenticated(
                "this server requires an API key: send `authorization: Bearer <key>`".into(),
            ));
        };
        let key = header
            .ok()
            .and_then(|value| {
                value
                    .strip_prefix("Bearer ")
                    .or_else(|| value.strip_prefix("bearer "))
            })
            .map(str::trim)
            .ok_or_else(|| {
                Error::Unauthenticated("the authorization header must be `Bearer <key>`".into())
            })?;
        let hash = hash_key(key);
        if let Some(tenant) = self.cached_key(&hash) {
            return tenant.ok_or_else(unknown_key);
        }
        let tenant = self.store.tenant_for_key(&hash).await?;
        let mut keys = self
            .keys
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if keys.len() >= CACHE_MAX_ENTRIES {
            keys.clear();
        }
        keys.insert(hash, (tenant, Instant::now()));
        tenant.ok_or_else(unknown_key)
    }

    fn cached_key(&self, hash: &[u8]) -> Option<Option<i64>> {
        let keys = self
            .keys
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        keys.get(hash)
            .filter(|(_, at)| at.elapsed() < CACHE_TTL)
            .map(|(tenant, _)| *tenant)
    }

    /// Whether anonymous access is still open. In `Auto` mode, the key table is looked at
    /// again every few seconds; the first key seen closes access for good (an error
    /// reading it refuses the call, and closes nothing).
    async fn anonymous_still_open(&self) -> Result<bool> {
        if !self.serves_anonymous() {
            return Ok(false);
        }
        if self.mode != AnonymousAccess::Auto {
            return Ok(true);
        }
        let fresh = self
            .no_keys_seen
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .is_some_and(|at| at.elapsed() < CACHE_TTL);
        if fresh {
            return Ok(true);
        }
        if self.store.any_api_key_ever().await? {
            self.anonymous_open.store(false, Ordering::Release);
            tracing::info!("an API key exists: calls without a key are refused from now on");
            return Ok(false);
        }
        *self
            .no_keys_seen
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(Instant::now());
        Ok(true)
    }
}

fn unknown_key() -> Error {
    Error::Unauthenticated("the API key is not valid or was revoked".into())
}
