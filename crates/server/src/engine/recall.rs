//! AnswerRecall: a call the model made to one of ctxd's recall tools, run (a Search or
//! an Expand of the session) and its answer appended as the call's tool result, marked
//! so compaction clears it first. Bad arguments are answered, as an error result, not
//! refused: the model reads what was wrong and can call again.
use std::collections::HashSet;

use sha2::{Digest, Sha256};

use super::{
    AppendOutcome, AppendRequest, Engine, ExpandRequest, ExpandTarget, Scope, SearchRequest,
};
use crate::error::{Error, Result, quoted};
use crate::ingest::TOOL_ERROR;
use crate::message::{Message, Role, ViewState};
use crate::policy::Policy;
use crate::recall::{self, Found, RecallCall, Target};
use crate::store::SearchHit;

/// Longest tool call id AnswerRecall takes.
const MAX_CALL_ID_BYTES: usize = 1024;

/// The answer to one recall call: its text, and whether it reports an error.
struct Answer {
    text: String,
    error: bool,
}

impl Engine {
    /// Answers the recall call `tool_call_id`; `round` is the provider endpoint's round
    /// (0 when a client asks), said in the RECALL_ANSWERED event.
    pub async fn answer_recall(
        &self,
        tenant_id: i64,
        session_id: &str,
        tool_call_id: &str,
        round: u32,
    ) -> Result<AppendOutcome> {
        if tool_call_id.is_empty() || tool_call_id.len() > MAX_CALL_ID_BYTES {
            return Err(Error::invalid(
                "tool_call_id",
                format!("must be 1 to {MAX_CALL_ID_BYTES} bytes"),
            ));
        }
        let row = self.session_row(tenant_id, session_id).await?;
        if !row.policy.recall_tools {
            return Err(Error::precondition(
                "session_id",
                "the session's policy does not have recall_tools on",
            ));
        }
        let call = self
            .store
            .tool_call(&row, tool_call_id)
            .await?
            .ok_or_else(|| {
                Error::not_found(format!(
                    "tool call {} of this session",
                    quoted(tool_call_id)
                ))
            })?;
        if !recall::is_recall_tool(&call.name) {
            return Err(Error::invalid(
                "tool_call_id",
                format!(
                    "names a call to {}, not to a recall tool",
                    quoted(&call.name)
                ),
            ));
        }
        let answer = match recall::parse(&call.name, &call.arguments) {
            Ok(parsed) => self.run(tenant_id, session_id, &row.policy, parsed).await?,
            Err(reason) => Answer {
                text: format!("Error: {reason}."),
                error: true,
            },
        };
        let mut message = Message::text(Role::Tool, answer.text);
        message.tool_call_id = tool_call_id.to_string();
        message.name = call.name.clone();
        let kind = if call.name == recall::SEARCH {
            "search"
        } else {
            "expand"
        };
        message.metadata.insert(recall::ANSWER.into(), kind.into());
        let answered = recall::Answered {
            tool_call_id: tool_call_id.to_string(),
            tool: kind,
            error: answer.error,
            round,
        };
        if answer.error {
            message.metadata.insert(TOOL_ERROR.into(), "true".into());
        }
        // One answer per call: a retry, or a second AnswerRecall, gets the first back.
        let hash = Sha256::digest(tool_call_id.as_bytes()).to_vec();
        let key = format!("ctxd-recall-{}", hex::encode(&hash[..16]));
        self.append_turn(
            tenant_id,
            AppendRequest {
                session_id: session_id.to_string(),
                messages: vec![message],
                expected_version: None,
                idempotency: Some((key, hash)),
                usage: None,
                recall: Some(answered),
            },
        )
        .await
    }

    async fn run(
        &self,
        tenant_id: i64,
        session_id: &str,
        policy: &Policy,
        call: RecallCall,
    ) -> Result<Answer> {
        let counter = self.counter(policy).await?;
        // No answer takes more than a tenth of the window.
        let tenth = policy.context_window_tokens / 10;
        let outcome = match call {
            RecallCall::Search {
                query,
                roles,
                since,
                until,
                limit,
            } => {
                let request = SearchRequest {
                    session_id: session_id.to_string(),
                    tree_root_session_id: String::new(),
                    query: query.clone(),
                    roles,
                    since,
                    until,
                    scope: Scope::Both,
                    limit: limit * recall::SEARCH_OVERFETCH,
                };
                async {
                    let hits = self.search(tenant_id, request).await?;
                    let kept = self
                        .without_recall_traffic(tenant_id, session_id, hits, limit)
                        .await?;
                    let found: Vec<Found> = kept.into_iter().map(found).collect();
                    Ok(recall::search_answer(&query, &found, tenth, &counter))
                }
                .await
            }
            RecallCall::Expand {
                target,
                max_tokens,
                offset,
            } => {
                // An answer never takes more than a tenth of the window.
                let cap = max_tokens
                    .min(policy.context_window_tokens / 10)
                    .max(recall::MIN_CAP);
                let request = ExpandRequest {
                    session_id: session_id.to_string(),
                    target: match target {
                        Target::Seqs(seqs) => ExpandTarget::List(seqs),
                        Target::Range {
                            first_seq,
                            last_seq,
                        } => ExpandTarget::Range {
                            first_seq,
                            last_seq,
                        },
                        Target::Summary(id) => ExpandTarget::Summary(id),
                    },
                    max_tokens: cap,
                };
                self.expand(tenant_id, request).await.map(|read| {
                    recall::expand_answer(&read.messages, read.next_seq, cap, offset, &counter)
                })
            }
        };
        match outcome {
            Ok(text) => Ok(Answer { text, error: false }),
            // What the arguments asked for does not exist or is out of bounds: said to
            // the model, in the sentence a client would get.
            Err(
                error @ (Error::InvalidArgument { .. }
                | Error::NotFound { .. }
                | Error::OutOfRange(_)
                | Error::Precondition { .. }),
            ) => Ok(Answer {
                text: format!("Error: {error}."),
                error: true,
            }),
            Err(other) => Err(other),
        }
    }
}

impl Engine {
    /// The first `limit` hits that are not recall's own traffic (the messages of the
    /// hits read in one Expand to tell).
    async fn without_recall_traffic(
        &self,
        tenant_id: i64,
        session_id: &str,
        hits: Vec<SearchHit>,
        limit: u32,
    ) -> Result<Vec<SearchHit>> {
        let seqs: Vec<i64> = hits
            .iter()
            .filter(|hit| hit.summary_id == 0)
            .map(|hit| hit.seq)
            .collect();
        let traffic: HashSet<i64> = if seqs.is_empty() {
            HashSet::new()
        } else {
            let request = ExpandRequest {
                session_id: session_id.to_string(),
                target: ExpandTarget::List(seqs),
                max_tokens: 0,
            };
            let read = self.expand(tenant_id, request).await?;
            read.messages
                .iter()
                .filter(|stored| recall::is_recall_traffic(&stored.message))
                .map(|stored| stored.seq)
                .collect()
        };
        Ok(hits
            .into_iter()
            .filter(|hit| hit.summary_id > 0 || !traffic.contains(&hit.seq))
            .take(limit as usize)
            .collect())
    }
}

fn found(hit: SearchHit) -> Found {
    Found {
        seq: hit.seq,
        summary_id: hit.summary_id,
        first_seq: hit.first_seq,
        last_seq: hit.last_seq,
        role: Role::from_i32(i32::from(hit.role)),
        hidden: hit.view_state != ViewState::Full as i16,
        snippet: hit.snippet,
    }
}
