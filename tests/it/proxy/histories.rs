//! Property test: a client's histories, as an agent sends them — extended by the reply
//! and a new message, rewritten from some point (the agent compacted or edited on its
//! own), or sent again (a retry) — reconcile so that the session the conversation
//! continues in always expands to exactly what the client last sent followed by the
//! reply, and nothing is ever lost from a session or stored twice (every session's
//! messages stay a prefix-closed branch of some history the client sent) — with the
//! requests alternating between two replicas, and two continuations sent at once.
use proptest::prelude::*;
use serde_json::{Value, json};

use super::fake::{Fake, Step};
use super::{json_of, post_json, start_endpoint};
use ctxd::engine::{ExpandRequest, ExpandTarget};

#[derive(Debug, Clone)]
enum Move {
    /// The reply and a new user message (with a tool call and its result when true).
    Extend(bool),
    /// The history cut to this fraction of its length, then a new user message.
    Rewrite(u8),
    /// The same request again.
    Retry,
    /// Two continuations of the same history sent at once.
    Concurrent,
}

fn moves() -> impl Strategy<Value = Vec<Move>> {
    let one = prop_oneof![
        4 => any::<bool>().prop_map(Move::Extend),
        1 => any::<u8>().prop_map(Move::Rewrite),
        1 => Just(Move::Retry),
        1 => Just(Move::Concurrent),
    ];
    prop::collection::vec(one, 1..7)
}

async fn post(url: &str, session: &str, messages: &[Value]) -> Value {
    let body = json!({"model": "gpt-test", "messages": messages});
    let url = format!("{url}/v1/chat/completions");
    let response = post_json(&url, &[("x-ctxd-session", session)], &body).await;
    assert_eq!(response.status(), 200);
    let reply = json_of(response).await;
    reply["choices"][0]["message"].clone()
}

/// The session a conversation continues in, and its messages' roles and texts.
async fn head(pool: &sqlx::PgPool, endpoint: &super::Endpoint, key: &str) -> Vec<(i32, String)> {
    let session: String = sqlx::query_scalar("select session_id from proxy_heads where key = $1")
        .bind(key)
        .fetch_one(pool)
        .await
        .unwrap();
    messages_of(endpoint, session).await
}

/// Every session's messages.
async fn every_session(pool: &sqlx::PgPool, endpoint: &super::Endpoint) -> Vec<Vec<(i32, String)>> {
    let ids: Vec<String> = sqlx::query_scalar("select external_id from sessions")
        .fetch_all(pool)
        .await
        .unwrap();
    let mut all = Vec::new();
    for id in ids {
        all.push(messages_of(endpoint, id).await);
    }
    all
}

async fn messages_of(endpoint: &super::Endpoint, session: String) -> Vec<(i32, String)> {
    let info = endpoint.engine.get_session(1, &session).await.unwrap();
    let last_seq = info.row.message_count;
    if last_seq == 0 {
        return Vec::new();
    }
    let request = ExpandRequest {
        session_id: session,
        target: ExpandTarget::Range {
            first_seq: 1,
            last_seq,
        },
        max_tokens: 0,
    };
    let expanded = endpoint.engine.expand(1, request).await.unwrap();
    expanded
        .messages
        .into_iter()
        .map(|m| (m.message.role as i32, m.message.content))
        .collect()
}

fn expected(messages: &[Value], reply: &Value) -> Vec<(i32, String)> {
    let role = |r: &str| match r {
        "user" => 2,
        "assistant" => 3,
        _ => 4,
    };
    messages
        .iter()
        .chain(std::iter::once(reply))
        .map(|m| {
            (
                role(m["role"].as_str().unwrap()),
                m["content"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

async fn run(moves: Vec<Move>) {
    let (pool, _) = crate::harness::fresh_database_url("histories").await;
    let fake = Fake::start(vec![Step::Answer("noted")], 1_000_000).await;
    let endpoint = start_endpoint(pool.clone(), &fake.url(), 200_000, 1 << 22).await;
    // A second replica on the same database: the client's requests alternate between
    // them, so each replica's remembered head is overtaken by the other's appends.
    let other = start_endpoint(pool.clone(), &fake.url(), 200_000, 1 << 22).await;
    let urls = [endpoint.url.clone(), other.url.clone()];
    let key = "conversation-1";
    let mut history = vec![json!({"role": "user", "content": "task 0"})];
    let mut reply = post(&endpoint.url, key, &history).await;
    for (n, step) in moves.into_iter().enumerate() {
        match step {
            Move::Extend(with_call) => {
                history.push(json!({"role": "assistant", "content": reply["content"]}));
                if with_call {
                    let id = format!("call_{n}");
                    history.push(json!({"role": "assistant", "content": null, "tool_calls": [
                        {"id": id, "type": "function", "function": {"name": "bash", "arguments": "{}"}}]}));
                    history.push(json!({"role": "tool", "tool_call_id": id, "content": format!("output {n}")}));
                }
                history.push(json!({"role": "user", "content": format!("message {n}")}));
            }
            Move::Rewrite(fraction) => {
                let keep = 1 + (history.len() - 1) * usize::from(fraction) / 256;
                history.truncate(keep);
                while history
                    .last()
                    .is_some_and(|m| m["role"] != "user" && m["role"] != "tool")
                {
                    history.pop();
                }
                history.push(json!({"role": "user", "content": format!("rewritten {n}")}));
            }
            Move::Retry => {}
            Move::Concurrent => {
                history.push(json!({"role": "assistant", "content": reply["content"]}));
                let mut a = history.clone();
                a.push(json!({"role": "user", "content": format!("branch a {n}")}));
                let mut b = history.clone();
                b.push(json!({"role": "user", "content": format!("branch b {n}")}));
                let (reply_a, reply_b) =
                    tokio::join!(post(&urls[0], key, &a), post(&urls[1], key, &b));
                // Both are stored, each in a session of its own branch.
                let (want_a, want_b) = (expected(&a, &reply_a), expected(&b, &reply_b));
                let both = || async {
                    let all = every_session(&pool, &endpoint).await;
                    all.contains(&want_a) && all.contains(&want_b)
                };
                crate::support::wait_until(both).await;
                let all = every_session(&pool, &endpoint).await;
                assert!(
                    all.contains(&want_a) && all.contains(&want_b),
                    "after move {n}: {all:#?}"
                );
                // The conversation goes on in the branch the head holds.
                let held = head(&pool, &endpoint, key).await;
                (history, reply) = if held == want_a {
                    (a, reply_a)
                } else {
                    (b, reply_b)
                };
                continue;
            }
        }
        reply = post(&urls[n % 2], key, &history).await;
        // The reply is recorded after the answer: wait for the session to hold it.
        let want: Vec<(i32, String)> = expected(&history, &reply);
        crate::support::wait_until(|| async { head(&pool, &endpoint, key).await == want }).await;
        assert_eq!(head(&pool, &endpoint, key).await, want, "after move {n}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]
    #[test]
    fn every_history_a_client_sends_is_what_its_session_holds(moves in moves()) {
        tokio::runtime::Runtime::new().unwrap().block_on(run(moves));
    }
}
