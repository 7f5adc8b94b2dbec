use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::ingest::assert_refused;
use crate::message::Usage;

const TEXT: &str = include_str!("../../../../tests/data/native/openai_response_text.json");
const CALLS: &str =
    include_str!("../../../../tests/data/native/openai_response_function_calls.json");

#[test]
fn the_reference_response_gives_its_text_and_usage() {
    let read = response(TEXT).unwrap();
    assert_eq!(read.paths, ["$.output"]);
    let message = &read.messages[0];
    assert_eq!(message.role, Role::Assistant);
    assert!(
        message
            .content
            .starts_with("The image depicts a scenic landscape")
    );
    assert!(message.metadata.is_empty());
    assert_eq!(
        read.usage,
        Some(Usage {
            input_tokens: 328,
            output_tokens: 52,
            cached_input_tokens: 0,
        })
    );
}

#[test]
fn reasoning_and_parallel_calls_become_one_message() {
    let read = response(CALLS).unwrap();
    let message = &read.messages[0];
    assert!(message.reasoning.starts_with("**Checking the weather"));
    assert_eq!(
        message
            .metadata
            .get(OPENAI_REASONING_ID)
            .map(String::as_str),
        Some("rs_68af4030baa48193b0b43b4c2a176a1a05438e46b5f69a3b")
    );
    assert!(message.metadata[OPENAI_REASONING_ENCRYPTED].starts_with("gAAAA"));
    let ids: Vec<&str> = message.tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["call_12345xyz", "call_67890abc"]);
    assert_eq!(
        message.tool_calls[1].arguments,
        r#"{"location":"Bogotá, Colombia"}"#
    );
    assert_eq!(read.usage.unwrap().cached_input_tokens, 768);
}

#[test]
fn summaries_join_and_refusals_count_as_text() {
    let body = json!({"object": "response", "output": [
        {"type": "reasoning", "id": "rs_1", "summary": [
            {"type": "summary_text", "text": "One."}, {"type": "summary_text", "text": "Two."}]},
        {"type": "message", "role": "assistant", "content": [
            {"type": "refusal", "refusal": "No."}]}]});
    let read = response(&body.to_string()).unwrap();
    assert_eq!(read.messages[0].reasoning, "One.\n\nTwo.");
    assert_eq!(read.messages[0].content, "No.");
    assert_eq!(read.usage, None);
}

#[test]
fn malformed_responses_name_the_json_path() {
    let call = |extra: Value| {
        let mut item = json!({"type": "function_call", "call_id": "c", "name": "f",
            "arguments": "{}"});
        for (key, value) in extra.as_object().unwrap() {
            item[key] = value.clone();
        }
        json!({"output": [{"type": "message", "role": "assistant", "content": "x"}, item]})
    };
    let cases = [
        (
            json!({"object": "chat.completion", "output": []}),
            "$.object",
            "must be \"response\"",
        ),
        (
            json!({"status": "failed", "output": []}),
            "$.status",
            "finished",
        ),
        (json!({"output": []}), "$.output", "no message text"),
        (json!({"output": {}}), "$.output", "must be a JSON array"),
        (
            call(json!({"call_id": 5})),
            "$.output[1].call_id",
            "must be a string",
        ),
        (
            call(json!({"call_id": ""})),
            "$.output[1].call_id",
            "must not be empty",
        ),
        (
            call(json!({"name": null})),
            "$.output[1].name",
            "is missing",
        ),
        (
            call(json!({"arguments": "[1]"})),
            "$.output[1].arguments",
            "JSON object",
        ),
        (
            json!({"output": [{"type": "reasoning", "summary": []}]}),
            "$.output[0].id",
            "is missing",
        ),
        (
            json!({"output": [{"type": "reasoning", "id": "r", "summary": []},
                {"type": "reasoning", "id": "s", "summary": []}]}),
            "$.output[1]",
            "second reasoning item",
        ),
        (
            json!({"output": [{"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"},
                {"type": "function_call", "call_id": "c", "name": "g", "arguments": "{}"}]}),
            "$.output[1].call_id",
            "used by an earlier call",
        ),
        (
            json!({"output": [{"type": "message", "role": "assistant", "content": [
                {"type": "output_audio"}]}]}),
            "$.output[0].content[0].type",
            "output_text",
        ),
        (
            json!({"output": [{"type": "message", "role": "assistant", "content": "x"}],
                "usage": {"input_tokens": 1.5, "output_tokens": 1}}),
            "$.usage.input_tokens",
            "non-negative integer",
        ),
    ];
    assert_refused(response, cases);
}

#[test]
fn items_read_outputs_user_messages_and_replayed_replies() {
    let body = json!([
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "e"},
        {"type": "function_call", "id": "fc_1", "call_id": "a", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "a", "output": "done"},
        {"type": "function_call_output", "call_id": "b", "output": [
            {"type": "input_text", "text": "see"},
            {"type": "input_image", "image_url": "https://x.test/s.png", "detail": "auto"}]},
        {"role": "user", "content": "Thanks."},
        {"type": "message", "role": "user", "content": [
            {"type": "input_image", "image_url": "data:image/jpeg;base64,QUJD", "detail": "low"}]},
        {"type": "message", "role": "developer", "content": "Be brief."},
    ]);
    let read = items(&body.to_string()).unwrap();
    assert_eq!(read.paths, ["$[0]", "$[2]", "$[3]", "$[4]", "$[5]", "$[6]"]);
    let roles: Vec<Role> = read.messages.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [
            Role::Assistant,
            Role::Tool,
            Role::Tool,
            Role::User,
            Role::User,
            Role::System
        ]
    );
    assert_eq!(read.messages[0].metadata[OPENAI_REASONING_ENCRYPTED], "e");
    assert_eq!(read.messages[1].content, "done");
    assert_eq!(read.messages[2].parts.len(), 2);
    assert_eq!(read.messages[3].content, "Thanks.");
    assert!(matches!(&read.messages[4].parts[0],
        Part::Media { mime_type, .. } if mime_type == "image/jpeg"));
}

#[test]
fn malformed_items_name_the_json_path() {
    let cases = [
        (json!([]), "$", "empty array"),
        (
            json!([{"type": "function_call_output", "output": "x"}]),
            "$[0].call_id",
            "is missing",
        ),
        (
            json!([{"role": "user", "content": "a"}, {"type": "function_call_output", "call_id": 1,
            "output": "x"}]),
            "$[1].call_id",
            "must be a string",
        ),
        (
            json!([{"type": "function_call_output", "call_id": "a"}]),
            "$[0].output",
            "is missing",
        ),
        (
            json!([{"role": "tool", "content": "x"}]),
            "$[0].role",
            "\"tool\"",
        ),
        (
            json!([{"role": "user", "content": [{"type": "input_file", "file_id": "f"}]}]),
            "$[0].content[0].type",
            "files",
        ),
        (
            json!([{"role": "user", "content": [{"type": "input_image", "file_id": "f",
            "detail": "auto"}]}]),
            "$[0].content[0].file_id",
            "image_url",
        ),
        (
            json!([{"role": "user", "content": 7}]),
            "$[0].content",
            "the number 7",
        ),
        (
            json!([{"role": "user", "content": [{"type": "input_text", "text": "a\0b"}]}]),
            "$[0].content[0].text",
            "NUL",
        ),
    ];
    assert_refused(items, cases);
}

proptest! {
    #[test]
    fn no_body_makes_a_reader_panic(value in json::arbitrary()) {
        let text = value.to_string();
        let _ = response(&text);
        let _ = items(&text);
        let _ = response(&json!({"output": [value.clone()]}).to_string());
        let _ = response(&json!({"output": value.clone()}).to_string());
        let _ = items(&Value::Array(vec![value]).to_string());
    }
}
