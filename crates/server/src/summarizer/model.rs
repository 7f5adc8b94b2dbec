//! Summarizers behind a model API: any OpenAI-compatible Chat Completions endpoint
//! (OpenAI, vLLM, Ollama, llama.cpp server, LiteLLM…) or the Anthropic Messages API.
//! A response is untrusted input: its size is capped, its shape checked, and the text
//! cut to the target before it can become a summary.
use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::format::Format;
use crate::ingest;
use crate::message::{Message, Role};
use crate::metrics::{ModelAttributes, metrics};
use crate::summarize::Level;

/// The API a profile speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Api {
    /// The built-in extractive summarizer (no model, no network).
    Extractive,
    /// POST {base_url}/chat/completions.
    Openai,
    /// POST {base_url}/v1/messages.
    Anthropic,
}

/// A summarizer profile from the server's configuration (`[summarizers.NAME]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    pub api: Api,
    /// e.g. https://api.openai.com/v1, http://127.0.0.1:11434/v1, https://api.anthropic.com
    #[serde(default)]
    pub base_url: String,
    #[serde(default)]
    pub model: String,
    /// Environment variable holding the API key (read at start; never logged).
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// Per request.
    #[serde(default = "default_timeout_secs")]
    pub timeout_secs: f64,
    /// Retries of one request on 429 / 5xx / connection errors, with backoff.
    #[serde(default = "default_retries")]
    pub max_retries: u32,
    /// Largest response body read, in bytes.
    #[serde(default = "default_max_response_bytes")]
    pub max_response_bytes: usize,
    /// Largest transcript sent, in characters (the oldest part is cut first).
    #[serde(default = "default_max_input_chars")]
    pub max_input_chars: usize,
}

fn default_timeout_secs() -> f64 {
    60.0
}
fn default_retries() -> u32 {
    2
}
fn default_max_response_bytes() -> usize {
    256 * 1024
}
fn default_max_input_chars() -> usize {
    400_000
}

impl Profile {
    pub fn extractive() -> Profile {
        Profile {
            api: Api::Extractive,
            base_url: String::new(),
            model: String::new(),
            api_key_env: None,
            timeout_secs: default_timeout_secs(),
            max_retries: default_retries(),
            max_response_bytes: default_max_response_bytes(),
            max_input_chars: default_max_input_chars(),
        }
    }

    /// A sentence naming what is wrong, or Ok.
    pub fn validate(&self, name: &str) -> Result<(), String> {
        if self.api == Api::Extractive {
            return Ok(());
        }
        let field = |f: &str| format!("summarizers.{name}.{f}");
        if !(self.base_url.starts_with("http://") || self.base_url.starts_with("https://")) {
            return Err(format!(
                "{} must be an http:// or https:// URL, got {:?}",
                field("base_url"),
                self.base_url
            ));
        }
        if self.model.trim().is_empty() {
            return Err(format!("{} must name the model", field("model")));
        }
        if !(self.timeout_secs > 0.0 && self.timeout_secs.is_finite()) {
            return Err(format!("{} must be positive", field("timeout_secs")));
        }
        if self.max_response_bytes < 1024 {
            return Err(format!(
                "{} must be at least 1024",
                field("max_response_bytes")
            ));
        }
        if let Some(var) = &self.api_key_env
            && std::env::var(var).is_err()
        {
            return Err(format!(
                "{} names the environment variable {var}, which is not set",
                field("api_key_env")
            ));
        }
        Ok(())
    }
}

/// Why a model call did not produce a summary.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    #[error("the summarizer endpoint could not be reached: {0}")]
    Unreachable(String),
    #[error("the summarizer did not answer within {0:.1} s")]
    Timeout(f64),
    #[error("the summarizer answered HTTP {status}: {body}")]
    Status { status: u16, body: String },
    #[error("the summarizer's response was unusable: {0}")]
    Invalid(String),
}

impl CallError {
    /// The error's `error.type` in metrics.
    fn kind(&self) -> &'static str {
        match self {
            CallError::Unreachable(_) => "unreachable",
            CallError::Timeout(_) => "timeout",
            CallError::Status { .. } => "http_status",
            CallError::Invalid(_) => "invalid_response",
        }
    }

    fn retryable(&self) -> bool {
        match self {
            CallError::Unreachable(_) | CallError::Timeout(_) => true,
            CallError::Status { status, .. } => *status == 429 || *status >= 500,
            CallError::Invalid(_) => false,
        }
    }
}

/// A model-backed summarizer, ready to call.
#[derive(Debug)]
pub struct ModelSummarizer {
    profile: Profile,
    api_key: Option<String>,
    client: reqwest::Client,
    /// The profile's metric attributes (provider, model), built once.
    attributes: ModelAttributes,
}

/// What to summarize, owned (it crosses await points and threads).
#[derive(Debug, Clone)]
pub struct Request {
    pub messages: Vec<Message>,
    pub summaries: Vec<String>,
    pub previous: Option<String>,
    pub first_seq: i64,
    pub last_seq: i64,
    pub target_tokens: i64,
}

impl ModelSummarizer {
    /// The key comes from the profile's `api_key_env`.
    pub fn new(profile: Profile) -> Result<ModelSummarizer, String> {
        let api_key = profile
            .api_key_env
            .as_ref()
            .and_then(|var| std::env::var(var).ok());
        ModelSummarizer::with_key(profile, api_key)
    }

    pub fn with_key(profile: Profile, api_key: Option<String>) -> Result<ModelSummarizer, String> {
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs_f64(profile.timeout_secs))
            .connect_timeout(Duration::from_secs_f64(profile.timeout_secs.min(10.0)))
            .build()
            .map_err(|error| format!("HTTP client: {error}"))?;
        let provider = match profile.api {
            Api::Anthropic => "anthropic",
            Api::Openai | Api::Extractive => "openai",
        };
        Ok(ModelSummarizer {
            attributes: ModelAttributes::new(provider, &profile.model),
            profile,
            api_key,
            client,
        })
    }

    /// One summary at `level` (Normal or Aggressive), retrying transient failures.
    pub async fn summarize(&self, request: &Request, level: Level) -> Result<String, CallError> {
        let (url, body) = self.request_body(request, level);
        let mut attempt = 0;
        loop {
            match self.call(&url, &body).await {
                Ok(text) => return Ok(text),
                Err(error) if error.retryable() && attempt < self.profile.max_retries => {
                    attempt += 1;
                    let delay = Duration::from_millis(250 * (1 << attempt.min(6)));
                    tracing::debug!(%error, attempt, "summarizer request failed; retrying");
                    tokio::time::sleep(delay).await;
                }
                Err(error) => return Err(error),
            }
        }
    }

    fn request_body(&self, request: &Request, level: Level) -> (String, serde_json::Value) {
        let instructions = instructions(level, request.target_tokens);
        let transcript = transcript(request, self.profile.max_input_chars);
        // Room for the summary, in the API's unit (tokens), with some slack: the text
        // is cut to the target afterwards anyway.
        let max_tokens = (request.target_tokens * 5 / 4).max(64);
        let base = self.profile.base_url.trim_end_matches('/');
        match self.profile.api {
            Api::Anthropic => (
                format!("{base}/v1/messages"),
                serde_json::json!({
                    "model": self.profile.model,
                    "max_tokens": max_tokens,
                    "temperature": 0,
                    "system": instructions,
                    "messages": [{"role": "user", "content": transcript}],
                }),
            ),
            Api::Openai | Api::Extractive => (
                format!("{base}/chat/completions"),
                serde_json::json!({
                    "model": self.profile.model,
                    "max_tokens": max_tokens,
                    "temperature": 0,
                    "messages": [
                        {"role": "system", "content": instructions},
                        {"role": "user", "content": transcript},
                    ],
                }),
            ),
        }
    }

    /// One HTTP request, timed and counted (`gen_ai.client.*`, `ctxd.summarizer.calls`).
    async fn call(&self, url: &str, body: &serde_json::Value) -> Result<String, CallError> {
        let started = Instant::now();
        let result = self.post(url, body).await;
        let (error, usage) = match &result {
            Ok((_, usage)) => (None, *usage),
            Err(error) => (Some(error.kind()), None),
        };
        metrics().model_call(&self.attributes, started.elapsed(), error, usage);
        result.map(|(text, _)| text)
    }

    /// The model's answer and the (input, output) tokens it reported using.
    async fn post(
        &self,
        url: &str,
        body: &serde_json::Value,
    ) -> Result<(String, Option<(u64, u64)>), CallError> {
        let mut request = self
            .client
            .post(url)
            .header("content-type", "application/json")
            .body(body.to_string());
        if let Some(key) = &self.api_key {
            request = match self.profile.api {
                Api::Anthropic => request.header("x-api-key", key),
                _ => request.bearer_auth(key),
            };
        }
        if self.profile.api == Api::Anthropic {
            request = request.header("anthropic-version", "2023-06-01");
        }
        let timeout = self.profile.timeout_secs;
        let classify = |error: reqwest::Error| {
            if error.is_timeout() {
                CallError::Timeout(timeout)
            } else {
                CallError::Unreachable(without_url(&error))
            }
        };
        let mut response = request.send().await.map_err(classify)?;
        let status = response.status();
        let mut bytes: Vec<u8> = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(classify)? {
            bytes.extend_from_slice(&chunk);
            if bytes.len() > self.profile.max_response_bytes {
                return Err(CallError::Invalid(format!(
                    "the response exceeded {} bytes",
                    self.profile.max_response_bytes
                )));
            }
        }
        if !status.is_success() {
            let body: String = String::from_utf8_lossy(&bytes).chars().take(200).collect();
            return Err(CallError::Status {
                status: status.as_u16(),
                body,
            });
        }
        let body = std::str::from_utf8(&bytes)
            .map_err(|_| CallError::Invalid("the body is not UTF-8 text".into()))?;
        answer(self.profile.api, body)
    }
}

/// An error's text without the request URL (it may carry credentials in a query).
fn without_url(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    if let Some(url) = error.url() {
        text = text.replace(url.as_str(), "the endpoint");
    }
    text
}

/// The model's answer and the (input, output) tokens it reported, read by the core's
/// ingest of the API's response format (the one reader of provider bodies).
fn answer(api: Api, body: &str) -> Result<(String, Option<(u64, u64)>), CallError> {
    let format = match api {
        Api::Anthropic => Format::AnthropicMessages,
        Api::Openai | Api::Extractive => Format::OpenAiChat,
    };
    let read = ingest::response(format, body).map_err(|error| {
        let said: String = format!("{}: {}", error.path, error.reason)
            .chars()
            .take(200)
            .collect();
        CallError::Invalid(format!("the response is not the API's answer ({said})"))
    })?;
    let text: Vec<&str> = read
        .messages
        .iter()
        .filter(|message| message.role == Role::Assistant)
        .map(|message| message.content.trim())
        .filter(|text| !text.is_empty())
        .collect();
    let text = text.join("\n").replace('\0', "");
    if text.trim().is_empty() {
        return Err(CallError::Invalid("the answer is empty".into()));
    }
    let usage = read.usage.map(|usage| {
        let tokens = |count: i64| u64::try_from(count).unwrap_or_default();
        (tokens(usage.input_tokens), tokens(usage.output_tokens))
    });
    Ok((text.trim().to_string(), usage))
}

fn instructions(level: Level, target_tokens: i64) -> String {
    let focus = match level {
        Level::Normal => {
            "Keep: what the user asked for, decisions and their reasons, file paths, \
             commands run and their outcome, identifiers, errors seen and how they were \
             resolved, and open tasks."
        }
        _ => {
            "Be terse. Keep only durable facts, the current state of the work, file paths, \
             unresolved errors and the TODO list."
        }
    };
    format!(
        "You compress part of a conversation between a user and an AI agent that uses \
         tools, so the agent can carry on without it. Write a plain-text summary of at \
         most {target_tokens} tokens. {focus} Do not address the user; do not invent \
         anything; quote paths, commands and identifiers exactly."
    )
}

/// The span as text, newest part kept when it is too long.
fn transcript(request: &Request, max_chars: usize) -> String {
    let mut text = String::new();
    if let Some(previous) = &request.previous {
        text.push_str("Summary of what came before (for continuity; do not repeat it):\n");
        text.push_str(previous);
        text.push_str("\n\n");
    }
    if request.messages.is_empty() {
        text.push_str(&format!(
            "Summaries of messages {}-{} to merge into one:\n",
            request.first_seq, request.last_seq
        ));
        for summary in &request.summaries {
            text.push_str(summary);
            text.push_str("\n---\n");
        }
    } else {
        for summary in &request.summaries {
            text.push_str("Earlier steps, summarized:\n");
            text.push_str(summary);
            text.push('\n');
        }
        text.push_str(&format!(
            "Messages {}-{}:\n",
            request.first_seq, request.last_seq
        ));
        let names: HashMap<&str, &str> = request
            .messages
            .iter()
            .flat_map(|m| m.tool_calls.iter())
            .map(|call| (call.id.as_str(), call.name.as_str()))
            .collect();
        for message in &request.messages {
            match message.role {
                Role::Tool => {
                    let name = names
                        .get(message.tool_call_id.as_str())
                        .copied()
                        .unwrap_or("tool");
                    text.push_str(&format!("[tool result: {name}]\n"));
                }
                role => text.push_str(&format!("[{}]\n", role.as_str())),
            }
            if !message.content.is_empty() {
                text.push_str(&message.content);
                text.push('\n');
            }
            for call in &message.tool_calls {
                text.push_str(&format!("(calls {} {})\n", call.name, call.arguments));
            }
        }
    }
    if text.len() <= max_chars {
        return text;
    }
    // Keep the end: the newest messages matter most for carrying on.
    let mut start = text.len() - max_chars;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("[... earlier part omitted ...]\n{}", &text[start..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_and_usage_are_read_where_each_api_puts_them() {
        let openai = r#"{"id": "c1", "object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant", "content": "sum"}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 120, "completion_tokens": 30}}"#;
        assert_eq!(
            answer(Api::Openai, openai).unwrap(),
            ("sum".to_string(), Some((120, 30)))
        );
        let anthropic = r#"{"id": "m1", "type": "message", "role": "assistant", "content": [{"type": "thinking", "thinking": "x", "signature": "s"}, {"type": "text", "text": "sum"}], "usage": {"input_tokens": 90, "output_tokens": 12}}"#;
        assert_eq!(
            answer(Api::Anthropic, anthropic).unwrap(),
            ("sum".to_string(), Some((90, 12)))
        );
        let no_answer = r#"{"choices": []}"#;
        assert!(matches!(
            answer(Api::Openai, no_answer),
            Err(CallError::Invalid(_))
        ));
        assert!(matches!(
            answer(Api::Anthropic, r#"{"content": "x"}"#),
            Err(CallError::Invalid(_))
        ));
    }

    #[test]
    fn a_long_transcript_keeps_its_newest_part() {
        let request = Request {
            messages: vec![
                Message::text(Role::User, "old ".repeat(1000)),
                Message::text(Role::User, "newest request"),
            ],
            summaries: Vec::new(),
            previous: None,
            first_seq: 1,
            last_seq: 2,
            target_tokens: 100,
        };
        let text = transcript(&request, 500);
        assert!(text.len() < 600);
        assert!(text.ends_with("newest request\n"));
    }

    #[test]
    fn profiles_are_validated_naming_the_field() {
        let mut profile = Profile::extractive();
        profile.api = Api::Openai;
        profile.base_url = "ftp://x".into();
        let error = profile.validate("local").unwrap_err();
        assert!(error.contains("summarizers.local.base_url"), "{error}");
        profile.base_url = "http://127.0.0.1:1/v1".into();
        let error = profile.validate("local").unwrap_err();
        assert!(error.contains("summarizers.local.model"), "{error}");
    }
}
