//! Session trees (`session_links`, migration 0016): a child's parent found when it is
//! created, a session's place in its tree (parent, children, subtree sums), the
//! ancestors that decide whether an event is in a tree, and FinishSession's transaction.
//! The core (`tree.rs`) decides; this reads and writes.
use sqlx::types::Json;
use sqlx::{Postgres, Transaction};

use super::append::AppendState;
use super::append_write::{ChildFinish, count_finish_events, write_finish};
use super::pooler::Conn;
use super::sessions::{CreateTx, lock};
use super::{Store, StoreResult};
use crate::session::Session;
use crate::tree::{Child, Link, ParentFound, Place, Rollup};

impl CreateTx {
    /// The would-be parent in the creating tenant, held until the creation commits (a
    /// `key share` lock: appends to it go on, deleting it waits); `None` when the tenant
    /// has no such session.
    pub async fn parent(
        &mut self,
        parent_external_id: &str,
        tool_call_id: &str,
    ) -> StoreResult<Option<ParentFound>> {
        // id, name, finished, ancestors, whether the call was answered (null: unknown).
        type ParentRow = (i64, String, bool, Vec<i64>, Option<bool>);
        let row: Option<ParentRow> = sqlx::query_as(include_str!("sql/tree/parent.sql"))
            .bind(self.tenant_id)
            .bind(parent_external_id)
            .bind(tool_call_id)
            .fetch_optional(Conn::new(&mut self.tx, self.pooler))
            .await?;
        Ok(row.map(
            |(id, external_id, finished, ancestors, call_answered)| ParentFound {
                id,
                external_id,
                ancestors,
                finished,
                call_answered,
            },
        ))
    }
}

/// A child's link as FinishSession reads it.
#[derive(Debug, Clone)]
pub struct FinishLink {
    /// sessions.id of the parent.
    pub parent_id: i64,
    /// The parent's name; None once it was deleted.
    pub parent_external_id: Option<String>,
    pub parent_tool_call_id: String,
}

/// FinishSession in progress: a transaction holding the child's row lock. Dropped, it
/// writes nothing.
pub struct FinishTx {
    tx: Transaction<'static, Postgres>,
    pub child: Session,
    /// The child's link to its parent; None for a root.
    pub link: Option<FinishLink>,
}

impl AppendState {
    /// Has the append this state was read for (under the row lock) finish a child
    /// session before it commits.
    pub fn finish_child(&mut self, finish: ChildFinish) {
        self.finish = Some(finish);
    }
}

impl Store {
    /// Starts FinishSession: locks the child's row and reads its link. `None` when the
    /// tenant has no such session. Runs on the append pool: the parent's append may
    /// follow in the same transaction.
    pub async fn begin_finish(
        &self,
        tenant_id: i64,
        external_id: &str,
    ) -> StoreResult<Option<FinishTx>> {
        let mut tx = self.append_pool.begin().await?;
        let Some((child, _)) =
            lock(Conn::new(&mut tx, self.pooler), tenant_id, external_id).await?
        else {
            return Ok(None);
        };
        let link: Option<(i64, Option<String>, String)> =
            sqlx::query_as(include_str!("sql/tree/finish_link.sql"))
                .bind(child.id)
                .bind(child.tenant_id)
                .fetch_optional(Conn::new(&mut tx, self.pooler))
                .await?;
        Ok(Some(FinishTx {
            tx,
            child,
            link: link.map(
                |(parent_id, parent_external_id, parent_tool_call_id)| FinishLink {
                    parent_id,
                    parent_external_id,
                    parent_tool_call_id,
                },
            ),
        }))
    }

    /// Locks the finishing child's parent (`parent_external_id`) in the finish's
    /// transaction and reads what its append decides on (the call ids the answer
    /// names); the append's write commits the transaction. `None` when the tenant has
    /// no such session.
    pub async fn finish_parent_state(
        &self,
        finish: FinishTx,
        parent_external_id: &str,
        call_ids: &[String],
    ) -> StoreResult<Option<AppendState>> {
        self.locked_append_state(
            finish.tx,
            finish.child.tenant_id,
            parent_external_id,
            call_ids,
            None,
        )
        .await
    }

    /// Finishes the child without an append and commits: the child's new version
    /// (`None`: it was finished already, nothing written).
    pub async fn finish_alone(
        &self,
        mut finish: FinishTx,
        record: &ChildFinish,
    ) -> StoreResult<Option<i64>> {
        let (version, events) =
            write_finish(Conn::new(&mut finish.tx, self.pooler), record).await?;
        finish.tx.commit().await?;
        count_finish_events(record, events);
        self.rows
            .forget(finish.child.tenant_id, &finish.child.external_id);
        Ok(version)
    }

    /// A session's place in its tree: its link, its children (the oldest
    /// `max_children`), and sums over it and its descendants.
    pub async fn place(&self, session: &Session, max_children: i64) -> StoreResult<Place> {
        #[derive(sqlx::FromRow)]
        struct PlaceRow {
            link: Option<Json<(Option<String>, String, i64)>>,
            children_total: i64,
            sessions: i64,
            log_tokens: i64,
            input_tokens: i64,
            output_tokens: i64,
            cached_input_tokens: i64,
        }
        let row: PlaceRow = sqlx::query_as(include_str!("sql/tree/place.sql"))
            .bind(session.id)
            .bind(session.tenant_id)
            .fetch_one(self.db())
            .await?;
        type ChildRow = (
            String,
            String,
            Option<chrono::DateTime<chrono::Utc>>,
            chrono::DateTime<chrono::Utc>,
        );
        let children: Vec<ChildRow> = sqlx::query_as(include_str!("sql/tree/children.sql"))
            .bind(session.id)
            .bind(session.tenant_id)
            .bind(max_children)
            .fetch_all(self.db())
            .await?;
        Ok(Place {
            link: row.link.map(|Json((parent, call, depth))| Link {
                parent_session_id: parent,
                parent_tool_call_id: call,
                depth,
            }),
            children: children
                .into_iter()
                .map(
                    |(session_id, parent_tool_call_id, finished_at, created_at)| Child {
                        session_id,
                        parent_tool_call_id,
                        finished_at,
                        created_at,
                    },
                )
                .collect(),
            children_total: row.children_total,
            subtree: Rollup {
                sessions: row.sessions,
                log_tokens: row.log_tokens,
                input_tokens: row.input_tokens,
                output_tokens: row.output_tokens,
                cached_input_tokens: row.cached_input_tokens,
            },
        })
    }

    /// The ancestors of a session (sessions.id; root first), as its link recorded them
    /// at creation: empty for a root. Also for a deleted session whose events remain.
    pub async fn ancestors(&self, tenant_id: i64, session_id: i64) -> StoreResult<Vec<i64>> {
        let ancestors: Option<Vec<i64>> = sqlx::query_scalar(
            "select ancestors from session_links where session_id = $1 and tenant_id = $2",
        )
        .bind(session_id)
        .bind(tenant_id)
        .fetch_optional(self.db())
        .await?;
        Ok(ancestors.unwrap_or_default())
    }

    /// Deletes the links of sessions that are gone with all their events (they can
    /// place nothing in a tree any more). Returns how many went.
    pub async fn prune_links(&self) -> StoreResult<u64> {
        Ok(sqlx::query(include_str!("sql/tree/prune.sql"))
            .execute(self.db())
            .await?
            .rows_affected())
    }
}
