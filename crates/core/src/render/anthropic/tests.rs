use super::super::fixtures::{conversation, parse, roles};
use super::*;
use serde_json::json;

#[test]
fn anthropic_body_merges_results_and_following_user_text() {
    let body = parse(anthropic_messages("Be brief.", &conversation(), &[], 1024));
    assert_eq!(body["system"], "Be brief.");
    let messages = body["messages"].as_array().unwrap();
    // user, assistant(text + 2 tool_use), user(2 tool_result + text), assistant
    assert_eq!(messages.len(), 4);
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant"]);
    let assistant = messages[1]["content"].as_array().unwrap();
    assert_eq!(assistant[1]["type"], "tool_use");
    assert_eq!(assistant[2]["input"], json!({"command": "pwd"}));
    let results = messages[2]["content"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    assert_eq!(results[0]["type"], "tool_result");
    assert_eq!(results[1]["tool_use_id"], "b");
    assert_eq!(results[2], json!({"type": "text", "text": "And then?"}));
    assert_eq!(body["max_tokens"], 1024);
}

#[test]
fn anthropic_tool_results_lead_their_user_message() {
    let mut messages = conversation();
    // A user message between the calls and their results.
    messages.insert(2, Message::text(Role::User, "Hurry up."));
    let body = parse(anthropic_messages("", &messages, &[], 100));
    let merged = body["messages"][2]["content"].as_array().unwrap();
    let kinds: Vec<&str> = merged.iter().map(|b| b["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["tool_result", "tool_result", "text", "text"]);
    assert_eq!(merged[2]["text"], "Hurry up.");
    assert!(body.get("system").is_none());
}

#[test]
fn anthropic_drops_messages_without_content_and_keeps_system_parts() {
    let mut empty = Message::text(Role::User, "");
    empty.parts = vec![Part::Text {
        text: String::new(),
    }];
    let mut system = Message::text(Role::System, "Rules:");
    system.parts = vec![Part::Text {
        text: "be kind".into(),
    }];
    let messages = [
        system,
        Message::text(Role::User, "Hi"),
        Message::text(Role::Assistant, "Hello"),
        empty,
        Message::text(Role::Assistant, "Anything else?"),
    ];
    let body = parse(anthropic_messages("Base.", &messages, &[], 100));
    assert_eq!(body["system"], "Base.\n\nRules:\n\nbe kind");
    let roles = roles(&body);
    assert_eq!(roles, ["user", "assistant"]);
    assert_eq!(body["messages"][1]["content"].as_array().unwrap().len(), 2);
}

#[test]
fn anthropic_sends_thinking_only_with_its_signature() {
    let mut signed = Message::text(Role::Assistant, "Answer.");
    signed.reasoning = "Because.".into();
    signed
        .metadata
        .insert(ANTHROPIC_THINKING_SIGNATURE.into(), "sig".into());
    signed
        .metadata
        .insert(ANTHROPIC_REDACTED_THINKING.into(), r#"["r1"]"#.into());
    let mut unsigned = Message::text(Role::Assistant, "Again.");
    unsigned.reasoning = "Hidden.".into();
    let messages = [
        Message::text(Role::User, "Q"),
        signed,
        Message::text(Role::User, "Q2"),
        unsigned,
    ];
    let body = parse(anthropic_messages("", &messages, &[], 100));
    assert_eq!(
        body["messages"][1]["content"],
        json!([
            {"type": "thinking", "thinking": "Because.", "signature": "sig"},
            {"type": "redacted_thinking", "data": "r1"},
            {"type": "text", "text": "Answer."}
        ])
    );
    assert_eq!(
        body["messages"][3]["content"],
        json!([{"type": "text", "text": "Again."}])
    );
}

#[test]
fn anthropic_marks_failed_tool_results() {
    let mut messages = conversation();
    messages[2]
        .metadata
        .insert(TOOL_ERROR.into(), "true".into());
    let body = parse(anthropic_messages("", &messages, &[], 100));
    let results = &body["messages"][2]["content"];
    assert_eq!(results[0]["is_error"], true);
    assert!(results[1].get("is_error").is_none());
}

/// Every `cache_control` in a body: (where, the block marked).
fn breakpoints(body: &serde_json::Value) -> Vec<(String, serde_json::Value)> {
    fn walk(value: &serde_json::Value, path: String, out: &mut Vec<(String, serde_json::Value)>) {
        match value {
            serde_json::Value::Object(map) => {
                if map.contains_key("cache_control") {
                    out.push((path.clone(), value.clone()));
                }
                for (key, inner) in map {
                    walk(inner, format!("{path}.{key}"), out);
                }
            }
            serde_json::Value::Array(items) => {
                for (index, inner) in items.iter().enumerate() {
                    walk(inner, format!("{path}[{index}]"), out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(body, "$".into(), &mut out);
    out
}

fn bash_tool() -> Vec<ToolDefinition> {
    vec![ToolDefinition {
        name: "bash".into(),
        description: "Run a command.".into(),
        parameters_json_schema: String::new(),
    }]
}

#[test]
fn a_built_body_marks_the_system_the_summaries_and_the_newest_turn() {
    let system = "Be brief.\n\n<summaries>earlier work</summaries>";
    let stable = Stable {
        block_in_system: Some(system.find("<summaries>").unwrap()),
        block_message: None,
    };
    let tools = bash_tool();
    let body = parse(anthropic_messages_cached(
        system,
        &conversation(),
        &tools,
        512,
        stable,
    ));
    let marks: Vec<String> = breakpoints(&body)
        .into_iter()
        .map(|(path, _)| path)
        .collect();
    assert_eq!(
        marks,
        ["$.messages[3].content[0]", "$.system[0]", "$.system[1]"]
    );
    assert_eq!(body["system"][0]["text"], "Be brief.");
    assert_eq!(
        body["system"][1]["text"],
        "<summaries>earlier work</summaries>"
    );
    // Without the markers the body is the uncached one.
    let plain = parse(anthropic_messages(system, &conversation(), &tools, 512));
    assert_eq!(
        body["messages"][3]["content"][0]["text"],
        plain["messages"][3]["content"][0]["text"]
    );
    assert_eq!(body["tools"], plain["tools"]);
    // No system prompt: the tools' end is the stable prefix.
    let body = parse(anthropic_messages_cached(
        "",
        &conversation(),
        &tools,
        512,
        Stable::default(),
    ));
    let marks: Vec<String> = breakpoints(&body)
        .into_iter()
        .map(|(path, _)| path)
        .collect();
    assert_eq!(marks, ["$.messages[3].content[0]", "$.tools[0]"]);
}

#[test]
fn the_summaries_message_and_the_clients_marks_take_what_is_left_newest_first() {
    let mut messages = vec![Message::text(Role::User, "<summaries>s</summaries>")];
    for n in 0..6 {
        let role = if n % 2 == 0 {
            Role::User
        } else {
            Role::Assistant
        };
        let mut message = Message::text(role, format!("turn {n}"));
        message
            .metadata
            .insert(crate::ingest::ANTHROPIC_CACHE_MARK.into(), "true".into());
        messages.push(message);
    }
    let stable = Stable {
        block_in_system: None,
        block_message: Some(0),
    };
    let body = parse(anthropic_messages_cached(
        "Sys.",
        &messages,
        &[],
        512,
        stable,
    ));
    let marked: Vec<String> = breakpoints(&body)
        .into_iter()
        .filter_map(|(_, block)| block["text"].as_str().map(str::to_string))
        .collect();
    // The newest turn, the system, the summaries, then the newest client mark before
    // the last: four, the rest of the client's marks left out.
    assert_eq!(marked.len(), 4, "{marked:?}");
    for text in ["turn 5", "Sys.", "<summaries>s</summaries>", "turn 4"] {
        assert!(marked.contains(&text.to_string()), "{marked:?}");
    }
    assert_eq!(breakpoints(&body).len(), MAX_BREAKPOINTS);
}

#[test]
fn thinking_blocks_are_never_marked() {
    let mut reply = Message::text(Role::Assistant, "");
    reply.reasoning = "hmm".into();
    reply.metadata.insert(
        crate::ingest::ANTHROPIC_THINKING_SIGNATURE.into(),
        "sig".into(),
    );
    reply.tool_calls = vec![crate::message::ToolCall {
        id: "t".into(),
        name: "bash".into(),
        arguments: "{}".into(),
    }];
    let messages = [Message::text(Role::User, "go"), reply];
    let body = parse(anthropic_messages_cached(
        "",
        &messages,
        &[],
        512,
        Stable::default(),
    ));
    let marks = breakpoints(&body);
    assert_eq!(marks.len(), 1);
    assert_eq!(marks[0].1["type"], "tool_use");
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    fn message() -> impl Strategy<Value = Message> {
        (0..4u8, any::<bool>(), any::<bool>(), "[a-z]{0,6}").prop_map(
            |(role, mark, native, text)| {
                let role = [Role::User, Role::Assistant, Role::System, Role::User][role as usize];
                let mut message = Message::text(role, text);
                if mark {
                    message
                        .metadata
                        .insert(crate::ingest::ANTHROPIC_CACHE_MARK.into(), "true".into());
                }
                if native {
                    message.parts.push(Part::Native {
                        format: crate::ingest::NATIVE_ANTHROPIC.into(),
                        json: r#"{"type":"document","cache_control":{"type":"ephemeral"}}"#.into(),
                    });
                }
                message
            },
        )
    }

    proptest! {
        /// Whatever the conversation and the client's marks, a body has at most four
        /// breakpoints, counting those of blocks kept whole.
        #[test]
        fn never_more_than_four_breakpoints(
            messages in proptest::collection::vec(message(), 0..12),
            system in "[a-z ]{0,10}",
            split in proptest::option::of(0usize..12),
            block_message in proptest::option::of(0usize..12),
            tools in any::<bool>(),
        ) {
            let tools = if tools { bash_tool() } else { Vec::new() };
            let stable = Stable { block_in_system: split, block_message };
            let body = parse(anthropic_messages_cached(&system, &messages, &tools, 100, stable));
            prop_assert!(breakpoints(&body).len() <= MAX_BREAKPOINTS, "{body}");
        }
    }
}
