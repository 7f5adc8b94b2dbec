//! OpenAI Chat Completions: `{"messages": [...], "tools": [...]}`.
use std::borrow::Cow;

use serde::Serialize;

use super::{Object, is_image, media_note, serialize};
use crate::message::{Message, Part, Role};
use crate::tokenize::ToolDefinition;

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
            Part::Native { format, json } => OpenAiPart::Text {
                text: Cow::Owned(super::native_note(format, json)),
            },
        });
    }
    OpenAiContent::Parts(parts)
}

fn openai_message(message: &Message) -> OpenAiMessage<'_> {
    let mut out = OpenAiMessage {
        role: crate::ingest::openai_role(message),
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::fixtures::{conversation, parse};
    use super::*;

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
}
