//! Full-text search over messages, summaries and task-ledger entries (generated
//! tsvector columns, GIN indexes; migrations 0007 and 0013).
use std::sync::LazyLock;

use super::Store;
use super::{StoreError, StoreResult};

/// [`Store::index_messages`], waiting for rows another indexer holds.
static INDEX_WAIT_SQL: LazyLock<String> =
    LazyLock::new(|| include_str!("sql/search/index_messages.sql").replace("{skip_locked}", ""));
/// [`Store::index_messages`], skipping rows another indexer holds.
static INDEX_SKIP_SQL: LazyLock<String> = LazyLock::new(|| {
    include_str!("sql/search/index_messages.sql").replace("{skip_locked}", " skip locked")
});

/// What to look for, and where.
#[derive(Debug, Clone)]
pub struct SearchQuery<'a> {
    pub tenant_id: i64,
    /// sessions.id; None: every session of the tenant.
    pub session_id: Option<i64>,
    /// sessions.id of a tree's root: only it and its descendants; None: no such bound.
    pub tree_root: Option<i64>,
    /// Web-search syntax (websearch_to_tsquery: never a syntax error).
    pub query: &'a str,
    /// Message roles (the proto's numbers); empty: all.
    pub roles: Vec<i16>,
    pub since: Option<chrono::DateTime<chrono::Utc>>,
    pub until: Option<chrono::DateTime<chrono::Utc>>,
    pub messages: bool,
    pub summaries: bool,
    /// The task ledger's entries.
    pub ledger: bool,
    pub limit: i64,
}

/// One hit: a message (seq > 0), a summary (summary_id > 0) or a ledger entry
/// (ledger_kind > 0).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct SearchHit {
    pub external_id: String,
    pub seq: i64,
    pub summary_id: i64,
    pub depth: i32,
    pub role: i16,
    /// The proto's ViewState numbers; 4 (summarized) also for a message a summary covers.
    pub view_state: i16,
    pub first_seq: i64,
    pub last_seq: i64,
    /// The ledger entry's kind (the proto's LedgerEntryKind numbers), 0 for others.
    pub ledger_kind: i16,
    pub ledger_key: String,
    /// For a summary: the tokens of what it replaced in the view; 0 for the others.
    pub source_tokens: i64,
    pub rank: f32,
    pub snippet: String,
    pub created_at: chrono::DateTime<chrono::Utc>,
}

impl Store {
    /// Computes the search vector of up to `limit` messages of the tenant that have
    /// none yet, of some sessions' own rows (None: any). With `wait`, rows another
    /// indexer holds are waited for (Search's catch-up must not miss them); otherwise
    /// skipped. Returns how many were indexed.
    pub async fn index_messages(
        &self,
        tenant_id: i64,
        session_ids: Option<&[i64]>,
        limit: i64,
        wait: bool,
    ) -> StoreResult<u64> {
        let query = sqlx::query(if wait {
            INDEX_WAIT_SQL.as_str()
        } else {
            INDEX_SKIP_SQL.as_str()
        });
        Ok(query
            .bind(tenant_id)
            .bind(session_ids)
            .bind(limit)
            .execute(self.db())
            .await?
            .rows_affected())
    }

    /// [`Store::index_messages`] of the tenant of the first message still to index, then
    /// of the next first one's, until `limit` messages in all (each statement on one
    /// tenant's rows: a distributed database runs it on the node holding them). Returns
    /// how many were indexed; 0 when none was left to take (or, without `wait`, the
    /// first tenant's were all held by another indexer).
    pub async fn index_some(&self, limit: i64, wait: bool) -> StoreResult<u64> {
        let mut indexed = 0;
        while (indexed as i64) < limit {
            let tenant: Option<i64> =
                sqlx::query_scalar(include_str!("sql/search/unindexed_tenant.sql"))
                    .fetch_optional(self.db())
                    .await?;
            let Some(tenant_id) = tenant else { break };
            let done = self
                .index_messages(tenant_id, None, limit - indexed as i64, wait)
                .await?;
            if done == 0 {
                break;
            }
            indexed += done;
        }
        Ok(indexed)
    }

    /// The sessions whose rows `session_id`'s log holds: itself and, for a fork, its
    /// ancestors.
    pub async fn log_owners(&self, tenant_id: i64, session_id: i64) -> StoreResult<Vec<i64>> {
        Ok(sqlx::query_scalar(
            "select $1::bigint union all \
             select ancestor_id from session_lineage where session_id = $1 and tenant_id = $2",
        )
        .bind(session_id)
        .bind(tenant_id)
        .fetch_all(self.db())
        .await?)
    }

    /// The best `limit` hits, best first, each with a snippet (matches between « »).
    pub async fn search(&self, query: &SearchQuery<'_>) -> StoreResult<Vec<SearchHit>> {
        sqlx::query_as(include_str!("sql/search/search.sql"))
            .bind(query.tenant_id)
            .bind(query.query)
            .bind(query.session_id)
            .bind(&query.roles)
            .bind(query.since)
            .bind(query.until)
            .bind(query.messages)
            .bind(query.summaries)
            .bind(query.limit)
            .bind(query.ledger)
            .bind(query.tree_root)
            .fetch_all(self.db())
            .await
            .map_err(StoreError::from)
    }
}
