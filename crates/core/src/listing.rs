//! Pages of a session listing (AIP-158): how many sessions a page holds, and the token
//! that continues a listing where its last page ended, under the filters it began with.
use sha2::{Digest, Sha256};

/// Sessions per page when the request names no size.
pub const DEFAULT_PAGE_SIZE: i64 = 50;
/// The most sessions one page holds; a larger request gets this many.
pub const MAX_PAGE_SIZE: i64 = 1000;
/// Metadata pairs one listing may filter by.
pub const MAX_METADATA_FILTERS: usize = 16;

/// Where a listing continues: after the session last active at `updated_micros` (Unix
/// microseconds) with internal id `id`, in (updated, id) descending order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cursor {
    pub updated_micros: i64,
    pub id: i64,
}

/// The page size in force for a requested one, or why it is refused.
pub fn page_size(requested: i32) -> Result<i64, &'static str> {
    match i64::from(requested) {
        size if size < 0 => Err("must not be negative"),
        0 => Ok(DEFAULT_PAGE_SIZE),
        size => Ok(size.min(MAX_PAGE_SIZE)),
    }
}

/// A digest of a listing's filters, each given as text: a token is valid only with the
/// filters it was issued under.
pub fn filter_digest(filters: &[&str]) -> String {
    let mut hash = Sha256::new();
    for filter in filters {
        hash.update((filter.len() as u64).to_le_bytes());
        hash.update(filter.as_bytes());
    }
    hash.finalize()[..8]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// The token continuing after `cursor` under filters of digest `digest`.
pub fn token(cursor: Cursor, digest: &str) -> String {
    format!("v1.{}.{}.{digest}", cursor.updated_micros, cursor.id)
}

/// The cursor a token names (none for the empty token, a listing's start), or why it is
/// refused.
pub fn read_token(token: &str, digest: &str) -> Result<Option<Cursor>, &'static str> {
    if token.is_empty() {
        return Ok(None);
    }
    let parts: Vec<&str> = token.split('.').collect();
    let [version, micros, id, issued] = parts.as_slice() else {
        return Err("is not a page token this server issued");
    };
    let (Ok(updated_micros), Ok(id)) = (micros.parse(), id.parse()) else {
        return Err("is not a page token this server issued");
    };
    if *version != "v1" {
        return Err("is not a page token this server issued");
    }
    if *issued != digest {
        return Err(
            "was issued for other filters: repeat the first request's filters, or start again without a token",
        );
    }
    Ok(Some(Cursor { updated_micros, id }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_sizes_default_clamp_and_refuse_negatives() {
        assert_eq!(page_size(0), Ok(DEFAULT_PAGE_SIZE));
        assert_eq!(page_size(7), Ok(7));
        assert_eq!(page_size(i32::MAX), Ok(MAX_PAGE_SIZE));
        assert!(page_size(-1).is_err());
    }

    #[test]
    fn a_token_continues_only_under_its_filters() {
        let digest = filter_digest(&["team=a", ""]);
        let cursor = Cursor {
            updated_micros: 1_795_000_000_000_000,
            id: 42,
        };
        let issued = token(cursor, &digest);
        assert_eq!(read_token(&issued, &digest), Ok(Some(cursor)));
        assert_eq!(read_token("", &digest), Ok(None));
        let other = filter_digest(&["team=b", ""]);
        assert!(
            read_token(&issued, &other)
                .unwrap_err()
                .contains("other filters")
        );
        for forged in ["v2.1.2.x", "v1.a.2.x", "v1.1.2", "garbage", "v1.1.2.3.4"] {
            assert!(read_token(forged, &digest).is_err(), "{forged}");
        }
    }

    #[test]
    fn filters_are_told_apart_by_their_boundaries() {
        assert_ne!(filter_digest(&["ab", "c"]), filter_digest(&["a", "bc"]));
    }
}
