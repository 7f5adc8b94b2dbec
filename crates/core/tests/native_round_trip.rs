//! Properties of the Anthropic and Gemini bodies and readers: for random conversations
//! (parallel tool calls, media, reasoning with and without signatures, empty content)
//! the Gemini body is structurally what the API takes, no reader panics on any JSON,
//! and a reply read back continues the body it answered: the next body starts with the
//! previous one unchanged (a prompt-cache prefix) and goes on with exactly the reply
//! and the tool results as the provider says to send them back.
use std::collections::{BTreeSet, HashSet};

use ctxd_core::format::Format;
use ctxd_core::ingest::{self, ANTHROPIC_THINKING_SIGNATURE, GEMINI_THOUGHT_SIGNATURES};
use ctxd_core::message::{Message, Part, Role, ToolCall};
use ctxd_core::render::{anthropic_messages, gemini};
use ctxd_core::tokenize::ToolDefinition;
use proptest::prelude::*;
use serde_json::{Value, json};

/// One step of a conversation.
#[derive(Debug, Clone)]
enum Step {
    User {
        text: String,
        media: Vec<(String, String)>,
    },
    System(String),
    /// An assistant message, its reasoning (and whether it is signed), and the results of
    /// its calls (each: output, failed, an image in the result).
    Assistant {
        text: String,
        reasoning: String,
        signed: bool,
        results: Vec<(String, bool, bool)>,
    },
}

fn words() -> impl Strategy<Value = String> {
    prop_oneof![Just(String::new()), "[a-z]{1,8}( [a-z]{1,8}){0,3}"]
}

fn some_words() -> impl Strategy<Value = String> {
    "[a-z]{1,8}( [a-z]{1,8}){0,3}"
}

fn media() -> impl Strategy<Value = (String, String)> {
    prop_oneof![
        "[A-Za-z0-9]{4,12}".prop_map(|data| (
            format!("data:image/png;base64,{data}"),
            "image/png".to_string()
        )),
        "[a-z]{1,8}".prop_map(|name| (
            format!("https://example.com/{name}.jpg"),
            "image/jpeg".to_string()
        )),
        "[a-z]{1,8}".prop_map(|name| (
            format!("gs://bucket/{name}.pdf"),
            "application/pdf".to_string()
        )),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => (words(), prop::collection::vec(media(), 0..3))
            .prop_map(|(text, media)| Step::User { text, media }),
        1 => some_words().prop_map(Step::System),
        4 => (words(), words(), any::<bool>(),
              prop::collection::vec((some_words(), any::<bool>(), any::<bool>()), 0..4))
            .prop_map(|(text, reasoning, signed, results)| Step::Assistant { text, reasoning, signed, results }),
    ]
}

fn conversation() -> impl Strategy<Value = Vec<Message>> {
    (prop::collection::vec(step(), 0..8), some_words()).prop_map(|(steps, last)| {
        let mut messages = vec![];
        for (index, step) in steps.into_iter().enumerate() {
            match step {
                Step::User { text, media } => {
                    let mut message = Message::text(Role::User, text);
                    message.parts = media
                        .into_iter()
                        .map(|(uri, mime_type)| Part::Media {
                            uri,
                            mime_type,
                            token_estimate: 0,
                        })
                        .collect();
                    messages.push(message);
                }
                Step::System(text) => messages.push(Message::text(Role::System, text)),
                Step::Assistant {
                    text,
                    reasoning,
                    signed,
                    results,
                } => {
                    let mut message = Message::text(Role::Assistant, text);
                    message.reasoning = reasoning;
                    if signed {
                        message
                            .metadata
                            .insert(ANTHROPIC_THINKING_SIGNATURE.into(), format!("sig{index}"));
                        message.metadata.insert(
                            GEMINI_THOUGHT_SIGNATURES.into(),
                            format!(r#"{{"thought": "t{index}", "c{index}_0": "g{index}"}}"#),
                        );
                    }
                    message.tool_calls = (0..results.len())
                        .map(|call| ToolCall {
                            id: format!("c{index}_{call}"),
                            name: format!("tool{}", call % 2),
                            arguments: format!(r#"{{"n": {call}}}"#),
                        })
                        .collect();
                    messages.push(message);
                    for (call, (output, failed, image)) in results.into_iter().enumerate() {
                        let mut result = Message::text(Role::Tool, output);
                        result.tool_call_id = format!("c{index}_{call}");
                        if failed {
                            result
                                .metadata
                                .insert(ingest::TOOL_ERROR.into(), "true".into());
                        }
                        if image {
                            result.parts.push(Part::Media {
                                uri: "https://example.com/shot.png".into(),
                                mime_type: "image/png".into(),
                                token_estimate: 0,
                            });
                        }
                        messages.push(result);
                    }
                }
            }
        }
        messages.push(Message::text(Role::User, last));
        messages
    })
}

fn tools() -> Vec<ToolDefinition> {
    ["tool0", "tool1"]
        .into_iter()
        .map(|name| ToolDefinition {
            name: name.into(),
            description: "A tool".into(),
            parameters_json_schema: r#"{"type":"object","properties":{"n":{"type":"integer"}}}"#
                .into(),
        })
        .collect()
}

fn parse(body: String) -> Value {
    serde_json::from_str(&body).expect("the body is JSON")
}

const PART_FIELDS: [&str; 5] = [
    "text",
    "inlineData",
    "fileData",
    "functionCall",
    "functionResponse",
];

/// What the Gemini API checks of a body's contents.
fn assert_gemini_valid(body: &Value) {
    let contents = body["contents"].as_array().expect("contents");
    let mut previous_calls: Option<BTreeSet<String>> = None;
    let mut previous_role = "";
    for (index, content) in contents.iter().enumerate() {
        let role = content["role"].as_str().expect("a role");
        assert!(
            role == "user" || role == "model",
            "content {index}: role {role}"
        );
        assert_ne!(role, previous_role, "content {index}: roles alternate");
        let parts = content["parts"].as_array().expect("parts");
        assert!(!parts.is_empty(), "content {index}: no parts");
        let mut calls = BTreeSet::new();
        let mut answers = BTreeSet::new();
        for part in parts {
            let fields: Vec<&str> = PART_FIELDS
                .into_iter()
                .filter(|f| part.get(*f).is_some())
                .collect();
            assert_eq!(
                fields.len(),
                1,
                "content {index}: one datum per part: {part}"
            );
            if let Some(text) = part.get("text") {
                assert!(
                    !text.as_str().unwrap().is_empty(),
                    "content {index}: empty text"
                );
            }
            if let Some(call) = part.get("functionCall") {
                assert_eq!(role, "model");
                assert!(call["args"].is_object());
                assert!(calls.insert(call["id"].as_str().unwrap().to_string()));
            }
            if let Some(response) = part.get("functionResponse") {
                assert_eq!(role, "user");
                assert!(response["response"].is_object());
                assert!(!response["name"].as_str().unwrap().is_empty());
                answers.insert(response["id"].as_str().unwrap().to_string());
            }
        }
        if let Some(previous) = previous_calls.take() {
            assert_eq!(
                previous, answers,
                "content {index} answers exactly the calls before it"
            );
        } else {
            assert!(answers.is_empty(), "content {index}: answers without calls");
        }
        if !calls.is_empty() {
            previous_calls = Some(calls);
        }
        previous_role = role;
    }
    assert!(previous_calls.is_none(), "every call is answered");
}

/// A model's reply: text, reasoning, signature, and calls (name, whether the provider
/// gave the call an id), with each call's result.
#[derive(Debug, Clone)]
struct Reply {
    text: String,
    reasoning: String,
    signed: bool,
    calls: Vec<(usize, bool, String, bool)>,
    user_after: String,
}

fn reply() -> impl Strategy<Value = Reply> {
    (
        words(),
        words(),
        any::<bool>(),
        prop::collection::vec(
            (0..2usize, any::<bool>(), some_words(), any::<bool>()),
            0..4,
        ),
        words(),
    )
        .prop_filter("a reply says something", |(text, _, _, calls, _)| {
            !text.is_empty() || !calls.is_empty()
        })
        .prop_map(|(text, reasoning, signed, calls, user_after)| Reply {
            text,
            reasoning,
            signed,
            calls,
            user_after,
        })
}

fn extend(
    messages: &mut Vec<Message>,
    provider: Format,
    response: &str,
    items: &str,
) -> Vec<Message> {
    let read = ingest::response(provider, response).expect("the reply reads");
    let results = ingest::items_after(provider, items, &read).expect("the results read");
    messages.extend(read.messages.iter().cloned());
    messages.extend(results.messages);
    read.messages
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn gemini_bodies_are_what_the_api_takes(messages in conversation()) {
        assert_gemini_valid(&parse(gemini("System.", &messages, &tools(), 100)));
    }

    #[test]
    fn gemini_round_trip_extends_the_body(messages in conversation(), reply in reply(), response_id in "[a-z0-9]{6}") {
        let mut messages = messages;
        let first = parse(gemini("System.", &messages, &tools(), 100));
        let mut parts = vec![];
        if !reply.reasoning.is_empty() {
            let mut thought = json!({"text": reply.reasoning, "thought": true});
            if reply.signed { thought["thoughtSignature"] = json!("th=="); }
            parts.push(thought);
        }
        if !reply.text.is_empty() {
            parts.push(json!({"text": reply.text}));
        }
        for (index, (tool, has_id, _, _)) in reply.calls.iter().enumerate() {
            let mut call = json!({"name": format!("tool{tool}"), "args": {"n": index}});
            if *has_id { call["id"] = json!(format!("r{index}")); }
            let mut part = json!({"functionCall": call});
            if reply.signed && index == 0 { part["thoughtSignature"] = json!("fc=="); }
            parts.push(part);
        }
        let content = json!({"role": "model", "parts": parts});
        let response = json!({"candidates": [{"content": content, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5}, "responseId": response_id});
        let mut answers = vec![];
        for (index, (tool, has_id, output, _)) in reply.calls.iter().enumerate() {
            let mut answer = json!({"name": format!("tool{tool}"), "response": {"output": output}});
            if *has_id { answer["id"] = json!(format!("r{index}")); }
            answers.push(json!({"functionResponse": answer}));
        }
        if !reply.user_after.is_empty() {
            answers.push(json!({"text": reply.user_after}));
        }
        let items = if answers.is_empty() { json!([]) } else { json!([{"role": "user", "parts": answers}]) };
        let read = extend(&mut messages, Format::Gemini, &response.to_string(), &items.to_string());
        let second = parse(gemini("System.", &messages, &tools(), 100));
        assert_gemini_valid(&second);
        let before = first["contents"].as_array().unwrap();
        let after = second["contents"].as_array().unwrap();
        prop_assert_eq!(&after[..before.len()], &before[..]);
        // The reply and results as sent, with the ids ctxd gave id-less calls.
        let ids: Vec<&str> = read[0].tool_calls.iter().map(|call| call.id.as_str()).collect();
        let mut content = content;
        let mut items = items;
        let calls = content["parts"].as_array_mut().unwrap().iter_mut().filter_map(|p| p.get_mut("functionCall"));
        for (call, id) in calls.zip(&ids) { call["id"] = json!(id); }
        if let Some(user) = items.get_mut(0) {
            let answers = user["parts"].as_array_mut().unwrap().iter_mut().filter_map(|p| p.get_mut("functionResponse"));
            for (answer, id) in answers.zip(&ids) { answer["id"] = json!(id); }
        }
        let mut expected = vec![content];
        expected.extend(items.as_array().unwrap().iter().cloned());
        prop_assert_eq!(&after[before.len()..], &expected[..]);
    }

    #[test]
    fn anthropic_round_trip_extends_the_body(messages in conversation(), reply in reply()) {
        let mut messages = messages;
        let first = parse(anthropic_messages("System.", &messages, &tools(), 100));
        let mut content = vec![];
        if !reply.reasoning.is_empty() {
            content.push(json!({"type": "thinking", "thinking": reply.reasoning, "signature": "EqQB=="}));
        }
        if reply.signed {
            content.push(json!({"type": "redacted_thinking", "data": "EmwK=="}));
        }
        if !reply.text.is_empty() {
            content.push(json!({"type": "text", "text": reply.text}));
        }
        for (index, (tool, _, _, _)) in reply.calls.iter().enumerate() {
            content.push(json!({"type": "tool_use", "id": format!("toolu_{index}"), "name": format!("tool{tool}"), "input": {"n": index}}));
        }
        let response = json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude",
            "content": content, "stop_reason": "end_turn", "stop_sequence": null,
            "usage": {"input_tokens": 3, "cache_read_input_tokens": 7, "output_tokens": 5}});
        let mut blocks = vec![];
        for (index, (_, _, output, failed)) in reply.calls.iter().enumerate() {
            let mut block = json!({"type": "tool_result", "tool_use_id": format!("toolu_{index}"), "content": [{"type": "text", "text": output}]});
            if *failed { block["is_error"] = json!(true); }
            blocks.push(block);
        }
        if !reply.user_after.is_empty() {
            blocks.push(json!({"type": "text", "text": reply.user_after}));
        }
        let items = if blocks.is_empty() { json!([]) } else { json!([{"role": "user", "content": blocks}]) };
        extend(&mut messages, Format::AnthropicMessages, &response.to_string(), &items.to_string());
        let second = parse(anthropic_messages("System.", &messages, &tools(), 100));
        let before = first["messages"].as_array().unwrap();
        let after = second["messages"].as_array().unwrap();
        prop_assert_eq!(&after[..before.len()], &before[..]);
        let mut expected = vec![json!({"role": "assistant", "content": content})];
        expected.extend(items.as_array().unwrap().iter().cloned());
        prop_assert_eq!(&after[before.len()..], &expected[..]);
    }

    #[test]
    fn readers_never_panic_on_any_json(value in arbitrary_json()) {
        let text = value.to_string();
        for provider in [Format::AnthropicMessages, Format::Gemini] {
            let _ = ingest::response(provider, &text);
            let _ = ingest::items(provider, &text);
            let wrapped = json!([value.clone()]).to_string();
            let _ = ingest::items(provider, &wrapped);
            let as_content = json!({"candidates": [{"content": value.clone()}], "content": [value.clone()]}).to_string();
            let _ = ingest::response(provider, &as_content);
        }
    }
}

fn arbitrary_json() -> impl Strategy<Value = Value> {
    let key = prop_oneof![
        Just("type".to_string()),
        Just("text".to_string()),
        Just("role".to_string()),
        Just("content".to_string()),
        Just("parts".to_string()),
        Just("functionCall".to_string()),
        Just("functionResponse".to_string()),
        Just("id".to_string()),
        Just("name".to_string()),
        Just("input".to_string()),
        Just("args".to_string()),
        Just("response".to_string()),
        Just("tool_use_id".to_string()),
        Just("source".to_string()),
        Just("inlineData".to_string()),
        Just("usage".to_string()),
        Just("thought".to_string()),
        "[a-z]{1,6}",
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| json!(f)),
        prop_oneof![
            Just("tool_use".to_string()),
            Just("text".to_string()),
            Just("user".to_string()),
            Just("model".to_string()),
            Just("tool_result".to_string()),
            Just("image".to_string()),
            ".{0,8}"
        ]
        .prop_map(Value::String),
    ];
    leaf.prop_recursive(5, 64, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(key.clone(), inner, 0..6)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

#[test]
fn a_reply_read_twice_gets_the_same_ids_and_distinct_replies_distinct_ones() {
    let body = |text: &str| {
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": text}, {"functionCall": {"name": "f", "args": {}}}]}}]}).to_string()
    };
    let id = |text: &str| {
        ingest::response(Format::Gemini, &body(text))
            .unwrap()
            .messages[0]
            .tool_calls[0]
            .id
            .clone()
    };
    assert_eq!(id("a"), id("a"));
    let ids: HashSet<String> = ["a", "b", "c"].into_iter().map(id).collect();
    assert_eq!(ids.len(), 3);
}
