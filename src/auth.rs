//! API keys and tenant resolution. A key is `ctxd_` followed by 64 hex digits; only its
//! SHA-256 is stored. Lookups are cached for a few seconds so a request costs no extra
//! query in the steady state; a revoked key stops working within that time.
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::store::Store;

const CACHE_TTL: Duration = Duration::from_secs(5);
const CACHE_MAX_ENTRIES: usize = 10_000;

/// Key hash → (its tenant, or none for an unknown key; when looked up).
type KeyCache = HashMap<Vec<u8>, (Option<i64>, Instant)>;

pub struct Auth {
    store: Store,
    default_tenant: i64,
    keys: Mutex<KeyCache>,
    any_keys: Mutex<Option<(bool, Instant)>>,
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
    pub async fn new(store: Store) -> Result<Auth> {
        let default_tenant = store.default_tenant().await?;
        Ok(Auth {
            store,
            default_tenant,
            keys: Mutex::new(HashMap::new()),
            any_keys: Mutex::new(None),
        })
    }

    /// The tenant of a request, from its `authorization: Bearer <key>` metadata. Without
    /// a key, the default tenant, unless keys exist.
    pub async fn tenant(&self, metadata: &tonic::metadata::MetadataMap) -> Result<i64> {
        let header = metadata.get("authorization").map(|value| value.to_str());
        let Some(header) = header else {
            if self.any_keys().await? {
                return Err(Error::Unauthenticated(
                    "this server requires an API key: send `authorization: Bearer <key>`".into(),
                ));
            }
            return Ok(self.default_tenant);
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

    async fn any_keys(&self) -> Result<bool> {
        {
            let cached = self
                .any_keys
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            if let Some((any, at)) = *cached
                && at.elapsed() < CACHE_TTL
            {
                return Ok(any);
            }
        }
        let any = self.store.any_api_keys().await?;
        *self
            .any_keys
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some((any, Instant::now()));
        Ok(any)
    }
}

fn unknown_key() -> Error {
    Error::Unauthenticated("the API key is not valid or was revoked".into())
}
