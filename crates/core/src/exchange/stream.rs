//! The final response of a streamed reply, assembled from its server-sent events as they
//! pass through to the client, in the shape `ingest::response` reads:
//!
//! - Anthropic: `message_start` gives the message, `content_block_*` its blocks (text,
//!   thinking with its signature, tool_use whose input arrives as JSON fragments),
//!   `message_delta` the stop reason and the output usage;
//! - OpenAI Chat: the chunks' deltas joined per choice 0, tool calls by their index, the
//!   usage of the last chunk that has one;
//! - OpenAI Responses: the response that `response.completed` (or `.incomplete`) carries;
//! - Gemini: each chunk's parts in order (adjacent text fragments joined), the last
//!   usage.
//!
//! Events are read as they complete, so memory is the events of one reply; a reply above
//! [`MAX_BODY_BYTES`] is not assembled (the client's next request replays it).
use serde_json::{Map, Value, json};

use crate::format::Format;
use crate::ingest::MAX_BODY_BYTES;

#[derive(Debug)]
pub struct Assembler {
    provider: Format,
    /// Bytes of a line not yet ended.
    line: Vec<u8>,
    event: String,
    data: String,
    seen: usize,
    state: State,
}

#[derive(Debug, Default)]
struct State {
    message: Option<Value>,
    blocks: Vec<Value>,
    fragments: Vec<String>,
    content: String,
    reasoning: String,
    calls: Vec<(String, String, String)>,
    parts: Vec<Value>,
    usage: Option<Value>,
    done: Option<Value>,
}

impl Assembler {
    pub fn new(provider: Format) -> Assembler {
        Assembler {
            provider,
            line: Vec::new(),
            event: String::new(),
            data: String::new(),
            seen: 0,
            state: State::default(),
        }
    }

    /// Reads the next bytes of the stream, as they came.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.seen = self.seen.saturating_add(bytes.len());
        if self.seen > MAX_BODY_BYTES {
            return;
        }
        for &byte in bytes {
            if byte != b'\n' {
                self.line.push(byte);
                continue;
            }
            let line = std::mem::take(&mut self.line);
            let line = String::from_utf8_lossy(&line);
            self.line_done(line.trim_end_matches('\r'));
        }
    }

    fn line_done(&mut self, line: &str) {
        if line.is_empty() {
            let event = std::mem::take(&mut self.event);
            let data = std::mem::take(&mut self.data);
            if !data.is_empty() {
                self.dispatch(&event, &data);
            }
        } else if let Some(value) = line.strip_prefix("data:") {
            if !self.data.is_empty() {
                self.data.push('\n');
            }
            self.data.push_str(value.strip_prefix(' ').unwrap_or(value));
        } else if let Some(value) = line.strip_prefix("event:") {
            self.event = value.trim().to_string();
        }
    }

    fn dispatch(&mut self, event: &str, data: &str) {
        let Ok(value) = serde_json::from_str::<Value>(data) else {
            return; // `[DONE]` and the like
        };
        let state = &mut self.state;
        match self.provider {
            Format::AnthropicMessages => anthropic(state, event, value),
            Format::OpenAiChat => openai_chat(state, value),
            Format::OpenAiResponses => {
                let kind = value.get("type").and_then(Value::as_str).unwrap_or(event);
                if matches!(kind, "response.completed" | "response.incomplete") {
                    state.done = value.get("response").cloned();
                }
            }
            Format::Gemini => gemini(state, value),
        }
    }

    /// The whole response, when the stream held one.
    pub fn finish(mut self) -> Option<String> {
        if self.seen > MAX_BODY_BYTES {
            return None;
        }
        if !self.data.is_empty() {
            let (event, data) = (
                std::mem::take(&mut self.event),
                std::mem::take(&mut self.data),
            );
            self.dispatch(&event, &data);
        }
        let state = self.state;
        let body = match self.provider {
            Format::AnthropicMessages => {
                let mut message = state.message?;
                message["content"] = Value::Array(state.blocks);
                if let Some(usage) = state.usage {
                    merge_object(&mut message["usage"], usage);
                }
                message
            }
            Format::OpenAiChat => chat_completion(state),
            Format::OpenAiResponses => state.done?,
            Format::Gemini => {
                let mut body =
                    json!({"candidates": [{"content": {"role": "model", "parts": state.parts}}]});
                if let Some(usage) = state.usage {
                    body["usageMetadata"] = usage;
                }
                body
            }
        };
        Some(body.to_string())
    }
}

fn merge_object(into: &mut Value, from: Value) {
    match (into, from) {
        (Value::Object(into), Value::Object(from)) => {
            for (key, value) in from {
                if !value.is_null() {
                    into.insert(key, value);
                }
            }
        }
        (into, from) => *into = from,
    }
}

fn anthropic(state: &mut State, event: &str, value: Value) {
    let kind = value
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or(event)
        .to_string();
    let index = value.get("index").and_then(Value::as_u64).unwrap_or(0) as usize;
    match kind.as_str() {
        "message_start" => state.message = value.get("message").cloned(),
        "content_block_start" => {
            let mut block = value.get("content_block").cloned().unwrap_or(Value::Null);
            if block.get("type").and_then(Value::as_str) == Some("tool_use") {
                block["input"] = json!({});
            }
            while state.blocks.len() <= index {
                state.blocks.push(Value::Null);
                state.fragments.push(String::new());
            }
            state.blocks[index] = block;
        }
        "content_block_delta" => {
            let (Some(block), Some(delta)) = (state.blocks.get_mut(index), value.get("delta"))
            else {
                return;
            };
            anthropic_delta(block, &mut state.fragments[index], delta);
        }
        "content_block_stop" => {
            let fragment = state.fragments.get(index).map_or("", String::as_str);
            if let Some(block) = state.blocks.get_mut(index)
                && !fragment.is_empty()
                && let Ok(input) = serde_json::from_str::<Value>(fragment)
            {
                block["input"] = input;
            }
        }
        "message_delta" => {
            if let Some(reason) = value.pointer("/delta/stop_reason")
                && let Some(message) = state.message.as_mut()
            {
                message["stop_reason"] = reason.clone();
            }
            if let Some(usage) = value.get("usage") {
                state.usage = Some(usage.clone());
            }
        }
        _ => {}
    }
}

fn anthropic_delta(block: &mut Value, fragment: &mut String, delta: &Value) {
    let text = |key| delta.get(key).and_then(Value::as_str).unwrap_or("");
    let mut append = |key: &str, more: &str| {
        let old = block.get(key).and_then(Value::as_str).unwrap_or("");
        block[key] = Value::String(format!("{old}{more}"));
    };
    match delta.get("type").and_then(Value::as_str).unwrap_or("") {
        "text_delta" => append("text", text("text")),
        "thinking_delta" => append("thinking", text("thinking")),
        "signature_delta" => block["signature"] = Value::String(text("signature").into()),
        "input_json_delta" => fragment.push_str(text("partial_json")),
        _ => {}
    }
}

fn openai_chat(state: &mut State, value: Value) {
    if state.message.is_none() {
        state.message = Some(json!({
            "id": value.get("id").cloned().unwrap_or(Value::Null),
            "model": value.get("model").cloned().unwrap_or(Value::Null),
        }));
    }
    if let Some(usage) = value.get("usage").filter(|usage| !usage.is_null()) {
        state.usage = Some(usage.clone());
    }
    let Some(delta) = value.pointer("/choices/0/delta") else {
        return;
    };
    let text = |key| delta.get(key).and_then(Value::as_str).unwrap_or("");
    state.content.push_str(text("content"));
    state.reasoning.push_str(text("reasoning_content"));
    for call in delta
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let index = call.get("index").and_then(Value::as_u64).unwrap_or(0) as usize;
        while state.calls.len() <= index {
            state.calls.push(Default::default());
        }
        let slot = &mut state.calls[index];
        let field = |pointer| call.pointer(pointer).and_then(Value::as_str).unwrap_or("");
        slot.0.push_str(field("/id"));
        slot.1.push_str(field("/function/name"));
        slot.2.push_str(field("/function/arguments"));
    }
}

fn chat_completion(state: State) -> Value {
    let mut message = Map::new();
    message.insert("role".into(), json!("assistant"));
    message.insert(
        "content".into(),
        if state.content.is_empty() {
            Value::Null
        } else {
            Value::String(state.content)
        },
    );
    if !state.reasoning.is_empty() {
        message.insert("reasoning_content".into(), Value::String(state.reasoning));
    }
    if !state.calls.is_empty() {
        let calls: Vec<Value> = state
            .calls
            .into_iter()
            .map(|(id, name, arguments)| {
                json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
            })
            .collect();
        message.insert("tool_calls".into(), Value::Array(calls));
    }
    let mut body = state.message.unwrap_or_else(|| json!({}));
    body["object"] = json!("chat.completion");
    body["choices"] = json!([{"index": 0, "message": message}]);
    if let Some(usage) = state.usage {
        body["usage"] = usage;
    }
    body
}

fn gemini(state: &mut State, value: Value) {
    if let Some(usage) = value.get("usageMetadata") {
        state.usage = Some(usage.clone());
    }
    let parts = value
        .pointer("/candidates/0/content/parts")
        .and_then(Value::as_array);
    for part in parts.into_iter().flatten() {
        let joinable = |part: &Value| {
            part.get("text").is_some_and(Value::is_string)
                && part
                    .as_object()
                    .is_some_and(|map| map.keys().all(|key| key == "text" || key == "thought"))
        };
        if let Some(last) = state.parts.last_mut()
            && joinable(last)
            && joinable(part)
            && last.get("thought") == part.get("thought")
        {
            let more = part["text"].as_str().unwrap_or("");
            let old = last["text"].as_str().unwrap_or("").to_string();
            last["text"] = Value::String(old + more);
            continue;
        }
        state.parts.push(part.clone());
    }
}
