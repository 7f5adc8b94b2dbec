//! ListSessions: a page of the tenant's sessions under a filter; the page size and the
//! token that continues a listing are the core's (`listing`).
use super::{Engine, SessionInfo};
use crate::error::{Error, Result, quoted};
use crate::listing::{self, Cursor, MAX_METADATA_FILTERS};
use crate::store::SessionFilter;
use crate::tree::Link;
use crate::validate::validate_session_id;

/// Longest metadata key and value a filter may name, in bytes.
const MAX_FILTER_KEY_BYTES: usize = 256;
const MAX_FILTER_VALUE_BYTES: usize = 4096;

/// A ListSessions request, its fields checked here.
#[derive(Debug, Clone, Default)]
pub struct ListRequest {
    pub page_size: i32,
    pub page_token: String,
    pub filter: SessionFilter,
}

/// One page: each session with its link to its parent, and the next page's token
/// (empty on the last page).
pub struct Listing {
    pub sessions: Vec<(SessionInfo, Option<Link>)>,
    pub next_page_token: String,
}

impl Engine {
    pub async fn list_sessions(&self, tenant_id: i64, request: ListRequest) -> Result<Listing> {
        let size = listing::page_size(request.page_size)
            .map_err(|reason| Error::invalid("page_size", reason))?;
        check_filter(&request.filter)?;
        let digest = digest(&request.filter);
        let cursor = listing::read_token(&request.page_token, &digest)
            .map_err(|reason| Error::invalid("page_token", reason))?;
        let after = match cursor {
            Some(cursor) => Some((from_micros(cursor.updated_micros)?, cursor.id)),
            None => None,
        };
        // One more than the page: whether another page follows.
        let mut listed = self
            .store
            .list_sessions(tenant_id, &request.filter, after, size + 1)
            .await?;
        let more = listed.len() as i64 > size;
        listed.truncate(size as usize);
        let next_page_token = match listed.last() {
            Some(last) if more => listing::token(
                Cursor {
                    updated_micros: last.session.updated_at.timestamp_micros(),
                    id: last.session.id,
                },
                &digest,
            ),
            _ => String::new(),
        };
        let mut sessions = Vec::with_capacity(listed.len());
        for entry in listed {
            let info = SessionInfo { row: entry.session };
            sessions.push((info, entry.link));
        }
        Ok(Listing {
            sessions,
            next_page_token,
        })
    }
}

fn check_filter(filter: &SessionFilter) -> Result<()> {
    if filter.metadata.len() > MAX_METADATA_FILTERS {
        return Err(Error::invalid(
            "metadata",
            format!("at most {MAX_METADATA_FILTERS} pairs"),
        ));
    }
    for (key, value) in &filter.metadata {
        if key.is_empty() || key.len() > MAX_FILTER_KEY_BYTES || key.contains('\0') {
            return Err(Error::invalid(
                "metadata",
                format!(
                    "keys must be 1 to {MAX_FILTER_KEY_BYTES} bytes without NUL, got {}",
                    quoted(key)
                ),
            ));
        }
        if value.len() > MAX_FILTER_VALUE_BYTES || value.contains('\0') {
            return Err(Error::invalid(
                format!("metadata[{}]", quoted(key)),
                format!("must be at most {MAX_FILTER_VALUE_BYTES} bytes without NUL"),
            ));
        }
    }
    for (field, id) in [
        ("parent_session_id", &filter.parent),
        ("forked_from_session_id", &filter.forked_from),
        ("id_prefix", &filter.id_prefix),
    ] {
        if let Some(id) = id {
            validate_session_id(id).map_err(|error| match error {
                Error::InvalidArgument { reason, .. } => Error::invalid(field, reason),
                other => other,
            })?;
        }
    }
    Ok(())
}

/// The filters as the token's digest sees them.
fn digest(filter: &SessionFilter) -> String {
    let mut pairs: Vec<String> = filter
        .metadata
        .iter()
        .map(|(key, value)| format!("{}:{key}={value}", key.len()))
        .collect();
    pairs.sort();
    let time = |at: &Option<chrono::DateTime<chrono::Utc>>| {
        at.map(|at| at.timestamp_micros().to_string())
            .unwrap_or_default()
    };
    let parts = [
        pairs.join("\n"),
        filter.parent.clone().unwrap_or_default(),
        filter.forked_from.clone().unwrap_or_default(),
        format!("{:?}", filter.finished),
        time(&filter.created_after),
        time(&filter.created_before),
        time(&filter.updated_after),
        time(&filter.updated_before),
        filter.id_prefix.clone().unwrap_or_default(),
    ];
    let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
    listing::filter_digest(&parts)
}

fn from_micros(micros: i64) -> Result<chrono::DateTime<chrono::Utc>> {
    chrono::DateTime::from_timestamp_micros(micros)
        .ok_or_else(|| Error::invalid("page_token", "is not a page token this server issued"))
}
