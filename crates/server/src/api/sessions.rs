//! CreateSession, GetSession, ListSessions, DeleteSession, FinishSession and ForkSession.

use std::collections::BTreeMap;

use super::ContextApi;
use super::convert::{
    child_to_pb, entry_to_pb, overrides_from_pb, report_to_pb, session_to_pb, subtree_to_pb,
    summary_to_pb, time_from_pb, with_link,
};
use super::turns::append_response;
use crate::engine::{self, FinishRequest};
use crate::error::Result;
use crate::pb;
use crate::store::SessionFilter;

pub(super) async fn create_session(
    api: &ContextApi,
    tenant: i64,
    req: pb::CreateSessionRequest,
) -> Result<pb::CreateSessionResponse> {
    let overrides = overrides_from_pb(req.policy.unwrap_or_default())?;
    let metadata: BTreeMap<String, String> = req.metadata.into_iter().collect();
    let (info, link) = api
        .engine
        .create_session(
            tenant,
            &req.session_id,
            overrides,
            metadata,
            &req.parent_session_id,
            &req.parent_tool_call_id,
        )
        .await?;
    Ok(pb::CreateSessionResponse {
        session: Some(with_link(session_to_pb(&info), link.as_ref())),
    })
}

pub(super) async fn get_session(
    api: &ContextApi,
    tenant: i64,
    req: pb::GetSessionRequest,
) -> Result<pb::GetSessionResponse> {
    let info = api.engine.get_session(tenant, &req.session_id).await?;
    let place = api.engine.place(&info).await?;
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
        session: Some(with_link(session_to_pb(&info), place.link.as_ref())),
        summaries,
        budget,
        ledger: ledger.iter().map(entry_to_pb).collect(),
        reverted_summaries,
        children: place.children.iter().map(child_to_pb).collect(),
        children_total: place.children_total,
        subtree: Some(subtree_to_pb(&place.subtree)),
    })
}

pub(super) async fn list_sessions(
    api: &ContextApi,
    tenant: i64,
    req: pb::ListSessionsRequest,
) -> Result<pb::ListSessionsResponse> {
    let time = |field: &str, at: Option<prost_types::Timestamp>| {
        at.map(|at| time_from_pb(field, at)).transpose()
    };
    let named = |id: String| (!id.is_empty()).then_some(id);
    let filter = SessionFilter {
        metadata: req.metadata.into_iter().collect(),
        parent: named(req.parent_session_id),
        forked_from: named(req.forked_from_session_id),
        finished: req.finished,
        created_after: time("created_after", req.created_after)?,
        created_before: time("created_before", req.created_before)?,
        updated_after: time("updated_after", req.updated_after)?,
        updated_before: time("updated_before", req.updated_before)?,
        id_prefix: None,
    };
    let request = engine::ListRequest {
        page_size: req.page_size,
        page_token: req.page_token,
        filter,
    };
    let listing = api.engine.list_sessions(tenant, request).await?;
    Ok(pb::ListSessionsResponse {
        sessions: listing
            .sessions
            .iter()
            .map(|(info, link)| with_link(session_to_pb(info), link.as_ref()))
            .collect(),
        next_page_token: listing.next_page_token,
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

pub(super) async fn finish_session(
    api: &ContextApi,
    tenant: i64,
    req: pb::FinishSessionRequest,
) -> Result<pb::FinishSessionResponse> {
    let outcome = api
        .engine
        .finish_session(
            tenant,
            FinishRequest {
                session_id: req.session_id,
                final_answer: req.final_answer,
                append_to_parent: req.append_to_parent,
            },
        )
        .await?;
    Ok(pb::FinishSessionResponse {
        version: outcome.version,
        parent_session_id: outcome.parent_session_id.unwrap_or_default(),
        parent_tool_call_id: outcome.parent_tool_call_id.unwrap_or_default(),
        parent_append: outcome.appended.map(append_response),
    })
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
