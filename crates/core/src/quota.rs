//! Per-tenant quotas: the settings (server defaults, a tenant's overrides), the token
//! bucket the two rates use, and the decisions "does this fit". Pure: the caller passes
//! the time (`now`) and the counts; the service keeps the buckets and reads the counts.
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::error::Error;

/// Highest request rate a quota may set, per second.
pub const MAX_REQUESTS_PER_SEC: f64 = 1_000_000.0;
/// Highest request burst, appended bytes per minute, live sessions and stored bytes a
/// quota may set (about 10^15: exact in an `f64`, far below `i64::MAX`).
pub const MAX_QUOTA_VALUE: u64 = 1 << 50;
/// Smallest non-zero request rate: one request a day (slower is no rate).
pub const MIN_REQUESTS_PER_SEC: f64 = 1.0 / 86_400.0;

/// A quota, named as its setting (`--quota-…`, the `[quota]` TOML table, the
/// QuotaFailure subject and the `ctxd.quota.limit` label).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Quota {
    RequestsPerSec,
    AppendBytesPerMin,
    LiveSessions,
    StoredBytes,
}

impl Quota {
    /// The name a client and an operator see.
    pub fn name(self) -> &'static str {
        match self {
            Quota::RequestsPerSec => "quota_requests_per_sec",
            Quota::AppendBytesPerMin => "quota_append_bytes_per_min",
            Quota::LiveSessions => "quota_live_sessions",
            Quota::StoredBytes => "quota_stored_bytes",
        }
    }

    /// RESOURCE_EXHAUSTED for this quota, with how long until there is room (rates).
    fn exceeded(self, message: String, retry_after: Option<Duration>) -> Error {
        Error::ResourceExhausted {
            limit: self.name(),
            message,
            retry_after,
        }
    }
}

/// The quotas in force for a tenant; 0 turns one off.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Quotas {
    /// Requests (RPCs) per second, refilled continuously.
    pub requests_per_sec: f64,
    /// Requests admitted at once after a quiet spell; 0: one second's worth (at least 1).
    pub requests_burst: u64,
    /// Bytes of text AppendTurn may add per minute (also the largest burst).
    pub append_bytes_per_min: u64,
    /// Sessions the tenant may hold.
    pub live_sessions: u64,
    /// Bytes of text all the tenant's sessions may hold together.
    pub stored_bytes: u64,
}

/// A tenant's own quotas; `None` keeps the server's default.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct QuotaOverrides {
    pub requests_per_sec: Option<f64>,
    pub requests_burst: Option<u64>,
    pub append_bytes_per_min: Option<u64>,
    pub live_sessions: Option<u64>,
    pub stored_bytes: Option<u64>,
}

impl QuotaOverrides {
    /// Whether no quota is overridden.
    pub fn is_empty(&self) -> bool {
        *self == QuotaOverrides::default()
    }
}

impl Quotas {
    /// These defaults with a tenant's overrides applied.
    pub fn with(&self, overrides: &QuotaOverrides) -> Quotas {
        Quotas {
            requests_per_sec: overrides.requests_per_sec.unwrap_or(self.requests_per_sec),
            requests_burst: overrides.requests_burst.unwrap_or(self.requests_burst),
            append_bytes_per_min: overrides
                .append_bytes_per_min
                .unwrap_or(self.append_bytes_per_min),
            live_sessions: overrides.live_sessions.unwrap_or(self.live_sessions),
            stored_bytes: overrides.stored_bytes.unwrap_or(self.stored_bytes),
        }
    }

    /// Every value within its bounds; the error names the setting (`prefix` and its
    /// name, e.g. `quota.requests_per_sec`).
    pub fn validate(&self, prefix: &str) -> Result<(), String> {
        check_rate(self.requests_per_sec)
            .map_err(|reason| format!("{prefix}requests_per_sec: {reason}"))?;
        for (name, value) in [
            ("requests_burst", self.requests_burst),
            ("append_bytes_per_min", self.append_bytes_per_min),
            ("live_sessions", self.live_sessions),
            ("stored_bytes", self.stored_bytes),
        ] {
            check_value(value).map_err(|reason| format!("{prefix}{name}: {reason}"))?;
        }
        Ok(())
    }

    /// The request bucket's size: the burst, or one second's worth (at least 1).
    pub fn request_capacity(&self) -> f64 {
        if self.requests_burst > 0 {
            self.requests_burst as f64
        } else {
            self.requests_per_sec.ceil().max(1.0)
        }
    }

    /// The bucket requests draw from; `None` when the rate is off.
    pub fn request_bucket(&self, now: Instant) -> Option<TokenBucket> {
        (self.requests_per_sec > 0.0)
            .then(|| TokenBucket::new(self.request_capacity(), self.requests_per_sec, now))
    }

    /// The bucket appended bytes draw from (a minute's worth); `None` when off.
    pub fn append_bucket(&self, now: Instant) -> Option<TokenBucket> {
        (self.append_bytes_per_min > 0).then(|| {
            let per_min = self.append_bytes_per_min as f64;
            TokenBucket::new(per_min, per_min / 60.0, now)
        })
    }
}

/// A request rate within its bounds: 0 (off) or one a day to a million a second.
pub fn check_rate(rate: f64) -> Result<(), String> {
    if rate == 0.0 || (MIN_REQUESTS_PER_SEC..=MAX_REQUESTS_PER_SEC).contains(&rate) {
        Ok(())
    } else {
        Err(format!(
            "must be 0 (off) or from {MIN_REQUESTS_PER_SEC:.6} to {MAX_REQUESTS_PER_SEC}"
        ))
    }
}

/// A count or size within its bounds: 0 (off) to [`MAX_QUOTA_VALUE`].
pub fn check_value(value: u64) -> Result<(), String> {
    if value <= MAX_QUOTA_VALUE {
        Ok(())
    } else {
        Err(format!(
            "must be at most {MAX_QUOTA_VALUE} (0 turns it off)"
        ))
    }
}

/// A token bucket: holds up to `capacity` tokens, refilled at `rate` per second; a take
/// of `n` succeeds when `n` tokens are there, and otherwise takes nothing and says how
/// long until they are.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TokenBucket {
    capacity: f64,
    rate: f64,
    tokens: f64,
    at: Instant,
}

/// Why a take failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// The tokens are there after this wait.
    RetryAfter(Duration),
    /// More than the bucket ever holds: never admitted.
    TooLarge,
}

impl TokenBucket {
    /// A full bucket at `now`. `capacity` and `rate` must be positive and finite.
    pub fn new(capacity: f64, rate: f64, now: Instant) -> TokenBucket {
        TokenBucket {
            capacity,
            rate,
            tokens: capacity,
            at: now,
        }
    }

    /// Whether this bucket has the given size and rate (a changed quota makes a new one).
    pub fn has_shape(&self, capacity: f64, rate: f64) -> bool {
        self.capacity == capacity && self.rate == rate
    }

    /// Takes `amount` tokens at `now`, or nothing. Time never runs backwards here: a
    /// `now` before the last one counts as no time passing.
    pub fn take(&mut self, amount: f64, now: Instant) -> Result<(), Refused> {
        self.refill(now);
        if amount > self.capacity {
            return Err(Refused::TooLarge);
        }
        if amount <= self.tokens {
            self.tokens -= amount;
            return Ok(());
        }
        let wait = (amount - self.tokens) / self.rate;
        // Rounded up to the millisecond, so a client waiting exactly that long finds room.
        let wait = Duration::try_from_secs_f64(wait)
            .unwrap_or(Duration::MAX)
            .saturating_add(Duration::from_millis(1));
        Err(Refused::RetryAfter(wait))
    }

    fn refill(&mut self, now: Instant) {
        let elapsed = now.saturating_duration_since(self.at).as_secs_f64();
        // Multiplied by a finite rate, a finite elapsed time: at worst +inf, clamped.
        self.tokens = (self.tokens + elapsed * self.rate).min(self.capacity);
        self.at = self.at.max(now);
    }
}

/// Admits one request from `bucket` (none: no rate) or says how long to wait.
pub fn admit_request(
    bucket: Option<&mut TokenBucket>,
    quotas: &Quotas,
    now: Instant,
) -> Result<(), Error> {
    let Some(bucket) = bucket else {
        return Ok(());
    };
    bucket.take(1.0, now).map_err(|refused| {
        let retry_after = match refused {
            Refused::RetryAfter(wait) => Some(wait),
            Refused::TooLarge => None,
        };
        Quota::RequestsPerSec.exceeded(
            format!(
                "this tenant's request rate is over its quota of {} per second, burst {} \
                 (quota_requests_per_sec); retry after the delay in RetryInfo",
                quotas.requests_per_sec,
                quotas.request_capacity()
            ),
            retry_after,
        )
    })
}

/// Admits an append of `bytes` from `bucket` (none: no rate) or says how long to wait;
/// an append larger than a minute's worth is never admitted.
pub fn admit_append_bytes(
    bucket: Option<&mut TokenBucket>,
    quotas: &Quotas,
    bytes: u64,
    now: Instant,
) -> Result<(), Error> {
    let Some(bucket) = bucket else {
        return Ok(());
    };
    let per_min = quotas.append_bytes_per_min;
    bucket
        .take(bytes as f64, now)
        .map_err(|refused| match refused {
            Refused::RetryAfter(wait) => Quota::AppendBytesPerMin.exceeded(
                format!(
                    "this tenant appends more than its quota of {per_min} bytes of text per minute \
                 (quota_append_bytes_per_min); retry after the delay in RetryInfo"
                ),
                Some(wait),
            ),
            Refused::TooLarge => Quota::AppendBytesPerMin.exceeded(
                format!(
                    "this append carries {bytes} bytes of text, more than this tenant's quota of \
                 {per_min} bytes per minute (quota_append_bytes_per_min); send smaller appends"
                ),
                None,
            ),
        })
}

/// Whether the tenant, holding `live` sessions, may create one more.
pub fn check_live_sessions(quotas: &Quotas, live: u64) -> Result<(), Error> {
    let limit = quotas.live_sessions;
    if limit == 0 || live < limit {
        return Ok(());
    }
    Err(live_sessions_full(live, limit))
}

/// RESOURCE_EXHAUSTED for a create by a tenant holding `live` sessions, its quota
/// `limit` or more (counted where the create is decided, under the tenant's lock).
pub fn live_sessions_full(live: u64, limit: u64) -> Error {
    Quota::LiveSessions.exceeded(
        format!(
            "this tenant holds {live} sessions, its quota (quota_live_sessions) is {limit}; \
             delete sessions it no longer needs"
        ),
        None,
    )
}

/// Whether the tenant, holding `stored` bytes of text, may append `adding` more.
pub fn check_stored_bytes(quotas: &Quotas, stored: u64, adding: u64) -> Result<(), Error> {
    let limit = quotas.stored_bytes;
    let after = stored.saturating_add(adding);
    if limit == 0 || after <= limit {
        return Ok(());
    }
    Err(Quota::StoredBytes.exceeded(
        format!(
            "this tenant's sessions would hold {after} bytes of text, over its quota of {limit} \
             (quota_stored_bytes); delete sessions it no longer needs"
        ),
        None,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_refused_take_takes_nothing_and_waits_as_long_as_the_refill() {
        let start = Instant::now();
        let mut bucket = TokenBucket::new(2.0, 0.5, start);
        assert_eq!(bucket.take(1.0, start), Ok(()));
        assert_eq!(bucket.take(1.0, start), Ok(()));
        let Err(Refused::RetryAfter(wait)) = bucket.take(1.0, start) else {
            panic!("an empty bucket admitted a take");
        };
        assert_eq!(wait, Duration::from_millis(2001));
        assert!(
            bucket
                .take(1.0, start + Duration::from_millis(1999))
                .is_err()
        );
        assert_eq!(bucket.take(1.0, start + wait), Ok(()));
        assert_eq!(bucket.take(3.0, start + wait * 10), Err(Refused::TooLarge));
    }

    #[test]
    fn zero_turns_a_quota_off_and_overrides_replace_defaults() {
        let now = Instant::now();
        let defaults = Quotas {
            requests_per_sec: 5.0,
            ..Quotas::default()
        };
        assert!(defaults.append_bucket(now).is_none());
        assert_eq!(defaults.request_capacity(), 5.0);
        let tenant = defaults.with(&QuotaOverrides {
            requests_per_sec: Some(0.0),
            live_sessions: Some(2),
            ..QuotaOverrides::default()
        });
        assert!(tenant.request_bucket(now).is_none());
        assert!(check_live_sessions(&tenant, 1).is_ok());
        let error = check_live_sessions(&tenant, 2).unwrap_err();
        assert!(error.to_string().contains("quota_live_sessions"), "{error}");
        assert!(check_stored_bytes(&tenant, u64::MAX, u64::MAX).is_ok());
        let small = Quotas {
            stored_bytes: 10,
            ..Quotas::default()
        };
        assert!(check_stored_bytes(&small, 4, 6).is_ok());
        assert!(check_stored_bytes(&small, u64::MAX, 1).is_err());
    }

    #[test]
    fn values_out_of_bounds_are_refused_naming_the_setting() {
        let quotas = Quotas {
            requests_per_sec: f64::NAN,
            ..Quotas::default()
        };
        let error = quotas.validate("quota.").unwrap_err();
        assert!(error.starts_with("quota.requests_per_sec"), "{error}");
        let quotas = Quotas {
            stored_bytes: u64::MAX,
            ..Quotas::default()
        };
        let error = quotas.validate("quota.").unwrap_err();
        assert!(error.starts_with("quota.stored_bytes"), "{error}");
        assert!(Quotas::default().validate("quota.").is_ok());
        assert!(check_rate(f64::INFINITY).is_err());
        assert!(check_rate(-1.0).is_err());
        assert!(check_rate(0.01).is_ok());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// In every window of a run of takes (from any take to any later one), what was
        /// admitted is at most the bucket's size plus what the window's time refilled.
        #[test]
        fn never_admits_more_than_burst_plus_rate_times_elapsed(
            capacity in 1u64..10_000,
            rate_milli in 1u64..5_000_000,
            takes in proptest::collection::vec((0u64..3_000, 1u64..2_000), 1..200),
        ) {
            let rate = rate_milli as f64 / 1000.0;
            let start = Instant::now();
            let mut bucket = TokenBucket::new(capacity as f64, rate, start);
            let mut now = start;
            // (when, admitted by then, before this take)
            let mut history: Vec<(Instant, f64)> = Vec::new();
            let mut admitted = 0f64;
            for (step_ms, amount) in takes {
                now += Duration::from_millis(step_ms);
                history.push((now, admitted));
                if bucket.take(amount as f64, now).is_ok() {
                    admitted += amount as f64;
                }
                for (since, before) in &history {
                    let window = admitted - before;
                    let bound = capacity as f64 + rate * (now - *since).as_secs_f64();
                    prop_assert!(window <= bound * (1.0 + 1e-9), "{} > {}", window, bound);
                }
            }
        }

        /// A refused take succeeds once the delay it names has passed, and not much before.
        #[test]
        fn a_refused_take_fits_after_its_delay(
            capacity in 1u64..1_000,
            rate_milli in 10u64..1_000_000,
            drain in 0u64..1_000,
            amount in 1u64..1_000,
        ) {
            let rate = rate_milli as f64 / 1000.0;
            let start = Instant::now();
            let mut bucket = TokenBucket::new(capacity as f64, rate, start);
            let _ = bucket.take(drain.min(capacity) as f64, start);
            match bucket.take(amount as f64, start) {
                Ok(()) => {}
                Err(Refused::TooLarge) => prop_assert!(amount > capacity),
                Err(Refused::RetryAfter(wait)) => {
                    let mut later = bucket;
                    prop_assert_eq!(later.take(amount as f64, start + wait), Ok(()));
                    if wait > Duration::from_millis(2) {
                        let early = start + wait - Duration::from_millis(2);
                        prop_assert!(bucket.take(amount as f64, early).is_err());
                    }
                }
            }
        }

        /// Huge sizes, rates, amounts and gaps neither wrap nor panic; the bucket never
        /// holds more than its size.
        #[test]
        fn huge_values_saturate(
            capacity in 1u64..=MAX_QUOTA_VALUE,
            rate in MIN_REQUESTS_PER_SEC..=MAX_REQUESTS_PER_SEC,
            gap_secs in 0u64..=(u32::MAX as u64),
            amount in 0u64..=u64::MAX,
            stored in 0u64..=u64::MAX,
        ) {
            let start = Instant::now();
            let mut bucket = TokenBucket::new(capacity as f64, rate, start);
            let _ = bucket.take(capacity as f64, start);
            let later = start.checked_add(Duration::from_secs(gap_secs)).unwrap_or(start);
            let result = bucket.take(amount as f64, later);
            prop_assert!(bucket.tokens <= capacity as f64 && bucket.tokens >= 0.0);
            if amount as f64 > capacity as f64 {
                prop_assert_eq!(result, Err(Refused::TooLarge));
            }
            let quotas = Quotas { stored_bytes: capacity, ..Quotas::default() };
            let fits = check_stored_bytes(&quotas, stored, amount).is_ok();
            prop_assert_eq!(fits, stored.checked_add(amount).is_some_and(|sum| sum <= capacity));
        }
    }
}
