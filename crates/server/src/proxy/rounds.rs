//! Recall rounds: when the session has the recall tools and the model's reply calls
//! them, the endpoint answers the calls (as AnswerRecall does, each announced by a
//! RECALL_ANSWERED event with its round) and calls the upstream again itself. The agent
//! receives only the reply that follows; the session holds the round, marked, so the
//! agent's next history is recognised without it. At most the endpoint's
//! `recall_rounds` per agent request: the call after the last goes without the tools.
use super::Proxy;
use super::conversation::Conversation;
use crate::error::{Error, Result};
use crate::format::Format;
use crate::ingest;
use crate::recall;

/// The rounds of one agent request.
pub(super) struct Rounds {
    done: u32,
    max: u32,
}

impl Rounds {
    pub fn new(max: u32) -> Rounds {
        Rounds { done: 0, max }
    }

    /// Whether another round may run, so the recall tools are offered.
    pub fn left(&self) -> bool {
        self.done < self.max
    }
}

/// Whether the reply (the response body, read whole) was a recall round, now answered:
/// the upstream is to be called again.
pub(super) async fn answered(
    proxy: &Proxy,
    conversation: &mut Conversation,
    provider: Format,
    body: &[u8],
    rounds: &mut Rounds,
) -> Result<bool> {
    let Ok(reply) = ingest::response(provider, &String::from_utf8_lossy(body)) else {
        return Ok(false);
    };
    let Some(round) = recall::round(&reply.messages) else {
        return Ok(false);
    };
    rounds.done += 1;
    match conversation
        .record_round(proxy, reply, &round, rounds.done)
        .await
    {
        Ok(()) => crate::metrics::metrics().recall_round("answered"),
        // Another writer moved the session since the build: built again, asked again.
        Err(Error::Conflict { .. }) => {
            tracing::info!(session_id = %conversation.session_id, "provider endpoint: the session moved during a recall round; building again");
        }
        Err(error) => return Err(error),
    }
    Ok(true)
}
