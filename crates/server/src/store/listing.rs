//! ListSessions' reads: a page of a tenant's sessions under a filter, and their links.
//! The engine decides the page size and reads the token (`core::listing`).
use std::collections::HashMap;
use std::sync::LazyLock;

use chrono::{DateTime, Utc};
use sqlx::types::Json;

use super::sessions::{SessionRow, with_session_columns};
use super::{Store, StoreResult};
use crate::session::Session;
use crate::tree::Link;

/// What a listing keeps; every field `None` (or empty) keeps everything.
#[derive(Debug, Clone, Default)]
pub struct SessionFilter {
    pub metadata: Vec<(String, String)>,
    pub parent: Option<String>,
    pub forked_from: Option<String>,
    pub finished: Option<bool>,
    pub created_after: Option<DateTime<Utc>>,
    pub created_before: Option<DateTime<Utc>>,
    pub updated_after: Option<DateTime<Utc>>,
    pub updated_before: Option<DateTime<Utc>>,
    /// Sessions whose id starts with this (the console's search).
    pub id_prefix: Option<String>,
}

/// A listed session and its link to its parent, when it has one.
pub struct Listed {
    pub session: Session,
    pub link: Option<Link>,
}

static PAGE_SQL: LazyLock<String> =
    LazyLock::new(|| with_session_columns(include_str!("sql/listing/page.sql")));

impl Store {
    /// At most `limit` sessions of the tenant under `filter`, after `after` (the last
    /// listed session's updated_at and id), most recently updated first.
    pub async fn list_sessions(
        &self,
        tenant_id: i64,
        filter: &SessionFilter,
        after: Option<(DateTime<Utc>, i64)>,
        limit: i64,
    ) -> StoreResult<Vec<Listed>> {
        let metadata = (!filter.metadata.is_empty()).then(|| {
            let pairs = filter
                .metadata
                .iter()
                .map(|(key, value)| (key.clone(), serde_json::Value::String(value.clone())));
            Json(serde_json::Value::Object(pairs.collect()))
        });
        let rows: Vec<SessionRow> = sqlx::query_as(PAGE_SQL.as_str())
            .bind(tenant_id)
            .bind(metadata)
            .bind(&filter.parent)
            .bind(&filter.forked_from)
            .bind(filter.finished)
            .bind(filter.created_after)
            .bind(filter.created_before)
            .bind(filter.updated_after)
            .bind(filter.updated_before)
            .bind(limit)
            .bind(after.map(|(at, _)| at))
            .bind(after.map(|(_, id)| id))
            .bind(&filter.id_prefix)
            .fetch_all(self.db())
            .await?;
        let sessions: Vec<Session> = rows.into_iter().map(Session::from).collect();
        let ids: Vec<i64> = sessions.iter().map(|s| s.id).collect();
        let links: Vec<(i64, Option<String>, String, i64)> =
            sqlx::query_as(include_str!("sql/listing/links.sql"))
                .bind(&ids)
                .bind(tenant_id)
                .fetch_all(self.db())
                .await?;
        let mut links: HashMap<i64, Link> = links
            .into_iter()
            .map(|(id, parent, call, depth)| {
                let link = Link {
                    parent_session_id: parent,
                    parent_tool_call_id: call,
                    depth,
                };
                (id, link)
            })
            .collect();
        Ok(sessions
            .into_iter()
            .map(|session| Listed {
                link: links.remove(&session.id),
                session,
            })
            .collect())
    }
}
