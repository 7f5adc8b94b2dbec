//! Recall behind the endpoint: the session has the recall tools, the model's earlier
//! tool result was evicted, and the model searches for it, expands it and acts on it —
//! while the agent (written here as any client of the provider's API would be, streamed
//! or not, Anthropic or OpenAI) sees only the call that acts. The endpoint answered the
//! rounds itself, announced each, kept within its bound, and the agent's next history is
//! recognised without a fork.
use ctxd::exchange::stream::Assembler;
use ctxd::format::Format;
use ctxd::proxy::Settings;
use ctxd::recall::{EXPAND, SEARCH};
use serde_json::{Value, json};

use super::fake::{Fake, Options, Step};
use super::{json_of, post_json, start_endpoint_with};

const WINDOW: i64 = 32_000;
/// The fact the model needs again, in the middle of a result too big to stay whole.
const FACT: &str = "ZEBRA-4417";

fn build_log() -> String {
    let mut text = String::new();
    for n in 0..250 {
        if n == 125 {
            text.push_str(&format!("release code: {FACT}\n"));
        }
        text.push_str(&format!("step {n:03}: compiled module_{n:03} ok\n"));
    }
    text
}

fn script() -> Vec<Step> {
    vec![
        Step::Call("read_file", json!({"path": "build.log"})),
        Step::Call(SEARCH, json!({"query": "release code"})),
        Step::ExpandFound,
        Step::CallWithFound("submit", "code", "ZEBRA-"),
        Step::Answer("Submitted."),
    ]
}

fn settings(rounds: u32) -> Settings {
    Settings {
        recall_tools: true,
        recall_rounds: rounds,
        ..Settings::new(1 << 20)
    }
}

/// What the agent saw: the tools it was asked to run, what it submitted, and the
/// streams it read (how many `message_start`s each held).
#[derive(Debug, Default)]
struct Run {
    calls: Vec<String>,
    submitted: Vec<String>,
    starts_per_stream: Vec<usize>,
    /// The agent's history at the end.
    history: Vec<Value>,
}

/// The agent's own tools.
fn run_tool(run: &mut Run, name: &str, input: &Value) -> String {
    run.calls.push(name.to_string());
    match name {
        "read_file" => build_log(),
        "submit" => {
            run.submitted
                .push(input["code"].as_str().unwrap_or("").to_string());
            "accepted".into()
        }
        other => format!("Error: no tool named {other}"),
    }
}

fn tool_schema() -> Value {
    json!({"type": "object", "properties": {"path": {"type": "string"}, "code": {"type": "string"}}})
}

/// An agent on the Anthropic Messages API, streamed or not.
async fn anthropic_agent(url: &str, stream: bool) -> Run {
    let tools = json!([
        {"name": "read_file", "description": "Reads a file.", "input_schema": tool_schema()},
        {"name": "submit", "description": "Submits a code.", "input_schema": tool_schema()}]);
    let mut messages = vec![
        json!({"role": "user", "content": "Find the release code in build.log and submit it."}),
    ];
    let mut run = Run::default();
    for _ in 0..8 {
        let body = json!({"model": "claude-test", "max_tokens": 1000, "stream": stream,
            "system": "You are a careful agent.", "tools": tools, "messages": messages});
        let response = post_json(&format!("{url}/v1/messages"), &[("x-api-key", "k")], &body).await;
        assert_eq!(response.status(), 200);
        let text = response.text().await.unwrap();
        let message: Value = if stream {
            run.starts_per_stream
                .push(text.matches("event: message_start").count());
            let mut assembler = Assembler::new(Format::AnthropicMessages);
            assembler.feed(text.as_bytes());
            serde_json::from_str(&assembler.finish().expect("a whole stream")).unwrap()
        } else {
            serde_json::from_str(&text).unwrap()
        };
        messages.push(json!({"role": "assistant", "content": message["content"]}));
        let uses: Vec<Value> = (message["content"].as_array().unwrap().iter())
            .filter(|block| block["type"] == "tool_use")
            .cloned()
            .collect();
        if uses.is_empty() {
            run.history = messages;
            return run;
        }
        let results: Vec<Value> = uses
            .iter()
            .map(|call| {
                let out = run_tool(&mut run, call["name"].as_str().unwrap(), &call["input"]);
                json!({"type": "tool_result", "tool_use_id": call["id"], "content": out})
            })
            .collect();
        messages.push(json!({"role": "user", "content": results}));
    }
    panic!("the agent's task did not end: {run:?}");
}

/// An agent on OpenAI Chat Completions.
async fn openai_agent(url: &str) -> Run {
    let tools: Vec<Value> = ["read_file", "submit"]
        .iter()
        .map(|name| json!({"type": "function", "function": {"name": name, "parameters": tool_schema()}}))
        .collect();
    let mut messages = vec![
        json!({"role": "system", "content": "You are a careful agent."}),
        json!({"role": "user", "content": "Find the release code in build.log and submit it."}),
    ];
    let mut run = Run::default();
    for _ in 0..8 {
        let body = json!({"model": "gpt-test", "tools": tools, "messages": messages});
        let response = post_json(
            &format!("{url}/v1/chat/completions"),
            &[("authorization", "Bearer k")],
            &body,
        )
        .await;
        assert_eq!(response.status(), 200);
        let message = json_of(response).await["choices"][0]["message"].clone();
        messages.push(message.clone());
        let Some(calls) = message["tool_calls"].as_array() else {
            return run;
        };
        for call in calls {
            let input: Value =
                serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
            let out = run_tool(&mut run, call["function"]["name"].as_str().unwrap(), &input);
            messages.push(json!({"role": "tool", "tool_call_id": call["id"], "content": out}));
        }
    }
    panic!("the agent's task did not end: {run:?}");
}

/// The RECALL_ANSWERED events written: (tool, round, error).
async fn recall_events(pool: &sqlx::PgPool) -> Vec<(String, i64, bool)> {
    let rows: Vec<(Value,)> =
        sqlx::query_as("select detail from events where kind = 11 order by id")
            .fetch_all(pool)
            .await
            .unwrap();
    rows.into_iter()
        .map(|(detail,)| {
            let tool = detail["tool"].as_str().unwrap().to_string();
            (
                tool,
                detail["round"].as_i64().unwrap(),
                detail["error"].as_bool().unwrap(),
            )
        })
        .collect()
}

async fn sessions(pool: &sqlx::PgPool) -> i64 {
    sqlx::query_scalar("select count(*) from sessions")
        .fetch_one(pool)
        .await
        .unwrap()
}

async fn recalled_through(pool: sqlx::PgPool, agent: &str) {
    let options = Options {
        needle: Some(FACT),
        ..Options::default()
    };
    let fake = Fake::start_with(script(), WINDOW, options).await;
    let endpoint = start_endpoint_with(pool.clone(), &fake.url(), WINDOW, settings(3), None).await;
    let run = match agent {
        "anthropic" => anthropic_agent(&endpoint.url, false).await,
        "anthropic streamed" => anthropic_agent(&endpoint.url, true).await,
        _ => openai_agent(&endpoint.url).await,
    };
    // The agent ran its own tools only, and submitted the fact the model recovered.
    assert_eq!(run.calls, ["read_file", "submit"], "{agent}");
    assert_eq!(run.submitted, [FACT], "{agent}");
    // A streamed reply after two rounds is one message's stream: the final one's.
    assert!(
        run.starts_per_stream.iter().all(|starts| *starts == 1),
        "{run:?}"
    );
    let record = fake.record.lock().unwrap();
    assert!(
        record.violations.is_empty(),
        "{agent}: {:?}",
        record.violations
    );
    // The model did not see the fact before it searched: the result was evicted.
    assert_eq!(record.requests, 5, "{agent}");
    assert!(
        !record.needle_seen[1],
        "{agent}: the fact was in the request"
    );
    assert!(
        record.needle_seen[3],
        "{agent}: the expand answer did not hold the fact"
    );
    assert!(record.recall_offered.iter().all(|offered| *offered));
    drop(record);
    // Two rounds within the agent's second request, each announced.
    let expected = [
        ("search".to_string(), 1, false),
        ("expand".to_string(), 2, false),
    ];
    assert_eq!(recall_events(&pool).await, expected, "{agent}");
    // The agent's next history, without the rounds, continued its session.
    assert_eq!(sessions(&pool).await, 1, "{agent}");
}

#[sqlx::test]
async fn an_anthropic_agent_gets_what_its_model_recalled(pool: sqlx::PgPool) {
    recalled_through(pool, "anthropic").await;
}

#[sqlx::test]
async fn a_streaming_agent_receives_only_the_final_answers_stream(pool: sqlx::PgPool) {
    recalled_through(pool, "anthropic streamed").await;
}

#[sqlx::test]
async fn an_openai_agent_gets_what_its_model_recalled(pool: sqlx::PgPool) {
    recalled_through(pool, "openai").await;
}

#[sqlx::test]
async fn rounds_stop_at_the_bound_and_the_next_call_goes_without_the_tools(pool: sqlx::PgPool) {
    let fake = Fake::start(script(), WINDOW).await;
    let endpoint = start_endpoint_with(pool.clone(), &fake.url(), WINDOW, settings(1), None).await;
    let run = anthropic_agent(&endpoint.url, false).await;
    let offered = fake.record.lock().unwrap().recall_offered.clone();
    // The call after the one round went without the recall tools; the scripted model
    // called expand anyway, and that call reached the agent as any unknown tool would.
    assert_eq!(offered[..3], [true, true, false]);
    assert!(run.calls.contains(&EXPAND.to_string()), "{run:?}");
    assert_eq!(
        recall_events(&pool).await,
        [("search".to_string(), 1, false)]
    );
    assert_eq!(sessions(&pool).await, 1);
}

#[sqlx::test]
async fn a_client_tool_named_like_a_recall_tool_is_refused_and_nothing_written(pool: sqlx::PgPool) {
    let fake = Fake::start(script(), WINDOW).await;
    let endpoint = start_endpoint_with(pool.clone(), &fake.url(), WINDOW, settings(3), None).await;
    let body = json!({"model": "claude-test", "max_tokens": 100,
        "tools": [{"name": "ctxd_recall_search", "input_schema": {"type": "object"}}],
        "messages": [{"role": "user", "content": "hi"}]});
    let url = format!("{}/v1/messages", endpoint.url);
    let response = post_json(&url, &[("x-api-key", "k")], &body).await;
    assert_eq!(response.status(), 400);
    let error = json_of(response).await;
    assert_eq!(error["error"]["type"], "invalid_request_error");
    let message = error["error"]["message"].as_str().unwrap();
    assert!(message.contains("$.tools[0].name"), "{message}");
    assert_eq!(sessions(&pool).await, 0);
    assert_eq!(fake.record.lock().unwrap().requests, 0);
}

#[sqlx::test]
async fn a_history_compared_with_the_session_leaves_the_rounds_out(pool: sqlx::PgPool) {
    let fake = Fake::start(script(), WINDOW).await;
    let endpoint = start_endpoint_with(pool.clone(), &fake.url(), WINDOW, settings(3), None).await;
    let run = anthropic_agent(&endpoint.url, false).await;
    let held: i64 = sqlx::query_scalar("select message_count from sessions")
        .fetch_one(&pool)
        .await
        .unwrap();
    // No head to trust (another replica, which never saw the conversation): the next
    // request's history is compared with the session's messages, rounds and all.
    drop(endpoint);
    sqlx::query("delete from proxy_heads")
        .execute(&pool)
        .await
        .unwrap();
    let endpoint = start_endpoint_with(pool.clone(), &fake.url(), WINDOW, settings(3), None).await;
    let mut messages = run.history;
    messages.push(json!({"role": "user", "content": "Thanks."}));
    let body = json!({"model": "claude-test", "max_tokens": 1000, "system": "You are a careful agent.",
        "tools": [{"name": "read_file", "input_schema": tool_schema()}, {"name": "submit", "input_schema": tool_schema()}],
        "messages": messages});
    let url = format!("{}/v1/messages", endpoint.url);
    assert_eq!(
        post_json(&url, &[("x-api-key", "k")], &body).await.status(),
        200
    );
    // The same session, extended by the new message (and the reply, once recorded): no
    // fork at the first round.
    assert_eq!(sessions(&pool).await, 1);
    let now: i64 = sqlx::query_scalar("select message_count from sessions")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert!(now > held, "{held} -> {now}");
}
