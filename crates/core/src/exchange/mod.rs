//! A provider request as an unmodified agent sends it, taken apart and put back
//! together around ctxd: the history it carries (read by `ingest`), the system text and
//! tools it counts against the window, and everything else, kept verbatim for the
//! upstream. Pure; the provider endpoint (`src/proxy/`) runs it.
//!
//! - [`split`] takes a request body apart; [`merge`] puts the body ctxd built back into
//!   what the client sent, every non-message field as it came.
//! - [`reconcile`] compares the client's history with the stored session's, by
//!   [`fingerprint`]: an extension appends, a rewrite forks.
//! - `stream` assembles the final response from a streamed reply; `errors` writes the
//!   provider's own error shape.
use serde_json::{Map, Value};

use crate::ingest::{IngestError, Provider};

pub mod errors;
mod reconcile;
pub mod stream;

pub use reconcile::{Fingerprint, Reconciled, chain, fingerprint, reconcile};

/// A request body taken apart.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientRequest {
    pub provider: Provider,
    /// The body without its history (`messages`, `input`, `contents`), kept verbatim.
    pub rest: Map<String, Value>,
    /// The history as a JSON array of the provider's items, for `ingest::items`.
    pub history: String,
    /// OpenAI Chat: the system and developer messages the history starts with, sent back
    /// first, as they came.
    pub leading: Vec<Value>,
    /// The system prompt and the tool definitions as text, for counting.
    pub counted_text: String,
    /// The text of the system prompt alone (with the first user message it keys a
    /// session).
    pub system_text: String,
    /// The output the request asks for at most, when it says.
    pub max_output_tokens: Option<i64>,
    /// Whether the reply is streamed (Gemini says it in the path).
    pub stream: bool,
}

/// The history field of each provider's request body.
pub fn history_field(provider: Provider) -> &'static str {
    match provider {
        Provider::OpenAiChat | Provider::AnthropicMessages => "messages",
        Provider::OpenAiResponses => "input",
        Provider::Gemini => "contents",
    }
}

/// Takes a request body apart; `stream` is the path's say for Gemini.
pub fn split(provider: Provider, json: &str, stream: bool) -> Result<ClientRequest, IngestError> {
    let mut rest = match serde_json::from_str::<Value>(json) {
        Ok(Value::Object(map)) => map,
        Ok(_) => return Err(IngestError::new("$", "is not a JSON object")),
        Err(error) => {
            return Err(IngestError::new(
                "$",
                format!(
                    "is not valid JSON (line {}, column {})",
                    error.line(),
                    error.column()
                ),
            ));
        }
    };
    let field = history_field(provider);
    let mut history = match rest.remove(field) {
        Some(Value::Array(items)) => items,
        // The Responses API's easy form: one user message as a string.
        Some(Value::String(text)) if provider == Provider::OpenAiResponses => {
            vec![serde_json::json!({"role": "user", "content": text})]
        }
        Some(_) => {
            return Err(IngestError::new(format!("$.{field}"), "is not an array"));
        }
        None => return Err(IngestError::new(format!("$.{field}"), "is missing")),
    };
    let leading = match provider {
        Provider::OpenAiChat => take_leading_system(&mut history),
        _ => Vec::new(),
    };
    let system_text = system_text(provider, &rest, &leading);
    let tools = rest.get("tools").map(Value::to_string).unwrap_or_default();
    let counted_text = if tools.is_empty() {
        system_text.clone()
    } else {
        format!("{system_text}\n{tools}")
    };
    Ok(ClientRequest {
        provider,
        max_output_tokens: max_output_tokens(provider, &rest),
        stream: stream || rest.get("stream") == Some(&Value::Bool(true)),
        history: Value::Array(history).to_string(),
        rest,
        leading,
        counted_text,
        system_text,
    })
}

fn take_leading_system(history: &mut Vec<Value>) -> Vec<Value> {
    let count = history
        .iter()
        .take_while(|item| {
            matches!(
                item.get("role").and_then(Value::as_str),
                Some("system" | "developer")
            )
        })
        .count();
    history.drain(..count).collect()
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

fn system_text(provider: Provider, rest: &Map<String, Value>, leading: &[Value]) -> String {
    let mut out = Vec::new();
    match provider {
        Provider::OpenAiChat => leading.iter().for_each(|item| texts(item, &mut out)),
        Provider::OpenAiResponses => rest
            .get("instructions")
            .into_iter()
            .for_each(|v| texts(v, &mut out)),
        Provider::AnthropicMessages => rest
            .get("system")
            .into_iter()
            .for_each(|v| texts(v, &mut out)),
        Provider::Gemini => rest
            .get("systemInstruction")
            .or_else(|| rest.get("system_instruction"))
            .into_iter()
            .for_each(|v| texts(v, &mut out)),
    }
    out.join("\n")
}

fn max_output_tokens(provider: Provider, rest: &Map<String, Value>) -> Option<i64> {
    let keys: &[&str] = match provider {
        Provider::OpenAiChat => &["max_completion_tokens", "max_tokens"],
        Provider::OpenAiResponses => &["max_output_tokens"],
        Provider::AnthropicMessages => &["max_tokens"],
        Provider::Gemini => {
            let config = rest
                .get("generationConfig")
                .or_else(|| rest.get("generation_config"));
            return config
                .and_then(|config| {
                    config
                        .get("maxOutputTokens")
                        .or_else(|| config.get("max_output_tokens"))
                })
                .and_then(Value::as_i64);
        }
    };
    keys.iter()
        .find_map(|key| rest.get(*key).and_then(Value::as_i64))
}

/// The body to send upstream: the client's, with the history ctxd built (the history
/// field of `built`, a body `render::body` wrote) and, when the build put summaries in
/// the system prompt, `extra_system` added after the client's own system text.
pub fn merge(request: &ClientRequest, built: &str, extra_system: Option<&str>) -> String {
    let mut body = request.rest.clone();
    let field = history_field(request.provider);
    let mut history = match serde_json::from_str::<Value>(built) {
        Ok(Value::Object(mut map)) => match map.remove(field) {
            Some(Value::Array(items)) => items,
            _ => Vec::new(),
        },
        _ => Vec::new(),
    };
    if request.provider == Provider::OpenAiChat {
        let mut leading = request.leading.clone();
        if let Some(extra) = extra_system {
            leading.push(serde_json::json!({"role": "system", "content": extra}));
        }
        leading.append(&mut history);
        history = leading;
    } else if let Some(extra) = extra_system {
        add_system(request.provider, &mut body, extra);
    }
    body.insert(field.to_string(), Value::Array(history));
    Value::Object(body).to_string()
}

/// Adds `extra` after the system text of a body whose system prompt is a field.
fn add_system(provider: Provider, body: &mut Map<String, Value>, extra: &str) {
    match provider {
        Provider::AnthropicMessages => {
            let block = serde_json::json!({"type": "text", "text": extra});
            let system = match body.remove("system") {
                None | Some(Value::Null) => Value::Array(vec![block]),
                Some(Value::String(text)) => Value::Array(vec![
                    serde_json::json!({"type": "text", "text": text}),
                    block,
                ]),
                Some(Value::Array(mut blocks)) => {
                    blocks.push(block);
                    Value::Array(blocks)
                }
                Some(other) => other,
            };
            body.insert("system".into(), system);
        }
        Provider::OpenAiResponses => {
            let instructions = match body.get("instructions").and_then(Value::as_str) {
                Some(text) if !text.is_empty() => format!("{text}\n\n{extra}"),
                _ => extra.to_string(),
            };
            body.insert("instructions".into(), Value::String(instructions));
        }
        Provider::Gemini => {
            let key = if body.contains_key("system_instruction") {
                "system_instruction"
            } else {
                "systemInstruction"
            };
            let part = serde_json::json!({"text": extra});
            match body
                .get_mut(key)
                .and_then(|v| v.get_mut("parts"))
                .and_then(Value::as_array_mut)
            {
                Some(parts) => parts.push(part),
                None => {
                    body.insert(key.into(), serde_json::json!({"parts": [part]}));
                }
            }
        }
        Provider::OpenAiChat => {}
    }
}

#[cfg(test)]
mod tests;
