//! AppendTurn: validate, count, decide the view and the anchor, write (optimistically,
//! then under the row lock), announce evictions and budget crossings.
use std::collections::HashSet;

use super::report::{session_finished, session_not_found};
use super::request::count_messages;
use super::{AppendOutcome, AppendRequest, Engine, JobReason, SUMMARIZE_JOB};
use crate::append::{self, Batch, Eviction};
use crate::compaction;
use crate::error::{Error, Result};
use crate::events::EventDetail;
use crate::message::{Message, Role, ViewState};
use crate::policy::Policy;
use crate::session::Session;
use crate::store::{AppendState, AppendWrite, Appended};
use crate::validate::{
    NUL_REASON, check_tool_references, validate_batch, validate_session_id, validate_usage,
};

const MAX_IDEMPOTENCY_KEY_CHARS: usize = 200;
/// Optimistic tries of an append racing other writers of its session before it reads
/// under the row lock.
const OPTIMISTIC_APPEND_ATTEMPTS: usize = 3;

impl Engine {
    pub async fn append_turn(
        &self,
        tenant_id: i64,
        request: AppendRequest,
    ) -> Result<AppendOutcome> {
        let usage_index = self.check_append(&request)?;
        let bytes = request.messages.iter().fold(0u64, |sum, message| {
            sum.saturating_add(u64::try_from(message.counted_bytes()).unwrap_or(u64::MAX))
        });
        self.quotas.admit_append(tenant_id, bytes).await?;

        // The tool calls the batch makes or answers: what the session knows of them is
        // read with the session row.
        let mut referenced: Vec<String> = Vec::new();
        for message in &request.messages {
            referenced.extend(message.tool_calls.iter().map(|call| call.id.clone()));
            if message.role == Role::Tool {
                referenced.push(message.tool_call_id.clone());
            }
        }
        let key = request.idempotency.as_ref().map(|(key, _)| key.as_str());
        // A session's policy never changes, so the batch is tokenized once, whatever the
        // attempts.
        let mut counts = None;
        // Without a read first when this replica holds the session row as its own last
        // statement on it left it (its previous append or build): the write applies only
        // if the row is still that version — so every field decided on, the build record
        // a usage report anchors on included, is what the database holds — and the
        // batch's tool-call references hold. Appends with an idempotency key read (the
        // key's record is not in the row).
        if request.idempotency.is_none() {
            let made: HashSet<&str> = request
                .messages
                .iter()
                .flat_map(|m| m.tool_calls.iter().map(|call| call.id.as_str()))
                .collect();
            let answered: Vec<&str> = request
                .messages
                .iter()
                .filter(|m| m.role == Role::Tool && !made.contains(m.tool_call_id.as_str()))
                .map(|m| m.tool_call_id.as_str())
                .collect();
            // Not for a fork's batch that names a tool call: the write's checks of an
            // assumed state see only the fork's own calls, not those it inherited.
            // Written, or the write refused (the row changed, a reference does not
            // hold), or a verdict on the request that the cached row might explain: then
            // a read below decides with what the database holds. Both verdicts come
            // before the write; any other error may come after it committed.
            let mut tries = self.store.cached_tries(tenant_id, &request.session_id);
            let eligible = |state: &AppendState| !state.session.inherits() || referenced.is_empty();
            while let Some(state) = tries.next(&answered, eligible) {
                match self
                    .append_once(&request, usage_index, state, &mut counts)
                    .await
                {
                    Ok(Some(outcome)) => return Ok(outcome),
                    Ok(None) => {}
                    Err(Error::InvalidArgument { .. } | Error::Conflict { .. }) => break,
                    Err(error) => {
                        tries.failed();
                        return Err(error);
                    }
                }
            }
        }
        // Optimistic: read, decide, write if the session row is unchanged. After a few
        // lost races with other writers of the session, the read takes the lock.
        for attempt in 0..=OPTIMISTIC_APPEND_ATTEMPTS {
            let lock = attempt == OPTIMISTIC_APPEND_ATTEMPTS;
            let state = self
                .store
                .append_state(tenant_id, &request.session_id, &referenced, key, lock)
                .await?
                .ok_or_else(|| session_not_found(&request.session_id))?;
            if let Some(outcome) = self
                .append_once(&request, usage_index, state, &mut counts)
                .await?
            {
                return Ok(outcome);
            }
        }
        // Unreachable in practice: the locked attempt's write cannot find the row changed.
        Err(Error::internal(
            "an append under the session's row lock found the row changed",
        ))
    }

    /// Checks an append's request before anything is read: its session id, messages,
    /// usage report and idempotency key; the index of the message the usage is for.
    fn check_append(&self, request: &AppendRequest) -> Result<Option<usize>> {
        validate_session_id(&request.session_id)?;
        self.config
            .limits
            .check_message_count("messages", request.messages.len())?;
        validate_batch(&request.messages, self.config.max_content_bytes)?;
        let usage_index = validate_usage(request.usage, &request.messages)?;
        if let Some((key, _)) = &request.idempotency {
            if key.chars().count() > MAX_IDEMPOTENCY_KEY_CHARS {
                return Err(Error::invalid(
                    "idempotency_key",
                    format!("must be at most {MAX_IDEMPOTENCY_KEY_CHARS} characters"),
                ));
            }
            if key.contains('\0') {
                return Err(Error::invalid("idempotency_key", NUL_REASON));
            }
        }
        Ok(usage_index)
    }

    /// OUTPUT_EVICTED for each evicted tool result, its tool named from the batch or,
    /// when an earlier message made the call, from the session's stored calls.
    async fn eviction_events(
        &self,
        state: &mut AppendState,
        evictions: &[Eviction],
    ) -> Result<Vec<EventDetail>> {
        let mut events = Vec::with_capacity(evictions.len());
        for eviction in evictions {
            let tool_name = match &eviction.tool_name {
                Some(name) => name.clone(),
                None => self.store.tool_name(state, &eviction.call_id).await?,
            };
            events.push(EventDetail::OutputEvicted {
                seq: eviction.seq,
                tool_name,
                tokens: eviction.tokens,
                preview_tokens: eviction.preview_tokens,
            });
        }
        Ok(events)
    }

    /// Decides one append from what `state` read and writes it; `None` when the session
    /// changed after the read (nothing written). FinishSession appends its answer to the
    /// parent through here too, with a state read under the parent's lock.
    pub(super) async fn append_once(
        &self,
        request: &AppendRequest,
        usage_index: Option<usize>,
        mut state: AppendState,
        counted: &mut Option<Vec<i64>>,
    ) -> Result<Option<AppendOutcome>> {
        if let Some(outcome) = replayed(request, &state)? {
            return Ok(Some(outcome));
        }
        // A copy: `state` lends its transaction to a tool-name lookup further down.
        let session = state.session.clone();
        let session = &session;
        check_appendable(request, session)?;

        let (calls, answers) =
            check_tool_references(&state.known_calls, &request.messages, session.message_count)?;

        let policy = &session.policy;
        if counted.is_none() {
            *counted = Some(count_messages(self.counter(policy).await?, &request.messages).await?);
        }
        let counts = counted.as_deref().unwrap_or_default();
        let views = evictions(policy, &request.messages, counts, session.message_count).await?;
        let content_bytes =
            (self.config.limits).session_bytes_after(session.content_bytes, &request.messages)?;
        let batch = Batch {
            messages: &request.messages,
            counts,
            views: &views,
            usage: usage_index.zip(request.usage),
            content_bytes,
        };
        let plan = append::plan(policy, session, &batch);
        // A model-backed session gets a summarization job, enqueued by this append's
        // write unless one is pending (the extractive summarizer runs within
        // BuildMessages instead: it is deterministic and takes about a millisecond).
        let wants_job = plan.summarize_due && self.model_for(policy)?.is_some();
        if wants_job && state.assumed && !state.pending_known {
            // Whether a job is pending is not known: decide with a read.
            return Ok(None);
        }
        let pending_job = state.pending_jobs.get(SUMMARIZE_JOB).copied();
        // Decided on a pending job the replica remembers: the write checks it.
        let pending = (wants_job && state.assumed).then_some((SUMMARIZE_JOB, pending_job));
        let new_job = (wants_job && pending_job.is_none())
            .then(|| self.summarize_job(JobReason::Threshold, 0, false));
        let mut outcome = AppendOutcome {
            version: plan.update.version,
            seqs: plan.new_messages.iter().map(|new| new.seq).collect(),
            report: plan.report,
            replayed: false,
            evicted_seqs: plan.evictions.iter().map(|e| e.seq).collect(),
            summarization_job_id: if wants_job { pending_job } else { None },
        };
        let mut events = self.eviction_events(&mut state, &plan.evictions).await?;
        events.extend(recall_event(request, &outcome.seqs, counts));
        let budget_status = plan.budget.map(|(status, event)| {
            events.push(event);
            status
        });
        // The stored response: the job id, when this write enqueues one, is filled in
        // by the write itself.
        let stored = match &request.idempotency {
            Some(_) => Some(serde_json::to_value(&outcome).map_err(Error::internal)?),
            None => None,
        };
        let notify = new_job.is_some() && self.config.notify_gate.take();
        let write = AppendWrite {
            batch: &plan.new_messages,
            calls: &calls,
            answers: &answers,
            update: plan.update,
            events,
            budget_status,
            idempotency: request
                .idempotency
                .as_ref()
                .zip(stored)
                .map(|((key, hash), stored)| (key.as_str(), hash.as_slice(), stored)),
            job: new_job.as_ref().map(|job| (job, notify)),
            pending,
            ledger: &plan.ledger,
        };
        let appended = self.store.append(state, write).await?;
        if notify && !matches!(appended, Appended::Applied { job_id: Some(_) }) {
            self.config.notify_gate.release();
        }
        match appended {
            Appended::Raced => Ok(None),
            Appended::Applied { job_id } => {
                if new_job.is_some() {
                    outcome.summarization_job_id = job_id;
                }
                Ok(Some(outcome))
            }
        }
    }
}

/// The response stored for the request's idempotency key, when the key was used: the
/// same request is answered as it was; another request under it is refused.
fn replayed(request: &AppendRequest, state: &AppendState) -> Result<Option<AppendOutcome>> {
    let (Some((_, hash)), Some((stored_hash, response))) =
        (&request.idempotency, &state.idempotent)
    else {
        return Ok(None);
    };
    if stored_hash != hash {
        return Err(Error::invalid(
            "idempotency_key",
            "was already used with a different request; use a new key for a new append",
        ));
    }
    let mut outcome: AppendOutcome =
        serde_json::from_value(response.clone()).map_err(Error::internal)?;
    outcome.replayed = true;
    Ok(Some(outcome))
}

/// Refuses an append to a finished session, or at a version the session is not at.
fn check_appendable(request: &AppendRequest, session: &Session) -> Result<()> {
    if session.finished_at.is_some() {
        return Err(session_finished(session));
    }
    match request.expected_version {
        Some(expected) if expected != session.version => Err(Error::Conflict {
            current_version: session.version,
            expected_version: expected,
        }),
        _ => Ok(()),
    }
}

/// How each new message enters the view: as its preview, with the preview's token
/// count, where the core says so (`compaction::evicts_on_append`); the rest whole.
async fn evictions(
    policy: &Policy,
    messages: &[Message],
    counts: &[i64],
    message_count: i64,
) -> Result<Vec<(ViewState, i64)>> {
    let evict: Vec<usize> = (0..messages.len())
        .filter(|&i| compaction::evicts_on_append(policy, &messages[i], counts[i]))
        .collect();
    let mut views: Vec<(ViewState, i64)> = counts
        .iter()
        .map(|&tokens| (ViewState::Full, tokens))
        .collect();
    if evict.is_empty() {
        return Ok(views);
    }
    let render = compaction::Render::new(policy);
    let previews: Vec<(usize, Message, i64)> = evict
        .into_iter()
        .map(|i| (i, messages[i].clone(), counts[i]))
        .collect();
    let counted = tokio::task::spawn_blocking(move || {
        previews
            .into_iter()
            .map(|(i, message, tokens)| {
                let seq = message_count + 1 + i as i64;
                let preview = render.message(&message, ViewState::Evicted, seq, tokens, "");
                (i, render.counter.message(&preview))
            })
            .collect::<Vec<_>>()
    })
    .await
    .map_err(Error::internal)?;
    for (i, tokens) in counted {
        views[i] = (ViewState::Evicted, tokens.min(counts[i]));
    }
    Ok(views)
}

/// RECALL_ANSWERED, when the append is ctxd's answer to a recall call (written at the
/// batch's one seq, of its one count).
fn recall_event(request: &AppendRequest, seqs: &[i64], counts: &[i64]) -> Option<EventDetail> {
    let answered = request.recall.as_ref()?;
    Some(answered.event(*seqs.first()?, *counts.first()?))
}
