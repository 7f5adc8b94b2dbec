//! Anthropic Messages: a response `Message` and request `messages`.
//!
//! - `text` blocks become the message's text (the first its content, any more text parts,
//!   so they render back as the same blocks);
//! - `thinking` becomes the reasoning, its `signature` the
//!   [`ANTHROPIC_THINKING_SIGNATURE`] metadata (one thinking block per message: a second is
//!   refused rather than sent back with the wrong signature);
//! - `redacted_thinking` is kept whole (its `data`, in [`ANTHROPIC_REDACTED_THINKING`]) so
//!   it goes back to Anthropic as it came; it has no text any other provider could use;
//! - `tool_use` becomes a tool call whose arguments are the `input` object as JSON text;
//! - each `tool_result` becomes a tool message answering `tool_use_id`, with `is_error`
//!   kept as [`TOOL_ERROR`] metadata (rendered back as `is_error`);
//! - `image` blocks become media: a base64 source as a `data:` URI, a url source as the URL.
//!
//! Usage: `input_tokens + cache_creation_input_tokens + cache_read_input_tokens` is the
//! prompt (Anthropic counts the three apart), `cache_read_input_tokens` the cached part.
use serde_json::{Map, Value};

use super::walk::{
    array, clip, count, data_uri, field, flag, name, object, optional_string, parse, string,
};
use super::{
    ANTHROPIC_REDACTED_THINKING, ANTHROPIC_THINKING_SIGNATURE, IngestError, Ingested, TOOL_ERROR,
};
use crate::message::{Message, Part, Role, ToolCall, Usage};

pub(super) fn response(json: &str) -> Result<Ingested, IngestError> {
    let root = parse(json, "an Anthropic Message")?;
    let body = object(&root, "$")?;
    if let Some(kind) = optional_string(body, "$", "type")?
        && kind != "message"
    {
        return Err(IngestError::new(
            "$.type",
            format!(
                "is {}; send the `message` body of a non-streaming Messages call",
                clip(kind)
            ),
        ));
    }
    if let Some(role) = optional_string(body, "$", "role")?
        && role != "assistant"
    {
        return Err(IngestError::new(
            "$.role",
            format!("is {}; a response Message is the assistant's", clip(role)),
        ));
    }
    let blocks = array(field(body, "$", "content")?, "$.content")?;
    let message = assistant(blocks, "$.content")?;
    let usage = match body.get("usage") {
        None | Some(Value::Null) => None,
        Some(usage) => Some(read_usage(object(usage, "$.usage")?)?),
    };
    Ok(Ingested {
        messages: vec![message],
        paths: vec!["$".into()],
        usage,
    })
}

fn read_usage(usage: &Map<String, Value>) -> Result<Usage, IngestError> {
    let path = "$.usage";
    let input = count(usage, path, "input_tokens")?;
    let creation = count(usage, path, "cache_creation_input_tokens")?;
    let read = count(usage, path, "cache_read_input_tokens")?;
    Ok(Usage {
        input_tokens: input.saturating_add(creation).saturating_add(read),
        output_tokens: count(usage, path, "output_tokens")?,
        cached_input_tokens: read,
    })
}

/// An assistant message from its content blocks.
fn assistant(blocks: &[Value], path: &str) -> Result<Message, IngestError> {
    let mut message = Message::text(Role::Assistant, "");
    let mut redacted = Vec::new();
    let mut thinking_seen = false;
    for (index, block) in blocks.iter().enumerate() {
        let path = format!("{path}[{index}]");
        let block = object(block, &path)?;
        match block_type(block, &path)? {
            "text" => add_text(&mut message, text_of(block, &path)?),
            "thinking" => {
                if thinking_seen {
                    return Err(IngestError::new(
                        &path,
                        "is a second thinking block; ctxd keeps one per message (with its \
                         signature), so append the blocks as separate messages",
                    ));
                }
                thinking_seen = true;
                message.reasoning = string(
                    field(block, &path, "thinking")?,
                    &format!("{path}.thinking"),
                )?
                .to_string();
                if let Some(signature) = optional_string(block, &path, "signature")?
                    && !signature.is_empty()
                {
                    message
                        .metadata
                        .insert(ANTHROPIC_THINKING_SIGNATURE.into(), signature.into());
                }
            }
            "redacted_thinking" => {
                redacted.push(string(
                    field(block, &path, "data")?,
                    &format!("{path}.data"),
                )?);
            }
            "tool_use" => {
                let input = field(block, &path, "input")?;
                object(input, &format!("{path}.input"))?;
                message.tool_calls.push(ToolCall {
                    id: name(block, &path, "id")?.into(),
                    name: name(block, &path, "name")?.into(),
                    arguments: input.to_string(),
                });
            }
            other => {
                return Err(unknown_block(
                    &path,
                    other,
                    "text, thinking, redacted_thinking or tool_use",
                ));
            }
        }
    }
    if !redacted.is_empty() {
        message.metadata.insert(
            ANTHROPIC_REDACTED_THINKING.into(),
            serde_json::to_string(&redacted).unwrap_or_default(),
        );
    }
    Ok(message)
}

fn block_type<'a>(block: &'a Map<String, Value>, path: &str) -> Result<&'a str, IngestError> {
    string(field(block, path, "type")?, &format!("{path}.type"))
}

fn text_of<'a>(block: &'a Map<String, Value>, path: &str) -> Result<&'a str, IngestError> {
    string(field(block, path, "text")?, &format!("{path}.text"))
}

fn unknown_block(path: &str, kind: &str, known: &str) -> IngestError {
    IngestError::new(
        format!("{path}.type"),
        format!("is {}; ctxd reads {known} blocks here", clip(kind)),
    )
}

/// The first text is the content, any further text a part, so the blocks render back as
/// they came.
fn add_text(message: &mut Message, text: &str) {
    if message.content.is_empty() && message.parts.is_empty() {
        message.content = text.to_string();
    } else {
        message.parts.push(Part::Text { text: text.into() });
    }
}

fn image(block: &Map<String, Value>, path: &str) -> Result<Part, IngestError> {
    let source_path = format!("{path}.source");
    let source = object(field(block, path, "source")?, &source_path)?;
    let uri = match block_type(source, &source_path)? {
        "base64" => data_uri(
            name(source, &source_path, "media_type")?,
            string(
                field(source, &source_path, "data")?,
                &format!("{source_path}.data"),
            )?,
        ),
        "url" => name(source, &source_path, "url")?.to_string(),
        other => {
            return Err(IngestError::new(
                format!("{source_path}.type"),
                format!(
                    "is {}; ctxd reads base64 and url image sources",
                    clip(other)
                ),
            ));
        }
    };
    let mime_type = match uri
        .strip_prefix("data:")
        .and_then(|rest| rest.split_once(';'))
    {
        Some((mime_type, _)) => mime_type.to_string(),
        None => image_type_of_url(&uri).to_string(),
    };
    Ok(Part::Media {
        uri,
        mime_type,
        token_estimate: 0,
    })
}

/// An image URL's type from its extension (Anthropic's url source names none);
/// `image/jpeg` when the extension says nothing.
fn image_type_of_url(url: &str) -> &'static str {
    let path = url
        .split(['?', '#'])
        .next()
        .unwrap_or(url)
        .to_ascii_lowercase();
    if path.ends_with(".png") {
        "image/png"
    } else if path.ends_with(".gif") {
        "image/gif"
    } else if path.ends_with(".webp") {
        "image/webp"
    } else {
        "image/jpeg"
    }
}

/// Text and image blocks of a user message or a tool result, into `message`.
fn user_block(
    message: &mut Message,
    block: &Map<String, Value>,
    kind: &str,
    path: &str,
) -> Result<(), IngestError> {
    match kind {
        "text" => {
            message.parts.push(Part::Text {
                text: text_of(block, path)?.into(),
            });
            Ok(())
        }
        "image" => {
            message.parts.push(image(block, path)?);
            Ok(())
        }
        other => Err(unknown_block(path, other, "text, image or tool_result")),
    }
}

/// A lone text part is the content (the common shape); otherwise the parts stay in order.
fn settle(message: &mut Message) {
    if message.content.is_empty()
        && let [Part::Text { text }] = message.parts.as_mut_slice()
    {
        message.content = std::mem::take(text);
        message.parts.clear();
    }
}

pub(super) fn items(json: &str) -> Result<Ingested, IngestError> {
    let root = parse(json, "a JSON array of Anthropic messages")?;
    let mut out = Ingested::default();
    for (index, item) in array(&root, "$")?.iter().enumerate() {
        let path = format!("$[{index}]");
        let item = object(item, &path)?;
        let role = string(field(item, &path, "role")?, &format!("{path}.role"))?;
        let content_path = format!("{path}.content");
        let content = field(item, &path, "content")?;
        match role {
            "assistant" => {
                let message = match content {
                    Value::String(text) => Message::text(Role::Assistant, text.as_str()),
                    other => assistant(array(other, &content_path)?, &content_path)?,
                };
                out.messages.push(message);
                out.paths.push(path);
            }
            "user" => user(&mut out, content, &content_path, &path)?,
            other => {
                return Err(IngestError::new(
                    format!("{path}.role"),
                    format!(
                        "is {}; Anthropic messages are user or assistant",
                        clip(other)
                    ),
                ));
            }
        }
    }
    Ok(out)
}

/// A user message: its `tool_result` blocks become tool messages, the text and images
/// around them user messages, in order.
fn user(
    out: &mut Ingested,
    content: &Value,
    content_path: &str,
    path: &str,
) -> Result<(), IngestError> {
    if let Value::String(text) = content {
        out.messages.push(Message::text(Role::User, text.as_str()));
        out.paths.push(path.to_string());
        return Ok(());
    }
    let blocks = array(content, content_path)?;
    if blocks.is_empty() {
        return Err(IngestError::new(
            content_path,
            "is empty; a user message needs at least one block",
        ));
    }
    let mut pending = Message::text(Role::User, "");
    let mut pending_path = String::new();
    let flush = |out: &mut Ingested, pending: &mut Message, pending_path: &mut String| {
        if !pending.parts.is_empty() {
            let mut message = std::mem::replace(pending, Message::text(Role::User, ""));
            settle(&mut message);
            out.messages.push(message);
            out.paths.push(std::mem::take(pending_path));
        }
    };
    for (index, block) in blocks.iter().enumerate() {
        let block_path = format!("{content_path}[{index}]");
        let block = object(block, &block_path)?;
        let kind = block_type(block, &block_path)?;
        if kind != "tool_result" {
            if pending.parts.is_empty() {
                pending_path = block_path.clone();
            }
            user_block(&mut pending, block, kind, &block_path)?;
            continue;
        }
        flush(out, &mut pending, &mut pending_path);
        out.messages.push(tool_result(block, &block_path)?);
        out.paths.push(block_path);
    }
    flush(out, &mut pending, &mut pending_path);
    Ok(())
}

fn tool_result(block: &Map<String, Value>, path: &str) -> Result<Message, IngestError> {
    let mut message = Message::text(Role::Tool, "");
    message.tool_call_id = name(block, path, "tool_use_id")?.into();
    let content_path = format!("{path}.content");
    match block.get("content") {
        None | Some(Value::Null) => {}
        Some(Value::String(text)) => message.content = text.clone(),
        Some(other) => {
            for (index, inner) in array(other, &content_path)?.iter().enumerate() {
                let inner_path = format!("{content_path}[{index}]");
                let inner = object(inner, &inner_path)?;
                let kind = block_type(inner, &inner_path)?;
                if !matches!(kind, "text" | "image") {
                    return Err(unknown_block(&inner_path, kind, "text or image"));
                }
                user_block(&mut message, inner, kind, &inner_path)?;
            }
            settle(&mut message);
        }
    }
    if flag(block, path, "is_error")? {
        message.metadata.insert(TOOL_ERROR.into(), "true".into());
    }
    Ok(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MESSAGE: &str = r#"{
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [
            {"type": "thinking", "thinking": "List first.", "signature": "sig=="},
            {"type": "redacted_thinking", "data": "opaque"},
            {"type": "text", "text": "Looking."},
            {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "ls"}},
            {"type": "tool_use", "id": "toolu_2", "name": "bash", "input": {}}
        ],
        "stop_reason": "tool_use", "stop_sequence": null,
        "usage": {"input_tokens": 10, "cache_creation_input_tokens": 5,
                  "cache_read_input_tokens": 100, "output_tokens": 42}
    }"#;

    #[test]
    fn a_message_becomes_one_assistant_message_with_usage() {
        let read = response(MESSAGE).unwrap();
        let message = &read.messages[0];
        assert_eq!(message.role, Role::Assistant);
        assert_eq!(message.content, "Looking.");
        assert_eq!(message.reasoning, "List first.");
        assert_eq!(message.metadata[ANTHROPIC_THINKING_SIGNATURE], "sig==");
        assert_eq!(
            message.metadata[ANTHROPIC_REDACTED_THINKING],
            r#"["opaque"]"#
        );
        assert_eq!(message.tool_calls.len(), 2);
        assert_eq!(message.tool_calls[0].arguments, r#"{"command":"ls"}"#);
        assert_eq!(message.tool_calls[1].id, "toolu_2");
        assert_eq!(
            read.usage,
            Some(Usage {
                input_tokens: 115,
                output_tokens: 42,
                cached_input_tokens: 100
            })
        );
    }

    #[test]
    fn user_messages_split_into_tool_results_and_user_text() {
        let body = r#"[{"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt"},
            {"type": "tool_result", "tool_use_id": "toolu_2", "is_error": true,
             "content": [{"type": "text", "text": "denied"}]},
            {"type": "text", "text": "Now this:"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "QUJD"}}
        ]}, {"role": "user", "content": "plain"}]"#;
        let read = items(body).unwrap();
        let roles: Vec<Role> = read.messages.iter().map(|m| m.role).collect();
        assert_eq!(roles, [Role::Tool, Role::Tool, Role::User, Role::User]);
        assert_eq!(read.messages[0].tool_call_id, "toolu_1");
        assert_eq!(read.messages[0].content, "a.txt");
        assert_eq!(read.messages[1].content, "denied");
        assert_eq!(read.messages[1].metadata[TOOL_ERROR], "true");
        assert_eq!(
            read.messages[2].parts[1],
            Part::Media {
                uri: "data:image/png;base64,QUJD".into(),
                mime_type: "image/png".into(),
                token_estimate: 0
            }
        );
        assert_eq!(read.messages[3].content, "plain");
        assert_eq!(
            read.paths,
            [
                "$[0].content[0]",
                "$[0].content[1]",
                "$[0].content[2]",
                "$[1]"
            ]
        );
    }

    #[test]
    fn assistant_items_read_like_a_response() {
        let body = r#"[{"role": "assistant", "content": "Plain."},
            {"role": "assistant", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"},
             {"type": "tool_use", "id": "t", "name": "f", "input": {"x": [1]}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t"}]}]"#;
        let read = items(body).unwrap();
        assert_eq!(read.messages[0].content, "Plain.");
        assert_eq!(read.messages[1].content, "a");
        assert_eq!(read.messages[1].parts, [Part::Text { text: "b".into() }]);
        assert_eq!(read.messages[1].tool_calls[0].arguments, r#"{"x":[1]}"#);
        assert_eq!(read.messages[2].role, Role::Tool);
        assert!(read.messages[2].content.is_empty());
        assert!(read.usage.is_none());
    }

    #[test]
    fn errors_name_the_json_path() {
        let cases = [
            (
                r#"{"content": [{"type": "tool_use", "id": "t", "name": "bash", "input": "ls"}]}"#,
                "$.content[0].input",
            ),
            (
                r#"{"content": [{"type": "tool_use", "name": "bash", "input": {}}]}"#,
                "$.content[0].id",
            ),
            (
                r#"{"content": [{"type": "server_tool_use"}]}"#,
                "$.content[0].type",
            ),
            (r#"{"content": "hi"}"#, "$.content"),
            (r#"{"content": [{"type": "text"}]}"#, "$.content[0].text"),
            (
                r#"{"content": [], "usage": {"input_tokens": -1}}"#,
                "$.usage.input_tokens",
            ),
            (r#"[1]"#, "$"),
            ("{", "$"),
        ];
        for (body, path) in cases {
            assert_eq!(response(body).unwrap_err().path, path, "{body}");
        }
        let error =
            items(r#"[{"role": "user", "content": [{"type": "tool_result", "tool_use_id": 7}]}]"#)
                .unwrap_err();
        assert_eq!(error.path, "$[0].content[0].tool_use_id");
        assert_eq!(error.reason, "must be a string, got a number");
        let error = items(r#"[{"role": "user", "content": []}]"#).unwrap_err();
        assert_eq!(error.path, "$[0].content");
        let error = items(&format!(
            r#"[{{"role": "{}", "content": "x"}}]"#,
            "s".repeat(500)
        ))
        .unwrap_err();
        assert!(error.reason.len() < 120, "{}", error.reason);
    }
}
