//! A recall round of the provider endpoint: a model reply that called ctxd's recall
//! tools, which the endpoint answers and sends back upstream itself, so the agent never
//! sees it. What a round is, and the messages it leaves in the session, are decided
//! here; the endpoint runs it.
use super::{ANSWER, is_recall_tool};
use crate::ingest::TOOL_ERROR;
use crate::message::{Message, Role};

/// Metadata key on a model reply the endpoint answered itself (its round, 1, 2, ...):
/// the reply is recall traffic, which the agent's own history never holds.
pub const ROUND: &str = "ctxd.recall.round";
/// The most rounds the endpoint may be set to run for one request.
pub const MAX_ROUNDS: u32 = 10;

/// The calls of a reply that is a recall round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Round {
    /// Ids of the calls to recall tools, answered by ctxd.
    pub recall: Vec<String>,
    /// The agent's own tools called in the same reply: (id, name). They are not run (the
    /// agent never sees the reply); each gets a result saying so.
    pub others: Vec<(String, String)>,
}

/// The reply's round, when any of its messages calls a recall tool.
pub fn round(reply: &[Message]) -> Option<Round> {
    let calls = reply.iter().flat_map(|message| &message.tool_calls);
    let (recall, others): (Vec<_>, Vec<_>) = calls.partition(|call| is_recall_tool(&call.name));
    if recall.is_empty() {
        return None;
    }
    Some(Round {
        recall: recall.into_iter().map(|call| call.id.clone()).collect(),
        others: others
            .into_iter()
            .map(|call| (call.id.clone(), call.name.clone()))
            .collect(),
    })
}

/// Whether ctxd wrote the message as part of a recall round or answer (a reply it
/// answered, an answer, a call's not-run note): never in an agent's own history.
pub fn is_round(message: &Message) -> bool {
    message.metadata.contains_key(ROUND) || message.metadata.contains_key(ANSWER)
}

/// Marks a reply's messages as the endpoint's round `number`.
pub fn mark(reply: &mut [Message], number: u32) {
    for message in reply {
        message.metadata.insert(ROUND.into(), number.to_string());
    }
}

/// The result of an agent's tool the model called alongside a recall tool: not run, and
/// the model told to call it again on its own.
pub fn not_run(call_id: &str, name: &str) -> Message {
    let mut message = Message::text(
        Role::Tool,
        format!(
            "Not run: {name} was called together with a ctxd_recall tool. Call it again, on its own, if it is still needed."
        ),
    );
    message.tool_call_id = call_id.to_string();
    message.name = name.to_string();
    message.metadata.insert(ANSWER.into(), "not_run".into());
    message.metadata.insert(TOOL_ERROR.into(), "true".into());
    message
}

/// An append that is ctxd's answer to a recall call, announced as RECALL_ANSWERED.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answered {
    pub tool_call_id: String,
    /// "search" or "expand".
    pub tool: &'static str,
    pub error: bool,
    /// The endpoint's round, 0 when a client asked.
    pub round: u32,
}

/// Longest tool call id an event repeats.
const MAX_EVENT_ID_CHARS: usize = 200;

impl Answered {
    /// The event of the answer written at `seq`, of `tokens`.
    pub fn event(&self, seq: i64, tokens: i64) -> crate::events::EventDetail {
        crate::events::EventDetail::RecallAnswered {
            seq,
            tool_call_id: self.tool_call_id.chars().take(MAX_EVENT_ID_CHARS).collect(),
            tool: self.tool.to_string(),
            tokens,
            error: self.error,
            round: i32::try_from(self.round).unwrap_or(i32::MAX),
        }
    }
}
