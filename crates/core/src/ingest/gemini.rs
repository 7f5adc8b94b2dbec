//! Gemini generateContent: a `GenerateContentResponse` and request `contents`.
//!
//! - The response's message is `candidates[0].content`: `text` parts its text (the first
//!   the content, any more text parts), `thought: true` parts its reasoning,
//!   `functionCall` parts its tool calls (`args` as JSON text), `inlineData` / `fileData`
//!   its media. Each `thoughtSignature` is kept in [`GEMINI_THOUGHT_SIGNATURES`] under
//!   the part it was on (the call's id, `"text"`, `"thought"`).
//! - A `functionCall` without an `id` gets one, since ctxd joins calls and results by
//!   id: `gemini-<responseId>-<part index>`, or, when the response has no usable
//!   `responseId`, `gemini-<FNV-1a hash of the body, 16 hex digits>-<part index>`
//!   (`gemini-<hash of the items>-<content index>-<part index>` for a `model` content in
//!   the items). ctxd's GEMINI body carries it as `functionCall.id`.
//! - In the items, a `user` content's `functionResponse` parts become tool messages.
//!   One without an `id` answers the first call of its `name` not yet answered among
//!   the response sent in the same request and the items' own `model` contents;
//!   otherwise it must carry the call's id (the model's, or the one ctxd gave it).
//!   `{"output": X}` is read as the result X, `{"error": X}` as X marked failed
//!   ([`TOOL_ERROR`]), any other response object as its JSON text.
//!
//! Usage: `promptTokenCount + toolUsePromptTokenCount` is the prompt,
//! `cachedContentTokenCount` its cached part, `candidatesTokenCount +
//! thoughtsTokenCount` the output.
use std::collections::{BTreeMap, HashSet};

use serde_json::Value;

use super::json::{
    self, Object, array, count, flag, non_empty, object, optional_string, quoted, required,
    required_string, string,
};
use super::{
    GEMINI_TEXT_PART, GEMINI_THOUGHT_PART, GEMINI_THOUGHT_SIGNATURES, IngestError, Ingested,
    TOOL_ERROR, add_text,
};
use crate::media::data_uri;
use crate::message::{Message, Part, Role, ToolCall, Usage};

/// The longest `responseId` used as is in a made-up call id.
const MAX_RESPONSE_ID_CHARS: usize = 64;

pub(super) fn response(json: &str) -> Result<Ingested, IngestError> {
    let root = json::parse(json, "a Gemini GenerateContentResponse")?;
    let body = object(&root, "$")?;
    let candidates = match body.get("candidates") {
        None | Some(Value::Null) => {
            let blocked = body
                .get("promptFeedback")
                .and_then(|feedback| feedback.get("blockReason"))
                .and_then(Value::as_str)
                .map(|reason| format!(" (the prompt was blocked: {})", quoted(reason)))
                .unwrap_or_default();
            return Err(IngestError::new(
                "$.candidates",
                format!("is missing{blocked}; there is no model message to append"),
            ));
        }
        Some(candidates) => array(candidates, "$.candidates")?,
    };
    let Some(candidate) = candidates.first() else {
        return Err(IngestError::new(
            "$.candidates",
            "is empty; there is no model message to append",
        ));
    };
    let candidate = object(candidate, "$.candidates[0]")?;
    let Some(content) = candidate
        .get("content")
        .filter(|content| !content.is_null())
    else {
        let reason = optional_string(candidate, "finishReason", "$.candidates[0]")?
            .map(|reason| format!(" (finishReason {})", quoted(reason)))
            .unwrap_or_default();
        return Err(IngestError::new(
            "$.candidates[0].content",
            format!("is missing{reason}; there is no model message to append"),
        ));
    };
    let id_base = match optional_string(body, "responseId", "$")? {
        Some(id) if usable_id(id) => id.to_string(),
        _ => hash(json),
    };
    let path = "$.candidates[0].content";
    let message = model(object(content, path)?, path, &id_base)?;
    let usage = match body.get("usageMetadata") {
        None | Some(Value::Null) => None,
        Some(usage) => Some(read_usage(object(usage, "$.usageMetadata")?)?),
    };
    Ok(Ingested {
        messages: vec![message],
        paths: vec![path.into()],
        usage,
    })
}

fn usable_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_RESPONSE_ID_CHARS
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// FNV-1a over the body: a stable stand-in for a missing responseId.
fn hash(json: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in json.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{hash:016x}")
}

fn read_usage(usage: &Object) -> Result<Usage, IngestError> {
    let count = |key| Ok::<_, IngestError>(count(usage, key, "$.usageMetadata")?.unwrap_or(0));
    Ok(Usage {
        input_tokens: count("promptTokenCount")?.saturating_add(count("toolUsePromptTokenCount")?),
        output_tokens: count("candidatesTokenCount")?.saturating_add(count("thoughtsTokenCount")?),
        cached_input_tokens: count("cachedContentTokenCount")?,
    })
}

fn parts_of<'a>(content: &'a Object, path: &str) -> Result<&'a [Value], IngestError> {
    match content.get("parts") {
        None | Some(Value::Null) => Ok(&[]),
        Some(parts) => array(parts, &format!("{path}.parts")),
    }
}

/// A `model` content as an assistant message; calls without an id get
/// `gemini-<id_base>-<part index>`.
fn model(content: &Object, path: &str, id_base: &str) -> Result<Message, IngestError> {
    if let Some(role) = optional_string(content, "role", path)?
        && role != "model"
    {
        return Err(IngestError::new(
            format!("{path}.role"),
            format!(
                "is {}; the model's content has role \"model\"",
                quoted(role)
            ),
        ));
    }
    let mut message = Message::text(Role::Assistant, "");
    let mut signatures = BTreeMap::new();
    for (index, part) in parts_of(content, path)?.iter().enumerate() {
        let path = format!("{path}.parts[{index}]");
        let part = object(part, &path)?;
        let signature = optional_string(part, "thoughtSignature", &path)?;
        let key = if let Some(text) = part.get("text") {
            let text = string(text, &format!("{path}.text"))?;
            if flag(part, "thought", &path)? {
                if !message.reasoning.is_empty() && !text.is_empty() {
                    message.reasoning.push_str("\n\n");
                }
                message.reasoning.push_str(text);
                GEMINI_THOUGHT_PART.to_string()
            } else {
                if !text.is_empty() {
                    add_text(&mut message, text);
                }
                GEMINI_TEXT_PART.to_string()
            }
        } else if let Some(call) = part.get("functionCall") {
            let call_path = format!("{path}.functionCall");
            let call = object(call, &call_path)?;
            let id = match optional_string(call, "id", &call_path)? {
                Some(id) if !id.is_empty() => id.to_string(),
                _ => format!("gemini-{id_base}-{index}"),
            };
            let arguments = match call.get("args") {
                None | Some(Value::Null) => "{}".to_string(),
                Some(args) => {
                    object(args, &format!("{call_path}.args"))?;
                    args.to_string()
                }
            };
            message.tool_calls.push(ToolCall {
                id: id.clone(),
                name: non_empty(call, "name", &call_path)?.into(),
                arguments,
            });
            id
        } else if let Some(media) = media(part, &path)? {
            message.parts.push(media);
            continue;
        } else {
            return Err(unknown_part(
                &path,
                part,
                "text, functionCall, inlineData or fileData",
            ));
        };
        if let Some(signature) = signature.filter(|signature| !signature.is_empty()) {
            signatures.insert(key, signature.to_string());
        }
    }
    if !signatures.is_empty() {
        message.metadata.insert(
            GEMINI_THOUGHT_SIGNATURES.into(),
            serde_json::to_string(&signatures).unwrap_or_default(),
        );
    }
    Ok(message)
}

fn unknown_part(path: &str, part: &Object, known: &str) -> IngestError {
    let keys: Vec<String> = part.keys().take(4).map(|key| quoted(key)).collect();
    IngestError::new(
        path,
        format!(
            "holds {}; ctxd reads {known} parts here",
            if keys.is_empty() {
                "no data".to_string()
            } else {
                keys.join(", ")
            }
        ),
    )
}

/// An `inlineData` or `fileData` part as media; `None` for a part that is neither.
fn media(part: &Object, path: &str) -> Result<Option<Part>, IngestError> {
    if let Some(blob) = part.get("inlineData") {
        let blob_path = format!("{path}.inlineData");
        let blob = object(blob, &blob_path)?;
        let mime_type = non_empty(blob, "mimeType", &blob_path)?;
        let data = required_string(blob, "data", &blob_path)?;
        return Ok(Some(Part::Media {
            uri: data_uri(mime_type, data),
            mime_type: mime_type.into(),
            token_estimate: 0,
        }));
    }
    if let Some(file) = part.get("fileData") {
        let file_path = format!("{path}.fileData");
        let file = object(file, &file_path)?;
        return Ok(Some(Part::Media {
            uri: non_empty(file, "fileUri", &file_path)?.into(),
            mime_type: optional_string(file, "mimeType", &file_path)?
                .filter(|mime_type| !mime_type.is_empty())
                .unwrap_or("application/octet-stream")
                .into(),
            token_estimate: 0,
        }));
    }
    Ok(None)
}

/// The calls a functionResponse without an id may answer, in order.
struct OpenCalls {
    calls: Vec<(String, String)>,
    answered: HashSet<String>,
}

impl OpenCalls {
    fn take(&mut self, name: &str) -> Option<String> {
        let (id, _) = self
            .calls
            .iter()
            .find(|(id, call)| call == name && !self.answered.contains(id))?;
        let id = id.clone();
        self.answered.insert(id.clone());
        Some(id)
    }
}

pub(super) fn items(json: &str, response: &[Message]) -> Result<Ingested, IngestError> {
    let root = json::parse(json, "a JSON array of Gemini contents")?;
    let mut open = OpenCalls {
        calls: response
            .iter()
            .flat_map(|message| &message.tool_calls)
            .map(|call| (call.id.clone(), call.name.clone()))
            .collect(),
        answered: HashSet::new(),
    };
    let mut out = Ingested::default();
    let mut items_hash = None;
    for (index, content) in array(&root, "$")?.iter().enumerate() {
        let path = format!("$[{index}]");
        let content = object(content, &path)?;
        match required_string(content, "role", &path)? {
            "model" => {
                let base = format!("{}-{index}", items_hash.get_or_insert_with(|| hash(json)));
                let message = model(content, &path, &base)?;
                open.calls.extend(
                    message
                        .tool_calls
                        .iter()
                        .map(|call| (call.id.clone(), call.name.clone())),
                );
                out.messages.push(message);
                out.paths.push(path);
            }
            "user" => user(&mut out, content, &path, &mut open)?,
            other => {
                return Err(IngestError::new(
                    format!("{path}.role"),
                    format!("is {}; Gemini contents are user or model", quoted(other)),
                ));
            }
        }
    }
    Ok(out)
}

/// A `user` content: its `functionResponse` parts become tool messages, the text and
/// media around them user messages, in order.
fn user(
    out: &mut Ingested,
    content: &Object,
    path: &str,
    open: &mut OpenCalls,
) -> Result<(), IngestError> {
    let parts = parts_of(content, path)?;
    if parts.is_empty() {
        return Err(IngestError::new(
            format!("{path}.parts"),
            "is missing or empty; a user content needs at least one part",
        ));
    }
    let mut pending = Message::text(Role::User, "");
    let mut pending_path = String::new();
    for (index, part) in parts.iter().enumerate() {
        let part_path = format!("{path}.parts[{index}]");
        let part = object(part, &part_path)?;
        if let Some(response) = part.get("functionResponse") {
            if pending.has_content() {
                out.messages.push(std::mem::replace(
                    &mut pending,
                    Message::text(Role::User, ""),
                ));
                out.paths.push(std::mem::take(&mut pending_path));
            }
            let response_path = format!("{part_path}.functionResponse");
            out.messages.push(function_response(
                object(response, &response_path)?,
                &response_path,
                open,
            )?);
            out.paths.push(part_path);
            continue;
        }
        if !pending.has_content() {
            pending_path = part_path.clone();
        }
        if let Some(text) = part.get("text") {
            let text = string(text, &format!("{part_path}.text"))?;
            if !text.is_empty() {
                add_text(&mut pending, text);
            }
        } else if let Some(media) = media(part, &part_path)? {
            pending.parts.push(media);
        } else {
            return Err(unknown_part(
                &part_path,
                part,
                "text, inlineData, fileData or functionResponse",
            ));
        }
    }
    if pending.has_content() {
        out.messages.push(pending);
        out.paths.push(pending_path);
    }
    Ok(())
}

fn function_response(
    response: &Object,
    path: &str,
    open: &mut OpenCalls,
) -> Result<Message, IngestError> {
    let function = non_empty(response, "name", path)?;
    let id = match optional_string(response, "id", path)? {
        Some(id) if !id.is_empty() => {
            open.answered.insert(id.to_string());
            id.to_string()
        }
        _ => open.take(function).ok_or_else(|| {
            IngestError::new(
                format!("{path}.id"),
                format!(
                    "is missing, and no call of {} in this request is left for it to answer; \
                     send the call's id (ctxd's GEMINI body carries it as functionCall.id) \
                     or append the model's response in the same request",
                    quoted(function)
                ),
            )
        })?,
    };
    let body_path = format!("{path}.response");
    let body = object(required(response, "response", path)?, &body_path)?;
    let mut message = Message::text(Role::Tool, "");
    message.tool_call_id = id;
    message.name = function.into();
    let single = (body.len() == 1).then(|| body.iter().next()).flatten();
    match single {
        Some((key, value)) if key == "output" || key == "error" => {
            message.content = match value {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            if key == "error" {
                message.metadata.insert(TOOL_ERROR.into(), "true".into());
            }
        }
        _ => message.content = Value::Object(body.clone()).to_string(),
    }
    Ok(message)
}

#[cfg(test)]
#[path = "gemini_tests.rs"]
mod tests;
