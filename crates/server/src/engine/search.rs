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
    /// Messages and summaries.
    Both,
    /// The task ledger's entries.
    Ledger,
    /// Messages, summaries and the task ledger.
    All,
}

#[derive(Debug, Clone)]
pub struct SearchRequest {
    /// Empty: every session of the tenant.
    pub session_id: String,
    /// Non-empty: only this session and its descendants (not with `session_id`).
    pub tree_root_session_id: String,
    pub query: String,
    pub roles: Vec<Role>,
    pub since: Option<chrono::DateTime<chrono::Utc>>,
    pub until: Option<chrono::DateTime<chrono::Utc>>,
    pub scope: Scope,
    /// 0: the default.
    pub limit: u32,
}

impl Engine {
    /// The sessions.id of a tree-scoped request's root (None when `tree_root_session_id`
    /// is empty); INVALID_ARGUMENT with a session scope too, NOT_FOUND for a session the
    /// tenant does not have.
    pub(super) async fn tree_root(
        &self,
        tenant_id: i64,
        tree_root_session_id: &str,
        with_session: bool,
    ) -> Result<Option<i64>> {
        if tree_root_session_id.is_empty() {
            return Ok(None);
        }
        if with_session {
            return Err(Error::invalid(
                "tree_root_session_id",
                "cannot be combined with session_id: scope to one session or to one tree",
            ));
        }
        validate_session_id(tree_root_session_id).map_err(|error| match error {
            Error::InvalidArgument { reason, .. } => Error::invalid("tree_root_session_id", reason),
            other => other,
        })?;
        match self.get_session(tenant_id, tree_root_session_id).await {
            Ok(info) => Ok(Some(info.row.id)),
            Err(Error::NotFound { .. }) => Err(Error::not_found(format!(
                "tree_root_session_id: session {}",
                crate::error::quoted(tree_root_session_id)
            ))),
            Err(other) => Err(other),
        }
    }
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
        let tree_root = self
            .tree_root(
                tenant_id,
                &request.tree_root_session_id,
                !request.session_id.is_empty(),
            )
            .await?;
        // Messages appended since the indexer's last batch are indexed now: nothing in the
        // scope is missed (a fork's scope holds its ancestors' rows too).
        let owners = match session_id {
            Some(id) => Some(self.store().log_owners(tenant_id, id).await?),
            None => None,
        };
        while self
            .store()
            .index_messages(tenant_id, owners.as_deref(), CATCH_UP_BATCH, true)
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
            tree_root,
            query: &request.query,
            roles: request.roles.iter().map(|role| *role as i16).collect(),
            since: request.since,
            until: request.until,
            messages: matches!(request.scope, Scope::Messages | Scope::Both | Scope::All),
            summaries: matches!(request.scope, Scope::Summaries | Scope::Both | Scope::All),
            ledger: matches!(request.scope, Scope::Ledger | Scope::All),
            limit: i64::from(limit),
        };
        Ok(self.store().search(&query).await?)
    }
}
