//! FinishSession: a subagent's session ends, and its final answer can become the result
//! of the parent's tool call that spawned it, in the same transaction. The answer goes
//! through the append's own decision and write (`append_once`, with the parent's state
//! read under its row lock in the finish's transaction): the same checks (the call
//! unknown or already answered, sizes, the session-bytes limit), the same aggregates,
//! evictions and events as an AppendTurn of that tool result.
//!
//! Locks go child first, then parent: every transaction that locks two sessions does
//! so (a child is always younger than its parent), so two finishes never wait on each
//! other in a circle.
use std::collections::BTreeMap;

use super::report::{session_finished, session_not_found};
use super::{AppendOutcome, AppendRequest, Engine};
use crate::error::{Error, Result, quoted};
use crate::events::EventDetail;
use crate::message::{Message, Role};
use crate::session::Session;
use crate::store::{ChildFinish, FinishLink};
use crate::validate::{validate_message, validate_session_id};

/// Metadata key of a tool result FinishSession appended: the child session it came from.
pub const SUBAGENT_SESSION_KEY: &str = "ctxd.subagent_session_id";

/// A FinishSession request.
#[derive(Debug, Clone)]
pub struct FinishRequest {
    pub session_id: String,
    /// The child's answer; the parent's tool result when `append_to_parent`.
    pub final_answer: String,
    pub append_to_parent: bool,
}

/// What FinishSession did.
#[derive(Debug, Clone)]
pub struct FinishOutcome {
    /// The finished session's version (one past what it was).
    pub version: i64,
    /// The parent while it exists, and the tool call the session was spawned for.
    pub parent_session_id: Option<String>,
    pub parent_tool_call_id: Option<String>,
    /// The parent's append, when the answer was appended.
    pub appended: Option<AppendOutcome>,
}

impl Engine {
    pub async fn finish_session(
        &self,
        tenant_id: i64,
        request: FinishRequest,
    ) -> Result<FinishOutcome> {
        validate_session_id(&request.session_id)?;
        let answer = finish_answer(&request, self.config.max_content_bytes)?;
        if let Some(answer) = &answer {
            let bytes = u64::try_from(answer.counted_bytes()).unwrap_or(u64::MAX);
            self.quotas.admit_append(tenant_id, bytes).await?;
        }

        let finish = self
            .store
            .begin_finish(tenant_id, &request.session_id)
            .await?
            .ok_or_else(|| session_not_found(&request.session_id))?;
        let child = finish.child.clone();
        if child.finished_at.is_some() {
            return Err(session_finished(&child));
        }
        let link = finish.link.clone();
        let record = |link: Option<&FinishLink>, result_seq: i64| ChildFinish {
            child_id: child.id,
            child_external_id: child.external_id.clone(),
            tenant_id: child.tenant_id,
            parent_id: link
                .filter(|link| link.parent_external_id.is_some())
                .map(|link| link.parent_id),
            detail: EventDetail::SessionFinished {
                child_session_id: child.external_id.clone(),
                parent_session_id: link
                    .and_then(|link| link.parent_external_id.clone())
                    .unwrap_or_default(),
                parent_tool_call_id: link
                    .map(|link| link.parent_tool_call_id.clone())
                    .unwrap_or_default(),
                result_seq,
            },
        };
        let outcome = |version: i64, appended: Option<AppendOutcome>| FinishOutcome {
            version,
            parent_session_id: link
                .as_ref()
                .and_then(|link| link.parent_external_id.clone()),
            parent_tool_call_id: link.as_ref().map(|link| link.parent_tool_call_id.clone()),
            appended,
        };
        let Some(mut answer) = answer else {
            // Under the child's row lock it is still open: the write applies.
            let version = self
                .store
                .finish_alone(finish, &record(link.as_ref(), 0))
                .await?
                .ok_or_else(|| session_finished(&child))?;
            return Ok(outcome(version, None));
        };

        let (link_found, parent) = parent_of(link.as_ref(), &child)?;
        let call_id = link_found.parent_tool_call_id.clone();
        answer.tool_call_id = call_id.clone();
        let mut state = self
            .store
            .finish_parent_state(finish, &parent, std::slice::from_ref(&call_id))
            .await?
            // Another session took the parent's name after it was deleted.
            .filter(|state| state.session.id == link_found.parent_id)
            .ok_or_else(|| parent_deleted(&child))?;
        state.finish_child(record(
            link.as_ref(),
            state.session.message_count.saturating_add(1),
        ));
        let append = AppendRequest {
            session_id: parent.clone(),
            messages: vec![answer],
            expected_version: None,
            idempotency: None,
            usage: None,
            recall: None,
        };
        let appended = self
            .append_once(&append, None, state, &mut None)
            .await
            .map_err(|error| parent_refused(error, &parent))?
            // Under the parent's row lock an append cannot race.
            .ok_or_else(|| Error::internal("the parent's append raced under its row lock"))?;
        Ok(outcome(child.version + 1, Some(appended)))
    }
}

/// The parent a finished session's answer goes to: its link and the parent's id.
fn parent_of<'a>(
    link: Option<&'a FinishLink>,
    child: &Session,
) -> Result<(&'a FinishLink, String)> {
    let Some(link) = link else {
        return Err(Error::precondition(
            "append_to_parent",
            format!(
                "session {} has no parent session: it was not created with parent_session_id",
                quoted(&child.external_id)
            ),
        ));
    };
    let parent = link
        .parent_external_id
        .clone()
        .ok_or_else(|| parent_deleted(child))?;
    Ok((link, parent))
}

fn parent_deleted(child: &Session) -> Error {
    Error::precondition(
        "append_to_parent",
        format!(
            "the parent of session {} was deleted",
            quoted(&child.external_id)
        ),
    )
}

/// The tool result FinishSession appends to the parent, when the request asks for one;
/// a request that sends an answer without `append_to_parent` (or the reverse) is refused.
fn finish_answer(request: &FinishRequest, max_content_bytes: usize) -> Result<Option<Message>> {
    match (request.append_to_parent, request.final_answer.is_empty()) {
        (false, false) => Err(Error::invalid(
            "final_answer",
            "is appended to the parent only with append_to_parent: set it, or send no final_answer",
        )),
        (true, true) => Err(Error::invalid(
            "final_answer",
            "must not be empty with append_to_parent: it becomes the parent's tool result",
        )),
        (false, true) => Ok(None),
        (true, false) => answer_message(request, max_content_bytes).map(Some),
    }
}

/// The tool result `request` appends to the parent (its tool call id filled in once the
/// link is read), checked as AppendTurn checks a message, errors naming final_answer.
fn answer_message(request: &FinishRequest, max_content_bytes: usize) -> Result<Message> {
    let mut answer = Message::text(Role::Tool, request.final_answer.clone());
    answer.metadata =
        BTreeMap::from([(SUBAGENT_SESSION_KEY.to_string(), request.session_id.clone())]);
    // A stand-in call id: the real one is the link's, checked against the parent.
    answer.tool_call_id = "-".into();
    validate_message(0, &answer, max_content_bytes, "answer").map_err(|error| match error {
        Error::InvalidArgument { reason, .. } => Error::invalid("final_answer", reason),
        other => other,
    })?;
    Ok(answer)
}

/// An error of the parent's append, named for FinishSession: what the parent's state
/// refused (its tool call answered meanwhile, the parent finished) is about
/// append_to_parent; what the answer carries, about final_answer.
fn parent_refused(error: Error, parent: &str) -> Error {
    match error {
        Error::InvalidArgument { field, reason } if field.ends_with("tool_call_id") => {
            Error::precondition(
                "append_to_parent",
                format!("the parent session {}: {reason}", quoted(parent)),
            )
        }
        Error::InvalidArgument { reason, .. } => Error::invalid("final_answer", reason),
        Error::Precondition { reason, .. } => Error::precondition("append_to_parent", reason),
        other => other,
    }
}
