//! CreateSession, GetSession and DeleteSession.

use std::collections::BTreeMap;

use super::ContextApi;
use super::convert::{entry_to_pb, overrides_from_pb, report_to_pb, session_to_pb, summary_to_pb};
use crate::error::Result;
use crate::pb;

pub(super) async fn create_session(
    api: &ContextApi,
    tenant: i64,
    req: pb::CreateSessionRequest,
) -> Result<pb::CreateSessionResponse> {
    let overrides = overrides_from_pb(req.policy.unwrap_or_default())?;
    let metadata: BTreeMap<String, String> = req.metadata.into_iter().collect();
    let info = api
        .engine
        .create_session(tenant, &req.session_id, overrides, metadata)
        .await?;
    Ok(pb::CreateSessionResponse {
        session: Some(session_to_pb(&info)),
    })
}

pub(super) async fn get_session(
    api: &ContextApi,
    tenant: i64,
    req: pb::GetSessionRequest,
) -> Result<pb::GetSessionResponse> {
    let info = api.engine.get_session(tenant, &req.session_id).await?;
    let (summaries, budget, reverted_summaries) = if req.include_view {
        let view = api.engine.session_view(&info).await?;
        (
            view.summaries.iter().map(summary_to_pb).collect(),
            Some(report_to_pb(&view.report)),
            view.reverted_summaries
                .iter()
                .map(|summary| pb::Summary {
                    reverted: true,
                    ..summary_to_pb(summary)
                })
                .collect(),
        )
    } else {
        (Vec::new(), None, Vec::new())
    };
    let ledger = api.engine.ledger(&info).await?;
    Ok(pb::GetSessionResponse {
        session: Some(session_to_pb(&info)),
        summaries,
        budget,
        reverted_summaries,
        ledger: ledger.iter().map(entry_to_pb).collect(),
    })
}

pub(super) async fn delete_session(
    api: &ContextApi,
    tenant: i64,
    req: pb::DeleteSessionRequest,
) -> Result<pb::DeleteSessionResponse> {
    let deleted_messages = api.engine.delete_session(tenant, &req.session_id).await?;
    Ok(pb::DeleteSessionResponse { deleted_messages })
}
