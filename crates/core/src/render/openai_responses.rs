//! OpenAI Responses: `{"instructions", "input": [...], "tools", "max_output_tokens"}`.
//!
//! Each message becomes input items: user and system messages `message` items (a string,
//! or `input_text` / `input_image` parts); an assistant message its `reasoning` item
//! (only when it carries the reasoning item's id, `ctxd.openai.reasoning_id`: the API
//! takes no reasoning item without one, so reasoning without an id is not sent), then a
//! `message` item with its text (a string: the SDK's input types take assistant text
//! with an id only as `output_text` parts, and ctxd does not keep message ids), then one
//! `function_call` item per tool call; a tool result a `function_call_output` item.
use std::borrow::Cow;

use serde::Serialize;

use super::{Object, is_image, media_note, serialize};
use serde_json::value::RawValue;

use crate::ingest::{
    NATIVE_OPENAI_RESPONSES, OPENAI_CUSTOM_TOOL_CALLS, OPENAI_CUSTOM_TOOL_OUTPUT,
    OPENAI_REASONING_ENCRYPTED, OPENAI_REASONING_ID,
};
use crate::message::{Message, Part, Role};
use crate::tokenize::ToolDefinition;

#[derive(Serialize)]
struct Body<'a> {
    #[serde(skip_serializing_if = "str::is_empty")]
    instructions: &'a str,
    input: Vec<Item<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Tool<'a>>,
    max_output_tokens: i64,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Item<'a> {
    Reasoning {
        id: &'a str,
        summary: Vec<Summary<'a>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        encrypted_content: Option<&'a str>,
    },
    Message {
        role: &'static str,
        content: Content<'a>,
    },
    FunctionCall {
        call_id: &'a str,
        name: &'a str,
        /// A JSON text, as OpenAI takes it.
        arguments: &'a str,
    },
    FunctionCallOutput {
        call_id: &'a str,
        output: Content<'a>,
    },
    /// A custom (freeform) tool's call: its input as the text it is.
    CustomToolCall {
        call_id: &'a str,
        name: &'a str,
        input: Cow<'a, str>,
    },
    CustomToolCallOutput {
        call_id: &'a str,
        output: Content<'a>,
    },
    /// An item ctxd keeps whole (`Part::Native`), as it came.
    #[serde(untagged)]
    Native(&'a RawValue),
}

#[derive(Serialize)]
struct Summary<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
}

/// A string, or input content parts.
#[derive(Serialize)]
#[serde(untagged)]
enum Content<'a> {
    Text(Cow<'a, str>),
    Parts(Vec<InputPart<'a>>),
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum InputPart<'a> {
    InputText {
        text: Cow<'a, str>,
    },
    InputImage {
        image_url: &'a str,
        /// Required by the API's types; the detail a client sent is not kept.
        detail: &'static str,
    },
}

#[derive(Serialize)]
struct Tool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    name: &'a str,
    description: &'a str,
    parameters: Object<'a>,
    /// Responses makes function tools strict unless told otherwise, and strict mode
    /// refuses most hand-written schemas; ctxd passes the client's schema as it is.
    strict: bool,
}

/// An OpenAI Responses body: `{"instructions": "...", "input": [...], "tools": [...],
/// "max_output_tokens": N}`.
pub fn openai_responses<'a>(
    system_prompt: &'a str,
    messages: impl IntoIterator<Item = &'a Message>,
    tools: &'a [ToolDefinition],
    max_output_tokens: i64,
) -> String {
    let messages = messages.into_iter();
    let mut input = Vec::with_capacity(messages.size_hint().0 + 1);
    for message in messages {
        push_items(message, &mut input);
    }
    let tools = tools
        .iter()
        .map(|tool| Tool {
            kind: "function",
            name: &tool.name,
            description: &tool.description,
            parameters: Object::schema(&tool.parameters_json_schema),
            strict: false,
        })
        .collect();
    serialize(&Body {
        instructions: system_prompt,
        input,
        tools,
        max_output_tokens,
    })
}

fn push_items<'a>(message: &'a Message, input: &mut Vec<Item<'a>>) {
    match message.role {
        Role::User | Role::System => {
            if let Some(content) = input_content(message) {
                input.push(Item::Message {
                    role: crate::ingest::openai_role(message),
                    content,
                });
            }
        }
        Role::Tool => {
            let call_id = &message.tool_call_id;
            let output = input_content(message).unwrap_or(Content::Text(Cow::Borrowed("")));
            input.push(
                if message.metadata.contains_key(OPENAI_CUSTOM_TOOL_OUTPUT) {
                    Item::CustomToolCallOutput { call_id, output }
                } else {
                    Item::FunctionCallOutput { call_id, output }
                },
            );
        }
        Role::Assistant => {
            let text = assistant_text(message);
            let natives = native_items(message);
            if text.is_empty() && message.tool_calls.is_empty() && natives.is_empty() {
                // Nothing the API would take: no empty message, and no reasoning item
                // without the item it precedes.
                return;
            }
            if let Some(id) = message.metadata.get(OPENAI_REASONING_ID) {
                input.push(Item::Reasoning {
                    id,
                    summary: if message.reasoning.is_empty() {
                        Vec::new()
                    } else {
                        vec![Summary {
                            kind: "summary_text",
                            text: &message.reasoning,
                        }]
                    },
                    encrypted_content: message
                        .metadata
                        .get(OPENAI_REASONING_ENCRYPTED)
                        .map(String::as_str),
                });
            }
            input.extend(natives);
            if !text.is_empty() {
                input.push(Item::Message {
                    role: "assistant",
                    content: Content::Text(text),
                });
            }
            let custom = custom_calls(message);
            input.extend(message.tool_calls.iter().map(|call| {
                if custom.contains(&call.id) {
                    Item::CustomToolCall {
                        call_id: &call.id,
                        name: &call.name,
                        input: custom_input(&call.arguments),
                    }
                } else {
                    Item::FunctionCall {
                        call_id: &call.id,
                        name: &call.name,
                        arguments: if call.arguments.is_empty() {
                            "{}"
                        } else {
                            &call.arguments
                        },
                    }
                }
            }));
        }
    }
}

/// The Responses items an assistant message keeps whole, as they came.
fn native_items(message: &Message) -> Vec<Item<'_>> {
    message
        .parts
        .iter()
        .filter_map(|part| match part {
            Part::Native { format, json } if format == NATIVE_OPENAI_RESPONSES => {
                serde_json::from_str::<&RawValue>(json)
                    .ok()
                    .map(Item::Native)
            }
            _ => None,
        })
        .collect()
}

/// The ids of a message's custom tool calls.
fn custom_calls(message: &Message) -> Vec<String> {
    message
        .metadata
        .get(OPENAI_CUSTOM_TOOL_CALLS)
        .and_then(|ids| serde_json::from_str(ids).ok())
        .unwrap_or_default()
}

/// A custom call's input from its arguments, `{"input": "..."}`.
fn custom_input(arguments: &str) -> Cow<'_, str> {
    serde_json::from_str::<serde_json::Value>(arguments)
        .ok()
        .and_then(|value| value.get("input")?.as_str().map(str::to_string))
        .map_or(Cow::Borrowed(arguments), Cow::Owned)
}

/// A user, system or tool message's content: its text alone as a string, else input
/// parts (images only from user and tool messages; other media stay visible as text).
/// None when there is nothing to send (the API refuses an empty message).
fn input_content(message: &Message) -> Option<Content<'_>> {
    if message.parts.is_empty() {
        return (!message.content.is_empty() || message.role == Role::Tool)
            .then_some(Content::Text(Cow::Borrowed(&message.content)));
    }
    let mut parts = Vec::with_capacity(message.parts.len() + 1);
    if !message.content.is_empty() {
        parts.push(InputPart::InputText {
            text: Cow::Borrowed(&message.content),
        });
    }
    for part in &message.parts {
        match part {
            Part::Text { text } if text.is_empty() => {}
            Part::Text { text } => parts.push(InputPart::InputText {
                text: Cow::Borrowed(text),
            }),
            Part::Media { uri, mime_type, .. }
                if is_image(mime_type) && message.role != Role::System =>
            {
                parts.push(InputPart::InputImage {
                    image_url: uri,
                    detail: "auto",
                });
            }
            Part::Media { uri, mime_type, .. } => parts.push(InputPart::InputText {
                text: Cow::Owned(media_note(uri, mime_type)),
            }),
            Part::Native { format, json } => parts.push(InputPart::InputText {
                text: Cow::Owned(super::native_note(format, json)),
            }),
        }
    }
    (!parts.is_empty()).then_some(Content::Parts(parts))
}

/// An assistant message's text: its content and text parts joined as the SDK's
/// `output_text` joins a reply's parts; media stay visible as notes.
fn assistant_text(message: &Message) -> Cow<'_, str> {
    if message.parts.is_empty() {
        return Cow::Borrowed(&message.content);
    }
    let mut text = message.content.clone();
    for part in &message.parts {
        match part {
            Part::Text { text: part } => text.push_str(part),
            Part::Media { uri, mime_type, .. } => text.push_str(&media_note(uri, mime_type)),
            // Responses items of its own go as items (push_items), others as notes.
            Part::Native { format, .. } if format == NATIVE_OPENAI_RESPONSES => {}
            Part::Native { format, json } => text.push_str(&super::native_note(format, json)),
        }
    }
    Cow::Owned(text)
}

#[cfg(test)]
#[path = "openai_responses_tests.rs"]
mod tests;
