//! Anthropic prompt caching of ctxd's bodies: BuildMessages' Anthropic body marks the
//! cache where its prefix is stable, and a fake Anthropic server that caches by
//! Anthropic's rules (`anthropic`) bills a long session read mostly from the cache —
//! the same bodies without the marks read nothing. A client's own marks, appended
//! natively, come back where the four breakpoints allow.
mod anthropic;

use std::sync::{Arc, Mutex};

use ctxd::pb;
use serde_json::{Value, json};
use sqlx::PgPool;

use crate::harness::*;
use anthropic::{Cache, Usage};

/// A tool's output of about 400 tokens, different at each step.
fn output(step: usize) -> String {
    (0..40)
        .map(|line| {
            format!(
                "src/module_{step}/file_{line}.py:{line}: checked {} items\n",
                step * 7 + line
            )
        })
        .collect()
}

async fn post(url: &str, body: &Value) -> Usage {
    let response = reqwest::Client::new()
        .post(format!("{url}/v1/messages"))
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let reply: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    let usage = &reply["usage"];
    Usage {
        input: usage["input_tokens"].as_i64().unwrap(),
        written: usage["cache_creation_input_tokens"].as_i64().unwrap(),
        read: usage["cache_read_input_tokens"].as_i64().unwrap(),
    }
}

fn read_share(usages: &[Usage]) -> f64 {
    let read: i64 = usages.iter().map(|u| u.read).sum();
    let total: i64 = usages.iter().map(Usage::total).sum();
    read as f64 / total.max(1) as f64
}

#[sqlx::test]
async fn a_long_session_built_for_anthropic_is_read_from_the_cache(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    create(&mut client, "c", window(16_000, 2_000)).await;
    let cache = Arc::new(Mutex::new(Cache::default()));
    let url = anthropic::start(cache.clone()).await;
    let mut plain = Cache::default();
    append(&mut client, "c", vec![user("Check every module.")])
        .await
        .unwrap();
    let mut summarized = 0;
    for step in 0..60 {
        let id = format!("s{step}");
        append(
            &mut client,
            "c",
            vec![call(&[&id]), result(&id, &output(step))],
        )
        .await
        .unwrap();
        let built = build(&mut client, "c", pb::OutputFormat::AnthropicMessages)
            .await
            .unwrap();
        summarized += usize::from(!built.summaries.is_empty());
        let body: Value = serde_json::from_str(&built.json).unwrap();
        post(&url, &body).await;
        plain.request(&crate::proxy::fake::without_cache_markers(&body));
    }
    let cache = cache.lock().unwrap();
    assert!(cache.violations.is_empty(), "{:?}", cache.violations);
    assert!(summarized > 0, "the session never compacted");
    let (marked, unmarked_share) = (read_share(&cache.usages), read_share(&plain.usages));
    let written: i64 = cache.usages.iter().map(|u| u.written).sum();
    let total: i64 = cache.usages.iter().map(Usage::total).sum();
    eprintln!(
        "anthropic caching: {} requests, {total} input tokens, read from the cache {:.1} % (written {written}); unmarked {:.1} %",
        cache.usages.len(),
        marked * 100.0,
        unmarked_share * 100.0
    );
    assert!(
        marked > 0.7,
        "only {:.1} % read from the cache",
        marked * 100.0
    );
    assert_eq!(unmarked_share, 0.0);
}

#[sqlx::test]
async fn a_clients_cache_marks_come_back_where_they_fit(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    create(&mut client, "n", window(16_000, 2_000)).await;
    let mark = json!({"type": "ephemeral"});
    let items = json!([
        {"role": "user", "content": [{"type": "text", "text": "Read the file.", "cache_control": mark}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "cat a"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "contents", "cache_control": mark}]},
        {"role": "assistant", "content": "Done."},
        {"role": "user", "content": "Next?"}
    ]);
    append_native(
        &mut client,
        "n",
        pb::OutputFormat::AnthropicMessages,
        "",
        &items.to_string(),
    )
    .await
    .unwrap();
    let body = json_body(&mut client, "n", pb::OutputFormat::AnthropicMessages).await;
    let marked = |pointer: &str| {
        body.pointer(pointer)
            .and_then(|block| block.get("cache_control"))
            .is_some()
    };
    assert!(
        marked("/messages/0/content/0"),
        "the client's text mark: {body}"
    );
    assert!(
        marked("/messages/2/content/0"),
        "the client's tool_result mark: {body}"
    );
    assert!(marked("/messages/4/content/0"), "the newest turn: {body}");
    assert!(marked("/system/0"), "the system prompt: {body}");
    assert!(!marked("/messages/1/content/0") && !marked("/messages/3/content/0"));
}
