//! Search: roles, scope and time bounds from the request, hits to the response.

use super::ContextApi;
use super::convert::{hit_to_pb, time_from_pb};
use crate::engine::{Scope, SearchRequest};
use crate::error::{Error, Result};
use crate::message::Role;
use crate::pb;

pub(super) async fn search(
    api: &ContextApi,
    tenant: i64,
    req: pb::SearchRequest,
) -> Result<pb::SearchResponse> {
    let roles = req
        .roles
        .iter()
        .enumerate()
        .map(|(index, &role)| {
            Role::from_i32(role).ok_or_else(|| {
                Error::invalid(
                    format!("roles[{index}]"),
                    format!("{role} is not a role (1 system, 2 user, 3 assistant, 4 tool)"),
                )
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let scope = match pb::SearchScope::try_from(req.scope) {
        Ok(pb::SearchScope::Messages) => Scope::Messages,
        Ok(pb::SearchScope::Summaries) => Scope::Summaries,
        Ok(pb::SearchScope::Both | pb::SearchScope::Unspecified) => Scope::Both,
        Ok(pb::SearchScope::Ledger) => Scope::Ledger,
        Ok(pb::SearchScope::All) => Scope::All,
        Err(_) => {
            return Err(Error::invalid(
                "scope",
                format!("{} is not a search scope (0 to 5)", req.scope),
            ));
        }
    };
    let hits = api
        .engine
        .search(
            tenant,
            SearchRequest {
                session_id: req.session_id,
                tree_root_session_id: req.tree_root_session_id,
                query: req.query,
                roles,
                since: req.since.map(|t| time_from_pb("since", t)).transpose()?,
                until: req.until.map(|t| time_from_pb("until", t)).transpose()?,
                scope,
                limit: req.limit,
            },
        )
        .await?;
    Ok(pb::SearchResponse {
        hits: hits.into_iter().map(hit_to_pb).collect(),
    })
}
