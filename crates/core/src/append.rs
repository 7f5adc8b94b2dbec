//! What an append does, decided from the session row as read and the batch as counted:
//! each new message's seq, turn and view entry, the row's new aggregates, the anchor a
//! usage report sets, the budget report and status crossing, whether summarization is
//! due, and the task ledger's share. The engine executes the plan (one write); nothing
//! here reads or writes.
use crate::budget::{self, Anchor, Report};
use crate::events::EventDetail;
use crate::ledger::extract::{self, Extracted};
use crate::message::{Message, Role, Usage, ViewState};
use crate::outlook::{budget_crossing, row_report};
use crate::policy::Policy;
use crate::session::Session;
use crate::tokenize::REPLY_PRIMING;

/// A message ready to insert: seq, turn and token count assigned by the plan.
#[derive(Debug, Clone)]
pub struct NewMessage<'a> {
    pub seq: i64,
    pub turn: i64,
    pub token_count: i64,
    /// Tokens as rendered in the view (the preview's when evicted).
    pub view_tokens: i64,
    pub view_state: ViewState,
    pub message: &'a Message,
}

/// What an append changes on the session row.
#[derive(Debug, Clone)]
pub struct SessionUpdate {
    pub version: i64,
    pub message_count: i64,
    pub turn_count: i64,
    pub log_tokens: i64,
    pub content_bytes: i64,
    pub view_tokens: i64,
    pub last_turn_tokens: i64,
    /// Tool results evicted to a preview by this append.
    pub evicted: i64,
    pub anchor: Option<AnchorUpdate>,
    /// Provider usage reported with this append: (input, output, cached).
    pub usage: (i64, i64, i64),
}

/// A new anchor and the accuracy sample it brought.
#[derive(Debug, Clone)]
pub struct AnchorUpdate {
    pub anchor: Anchor,
    /// (estimate - reported) / reported of what ctxd had estimated for that request.
    pub error: Option<f64>,
}

/// A batch as the engine checked and counted it.
pub struct Batch<'a> {
    pub messages: &'a [Message],
    /// Each message's tokens.
    pub counts: &'a [i64],
    /// Each message's view entry: evicted to a preview (with its tokens) or whole.
    pub views: &'a [(ViewState, i64)],
    /// The message a usage report belongs to, and the report.
    pub usage: Option<(usize, Usage)>,
    /// The session's content bytes after the batch (checked against the limit).
    pub content_bytes: i64,
}

/// A tool result the append evicts, for its OUTPUT_EVICTED event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Eviction {
    pub seq: i64,
    pub call_id: String,
    /// The tool's name when the batch itself makes the call (else the session's
    /// stored call names it).
    pub tool_name: Option<String>,
    pub tokens: i64,
    pub preview_tokens: i64,
}

/// Everything one append decides.
#[derive(Debug)]
pub struct Plan<'a> {
    pub new_messages: Vec<NewMessage<'a>>,
    pub update: SessionUpdate,
    /// The budget of the session's next request after the append.
    pub report: Report,
    pub evictions: Vec<Eviction>,
    /// The session's new budget status and its event, when the append moves it.
    pub budget: Option<(crate::budget::Status, EventDetail)>,
    /// Past the summarize threshold, and automatic compaction not paused or held: a
    /// model-backed session wants a summarization job.
    pub summarize_due: bool,
    /// The task ledger's share of the batch.
    pub ledger: Extracted,
}

/// The plan of appending `batch` to `session` under `policy`.
pub fn plan<'a>(policy: &Policy, session: &Session, batch: &Batch<'a>) -> Plan<'a> {
    let new_messages = number(session, batch);
    let update = update(policy, session, batch, &new_messages);
    let report = row_report(policy, &after(session, &update));
    // A session whose compaction failed too often waits for a new user message.
    let paused = i64::from(session.compaction_failures) >= policy.compaction_failure_limit
        && !batch.messages.iter().any(|m| m.role == Role::User);
    let summarize_due = report.estimate.total_tokens > policy.summarize_threshold_tokens()
        && !paused
        && !session.compaction_held();
    let sources: Vec<(i64, &Message)> = new_messages
        .iter()
        .map(|new| (new.seq, new.message))
        .collect();
    Plan {
        evictions: evictions(batch.messages, &new_messages),
        budget: budget_crossing(session.budget_status, &report),
        ledger: extract::extract(&sources),
        new_messages,
        update,
        report,
        summarize_due,
    }
}

/// Seqs after the session's last, a turn per user message, the view entries decided.
fn number<'a>(session: &Session, batch: &Batch<'a>) -> Vec<NewMessage<'a>> {
    let mut turn = session.turn_count;
    let parts = batch.messages.iter().zip(batch.counts).zip(batch.views);
    parts
        .enumerate()
        .map(
            |(index, ((message, &token_count), &(view_state, view_tokens)))| {
                if message.role == Role::User {
                    turn += 1;
                }
                NewMessage {
                    seq: session.message_count + 1 + index as i64,
                    turn,
                    token_count,
                    view_tokens,
                    view_state,
                    message,
                }
            },
        )
        .collect()
}

/// The row's aggregates after the batch, and the anchor its usage report sets.
fn update(
    policy: &Policy,
    session: &Session,
    batch: &Batch<'_>,
    new: &[NewMessage<'_>],
) -> SessionUpdate {
    let mut last_turn_tokens = session.last_turn_tokens;
    for message in new {
        if message.message.role == Role::User {
            last_turn_tokens = 0;
        }
        last_turn_tokens += message.view_tokens;
    }
    let view_tokens: i64 = new.iter().map(|m| m.view_tokens).sum();
    let anchor = batch.usage.map(|(index, usage)| {
        let history_before =
            session.view_tokens + new[..index].iter().map(|m| m.view_tokens).sum::<i64>();
        let providers_own = policy.tokenizer.is_providers_own();
        let reported = usage.input_tokens;
        anchor_for(
            session,
            new[index].seq,
            history_before,
            reported,
            providers_own,
        )
    });
    SessionUpdate {
        version: session.version + 1,
        message_count: session.message_count + new.len() as i64,
        turn_count: new.last().map_or(session.turn_count, |m| m.turn),
        log_tokens: session.log_tokens + batch.counts.iter().sum::<i64>(),
        content_bytes: batch.content_bytes,
        view_tokens: session.view_tokens + view_tokens,
        last_turn_tokens,
        evicted: new
            .iter()
            .filter(|m| m.view_state == ViewState::Evicted)
            .count() as i64,
        anchor,
        usage: batch
            .usage
            .map(|(_, u)| (u.input_tokens, u.output_tokens, u.cached_input_tokens))
            .unwrap_or_default(),
    }
}

/// The row as the update leaves it, as far as its report reads it.
fn after(session: &Session, update: &SessionUpdate) -> Session {
    let mut after = session.clone();
    after.view_tokens = update.view_tokens;
    after.last_turn_tokens = update.last_turn_tokens;
    after.message_count = update.message_count;
    if let Some(AnchorUpdate { anchor, .. }) = &update.anchor {
        after.anchor = Some(*anchor);
    }
    after
}

/// The evicted tool results, named by the call in the batch when it is there.
fn evictions(batch: &[Message], new: &[NewMessage<'_>]) -> Vec<Eviction> {
    new.iter()
        .filter(|new| new.view_state == ViewState::Evicted)
        .map(|new| {
            let call_id = &new.message.tool_call_id;
            let tool_name = batch
                .iter()
                .flat_map(|m| &m.tool_calls)
                .find(|call| &call.id == call_id)
                .map(|call| call.name.clone());
            Eviction {
                seq: new.seq,
                call_id: call_id.clone(),
                tool_name,
                tokens: new.token_count,
                preview_tokens: new.view_tokens,
            }
        })
        .collect()
}

/// The anchor a usage report sets, and how far off ctxd's estimate of that request was.
/// The request that produced the assistant message at `assistant_seq` is the latest
/// build when that build ended right before it; otherwise the whole view before it.
/// The marginal ratio moves with the growth since the previous anchor; a session's first
/// report sets its prior ([`budget::first_delta_ratio`]). With `providers_own` (the
/// session counts with the tokenizer of the model it reports usage for) the ratio stays
/// 1: there is no tokenizer difference to learn, and what differs on growth is framing,
/// a few tokens per message, which a ratio would blow up on small steps and carry over
/// to large ones.
fn anchor_for(
    session: &Session,
    assistant_seq: i64,
    history_before: i64,
    reported: i64,
    providers_own: bool,
) -> AnchorUpdate {
    let previous = session.anchor();
    let built_right_before =
        session.builds.last.first_seq > 0 && session.builds.last.last_seq == assistant_seq - 1;
    let fixed = session.builds.last.system_tokens.max(REPLY_PRIMING)
        + session.builds.last.tool_tokens
        + session.summary_tokens;
    let (first_seq, history, predicted) = if built_right_before {
        (
            session.builds.last.first_seq,
            session.builds.last.history_tokens,
            session.builds.last.estimate_tokens,
        )
    } else {
        let estimate = budget::estimate(
            previous.as_ref(),
            session.view_epoch,
            session.view_first_seq,
            assistant_seq - 1,
            fixed,
            history_before,
        );
        (
            session.view_first_seq,
            history_before,
            estimate.total_tokens,
        )
    };
    let error = (reported > 0).then(|| (predicted - reported) as f64 / reported as f64);
    let delta_ratio = match previous {
        _ if providers_own => 1.0,
        Some(previous)
            if previous.view_epoch == session.view_epoch
                && previous.first_seq == first_seq
                && previous.last_seq < assistant_seq - 1 =>
        {
            let growth = (fixed + history) - (previous.fixed_tokens + previous.history_tokens);
            previous.next_delta_ratio(reported, growth)
        }
        Some(previous) => previous.delta_ratio,
        // The session's first report: a prior from what it says about the content, the
        // tool definitions being where providers' templates differ most.
        None => budget::first_delta_ratio(
            reported,
            fixed + history,
            fixed + history - session.builds.last.tool_tokens,
        ),
    };
    AnchorUpdate {
        anchor: Anchor {
            reported_tokens: reported,
            fixed_tokens: fixed,
            history_tokens: history,
            first_seq,
            last_seq: assistant_seq - 1,
            view_epoch: session.view_epoch,
            delta_ratio,
        },
        error,
    }
}
