//! AnswerRecall: ctxd answers a call the model made to one of its recall tools.
use super::ContextApi;
use super::turns::append_response;
use crate::error::Result;
use crate::pb;

pub(super) async fn answer_recall(
    api: &ContextApi,
    tenant: i64,
    req: pb::AnswerRecallRequest,
) -> Result<pb::AppendTurnResponse> {
    let outcome = api
        .engine
        .answer_recall(tenant, &req.session_id, &req.tool_call_id, 0)
        .await?;
    Ok(append_response(outcome))
}
