//! Search recall: of the facts ctxd's last request of a session no longer shows, how
//! many Search finds the source of — the words of the fact, as a query over the
//! session's messages, have a message containing the fact among the top 5 hits — and
//! how many the model itself gets back with ctxd's recall tools (`recovered`): on a
//! fork of the session with recall_tools on, a ctxd_recall_search call with the fact's
//! words, answered by AnswerRecall, names a source's seq, and ctxd_recall_expand calls
//! of that seq (the first and up to [`CONTINUATIONS`] more, each going on where the
//! last stopped, each answer at most a tenth of the window) bring back the fact's text.
use serde_json::json;

use super::facts::{Checker, SessionFacts, collapse};
use super::meter::Measured;
use super::server::Client;
use super::strategies::Build;
use crate::client::with_key;
use crate::replay::BoxError;
use ctxd_server::pb;

/// Lost facts asked about per session and window, spread evenly over the lost ones.
pub const SAMPLE: usize = 30;

/// The words of `fact` as a Search query: letters and digits only (punctuation would be
/// syntax: `-` excludes, quotes make phrases), without the `or` operator, 12 at most.
pub fn query(fact: &str) -> String {
    let words: String = fact
        .chars()
        .map(|c| if c.is_alphanumeric() { c } else { ' ' })
        .collect();
    collapse(&words)
        .split(' ')
        .filter(|word| !word.eq_ignore_ascii_case("or"))
        .take(12)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Expand answers after the first that the model may ask for to reach a fact.
pub const CONTINUATIONS: usize = 3;

/// The facts the last request (`history` recorded messages before it) lost, measured:
/// each found when a top-5 hit is a recorded message containing it (seq = index + 1:
/// every recorded message was appended in order), each recovered as the module says.
pub async fn measure(
    client: &mut Client,
    api_key: Option<&str>,
    session_id: &str,
    facts: &SessionFacts,
    history: usize,
    last: &Build,
) -> Result<Measured, BoxError> {
    let lost = Checker::default().lost(facts, history, &last.system, &last.messages);
    let step = lost.len().div_ceil(SAMPLE).max(1);
    let mut model = Model::fork(client, api_key, session_id).await?;
    let mut measured = Measured::default();
    for &fact in lost.iter().step_by(step) {
        let words = query(&facts.facts[fact as usize].1);
        if words.is_empty() {
            continue;
        }
        let search = pb::SearchRequest {
            session_id: session_id.to_string(),
            query: words.clone(),
            scope: pb::SearchScope::Messages as i32,
            limit: 5,
            ..Default::default()
        };
        let hits = client
            .search(with_key(search, api_key)?)
            .await?
            .into_inner()
            .hits;
        let sources = &facts.found_in[fact as usize];
        measured.asked += 1;
        measured.found += u64::from(
            hits.iter()
                .any(|hit| sources.iter().any(|&i| i64::from(i) + 1 == hit.seq)),
        );
        let text = &facts.facts[fact as usize].1;
        measured.recovered += u64::from(model.recovers(client, text, &words, sources).await?);
    }
    model.delete(client).await?;
    Ok(measured)
}

/// A scripted model on a fork of the session with recall_tools on: it calls the recall
/// tools and ctxd answers them.
struct Model<'a> {
    api_key: Option<&'a str>,
    fork: String,
    calls: u64,
}

impl<'a> Model<'a> {
    async fn fork(
        client: &mut Client,
        api_key: Option<&'a str>,
        session_id: &str,
    ) -> Result<Model<'a>, BoxError> {
        let fork = format!("{session_id}-recall");
        let request = pb::ForkSessionRequest {
            source_session_id: session_id.to_string(),
            session_id: fork.clone(),
            policy: Some(pb::Policy {
                recall_tools: Some(true),
                ..Default::default()
            }),
            ..Default::default()
        };
        client.fork_session(with_key(request, api_key)?).await?;
        Ok(Model {
            api_key,
            fork,
            calls: 0,
        })
    }

    /// Whether the fact comes back: a search with its words names a source's seq, and
    /// expanding that seq (going on at most CONTINUATIONS times) shows its text.
    async fn recovers(
        &mut self,
        client: &mut Client,
        fact: &str,
        words: &str,
        sources: &[u32],
    ) -> Result<bool, BoxError> {
        let answer = self
            .call(
                client,
                "ctxd_recall_search",
                json!({"query": words, "limit": 5}),
            )
            .await?;
        let named: Vec<i64> = seqs_named(&answer);
        let Some(seq) = sources
            .iter()
            .map(|&i| i64::from(i) + 1)
            .find(|seq| named.contains(seq))
        else {
            return Ok(false);
        };
        let fact = collapse(fact);
        let mut arguments = json!({"seqs": [seq]});
        // What the answers brought back, joined as the model reads them on.
        let mut read = String::new();
        for _ in 0..=CONTINUATIONS {
            let answer = self.call(client, "ctxd_recall_expand", arguments).await?;
            read.push_str(body(&answer));
            if collapse(&read).contains(&fact) {
                return Ok(true);
            }
            let Some(offset) = continue_offset(&answer) else {
                return Ok(false);
            };
            arguments = json!({"first_seq": seq, "last_seq": seq, "offset": offset});
        }
        Ok(false)
    }

    /// One recall call appended and answered; the answer's text.
    async fn call(
        &mut self,
        client: &mut Client,
        tool: &str,
        arguments: serde_json::Value,
    ) -> Result<String, BoxError> {
        self.calls += 1;
        let id = format!("recall_{}", self.calls);
        let call = pb::Message {
            role: pb::Role::Assistant as i32,
            tool_calls: vec![pb::ToolCall {
                id: id.clone(),
                name: tool.into(),
                arguments_json: arguments.to_string(),
            }],
            ..Default::default()
        };
        let append = pb::AppendTurnRequest {
            session_id: self.fork.clone(),
            messages: vec![call],
            ..Default::default()
        };
        client.append_turn(with_key(append, self.api_key)?).await?;
        let answer = pb::AnswerRecallRequest {
            session_id: self.fork.clone(),
            tool_call_id: id,
        };
        let seq = client
            .answer_recall(with_key(answer, self.api_key)?)
            .await?
            .into_inner()
            .seqs[0];
        let expand = pb::ExpandRequest {
            session_id: self.fork.clone(),
            target: Some(pb::expand_request::Target::List(pb::SeqList {
                seqs: vec![seq],
            })),
            ..Default::default()
        };
        let mut read = client
            .expand(with_key(expand, self.api_key)?)
            .await?
            .into_inner();
        Ok(read.messages.pop().map(|m| m.content).unwrap_or_default())
    }

    async fn delete(self, client: &mut Client) -> Result<(), BoxError> {
        let request = pb::DeleteSessionRequest {
            session_id: self.fork,
        };
        client
            .delete_session(with_key(request, self.api_key)?)
            .await?;
        Ok(())
    }
}

/// The seqs a search answer names (`- seq N (`).
fn seqs_named(answer: &str) -> Vec<i64> {
    answer
        .lines()
        .filter_map(|line| line.strip_prefix("- seq ")?.split(' ').next()?.parse().ok())
        .collect()
}

/// An expand answer's text without its head line and its closing note.
fn body(answer: &str) -> &str {
    let text = answer.split_once("]\n").map_or(answer, |(_, text)| text);
    match text.rfind("\n[stopped at max_tokens") {
        Some(end) => text[..end].trim_end_matches('…'),
        None => text,
    }
}

/// Where an expand answer that stopped inside a message says to go on.
fn continue_offset(answer: &str) -> Option<i64> {
    answer
        .rsplit_once("and offset ")?
        .1
        .trim_end_matches(']')
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_query_is_the_facts_words() {
        assert_eq!(
            super::query("grep -n \"or\" django/db/models/query.py"),
            "grep n django db models query py"
        );
        assert_eq!(super::query("--"), "");
    }

    #[test]
    fn answers_are_read_as_the_model_reads_them() {
        let search = "2 match(es) for \"x\"; read one whole with ctxd_recall_expand:\n- seq 12 (tool result, not shown above): a\n- summary_id 3 (seqs 1-9): b\n- seq 4 (user): c\n";
        assert_eq!(super::seqs_named(search), [12, 4]);
        let expand = "[seq 12 · tool result]\nabc…\n[stopped at max_tokens: continue with first_seq 12 and offset 3]";
        assert_eq!(super::continue_offset(expand), Some(3));
        assert_eq!(
            super::continue_offset("[seq 12 · tool result]\nabc\n"),
            None
        );
    }
}
