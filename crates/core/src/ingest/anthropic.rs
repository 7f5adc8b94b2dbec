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
//! - `image` blocks become media: a base64 source as a `data:` URI, a url source as the URL;
//! - a block's `cache_control` marks its message ([`ANTHROPIC_CACHE_MARK`]): a build puts
//!   the breakpoint back on the message's last block.
//!
//! Usage: `input_tokens + cache_creation_input_tokens + cache_read_input_tokens` is the
//! prompt (Anthropic counts the three apart), `cache_read_input_tokens` the cached part.
use serde_json::Value;

use super::json::{
    self, Object, array, count, flag, non_empty, object, optional_string, quoted, required,
    required_string,
};
use super::{
    ANTHROPIC_CACHE_MARK, ANTHROPIC_INLINE_SYSTEM, ANTHROPIC_REDACTED_THINKING,
    ANTHROPIC_THINKING_SIGNATURE, IngestError, Ingested, NATIVE_ANTHROPIC, TOOL_ERROR, add_text,
};
use crate::media::{data_uri, image_type};
use crate::message::{Message, Part, Role, ToolCall, Usage};

pub(super) fn response(json: &str) -> Result<Ingested, IngestError> {
    let root = json::parse(json, "an Anthropic Message")?;
    let body = object(&root, "$")?;
    if let Some(kind) = optional_string(body, "type", "$")?
        && kind != "message"
    {
        return Err(IngestError::new(
            "$.type",
            format!(
                "is {}; send the `message` body of a non-streaming Messages call",
                quoted(kind)
            ),
        ));
    }
    if let Some(role) = optional_string(body, "role", "$")?
        && role != "assistant"
    {
        return Err(IngestError::new(
            "$.role",
            format!("is {}; a response Message is the assistant's", quoted(role)),
        ));
    }
    let blocks = array(required(body, "content", "$")?, "$.content")?;
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

fn read_usage(usage: &Object) -> Result<Usage, IngestError> {
    let count = |key| Ok::<_, IngestError>(count(usage, key, "$.usage")?.unwrap_or(0));
    let input = count("input_tokens")?;
    let creation = count("cache_creation_input_tokens")?;
    let read = count("cache_read_input_tokens")?;
    Ok(Usage {
        input_tokens: input.saturating_add(creation).saturating_add(read),
        output_tokens: count("output_tokens")?,
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
        mark_cache(&mut message, block);
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
                message.reasoning = required_string(block, "thinking", &path)?.to_string();
                if let Some(signature) = optional_string(block, "signature", &path)?
                    && !signature.is_empty()
                {
                    message
                        .metadata
                        .insert(ANTHROPIC_THINKING_SIGNATURE.into(), signature.into());
                }
            }
            "redacted_thinking" => {
                redacted.push(required_string(block, "data", &path)?);
            }
            "tool_use" => {
                let input = required(block, "input", &path)?;
                object(input, &format!("{path}.input"))?;
                message.tool_calls.push(ToolCall {
                    id: non_empty(block, "id", &path)?.into(),
                    name: non_empty(block, "name", &path)?.into(),
                    arguments: input.to_string(),
                });
            }
            // A hosted tool's call and result, and whatever else ctxd does not model.
            _ => message.parts.push(native(block)),
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

fn block_type<'a>(block: &'a Object, path: &str) -> Result<&'a str, IngestError> {
    required_string(block, "type", path)
}

fn text_of<'a>(block: &'a Object, path: &str) -> Result<&'a str, IngestError> {
    required_string(block, "text", path)
}

fn unknown_block(path: &str, kind: &str, known: &str) -> IngestError {
    IngestError::new(
        format!("{path}.type"),
        format!("is {}; ctxd reads {known} blocks here", quoted(kind)),
    )
}

fn image(block: &Object, path: &str) -> Result<Part, IngestError> {
    let source_path = format!("{path}.source");
    let source = object(required(block, "source", path)?, &source_path)?;
    let (uri, mime_type) = match block_type(source, &source_path)? {
        "base64" => {
            let media_type = non_empty(source, "media_type", &source_path)?;
            let data = required_string(source, "data", &source_path)?;
            (data_uri(media_type, data), media_type.to_string())
        }
        "url" => {
            let url = non_empty(source, "url", &source_path)?;
            (url.to_string(), image_type(url))
        }
        other => {
            return Err(IngestError::new(
                format!("{source_path}.type"),
                format!(
                    "is {}; ctxd reads base64 and url image sources",
                    quoted(other)
                ),
            ));
        }
    };
    Ok(Part::Media {
        uri,
        mime_type,
        token_estimate: 0,
    })
}

/// Text and image blocks of a user message or a tool result, into `message`.
fn user_block(
    message: &mut Message,
    block: &Object,
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
        // A document, a search result, and whatever else ctxd does not model.
        _ => {
            message.parts.push(native(block));
            Ok(())
        }
    }
}

/// Notes on the message that the client marked a prompt-cache breakpoint in it.
fn mark_cache(message: &mut Message, block: &Object) {
    if block
        .get("cache_control")
        .is_some_and(|mark| !mark.is_null())
    {
        message
            .metadata
            .insert(ANTHROPIC_CACHE_MARK.into(), "true".into());
    }
}

/// A block kept whole, as it came.
fn native(block: &Object) -> Part {
    Part::Native {
        format: NATIVE_ANTHROPIC.to_string(),
        json: Value::Object(block.clone()).to_string(),
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
    let root = json::parse(json, "a JSON array of Anthropic messages")?;
    let mut out = Ingested::default();
    for (index, item) in array(&root, "$")?.iter().enumerate() {
        let path = format!("$[{index}]");
        let item = object(item, &path)?;
        let role = required_string(item, "role", &path)?;
        let content_path = format!("{path}.content");
        let content = required(item, "content", &path)?;
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
            "system" => {
                out.messages.push(inline_system(content, &content_path)?);
                out.paths.push(path);
            }
            other => {
                return Err(IngestError::new(
                    format!("{path}.role"),
                    format!("is {}; roles: user, assistant, system", quoted(other)),
                ));
            }
        }
    }
    Ok(out)
}

/// A `system` message among the messages: its text, kept in place.
fn inline_system(content: &Value, content_path: &str) -> Result<Message, IngestError> {
    let mut message = Message::text(Role::System, "");
    match content {
        Value::String(text) => message.content = text.clone(),
        other => {
            for (index, block) in array(other, content_path)?.iter().enumerate() {
                let path = format!("{content_path}[{index}]");
                let block = object(block, &path)?;
                match block_type(block, &path)? {
                    "text" => add_text(&mut message, text_of(block, &path)?),
                    kind => return Err(unknown_block(&path, kind, "text")),
                }
            }
        }
    }
    message
        .metadata
        .insert(ANTHROPIC_INLINE_SYSTEM.into(), "true".into());
    Ok(message)
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
            mark_cache(&mut pending, block);
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

fn tool_result(block: &Object, path: &str) -> Result<Message, IngestError> {
    let mut message = Message::text(Role::Tool, "");
    message.tool_call_id = non_empty(block, "tool_use_id", path)?.into();
    mark_cache(&mut message, block);
    let content_path = format!("{path}.content");
    match block.get("content") {
        None | Some(Value::Null) => {}
        Some(Value::String(text)) => message.content = text.clone(),
        Some(other) => {
            for (index, inner) in array(other, &content_path)?.iter().enumerate() {
                let inner_path = format!("{content_path}[{index}]");
                let inner = object(inner, &inner_path)?;
                let kind = block_type(inner, &inner_path)?;
                mark_cache(&mut message, inner);
                user_block(&mut message, inner, kind, &inner_path)?;
            }
            settle(&mut message);
        }
    }
    if flag(block, "is_error", path)? {
        message.metadata.insert(TOOL_ERROR.into(), "true".into());
    }
    Ok(message)
}

#[cfg(test)]
#[path = "anthropic_tests.rs"]
mod tests;
