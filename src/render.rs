//! Renders a built request as a provider's JSON body: OpenAI Chat Completions or
//! Anthropic Messages. Pure.
use serde_json::{Value, json};

use crate::message::{Message, Part, Role};
use crate::tokenize::ToolDefinition;

/// Parses a JSON text the client gave, falling back to an empty object: providers want
/// an object, and validation already rejected malformed arguments and schemas.
fn object_or_empty(text: &str) -> Value {
    serde_json::from_str::<Value>(text)
        .ok()
        .filter(Value::is_object)
        .unwrap_or_else(|| json!({}))
}

fn is_image(mime_type: &str) -> bool {
    mime_type.starts_with("image/")
}

/// A media reference a provider cannot take inline, kept visible as text.
fn media_note(uri: &str, mime_type: &str) -> String {
    format!("[attachment {mime_type}: {uri}]")
}

/// An OpenAI Chat Completions body: `{"messages": [...], "tools": [...]}`.
pub fn openai_chat<'a>(
    system_prompt: &str,
    messages: impl IntoIterator<Item = &'a Message>,
    tools: &[ToolDefinition],
) -> Value {
    let mut out = Vec::new();
    if !system_prompt.is_empty() {
        out.push(json!({"role": "system", "content": system_prompt}));
    }
    for message in messages {
        out.push(openai_message(message));
    }
    let mut body = json!({ "messages": out });
    if !tools.is_empty() {
        body["tools"] = tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": if tool.parameters_json_schema.is_empty() {
                            json!({"type": "object", "properties": {}})
                        } else {
                            object_or_empty(&tool.parameters_json_schema)
                        },
                    }
                })
            })
            .collect();
    }
    body
}

fn openai_content(message: &Message) -> Value {
    if message.parts.is_empty() {
        return Value::String(message.content.clone());
    }
    let mut parts = Vec::new();
    if !message.content.is_empty() {
        parts.push(json!({"type": "text", "text": message.content}));
    }
    for part in &message.parts {
        parts.push(match part {
            Part::Text { text } => json!({"type": "text", "text": text}),
            Part::Media { uri, mime_type, .. } if is_image(mime_type) => {
                json!({"type": "image_url", "image_url": {"url": uri}})
            }
            Part::Media { uri, mime_type, .. } => {
                json!({"type": "text", "text": media_note(uri, mime_type)})
            }
        });
    }
    Value::Array(parts)
}

fn openai_message(message: &Message) -> Value {
    let mut out = json!({ "role": message.role.as_str() });
    match message.role {
        Role::Assistant => {
            out["content"] = if message.has_content() {
                openai_content(message)
            } else {
                Value::Null
            };
            if !message.tool_calls.is_empty() {
                out["tool_calls"] = message
                    .tool_calls
                    .iter()
                    .map(|call| {
                        json!({
                            "id": call.id,
                            "type": "function",
                            "function": {
                                "name": call.name,
                                "arguments": if call.arguments.is_empty() { "{}" } else { &call.arguments },
                            }
                        })
                    })
                    .collect();
            }
            if !message.reasoning.is_empty() {
                out["reasoning_content"] = Value::String(message.reasoning.clone());
            }
        }
        Role::Tool => {
            out["tool_call_id"] = Value::String(message.tool_call_id.clone());
            out["content"] = openai_content(message);
        }
        Role::User | Role::System => out["content"] = openai_content(message),
    }
    if !message.name.is_empty() && message.role != Role::Tool {
        out["name"] = Value::String(message.name.clone());
    }
    out
}

/// An Anthropic Messages body: `{"system", "messages", "tools", "max_tokens"}`, with
/// tool calls as `tool_use` blocks, results as `tool_result` blocks in user turns, and
/// consecutive same-role messages merged. Stored system messages join the system field.
pub fn anthropic_messages<'a>(
    system_prompt: &str,
    messages: impl IntoIterator<Item = &'a Message>,
    tools: &[ToolDefinition],
    max_tokens: i64,
) -> Value {
    let mut system = system_prompt.to_string();
    let mut out: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for message in messages {
        let (role, blocks) = match message.role {
            Role::System => {
                if !system.is_empty() {
                    system.push_str("\n\n");
                }
                system.push_str(&message.content);
                continue;
            }
            Role::User => ("user", anthropic_content(message)),
            Role::Tool => {
                let text: Vec<Value> = anthropic_content(message);
                (
                    "user",
                    vec![json!({
                        "type": "tool_result",
                        "tool_use_id": message.tool_call_id,
                        "content": text,
                    })],
                )
            }
            Role::Assistant => {
                let mut blocks = anthropic_content(message);
                for call in &message.tool_calls {
                    blocks.push(json!({
                        "type": "tool_use",
                        "id": call.id,
                        "name": call.name,
                        "input": object_or_empty(&call.arguments),
                    }));
                }
                ("assistant", blocks)
            }
        };
        match out.last_mut() {
            Some((last_role, last_blocks)) if *last_role == role => last_blocks.extend(blocks),
            _ => out.push((role, blocks)),
        }
    }
    let messages: Vec<Value> = out
        .into_iter()
        .map(|(role, blocks)| json!({"role": role, "content": blocks}))
        .collect();
    let mut body = json!({ "messages": messages, "max_tokens": max_tokens });
    if !system.is_empty() {
        body["system"] = Value::String(system);
    }
    if !tools.is_empty() {
        body["tools"] = tools
            .iter()
            .map(|tool| {
                json!({
                    "name": tool.name,
                    "description": tool.description,
                    "input_schema": if tool.parameters_json_schema.is_empty() {
                        json!({"type": "object", "properties": {}})
                    } else {
                        object_or_empty(&tool.parameters_json_schema)
                    },
                })
            })
            .collect();
    }
    body
}

/// Text and media blocks; Anthropic rejects empty text blocks, so none are made.
fn anthropic_content(message: &Message) -> Vec<Value> {
    let mut blocks = Vec::new();
    if !message.content.is_empty() {
        blocks.push(json!({"type": "text", "text": message.content}));
    }
    for part in &message.parts {
        match part {
            Part::Text { text } if !text.is_empty() => {
                blocks.push(json!({"type": "text", "text": text}));
            }
            Part::Text { .. } => {}
            Part::Media { uri, mime_type, .. } if is_image(mime_type) => {
                blocks.push(json!({"type": "image", "source": {"type": "url", "url": uri}}));
            }
            Part::Media { uri, mime_type, .. } => {
                blocks.push(json!({"type": "text", "text": media_note(uri, mime_type)}));
            }
        }
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::ToolCall;

    fn conversation() -> Vec<Message> {
        let mut call = Message::text(Role::Assistant, "Let me look.");
        call.tool_calls = vec![
            ToolCall {
                id: "a".into(),
                name: "bash".into(),
                arguments: r#"{"command":"ls"}"#.into(),
            },
            ToolCall {
                id: "b".into(),
                name: "bash".into(),
                arguments: r#"{"command":"pwd"}"#.into(),
            },
        ];
        let mut result_a = Message::text(Role::Tool, "file.txt");
        result_a.tool_call_id = "a".into();
        let mut result_b = Message::text(Role::Tool, "/work");
        result_b.tool_call_id = "b".into();
        vec![
            Message::text(Role::User, "What is here?"),
            call,
            result_a,
            result_b,
            Message::text(Role::User, "And then?"),
            Message::text(Role::Assistant, "Done."),
        ]
    }

    #[test]
    fn openai_body_carries_system_tool_calls_and_results() {
        let tools = [ToolDefinition {
            name: "bash".into(),
            description: "Execute a bash command".into(),
            parameters_json_schema: r#"{"type":"object"}"#.into(),
        }];
        let body = openai_chat("Be brief.", &conversation(), &tools);
        let messages = body["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 7);
        assert_eq!(
            messages[0],
            json!({"role": "system", "content": "Be brief."})
        );
        assert_eq!(
            messages[2]["tool_calls"][1]["function"]["arguments"],
            r#"{"command":"pwd"}"#
        );
        assert_eq!(
            messages[3],
            json!({"role": "tool", "tool_call_id": "a", "content": "file.txt"})
        );
        assert_eq!(
            body["tools"][0]["function"]["parameters"],
            json!({"type": "object"})
        );
    }

    #[test]
    fn anthropic_body_merges_results_and_following_user_text() {
        let body = anthropic_messages("Be brief.", &conversation(), &[], 1024);
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
}
