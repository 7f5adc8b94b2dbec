//! Properties of the OpenAI formats over random conversations (parallel tool calls,
//! images, reasoning with and without a reasoning item id, empty content):
//! - a Responses body is structurally valid: every `function_call_output` follows its
//!   `function_call`, call ids are unique, no message item is empty, every reasoning
//!   item has an id and is followed by the reply it belongs to;
//! - the round trip: render a body, build the reply a model could give to it in the
//!   provider's shape (a `ChatCompletion`, a `Response`), read it and the tool results
//!   (in the provider's item shape) back, render again: the second body's message or
//!   input array starts with the first one's unchanged (the prompt-cache prefix) and
//!   goes on with exactly the reply and the tool results as the provider documents
//!   sending them back.
use std::collections::HashSet;

use ctxd_core::format::Format;
use ctxd_core::ingest::{self, OPENAI_REASONING_ENCRYPTED, OPENAI_REASONING_ID};
use ctxd_core::message::{Message, Part, Role, ToolCall};
use ctxd_core::render::{openai_chat, openai_responses};
use ctxd_core::tokenize::ToolDefinition;
use proptest::prelude::*;
use serde_json::{Value, json};

/// One assistant reply: its text, reasoning and how many parallel tool calls it makes.
#[derive(Debug, Clone)]
struct Reply {
    text: String,
    reasoning: String,
    reasoning_id: bool,
    encrypted: bool,
    calls: usize,
    result_image: bool,
    /// An empty text part: with no text and no calls, a message with nothing to send.
    empty_part: bool,
    results: Vec<String>,
}

/// A user message and the replies (with their tool results) that follow it.
#[derive(Debug, Clone)]
struct Turn {
    text: String,
    images: Vec<bool>,
    replies: Vec<Reply>,
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![Just(String::new()), "[a-zA-Z0-9 \"\\\\é.{}]{1,16}"]
}

fn reply() -> impl Strategy<Value = Reply> {
    (
        text(),
        text(),
        any::<bool>(),
        any::<bool>(),
        0usize..4,
        any::<bool>(),
        prop::bool::weighted(0.2),
        prop::collection::vec(text(), 4),
    )
        .prop_map(
            |(
                text,
                reasoning,
                reasoning_id,
                encrypted,
                calls,
                result_image,
                empty_part,
                results,
            )| {
                Reply {
                    // A reply says something or calls a tool (or holds an empty part).
                    calls: if text.is_empty() && !empty_part {
                        calls.max(1)
                    } else {
                        calls
                    },
                    text,
                    reasoning,
                    reasoning_id,
                    encrypted,
                    result_image,
                    empty_part,
                    results,
                }
            },
        )
}

fn turn() -> impl Strategy<Value = Turn> {
    (
        text(),
        prop::collection::vec(any::<bool>(), 0..3),
        prop::collection::vec(reply(), 0..3),
    )
        .prop_map(|(text, images, replies)| Turn {
            text,
            images,
            replies,
        })
}

fn media(uri: &str, mime_type: &str) -> Part {
    Part::Media {
        uri: uri.into(),
        mime_type: mime_type.into(),
        token_estimate: 0,
    }
}

/// The conversation as messages, with call ids unique by a counter.
fn history(turns: &[Turn], next_call: &mut usize) -> Vec<Message> {
    let mut messages = Vec::new();
    for turn in turns {
        let mut user = Message::text(Role::User, turn.text.clone());
        if turn.text.is_empty() {
            user.parts.push(Part::Text {
                text: String::new(),
            });
        }
        for &png in &turn.images {
            user.parts.push(if png {
                media("data:image/png;base64,QUJD", "image/png")
            } else {
                media("https://x.test/photo.jpg", "image/jpeg")
            });
        }
        messages.push(user);
        for reply in &turn.replies {
            let mut assistant = Message::text(Role::Assistant, reply.text.clone());
            if reply.empty_part {
                assistant.parts.push(Part::Text {
                    text: String::new(),
                });
            }
            assistant.reasoning = reply.reasoning.clone();
            if reply.reasoning_id {
                assistant
                    .metadata
                    .insert(OPENAI_REASONING_ID.into(), format!("rs_{next_call}"));
            }
            if reply.encrypted {
                assistant
                    .metadata
                    .insert(OPENAI_REASONING_ENCRYPTED.into(), "gAAAA==".into());
            }
            let mut results = Vec::new();
            for index in 0..reply.calls {
                let id = format!("call_{next_call}");
                *next_call += 1;
                assistant.tool_calls.push(ToolCall {
                    id: id.clone(),
                    name: "bash".into(),
                    arguments: format!(r#"{{"command":"ls {index}"}}"#),
                });
                let mut result = Message::text(Role::Tool, reply.results[index].clone());
                result.tool_call_id = id;
                if reply.result_image {
                    result
                        .parts
                        .push(media("https://x.test/shot.png", "image/png"));
                }
                results.push(result);
            }
            messages.push(assistant);
            messages.extend(results);
        }
    }
    messages
}

fn tools() -> Vec<ToolDefinition> {
    vec![ToolDefinition {
        name: "bash".into(),
        description: "Execute a bash command".into(),
        parameters_json_schema: r#"{"type":"object","properties":{"command":{"type":"string"}}}"#
            .into(),
    }]
}

fn parse(body: &str) -> Value {
    serde_json::from_str(body).expect("the body is JSON")
}

fn list<'v>(body: &'v Value, key: &str) -> &'v Vec<Value> {
    body[key].as_array().expect("the body's list")
}

/// A Responses input array's structural validity.
fn check_responses_input(input: &[Value]) -> Result<(), TestCaseError> {
    let mut calls = HashSet::new();
    let mut answered = HashSet::new();
    for (index, item) in input.iter().enumerate() {
        match item["type"].as_str() {
            Some("function_call") => {
                let id = item["call_id"].as_str().unwrap_or_default();
                prop_assert!(!id.is_empty());
                prop_assert!(calls.insert(id.to_string()), "call id {id} twice");
            }
            Some("function_call_output") => {
                let id = item["call_id"].as_str().unwrap_or_default();
                prop_assert!(calls.contains(id), "output {id} before its call");
                prop_assert!(answered.insert(id.to_string()), "output {id} twice");
            }
            Some("message") => {
                let content = &item["content"];
                let empty = match content {
                    Value::String(text) => text.is_empty(),
                    Value::Array(parts) => parts.is_empty(),
                    _ => true,
                };
                prop_assert!(!empty, "empty message at {index}: {item}");
                prop_assert!(
                    ["user", "system", "assistant"].contains(&item["role"].as_str().unwrap())
                );
            }
            Some("reasoning") => {
                prop_assert!(!item["id"].as_str().unwrap_or_default().is_empty());
                let next = input.get(index + 1).map(|next| &next["type"]);
                prop_assert!(
                    next == Some(&json!("message")) || next == Some(&json!("function_call")),
                    "reasoning at {index} not followed by its reply"
                );
            }
            other => prop_assert!(false, "unknown item type {other:?}"),
        }
    }
    Ok(())
}

/// The reply as a Chat Completions `ChatCompletion`, and its message as Chat sends it back.
fn chat_reply(reply: &Reply, ids: &[String]) -> (Value, Value) {
    let mut message = json!({"role": "assistant",
        "content": if reply.text.is_empty() { Value::Null } else { json!(reply.text) }});
    if !ids.is_empty() {
        message["tool_calls"] = ids
            .iter()
            .enumerate()
            .map(|(index, id)| {
                json!({"id": id, "type": "function", "function": {"name": "bash",
                    "arguments": format!(r#"{{"command":"cat {index}"}}"#)}})
            })
            .collect();
    }
    if !reply.reasoning.is_empty() {
        message["reasoning_content"] = json!(reply.reasoning);
    }
    let completion = json!({"id": "chatcmpl-1", "object": "chat.completion", "created": 1,
        "model": "m", "choices": [{"index": 0, "finish_reason": "tool_calls",
            "message": message.clone()}],
        "usage": {"prompt_tokens": 900, "completion_tokens": 20, "total_tokens": 920,
            "prompt_tokens_details": {"cached_tokens": 512}}});
    (completion, message)
}

/// The reply as a Responses `Response`, and its output items as sent back without the
/// ids ctxd does not keep (a message's `msg_` and a call's `fc_` id; the API takes input
/// items without them).
fn responses_reply(reply: &Reply, ids: &[String]) -> (Value, Vec<Value>) {
    let mut output = Vec::new();
    let mut expected = Vec::new();
    let summary: Vec<Value> = if reply.reasoning.is_empty() {
        Vec::new()
    } else {
        vec![json!({"type": "summary_text", "text": reply.reasoning})]
    };
    let mut reasoning = json!({"type": "reasoning", "id": "rs_reply", "summary": summary});
    if reply.encrypted {
        reasoning["encrypted_content"] = json!("gAAAAreply");
    }
    output.push(reasoning.clone());
    expected.push(reasoning);
    if !reply.text.is_empty() {
        output.push(
            json!({"type": "message", "id": "msg_1", "status": "completed",
            "role": "assistant", "content": [{"type": "output_text", "text": reply.text,
            "annotations": []}]}),
        );
        expected.push(json!({"type": "message", "role": "assistant", "content": reply.text}));
    }
    for (index, id) in ids.iter().enumerate() {
        let arguments = format!(r#"{{"command":"cat {index}"}}"#);
        output.push(json!({"type": "function_call", "id": format!("fc_{index}"),
            "status": "completed", "call_id": id, "name": "bash", "arguments": arguments}));
        expected.push(
            json!({"type": "function_call", "call_id": id, "name": "bash",
            "arguments": arguments}),
        );
    }
    let response = json!({"id": "resp_1", "object": "response", "created_at": 1,
        "status": "completed", "model": "m", "output": output,
        "usage": {"input_tokens": 900, "input_tokens_details": {"cached_tokens": 512},
            "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 5},
            "total_tokens": 920}});
    (response, expected)
}

fn append(messages: &mut Vec<Message>, provider: Format, response: &Value, items: &Value) {
    let reply = ingest::response(provider, &response.to_string()).expect("the reply reads");
    assert_eq!(
        reply.usage.map(|usage| usage.cached_input_tokens),
        Some(512)
    );
    messages.extend(reply.messages);
    if items.as_array().is_some_and(|items| !items.is_empty()) {
        let read = ingest::items(provider, &items.to_string()).expect("the items read");
        messages.extend(read.messages);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn responses_bodies_are_structurally_valid(
        turns in prop::collection::vec(turn(), 0..5),
        system in text(),
    ) {
        let mut next_call = 0;
        let messages = history(&turns, &mut next_call);
        let body = parse(&openai_responses(&system, &messages, &tools(), 256));
        prop_assert_eq!(body.get("instructions").is_some(), !system.is_empty());
        check_responses_input(list(&body, "input"))?;
        // Reasoning is sent exactly where its item id is known.
        let reasoning_items = list(&body, "input")
            .iter()
            .filter(|item| item["type"] == "reasoning")
            .count();
        let with_id = messages
            .iter()
            // (a message with nothing to send sends no reasoning either)
            .filter(|m| m.metadata.contains_key(OPENAI_REASONING_ID))
            .filter(|m| !m.content.is_empty() || !m.tool_calls.is_empty())
            .count();
        prop_assert_eq!(reasoning_items, with_id);
    }

    #[test]
    fn chat_round_trip_keeps_the_prefix(
        turns in prop::collection::vec(turn(), 1..4),
        reply in reply(),
        follow_up in text(),
    ) {
        let mut next_call = 0;
        let mut messages = history(&turns, &mut next_call);
        let first = parse(&openai_chat("Be brief.", &messages, &tools()));
        // A model's reply says something or calls a tool.
        let calls = if reply.text.is_empty() { reply.calls.max(1) } else { reply.calls };
        let ids: Vec<String> = (0..calls).map(|i| format!("reply_{i}")).collect();
        let (completion, sent_back) = chat_reply(&reply, &ids);
        let mut items: Vec<Value> = ids
            .iter()
            .zip(&reply.results)
            .map(|(id, output)| json!({"role": "tool", "tool_call_id": id, "content": output}))
            .collect();
        if !follow_up.is_empty() {
            items.push(json!({"role": "user", "content": [{"type": "text", "text": follow_up},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,QUJD"}}]}));
        }
        let items = Value::Array(items);
        append(&mut messages, Format::OpenAiChat, &completion, &items);
        let second = parse(&openai_chat("Be brief.", &messages, &tools()));
        let (before, after) = (list(&first, "messages"), list(&second, "messages"));
        prop_assert_eq!(&after[..before.len()], &before[..]);
        let mut expected = vec![sent_back];
        expected.extend(items.as_array().unwrap().iter().cloned());
        prop_assert_eq!(&after[before.len()..], &expected[..]);
    }

    #[test]
    fn responses_round_trip_keeps_the_prefix(
        turns in prop::collection::vec(turn(), 1..4),
        reply in reply(),
        follow_up in text(),
    ) {
        let mut next_call = 0;
        let mut messages = history(&turns, &mut next_call);
        let first = parse(&openai_responses("Be brief.", &messages, &tools(), 256));
        // A model's reply says something or calls a tool.
        let calls = if reply.text.is_empty() { reply.calls.max(1) } else { reply.calls };
        let ids: Vec<String> = (0..calls).map(|i| format!("reply_{i}")).collect();
        let (response, sent_back) = responses_reply(&reply, &ids);
        let mut items: Vec<Value> = ids
            .iter()
            .zip(&reply.results)
            .map(|(id, output)| {
                json!({"type": "function_call_output", "call_id": id, "output": output})
            })
            .collect();
        if !follow_up.is_empty() {
            items.push(json!({"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": follow_up},
                {"type": "input_image", "image_url": "https://x.test/b.png", "detail": "auto"}]}));
        }
        let items = Value::Array(items);
        append(&mut messages, Format::OpenAiResponses, &response, &items);
        let second = parse(&openai_responses("Be brief.", &messages, &tools(), 256));
        let (before, after) = (list(&first, "input"), list(&second, "input"));
        prop_assert_eq!(&after[..before.len()], &before[..]);
        let mut expected = sent_back;
        expected.extend(items.as_array().unwrap().iter().cloned());
        prop_assert_eq!(&after[before.len()..], &expected[..]);
        check_responses_input(after)?;
    }
}
