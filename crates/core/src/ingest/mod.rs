//! Reads what a backend already holds, in its provider's own JSON shape, as ctxd
//! messages: a model's response body (assistant content, reasoning, tool calls, usage)
//! and request items (tool results, user messages). Pure; the inverse of `render`.
//!
//! Every error names the JSON path of what is wrong (`$.choices[0].message.tool_calls[1].id`),
//! and every message remembers the path it came from, so a later check of the message
//! (an unknown tool-call id, say) can name the path too.
//!
//! Provider data a later request must send back verbatim and ctxd has no field for (an
//! OpenAI reasoning item's id, an Anthropic thinking signature, a Gemini thought
//! signature) is kept in the message's metadata under the `ctxd.` keys below; the
//! renderers read them back.
use thiserror::Error;

use crate::format::Format;
use crate::message::{Message, Part, Usage};

mod anthropic;
mod gemini;
mod json;
mod openai_chat;
mod openai_responses;

/// OpenAI Responses: the `id` of the reasoning item the message's reasoning came from.
pub const OPENAI_REASONING_ID: &str = "ctxd.openai.reasoning_id";
/// OpenAI Responses: the reasoning item's `encrypted_content`.
pub const OPENAI_REASONING_ENCRYPTED: &str = "ctxd.openai.reasoning_encrypted_content";
/// Anthropic: the `signature` of the thinking block the message's reasoning came from.
pub const ANTHROPIC_THINKING_SIGNATURE: &str = "ctxd.anthropic.thinking_signature";
/// Gemini: a JSON object of `thoughtSignature`s by the part they were on (the tool-call
/// id for a `functionCall` part, [`GEMINI_TEXT_PART`] for the text,
/// [`GEMINI_THOUGHT_PART`] for the thought).
pub const GEMINI_THOUGHT_SIGNATURES: &str = "ctxd.gemini.thought_signatures";
/// The key of a Gemini message's text part in [`GEMINI_THOUGHT_SIGNATURES`].
pub const GEMINI_TEXT_PART: &str = "text";
/// The key of a Gemini message's thought part in [`GEMINI_THOUGHT_SIGNATURES`].
pub const GEMINI_THOUGHT_PART: &str = "thought";
/// Anthropic: a JSON array of the `data` of the message's `redacted_thinking` blocks,
/// sent back after its thinking block.
pub const ANTHROPIC_REDACTED_THINKING: &str = "ctxd.anthropic.redacted_thinking";
/// Anthropic: a `system` message a client put among its `messages` (not the top-level
/// `system` field): `"true"`, so it goes back there, as it came.
pub const ANTHROPIC_INLINE_SYSTEM: &str = "ctxd.anthropic.inline_system";
/// Anthropic: a block of the message carried a `cache_control` (the client's prompt-cache
/// breakpoint): `"true"`; a build's Anthropic body marks the message's last block again
/// where the four breakpoints allow.
pub const ANTHROPIC_CACHE_MARK: &str = "ctxd.anthropic.cache_control";
/// The format of an Anthropic block kept whole (`Part::Native`).
pub const NATIVE_ANTHROPIC: &str = "anthropic";
/// The format of an OpenAI Responses item kept whole (`Part::Native`).
pub const NATIVE_OPENAI_RESPONSES: &str = "openai_responses";
/// OpenAI Responses: a JSON array of the ids of the message's tool calls that are
/// custom (freeform) tool calls; each call's arguments are `{"input": "<its input>"}`.
pub const OPENAI_CUSTOM_TOOL_CALLS: &str = "ctxd.openai.custom_tool_calls";
/// OpenAI Responses: a tool result answering a custom tool call: `"true"`.
pub const OPENAI_CUSTOM_TOOL_OUTPUT: &str = "ctxd.openai.custom_tool_output";
/// OpenAI: `"developer"` for a system message that came with the developer role, so it
/// goes back to OpenAI with it.
pub const OPENAI_DEVELOPER_ROLE: &str = "ctxd.openai.developer";

/// The role an OpenAI body gives a message: `developer` for a system message that came
/// as one.
pub fn openai_role(message: &Message) -> &'static str {
    if message.role == crate::message::Role::System
        && message.metadata.contains_key(OPENAI_DEVELOPER_ROLE)
    {
        "developer"
    } else {
        message.role.as_str()
    }
}

/// A system message read from an OpenAI `role`: `developer` is remembered.
fn openai_system(role: &str) -> Message {
    let mut message = Message::text(crate::message::Role::System, "");
    if role == "developer" {
        message
            .metadata
            .insert(OPENAI_DEVELOPER_ROLE.into(), "true".into());
    }
    message
}

/// A tool result the tool reported as failed (an Anthropic `tool_result` with
/// `is_error`, a Gemini `functionResponse` whose response is `{"error": ...}`): `"true"`.
pub const TOOL_ERROR: &str = "ctxd.tool_error";

/// The most bytes one body may hold: a response or an item list is read whole, so a
/// bigger one is refused before it is parsed.
pub const MAX_BODY_BYTES: usize = 8 * 1024 * 1024;

fn check_size(json: &str) -> Result<(), IngestError> {
    if json.len() > MAX_BODY_BYTES {
        return Err(IngestError::new(
            "$",
            format!(
                "is {} bytes, over the {MAX_BODY_BYTES} one body may hold; split the items \
                 over several appends",
                json.len()
            ),
        ));
    }
    Ok(())
}

/// A message's text as a provider splits it over parts or blocks: the first text is the
/// content, any further text a part, so the parts render back as they came.
fn add_text(message: &mut Message, text: &str) {
    if message.content.is_empty() && message.parts.is_empty() {
        message.content = text.to_string();
    } else {
        message.parts.push(Part::Text { text: text.into() });
    }
}

/// Messages read from a provider body, in order, with the path each came from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ingested {
    pub messages: Vec<Message>,
    /// The JSON path of each message, e.g. `$.choices[0].message` or `$[2]`.
    pub paths: Vec<String>,
    /// The provider's usage, when the body is a response that reports one.
    pub usage: Option<Usage>,
}

/// What is wrong with a body, and where.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{path}: {reason}")]
pub struct IngestError {
    /// The JSON path, `$` for the whole body.
    pub path: String,
    pub reason: String,
}

impl IngestError {
    pub fn new(path: impl Into<String>, reason: impl Into<String>) -> IngestError {
        IngestError {
            path: path.into(),
            reason: reason.into(),
        }
    }
}

/// A model's response body: the assistant message it holds, and its usage.
pub fn response(provider: Format, json: &str) -> Result<Ingested, IngestError> {
    check_size(json)?;
    match provider {
        Format::OpenAiChat => openai_chat::response(json),
        Format::OpenAiResponses => openai_responses::response(json),
        Format::AnthropicMessages => anthropic::response(json),
        Format::Gemini => gemini::response(json),
    }
}

/// A JSON array of request items (tool results, user messages).
pub fn items(provider: Format, json: &str) -> Result<Ingested, IngestError> {
    items_after(provider, json, &Ingested::default())
}

/// A JSON array of request items sent with `response` (what `response` read from the
/// same request): a Gemini `functionResponse` without an id answers the first call of
/// its name in `response` (or in the items' own `model` contents) not yet answered.
pub fn items_after(
    provider: Format,
    json: &str,
    response: &Ingested,
) -> Result<Ingested, IngestError> {
    check_size(json)?;
    match provider {
        Format::OpenAiChat => openai_chat::items(json),
        Format::OpenAiResponses => openai_responses::items(json),
        Format::AnthropicMessages => anthropic::items(json),
        Format::Gemini => gemini::items(json, &response.messages),
    }
}

/// Checks that each body is refused at the JSON path given, for a reason holding the
/// words given.
#[cfg(test)]
fn assert_refused(
    read: impl Fn(&str) -> Result<Ingested, IngestError>,
    cases: impl IntoIterator<Item = (serde_json::Value, &'static str, &'static str)>,
) {
    for (body, path, reason) in cases {
        let error = read(&body.to_string()).expect_err("the body is refused");
        assert_eq!(error.path, path, "{body}");
        assert!(error.reason.contains(reason), "{body}: {}", error.reason);
    }
}

/// The media types of a message's media parts, in order.
#[cfg(test)]
fn media_types(message: &Message) -> Vec<&str> {
    message
        .parts
        .iter()
        .filter_map(|part| match part {
            Part::Media { mime_type, .. } => Some(mime_type.as_str()),
            Part::Text { .. } | Part::Native { .. } => None,
        })
        .collect()
}
