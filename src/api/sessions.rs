//! CreateSession, GetSession, DeleteSession and ForkSession.

use std::collections::BTreeMap;

use super::ContextApi;
use super::convert::{overrides_from_pb, report_to_pb, session_to_pb, summary_to_pb};
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
    let (summaries, budget) = if req.include_view {
        let (summaries, report) = api.engine.session_view(&info).await?;
        (
            summaries.iter().map(summary_to_pb).collect(),
            Some(report_to_pb(&report)),
        )
    } else {
        (Vec::new(), None)
    };
    Ok(pb::GetSessionResponse {
        session: Some(session_to_pb(&info)),
        summaries,
        budget,
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

pub(super) async fn fork_session(
    api: &ContextApi,
    tenant: i64,
    req: pb::ForkSessionRequest,
) -> Result<pb::ForkSessionResponse> {
    let overrides = overrides_from_pb(req.policy.unwrap_or_default())?;
    let request = crate::engine::ForkRequest {
        source_session_id: req.source_session_id,
        at_seq: req.at_seq,
        session_id: req.session_id,
        overrides,
        metadata: req.metadata.into_iter().collect(),
    };
    let info = api.engine.fork_session(tenant, request).await?;
    Ok(pb::ForkSessionResponse {
        session: Some(session_to_pb(&info)),
    })
}
