//! Sessions: create, get, view, delete.
use std::collections::BTreeMap;

use super::report::{session_not_found, session_report};
use super::{Engine, SessionInfo};
use crate::budget::{Regions, Report};
use crate::error::{Error, Result, quoted};
use crate::events::EventDetail;
use crate::policy::{Policy, PolicyOverrides};
use crate::quota::live_sessions_full;
use crate::session::{Session, Summary};
use crate::store::{Creation, Deletion, NewLink, StoreError};
use crate::tokenize::REPLY_PRIMING;
use crate::tree::{self, Link};
use crate::validate::{NUL_REASON, validate_session_id};

/// Reverted summaries GetSession lists at most.
const MAX_REVERTED_SUMMARIES: i64 = 100;

/// What GetSession shows of a session's view.
#[derive(Debug, Clone)]
pub struct SessionView {
    /// The active summaries, oldest first.
    pub summaries: Vec<Summary>,
    /// The budget of the next request.
    pub report: Report,
    /// The summaries reverts took out of the view, most recently reverted first.
    pub reverted_summaries: Vec<Summary>,
}

impl Engine {
    /// Creates a session; with `parent_session_id` and `parent_tool_call_id`, as the
    /// child of that session spawned by that tool call (checked in the tenant, under a
    /// lock that keeps the parent from being deleted meanwhile). Returns the link too.
    pub async fn create_session(
        &self,
        tenant_id: i64,
        session_id: &str,
        overrides: PolicyOverrides,
        metadata: BTreeMap<String, String>,
        parent_session_id: &str,
        parent_tool_call_id: &str,
    ) -> Result<(SessionInfo, Option<Link>)> {
        let session_id = if session_id.is_empty() {
            uuid::Uuid::new_v4().to_string()
        } else {
            validate_session_id(session_id)?;
            session_id.to_string()
        };
        let parent = tree::parent_request(&session_id, parent_session_id, parent_tool_call_id)?;
        if let Some((key, _)) = metadata
            .iter()
            .find(|(key, value)| key.contains('\0') || value.contains('\0'))
        {
            return Err(Error::invalid(
                format!("metadata[{}]", quoted(key)),
                NUL_REASON,
            ));
        }
        let policy = Policy::resolve(&self.config.default_policy, overrides)?;
        self.model_for(&policy)?;
        let live_sessions = self.quotas.quotas(tenant_id).await?.live_sessions;
        let created = match (&parent, live_sessions) {
            (None, 0) => self
                .store
                .create_session(tenant_id, &session_id, &policy, &metadata)
                .await
                .map(|row| (Creation::Created(Box::new(row)), None)),
            // Counted under the tenant's creation lock: exact across replicas.
            (None, quota) => self
                .store
                .create_session_within(tenant_id, &session_id, &policy, &metadata, quota)
                .await
                .map(|creation| (creation, None)),
            (Some(parent), quota) => {
                return self
                    .create_child(tenant_id, &session_id, &policy, &metadata, parent, quota)
                    .await
                    .map(|(row, link)| (SessionInfo { row }, Some(link)));
            }
        };
        match created {
            Ok((Creation::Created(row), link)) => Ok((SessionInfo { row: *row }, link)),
            Ok((Creation::Full { live }, _)) => Err(live_sessions_full(live, live_sessions)),
            Err(error) => Err(taken(error, &session_id)),
        }
    }

    /// Creates a child of `parent`: the parent is found in the tenant (another
    /// tenant's is NOT_FOUND as an unknown one is) and the link decided by the core
    /// before anything is written.
    async fn create_child(
        &self,
        tenant_id: i64,
        session_id: &str,
        policy: &Policy,
        metadata: &BTreeMap<String, String>,
        parent: &tree::ParentRequest,
        live_sessions: u64,
    ) -> Result<(Session, Link)> {
        let mut create = self
            .store
            .begin_create(tenant_id, live_sessions > 0)
            .await?;
        if let Some(live) = create.live.filter(|&live| live >= live_sessions) {
            return Err(live_sessions_full(live, live_sessions));
        }
        let call_id = &parent.parent_tool_call_id;
        let found = create
            .parent(&parent.parent_session_id, call_id)
            .await?
            .ok_or_else(|| {
                Error::not_found(format!(
                    "parent_session_id: session {}",
                    quoted(&parent.parent_session_id)
                ))
            })?;
        let ancestors = tree::child_ancestors(&found, call_id)?;
        let link = Link {
            parent_session_id: Some(found.external_id),
            parent_tool_call_id: call_id.clone(),
            depth: ancestors.len() as i64,
        };
        let new_link = NewLink {
            parent_id: found.id,
            parent_tool_call_id: call_id.clone(),
            ancestors,
        };
        let row = create
            .insert(session_id, policy, metadata, Some(&new_link))
            .await
            .map_err(|error| taken(error, session_id))?;
        Ok((row, link))
    }

    pub async fn get_session(&self, tenant_id: i64, session_id: &str) -> Result<SessionInfo> {
        let row = self.session_row(tenant_id, session_id).await?;
        Ok(SessionInfo { row })
    }

    /// The active summaries, the budget of the next request and the summaries reverts
    /// took out of the view (read-only).
    pub async fn session_view(&self, info: &SessionInfo) -> Result<SessionView> {
        let row = &info.row;
        let summaries = self.store.active_summaries(row).await?;
        let reverted_summaries = self
            .store
            .reverted_summaries(row, MAX_REVERTED_SUMMARIES)
            .await?;
        let regions = Regions {
            system_tokens: row.builds.last.system_tokens.max(REPLY_PRIMING),
            summary_tokens: row.summary_tokens,
            history_tokens: row.view_tokens,
            tool_tokens: row.builds.last.tool_tokens,
        };
        let report = session_report(
            &info.row.policy,
            info.row.policy.max_output_tokens,
            row,
            regions,
            row.last_turn_tokens,
        );
        Ok(SessionView {
            summaries,
            report,
            reverted_summaries,
        })
    }

    pub async fn delete_session(&self, tenant_id: i64, session_id: &str) -> Result<i64> {
        validate_session_id(session_id)?;
        self.store
            .delete_session(
                tenant_id,
                session_id,
                &EventDetail::SessionDeleted,
                Deletion::Asked,
            )
            .await?
            .ok_or_else(|| session_not_found(session_id))
    }

    /// A session's place in its tree: its parent, its children, the sums over its
    /// subtree.
    pub async fn place(&self, info: &SessionInfo) -> Result<tree::Place> {
        Ok(self
            .store
            .place(&info.row, tree::MAX_CHILDREN_LISTED)
            .await?)
    }

    pub(super) async fn session_row(&self, tenant_id: i64, session_id: &str) -> Result<Session> {
        validate_session_id(session_id)?;
        self.store
            .session(tenant_id, session_id)
            .await?
            .ok_or_else(|| session_not_found(session_id))
    }
}

/// ALREADY_EXISTS when a create found the id taken; any other store error as it is.
pub(super) fn taken(error: StoreError, session_id: &str) -> Error {
    if error.is_unique_violation() {
        return Error::AlreadyExists(format!(
            "session_id: a session named {} already exists",
            quoted(session_id)
        ));
    }
    error.into()
}
