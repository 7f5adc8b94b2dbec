//! API keys and tenant resolution. A key is `ctxd_` followed by 64 hex digits; only its
//! SHA-256 is stored. Lookups are cached for at most [`CACHE_TTL`] (5 s) so a request
//! costs no extra query in the steady state: a key revoked on any replica (or with
//! `ctxd key revoke`) is refused by every replica within 5 s of the revocation's commit,
//! and a key that expires is refused from its expiry on (the cache keeps a key no
//! longer than it has left).
//!
//! Whether a call without a key is served (as the `default` tenant) is a start-up
//! setting, [`AnonymousAccess`], and nothing else: neither the key table nor anything
//! done to it at run time changes it.
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::store::Store;

/// The longest a replica trusts what it read about a key: revocations take effect on
/// every replica within this time.
pub const CACHE_TTL: Duration = Duration::from_secs(5);
const CACHE_MAX_ENTRIES: usize = 10_000;

/// Characters of a key kept (and listed) to tell keys apart: `ctxd_` and 7 hex digits.
pub const PREFIX_CHARS: usize = 12;

/// Key hash → (its tenant, or none for an unknown key; until when that holds).
type KeyCache = HashMap<Vec<u8>, (Option<i64>, Instant)>;

/// Whether calls without an API key are served, as the `default` tenant. Decided from
/// the configuration alone, once, at start-up.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum AnonymousAccess {
    /// Served when the server listens on a loopback address (127.0.0.0/8, ::1) and runs on
    /// its own private PostgreSQL (no DATABASE_URL), refused otherwise: the zero-setup run
    /// on a developer's machine needs no key; a server reachable from the network, or a
    /// deployment on a real database (reachable through a proxy or sidecar on its host),
    /// always does (`Config::anonymous_mode`).
    #[default]
    Loopback,
    /// Always served (alongside keyed calls); on a non-loopback address only with
    /// `--insecure`.
    Allow,
    /// Never served: every call needs a key.
    Deny,
}

impl AnonymousAccess {
    /// Whether a server listening on `ip` serves calls without a key.
    pub fn serves(self, ip: IpAddr) -> bool {
        match self {
            AnonymousAccess::Loopback => ip.is_loopback(),
            AnonymousAccess::Allow => true,
            AnonymousAccess::Deny => false,
        }
    }

    /// The setting as it is spelled in flags and the TOML file.
    pub fn name(self) -> &'static str {
        match self {
            AnonymousAccess::Loopback => "loopback",
            AnonymousAccess::Allow => "allow",
            AnonymousAccess::Deny => "deny",
        }
    }
}

/// The tenant of each call: from its key, or `default` for a call without one when
/// anonymous access is on.
pub struct Auth {
    store: Store,
    default_tenant: i64,
    /// Whether a call without a key is served; fixed for the server's life.
    anonymous: bool,
    keys: Mutex<KeyCache>,
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

/// What a listing may show of a key: its first [`PREFIX_CHARS`] characters.
pub fn key_prefix(key: &str) -> String {
    key.chars().take(PREFIX_CHARS).collect()
}

/// Whether `text` has the form of a whole key: `ctxd_` and 64 lowercase hex digits.
pub fn is_key(text: &str) -> bool {
    text.strip_prefix("ctxd_").is_some_and(|hex| {
        hex.len() == 64
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

impl Auth {
    /// Authentication for a server whose anonymous access is `anonymous` (see
    /// [`AnonymousAccess::serves`]).
    pub async fn new(store: Store, anonymous: bool) -> Result<Auth> {
        let default_tenant = store.default_tenant().await?;
        Ok(Auth {
            store,
            default_tenant,
            anonymous,
            keys: Mutex::new(HashMap::new()),
        })
    }

    /// The tenant of a request, from its `authorization: Bearer <key>` metadata. Without
    /// a key, the default tenant when anonymous access is on.
    pub async fn tenant(&self, metadata: &tonic::metadata::MetadataMap) -> Result<i64> {
        let header = metadata.get("authorization").map(|value| value.to_str());
        let Some(header) = header else {
            return self.anonymous_tenant("`authorization: Bearer <key>`");
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
        self.tenant_of_key(key).await
    }

    /// The tenant of a call without a key: the default one when anonymous access is on;
    /// `how` says how a key is sent.
    pub fn anonymous_tenant(&self, how: &str) -> Result<i64> {
        if self.anonymous {
            return Ok(self.default_tenant);
        }
        Err(Error::Unauthenticated(format!(
            "this server requires an API key: send {how}"
        )))
    }

    /// The tenant of an HTTP call that may carry a ctxd key in a header (its bytes):
    /// without one, the anonymous tenant when keyless calls are served (`how` says how
    /// to give a key) and the call's `Host` is an IP address or a one-label name
    /// (`localhost`, a container's name) — a page whose own dotted name was rebound to
    /// this address (DNS rebinding) is refused.
    pub async fn tenant_of_header(
        &self,
        key: Option<&[u8]>,
        host: Option<&[u8]>,
        how: &str,
    ) -> Result<i64> {
        match key {
            None if !keyless_host(host) => Err(Error::Unauthenticated(format!(
                "host: keyless calls are served only at an IP address or a one-label name such as localhost: send {how}"
            ))),
            None => self.anonymous_tenant(how),
            Some(bytes) => {
                let key = std::str::from_utf8(bytes).map_err(|_| {
                    Error::Unauthenticated("the x-ctxd-key header is not a ctxd key".into())
                })?;
                self.tenant_of_key(key.trim()).await
            }
        }
    }

    /// The tenant `key` belongs to, when the key is active.
    pub async fn tenant_of_key(&self, key: &str) -> Result<i64> {
        let hash = hash_key(key);
        if let Some(tenant) = self.cached_key(&hash) {
            return tenant.ok_or_else(unknown_key);
        }
        // Taken before the read, so an entry never outlives a revocation committed after
        // it by more than the cache time.
        let asked = Instant::now();
        let active = self.store.active_key(&hash).await?;
        let trusted_for = active
            .and_then(|key| key.expires_in)
            .map_or(CACHE_TTL, |left| left.min(CACHE_TTL));
        let tenant = active.map(|key| key.tenant_id);
        let mut keys = self
            .keys
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if keys.len() >= CACHE_MAX_ENTRIES {
            keys.clear();
        }
        keys.insert(hash, (tenant, asked + trusted_for));
        tenant.ok_or_else(unknown_key)
    }

    fn cached_key(&self, hash: &[u8]) -> Option<Option<i64>> {
        let keys = self
            .keys
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        keys.get(hash)
            .filter(|(_, until)| Instant::now() < *until)
            .map(|(tenant, _)| *tenant)
    }
}

fn unknown_key() -> Error {
    Error::Unauthenticated("the API key is not valid, was revoked or has expired".into())
}

/// Whether an HTTP call's `Host` (its bytes) may be served without a key: absent, an
/// IP address (v4, or v6 in brackets), or a name of one label (`localhost`, a
/// container's or host's short name), with or without a port — never a dotted name, as
/// a web page's own would be, that it could have rebound to this address.
pub fn keyless_host(host: Option<&[u8]>) -> bool {
    let Some(host) = host else {
        return true;
    };
    let Ok(host) = std::str::from_utf8(host) else {
        return false;
    };
    let name = match host.strip_prefix('[') {
        Some(rest) => match rest.split_once(']') {
            Some((inside, port)) if port.is_empty() || port.starts_with(':') => inside,
            _ => return false,
        },
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    let one_label = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    one_label || name.parse::<std::net::IpAddr>().is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyless_calls_are_served_at_addresses_and_short_names_not_at_dotted_names() {
        for host in [
            "127.0.0.1:8081",
            "127.0.0.1",
            "10.1.2.3:80",
            "[::1]:8081",
            "[::1]",
            "localhost:8081",
            "LOCALHOST",
            "ctxd:8080",
            "build-runner",
        ] {
            assert!(keyless_host(Some(host.as_bytes())), "{host}");
        }
        for host in [
            "evil.example:8081",
            "evil.example",
            "127.0.0.1.evil.example",
            "localhost.evil.example:80",
            "[::1",
            "[::1]x",
            "",
            ":8080",
            "host name",
        ] {
            assert!(!keyless_host(Some(host.as_bytes())), "{host}");
        }
        assert!(!keyless_host(Some(b"\xff")));
        assert!(keyless_host(None));
    }

    #[test]
    fn loopback_serves_anonymous_calls_only_on_loopback_addresses() {
        let loopback: IpAddr = "127.0.0.1".parse().unwrap();
        let v6_loopback: IpAddr = "::1".parse().unwrap();
        let any: IpAddr = "0.0.0.0".parse().unwrap();
        let lan: IpAddr = "10.1.2.3".parse().unwrap();
        assert!(AnonymousAccess::Loopback.serves(loopback));
        assert!(AnonymousAccess::Loopback.serves(v6_loopback));
        assert!(!AnonymousAccess::Loopback.serves(any));
        assert!(!AnonymousAccess::Loopback.serves(lan));
        assert!(AnonymousAccess::Allow.serves(lan));
        assert!(!AnonymousAccess::Deny.serves(loopback));
    }

    #[test]
    fn keys_are_recognised_and_prefixes_are_short() {
        let key = generate_key().unwrap();
        assert!(is_key(&key));
        assert!(!is_key(&key[..60]));
        assert!(!is_key(&key.to_uppercase()));
        assert_eq!(key_prefix(&key).len(), PREFIX_CHARS);
        assert!(key.starts_with(&key_prefix(&key)));
    }
}
