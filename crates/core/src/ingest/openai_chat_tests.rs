use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::ingest::{assert_refused, media_types};

fn error(result: Result<Ingested, IngestError>) -> IngestError {
    result.expect_err("the body is refused")
}

/// A reply as DeepSeek returned it through the Chat Completions API (from the corpus).
const RECORDED: &str = r#"{"id": "1eeb75c7", "created": 1775803316, "model": "deepseek-chat",
  "object": "chat.completion", "choices": [{"finish_reason": "tool_calls", "index": 0,
  "message": {"content": "I'll look.", "role": "assistant", "tool_calls": [{"index": 0,
  "function": {"arguments": "{\"command\": \"ls\"}", "name": "bash"},
  "id": "call_00_c", "type": "function"}], "function_call": null}}],
  "usage": {"completion_tokens": 83, "prompt_tokens": 1515, "total_tokens": 1598,
  "completion_tokens_details": null, "prompt_tokens_details": {"cached_tokens": 320}}}"#;

#[test]
fn a_recorded_completion_gives_its_reply_and_usage() {
    let read = response(RECORDED).unwrap();
    assert_eq!(read.paths, ["$.choices[0].message"]);
    let message = &read.messages[0];
    assert_eq!(message.role, Role::Assistant);
    assert_eq!(message.content, "I'll look.");
    assert_eq!(
        message.tool_calls,
        [ToolCall {
            id: "call_00_c".into(),
            name: "bash".into(),
            arguments: r#"{"command": "ls"}"#.into(),
        }]
    );
    assert_eq!(
        read.usage,
        Some(Usage {
            input_tokens: 1515,
            output_tokens: 83,
            cached_input_tokens: 320,
        })
    );
}

#[test]
fn reasoning_refusal_and_the_first_of_several_choices() {
    let body = json!({"object": "chat.completion", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": null,
            "refusal": "I can't help with that.", "reasoning_content": "Policy."}},
        {"index": 1, "message": {"role": "assistant", "content": "Other."}}]});
    let read = response(&body.to_string()).unwrap();
    assert_eq!(read.messages.len(), 1);
    assert_eq!(read.messages[0].content, "I can't help with that.");
    assert_eq!(read.messages[0].reasoning, "Policy.");
    assert_eq!(read.usage, None);
}

#[test]
fn malformed_responses_name_the_json_path() {
    let cases = [
        (json!([]), "$", "must be a JSON object"),
        (json!({"choices": []}), "$.choices", "is empty"),
        (json!({}), "$.choices", "is missing"),
        (
            json!({"object": "chat.completion.chunk", "choices": []}),
            "$.object",
            "chunk",
        ),
        (
            json!({"choices": [{"message": {"role": "assistant", "content": 3}}]}),
            "$.choices[0].message.content",
            "the number 3",
        ),
        (
            json!({"choices": [{"message": {"role": "assistant", "content": ""}}]}),
            "$.choices[0].message.content",
            "no content",
        ),
        (
            json!({"choices": [{"message": {"role": "user", "content": "x"}}]}),
            "$.choices[0].message.role",
            "must be \"assistant\"",
        ),
        (
            json!({"choices": [{"message": {"content": null, "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}},
                {"id": "b", "type": "function", "function": {"name": 7, "arguments": "{}"}}]}}]}),
            "$.choices[0].message.tool_calls[1].function.name",
            "must be a string",
        ),
        (
            json!({"choices": [{"message": {"content": null, "tool_calls": [
                {"type": "function", "function": {"name": "f", "arguments": "{}"}}]}}]}),
            "$.choices[0].message.tool_calls[0].id",
            "is missing",
        ),
        (
            json!({"choices": [{"message": {"content": null, "tool_calls": [
                {"id": "a", "function": {"name": "f", "arguments": "{not json"}}]}}]}),
            "$.choices[0].message.tool_calls[0].function.arguments",
            "is not valid JSON",
        ),
        (
            json!({"choices": [{"message": {"content": null, "tool_calls": [
                {"id": "a", "type": "custom", "custom": {"name": "f", "input": ""}}]}}]}),
            "$.choices[0].message.tool_calls[0].type",
            "must be \"function\"",
        ),
        (
            json!({"choices": [{"message": {"content": "x"}}], "usage": {"prompt_tokens": -1,
                "completion_tokens": 2}}),
            "$.usage.prompt_tokens",
            "non-negative integer",
        ),
    ];
    assert_refused(response, cases);
    let error = error(response("{\"choices\": ["));
    assert_eq!(error.path, "$");
    assert!(error.reason.contains("not valid JSON"));
}

#[test]
fn items_read_tool_results_user_parts_and_images() {
    let body = json!([
        {"role": "tool", "tool_call_id": "a", "content": "file.txt"},
        {"role": "tool", "tool_call_id": "b", "content": [{"type": "text", "text": "/work"}]},
        {"role": "user", "content": [
            {"type": "text", "text": "Look:"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,QUJD"}},
            {"type": "image_url", "image_url": {"url": "https://x.test/a.jpg", "detail": "low"}},
            {"type": "image_url", "image_url": {"url": "https://x.test/image"}}]},
        {"role": "developer", "content": "Be brief."},
        {"role": "assistant", "content": [{"type": "text", "text": "Sure. "},
            {"type": "refusal", "refusal": "Not that."}]},
    ]);
    let read = items(&body.to_string()).unwrap();
    assert_eq!(read.paths, ["$[0]", "$[1]", "$[2]", "$[3]", "$[4]"]);
    assert_eq!(read.messages[0].tool_call_id, "a");
    assert_eq!(read.messages[0].content, "file.txt");
    assert_eq!(
        read.messages[1].parts,
        [Part::Text {
            text: "/work".into()
        }]
    );
    assert_eq!(
        media_types(&read.messages[2]),
        ["image/png", "image/jpeg", "image/*"]
    );
    assert_eq!(read.messages[3].role, Role::System);
    assert_eq!(
        read.messages[4].parts[1],
        Part::Text {
            text: "Not that.".into()
        }
    );
}

#[test]
fn malformed_items_name_the_json_path() {
    let cases = [
        (json!({"role": "user"}), "$", "must be a JSON array"),
        (json!([]), "$", "empty array"),
        (
            json!([{"role": "tool", "content": "x"}]),
            "$[0].tool_call_id",
            "is missing",
        ),
        (
            json!([{"role": "tool", "tool_call_id": "", "content": "x"}]),
            "$[0].tool_call_id",
            "empty",
        ),
        (
            json!([{"role": "user", "content": "a"}, {"role": "bot", "content": "b"}]),
            "$[1].role",
            "\"bot\"",
        ),
        (json!([{"role": "user"}]), "$[0].content", "is missing"),
        (
            json!([{"role": "user", "content": [{"type": "input_audio"}]}]),
            "$[0].content[0].type",
            "audio",
        ),
        (
            json!([{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]),
            "$[0].content[0].image_url.url",
            "is missing",
        ),
        (
            json!([{"role": "tool", "tool_call_id": "a", "content": [{"type": "image_url", "image_url": {"url": "u"}}]}]),
            "$[0].content[0].type",
            "user message",
        ),
        (
            json!([{"role": "function", "name": "f", "content": "x"}]),
            "$[0].role",
            "deprecated",
        ),
    ];
    assert_refused(items, cases);
}

#[test]
fn echoed_values_are_clipped() {
    let body = json!([{"role": "x".repeat(100_000), "content": "a"}]);
    let error = error(items(&body.to_string()));
    assert!(error.reason.len() < 200, "{}", error.reason.len());
}

proptest! {
    #[test]
    fn no_body_makes_a_reader_panic(value in json::arbitrary()) {
        let text = value.to_string();
        let _ = response(&text);
        let _ = items(&text);
        let wrapped = json!({"choices": [{"message": value.clone()}]}).to_string();
        let _ = response(&wrapped);
        let _ = items(&Value::Array(vec![value]).to_string());
    }
}
