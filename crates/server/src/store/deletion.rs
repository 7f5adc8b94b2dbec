//! DeleteSession: a session no fork reads goes with its whole log; one that forks still
//! read is hidden until the last of them goes (decision 0019). The retention sweep
//! deletes the same way the sessions it finds past their policy's retention_seconds.
use sqlx::types::Json;

use super::pooler::Conn;
use super::{EVENTS_CHANNEL, Store};
use super::{StoreError, StoreResult};
use crate::events::EventDetail;
use crate::metrics::metrics;

/// Why a session is deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deletion {
    /// A client asked (DeleteSession).
    Asked,
    /// The retention sweep found it past its retention; checked again under the lock,
    /// so a write that committed meanwhile keeps the session.
    Expired,
}

impl Store {
    /// Sessions unchanged for longer than their policy's retention, as (tenant id,
    /// session id), oldest change first, at most `limit`.
    pub async fn expired_sessions(&self, limit: i64) -> StoreResult<Vec<(i64, String)>> {
        Ok(sqlx::query_as(include_str!("sql/sessions/expired.sql"))
            .bind(limit)
            .fetch_all(self.db())
            .await?)
    }

    /// Deletes (or, while forks read its rows, hides) a session, writing its
    /// SESSION_DELETED event in the same transaction; then removes each hidden ancestor
    /// that no other session reads any more. Returns the session's message count; None
    /// when there is no such session (or, `Expired`, none still past its retention).
    pub async fn delete_session(
        &self,
        tenant_id: i64,
        external_id: &str,
        deleted: &EventDetail,
        why: Deletion,
    ) -> StoreResult<Option<i64>> {
        let mut tx = self.pool.begin().await?;
        let lock = match why {
            Deletion::Asked => {
                "select id from sessions where tenant_id = $1 and external_id = $2 for update"
            }
            Deletion::Expired => include_str!("sql/sessions/lock_expired.sql"),
        };
        let found: Option<i64> = sqlx::query_scalar(lock)
            .bind(tenant_id)
            .bind(external_id)
            .fetch_optional(Conn::new(&mut tx, self.pooler))
            .await?;
        let Some(session_id) = found else {
            return Ok(None);
        };
        // A statement of its own, after the lock: a fork made while this waited for the
        // lock has committed, and this snapshot sees it.
        let read_by_forks: bool = sqlx::query_scalar(
            "select exists (select 1 from session_lineage where ancestor_id = $1 and tenant_id = $2)",
        )
        .bind(session_id)
        .bind(tenant_id)
        .fetch_one(Conn::new(&mut tx, self.pooler))
        .await?;
        let kind = deleted.kind() as i16;
        let messages: i64 = if read_by_forks {
            deleting(
                include_str!("sql/forks/hide.sql"),
                session_id,
                tenant_id,
                deleted,
            )
            .bind(external_id)
            .fetch_one(Conn::new(&mut tx, self.pooler))
            .await?
            .ok_or(StoreError::Other(sqlx::Error::RowNotFound))?
        } else {
            let ancestors: Vec<i64> = sqlx::query_scalar(
                "select ancestor_id from session_lineage where session_id = $1 and tenant_id = $2 \
                 order by depth",
            )
            .bind(session_id)
            .bind(tenant_id)
            .fetch_all(Conn::new(&mut tx, self.pooler))
            .await?;
            let messages = deleting(
                include_str!("sql/forks/delete.sql"),
                session_id,
                tenant_id,
                deleted,
            )
            .fetch_one(Conn::new(&mut tx, self.pooler))
            .await?
            .ok_or(StoreError::Other(sqlx::Error::RowNotFound))?;
            // Nearest first: a farther ancestor is read by every nearer one.
            for ancestor in ancestors {
                let hidden: Option<bool> = sqlx::query_scalar(
                    "select deleted_at is not null from sessions \
                     where id = $1 and tenant_id = $2 for update",
                )
                .bind(ancestor)
                .bind(tenant_id)
                .fetch_optional(Conn::new(&mut tx, self.pooler))
                .await?;
                if hidden != Some(true) {
                    break;
                }
                let still_read: bool = sqlx::query_scalar(
                    "select exists (select 1 from session_lineage \
                     where ancestor_id = $1 and tenant_id = $2)",
                )
                .bind(ancestor)
                .bind(tenant_id)
                .fetch_one(Conn::new(&mut tx, self.pooler))
                .await?;
                if still_read {
                    break;
                }
                sqlx::query("delete from sessions where id = $1 and tenant_id = $2")
                    .bind(ancestor)
                    .bind(tenant_id)
                    .execute(Conn::new(&mut tx, self.pooler))
                    .await?;
            }
            messages
        };
        tx.commit().await.map_err(StoreError::from)?;
        metrics().event_written(kind);
        Ok(Some(messages))
    }
}

/// A deletion statement (`forks/hide.sql`, `forks/delete.sql`) with the parameters both
/// take: the session, its tenant, and its SESSION_DELETED event (kind, detail, channel).
/// It answers the session's message count (none: no such session).
fn deleting<'q>(
    sql: &'static str,
    session_id: i64,
    tenant_id: i64,
    deleted: &'q EventDetail,
) -> sqlx::query::QueryScalar<'q, sqlx::Postgres, Option<i64>, sqlx::postgres::PgArguments> {
    sqlx::query_scalar(sql)
        .bind(session_id)
        .bind(tenant_id)
        .bind(deleted.kind() as i16)
        .bind(Json(deleted))
        .bind(EVENTS_CHANNEL)
}
