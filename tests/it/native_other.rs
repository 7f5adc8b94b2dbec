//! AppendNative with Anthropic Messages and Gemini bodies through the real server: a
//! reply and its tool results appended in the provider's own shape land as messages
//! with their usage, the next BuildMessages extends the previous body by exactly them
//! (in both formats), and a body that is not the provider's shape is refused naming
//! its JSON path, with nothing written.
use ctxd::pb;
use serde_json::{Value, json};
use sqlx::PgPool;
use tonic::Code;

use crate::harness::*;

async fn native(
    client: &mut Client,
    id: &str,
    format: pb::OutputFormat,
    response: &Value,
    items: &Value,
) -> Result<pb::AppendTurnResponse, tonic::Status> {
    append_native(client, id, format, &json_text(response), &json_text(items)).await
}

fn json_text(value: &Value) -> String {
    if value.is_null() {
        String::new()
    } else {
        value.to_string()
    }
}

fn anthropic_reply() -> Value {
    json!({
        "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [
            {"type": "thinking", "thinking": "Two commands at once.", "signature": "EqQBCkgIARABGAIiQL=="},
            {"type": "text", "text": "Running both."},
            {"type": "tool_use", "id": "toolu_01", "name": "bash", "input": {"command": "ls"}},
            {"type": "tool_use", "id": "toolu_02", "name": "bash", "input": {"command": "pwd"}}
        ],
        "stop_reason": "tool_use", "stop_sequence": null,
        "usage": {"input_tokens": 40, "cache_creation_input_tokens": 100,
                  "cache_read_input_tokens": 900, "output_tokens": 60}
    })
}

fn anthropic_results() -> Value {
    json!([{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_01",
         "content": [{"type": "text", "text": "Cargo.toml\nsrc"}]},
        {"type": "tool_result", "tool_use_id": "toolu_02", "is_error": true,
         "content": [{"type": "text", "text": "permission denied"}]},
        {"type": "text", "text": "And the tests?"}
    ]}])
}

#[sqlx::test]
async fn anthropic_reply_and_results_extend_the_body(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    create(&mut client, "anthropic", window(100_000, 1_000)).await;
    let first = native(
        &mut client,
        "anthropic",
        pb::OutputFormat::AnthropicMessages,
        &Value::Null,
        &json!([{"role": "user", "content": "What is in this repository?"}]),
    )
    .await
    .unwrap();
    let before = json_body(
        &mut client,
        "anthropic",
        pb::OutputFormat::AnthropicMessages,
    )
    .await;

    let appended = native(
        &mut client,
        "anthropic",
        pb::OutputFormat::AnthropicMessages,
        &anthropic_reply(),
        &anthropic_results(),
    )
    .await
    .unwrap();
    assert_eq!(appended.version, first.version + 1);
    assert_eq!(appended.seqs, [2, 3, 4, 5]);
    let usage = session(&mut client, "anthropic").await.usage_total.unwrap();
    assert_eq!(
        (
            usage.input_tokens,
            usage.cached_input_tokens,
            usage.output_tokens
        ),
        (1040, 900, 60)
    );

    let after = json_body(
        &mut client,
        "anthropic",
        pb::OutputFormat::AnthropicMessages,
    )
    .await;
    // Cache breakpoints move to the newest turn; the content is the prefix.
    let (before, after) = (
        crate::proxy::fake::without_cache_markers(&before),
        crate::proxy::fake::without_cache_markers(&after),
    );
    let (old, new) = (
        before["messages"].as_array().unwrap(),
        after["messages"].as_array().unwrap(),
    );
    assert_eq!(&new[..old.len()], &old[..], "the earlier body is a prefix");
    assert_eq!(
        &new[old.len()..],
        &[
            json!({"role": "assistant", "content": anthropic_reply()["content"]}),
            anthropic_results()[0].clone()
        ]
    );

    // The same session as a Gemini body: the calls keep their ids, results their names.
    let gemini = json_body(&mut client, "anthropic", pb::OutputFormat::Gemini).await;
    let contents = gemini["contents"].as_array().unwrap();
    assert_eq!(
        contents[1]["parts"],
        json!([
            {"text": "Two commands at once.", "thought": true},
            {"text": "Running both."},
            {"functionCall": {"id": "toolu_01", "name": "bash", "args": {"command": "ls"}}},
            {"functionCall": {"id": "toolu_02", "name": "bash", "args": {"command": "pwd"}}}
        ])
    );
    assert_eq!(
        contents[2]["parts"][1],
        json!({"functionResponse": {"id": "toolu_02", "name": "bash",
               "response": {"error": "permission denied"}}})
    );
    server.stop().await;
}

fn gemini_reply() -> Value {
    json!({
        "candidates": [{"content": {"role": "model", "parts": [
            {"text": "I should list and print the directory.", "thought": true},
            {"functionCall": {"name": "bash", "args": {"command": "ls"}}, "thoughtSignature": "CiQB0e2Kb=="},
            {"functionCall": {"name": "bash", "args": {"command": "pwd"}}}
        ]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 1200, "candidatesTokenCount": 30,
                          "thoughtsTokenCount": 20, "cachedContentTokenCount": 1000,
                          "totalTokenCount": 1250},
        "modelVersion": "gemini-2.5-flash", "responseId": "Zx9kaPqQ"
    })
}

#[sqlx::test]
async fn gemini_reply_and_results_extend_the_body(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    create(&mut client, "gemini", window(100_000, 1_000)).await;
    native(
        &mut client,
        "gemini",
        pb::OutputFormat::Gemini,
        &Value::Null,
        &json!([{"role": "user", "parts": [
            {"text": "What is here?"},
            {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}
        ]}]),
    )
    .await
    .unwrap();
    let before = json_body(&mut client, "gemini", pb::OutputFormat::Gemini).await;
    // Results without ids, in the same request as the reply whose calls they answer.
    let results = json!([{"role": "user", "parts": [
        {"functionResponse": {"name": "bash", "response": {"output": "Cargo.toml"}}},
        {"functionResponse": {"name": "bash", "response": {"output": "/work"}}}
    ]}]);
    native(
        &mut client,
        "gemini",
        pb::OutputFormat::Gemini,
        &gemini_reply(),
        &results,
    )
    .await
    .unwrap();
    let usage = session(&mut client, "gemini").await.usage_total.unwrap();
    assert_eq!(
        (
            usage.input_tokens,
            usage.cached_input_tokens,
            usage.output_tokens
        ),
        (1200, 1000, 50)
    );

    let after = json_body(&mut client, "gemini", pb::OutputFormat::Gemini).await;
    let (old, new) = (
        before["contents"].as_array().unwrap(),
        after["contents"].as_array().unwrap(),
    );
    assert_eq!(&new[..old.len()], &old[..]);
    assert_eq!(
        &new[old.len()..],
        &[
            json!({"role": "model", "parts": [
                {"text": "I should list and print the directory.", "thought": true},
                {"functionCall": {"id": "gemini-Zx9kaPqQ-1", "name": "bash", "args": {"command": "ls"}},
                 "thoughtSignature": "CiQB0e2Kb=="},
                {"functionCall": {"id": "gemini-Zx9kaPqQ-2", "name": "bash", "args": {"command": "pwd"}}}
            ]}),
            json!({"role": "user", "parts": [
                {"functionResponse": {"id": "gemini-Zx9kaPqQ-1", "name": "bash", "response": {"output": "Cargo.toml"}}},
                {"functionResponse": {"id": "gemini-Zx9kaPqQ-2", "name": "bash", "response": {"output": "/work"}}}
            ]})
        ]
    );
    // The next reply answers with the id ctxd's body carried, in a request of its own.
    let reply = json!({"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"name": "bash", "args": {"command": "cargo test"}}}]}}], "responseId": "second"});
    native(
        &mut client,
        "gemini",
        pb::OutputFormat::Gemini,
        &reply,
        &Value::Null,
    )
    .await
    .unwrap();
    native(
        &mut client,
        "gemini",
        pb::OutputFormat::Gemini,
        &Value::Null,
        &json!([{"role": "user", "parts": [{"functionResponse": {"id": "gemini-second-0",
            "name": "bash", "response": {"output": "ok"}}}]}]),
    )
    .await
    .unwrap();

    // As an Anthropic body: the Gemini thought has no Anthropic signature, so it is not sent.
    let anthropic = json_body(&mut client, "gemini", pb::OutputFormat::AnthropicMessages).await;
    let messages = anthropic["messages"].as_array().unwrap();
    assert_eq!(messages[0]["content"][1]["source"]["type"], "base64");
    assert_eq!(
        messages[1]["content"][0],
        json!({"type": "tool_use", "id": "gemini-Zx9kaPqQ-1", "name": "bash", "input": {"command": "ls"}})
    );
    assert_eq!(
        messages.last().unwrap()["content"][0]["tool_use_id"],
        "gemini-second-0"
    );
    server.stop().await;
}

#[sqlx::test]
async fn bodies_not_in_the_provider_shape_name_the_json_path_and_write_nothing(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    create(&mut client, "bad", window(100_000, 1_000)).await;
    append(&mut client, "bad", vec![user("Go.")]).await.unwrap();
    let version = session(&mut client, "bad").await.version;
    let anthropic = pb::OutputFormat::AnthropicMessages;
    let gemini = pb::OutputFormat::Gemini;
    let huge = format!(
        r#"{{"content": [{{"type": "text", "text": "{}"}}]}}"#,
        "x".repeat(10 * 1024 * 1024)
    );
    let cases: Vec<(pb::OutputFormat, String, String, &str)> = vec![
        (anthropic, json!({"content": [{"type": "tool_use", "id": "t", "name": "bash", "input": "ls"}]}).to_string(),
         String::new(), "response_json: $.content[0].input"),
        (anthropic, json!({"content": [{"type": "tool_use", "name": "bash", "input": {}}]}).to_string(),
         String::new(), "response_json: $.content[0].id"),
        (anthropic, json!({"content": [{"type": "text", "text": 5}]}).to_string(),
         String::new(), "response_json: $.content[0].text"),
        (anthropic, String::new(),
         json!([{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "nobody", "content": "x"}]}]).to_string(),
         "items_json: $[0].content[0].tool_call_id"),
        (anthropic, huge, String::new(), "response_json: $"),
        (gemini, json!({"candidates": [{"content": {"parts": [{"functionCall": {"name": "f", "args": "x"}}]}}]}).to_string(),
         String::new(), "response_json: $.candidates[0].content.parts[0].functionCall.args"),
        (gemini, String::new(),
         json!([{"role": "user", "parts": [{"functionResponse": {"name": "bash", "response": {"output": "x"}}}]}]).to_string(),
         "items_json: $[0].parts[0].functionResponse.id"),
        (gemini, String::new(),
         json!([{"role": "user", "parts": [{"functionResponse": {"id": "nobody", "name": "bash", "response": {}}}]}]).to_string(),
         "items_json: $[0].parts[0].tool_call_id"),
        (gemini, String::new(), json!([{"role": "user", "parts": [{"text": ["x"]}]}]).to_string(),
         "items_json: $[0].parts[0].text"),
        // A good reply with a bad result: the reply is not written either.
        (gemini, gemini_reply().to_string(),
         json!([{"role": "user", "parts": [{"functionResponse": {"name": "other", "response": {"output": "x"}}}]}]).to_string(),
         "items_json: $[0].parts[0].functionResponse.id"),
    ];
    for (format, response, items, path) in cases {
        let status = append_native(&mut client, "bad", format, &response, &items)
            .await
            .unwrap_err();
        assert_eq!(
            status.code(),
            Code::InvalidArgument,
            "{path}: {}",
            status.message()
        );
        assert_eq!(violated_fields(&status), [path], "{}", status.message());
        assert!(status.message().len() < 400, "{}", status.message().len());
    }
    assert_eq!(session(&mut client, "bad").await.version, version);
    server.stop().await;
}
