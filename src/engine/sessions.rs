//! Sessions: create, get, view, delete.
use std::collections::BTreeMap;

use super::report::{policy_of, session_not_found, session_report};
use super::{Engine, SessionInfo};
use crate::budget::{Regions, Report};
use crate::error::{Error, Result, quoted};
use crate::events::kinds::EventDetail;
use crate::policy::{Policy, PolicyOverrides};
use crate::quota::live_sessions_full;
use crate::session::{Session, Summary};
use crate::store::Creation;
use crate::tokenize::REPLY_PRIMING;
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
    pub async fn create_session(
        &self,
        tenant_id: i64,
        session_id: &str,
        overrides: PolicyOverrides,
        metadata: BTreeMap<String, String>,
    ) -> Result<SessionInfo> {
        let session_id = if session_id.is_empty() {
            uuid::Uuid::new_v4().to_string()
        } else {
            validate_session_id(session_id)?;
            session_id.to_string()
        };
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
        let policy_json = serde_json::to_value(&policy).map_err(Error::internal)?;
        let live_sessions = self.quotas.quotas(tenant_id).await?.live_sessions;
        let created = if live_sessions == 0 {
            self.store
                .create_session(tenant_id, &session_id, &policy_json, &metadata)
                .await
                .map(|row| Creation::Created(Box::new(row)))
        } else {
            // Counted under the tenant's row lock: exact across replicas.
            self.store
                .create_session_within(
                    tenant_id,
                    &session_id,
                    &policy_json,
                    &metadata,
                    live_sessions,
                )
                .await
        };
        match created {
            Ok(Creation::Created(row)) => Ok(SessionInfo { row: *row, policy }),
            Ok(Creation::Full { live }) => Err(live_sessions_full(live, live_sessions)),
            Err(error) if error.is_unique_violation() => Err(Error::AlreadyExists(format!(
                "session_id: a session named {} already exists",
                quoted(&session_id)
            ))),
            Err(error) => Err(error.into()),
        }
    }

    pub async fn get_session(&self, tenant_id: i64, session_id: &str) -> Result<SessionInfo> {
        let row = self.session_row(tenant_id, session_id).await?;
        let policy = policy_of(&row)?;
        Ok(SessionInfo { row, policy })
    }

    /// The active summaries, the budget of the next request and the summaries reverts
    /// took out of the view (read-only).
    pub async fn session_view(&self, info: &SessionInfo) -> Result<SessionView> {
        let row = &info.row;
        let summaries = self.store.active_summaries(row.id).await?;
        let reverted_summaries = self
            .store
            .reverted_summaries(row.id, MAX_REVERTED_SUMMARIES)
            .await?;
        let regions = Regions {
            system_tokens: row.last_build_system_tokens.max(REPLY_PRIMING),
            summary_tokens: row.summary_tokens,
            history_tokens: row.view_tokens,
            tool_tokens: row.last_build_tool_tokens,
        };
        let report = session_report(
            &info.policy,
            info.policy.max_output_tokens,
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
            .delete_session(tenant_id, session_id, &EventDetail::SessionDeleted)
            .await?
            .ok_or_else(|| session_not_found(session_id))
    }

    pub(super) async fn session_row(&self, tenant_id: i64, session_id: &str) -> Result<Session> {
        validate_session_id(session_id)?;
        self.store
            .session(tenant_id, session_id)
            .await?
            .ok_or_else(|| session_not_found(session_id))
    }
}
