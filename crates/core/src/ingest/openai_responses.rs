//! OpenAI Responses: a `Response` object and an array of input items.
//!
//! A reply's `output` items (a `reasoning` item, `message` items, `function_call`
//! items) become one assistant message: the message texts joined (as the SDK's
//! `output_text` joins them; a refusal counts as text), the reasoning summaries joined
//! by blank lines as its reasoning, with the reasoning item's id and encrypted content
//! kept in the `ctxd.openai.*` metadata so the next request sends the item back. A reply
//! with two reasoning items, or with hosted-tool items (web search, code interpreter...),
//! is refused. The same assistant-side items in `items_json` (a client replaying
//! `response.output` into its input list) are read the same way, one assistant message
//! per run of consecutive items.
use std::collections::HashSet;

use serde_json::Value;

use super::json::{
    self, Object, arguments, array, at, expect, field, index, non_empty, object, optional_string,
    quoted, required, required_string,
};
use super::{
    IngestError, Ingested, NATIVE_OPENAI_RESPONSES, OPENAI_CUSTOM_TOOL_CALLS,
    OPENAI_CUSTOM_TOOL_OUTPUT, OPENAI_REASONING_ENCRYPTED, OPENAI_REASONING_ID, openai_chat,
};
use crate::media::image_type;
use crate::message::{Message, Part, Role, ToolCall};

pub(super) fn response(json: &str) -> Result<Ingested, IngestError> {
    let root = json::parse(json, "an OpenAI Response")?;
    let body = object(&root, "$")?;
    expect(body, "object", "response", "$")?;
    if let Some(status) = optional_string(body, "status", "$")?
        && matches!(status, "failed" | "cancelled" | "queued" | "in_progress")
    {
        return Err(IngestError::new(
            "$.status",
            format!(
                "is {}: only a finished response (completed or incomplete) holds a reply",
                quoted(status)
            ),
        ));
    }
    let output = array(required(body, "output", "$")?, "$.output")?;
    let mut reply = Reply::new("$.output");
    for (position, item) in output.iter().enumerate() {
        let path = index("$.output", position);
        let map = object(item, &path)?;
        let kind = required_string(map, "type", &path)?;
        reply.read(kind, map, &path)?;
    }
    let message = reply.finish()?;
    let usage = field(body, "usage")
        .map(|value| {
            openai_chat::usage(
                value,
                "$.usage",
                ["input_tokens", "output_tokens", "input_tokens_details"],
            )
        })
        .transpose()?;
    Ok(Ingested {
        messages: vec![message],
        paths: vec!["$.output".to_string()],
        usage,
    })
}

pub(super) fn items(json: &str) -> Result<Ingested, IngestError> {
    let root = json::parse(json, "a JSON array of OpenAI Responses input items")?;
    let items = json::item_array(&root)?;
    let mut read = Ingested::default();
    let mut reply: Option<Reply> = None;
    for (position, item) in items.iter().enumerate() {
        let path = index("$", position);
        let map = object(item, &path)?;
        // Without a type: the easy form, `{"role": "user", "content": "..."}`.
        let kind = optional_string(map, "type", &path)?.unwrap_or("message");
        let role = optional_string(map, "role", &path)?;
        // What is not a user, system or developer message or a tool's output is the
        // assistant's side (reasoning, calls, hosted tools' items), kept with its reply.
        let assistant_side = match kind {
            "message" => role == Some("assistant"),
            "function_call_output" | "custom_tool_call_output" => false,
            _ => true,
        };
        if assistant_side {
            reply
                .get_or_insert_with(|| Reply::new(&path))
                .read(kind, map, &path)?;
            continue;
        }
        if let Some(done) = reply.take() {
            read.paths.push(done.path.clone());
            read.messages.push(done.finish()?);
        }
        read.messages.push(input_item(kind, map, &path)?);
        read.paths.push(path);
    }
    if let Some(done) = reply {
        read.paths.push(done.path.clone());
        read.messages.push(done.finish()?);
    }
    Ok(read)
}

/// A user, system or developer message, or a function call's output.
fn input_item(kind: &str, map: &Object, path: &str) -> Result<Message, IngestError> {
    match kind {
        "function_call_output" | "custom_tool_call_output" => {
            let mut message = Message::text(Role::Tool, "");
            message.tool_call_id = non_empty(map, "call_id", path)?.to_string();
            content(map, "output", path, &mut message)?;
            if kind == "custom_tool_call_output" {
                message
                    .metadata
                    .insert(OPENAI_CUSTOM_TOOL_OUTPUT.to_string(), "true".to_string());
            }
            Ok(message)
        }
        "message" => {
            let name = required_string(map, "role", path)?;
            let mut message = match name {
                "user" => Message::text(Role::User, ""),
                "system" | "developer" => super::openai_system(name),
                other => {
                    return Err(IngestError::new(
                        at(path, "role"),
                        format!(
                            "is {}: a message's role is user, system, developer or assistant",
                            quoted(other)
                        ),
                    ));
                }
            };
            content(map, "content", path, &mut message)?;
            Ok(message)
        }
        other => Err(IngestError::new(
            at(path, "type"),
            format!(
                "is {}: ctxd reads message, function_call_output, function_call and \
                 reasoning items (hosted tools and item references are not kept)",
                quoted(other)
            ),
        )),
    }
}

/// A string, or an array of `input_text` / `input_image` parts.
fn content(map: &Object, key: &str, path: &str, message: &mut Message) -> Result<(), IngestError> {
    let path = at(path, key);
    match map.get(key) {
        None => Err(IngestError::new(path, "is missing")),
        Some(Value::String(text)) => {
            message.content = text.clone();
            Ok(())
        }
        Some(Value::Array(parts)) => {
            for (position, part) in parts.iter().enumerate() {
                message
                    .parts
                    .push(input_part(part, &index(&path, position), message.role)?);
            }
            Ok(())
        }
        Some(other) => Err(IngestError::new(
            path,
            format!(
                "must be a string or an array of content parts, got {}",
                json::describe(other)
            ),
        )),
    }
}

fn input_part(part: &Value, path: &str, role: Role) -> Result<Part, IngestError> {
    let map = object(part, path)?;
    match required_string(map, "type", path)? {
        "input_text" => Ok(Part::Text {
            text: required_string(map, "text", path)?.to_string(),
        }),
        "input_image" if role != Role::System => {
            if field(map, "image_url").is_none() && field(map, "file_id").is_some() {
                return Err(IngestError::new(
                    at(path, "file_id"),
                    "images by file id are not kept: send the image_url (a URL or a data: URI)",
                ));
            }
            let url = non_empty(map, "image_url", path)?;
            Ok(Part::Media {
                uri: url.to_string(),
                mime_type: image_type(url),
                token_estimate: 0,
            })
        }
        "input_image" => Err(IngestError::new(
            at(path, "type"),
            "an image belongs in a user message or a function call's output",
        )),
        other => Err(IngestError::new(
            at(path, "type"),
            format!(
                "is {}: ctxd reads input_text and input_image parts (files and audio are \
                 not kept)",
                quoted(other)
            ),
        )),
    }
}

/// The assistant-side items of one reply, gathered into one message.
struct Reply {
    path: String,
    message: Message,
    call_ids: HashSet<String>,
    reasoning_seen: bool,
}

impl Reply {
    fn new(path: &str) -> Reply {
        Reply {
            path: path.to_string(),
            message: Message::text(Role::Assistant, ""),
            call_ids: HashSet::new(),
            reasoning_seen: false,
        }
    }

    fn read(&mut self, kind: &str, map: &Object, path: &str) -> Result<(), IngestError> {
        match kind {
            "reasoning" => self.reasoning(map, path),
            "message" => self.text(map, path),
            "function_call" => self.function_call(map, path),
            "custom_tool_call" => self.custom_tool_call(map, path),
            // A hosted tool's item, and whatever else ctxd does not model: kept whole.
            _ => {
                self.message.parts.push(Part::Native {
                    format: NATIVE_OPENAI_RESPONSES.to_string(),
                    json: Value::Object(map.clone()).to_string(),
                });
                Ok(())
            }
        }
    }

    fn reasoning(&mut self, map: &Object, path: &str) -> Result<(), IngestError> {
        if self.reasoning_seen {
            return Err(IngestError::new(
                path,
                "is a second reasoning item in one reply: ctxd keeps one per reply",
            ));
        }
        self.reasoning_seen = true;
        let item_id = non_empty(map, "id", path)?;
        let mut summaries = Vec::new();
        let summary_path = at(path, "summary");
        for (position, part) in array(required(map, "summary", path)?, &summary_path)?
            .iter()
            .enumerate()
        {
            let part_path = index(&summary_path, position);
            let part = object(part, &part_path)?;
            expect(part, "type", "summary_text", &part_path)?;
            summaries.push(required_string(part, "text", &part_path)?);
        }
        self.message.reasoning = summaries.join("\n\n");
        let metadata = &mut self.message.metadata;
        metadata.insert(OPENAI_REASONING_ID.to_string(), item_id.to_string());
        if let Some(encrypted) = optional_string(map, "encrypted_content", path)? {
            metadata.insert(
                OPENAI_REASONING_ENCRYPTED.to_string(),
                encrypted.to_string(),
            );
        }
        Ok(())
    }

    fn text(&mut self, map: &Object, path: &str) -> Result<(), IngestError> {
        expect(map, "role", "assistant", path)?;
        let content_path = at(path, "content");
        match required(map, "content", path)? {
            // An assistant message given back in the easy form.
            Value::String(text) => self.message.content.push_str(text),
            other => {
                for (position, part) in array(other, &content_path)?.iter().enumerate() {
                    let part_path = index(&content_path, position);
                    let part = object(part, &part_path)?;
                    let key = match required_string(part, "type", &part_path)? {
                        "output_text" | "input_text" => "text",
                        "refusal" => "refusal",
                        kind => {
                            return Err(IngestError::new(
                                at(&part_path, "type"),
                                format!(
                                    "is {}: an assistant message holds output_text and \
                                     refusal parts",
                                    quoted(kind)
                                ),
                            ));
                        }
                    };
                    self.message
                        .content
                        .push_str(required_string(part, key, &part_path)?);
                }
            }
        }
        Ok(())
    }

    /// A call's id, refused when an earlier call of the reply has it.
    fn call_id<'m>(&mut self, map: &'m Object, path: &str) -> Result<&'m str, IngestError> {
        let call_id = non_empty(map, "call_id", path)?;
        if !self.call_ids.insert(call_id.to_string()) {
            return Err(IngestError::new(
                at(path, "call_id"),
                format!("{} is used by an earlier call", quoted(call_id)),
            ));
        }
        Ok(call_id)
    }

    fn function_call(&mut self, map: &Object, path: &str) -> Result<(), IngestError> {
        let call_id = self.call_id(map, path)?;
        let name = non_empty(map, "name", path)?;
        let text = required_string(map, "arguments", path)?;
        arguments(text, &at(path, "arguments"))?;
        self.message.tool_calls.push(ToolCall {
            id: call_id.to_string(),
            name: name.to_string(),
            arguments: text.to_string(),
        });
        Ok(())
    }

    /// A custom (freeform) tool's call: its text input kept as `{"input": ...}`, its id
    /// listed in [`OPENAI_CUSTOM_TOOL_CALLS`].
    fn custom_tool_call(&mut self, map: &Object, path: &str) -> Result<(), IngestError> {
        let call_id = self.call_id(map, path)?;
        let input = required_string(map, "input", path)?;
        self.message.tool_calls.push(ToolCall {
            id: call_id.to_string(),
            name: non_empty(map, "name", path)?.to_string(),
            arguments: serde_json::json!({ "input": input }).to_string(),
        });
        let metadata = &mut self.message.metadata;
        let mut ids: Vec<String> = metadata
            .get(OPENAI_CUSTOM_TOOL_CALLS)
            .and_then(|ids| serde_json::from_str(ids).ok())
            .unwrap_or_default();
        ids.push(call_id.to_string());
        metadata.insert(
            OPENAI_CUSTOM_TOOL_CALLS.to_string(),
            serde_json::to_string(&ids).unwrap_or_default(),
        );
        Ok(())
    }

    fn finish(self) -> Result<Message, IngestError> {
        if !self.message.has_content() && self.message.tool_calls.is_empty() {
            return Err(IngestError::new(
                self.path,
                "the reply holds no message text, refusal or function call to append",
            ));
        }
        Ok(self.message)
    }
}

#[cfg(test)]
#[path = "openai_responses_tests.rs"]
mod tests;
