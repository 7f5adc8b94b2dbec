//! What AnswerRecall reads: the recall tool call it answers, as the session holds it
//! (the query the append's eviction events name a call's tool with).
use sqlx::types::Json;

use super::{Store, StoreResult};
use crate::message::ToolCall;
use crate::session::Session;

impl Store {
    /// Tool call `call_id` of `session` (one of a fork's ancestors' included), if any.
    pub async fn tool_call(
        &self,
        session: &Session,
        call_id: &str,
    ) -> StoreResult<Option<ToolCall>> {
        let call: Option<Json<ToolCall>> =
            sqlx::query_scalar(super::append::tool_call_sql(session))
                .bind(session.id)
                .bind(call_id)
                .bind(session.tenant_id)
                .fetch_optional(self.db())
                .await?;
        Ok(call.map(|Json(call)| call))
    }
}
