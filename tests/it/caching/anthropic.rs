//! A fake Anthropic Messages server that caches prompts as Anthropic documents it: only
//! up to a block marked `cache_control` (at most 4 per request, never on a thinking
//! block or an empty text), a prefix of at least 1 024 tokens, and a later request
//! reads the longest cached prefix ending at one of its breakpoints or up to 20 blocks
//! before one. It answers each request with the usage Anthropic would report
//! (`input_tokens`, `cache_creation_input_tokens`, `cache_read_input_tokens`) and records
//! what broke the rules.
use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Response;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// Anthropic's smallest cacheable prompt (Claude Sonnet), in tokens.
const MIN_CACHEABLE: i64 = 1024;
/// Blocks before a breakpoint a cache lookup also tries.
const LOOKBACK: usize = 20;

/// One request's input, as Anthropic bills it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub input: i64,
    pub written: i64,
    pub read: i64,
}

impl Usage {
    pub fn total(&self) -> i64 {
        self.input + self.written + self.read
    }
}

#[derive(Default)]
pub struct Cache {
    entries: HashMap<[u8; 32], i64>,
    pub violations: Vec<String>,
    pub usages: Vec<Usage>,
}

/// A block of the prompt in cache order (tools, system, messages): its text without
/// the marker, whether it is marked, and what it is.
struct Block {
    text: String,
    marked: bool,
    kind: String,
}

fn blocks(body: &Value) -> Vec<Block> {
    let block = |value: &Value, prefix: &str| {
        let mut plain = value.clone();
        let marked = plain
            .as_object_mut()
            .and_then(|map| map.remove("cache_control"))
            .is_some();
        let kind = value["type"].as_str().unwrap_or("tool").to_string();
        let text = format!("{prefix}{plain}");
        Block { text, marked, kind }
    };
    let mut out: Vec<Block> = (body["tools"].as_array().into_iter().flatten())
        .map(|tool| block(tool, "tool:"))
        .collect();
    match &body["system"] {
        Value::String(text) => out.push(block(&json!({"type": "text", "text": text}), "system:")),
        Value::Array(items) => out.extend(items.iter().map(|item| block(item, "system:"))),
        _ => {}
    }
    for (index, message) in body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let prefix = format!("{index}:{}:", message["role"]);
        match &message["content"] {
            Value::String(text) => out.push(block(&json!({"type": "text", "text": text}), &prefix)),
            Value::Array(items) => out.extend(items.iter().map(|item| block(item, &prefix))),
            _ => {}
        }
    }
    out
}

impl Cache {
    /// Bills one request body, caching at its breakpoints.
    pub fn request(&mut self, body: &Value) -> Usage {
        let counter = ctxd::policy::Policy::default().counter();
        let blocks = blocks(body);
        let n = self.usages.len() + 1;
        let marks: Vec<usize> = (0..blocks.len()).filter(|&i| blocks[i].marked).collect();
        if marks.len() > 4 {
            self.violations
                .push(format!("request {n}: {} breakpoints", marks.len()));
        }
        for &i in &marks {
            let kind = &blocks[i].kind;
            if kind == "thinking"
                || kind == "redacted_thinking"
                || blocks[i].text.ends_with(r#""text":""}"#)
            {
                self.violations
                    .push(format!("request {n}: a breakpoint on a {kind} block"));
            }
        }
        let mut hash = Sha256::new();
        let (mut prefixes, mut tokens) = (Vec::new(), Vec::new());
        let mut total = 0;
        for block in &blocks {
            hash.update(block.text.as_bytes());
            prefixes.push(<[u8; 32]>::from(hash.clone().finalize()));
            total += counter.text(&block.text);
            tokens.push(total);
        }
        let read = marks
            .iter()
            .filter_map(|&p| {
                (p.saturating_sub(LOOKBACK)..=p)
                    .rev()
                    .find_map(|q| self.entries.get(&prefixes[q]).copied())
            })
            .max()
            .unwrap_or(0);
        let last = marks.last().map_or(0, |&p| tokens[p]);
        let written = if last >= MIN_CACHEABLE {
            (last - read).max(0)
        } else {
            0
        };
        for &p in &marks {
            if tokens[p] >= MIN_CACHEABLE {
                self.entries.insert(prefixes[p], tokens[p]);
            }
        }
        let usage = Usage {
            input: total - read - written,
            written,
            read,
        };
        self.usages.push(usage);
        usage
    }
}

/// The fake on loopback: `POST /v1/messages` bills the body and answers a text reply
/// with that usage.
pub async fn start(cache: Arc<Mutex<Cache>>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let cache = cache.clone();
            let service = hyper::service::service_fn(
                move |request: hyper::Request<hyper::body::Incoming>| {
                    let cache = cache.clone();
                    async move {
                        let bytes = request.into_body().collect().await.unwrap().to_bytes();
                        let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
                        let usage = cache.lock().unwrap().request(&body);
                        let reply = json!({"id": "msg_cache", "type": "message", "role": "assistant",
                        "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
                        "usage": {"input_tokens": usage.input, "output_tokens": 1,
                            "cache_creation_input_tokens": usage.written,
                            "cache_read_input_tokens": usage.read}});
                        Ok::<_, Infallible>(Response::new(Full::new(Bytes::from(
                            reply.to_string(),
                        ))))
                    }
                },
            );
            tokio::spawn(
                hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service),
            );
        }
    });
    url
}
