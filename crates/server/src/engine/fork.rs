//! ForkSession: a new session sharing its source's log up to a seq, then diverging
//! (decision 0019). Decided under the source's row lock from its summaries and, when the
//! cut is not at the end, sums over the shorter side of the cut; written in one
//! statement with the events on both sides.
use std::collections::BTreeMap;

use super::report::{row_report, summary_region};
use super::{Engine, SessionInfo};
use crate::budget;
use crate::error::{Error, Result, quoted};
use crate::events::EventDetail;
use crate::fork::{self, Cut, MAX_FORK_DEPTH};
use crate::message::ViewState;
use crate::policy::{Policy, PolicyOverrides};
use crate::quota::live_sessions_full;
use crate::session::{Session, Summary};
use crate::store::{NewFork, SessionTx};
use crate::validate::{NUL_REASON, validate_session_id};

/// Levels of summaries a fork descends through at most to find those within its cut
/// (each level is one depth lower; summaries never nest this deep).
const MAX_SUMMARY_LEVELS: usize = 64;

/// What ForkSession asks for.
#[derive(Debug, Clone)]
pub struct ForkRequest {
    pub source_session_id: String,
    /// The last shared seq; None: the source's last.
    pub at_seq: Option<i64>,
    /// The fork's id; empty: generated.
    pub session_id: String,
    /// Over the source's policy.
    pub overrides: PolicyOverrides,
    /// Set over the source's metadata.
    pub metadata: BTreeMap<String, String>,
}

/// The fork's view and aggregates as decided from the source.
struct Plan {
    /// The source's summaries the fork starts with as its active ones, oldest first.
    summaries: Vec<Summary>,
    view_first_seq: i64,
    restored: Vec<(i64, ViewState, i64)>,
    log_tokens: i64,
    content_bytes: i64,
    view_tokens: i64,
    turn_count: i64,
    last_turn_tokens: i64,
}

impl Engine {
    pub async fn fork_session(&self, tenant_id: i64, request: ForkRequest) -> Result<SessionInfo> {
        let session_id = check_fork(&request)?;
        let mut tx = self
            .store
            .lock_session(tenant_id, &request.source_session_id)
            .await?
            .ok_or_else(|| {
                Error::not_found(format!(
                    "source_session_id: session {}",
                    quoted(&request.source_session_id)
                ))
            })?;
        let source = tx.session.clone();
        let at = request.at_seq.unwrap_or(source.message_count);
        if at > source.message_count {
            return Err(Error::invalid(
                "at_seq",
                format!(
                    "{at} is past the source's last seq ({})",
                    source.message_count
                ),
            ));
        }
        let policy = fork_policy(&source.policy, request.overrides.clone())?;
        self.model_for(&policy)?;
        if at > 0 && source.inherits() && tx.lineage_depth().await? >= MAX_FORK_DEPTH {
            return Err(Error::FailedPrecondition {
                message: format!(
                    "source_session_id: {} is a fork {MAX_FORK_DEPTH} levels deep, the most a fork may be; fork an earlier session in its line",
                    quoted(&request.source_session_id)
                ),
                figures: vec![("max_fork_depth", MAX_FORK_DEPTH)],
            });
        }
        let live_quota = self.quotas.quotas(tenant_id).await?.live_sessions;
        if live_quota > 0 {
            let live = tx.live_sessions(tenant_id).await?;
            if live >= live_quota {
                return Err(live_sessions_full(live, live_quota));
            }
        }
        let plan = plan(&mut tx, &source, at).await?;
        let summary_tokens = summary_region(&plan.summaries, &policy);

        let budget_status = fork_budget_status(&policy, &source, at, &plan, summary_tokens);

        let event = EventDetail::SessionForked {
            source_session_id: source.external_id.clone(),
            fork_session_id: session_id.clone(),
            at_seq: at,
        };
        let mut metadata = source.metadata.clone();
        metadata.extend(request.metadata);
        let policy_json = serde_json::to_value(&policy).map_err(Error::internal)?;
        let created = tx
            .create_fork(NewFork {
                external_id: &session_id,
                policy: &policy_json,
                metadata: &metadata,
                at_seq: at,
                turn_count: plan.turn_count,
                log_tokens: plan.log_tokens,
                content_bytes: plan.content_bytes,
                view_tokens: plan.view_tokens,
                last_turn_tokens: plan.last_turn_tokens,
                view_first_seq: plan.view_first_seq,
                summary_tokens,
                budget_status,
                summaries: plan.summaries.iter().map(|s| s.id).collect(),
                restored: plan.restored,
                event,
            })
            .await;
        match created {
            Ok(row) => Ok(SessionInfo { row }),
            Err(error) if error.is_unique_violation() => Err(Error::AlreadyExists(format!(
                "session_id: a session named {} already exists",
                quoted(&session_id)
            ))),
            Err(error) => Err(error.into()),
        }
    }
}

/// Checks a fork's request before anything is read; the fork's id (generated when the
/// request gives none).
fn check_fork(request: &ForkRequest) -> Result<String> {
    validate_session_id(&request.source_session_id).map_err(|error| match error {
        Error::InvalidArgument { reason, .. } => Error::invalid("source_session_id", reason),
        other => other,
    })?;
    let session_id = if request.session_id.is_empty() {
        uuid::Uuid::new_v4().to_string()
    } else {
        validate_session_id(&request.session_id)?;
        request.session_id.clone()
    };
    if let Some(at) = request.at_seq
        && at < 0
    {
        return Err(Error::invalid(
            "at_seq",
            format!("must be 0 or more (unset: the source's last seq), got {at}"),
        ));
    }
    if let Some((key, _)) = request
        .metadata
        .iter()
        .find(|(key, value)| key.contains('\0') || value.contains('\0'))
    {
        return Err(Error::invalid(
            format!("metadata[{}]", quoted(key)),
            NUL_REASON,
        ));
    }
    Ok(session_id)
}

/// The fork's budget status, from its row as it will be.
fn fork_budget_status(
    policy: &Policy,
    source: &Session,
    at: i64,
    plan: &Plan,
    summary_tokens: i64,
) -> budget::Status {
    // The fork's row as it will be, for its budget status: nothing built yet, no
    // anchor, a view epoch of its own.
    let mut preview = source.clone();
    preview.message_count = at;
    preview.view_first_seq = plan.view_first_seq;
    preview.view_tokens = plan.view_tokens;
    preview.summary_tokens = summary_tokens;
    preview.last_turn_tokens = plan.last_turn_tokens;
    preview.view_epoch = 0;
    preview.anchor = None;
    preview.builds.last.system_tokens = 0;
    preview.builds.last.tool_tokens = 0;
    row_report(policy, &preview).status
}

/// The source's policy with `overrides` over it; the token counts of the shared
/// messages stay, so the tokenizer may not change.
fn fork_policy(source: &Policy, overrides: PolicyOverrides) -> Result<Policy> {
    let policy = Policy::resolve(source, overrides)?;
    if policy.tokenizer != source.tokenizer {
        return Err(Error::invalid(
            "policy.tokenizer",
            "must be the source's: the shared messages keep the token counts they were appended with",
        ));
    }
    if policy.tokenizer == crate::policy::TokenizerKind::Heuristic
        && policy.heuristic_chars_per_token != source.heuristic_chars_per_token
    {
        return Err(Error::invalid(
            "policy.heuristic_chars_per_token",
            format!(
                "must be the source's ({}): the shared messages keep the token counts they were appended with",
                source.heuristic_chars_per_token
            ),
        ));
    }
    Ok(policy)
}

/// The fork's view and aggregates: the source's summaries within the cut (descending
/// into one that crosses it), the view after the prefix they cover, the messages a step
/// summary left behind brought back, and the sums over the shorter side of the cut.
async fn plan(tx: &mut SessionTx, source: &Session, at: i64) -> Result<Plan> {
    let last = source.message_count;
    let mut reused: Vec<Summary> = Vec::new();
    let mut crossing_first: Option<i64> = None;
    let mut level = tx.active_summaries().await?;
    for _ in 0..MAX_SUMMARY_LEVELS {
        let mut parents = Vec::new();
        for summary in level {
            match fork::cut(summary.first_seq, summary.last_seq, at) {
                Cut::Within => reused.push(summary),
                Cut::Crosses => {
                    crossing_first = Some(
                        crossing_first.map_or(summary.first_seq, |f| f.min(summary.first_seq)),
                    );
                    parents.push(summary.id);
                }
                Cut::Beyond => {}
            }
        }
        if parents.is_empty() {
            break;
        }
        level = tx.summary_children(&parents).await?;
    }
    reused.sort_by_key(|s| s.first_seq);
    let spans: Vec<(i64, i64)> = reused.iter().map(|s| (s.first_seq, s.last_seq)).collect();
    let view_first_seq = fork::view_first_seq(&spans, source.view_first_seq);

    // Messages a step summary the fork does not reuse had taken out of the view.
    let restored: Vec<(i64, ViewState, i64)> = match crossing_first {
        Some(first) => {
            let steps: Vec<(i64, i64)> = spans
                .iter()
                .copied()
                .filter(|&(first, _)| first >= view_first_seq)
                .collect();
            tx.summarized(first.max(view_first_seq), at)
                .await?
                .into_iter()
                .filter(|m| !fork::covered(m.seq, &steps))
                .map(|m| {
                    let (state, tokens) = fork::restored(m.token_count, m.view_tokens);
                    (m.seq, state, tokens)
                })
                .collect()
        }
        None => Vec::new(),
    };
    let restored_tokens = |from: i64| -> i64 {
        restored
            .iter()
            .filter(|(seq, _, _)| *seq >= from)
            .map(|(_, _, tokens)| tokens)
            .sum()
    };

    // Sums over whichever side of the cut is shorter.
    let tail = if at < last && last - at <= at {
        Some(tx.log_sums(at + 1, last).await?)
    } else {
        None
    };
    let (log_tokens, content_bytes) = if at == last {
        (source.log_tokens, source.content_bytes)
    } else if let Some(tail) = tail {
        (
            source.log_tokens - tail.tokens,
            source.content_bytes - tail.bytes,
        )
    } else {
        let head = tx.log_sums(1, at).await?;
        (head.tokens, head.bytes)
    };
    let view_tokens = if view_first_seq == source.view_first_seq && at == last {
        source.view_tokens
    } else if let (true, Some(tail)) = (view_first_seq == source.view_first_seq, tail) {
        source.view_tokens - tail.view_tokens
    } else {
        tx.log_sums(view_first_seq, at).await?.view_tokens
    } + restored_tokens(view_first_seq);
    let (turn_count, last_turn_tokens) = if at == last {
        (source.turn_count, source.last_turn_tokens)
    } else if at == 0 {
        (0, 0)
    } else {
        let start = tx.turn_start(at).await?.unwrap_or(1);
        let turn = tx.log_sums(start, at).await?;
        (turn.turn, turn.view_tokens + restored_tokens(start))
    };
    Ok(Plan {
        summaries: reused,
        view_first_seq,
        restored,
        log_tokens,
        content_bytes,
        view_tokens,
        turn_count,
        last_turn_tokens,
    })
}
