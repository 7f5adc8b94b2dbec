use super::*;

const RESPONSE: &str = r#"{
    "candidates": [{"content": {"role": "model", "parts": [
        {"text": "Think.", "thought": true},
        {"text": "Looking."},
        {"functionCall": {"name": "bash", "args": {"command": "ls"}}, "thoughtSignature": "c2ln"},
        {"functionCall": {"id": "given", "name": "bash", "args": {"command": "pwd"}}}
    ]}, "finishReason": "STOP", "index": 0}],
    "usageMetadata": {"promptTokenCount": 120, "candidatesTokenCount": 30,
                      "thoughtsTokenCount": 12, "cachedContentTokenCount": 100,
                      "totalTokenCount": 162},
    "modelVersion": "gemini-2.5-flash", "responseId": "resp1"
}"#;

#[test]
fn a_response_becomes_one_assistant_message_with_usage() {
    let read = response(RESPONSE).unwrap();
    let message = &read.messages[0];
    assert_eq!(message.reasoning, "Think.");
    assert_eq!(message.content, "Looking.");
    assert_eq!(message.tool_calls[0].id, "gemini-resp1-2");
    assert_eq!(message.tool_calls[1].id, "given");
    assert_eq!(message.tool_calls[1].arguments, r#"{"command":"pwd"}"#);
    assert_eq!(
        message.metadata[GEMINI_THOUGHT_SIGNATURES],
        r#"{"gemini-resp1-2":"c2ln"}"#
    );
    assert_eq!(
        read.usage,
        Some(Usage {
            input_tokens: 120,
            output_tokens: 42,
            cached_input_tokens: 100
        })
    );
}

#[test]
fn responses_without_an_id_answer_the_calls_of_their_name_in_order() {
    let read = response(RESPONSE).unwrap();
    let items_json = r#"[{"role": "user", "parts": [
        {"functionResponse": {"id": "given", "name": "bash", "response": {"output": "/w"}}},
        {"functionResponse": {"name": "bash", "response": {"error": "denied"}}},
        {"text": "Go on."},
        {"inlineData": {"mimeType": "image/png", "data": "QUJD"}}
    ]}]"#;
    let items = items(items_json, &read.messages).unwrap();
    assert_eq!(items.messages[0].tool_call_id, "given");
    assert_eq!(items.messages[0].content, "/w");
    assert_eq!(items.messages[1].tool_call_id, "gemini-resp1-2");
    assert_eq!(items.messages[1].metadata[TOOL_ERROR], "true");
    assert_eq!(items.messages[2].role, Role::User);
    assert_eq!(items.messages[2].parts.len(), 1);
    assert_eq!(
        items.paths,
        ["$[0].parts[0]", "$[0].parts[1]", "$[0].parts[2]"]
    );
    // Without the response, an id-less result cannot be placed.
    let error = super::items(items_json, &[]).unwrap_err();
    assert_eq!(error.path, "$[0].parts[1].functionResponse.id");
    // A response object that is not {"output"} stays whole, as JSON text.
    let items = super::items(
        r#"[{"role": "user", "parts": [{"functionResponse": {"id": "x", "name": "f", "response": {"a": 1, "b": [2]}}}]}]"#,
        &[],
    )
    .unwrap();
    assert_eq!(items.messages[0].content, r#"{"a":1,"b":[2]}"#);
}

#[test]
fn ids_made_up_without_a_response_id_are_stable_and_distinct() {
    let body = RESPONSE.replace(r#""responseId": "resp1""#, r#""responseId": "a b""#);
    let first = response(&body).unwrap().messages[0].tool_calls[0]
        .id
        .clone();
    assert_eq!(first, response(&body).unwrap().messages[0].tool_calls[0].id);
    assert!(
        first.starts_with("gemini-") && first.ends_with("-2"),
        "{first}"
    );
    let other = body.replace("Looking.", "Looking!");
    assert_ne!(
        first,
        response(&other).unwrap().messages[0].tool_calls[0].id
    );
}

#[test]
fn errors_name_the_json_path() {
    let cases = [
        (r#"{"candidates": []}"#, "$.candidates"),
        (
            r#"{"candidates": [{"finishReason": "SAFETY"}]}"#,
            "$.candidates[0].content",
        ),
        (
            r#"{"candidates": [{"content": {"parts": [{"functionCall": {"name": "f", "args": [1]}}]}}]}"#,
            "$.candidates[0].content.parts[0].functionCall.args",
        ),
        (
            r#"{"candidates": [{"content": {"parts": [{"executableCode": {}}]}}]}"#,
            "$.candidates[0].content.parts[0]",
        ),
        (
            r#"{"candidates": [{"content": {"parts": []}}], "usageMetadata": {"promptTokenCount": "1"}}"#,
            "$.usageMetadata.promptTokenCount",
        ),
        (
            r#"{"candidates": [{"content": {"parts": [{"text": "a\u0000b"}]}}]}"#,
            "$.candidates[0].content.parts[0].text",
        ),
    ];
    for (body, path) in cases {
        assert_eq!(response(body).unwrap_err().path, path, "{body}");
    }
    let error = items(
        r#"[{"role": "user", "parts": [{"functionResponse": {"id": "x", "response": {}}}]}]"#,
        &[],
    )
    .unwrap_err();
    assert_eq!(error.path, "$[0].parts[0].functionResponse.name");
    let error = items(r#"[{"role": "function", "parts": []}]"#, &[]).unwrap_err();
    assert_eq!(error.path, "$[0].role");
    let error = items(r#"[{"role": "user"}]"#, &[]).unwrap_err();
    assert_eq!(error.path, "$[0].parts");
}

proptest::proptest! {
    #[test]
    fn no_body_makes_a_reader_panic(value in json::arbitrary()) {
        let text = value.to_string();
        let _ = response(&text);
        let _ = items(&text, &[]);
        let wrapped =
            serde_json::json!({"candidates": [{"content": {"parts": [value.clone()]}}]}).to_string();
        let _ = response(&wrapped);
        let user = serde_json::json!([{"role": "user", "parts": [value]}]).to_string();
        let _ = items(&user, &[]);
    }
}
