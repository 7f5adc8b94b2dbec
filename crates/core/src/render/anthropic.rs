//! Anthropic Messages: `{"system", "messages", "tools", "max_tokens"}`.
//!
//! Reasoning goes back as a `thinking` block (first in its assistant message) only when
//! the message carries the block's signature (`ctxd.anthropic.thinking_signature`, kept
//! by AppendNative): Anthropic refuses a thinking block it cannot verify, so reasoning
//! without one (another provider's, or appended as plain text) is not sent. Redacted
//! thinking kept the same way follows it.
use std::borrow::Cow;

use serde::Serialize;
use serde_json::value::RawValue;

use super::{Object, is_image, media_note, native_note, serialize};
use crate::ingest::{
    ANTHROPIC_INLINE_SYSTEM, ANTHROPIC_REDACTED_THINKING, ANTHROPIC_THINKING_SIGNATURE,
    NATIVE_ANTHROPIC, TOOL_ERROR,
};
use crate::media::{self, Source};
use crate::message::{Message, Part, Role};
use crate::tokenize::ToolDefinition;

#[derive(Serialize)]
struct AnthropicBody<'a> {
    #[serde(skip_serializing_if = "String::is_empty")]
    system: String,
    messages: Vec<AnthropicMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<AnthropicTool<'a>>,
    max_tokens: i64,
}

#[derive(Serialize)]
struct AnthropicMessage<'a> {
    role: &'static str,
    content: Vec<Block<'a>>,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block<'a> {
    Thinking {
        thinking: &'a str,
        signature: &'a str,
    },
    RedactedThinking {
        data: String,
    },
    Text {
        text: Cow<'a, str>,
    },
    Image {
        source: ImageSource<'a>,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: Object<'a>,
    },
    ToolResult {
        tool_use_id: &'a str,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        content: Vec<Block<'a>>,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
    /// A block ctxd keeps whole (`Part::Native`), as it came.
    #[serde(untagged)]
    Native(&'a RawValue),
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ImageSource<'a> {
    Url { url: &'a str },
    Base64 { media_type: &'a str, data: &'a str },
}

/// Where Anthropic finds an image: inline for a base64 `data:` URI (Anthropic fetches
/// only http(s) URLs), else the URL; `None` for a `data:` URI it cannot take.
/// The media types Anthropic takes as a base64 image; another (an SVG, say) would fail
/// the whole request, so it stays a note.
const BASE64_IMAGE_TYPES: [&str; 4] = ["image/jpeg", "image/png", "image/gif", "image/webp"];

fn image_source<'a>(uri: &'a str, mime_type: &'a str) -> Option<ImageSource<'a>> {
    match media::source(uri, mime_type) {
        Source::Base64 { media_type, data } if BASE64_IMAGE_TYPES.contains(&media_type) => {
            Some(ImageSource::Base64 { media_type, data })
        }
        Source::Base64 { .. } => None,
        Source::Reference(url) => Some(ImageSource::Url { url }),
        Source::Unsupported => None,
    }
}

#[derive(Serialize)]
struct AnthropicTool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: Object<'a>,
}

/// An Anthropic Messages body: `{"system", "messages", "tools", "max_tokens"}`, with
/// tool calls as `tool_use` blocks, results as `tool_result` blocks in user turns, and
/// consecutive same-role messages merged. Stored system messages join the system field.
pub fn anthropic_messages<'a>(
    system_prompt: &str,
    messages: impl IntoIterator<Item = &'a Message>,
    tools: &'a [ToolDefinition],
    max_tokens: i64,
) -> String {
    let mut system = system_prompt.to_string();
    let mut out: Vec<AnthropicMessage<'a>> = Vec::new();
    for message in messages {
        let (role, blocks) = match message.role {
            Role::System if message.metadata.contains_key(ANTHROPIC_INLINE_SYSTEM) => {
                ("system", anthropic_content(message))
            }
            Role::System => {
                for block in anthropic_content(message) {
                    if let Block::Text { text } = block {
                        if !system.is_empty() {
                            system.push_str("\n\n");
                        }
                        system.push_str(&text);
                    }
                }
                continue;
            }
            Role::User => ("user", anthropic_content(message)),
            Role::Tool => (
                "user",
                vec![Block::ToolResult {
                    tool_use_id: &message.tool_call_id,
                    content: anthropic_content(message),
                    is_error: message
                        .metadata
                        .get(TOOL_ERROR)
                        .is_some_and(|flag| flag == "true"),
                }],
            ),
            Role::Assistant => {
                let mut blocks = thinking(message);
                blocks.extend(anthropic_content(message));
                blocks.extend(message.tool_calls.iter().map(|call| Block::ToolUse {
                    id: &call.id,
                    name: &call.name,
                    input: Object::parse(&call.arguments),
                }));
                ("assistant", blocks)
            }
        };
        // Anthropic rejects a message without content (only empty text parts).
        if blocks.is_empty() {
            continue;
        }
        match out.last_mut() {
            Some(last) if last.role == role => last.content.extend(blocks),
            _ => out.push(AnthropicMessage {
                role,
                content: blocks,
            }),
        }
    }
    // Tool results come first in their user message (a user message between a call and
    // its result merges ahead of it otherwise), as Anthropic requires.
    for message in &mut out {
        message
            .content
            .sort_by_key(|block| !matches!(block, Block::ToolResult { .. }));
    }
    let tools = tools
        .iter()
        .map(|tool| AnthropicTool {
            name: &tool.name,
            description: &tool.description,
            input_schema: Object::schema(&tool.parameters_json_schema),
        })
        .collect();
    serialize(&AnthropicBody {
        system,
        messages: out,
        tools,
        max_tokens,
    })
}

/// The signed thinking block and the redacted ones an assistant message came with.
fn thinking(message: &Message) -> Vec<Block<'_>> {
    let mut blocks = Vec::new();
    if let Some(signature) = message.metadata.get(ANTHROPIC_THINKING_SIGNATURE)
        && !signature.is_empty()
    {
        blocks.push(Block::Thinking {
            thinking: &message.reasoning,
            signature,
        });
    }
    if let Some(redacted) = message.metadata.get(ANTHROPIC_REDACTED_THINKING) {
        let data: Vec<String> = serde_json::from_str(redacted).unwrap_or_default();
        blocks.extend(
            data.into_iter()
                .map(|data| Block::RedactedThinking { data }),
        );
    }
    blocks
}

/// Text and media blocks; Anthropic rejects empty text blocks, so none are made.
fn anthropic_content(message: &Message) -> Vec<Block<'_>> {
    let mut blocks = Vec::with_capacity(message.parts.len() + 1);
    if !message.content.is_empty() {
        blocks.push(Block::Text {
            text: Cow::Borrowed(&message.content),
        });
    }
    for part in &message.parts {
        match part {
            Part::Text { text } if !text.is_empty() => blocks.push(Block::Text {
                text: Cow::Borrowed(text),
            }),
            Part::Text { .. } => {}
            Part::Media { uri, mime_type, .. }
                if is_image(mime_type) && message.role != Role::System =>
            {
                blocks.push(match image_source(uri, mime_type) {
                    Some(source) => Block::Image { source },
                    None => Block::Text {
                        text: Cow::Owned(media_note(uri, mime_type)),
                    },
                });
            }
            Part::Media { uri, mime_type, .. } => blocks.push(Block::Text {
                text: Cow::Owned(media_note(uri, mime_type)),
            }),
            Part::Native { format, json } => blocks.push(native(format, json)),
        }
    }
    blocks
}

/// A native block back as it came when it is Anthropic's, else a note.
fn native<'a>(format: &str, json: &'a str) -> Block<'a> {
    match serde_json::from_str::<&RawValue>(json) {
        Ok(raw) if format == NATIVE_ANTHROPIC => Block::Native(raw),
        _ => Block::Text {
            text: Cow::Owned(native_note(format, json)),
        },
    }
}

#[cfg(test)]
mod tests {
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
}
