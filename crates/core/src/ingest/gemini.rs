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

use serde_json::{Map, Value};

use super::walk::{
    array, clip, count, data_uri, field, flag, name, object, optional_string, parse, string,
};
use super::{
    GEMINI_TEXT_PART, GEMINI_THOUGHT_PART, GEMINI_THOUGHT_SIGNATURES, IngestError, Ingested,
    TOOL_ERROR,
};
use crate::message::{Message, Part, Role, ToolCall, Usage};

/// The longest `responseId` used as is in a made-up call id.
const MAX_RESPONSE_ID_CHARS: usize = 64;

pub(super) fn response(json: &str) -> Result<Ingested, IngestError> {
    let root = parse(json, "a Gemini GenerateContentResponse")?;
    let body = object(&root, "$")?;
    let candidates = match body.get("candidates") {
        None | Some(Value::Null) => {
            let blocked = body
                .get("promptFeedback")
                .and_then(|feedback| feedback.get("blockReason"))
                .and_then(Value::as_str)
                .map(|reason| format!(" (the prompt was blocked: {})", clip(reason)))
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
        let reason = optional_string(candidate, "$.candidates[0]", "finishReason")?
            .map(|reason| format!(" (finishReason {})", clip(reason)))
            .unwrap_or_default();
        return Err(IngestError::new(
            "$.candidates[0].content",
            format!("is missing{reason}; there is no model message to append"),
        ));
    };
    let id_base = match optional_string(body, "$", "responseId")? {
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

fn read_usage(usage: &Map<String, Value>) -> Result<Usage, IngestError> {
    let path = "$.usageMetadata";
    Ok(Usage {
        input_tokens: count(usage, path, "promptTokenCount")?.saturating_add(count(
            usage,
            path,
            "toolUsePromptTokenCount",
        )?),
        output_tokens: count(usage, path, "candidatesTokenCount")?.saturating_add(count(
            usage,
            path,
            "thoughtsTokenCount",
        )?),
        cached_input_tokens: count(usage, path, "cachedContentTokenCount")?,
    })
}

fn parts_of<'a>(content: &'a Map<String, Value>, path: &str) -> Result<&'a [Value], IngestError> {
    match content.get("parts") {
        None | Some(Value::Null) => Ok(&[]),
        Some(parts) => array(parts, &format!("{path}.parts")),
    }
}

/// A `model` content as an assistant message; calls without an id get
/// `gemini-<id_base>-<part index>`.
fn model(content: &Map<String, Value>, path: &str, id_base: &str) -> Result<Message, IngestError> {
    if let Some(role) = optional_string(content, path, "role")?
        && role != "model"
    {
        return Err(IngestError::new(
            format!("{path}.role"),
            format!("is {}; the model's content has role \"model\"", clip(role)),
        ));
    }
    let mut message = Message::text(Role::Assistant, "");
    let mut signatures = BTreeMap::new();
    for (index, part) in parts_of(content, path)?.iter().enumerate() {
        let path = format!("{path}.parts[{index}]");
        let part = object(part, &path)?;
        let signature = optional_string(part, &path, "thoughtSignature")?;
        let key = if let Some(text) = part.get("text") {
            let text = string(text, &format!("{path}.text"))?;
            if flag(part, &path, "thought")? {
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
            let id = match optional_string(call, &call_path, "id")? {
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
                name: name(call, &call_path, "name")?.into(),
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

fn unknown_part(path: &str, part: &Map<String, Value>, known: &str) -> IngestError {
    let keys: Vec<String> = part.keys().take(4).map(|key| clip(key)).collect();
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

/// The first text is the content, any further text a part, so the parts render back as
/// they came.
fn add_text(message: &mut Message, text: &str) {
    if message.content.is_empty() && message.parts.is_empty() {
        message.content = text.to_string();
    } else {
        message.parts.push(Part::Text { text: text.into() });
    }
}

/// An `inlineData` or `fileData` part as media; `None` for a part that is neither.
fn media(part: &Map<String, Value>, path: &str) -> Result<Option<Part>, IngestError> {
    if let Some(blob) = part.get("inlineData") {
        let blob_path = format!("{path}.inlineData");
        let blob = object(blob, &blob_path)?;
        let mime_type = name(blob, &blob_path, "mimeType")?;
        let data = string(
            field(blob, &blob_path, "data")?,
            &format!("{blob_path}.data"),
        )?;
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
            uri: name(file, &file_path, "fileUri")?.into(),
            mime_type: optional_string(file, &file_path, "mimeType")?
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
    let root = parse(json, "a JSON array of Gemini contents")?;
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
        match string(field(content, &path, "role")?, &format!("{path}.role"))? {
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
                    format!("is {}; Gemini contents are user or model", clip(other)),
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
    content: &Map<String, Value>,
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
    response: &Map<String, Value>,
    path: &str,
    open: &mut OpenCalls,
) -> Result<Message, IngestError> {
    let function = name(response, path, "name")?;
    let id = match optional_string(response, path, "id")? {
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
                    clip(function)
                ),
            )
        })?,
    };
    let body_path = format!("{path}.response");
    let body = object(field(response, path, "response")?, &body_path)?;
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
mod tests {
    use super::*;

    const RESPONSE: &str = r#"{
        "candidates": [{"content": {"role": "model", "parts": [
            {"text": "Think.", "thought": true},
            {"text": "Looking."},
            {"functionCall": {"name": "bash", "args": {"command": "ls"}}, "thoughtSignature": "c2ln"},
            {"functionCall": {"id": "given", "name": "bash", "args": {"command": "pwd"}}}
        ]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 120, "candidatesTokenCount": 30,
                          "thoughtsTokenCount": 12, "cachedContentTokenCount": 100,
                          "totalTokenCount": 162},
        "modelVersion": "gemini-2.5-flash", "responseId": "resp1"
    }"#;

    #[test]
    fn a_response_becomes_one_assistant_message_with_usage() {
        let read = response(RESPONSE).unwrap();
        let message = &read.messages[0];
        assert_eq!(message.reasoning, "Think.");
        assert_eq!(message.content, "Looking.");
        assert_eq!(message.tool_calls[0].id, "gemini-resp1-2");
        assert_eq!(message.tool_calls[1].id, "given");
        assert_eq!(message.tool_calls[1].arguments, r#"{"command":"pwd"}"#);
        assert_eq!(
            message.metadata[GEMINI_THOUGHT_SIGNATURES],
            r#"{"gemini-resp1-2":"c2ln"}"#
        );
        assert_eq!(
            read.usage,
            Some(Usage {
                input_tokens: 120,
                output_tokens: 42,
                cached_input_tokens: 100
            })
        );
    }

    #[test]
    fn responses_without_an_id_answer_the_calls_of_their_name_in_order() {
        let read = response(RESPONSE).unwrap();
        let items_json = r#"[{"role": "user", "parts": [
            {"functionResponse": {"id": "given", "name": "bash", "response": {"output": "/w"}}},
            {"functionResponse": {"name": "bash", "response": {"error": "denied"}}},
            {"text": "Go on."},
            {"inlineData": {"mimeType": "image/png", "data": "QUJD"}}
        ]}]"#;
        let items = items(items_json, &read.messages).unwrap();
        assert_eq!(items.messages[0].tool_call_id, "given");
        assert_eq!(items.messages[0].content, "/w");
        assert_eq!(items.messages[1].tool_call_id, "gemini-resp1-2");
        assert_eq!(items.messages[1].metadata[TOOL_ERROR], "true");
        assert_eq!(items.messages[2].role, Role::User);
        assert_eq!(items.messages[2].parts.len(), 1);
        assert_eq!(
            items.paths,
            ["$[0].parts[0]", "$[0].parts[1]", "$[0].parts[2]"]
        );
        // Without the response, an id-less result cannot be placed.
        let error = super::items(items_json, &[]).unwrap_err();
        assert_eq!(error.path, "$[0].parts[1].functionResponse.id");
        // A response object that is not {"output"} stays whole, as JSON text.
        let items = super::items(
            r#"[{"role": "user", "parts": [{"functionResponse": {"id": "x", "name": "f", "response": {"a": 1, "b": [2]}}}]}]"#,
            &[],
        )
        .unwrap();
        assert_eq!(items.messages[0].content, r#"{"a":1,"b":[2]}"#);
    }

    #[test]
    fn ids_made_up_without_a_response_id_are_stable_and_distinct() {
        let body = RESPONSE.replace(r#""responseId": "resp1""#, r#""responseId": "a b""#);
        let first = response(&body).unwrap().messages[0].tool_calls[0]
            .id
            .clone();
        assert_eq!(first, response(&body).unwrap().messages[0].tool_calls[0].id);
        assert!(
            first.starts_with("gemini-") && first.ends_with("-2"),
            "{first}"
        );
        let other = body.replace("Looking.", "Looking!");
        assert_ne!(
            first,
            response(&other).unwrap().messages[0].tool_calls[0].id
        );
    }

    #[test]
    fn errors_name_the_json_path() {
        let cases = [
            (r#"{"candidates": []}"#, "$.candidates"),
            (
                r#"{"candidates": [{"finishReason": "SAFETY"}]}"#,
                "$.candidates[0].content",
            ),
            (
                r#"{"candidates": [{"content": {"parts": [{"functionCall": {"name": "f", "args": [1]}}]}}]}"#,
                "$.candidates[0].content.parts[0].functionCall.args",
            ),
            (
                r#"{"candidates": [{"content": {"parts": [{"executableCode": {}}]}}]}"#,
                "$.candidates[0].content.parts[0]",
            ),
            (
                r#"{"candidates": [{"content": {"parts": []}}], "usageMetadata": {"promptTokenCount": "1"}}"#,
                "$.usageMetadata.promptTokenCount",
            ),
        ];
        for (body, path) in cases {
            assert_eq!(response(body).unwrap_err().path, path, "{body}");
        }
        let error = items(
            r#"[{"role": "user", "parts": [{"functionResponse": {"id": "x", "response": {}}}]}]"#,
            &[],
        )
        .unwrap_err();
        assert_eq!(error.path, "$[0].parts[0].functionResponse.name");
        let error = items(r#"[{"role": "function", "parts": []}]"#, &[]).unwrap_err();
        assert_eq!(error.path, "$[0].role");
        let error = items(r#"[{"role": "user"}]"#, &[]).unwrap_err();
        assert_eq!(error.path, "$[0].parts");
    }
}
