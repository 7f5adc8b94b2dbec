use serde_json::json;

use super::super::fixtures::{conversation, media, parse};
use super::*;

fn bash() -> [ToolDefinition; 1] {
    [ToolDefinition {
        name: "bash".into(),
        description: "Execute a bash command".into(),
        parameters_json_schema: r#"{"type":"object"}"#.into(),
    }]
}

#[test]
fn responses_body_carries_instructions_calls_outputs_and_tools() {
    let body = parse(openai_responses("Be brief.", &conversation(), &bash(), 512));
    assert_eq!(body["instructions"], "Be brief.");
    assert_eq!(body["max_output_tokens"], 512);
    assert_eq!(
        body["tools"],
        json!([{"type": "function", "name": "bash", "description": "Execute a bash command",
            "parameters": {"type": "object"}, "strict": false}])
    );
    assert_eq!(
        body["input"],
        json!([
            {"type": "message", "role": "user", "content": "What is here?"},
            {"type": "message", "role": "assistant", "content": "Let me look."},
            {"type": "function_call", "call_id": "a", "name": "bash",
                "arguments": "{\"command\":\"ls\"}"},
            {"type": "function_call", "call_id": "b", "name": "bash",
                "arguments": "{\"command\":\"pwd\"}"},
            {"type": "function_call_output", "call_id": "a", "output": "file.txt"},
            {"type": "function_call_output", "call_id": "b", "output": "/work"},
            {"type": "message", "role": "user", "content": "And then?"},
            {"type": "message", "role": "assistant", "content": "Done."},
        ])
    );
}

#[test]
fn no_instructions_and_no_tools_are_left_out() {
    let body = parse(openai_responses(
        "",
        &[Message::text(Role::User, "Hi")],
        &[],
        16,
    ));
    assert_eq!(
        body,
        json!({"input": [{"type": "message", "role": "user", "content": "Hi"}],
            "max_output_tokens": 16})
    );
}

#[test]
fn reasoning_is_sent_only_with_its_item_id() {
    let mut with_id = Message::text(Role::Assistant, "");
    with_id.reasoning = "Think first.".into();
    with_id
        .metadata
        .insert(OPENAI_REASONING_ID.into(), "rs_1".into());
    with_id
        .metadata
        .insert(OPENAI_REASONING_ENCRYPTED.into(), "gAAA".into());
    with_id.tool_calls = conversation()[1].tool_calls.clone();
    let mut without_id = Message::text(Role::Assistant, "Answer.");
    without_id.reasoning = "Hidden.".into();
    let mut no_summary = Message::text(Role::Assistant, "Ok.");
    no_summary
        .metadata
        .insert(OPENAI_REASONING_ID.into(), "rs_2".into());
    // Empty text parts only: nothing to send, not even its reasoning.
    let mut empty = no_summary.clone();
    empty.content.clear();
    empty.parts = vec![Part::Text {
        text: String::new(),
    }];
    let body = parse(openai_responses(
        "",
        &[with_id, without_id, no_summary, empty],
        &[],
        100,
    ));
    let input = body["input"].as_array().unwrap();
    assert_eq!(
        input[0],
        json!({"type": "reasoning", "id": "rs_1",
            "summary": [{"type": "summary_text", "text": "Think first."}],
            "encrypted_content": "gAAA"})
    );
    assert_eq!(input[1]["type"], "function_call");
    assert_eq!(
        input[3],
        json!({"type": "message", "role": "assistant", "content": "Answer."})
    );
    assert_eq!(
        input[4],
        json!({"type": "reasoning", "id": "rs_2", "summary": []})
    );
    assert_eq!(input.len(), 6);
    assert!(!body.to_string().contains("Hidden."));
}

#[test]
fn images_are_input_image_parts_and_other_media_stay_text() {
    let mut user = Message::text(Role::User, "Look:");
    user.parts = vec![
        media("data:image/png;base64,QUJD", "image/png"),
        media("https://x.test/a.pdf", "application/pdf"),
    ];
    let mut result = Message::text(Role::Tool, "");
    result.tool_call_id = "s".into();
    result.parts = vec![media("https://x.test/s.png", "image/png")];
    let body = parse(openai_responses("", &[user, result], &[], 100));
    assert_eq!(
        body["input"][0]["content"],
        json!([
            {"type": "input_text", "text": "Look:"},
            {"type": "input_image", "image_url": "data:image/png;base64,QUJD", "detail": "auto"},
            {"type": "input_text", "text": "[attachment application/pdf: https://x.test/a.pdf]"},
        ])
    );
    assert_eq!(
        body["input"][1]["output"],
        json!([{"type": "input_image", "image_url": "https://x.test/s.png", "detail": "auto"}])
    );
}
