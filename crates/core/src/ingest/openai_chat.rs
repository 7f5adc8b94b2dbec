//! OpenAI Chat Completions: a `ChatCompletion` response and an array of Chat messages.
//!
//! A response with several choices (`n > 1`) appends its first choice, `choices[0]`:
//! the conversation goes on with one reply. To keep another, send the body with that
//! choice alone. A refusal (`message.refusal`) is kept as the reply's content when the
//! reply has no other content.
use serde_json::Value;

use super::json::{
    self, Object, arguments, array, at, describe, expect, field, index, non_empty, object,
    optional_string, quoted, required, required_count, required_string,
};
use super::{IngestError, Ingested};
use crate::media::image_type;
use crate::message::{Message, Part, Role, ToolCall, Usage};

pub(super) fn response(json: &str) -> Result<Ingested, IngestError> {
    let root = json::parse(json, "an OpenAI ChatCompletion")?;
    let body = object(&root, "$")?;
    if let Some(kind) = optional_string(body, "object", "$")?
        && kind != "chat.completion"
    {
        return Err(IngestError::new(
            "$.object",
            format!(
                "is {}, not \"chat.completion\": send the whole ChatCompletion (a \
                 stream's chunks joined into one)",
                quoted(kind)
            ),
        ));
    }
    let choices = array(required(body, "choices", "$")?, "$.choices")?;
    let Some(first) = choices.first() else {
        return Err(IngestError::new(
            "$.choices",
            "is empty: the response holds no reply to append",
        ));
    };
    let choice = object(first, "$.choices[0]")?;
    let path = "$.choices[0].message";
    let message = assistant(
        object(required(choice, "message", "$.choices[0]")?, path)?,
        path,
    )?;
    let usage = field(body, "usage")
        .map(|value| {
            usage(
                value,
                "$.usage",
                [
                    "prompt_tokens",
                    "completion_tokens",
                    "prompt_tokens_details",
                ],
            )
        })
        .transpose()?;
    Ok(Ingested {
        messages: vec![message],
        paths: vec![path.to_string()],
        usage,
    })
}

pub(super) fn items(json: &str) -> Result<Ingested, IngestError> {
    let root = json::parse(json, "a JSON array of OpenAI Chat messages")?;
    let items = json::item_array(&root)?;
    let mut read = Ingested::default();
    for (position, item) in items.iter().enumerate() {
        let path = index("$", position);
        read.messages.push(item_message(item, &path)?);
        read.paths.push(path);
    }
    Ok(read)
}

fn item_message(item: &Value, path: &str) -> Result<Message, IngestError> {
    let map = object(item, path)?;
    let role = required_string(map, "role", path)?;
    let mut message = match role {
        "assistant" => return assistant(map, path),
        "user" => Message::text(Role::User, ""),
        "system" | "developer" => super::openai_system(role),
        "tool" => {
            let mut message = Message::text(Role::Tool, "");
            message.tool_call_id = non_empty(map, "tool_call_id", path)?.to_string();
            message
        }
        "function" => {
            return Err(IngestError::new(
                at(path, "role"),
                "\"function\" messages are deprecated and carry no call id: send tool \
                 results as role \"tool\" with a tool_call_id",
            ));
        }
        other => {
            return Err(IngestError::new(
                at(path, "role"),
                format!(
                    "is {}: a Chat message's role is user, system, developer, assistant \
                     or tool",
                    quoted(other)
                ),
            ));
        }
    };
    content(map, path, &mut message)?;
    if message.role != Role::Tool
        && let Some(name) = optional_string(map, "name", path)?
    {
        message.name = name.to_string();
    }
    Ok(message)
}

/// A message's `content`: a string, or an array of parts (text; images in user messages).
fn content(map: &Object, path: &str, message: &mut Message) -> Result<(), IngestError> {
    let path = at(path, "content");
    let Some(value) = map.get("content") else {
        return Err(IngestError::new(path, "is missing"));
    };
    match value {
        Value::String(text) => message.content = text.clone(),
        Value::Array(parts) => {
            for (position, part) in parts.iter().enumerate() {
                let part_path = index(&path, position);
                message
                    .parts
                    .push(content_part(part, &part_path, message.role)?);
            }
        }
        other => {
            return Err(IngestError::new(
                path,
                format!(
                    "must be a string or an array of content parts, got {}",
                    describe(other)
                ),
            ));
        }
    }
    Ok(())
}

fn content_part(part: &Value, path: &str, role: Role) -> Result<Part, IngestError> {
    let map = object(part, path)?;
    match required_string(map, "type", path)? {
        "text" => Ok(Part::Text {
            text: required_string(map, "text", path)?.to_string(),
        }),
        "image_url" if role == Role::User => {
            let image_path = at(path, "image_url");
            let image = object(required(map, "image_url", path)?, &image_path)?;
            let url = non_empty(image, "url", &image_path)?;
            Ok(Part::Media {
                uri: url.to_string(),
                mime_type: image_type(url),
                token_estimate: 0,
            })
        }
        // An assistant message given back with its refusal as a part.
        "refusal" if role == Role::Assistant => Ok(Part::Text {
            text: required_string(map, "refusal", path)?.to_string(),
        }),
        "image_url" => Err(IngestError::new(
            at(path, "type"),
            format!(
                "an image part belongs in a user message, not a {} one",
                role.as_str()
            ),
        )),
        other => Err(IngestError::new(
            at(path, "type"),
            format!(
                "is {}: ctxd reads text and image_url parts (audio and file parts are not \
                 kept)",
                quoted(other)
            ),
        )),
    }
}

/// An assistant message: a response's `choices[0].message`, or one in the items.
fn assistant(map: &Object, path: &str) -> Result<Message, IngestError> {
    expect(map, "role", "assistant", path)?;
    let mut message = Message::text(Role::Assistant, "");
    if field(map, "content").is_some() {
        content(map, path, &mut message)?;
    }
    if let Some(refusal) = optional_string(map, "refusal", path)?
        && !message.has_content()
    {
        message.content = refusal.to_string();
    }
    if let Some(reasoning) = optional_string(map, "reasoning_content", path)? {
        message.reasoning = reasoning.to_string();
    }
    if let Some(name) = optional_string(map, "name", path)? {
        message.name = name.to_string();
    }
    for unsupported in ["function_call", "audio"] {
        if field(map, unsupported).is_some() {
            return Err(IngestError::new(
                at(path, unsupported),
                "is not supported: ctxd reads text, reasoning and tool_calls replies",
            ));
        }
    }
    if let Some(calls) = field(map, "tool_calls") {
        let calls_path = at(path, "tool_calls");
        for (position, call) in array(calls, &calls_path)?.iter().enumerate() {
            message
                .tool_calls
                .push(tool_call(call, &index(&calls_path, position))?);
        }
    }
    if !message.has_content() && message.tool_calls.is_empty() {
        return Err(IngestError::new(
            at(path, "content"),
            "the reply holds no content, refusal or tool calls to append",
        ));
    }
    Ok(message)
}

fn tool_call(call: &Value, path: &str) -> Result<ToolCall, IngestError> {
    let map = object(call, path)?;
    expect(map, "type", "function", path)?;
    let call_id = non_empty(map, "id", path)?;
    let function_path = at(path, "function");
    let function = object(required(map, "function", path)?, &function_path)?;
    let name = non_empty(function, "name", &function_path)?;
    let text = required_string(function, "arguments", &function_path)?;
    arguments(text, &at(&function_path, "arguments"))?;
    Ok(ToolCall {
        id: call_id.to_string(),
        name: name.to_string(),
        arguments: text.to_string(),
    })
}

/// An OpenAI usage object: Chat's keys are `prompt_tokens`, `completion_tokens` and
/// `prompt_tokens_details` (whose `cached_tokens` is the cached part), the Responses
/// API's `input_tokens`, `output_tokens` and `input_tokens_details`.
pub(super) fn usage(
    value: &Value,
    path: &str,
    [input, output, details]: [&str; 3],
) -> Result<Usage, IngestError> {
    let map = object(value, path)?;
    let cached = match field(map, details) {
        Some(details_value) => {
            let details_path = at(path, details);
            json::count(
                object(details_value, &details_path)?,
                "cached_tokens",
                &details_path,
            )?
            .unwrap_or(0)
        }
        None => 0,
    };
    Ok(Usage {
        input_tokens: required_count(map, input, path)?,
        output_tokens: required_count(map, output, path)?,
        cached_input_tokens: cached,
    })
}

#[cfg(test)]
#[path = "openai_chat_tests.rs"]
mod tests;
