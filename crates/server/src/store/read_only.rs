//! A database that turned read-only under ctxd's connections: a primary demoted in a
//! failover, or connections that landed on a standby while a router still sent them
//! there. A statement that meets it (SQLSTATE 25006) answers UNAVAILABLE (see
//! `error`), and every pooled connection opened before that answer is closed instead of
//! being handed out again, so the next request connects anew — through HAProxy or a
//! writer endpoint, to the new primary — rather than failing on the old one until the
//! server or a router cuts it.
//!
//! Process-wide: one ctxd process serves one database.
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// When a read-only answer was last seen, in microseconds after [`epoch`]; 0: never.
static SEEN: AtomicU64 = AtomicU64::new(0);

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// Records that a statement met a read-only database now.
pub(super) fn seen() {
    let micros = u64::try_from(epoch().elapsed().as_micros()).unwrap_or(u64::MAX);
    SEEN.store(micros.max(1), Ordering::Relaxed);
}

/// Whether a pooled connection `age` old was opened before the last read-only answer
/// (and so may still be on the server that gave it).
pub(super) fn stale(age: Duration) -> bool {
    let seen = SEEN.load(Ordering::Relaxed);
    let since = (seen != 0).then(|| {
        epoch()
            .elapsed()
            .saturating_sub(Duration::from_micros(seen))
    });
    opened_before(age, since)
}

/// The decision: a connection `age` old predates an answer seen `since` ago.
fn opened_before(age: Duration, since: Option<Duration>) -> bool {
    since.is_some_and(|since| age > since)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_older_than_the_read_only_answer_are_stale() {
        let ms = Duration::from_millis;
        assert!(
            !opened_before(ms(60_000), None),
            "never seen: nothing stale"
        );
        assert!(opened_before(ms(500), Some(ms(100))), "opened before it");
        assert!(!opened_before(ms(50), Some(ms(100))), "opened after it");
    }
}
