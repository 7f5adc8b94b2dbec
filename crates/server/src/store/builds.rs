//! The budget of a session's recorded builds (`build_history`, written by the build's
//! own statement, `sql/sessions/record_build.sql`), read for the console's chart.
use super::{Store, StoreResult};

/// One build as the chart shows it.
#[derive(Debug, Clone, sqlx::FromRow, serde::Serialize)]
pub struct BuildPoint {
    pub build: i64,
    pub at: chrono::DateTime<chrono::Utc>,
    pub system_tokens: i64,
    pub tool_tokens: i64,
    pub summary_tokens: i64,
    pub history_tokens: i64,
    pub estimate_tokens: i64,
    pub window_tokens: i64,
}

impl Store {
    /// The session's newest `limit` builds (at most 500 are kept), oldest first.
    pub async fn build_history(
        &self,
        session: &crate::session::Session,
        limit: i64,
    ) -> StoreResult<Vec<BuildPoint>> {
        let mut points: Vec<BuildPoint> = sqlx::query_as(
            "select build, at, system_tokens, tool_tokens, summary_tokens, history_tokens, \
             estimate_tokens, window_tokens from build_history \
             where session_id = $1 and tenant_id = $3 order by build desc limit $2",
        )
        .bind(session.id)
        .bind(limit)
        .bind(session.tenant_id)
        .fetch_all(self.db())
        .await?;
        points.reverse();
        Ok(points)
    }
}
