//! Renders a built request as a provider's JSON body: OpenAI Chat Completions or
//! Anthropic Messages. Pure. The body is serialized straight from the view's messages
//! (borrowed, no intermediate JSON tree), since it is rebuilt on every BuildMessages.
use std::borrow::Cow;

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use serde_json::value::RawValue;

use crate::message::{Message, Part, Role};
use crate::tokenize::ToolDefinition;

/// A JSON object the client gave as text (tool-call arguments, a tool's schema), emitted
/// verbatim when it is one, else as an empty object: providers want an object, and
/// validation already rejected malformed arguments and schemas.
enum Object<'a> {
    Raw(&'a RawValue),
    Empty,
    /// A tool without a schema: one that takes no parameters.
    NoParameters,
}

impl<'a> Object<'a> {
    fn parse(text: &'a str) -> Object<'a> {
        match serde_json::from_str::<&RawValue>(text) {
            Ok(raw) if raw.get().starts_with('{') => Object::Raw(raw),
            _ => Object::Empty,
        }
    }

    fn schema(text: &'a str) -> Object<'a> {
        if text.is_empty() {
            Object::NoParameters
        } else {
            Object::parse(text)
        }
    }
}

impl Serialize for Object<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Object::Raw(raw) => raw.serialize(serializer),
            Object::Empty => serializer.serialize_map(Some(0))?.end(),
            Object::NoParameters => {
                let mut map = serializer.serialize_map(Some(2))?;
                map.serialize_entry("type", "object")?;
                map.serialize_entry("properties", &Object::Empty)?;
                map.end()
            }
        }
    }
}

fn is_image(mime_type: &str) -> bool {
    mime_type.starts_with("image/")
}

/// A media reference a provider cannot take inline, kept visible as text.
fn media_note(uri: &str, mime_type: &str) -> String {
    format!("[attachment {mime_type}: {uri}]")
}

fn serialize(body: &impl Serialize) -> String {
    serde_json::to_string(body).expect("strings, numbers and validated raw JSON serialize")
}

#[derive(Serialize)]
struct OpenAiBody<'a> {
    messages: Vec<OpenAiMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<OpenAiTool<'a>>,
}

#[derive(Serialize)]
struct OpenAiMessage<'a> {
    role: &'a str,
    content: OpenAiContent<'a>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<OpenAiToolCall<'a>>,
    #[serde(skip_serializing_if = "str::is_empty")]
    reasoning_content: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
}

/// `null` (an assistant message with only tool calls), a string, or content parts.
#[derive(Serialize)]
#[serde(untagged)]
enum OpenAiContent<'a> {
    Null(()),
    Text(&'a str),
    Parts(Vec<OpenAiPart<'a>>),
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum OpenAiPart<'a> {
    Text { text: Cow<'a, str> },
    ImageUrl { image_url: Url<'a> },
}

#[derive(Serialize)]
struct Url<'a> {
    url: &'a str,
}

#[derive(Serialize)]
struct OpenAiToolCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: OpenAiFunctionCall<'a>,
}

#[derive(Serialize)]
struct OpenAiFunctionCall<'a> {
    name: &'a str,
    /// A JSON text, as OpenAI takes it.
    arguments: &'a str,
}

#[derive(Serialize)]
struct OpenAiTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: OpenAiFunction<'a>,
}

#[derive(Serialize)]
struct OpenAiFunction<'a> {
    name: &'a str,
    description: &'a str,
    parameters: Object<'a>,
}

/// An OpenAI Chat Completions body: `{"messages": [...], "tools": [...]}`.
pub fn openai_chat<'a>(
    system_prompt: &'a str,
    messages: impl IntoIterator<Item = &'a Message>,
    tools: &'a [ToolDefinition],
) -> String {
    let messages = messages.into_iter();
    let mut out = Vec::with_capacity(messages.size_hint().0 + 1);
    if !system_prompt.is_empty() {
        out.push(OpenAiMessage {
            role: "system",
            content: OpenAiContent::Text(system_prompt),
            tool_calls: Vec::new(),
            reasoning_content: "",
            tool_call_id: None,
            name: None,
        });
    }
    out.extend(messages.map(openai_message));
    let tools = tools
        .iter()
        .map(|tool| OpenAiTool {
            kind: "function",
            function: OpenAiFunction {
                name: &tool.name,
                description: &tool.description,
                parameters: Object::schema(&tool.parameters_json_schema),
            },
        })
        .collect();
    serialize(&OpenAiBody {
        messages: out,
        tools,
    })
}

fn openai_content(message: &Message) -> OpenAiContent<'_> {
    if message.parts.is_empty() {
        return OpenAiContent::Text(&message.content);
    }
    let mut parts = Vec::with_capacity(message.parts.len() + 1);
    if !message.content.is_empty() {
        parts.push(OpenAiPart::Text {
            text: Cow::Borrowed(&message.content),
        });
    }
    for part in &message.parts {
        parts.push(match part {
            Part::Text { text } => OpenAiPart::Text {
                text: Cow::Borrowed(text),
            },
            // OpenAI takes images in user messages only.
            Part::Media { uri, mime_type, .. }
                if is_image(mime_type) && message.role == Role::User =>
            {
                OpenAiPart::ImageUrl {
                    image_url: Url { url: uri },
                }
            }
            Part::Media { uri, mime_type, .. } => OpenAiPart::Text {
                text: Cow::Owned(media_note(uri, mime_type)),
            },
        });
    }
    OpenAiContent::Parts(parts)
}

fn openai_message(message: &Message) -> OpenAiMessage<'_> {
    let mut out = OpenAiMessage {
        role: message.role.as_str(),
        content: openai_content(message),
        tool_calls: Vec::new(),
        reasoning_content: "",
        tool_call_id: None,
        name: (!message.name.is_empty() && message.role != Role::Tool)
            .then_some(message.name.as_str()),
    };
    match message.role {
        Role::Assistant => {
            if !message.has_content() {
                out.content = OpenAiContent::Null(());
            }
            out.tool_calls = message
                .tool_calls
                .iter()
                .map(|call| OpenAiToolCall {
                    id: &call.id,
                    kind: "function",
                    function: OpenAiFunctionCall {
                        name: &call.name,
                        arguments: if call.arguments.is_empty() {
                            "{}"
                        } else {
                            &call.arguments
                        },
                    },
                })
                .collect();
            out.reasoning_content = &message.reasoning;
        }
        Role::Tool => out.tool_call_id = Some(&message.tool_call_id),
        Role::User | Role::System => {}
    }
    out
}

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
    },
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ImageSource<'a> {
    Url { url: &'a str },
    Base64 { media_type: &'a str, data: &'a str },
}

/// Where Anthropic finds an image: inline for a base64 `data:` URI (Anthropic fetches
/// only http(s) URLs), else the URL; `None` for a `data:` URI it cannot take.
fn image_source<'a>(uri: &'a str, mime_type: &'a str) -> Option<ImageSource<'a>> {
    let Some(data_uri) = uri.strip_prefix("data:") else {
        return Some(ImageSource::Url { url: uri });
    };
    let (header, data) = data_uri.split_once(',')?;
    let media_type = header.strip_suffix(";base64")?;
    Some(ImageSource::Base64 {
        media_type: if media_type.is_empty() {
            mime_type
        } else {
            media_type
        },
        data,
    })
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
                }],
            ),
            Role::Assistant => {
                let mut blocks = anthropic_content(message);
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
        }
    }
    blocks
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::message::ToolCall;

    fn parse(body: String) -> Value {
        serde_json::from_str(&body).expect("the body is JSON")
    }

    fn roles(body: &Value) -> Vec<&str> {
        body["messages"]
            .as_array()
            .expect("messages")
            .iter()
            .map(|m| m["role"].as_str().expect("a role"))
            .collect()
    }

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
        let body = parse(openai_chat("Be brief.", &conversation(), &tools));
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

    fn media(uri: &str, mime_type: &str) -> Part {
        Part::Media {
            uri: uri.into(),
            mime_type: mime_type.into(),
            token_estimate: 0,
        }
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
    fn images_go_where_each_provider_takes_them() {
        let mut user = Message::text(Role::User, "Look:");
        user.parts = vec![
            media("https://example.com/a.png", "image/png"),
            media("data:image/jpeg;base64,QUJD", "image/jpeg"),
            media("data:image/png,raw", "image/png"),
        ];
        let mut call = Message::text(Role::Assistant, "");
        call.tool_calls = vec![ToolCall {
            id: "s".into(),
            name: "screenshot".into(),
            arguments: "{}".into(),
        }];
        let mut shot = Message::text(Role::Tool, "");
        shot.tool_call_id = "s".into();
        shot.parts = vec![media("https://example.com/s.png", "image/png")];
        let messages = [user, call, shot];

        let body = parse(anthropic_messages("", &messages, &[], 100));
        let blocks = &body["messages"][0]["content"];
        assert_eq!(
            blocks[1]["source"],
            json!({"type": "url", "url": "https://example.com/a.png"})
        );
        assert_eq!(
            blocks[2]["source"],
            json!({"type": "base64", "media_type": "image/jpeg", "data": "QUJD"})
        );
        assert_eq!(blocks[3]["type"], "text");
        let result = &body["messages"][2]["content"][0];
        assert_eq!(result["content"][0]["type"], "image");

        let body = parse(openai_chat("", &messages, &[]));
        let parts = &body["messages"][0]["content"];
        assert_eq!(parts[1]["type"], "image_url");
        assert_eq!(parts[2]["image_url"]["url"], "data:image/jpeg;base64,QUJD");
        // Only user messages take images; elsewhere the reference stays as text.
        let tool = &body["messages"][2]["content"];
        assert_eq!(tool[0]["type"], "text");
        assert!(tool[0]["text"].as_str().unwrap().contains("s.png"));
        assert_eq!(body["messages"][1]["content"], Value::Null);
    }
}
