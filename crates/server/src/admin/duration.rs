//! The durations and times admin commands take: `--expires-in 90d`, `--grace 1h30m`,
//! `--expires-at 2026-01-31T00:00:00Z`, each bounded.
use std::time::Duration;

use chrono::{DateTime, Utc};

/// The latest a key may be made to expire: ten years ahead.
pub const MAX_EXPIRY: Duration = Duration::from_secs(3650 * 86_400);
/// The longest grace period of a rotation: 30 days.
pub const MAX_GRACE: Duration = Duration::from_secs(30 * 86_400);

/// Parses `<number><unit>` runs (`s`, `m`, `h`, `d`, `w`; e.g. `90d`, `1h30m`) or a bare
/// `0`; `what` names the flag in errors.
pub fn parse(text: &str, what: &str) -> Result<Duration, String> {
    let text = text.trim();
    if text == "0" {
        return Ok(Duration::ZERO);
    }
    let invalid = || {
        format!(
            "{what}: {} is not a duration: write a number and a unit (s, m, h, d, w), e.g. 90d or 1h30m",
            crate::error::quoted(text)
        )
    };
    let mut total: u64 = 0;
    let mut number: Option<u64> = None;
    for c in text.chars() {
        if let Some(digit) = c.to_digit(10) {
            let so_far = number.unwrap_or(0);
            number = Some(
                so_far
                    .checked_mul(10)
                    .and_then(|n| n.checked_add(u64::from(digit)))
                    .ok_or_else(invalid)?,
            );
            continue;
        }
        let unit = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            'w' => 7 * 86_400,
            _ => return Err(invalid()),
        };
        let seconds = number.take().ok_or_else(invalid)?;
        total = seconds
            .checked_mul(unit)
            .and_then(|s| total.checked_add(s))
            .ok_or_else(invalid)?;
    }
    if number.is_some() || text.is_empty() {
        return Err(invalid());
    }
    Ok(Duration::from_secs(total))
}

/// A duration between `min` and `max`; `what` names the flag in errors.
pub fn bounded(text: &str, what: &str, min: Duration, max: Duration) -> Result<Duration, String> {
    let duration = parse(text, what)?;
    if duration < min || duration > max {
        return Err(format!(
            "{what}: must be between {} and {} seconds, not {}",
            min.as_secs(),
            max.as_secs(),
            duration.as_secs()
        ));
    }
    Ok(duration)
}

/// An RFC 3339 time after `now` and at most [`MAX_EXPIRY`] after it.
pub fn future_time(text: &str, what: &str, now: DateTime<Utc>) -> Result<DateTime<Utc>, String> {
    let at = DateTime::parse_from_rfc3339(text.trim())
        .map_err(|_| {
            format!(
                "{what}: {} is not an RFC 3339 time such as 2026-01-31T00:00:00Z",
                crate::error::quoted(text)
            )
        })?
        .with_timezone(&Utc);
    if at <= now {
        return Err(format!("{what}: {} is not in the future", rfc3339(at)));
    }
    if at > now + MAX_EXPIRY {
        return Err(format!(
            "{what}: {} is more than ten years ahead",
            rfc3339(at)
        ));
    }
    Ok(at)
}

/// A time as listings show it: UTC to the second, RFC 3339.
pub fn rfc3339(at: DateTime<Utc>) -> String {
    at.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_in_units_and_refuse_anything_else() {
        assert_eq!(parse("0", "--grace"), Ok(Duration::ZERO));
        assert_eq!(parse("90s", "--grace"), Ok(Duration::from_secs(90)));
        assert_eq!(parse("1h30m", "--grace"), Ok(Duration::from_secs(5400)));
        assert_eq!(
            parse("2w1d", "--grace"),
            Ok(Duration::from_secs(15 * 86_400))
        );
        for bad in [
            "",
            "5",
            "h",
            "1.5h",
            "-1h",
            "1y",
            "99999999999999999999s",
            "1h 2m",
        ] {
            let error = parse(bad, "--grace").unwrap_err();
            assert!(error.starts_with("--grace:"), "{bad}: {error}");
        }
        let error = bounded("31d", "--grace", Duration::ZERO, MAX_GRACE).unwrap_err();
        assert!(
            error.contains("--grace") && error.contains("2592000"),
            "{error}"
        );
        assert!(bounded("0", "--expires-in", Duration::from_secs(1), MAX_EXPIRY).is_err());
    }

    #[test]
    fn expiry_times_must_be_rfc3339_and_ahead() {
        let now = DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let at = future_time("2026-01-02T01:00:00+01:00", "--expires-at", now).unwrap();
        assert_eq!(rfc3339(at), "2026-01-02T00:00:00Z");
        for bad in [
            "2025-12-31T00:00:00Z",
            "2040-01-01T00:00:00Z",
            "tomorrow",
            "2026-01-02",
        ] {
            let error = future_time(bad, "--expires-at", now).unwrap_err();
            assert!(error.starts_with("--expires-at:"), "{bad}: {error}");
        }
    }
}
