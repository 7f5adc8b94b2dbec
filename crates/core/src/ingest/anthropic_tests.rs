use super::*;
use crate::ingest::media_types;

const MESSAGE: &str = r#"{
    "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
    "content": [
        {"type": "thinking", "thinking": "List first.", "signature": "sig=="},
        {"type": "redacted_thinking", "data": "opaque"},
        {"type": "text", "text": "Looking."},
        {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "ls"}},
        {"type": "tool_use", "id": "toolu_2", "name": "bash", "input": {}}
    ],
    "stop_reason": "tool_use", "stop_sequence": null,
    "usage": {"input_tokens": 10, "cache_creation_input_tokens": 5,
              "cache_read_input_tokens": 100, "output_tokens": 42}
}"#;

#[test]
fn a_message_becomes_one_assistant_message_with_usage() {
    let read = response(MESSAGE).unwrap();
    let message = &read.messages[0];
    assert_eq!(message.role, Role::Assistant);
    assert_eq!(message.content, "Looking.");
    assert_eq!(message.reasoning, "List first.");
    assert_eq!(message.metadata[ANTHROPIC_THINKING_SIGNATURE], "sig==");
    assert_eq!(
        message.metadata[ANTHROPIC_REDACTED_THINKING],
        r#"["opaque"]"#
    );
    assert_eq!(message.tool_calls.len(), 2);
    assert_eq!(message.tool_calls[0].arguments, r#"{"command":"ls"}"#);
    assert_eq!(message.tool_calls[1].id, "toolu_2");
    assert_eq!(
        read.usage,
        Some(Usage {
            input_tokens: 115,
            output_tokens: 42,
            cached_input_tokens: 100
        })
    );
}

#[test]
fn user_messages_split_into_tool_results_and_user_text() {
    let body = r#"[{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt"},
        {"type": "tool_result", "tool_use_id": "toolu_2", "is_error": true,
         "content": [{"type": "text", "text": "denied"}]},
        {"type": "text", "text": "Now this:"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "QUJD"}}
    ]}, {"role": "user", "content": "plain"}]"#;
    let read = items(body).unwrap();
    let roles: Vec<Role> = read.messages.iter().map(|m| m.role).collect();
    assert_eq!(roles, [Role::Tool, Role::Tool, Role::User, Role::User]);
    assert_eq!(read.messages[0].tool_call_id, "toolu_1");
    assert_eq!(read.messages[0].content, "a.txt");
    assert_eq!(read.messages[1].content, "denied");
    assert_eq!(read.messages[1].metadata[TOOL_ERROR], "true");
    assert_eq!(
        read.messages[2].parts[1],
        Part::Media {
            uri: "data:image/png;base64,QUJD".into(),
            mime_type: "image/png".into(),
            token_estimate: 0
        }
    );
    assert_eq!(read.messages[3].content, "plain");
    assert_eq!(
        read.paths,
        [
            "$[0].content[0]",
            "$[0].content[1]",
            "$[0].content[2]",
            "$[1]"
        ]
    );
}

#[test]
fn assistant_items_read_like_a_response() {
    let body = r#"[{"role": "assistant", "content": "Plain."},
        {"role": "assistant", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"},
         {"type": "tool_use", "id": "t", "name": "f", "input": {"x": [1]}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t"}]}]"#;
    let read = items(body).unwrap();
    assert_eq!(read.messages[0].content, "Plain.");
    assert_eq!(read.messages[1].content, "a");
    assert_eq!(read.messages[1].parts, [Part::Text { text: "b".into() }]);
    assert_eq!(read.messages[1].tool_calls[0].arguments, r#"{"x":[1]}"#);
    assert_eq!(read.messages[2].role, Role::Tool);
    assert!(read.messages[2].content.is_empty());
    assert!(read.usage.is_none());
}

#[test]
fn errors_name_the_json_path() {
    let cases = [
        (
            r#"{"content": [{"type": "tool_use", "id": "t", "name": "bash", "input": "ls"}]}"#,
            "$.content[0].input",
        ),
        (
            r#"{"content": [{"type": "tool_use", "name": "bash", "input": {}}]}"#,
            "$.content[0].id",
        ),
        (r#"{"content": "hi"}"#, "$.content"),
        (r#"{"content": [{"type": "text"}]}"#, "$.content[0].text"),
        (
            r#"{"content": [], "usage": {"input_tokens": -1}}"#,
            "$.usage.input_tokens",
        ),
        (r#"[1]"#, "$"),
        ("{", "$"),
        (
            r#"{"content": [{"type": "text", "text": "a\u0000b"}]}"#,
            "$.content[0].text",
        ),
        (
            r#"{"content": [{"type": "thinking", "thinking": "t", "signature": 1}]}"#,
            "$.content[0].signature",
        ),
    ];
    for (body, path) in cases {
        assert_eq!(response(body).unwrap_err().path, path, "{body}");
    }
    let error =
        items(r#"[{"role": "user", "content": [{"type": "tool_result", "tool_use_id": 7}]}]"#)
            .unwrap_err();
    assert_eq!(error.path, "$[0].content[0].tool_use_id");
    assert_eq!(error.reason, "must be a string, got the number 7");
    let error = items(r#"[{"role": "user", "content": []}]"#).unwrap_err();
    assert_eq!(error.path, "$[0].content");
    let error = items(&format!(
        r#"[{{"role": "{}", "content": "x"}}]"#,
        "s".repeat(500)
    ))
    .unwrap_err();
    assert!(error.reason.len() < 120, "{}", error.reason);
}

#[test]
fn url_images_are_typed_by_their_extension() {
    let body = r#"[{"role": "user", "content": [
        {"type": "image", "source": {"type": "url", "url": "https://x.test/a.PNG?s=1"}},
        {"type": "image", "source": {"type": "url", "url": "https://x.test/photo"}}
    ]}]"#;
    let read = items(body).unwrap();
    assert_eq!(media_types(&read.messages[0]), ["image/png", "image/*"]);
    let error = items(r#"[{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "is_error": "yes"}]}]"#)
        .unwrap_err();
    assert_eq!(error.path, "$[0].content[0].is_error");
    assert_eq!(error.reason, "must be a boolean, got the string \"yes\"");
}

proptest::proptest! {
    #[test]
    fn no_body_makes_a_reader_panic(value in json::arbitrary()) {
        let text = value.to_string();
        let _ = response(&text);
        let _ = items(&text);
        let wrapped = serde_json::json!({"content": [value.clone()]}).to_string();
        let _ = response(&wrapped);
        let user = serde_json::json!([{"role": "user", "content": [value]}]).to_string();
        let _ = items(&user);
    }
}
