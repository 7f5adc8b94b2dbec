//! Search: validation of a query and its scope, over the store's full-text indexes.
use super::{Engine, validate_session_id};
use crate::error::{Error, Result};
use crate::message::Role;
use crate::store::{SearchHit, SearchQuery};

/// Longest query accepted, in characters.
const MAX_QUERY_CHARS: usize = 1000;
/// Hits returned when the request does not say; the most it may ask for.
const DEFAULT_LIMIT: u32 = 20;
const MAX_LIMIT: u32 = 100;

/// Messages Search indexes per statement when it catches up.
const CATCH_UP_BATCH: i64 = 1000;
/// What Search looks through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Messages,
    Summaries,
    Both,
}

#[derive(Debug, Clone)]
pub struct SearchRequest {
    /// Empty: every session of the tenant.
    pub session_id: String,
    pub query: String,
    pub roles: Vec<Role>,
    pub since: Option<chrono::DateTime<chrono::Utc>>,
    pub until: Option<chrono::DateTime<chrono::Utc>>,
    pub scope: Scope,
    /// 0: the default.
    pub limit: u32,
}

/// The best hits, best first. Any query text is safe: it is parsed as web-search syntax,
/// which has no syntax errors; one without a searchable word finds nothing.
impl Engine {
    pub async fn search(&self, tenant_id: i64, request: SearchRequest) -> Result<Vec<SearchHit>> {
        if request.query.trim().is_empty() {
            return Err(Error::invalid(
                "query",
                "must contain at least one word to search for",
            ));
        }
        if request.query.chars().count() > MAX_QUERY_CHARS {
            return Err(Error::invalid(
                "query",
                format!("must be at most {MAX_QUERY_CHARS} characters"),
            ));
        }
        if request.query.contains('\0') {
            return Err(Error::invalid("query", "must not contain NUL characters"));
        }
        if request.limit > MAX_LIMIT {
            return Err(Error::invalid(
                "limit",
                format!(
                    "must be at most {MAX_LIMIT} (0: {DEFAULT_LIMIT}), got {}",
                    request.limit
                ),
            ));
        }
        if let (Some(since), Some(until)) = (request.since, request.until)
            && since >= until
        {
            return Err(Error::invalid("until", "must be later than since"));
        }
        let session_id = if request.session_id.is_empty() {
            None
        } else {
            validate_session_id(&request.session_id)?;
            Some(
                self.get_session(tenant_id, &request.session_id)
                    .await?
                    .row
                    .id,
            )
        };
        // Messages appended since the indexer's last batch are indexed now: nothing in the
        // scope is missed (a fork's scope holds its ancestors' rows too).
        let owners = match session_id {
            Some(id) => Some(self.store().log_owners(id).await?),
            None => None,
        };
        while self
            .store()
            .index_messages(Some(tenant_id), owners.as_deref(), CATCH_UP_BATCH, true)
            .await?
            == CATCH_UP_BATCH as u64
        {}
        let limit = if request.limit == 0 {
            DEFAULT_LIMIT
        } else {
            request.limit
        };
        let query = SearchQuery {
            tenant_id,
            session_id,
            query: &request.query,
            roles: request.roles.iter().map(|role| *role as i16).collect(),
            since: request.since,
            until: request.until,
            messages: request.scope != Scope::Summaries,
            summaries: request.scope != Scope::Messages,
            limit: i64::from(limit),
        };
        Ok(self.store().search(&query).await?)
    }
}
