//! The endpoint's own behaviour: a streamed reply passes through as it arrives (the first
//! event reaches the client while the upstream still holds the rest) and is recorded
//! whole; bad requests get the provider's own error shape and change nothing; a refusal
//! for length compacts once, announced, and the retry goes through.
use serde_json::{Value, json};

use super::fake::{Fake, Options, Step};
use super::{json_of, post_json, start_endpoint};

const WINDOW: i64 = 16_000;

fn anthropic_request(stream: bool) -> Value {
    json!({"model": "claude-test", "max_tokens": 500, "stream": stream,
        "system": [{"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}],
        "tools": [{"name": "bash", "description": "Run a command", "input_schema": {"type": "object"}}],
        "messages": [{"role": "user", "content": "Say hello."}]})
}

async fn session_rows(pool: &sqlx::PgPool) -> (i64, i64) {
    sqlx::query_as("select count(*), coalesce(sum(message_count), 0)::bigint from sessions")
        .fetch_one(pool)
        .await
        .unwrap()
}

#[sqlx::test]
async fn a_streamed_reply_reaches_the_client_while_the_upstream_is_still_sending(
    pool: sqlx::PgPool,
) {
    let (release, hold) = tokio::sync::oneshot::channel();
    let options = Options {
        hold: Some(hold),
        ..Options::default()
    };
    let fake = Fake::start_with(vec![Step::Answer("Hello there.")], WINDOW, options).await;
    let endpoint = start_endpoint(pool.clone(), &fake.url(), WINDOW, 1 << 20).await;
    let url = format!("{}/v1/messages", endpoint.url);
    // The upstream has sent its first event and holds the rest until released: a proxy
    // that waited for the whole reply would answer nothing before the deadline.
    let deadline = std::time::Duration::from_secs(30);
    let body = anthropic_request(true);
    let request = post_json(&url, &[("x-api-key", "sk-test")], &body);
    let mut response = tokio::time::timeout(deadline, request)
        .await
        .expect("no response head while the upstream held its reply");
    assert_eq!(response.status(), 200);
    let first = tokio::time::timeout(deadline, response.chunk())
        .await
        .expect("no first chunk while the upstream held its reply")
        .unwrap()
        .expect("a first chunk");
    assert!(
        String::from_utf8_lossy(&first).contains("message_start"),
        "{first:?}"
    );
    release.send(()).unwrap();
    let mut rest: Vec<u8> = Vec::new();
    while let Some(chunk) = response.chunk().await.unwrap() {
        rest.extend_from_slice(&chunk);
    }
    assert!(String::from_utf8_lossy(&rest).contains("message_stop"));
    // The reply is recorded once the stream ends: the user message and the reply.
    let recorded =
        crate::support::wait_until(|| async { session_rows(&pool).await == (1, 2) }).await;
    assert!(
        recorded,
        "the session holds {:?}",
        session_rows(&pool).await
    );
}

#[sqlx::test]
async fn bad_requests_get_the_providers_error_shape_and_append_nothing(pool: sqlx::PgPool) {
    let fake = Fake::start(vec![Step::Answer("hi")], WINDOW).await;
    let endpoint = start_endpoint(pool.clone(), &fake.url(), WINDOW, 4096).await;
    let client = reqwest::Client::new();
    let post = |path: &str, body: String| {
        client
            .post(format!("{}{path}", endpoint.url))
            .body(body)
            .send()
    };
    let cases: Vec<(&str, String, u16, &str)> = vec![
        ("/v1/messages", "{not json".into(), 400, "anthropic"),
        (
            "/v1/messages",
            json!({"model": "m", "messages": [{"role": "robot", "content": "x"}]}).to_string(),
            400,
            "anthropic",
        ),
        (
            "/v1/chat/completions",
            json!({"model": "m", "messages": "nope"}).to_string(),
            400,
            "openai",
        ),
        (
            "/v1beta/models/g:generateContent",
            json!({"contents": [{"role": "user"}]}).to_string(),
            400,
            "gemini",
        ),
        ("/v1/nothing-here", "{}".into(), 404, "openai"),
        ("/v1/messages", "x".repeat(5000), 413, "anthropic"),
    ];
    for (path, body, status, shape) in cases {
        let response = post(path, body).await.unwrap();
        assert_eq!(response.status().as_u16(), status, "{path}");
        let body = json_of(response).await;
        match shape {
            "anthropic" => {
                assert_eq!(body["type"], "error", "{body}");
                assert!(body["error"]["message"].is_string(), "{body}");
            }
            "gemini" => assert_eq!(body["error"]["code"], status, "{body}"),
            _ => assert!(
                body["error"]["message"].is_string() && body["error"]["type"].is_string(),
                "{body}"
            ),
        }
        let message = body["error"]["message"].as_str().unwrap();
        assert!(
            !message.to_lowercase().contains("sql") && !message.contains("serde"),
            "{message}"
        );
    }
    // A key ctxd does not know, and an upstream that is down.
    let unknown = "ctxd_0000000000000000000000000000000000000000000000000000000000000000";
    let url = format!("{}/v1/messages", endpoint.url);
    let response = post_json(&url, &[("x-ctxd-key", unknown)], &anthropic_request(false)).await;
    assert_eq!(response.status(), 401);
    assert_eq!(
        session_rows(&pool).await,
        (0, 0),
        "a refused request wrote something"
    );
    let down = start_endpoint(pool.clone(), "http://127.0.0.1:9", WINDOW, 1 << 20).await;
    let response = post_json(
        &format!("{}/v1/messages", down.url),
        &[],
        &anthropic_request(false),
    )
    .await;
    assert_eq!(response.status(), 502);
    let body = json_of(response).await;
    assert_eq!(body["error"]["type"], "api_error", "{body}");
}

#[sqlx::test]
async fn a_refusal_for_length_compacts_once_and_the_retry_goes_through(pool: sqlx::PgPool) {
    let options = Options {
        too_long: 1,
        ..Options::default()
    };
    let fake = Fake::start_with(vec![Step::Answer("Done.")], WINDOW, options).await;
    let endpoint = start_endpoint(pool.clone(), &fake.url(), WINDOW, 1 << 20).await;
    // A history long enough to compact: ten exchanged turns.
    let mut messages = Vec::new();
    for turn in 0..10 {
        messages.push(json!({"role": "user", "content": format!("question {turn}: {}", "words ".repeat(200))}));
        messages.push(json!({"role": "assistant", "content": format!("answer {turn}: {}", "more ".repeat(200))}));
    }
    messages.push(json!({"role": "user", "content": "and now?"}));
    let mut request = anthropic_request(false);
    request["messages"] = Value::Array(messages);
    let response = post_json(&format!("{}/v1/messages", endpoint.url), &[], &request).await;
    assert_eq!(response.status(), 200);
    let body = json_of(response).await;
    assert_eq!(body["content"][0]["text"], "Done.");
    let record = fake.record.lock().unwrap();
    assert_eq!(record.refused_for_length, 1);
    let sent = record.last_body["messages"].as_array().unwrap().len();
    assert!(
        sent < 21,
        "the retry sent all {sent} messages: nothing was compacted"
    );
    // The summaries follow the client's own system block, which goes as it came.
    let system = &record.last_body["system"];
    assert_eq!(system[0], anthropic_request(false)["system"][0], "{system}");
    let summaries = system[1]["text"].as_str().unwrap_or("");
    assert!(
        summaries.contains("question 0"),
        "no summary after the client's system: {system}"
    );
    drop(record);
    // The compaction is announced (an emergency compaction's completion).
    let announced: i64 = sqlx::query_scalar(
        "select count(*) from events where kind = 2 and detail->>'compaction' = 'emergency'",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(announced, 1);
}

/// A session's messages' texts, once the reply is recorded.
async fn texts(pool: &sqlx::PgPool, count: i64) -> Vec<String> {
    let recorded =
        crate::support::wait_until(|| async { session_rows(pool).await == (1, count) }).await;
    assert!(recorded, "the session holds {:?}", session_rows(pool).await);
    sqlx::query_scalar("select content from messages order by seq")
        .fetch_all(pool)
        .await
        .unwrap()
}

#[sqlx::test]
async fn responses_replies_are_recorded_streamed_or_not(pool: sqlx::PgPool) {
    let fake = Fake::start(vec![Step::Answer("unused")], WINDOW).await;
    let endpoint = start_endpoint(pool.clone(), &fake.url(), WINDOW, 1 << 20).await;
    let url = format!("{}/v1/responses", endpoint.url);
    let first = json!({"model": "gpt-test", "instructions": "Be brief.", "input": "Say hi.", "stream": true});
    let response = post_json(&url, &[], &first).await;
    assert_eq!(response.status(), 200);
    assert!(
        String::from_utf8_lossy(&response.bytes().await.unwrap()).contains("response.completed")
    );
    assert_eq!(texts(&pool, 2).await, ["Say hi.", "responses reply"]);
    let second = json!({"model": "gpt-test", "instructions": "Be brief.", "input": [
        {"role": "user", "content": "Say hi."},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "responses reply"}]},
        {"role": "user", "content": "Again."}]});
    let body = json_of(post_json(&url, &[], &second).await).await;
    assert_eq!(body["output"][0]["content"][0]["text"], "responses reply");
    assert_eq!(
        texts(&pool, 4).await,
        ["Say hi.", "responses reply", "Again.", "responses reply"]
    );
    let sent = fake.record.lock().unwrap().last_body.clone();
    assert_eq!(sent["instructions"], "Be brief.", "{sent}");
    assert_eq!(sent["input"].as_array().unwrap().len(), 3, "{sent}");
}

#[sqlx::test]
async fn gemini_replies_are_recorded_streamed_or_not(pool: sqlx::PgPool) {
    let fake = Fake::start(vec![Step::Answer("unused")], WINDOW).await;
    let endpoint = start_endpoint(pool.clone(), &fake.url(), WINDOW, 1 << 20).await;
    let stream_url = format!(
        "{}/v1beta/models/gemini-test:streamGenerateContent?alt=sse",
        endpoint.url
    );
    let first = json!({"systemInstruction": {"parts": [{"text": "Be brief."}]},
        "contents": [{"role": "user", "parts": [{"text": "Say hi."}]}],
        "generationConfig": {"temperature": 0.5}});
    let response = post_json(&stream_url, &[("x-goog-api-key", "gemini-key")], &first).await;
    assert_eq!(response.status(), 200);
    response.bytes().await.unwrap();
    assert_eq!(texts(&pool, 2).await, ["Say hi.", "gemini reply"]);
    let url = format!("{}/v1beta/models/gemini-test:generateContent", endpoint.url);
    let mut second = first.clone();
    second["contents"] = json!([
        {"role": "user", "parts": [{"text": "Say hi."}]},
        {"role": "model", "parts": [{"text": "gemini reply"}]},
        {"role": "user", "parts": [{"text": "Again."}]}]);
    let body = json_of(post_json(&url, &[("x-goog-api-key", "gemini-key")], &second).await).await;
    assert_eq!(
        body["candidates"][0]["content"]["parts"][0]["text"],
        "gemini reply"
    );
    assert_eq!(
        texts(&pool, 4).await,
        ["Say hi.", "gemini reply", "Again.", "gemini reply"]
    );
    let sent = fake.record.lock().unwrap().last_body.clone();
    assert_eq!(sent["generationConfig"]["temperature"], 0.5, "{sent}");
    assert_eq!(
        sent["systemInstruction"]["parts"][0]["text"], "Be brief.",
        "{sent}"
    );
}

#[sqlx::test]
async fn a_conversation_whose_session_was_deleted_starts_again(pool: sqlx::PgPool) {
    let fake = Fake::start(vec![Step::Answer("hi")], WINDOW).await;
    let endpoint = start_endpoint(pool.clone(), &fake.url(), WINDOW, 1 << 20).await;
    let url = format!("{}/v1/chat/completions", endpoint.url);
    let body = json!({"model": "m", "messages": [{"role": "user", "content": "task"}]});
    let headers = [("x-ctxd-session", "kept-by-name")];
    assert_eq!(post_json(&url, &headers, &body).await.status(), 200);
    let recorded =
        crate::support::wait_until(|| async { session_rows(&pool).await == (1, 2) }).await;
    assert!(recorded, "{:?}", session_rows(&pool).await);
    endpoint
        .engine
        .delete_session(1, "kept-by-name")
        .await
        .unwrap();
    let again = json!({"model": "m", "messages": [
        {"role": "user", "content": "task"}, {"role": "assistant", "content": "hi (1)"},
        {"role": "user", "content": "more"}]});
    let response = post_json(&url, &headers, &again).await;
    assert_eq!(response.status(), 200, "{}", json_of(response).await);
    // A new session holds the whole history the client sent, and the reply.
    let held = crate::support::wait_until(|| async { session_rows(&pool).await == (1, 4) }).await;
    assert!(held, "{:?}", session_rows(&pool).await);
}
