//! Summary rows: the active ones of a session, and writing leaf and condensed summaries
//! under the session's lock.
use std::sync::LazyLock;

use super::StoreResult;
use super::{SessionTx, Store};
use crate::session::{Session, Summary};
use crate::summarize::Retention;

/// A summary row as read: private to the store, which hands out [`Summary`]s.
#[derive(sqlx::FromRow)]
pub(super) struct SummaryRow {
    id: i64,
    depth: i32,
    first_seq: i64,
    last_seq: i64,
    content: String,
    token_count: i32,
    level: i16,
    source_tokens: i64,
    facts: i32,
    facts_lost: i32,
    retention: sqlx::types::Json<Retention>,
}

impl From<SummaryRow> for Summary {
    fn from(row: SummaryRow) -> Summary {
        Summary {
            id: row.id,
            depth: row.depth,
            first_seq: row.first_seq,
            last_seq: row.last_seq,
            content: row.content,
            token_count: row.token_count,
            level: row.level,
            source_tokens: row.source_tokens,
            facts: row.facts,
            facts_lost: row.facts_lost,
            retention: row.retention.0,
        }
    }
}

/// A summary to write.
#[derive(Debug, Clone)]
pub struct NewSummary {
    pub depth: i32,
    pub first_seq: i64,
    pub last_seq: i64,
    pub content: String,
    pub token_count: i64,
    pub level: i16,
    pub source_tokens: i64,
    pub facts: i64,
    pub facts_lost: i64,
    pub retention: Retention,
}

/// What a summarization pass changes on the session row.
#[derive(Debug, Clone, Copy)]
pub struct SummarizedUpdate {
    pub view_first_seq: i64,
    pub view_tokens: i64,
    pub summary_tokens: i64,
    pub summaries_written: i64,
}

const COLUMNS: &str = "id, depth, first_seq, last_seq, content, token_count, level, source_tokens, facts, facts_lost, \
    retention";

/// The active summaries of a session (not covered by a higher one, not reverted), oldest
/// first: its own, and those a fork reuses by link that it has not condensed (a link is
/// the fork's own: a revert in the source does not take it out of the fork's view).
pub(super) async fn active<'e>(
    executor: impl sqlx::PgExecutor<'e>,
    session_id: i64,
    tenant_id: i64,
) -> StoreResult<Vec<Summary>> {
    let rows: Vec<SummaryRow> = sqlx::query_as(ACTIVE_SQL.as_str())
        .bind(session_id)
        .bind(tenant_id)
        .fetch_all(executor)
        .await?;
    Ok(rows.into_iter().map(Summary::from).collect())
}

/// The summaries reverts took out of a session's view, most recently reverted first, at
/// most `limit`.
pub(super) async fn reverted<'e>(
    executor: impl sqlx::PgExecutor<'e>,
    session: &Session,
    limit: i64,
) -> StoreResult<Vec<Summary>> {
    let rows: Vec<SummaryRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "select {COLUMNS} from summaries
         where session_id = $1 and tenant_id = $3 and reverted_at is not null \
         order by reverted_at desc, id desc limit $2"
    )))
    .bind(session.id)
    .bind(limit)
    .bind(session.tenant_id)
    .fetch_all(executor)
    .await?;
    Ok(rows.into_iter().map(Summary::from).collect())
}

impl Store {
    /// The active summaries (not covered by a higher one, not reverted), oldest first:
    /// the session's own, and those a fork reuses of its ancestors that it has not
    /// condensed.
    pub async fn active_summaries(&self, session: &Session) -> StoreResult<Vec<Summary>> {
        active(self.db(), session.id, session.tenant_id).await
    }

    /// The summaries directly under `parents` in the session's tree (those condensed
    /// into them), oldest span first. The caller names parents of this session's tree:
    /// the children of a summary are in the same tree.
    pub async fn summary_children(
        &self,
        session: &Session,
        parents: &[i64],
    ) -> StoreResult<Vec<Summary>> {
        let rows: Vec<SummaryRow> = sqlx::query_as(CHILDREN_SQL.as_str())
            .bind(session.id)
            .bind(parents)
            .bind(session.tenant_id)
            .fetch_all(self.db())
            .await?;
        Ok(rows.into_iter().map(Summary::from).collect())
    }

    /// One summary of a session: its own, or one it inherits (an ancestor's, written
    /// before the fork and within the inherited range).
    pub async fn summary(&self, session: &Session, id: i64) -> StoreResult<Option<Summary>> {
        let row: Option<SummaryRow> = sqlx::query_as(SUMMARY_SQL.as_str())
            .bind(session.id)
            .bind(id)
            .bind(session.tenant_id)
            .fetch_optional(self.db())
            .await?;
        Ok(row.map(Summary::from))
    }
}

static ACTIVE_SQL: LazyLock<String> = LazyLock::new(|| {
    format!(
        "select * from (
            select {COLUMNS} from summaries
            where session_id = $1 and tenant_id = $2 and parent_id is null
                and reverted_at is null
            union all
            select {COLUMNS} from summaries where tenant_id = $2 and id in (
                select summary_id from summary_links
                where session_id = $1 and tenant_id = $2 and parent_id is null)
        ) a order by first_seq"
    )
});

static SUMMARY_SQL: LazyLock<String> = LazyLock::new(|| {
    format!(
        "select {COLUMNS} from summaries su
         where su.id = $2 and su.tenant_id = $3 and (su.session_id = $1 or exists (
            select 1 from session_lineage l
            where l.session_id = $1 and l.tenant_id = $3 and l.ancestor_id = su.session_id
              and su.id <= l.summary_limit and su.last_seq <= l.last_seq))"
    )
});

/// The children of summaries `$2` in session `$1`'s tree (of tenant `$3`): those the
/// owner condensed into them, and those a fork's own condensing put under them.
pub(super) static CHILDREN_SQL: LazyLock<String> = LazyLock::new(|| {
    format!(
        "select * from (
            select {COLUMNS} from summaries where tenant_id = $3 and parent_id = any($2)
            union all
            select {COLUMNS} from summaries where tenant_id = $3 and id in (
                select summary_id from summary_links
                where session_id = $1 and tenant_id = $3 and parent_id = any($2))
        ) c order by first_seq"
    )
});

impl SessionTx {
    /// Writes a summary; when `children` is not empty it is a condensed one covering
    /// them. Returns its id.
    pub async fn insert_summary(&mut self, new: &NewSummary, children: &[i64]) -> StoreResult<i64> {
        let session_id = self.session.id;
        let id: i64 = sqlx::query_scalar(include_str!("sql/summaries/insert.sql"))
            .bind(session_id)
            .bind(new.depth)
            .bind(new.first_seq)
            .bind(new.last_seq)
            .bind(&new.content)
            .bind(i32::try_from(new.token_count).unwrap_or(i32::MAX))
            .bind(new.level)
            .bind(new.source_tokens)
            .bind(i32::try_from(new.facts).unwrap_or(i32::MAX))
            .bind(i32::try_from(new.facts_lost).unwrap_or(i32::MAX))
            .bind(sqlx::types::Json(new.retention))
            .bind(self.session.tenant_id)
            .fetch_one(self.conn())
            .await?;
        if !children.is_empty() {
            // A fork's condensed summary may cover summaries it inherited: their parent
            // in the fork is its link's, the owner's row stays the owner's.
            sqlx::query(
                "with owned as (
                    update summaries set parent_id = $3
                    where session_id = $1 and tenant_id = $4 and id = any($2))
                update summary_links set parent_id = $3
                where session_id = $1 and tenant_id = $4 and summary_id = any($2)",
            )
            .bind(session_id)
            .bind(children)
            .bind(id)
            .bind(self.session.tenant_id)
            .execute(self.conn())
            .await?;
        }
        Ok(id)
    }

    /// Takes messages out of the view: a summary of their turn's older steps covers them.
    /// `messages`: (seq, tokens in the view), kept with the state.
    pub async fn mark_summarized(&mut self, messages: &[(i64, i64)]) -> StoreResult<()> {
        self.set_view_states(crate::message::ViewState::Summarized, messages)
            .await
    }

    /// Moves the view past the summarized prefix, to a new view epoch and version, and
    /// commits.
    pub async fn commit_summarized(mut self, update: SummarizedUpdate) -> StoreResult<()> {
        let session_id = self.session.id;
        sqlx::query(include_str!("sql/summaries/summarized.sql"))
            .bind(session_id)
            .bind(update.view_first_seq)
            .bind(update.view_tokens)
            .bind(update.summary_tokens)
            .bind(update.summaries_written)
            .bind(self.session.tenant_id)
            .execute(self.conn())
            .await?;
        self.finish().await
    }
}
