//! A provider request as an unmodified agent sends it, taken apart and put back
//! together around ctxd: the history it carries (read by `ingest`), the system text and
//! tools it counts against the window, and everything else, kept verbatim for the
//! upstream. Pure; the provider endpoint (`crates/server/src/proxy/`) runs it.
//!
//! - [`split`] takes a request body apart; [`merge`] puts the body ctxd built back into
//!   what the client sent, every non-message field as it came.
//! - [`reconcile`] compares the client's history with the stored session's, by
//!   [`fingerprint`]: an extension appends, a rewrite forks.
//! - `stream` assembles the final response from a streamed reply; `errors` writes the
//!   provider's own error shape.
use std::collections::BTreeMap;

use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::format::Format;
use crate::ingest::IngestError;

pub mod errors;
mod reconcile;
pub mod stream;
mod tools;

pub use reconcile::{Fingerprint, Reconciled, chain, fingerprint, reconcile};
pub use tools::{check_reserved, offering};

/// A request body's fields, each as the JSON text it came as.
pub type Fields = BTreeMap<String, Box<RawValue>>;

/// A request body taken apart. Its fields stay the JSON text they came as: a body of a
/// long history is read once, not turned into a tree and written back.
#[derive(Debug)]
pub struct ClientRequest {
    pub provider: Format,
    /// The body without its history (`messages`, `input`, `contents`), kept verbatim.
    pub rest: Fields,
    /// The history as a JSON array of the provider's items, for `ingest::items`.
    pub history: String,
    /// OpenAI Chat: the system and developer messages the history starts with, sent back
    /// first, as they came.
    pub leading: Vec<Box<RawValue>>,
    /// The system prompt and the tool definitions as text, for counting.
    pub counted_text: String,
    /// The text of the system prompt alone (with the first user message it keys a
    /// session).
    pub system_text: String,
    /// The output the request asks for at most, when it says.
    pub max_output_tokens: Option<i64>,
    /// Whether the reply is streamed (Gemini says it in the path).
    pub stream: bool,
    /// Anthropic: the client marked prompt-cache breakpoints in its messages
    /// (`cache_control`); the built history then gets one at its end.
    pub caches_history: bool,
}

/// The history field of each provider's request body.
pub fn history_field(provider: Format) -> &'static str {
    match provider {
        Format::OpenAiChat | Format::AnthropicMessages => "messages",
        Format::OpenAiResponses => "input",
        Format::Gemini => "contents",
    }
}

fn not_json(error: &serde_json::Error) -> IngestError {
    IngestError::new(
        "$",
        format!(
            "is not a JSON object (line {}, column {})",
            error.line(),
            error.column()
        ),
    )
}

/// Takes a request body apart; `stream` is the path's say for Gemini.
pub fn split(provider: Format, json: &str, stream: bool) -> Result<ClientRequest, IngestError> {
    let mut rest: Fields = serde_json::from_str(json).map_err(|error| not_json(&error))?;
    let field = history_field(provider);
    let raw = rest
        .remove(field)
        .ok_or_else(|| IngestError::new(format!("$.{field}"), "is missing"))?;
    let mut items: Vec<Box<RawValue>> = match serde_json::from_str(raw.get()) {
        Ok(items) => items,
        // The Responses API's easy form: one user message as a string.
        Err(_) if provider == Format::OpenAiResponses && raw.get().starts_with('"') => {
            let item = format!(r#"{{"role":"user","content":{}}}"#, raw.get());
            vec![RawValue::from_string(item).map_err(|error| not_json(&error))?]
        }
        Err(_) => return Err(IngestError::new(format!("$.{field}"), "is not an array")),
    };
    let leading = match provider {
        Format::OpenAiChat => take_leading_system(&mut items),
        _ => Vec::new(),
    };
    let system_text = system_text(provider, &rest, &leading);
    let counted_text = match rest.get("tools") {
        Some(tools) => format!("{system_text}\n{}", tools.get()),
        None => system_text.clone(),
    };
    let history = join(&items);
    Ok(ClientRequest {
        caches_history: provider == Format::AnthropicMessages
            && history.contains("\"cache_control\""),
        provider,
        max_output_tokens: max_output_tokens(provider, &rest),
        stream: stream || rest.get("stream").is_some_and(|raw| raw.get() == "true"),
        history,
        rest,
        leading,
        counted_text,
        system_text,
    })
}

/// A JSON array of items given as text.
fn join(items: &[Box<RawValue>]) -> String {
    let mut out =
        String::with_capacity(items.iter().map(|item| item.get().len() + 1).sum::<usize>() + 2);
    out.push('[');
    for (index, item) in items.iter().enumerate() {
        if index > 0 {
            out.push(',');
        }
        out.push_str(item.get());
    }
    out.push(']');
    out
}

fn take_leading_system(items: &mut Vec<Box<RawValue>>) -> Vec<Box<RawValue>> {
    #[derive(serde::Deserialize)]
    struct Role {
        role: Option<String>,
    }
    let count = items
        .iter()
        .take_while(|item| {
            serde_json::from_str::<Role>(item.get())
                .is_ok_and(|item| matches!(item.role.as_deref(), Some("system" | "developer")))
        })
        .count();
    items.drain(..count).collect()
}

/// A small field's value as a tree.
fn value(raw: &RawValue) -> Value {
    serde_json::from_str(raw.get()).unwrap_or(Value::Null)
}

/// The texts of a value that holds text the way providers nest it: a string, an array
/// of blocks or parts with `text`, an object with `parts` or `content`.
fn texts(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(text) => out.push(text.clone()),
        Value::Array(items) => items.iter().for_each(|item| texts(item, out)),
        Value::Object(map) => {
            if let Some(Value::String(text)) = map.get("text") {
                out.push(text.clone());
            }
            for key in ["parts", "content"] {
                if let Some(inner) = map.get(key) {
                    texts(inner, out);
                }
            }
        }
        _ => {}
    }
}

/// The field holding the system prompt of a body whose system prompt is a field.
fn system_field(provider: Format, rest: &Fields) -> Option<&'static str> {
    match provider {
        Format::OpenAiChat => None,
        Format::OpenAiResponses => Some("instructions"),
        Format::AnthropicMessages => Some("system"),
        Format::Gemini if rest.contains_key("system_instruction") => Some("system_instruction"),
        Format::Gemini => Some("systemInstruction"),
    }
}

fn system_text(provider: Format, rest: &Fields, leading: &[Box<RawValue>]) -> String {
    let mut out = Vec::new();
    match system_field(provider, rest) {
        None => leading
            .iter()
            .for_each(|item| texts(&value(item), &mut out)),
        Some(field) => {
            if let Some(raw) = rest.get(field) {
                texts(&value(raw), &mut out);
            }
        }
    }
    out.join("\n")
}

fn max_output_tokens(provider: Format, rest: &Fields) -> Option<i64> {
    let number = |raw: &RawValue| raw.get().parse::<i64>().ok();
    let keys: &[&str] = match provider {
        Format::OpenAiChat => &["max_completion_tokens", "max_tokens"],
        Format::OpenAiResponses => &["max_output_tokens"],
        Format::AnthropicMessages => &["max_tokens"],
        Format::Gemini => {
            let config = rest
                .get("generationConfig")
                .or_else(|| rest.get("generation_config"))?;
            let config = value(config);
            let tokens = config
                .get("maxOutputTokens")
                .or_else(|| config.get("max_output_tokens"));
            return tokens.and_then(Value::as_i64);
        }
    };
    keys.iter()
        .find_map(|key| rest.get(*key).and_then(|raw| number(raw)))
}

/// The body to send upstream: the client's, with the history ctxd built (the history
/// field of `built`, a body `render::body` wrote) and, when the build put summaries in
/// the system prompt, `extra_system` added after the client's own system text; `tools`,
/// when given, in place of the client's (see [`offering`]).
pub fn merge(
    request: &ClientRequest,
    built: &str,
    extra_system: Option<&str>,
    tools: Option<&RawValue>,
) -> String {
    let field = history_field(request.provider);
    let built: BTreeMap<&str, &RawValue> = serde_json::from_str(built).unwrap_or_default();
    let history = built.get(field).map_or("[]", |raw| raw.get());
    let cached;
    let history = if request.caches_history {
        cached = with_cache_breakpoint(history);
        cached.as_str()
    } else {
        history
    };
    let mut leading: Vec<String> = request
        .leading
        .iter()
        .map(|item| item.get().to_string())
        .collect();
    let mut system = None;
    match (system_field(request.provider, &request.rest), extra_system) {
        (None, Some(extra)) => {
            leading.push(json!({"role": "system", "content": extra}).to_string())
        }
        (Some(name), Some(extra)) => {
            let old = request.rest.get(name).map_or(Value::Null, |raw| value(raw));
            system = Some((name, with_system(request.provider, old, extra).to_string()));
        }
        (_, None) => {}
    }
    let mut out = String::with_capacity(history.len() + 1024);
    out.push('{');
    for (key, raw) in &request.rest {
        if system.as_ref().is_some_and(|(name, _)| name == key)
            || (tools.is_some() && key == "tools")
        {
            continue;
        }
        push_field(&mut out, key, raw.get());
    }
    if let Some(tools) = tools {
        push_field(&mut out, "tools", tools.get());
    }
    if let Some((name, text)) = &system {
        push_field(&mut out, name, text);
    }
    out.push_str(&serde_json::to_string(field).unwrap_or_default());
    out.push(':');
    out.push('[');
    out.push_str(&leading.join(","));
    let inner = history.trim();
    let inner = inner
        .strip_prefix('[')
        .and_then(|inner| inner.strip_suffix(']'))
        .unwrap_or("")
        .trim();
    if !leading.is_empty() && !inner.is_empty() {
        out.push(',');
    }
    out.push_str(inner);
    out.push_str("]}");
    out
}

/// An Anthropic history with a prompt-cache breakpoint on the last block of its last
/// message: what the client marked in its own history ctxd rebuilt, so the provider
/// caches the conversation, not only the system prompt and tools.
fn with_cache_breakpoint(history: &str) -> String {
    let Ok(mut messages) = serde_json::from_str::<Vec<Box<RawValue>>>(history) else {
        return history.to_string();
    };
    let Some(last) = messages.last_mut() else {
        return history.to_string();
    };
    let mut message = value(last);
    let breakpoint = json!({"type": "ephemeral"});
    match message.get_mut("content") {
        Some(Value::String(text)) => {
            let block = json!([{"type": "text", "text": text, "cache_control": breakpoint}]);
            message["content"] = block;
        }
        Some(Value::Array(blocks)) => match blocks.last_mut() {
            Some(Value::Object(block)) => {
                block.insert("cache_control".into(), breakpoint);
            }
            _ => return history.to_string(),
        },
        _ => return history.to_string(),
    }
    match RawValue::from_string(message.to_string()) {
        Ok(raw) => *last = raw,
        Err(_) => return history.to_string(),
    }
    join(&messages)
}

fn push_field(out: &mut String, key: &str, raw: &str) {
    out.push_str(&serde_json::to_string(key).unwrap_or_default());
    out.push(':');
    out.push_str(raw);
    out.push(',');
}

/// A system prompt field with `extra` after the client's own text.
fn with_system(provider: Format, old: Value, extra: &str) -> Value {
    match provider {
        Format::AnthropicMessages => {
            let block = json!({"type": "text", "text": extra});
            match old {
                Value::String(text) => json!([{"type": "text", "text": text}, block]),
                Value::Array(mut blocks) => {
                    blocks.push(block);
                    Value::Array(blocks)
                }
                _ => json!([block]),
            }
        }
        Format::OpenAiResponses => match old.as_str() {
            Some(text) if !text.is_empty() => Value::String(format!("{text}\n\n{extra}")),
            _ => Value::String(extra.to_string()),
        },
        Format::Gemini => {
            let mut old = if old.is_object() { old } else { json!({}) };
            let part = json!({"text": extra});
            match old.get_mut("parts").and_then(Value::as_array_mut) {
                Some(parts) => parts.push(part),
                None => old["parts"] = json!([part]),
            }
            old
        }
        Format::OpenAiChat => old,
    }
}

#[cfg(test)]
mod tests;
