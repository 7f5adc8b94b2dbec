//! Per-tenant quotas in a replica: the tenant's quotas in force (the server's defaults
//! with its overrides from `tenant_quotas`, read at most every [`OVERRIDES_TTL`]), the
//! two rates' token buckets, and the stored-bytes count. The decisions are the core's
//! (`quota.rs`); this keeps the state they need.
//!
//! Across replicas: the rates are per replica (with R replicas a tenant can reach R ×
//! the rate; operators divide); live sessions are counted exactly by the create itself
//! (`Store::create_session_within`); stored bytes are the database's sum, read at most
//! every [`STORED_REFRESH`], plus what this replica admitted since — so a tenant can pass
//! its quota by at most what the other replicas admitted within that time.
mod settings;

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub use settings::QuotaArgs;

use crate::error::Result;
use crate::quota::{self, QuotaOverrides, Quotas, TokenBucket};
use crate::store::Store;

/// The longest a replica uses a tenant's overrides as it read them: a change made with
/// `ctxd tenant quota` applies on every replica within this time.
pub const OVERRIDES_TTL: Duration = crate::auth::CACHE_TTL;
/// The longest a replica uses a tenant's stored-bytes sum as it read it.
pub const STORED_REFRESH: Duration = Duration::from_secs(2);
/// Tenants whose state a replica keeps; past it the state starts over (tenants are made
/// by operators, so this is far above any real count).
const MAX_TENANTS: usize = 10_000;

/// One tenant's quota state in this replica.
#[derive(Default)]
struct TenantState {
    /// The overrides read, and until when they are used.
    overrides: Option<(QuotaOverrides, Instant)>,
    requests: Option<TokenBucket>,
    appends: Option<TokenBucket>,
    stored: Option<Stored>,
}

/// The tenant's stored bytes as last read, and what this replica admitted since.
struct Stored {
    sum: u64,
    until: Instant,
    since: u64,
}

/// The quotas of every tenant this replica serves.
pub struct QuotaGate {
    store: Store,
    defaults: Quotas,
    tenants: Mutex<HashMap<i64, TenantState>>,
}

impl QuotaGate {
    pub fn new(store: Store, defaults: Quotas) -> QuotaGate {
        QuotaGate {
            store,
            defaults,
            tenants: Mutex::new(HashMap::new()),
        }
    }

    /// The server's defaults.
    pub fn defaults(&self) -> &Quotas {
        &self.defaults
    }

    /// Runs `work` on the tenant's state, under the lock.
    fn with_state<T>(&self, tenant: i64, work: impl FnOnce(&mut TenantState) -> T) -> T {
        let mut tenants = self
            .tenants
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if tenants.len() >= MAX_TENANTS && !tenants.contains_key(&tenant) {
            tenants.clear();
        }
        work(tenants.entry(tenant).or_default())
    }

    /// The tenant's quotas in force: the defaults with its overrides, read from the
    /// database when the ones this replica holds are older than [`OVERRIDES_TTL`].
    pub async fn quotas(&self, tenant: i64) -> Result<Quotas> {
        let now = Instant::now();
        let cached = self.with_state(tenant, |state| {
            state
                .overrides
                .filter(|(_, until)| now < *until)
                .map(|(overrides, _)| overrides)
        });
        let overrides = match cached {
            Some(overrides) => overrides,
            None => {
                let overrides = self.store.tenant_quotas(tenant).await?;
                self.with_state(tenant, |state| {
                    state.overrides = Some((overrides, now + OVERRIDES_TTL));
                });
                overrides
            }
        };
        Ok(self.defaults.with(&overrides))
    }

    /// Admits one RPC of the tenant, or RESOURCE_EXHAUSTED (quota_requests_per_sec) with
    /// the wait until its bucket has room.
    pub async fn admit_request(&self, tenant: i64) -> Result<()> {
        let quotas = self.quotas(tenant).await?;
        let now = Instant::now();
        self.with_state(tenant, |state| {
            refit(&mut state.requests, quotas.request_bucket(now), |bucket| {
                bucket.has_shape(quotas.request_capacity(), quotas.requests_per_sec)
            });
            quota::admit_request(state.requests.as_mut(), &quotas, now)
        })
    }

    /// Admits an append of `bytes` of text: within the tenant's stored bytes and its
    /// appended bytes per minute, or RESOURCE_EXHAUSTED naming the quota (with RetryInfo
    /// for the rate). A refused append is charged nothing.
    pub async fn admit_append(&self, tenant: i64, bytes: u64) -> Result<()> {
        let quotas = self.quotas(tenant).await?;
        if quotas.stored_bytes == 0 && quotas.append_bytes_per_min == 0 {
            return Ok(());
        }
        if quotas.stored_bytes > 0 {
            self.refresh_stored(tenant).await?;
        }
        let now = Instant::now();
        self.with_state(tenant, |state| {
            if let Some(stored) = &state.stored
                && quotas.stored_bytes > 0
            {
                let held = stored.sum.saturating_add(stored.since);
                quota::check_stored_bytes(&quotas, held, bytes)?;
            }
            let per_min = quotas.append_bytes_per_min as f64;
            refit(&mut state.appends, quotas.append_bucket(now), |bucket| {
                bucket.has_shape(per_min, per_min / 60.0)
            });
            quota::admit_append_bytes(state.appends.as_mut(), &quotas, bytes, now)?;
            if let Some(stored) = &mut state.stored {
                stored.since = stored.since.saturating_add(bytes);
            }
            Ok(())
        })
    }

    /// Reads the tenant's stored bytes when this replica's sum is older than
    /// [`STORED_REFRESH`]. What this replica admitted before the read is in the sum
    /// (once committed) and leaves `since`; what it admits during the read stays.
    async fn refresh_stored(&self, tenant: i64) -> Result<()> {
        let now = Instant::now();
        let stale = self.with_state(tenant, |state| match &state.stored {
            Some(stored) if now < stored.until => None,
            Some(stored) => Some(stored.since),
            None => Some(0),
        });
        let Some(counted) = stale else {
            return Ok(());
        };
        let sum = self.store.tenant_stored_bytes(tenant).await?;
        self.with_state(tenant, |state| {
            let since = state
                .stored
                .as_ref()
                .map_or(0, |stored| stored.since.saturating_sub(counted));
            state.stored = Some(Stored {
                sum,
                until: now + STORED_REFRESH,
                since,
            });
        });
        Ok(())
    }
}

/// Keeps `bucket` when it still has the quota's shape, else puts `fresh` (a full bucket
/// of the new shape, or none when the quota is off).
fn refit(
    bucket: &mut Option<TokenBucket>,
    fresh: Option<TokenBucket>,
    same_shape: impl Fn(&TokenBucket) -> bool,
) {
    match (&*bucket, &fresh) {
        (Some(current), Some(_)) if same_shape(current) => {}
        _ => *bucket = fresh,
    }
}
