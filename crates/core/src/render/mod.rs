//! Renders a built request as a provider's JSON body. Pure. Each body is serialized
//! straight from the view's messages (borrowed, no intermediate JSON tree), since it is
//! rebuilt on every BuildMessages. One file per provider format; what they share (the
//! client's raw JSON objects, media notes) lives here.
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use serde_json::value::RawValue;

mod anthropic;
mod gemini;
mod openai_chat;
mod openai_responses;

pub use anthropic::{MAX_BREAKPOINTS, Stable, anthropic_messages, anthropic_messages_cached};
pub use gemini::gemini;
pub use openai_chat::openai_chat;
pub use openai_responses::openai_responses;

use crate::format::Format;
use crate::message::Message;
use crate::tokenize::ToolDefinition;

/// The body `provider` takes for a built request: the system prompt, the messages, the
/// tools, and the output reserve where the format has a field for it.
pub fn body<'a>(
    provider: Format,
    system_prompt: &'a str,
    messages: impl IntoIterator<Item = &'a Message>,
    tools: &'a [ToolDefinition],
    max_output_tokens: i64,
) -> String {
    match provider {
        Format::OpenAiChat => openai_chat(system_prompt, messages, tools),
        Format::OpenAiResponses => {
            openai_responses(system_prompt, messages, tools, max_output_tokens)
        }
        Format::AnthropicMessages => {
            anthropic_messages(system_prompt, messages, tools, max_output_tokens)
        }
        Format::Gemini => gemini(system_prompt, messages, tools, max_output_tokens),
    }
}

/// The body of a build for `provider`, as [`body`], with the provider's prompt cache
/// marked where the format needs markers (Anthropic: [`anthropic_messages_cached`]; the
/// others cache a repeated prefix on their own).
pub fn built_body<'a>(
    provider: Format,
    system_prompt: &'a str,
    messages: impl IntoIterator<Item = &'a Message>,
    tools: &'a [ToolDefinition],
    max_output_tokens: i64,
    stable: Stable,
) -> String {
    match provider {
        Format::AnthropicMessages => {
            anthropic_messages_cached(system_prompt, messages, tools, max_output_tokens, stable)
        }
        _ => body(provider, system_prompt, messages, tools, max_output_tokens),
    }
}

/// A JSON object the client gave as text (tool-call arguments, a tool's schema), emitted
/// verbatim when it is one, else as an empty object: providers want an object, and
/// validation already rejected malformed arguments and schemas.
pub(crate) enum Object<'a> {
    Raw(&'a RawValue),
    Empty,
    /// A tool without a schema: one that takes no parameters.
    NoParameters,
}

impl<'a> Object<'a> {
    pub(crate) fn parse(text: &'a str) -> Object<'a> {
        match serde_json::from_str::<&RawValue>(text) {
            Ok(raw) if raw.get().starts_with('{') => Object::Raw(raw),
            _ => Object::Empty,
        }
    }

    pub(crate) fn schema(text: &'a str) -> Object<'a> {
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

pub(crate) fn is_image(mime_type: &str) -> bool {
    mime_type.starts_with("image/")
}

/// A native part of another format, kept visible as a note.
pub(crate) fn native_note(format: &str, json: &str) -> String {
    format!(
        "[{format} {} kept by ctxd]",
        crate::message::Part::native_type(json)
    )
}

/// A media reference a provider cannot take inline, kept visible as text.
pub(crate) fn media_note(uri: &str, mime_type: &str) -> String {
    format!("[attachment {mime_type}: {uri}]")
}

pub(crate) fn serialize(body: &impl Serialize) -> String {
    serde_json::to_string(body).expect("strings, numbers and validated raw JSON serialize")
}

/// Conversations the renderers' tests share.
#[cfg(test)]
pub(crate) mod fixtures {
    use serde_json::Value;

    use crate::message::{Message, Part, Role, ToolCall};

    pub fn parse(body: String) -> Value {
        serde_json::from_str(&body).expect("the body is JSON")
    }

    pub fn roles(body: &Value) -> Vec<&str> {
        body["messages"]
            .as_array()
            .expect("messages")
            .iter()
            .map(|m| m["role"].as_str().expect("a role"))
            .collect()
    }

    pub fn conversation() -> Vec<Message> {
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

    pub fn media(uri: &str, mime_type: &str) -> Part {
        Part::Media {
            uri: uri.into(),
            mime_type: mime_type.into(),
            token_estimate: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::fixtures::{media, parse};
    use super::*;
    use crate::message::{Message, Role, ToolCall};

    #[test]
    fn images_go_where_each_provider_takes_them() {
        let mut user = Message::text(Role::User, "Look:");
        user.parts = vec![
            media("https://example.com/a.png", "image/png"),
            media("data:image/jpeg;base64,QUJD", "image/jpeg"),
            media("data:image/png,raw", "image/png"),
            media("data:image/svg+xml;base64,PHN2Zy8+", "image/svg+xml"),
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
        // Anthropic takes four media types as base64; an SVG stays a note.
        assert_eq!(blocks[4]["type"], "text");
        assert!(
            blocks[4]["text"]
                .as_str()
                .unwrap()
                .contains("image/svg+xml")
        );
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
