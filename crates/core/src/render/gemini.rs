//! Gemini generateContent: `{"systemInstruction", "contents", "tools", "generationConfig"}`.
//!
//! - Roles are `user` and `model`; consecutive contents of one role are merged (a tool
//!   result is a `user` content, so results and the user text after them make one), and
//!   in a merged `user` content the `functionResponse` parts come first, so each answers
//!   a `functionCall` of the `model` content just before it.
//! - Stored system messages join `systemInstruction` after the system prompt.
//! - An assistant message is: its reasoning as a `{"text", "thought": true}` part, its
//!   text and media, then one `functionCall` part per tool call (`id`, `name`, `args`).
//!   Thought signatures kept by AppendNative (`ctxd.gemini.thought_signatures`) go back
//!   on the part they came from (`thoughtSignature`).
//! - A tool result is a `functionResponse` part with the call's `id` and the called
//!   function's `name` (found from the call in the same view). Its `response` is the
//!   result itself when the result's text is a JSON object, else `{"output": text}`, or
//!   `{"error": text}` for a result marked failed (`ctxd.tool_error`), the keys Gemini's
//!   reference names for a function's output and error.
//! - Media: a base64 `data:` URI becomes `inlineData`, any other URI `fileData`
//!   (`fileUri`, `mimeType`); a `data:` URI that is not base64 stays visible as text, as
//!   does media in a tool result or a system message.
//! - Empty text makes no part, and a content without parts is left out.
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use serde_json::value::RawValue;

use super::{Object, media_note, serialize};
use crate::ingest::{GEMINI_TEXT_PART, GEMINI_THOUGHT_PART, GEMINI_THOUGHT_SIGNATURES, TOOL_ERROR};
use crate::media::{self, Source};
use crate::message::{Message, Part, Role};
use crate::tokenize::ToolDefinition;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GeminiBody<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    system_instruction: Option<SystemInstruction>,
    contents: Vec<Content<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<ToolGroup<'a>>,
    generation_config: GenerationConfig,
}

#[derive(Serialize)]
struct SystemInstruction {
    parts: [TextOnly; 1],
}

#[derive(Serialize)]
struct TextOnly {
    text: String,
}

#[derive(Serialize)]
struct Content<'a> {
    role: &'static str,
    parts: Vec<GeminiPart<'a>>,
}

#[derive(Serialize, Default)]
#[serde(rename_all = "camelCase")]
struct GeminiPart<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    thought: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    inline_data: Option<Blob<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    file_data: Option<FileData<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    function_call: Option<FunctionCall<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    function_response: Option<FunctionResponse<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thought_signature: Option<String>,
}

impl<'a> GeminiPart<'a> {
    fn text(text: Cow<'a, str>) -> GeminiPart<'a> {
        GeminiPart {
            text: Some(text),
            ..GeminiPart::default()
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Blob<'a> {
    mime_type: &'a str,
    data: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct FileData<'a> {
    mime_type: &'a str,
    file_uri: &'a str,
}

#[derive(Serialize)]
struct FunctionCall<'a> {
    #[serde(skip_serializing_if = "str::is_empty")]
    id: &'a str,
    name: &'a str,
    args: Object<'a>,
}

#[derive(Serialize)]
struct FunctionResponse<'a> {
    #[serde(skip_serializing_if = "str::is_empty")]
    id: &'a str,
    name: &'a str,
    response: ResponseObject<'a>,
}

/// A tool result as the object Gemini wants.
enum ResponseObject<'a> {
    /// The result's text, which is a JSON object.
    Raw(&'a RawValue),
    /// `{"output": text}` or `{"error": text}`.
    Wrapped(&'static str, Cow<'a, str>),
}

impl Serialize for ResponseObject<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ResponseObject::Raw(raw) => raw.serialize(serializer),
            ResponseObject::Wrapped(key, text) => {
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry(key, text)?;
                map.end()
            }
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ToolGroup<'a> {
    function_declarations: Vec<FunctionDeclaration<'a>>,
}

#[derive(Serialize)]
struct FunctionDeclaration<'a> {
    name: &'a str,
    description: &'a str,
    parameters: Object<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GenerationConfig {
    max_output_tokens: i64,
}

/// A Gemini generateContent body (see the module documentation for the shape).
pub fn gemini<'a>(
    system_prompt: &'a str,
    messages: impl IntoIterator<Item = &'a Message>,
    tools: &'a [ToolDefinition],
    max_output_tokens: i64,
) -> String {
    let mut system = system_prompt.to_string();
    let mut contents: Vec<Content<'a>> = Vec::new();
    let mut call_names: HashMap<&'a str, &'a str> = HashMap::new();
    for message in messages {
        let (role, parts) = match message.role {
            Role::System => {
                for text in system_texts(message) {
                    if !system.is_empty() {
                        system.push_str("\n\n");
                    }
                    system.push_str(&text);
                }
                continue;
            }
            Role::User => ("user", content_parts(message)),
            Role::Tool => ("user", vec![function_response(message, &call_names)]),
            Role::Assistant => {
                for call in &message.tool_calls {
                    call_names.insert(&call.id, &call.name);
                }
                ("model", model_parts(message))
            }
        };
        if parts.is_empty() {
            continue;
        }
        match contents.last_mut() {
            Some(last) if last.role == role => last.parts.extend(parts),
            _ => contents.push(Content { role, parts }),
        }
    }
    for content in &mut contents {
        content
            .parts
            .sort_by_key(|part| part.function_response.is_none());
    }
    let tools = if tools.is_empty() {
        Vec::new()
    } else {
        vec![ToolGroup {
            function_declarations: tools
                .iter()
                .map(|tool| FunctionDeclaration {
                    name: &tool.name,
                    description: &tool.description,
                    parameters: Object::schema(&tool.parameters_json_schema),
                })
                .collect(),
        }]
    };
    serialize(&GeminiBody {
        system_instruction: (!system.is_empty()).then_some(SystemInstruction {
            parts: [TextOnly { text: system }],
        }),
        contents,
        tools,
        generation_config: GenerationConfig { max_output_tokens },
    })
}

/// The non-empty texts of a system message, media as notes.
fn system_texts(message: &Message) -> impl Iterator<Item = Cow<'_, str>> {
    let content = (!message.content.is_empty()).then_some(Cow::Borrowed(message.content.as_str()));
    content
        .into_iter()
        .chain(message.parts.iter().filter_map(|part| match part {
            Part::Text { text } if !text.is_empty() => Some(Cow::Borrowed(text.as_str())),
            Part::Text { .. } => None,
            Part::Media { uri, mime_type, .. } => Some(Cow::Owned(media_note(uri, mime_type))),
            Part::Native { format, json } => Some(Cow::Owned(super::native_note(format, json))),
        }))
}

/// Text and media parts of a user or model message.
fn content_parts(message: &Message) -> Vec<GeminiPart<'_>> {
    let mut parts = Vec::with_capacity(message.parts.len() + 1);
    if !message.content.is_empty() {
        parts.push(GeminiPart::text(Cow::Borrowed(&message.content)));
    }
    for part in &message.parts {
        match part {
            Part::Text { text } if !text.is_empty() => {
                parts.push(GeminiPart::text(Cow::Borrowed(text)));
            }
            Part::Text { .. } => {}
            Part::Media { uri, mime_type, .. } => parts.push(media(uri, mime_type)),
            Part::Native { format, json } => parts.push(GeminiPart::text(Cow::Owned(
                super::native_note(format, json),
            ))),
        }
    }
    parts
}

fn media<'a>(uri: &'a str, mime_type: &'a str) -> GeminiPart<'a> {
    match media::source(uri, mime_type) {
        Source::Base64 { media_type, data } => GeminiPart {
            inline_data: Some(Blob {
                mime_type: media_type,
                data,
            }),
            ..GeminiPart::default()
        },
        Source::Reference(file_uri) => GeminiPart {
            file_data: Some(FileData {
                mime_type,
                file_uri,
            }),
            ..GeminiPart::default()
        },
        Source::Unsupported => GeminiPart::text(Cow::Owned(media_note(uri, mime_type))),
    }
}

/// The thought signatures an assistant message came with, by part.
fn signatures(message: &Message) -> BTreeMap<String, String> {
    message
        .metadata
        .get(GEMINI_THOUGHT_SIGNATURES)
        .and_then(|json| serde_json::from_str(json).ok())
        .unwrap_or_default()
}

fn model_parts(message: &Message) -> Vec<GeminiPart<'_>> {
    let mut signatures = signatures(message);
    let mut parts = Vec::with_capacity(message.parts.len() + message.tool_calls.len() + 2);
    if !message.reasoning.is_empty() {
        parts.push(GeminiPart {
            text: Some(Cow::Borrowed(&message.reasoning)),
            thought: true,
            thought_signature: signatures.remove(GEMINI_THOUGHT_PART),
            ..GeminiPart::default()
        });
    }
    let first_content = parts.len();
    parts.extend(content_parts(message));
    if let Some(signature) = signatures.remove(GEMINI_TEXT_PART)
        && let Some(last_text) = parts[first_content..]
            .iter_mut()
            .rev()
            .find(|part| part.text.is_some())
    {
        last_text.thought_signature = Some(signature);
    }
    for call in &message.tool_calls {
        parts.push(GeminiPart {
            function_call: Some(FunctionCall {
                id: &call.id,
                name: &call.name,
                args: Object::parse(&call.arguments),
            }),
            thought_signature: signatures.remove(&call.id),
            ..GeminiPart::default()
        });
    }
    parts
}

fn function_response<'a>(
    message: &'a Message,
    call_names: &HashMap<&'a str, &'a str>,
) -> GeminiPart<'a> {
    let name = match call_names.get(message.tool_call_id.as_str()) {
        Some(name) => name,
        None if !message.name.is_empty() => message.name.as_str(),
        None => message.tool_call_id.as_str(),
    };
    let text = tool_text(message);
    let failed = message
        .metadata
        .get(TOOL_ERROR)
        .is_some_and(|flag| flag == "true");
    let response = match text {
        Cow::Borrowed(text) if !failed => match serde_json::from_str::<&RawValue>(text) {
            Ok(raw) if raw.get().starts_with('{') => ResponseObject::Raw(raw),
            _ => ResponseObject::Wrapped("output", Cow::Borrowed(text)),
        },
        text => ResponseObject::Wrapped(if failed { "error" } else { "output" }, text),
    };
    GeminiPart {
        function_response: Some(FunctionResponse {
            id: &message.tool_call_id,
            name,
            response,
        }),
        ..GeminiPart::default()
    }
}

/// A tool result's text: its content, with any parts after it on lines of their own
/// (media as notes).
fn tool_text(message: &Message) -> Cow<'_, str> {
    if message.parts.is_empty() {
        return Cow::Borrowed(&message.content);
    }
    let mut text = message.content.clone();
    for part in &message.parts {
        if !text.is_empty() {
            text.push('\n');
        }
        match part {
            Part::Text { text: part } => text.push_str(part),
            Part::Media { uri, mime_type, .. } => text.push_str(&media_note(uri, mime_type)),
            Part::Native { format, json } => text.push_str(&super::native_note(format, json)),
        }
    }
    Cow::Owned(text)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::fixtures::{conversation, media, parse};
    use super::*;

    #[test]
    fn gemini_body_alternates_roles_and_answers_calls_by_name() {
        let tools = [ToolDefinition {
            name: "bash".into(),
            description: "Run".into(),
            parameters_json_schema: String::new(),
        }];
        let body = parse(gemini("Be brief.", &conversation(), &tools, 512));
        assert_eq!(
            body["systemInstruction"],
            json!({"parts": [{"text": "Be brief."}]})
        );
        let contents = body["contents"].as_array().unwrap();
        let roles: Vec<&str> = contents
            .iter()
            .map(|c| c["role"].as_str().unwrap())
            .collect();
        assert_eq!(roles, ["user", "model", "user", "model"]);
        assert_eq!(
            contents[1]["parts"],
            json!([
                {"text": "Let me look."},
                {"functionCall": {"id": "a", "name": "bash", "args": {"command": "ls"}}},
                {"functionCall": {"id": "b", "name": "bash", "args": {"command": "pwd"}}}
            ])
        );
        assert_eq!(
            contents[2]["parts"],
            json!([
                {"functionResponse": {"id": "a", "name": "bash", "response": {"output": "file.txt"}}},
                {"functionResponse": {"id": "b", "name": "bash", "response": {"output": "/work"}}},
                {"text": "And then?"}
            ])
        );
        assert_eq!(
            body["tools"],
            json!([{"functionDeclarations": [{"name": "bash", "description": "Run",
                "parameters": {"type": "object", "properties": {}}}]}])
        );
        assert_eq!(body["generationConfig"], json!({"maxOutputTokens": 512}));
    }

    #[test]
    fn gemini_puts_back_thoughts_signatures_media_and_errors() {
        let mut system = Message::text(Role::System, "Rules.");
        system.parts = vec![media("https://example.com/x.pdf", "application/pdf")];
        let mut user = Message::text(Role::User, "");
        user.parts = vec![
            media("data:image/png;base64,QUJD", "image/png"),
            media("gs://bucket/a.jpg", "image/jpeg"),
            media("data:text/plain,hi", "text/plain"),
        ];
        let mut model = Message::text(Role::Assistant, "Sure.");
        model.reasoning = "Think.".into();
        model.tool_calls = vec![crate::message::ToolCall {
            id: "c1".into(),
            name: "read".into(),
            arguments: String::new(),
        }];
        model.metadata.insert(
            GEMINI_THOUGHT_SIGNATURES.into(),
            r#"{"c1": "s1", "text": "s2", "thought": "s3"}"#.into(),
        );
        let mut failed = Message::text(Role::Tool, "no such file");
        failed.tool_call_id = "c1".into();
        failed.metadata.insert(TOOL_ERROR.into(), "true".into());
        let messages = [system, user, model, failed];
        let body = parse(gemini("", &messages, &[], 10));
        assert_eq!(
            body["systemInstruction"]["parts"][0]["text"],
            "Rules.\n\n[attachment application/pdf: https://example.com/x.pdf]"
        );
        let contents = body["contents"].as_array().unwrap();
        assert_eq!(
            contents[0]["parts"],
            json!([
                {"inlineData": {"mimeType": "image/png", "data": "QUJD"}},
                {"fileData": {"mimeType": "image/jpeg", "fileUri": "gs://bucket/a.jpg"}},
                {"text": "[attachment text/plain: data:text/plain,hi]"}
            ])
        );
        assert_eq!(
            contents[1]["parts"],
            json!([
                {"text": "Think.", "thought": true, "thoughtSignature": "s3"},
                {"text": "Sure.", "thoughtSignature": "s2"},
                {"functionCall": {"id": "c1", "name": "read", "args": {}}, "thoughtSignature": "s1"}
            ])
        );
        assert_eq!(
            contents[2]["parts"][0]["functionResponse"]["response"],
            json!({"error": "no such file"})
        );
    }

    #[test]
    fn gemini_sends_a_json_object_result_as_the_response_and_drops_empty_contents() {
        let mut call = Message::text(Role::Assistant, "");
        call.tool_calls = vec![crate::message::ToolCall {
            id: "j".into(),
            name: "stat".into(),
            arguments: "{}".into(),
        }];
        let mut result = Message::text(Role::Tool, r#"{"size": 3}"#);
        result.tool_call_id = "j".into();
        let messages = [
            Message::text(Role::User, ""),
            Message::text(Role::User, "Go"),
            call,
            result,
        ];
        let body = parse(gemini("", &messages, &[], 10));
        assert!(body.get("systemInstruction").is_none());
        assert!(body.get("tools").is_none());
        let contents = body["contents"].as_array().unwrap();
        assert_eq!(contents.len(), 3);
        assert_eq!(contents[0]["parts"], json!([{"text": "Go"}]));
        assert_eq!(
            contents[2]["parts"][0]["functionResponse"],
            json!({"id": "j", "name": "stat", "response": {"size": 3}})
        );
    }
}
