//! A fake provider on loopback playing a scripted model for the agents, in the
//! Anthropic Messages (streamed, as Claude Code asks) and OpenAI Chat Completions shapes.
//! It checks every request it receives: provider-valid (every tool call answered right
//! after it, no result without its call), within the window (counted here, with the
//! default policy's tokenizer, over every text the body holds), and whether it extends
//! the previous request of its conversation (its prompt-cache prefix held) or restarts
//! it.
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// One scripted step: a tool call (name, input) or, last, the final text.
#[derive(Debug, Clone)]
pub enum Step {
    Call(&'static str, Value),
    Answer(&'static str),
    /// ctxd_recall_expand of the first hit a recall search answered (its `seq N (`).
    ExpandFound,
    /// A call of the tool `name` with `{key: word}`, the word of the request's newest
    /// text that starts with `prefix`: the model acting on what it read.
    CallWithFound(&'static str, &'static str, &'static str),
}

/// What the model does at a step, the request read.
#[derive(Debug, Clone)]
pub enum Move {
    Call(&'static str, Value),
    Answer(&'static str),
}

/// What the fake saw.
#[derive(Debug, Default)]
pub struct Record {
    /// Model requests answered from the script (with tools).
    pub requests: usize,
    /// Requests whose history did not start with the previous one's.
    pub restarts: usize,
    /// The largest request, as counted here.
    pub max_tokens: i64,
    /// What was wrong with requests, if anything.
    pub violations: Vec<String>,
    /// Anthropic requests with a prompt-cache breakpoint in their messages.
    pub history_breakpoints: usize,
    /// Requests refused for length.
    pub refused_for_length: usize,
    /// The last request's body.
    pub last_body: Value,
    /// Headers naming a provider key as the fake received them.
    pub keys_seen: Vec<String>,
    /// Per scripted request: whether its tools offered ctxd_recall_search, and whether
    /// its body held the options' `needle`.
    pub recall_offered: Vec<bool>,
    pub needle_seen: Vec<bool>,
    previous: Option<Vec<Value>>,
}

pub struct Fake {
    pub addr: SocketAddr,
    pub record: Arc<Mutex<Record>>,
}

struct State {
    script: Vec<Step>,
    window: i64,
    record: Arc<Mutex<Record>>,
    /// A streamed reply held after its first event until this fires (the streaming test).
    hold: Mutex<Option<tokio::sync::oneshot::Receiver<()>>>,
    too_long: Mutex<usize>,
    needle: Option<&'static str>,
}

pub type Body = BoxBody<Bytes, Infallible>;

/// How a fake misbehaves, for the endpoint's tests.
#[derive(Default)]
pub struct Options {
    /// Streamed replies send their first event, then wait for this.
    pub hold: Option<tokio::sync::oneshot::Receiver<()>>,
    /// The next this many model requests are refused for length, as Anthropic does.
    pub too_long: usize,
    /// A text whose presence in each scripted request is recorded.
    pub needle: Option<&'static str>,
}

impl Fake {
    pub async fn start(script: Vec<Step>, window: i64) -> Fake {
        Fake::start_with(script, window, Options::default()).await
    }

    pub async fn start_with(script: Vec<Step>, window: i64, options: Options) -> Fake {
        let record = Arc::new(Mutex::new(Record::default()));
        let state = Arc::new(State {
            script,
            window,
            record: record.clone(),
            hold: Mutex::new(options.hold),
            too_long: Mutex::new(options.too_long),
            needle: options.needle,
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let state = state.clone();
                let service = hyper::service::service_fn(move |request| {
                    let state = state.clone();
                    async move { Ok::<_, Infallible>(answer(&state, request).await) }
                });
                tokio::spawn(
                    hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service),
                );
            }
        });
        Fake { addr, record }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

async fn answer(state: &State, request: Request<Incoming>) -> Response<Body> {
    let path = request.uri().path().to_string();
    {
        let mut record = state.record.lock().unwrap();
        for name in ["x-api-key", "authorization"] {
            if let Some(value) = request.headers().get(name) {
                record
                    .keys_seen
                    .push(value.to_str().unwrap_or("").to_string());
            }
        }
    }
    let bytes = request.into_body().collect().await.unwrap().to_bytes();
    let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    {
        let mut too_long = state.too_long.lock().unwrap();
        if *too_long > 0 {
            *too_long -= 1;
            state.record.lock().unwrap().refused_for_length += 1;
            return json_response(
                400,
                json!({"type": "error", "error": {"type": "invalid_request_error",
                "message": "prompt is too long: 250000 tokens > 200000 maximum"}}),
            );
        }
    }
    if path.ends_with("/messages") {
        anthropic(state, &body).await
    } else if path.ends_with("/chat/completions") {
        openai_chat(state, &body)
    } else if path.ends_with("/responses") && body.get("tools").is_some() {
        responses_model(state, &body)
    } else if path.ends_with("/responses") {
        let input = body["input"].as_array().cloned().unwrap_or_default();
        check(state, &body, &input, Vec::new());
        responses(&body)
    } else if path.contains(":generateContent") || path.contains(":streamGenerateContent") {
        let contents = body["contents"].as_array().cloned().unwrap_or_default();
        check(state, &body, &contents, Vec::new());
        gemini(path.contains(":stream"))
    } else {
        json_response(404, json!({"error": {"message": "not here"}}))
    }
}

fn json_response(status: u16, body: Value) -> Response<Body> {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body.to_string())).boxed())
        .unwrap()
}

/// The step a request is at (one past the step of the newest tool result it carries)
/// and the id the step's call gets: `prefix` and the step's number. A step that reads
/// the request reads `body`.
fn next_step(
    state: &State,
    body: &Value,
    ids: impl Iterator<Item = String>,
    prefix: &str,
) -> (Move, String) {
    let last = ids
        .filter_map(|id| id.rsplit('s').next()?.parse::<usize>().ok())
        .last();
    let index = last.map_or(0, |step| step + 1);
    let step = state
        .script
        .get(index)
        .cloned()
        .unwrap_or(Step::Answer("script over"));
    (read(step, &body.to_string()), format!("{prefix}{index}"))
}

/// A step as a move: one that reads the request calls with what it found (or, finding
/// nothing, answers so).
fn read(step: Step, body: &str) -> Move {
    match step {
        Step::Call(name, input) => Move::Call(name, input),
        Step::Answer(text) => Move::Answer(text),
        Step::ExpandFound => match last_number_before(body, "seq ", " (") {
            Some(seq) => Move::Call(
                ctxd::recall::EXPAND,
                json!({"seqs": [seq], "max_tokens": 4000}),
            ),
            None => Move::Answer("no search hit to expand"),
        },
        Step::CallWithFound(name, key, prefix) => {
            let word = body.rfind(prefix).map(|at| {
                body[at..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                    .collect::<String>()
            });
            match word {
                Some(word) => Move::Call(name, json!({ key: word })),
                None => Move::Answer("nothing found to act on"),
            }
        }
    }
}

/// The last number written as `{before}N{after}` in `text`.
fn last_number_before(text: &str, before: &str, after: &str) -> Option<i64> {
    text.rmatch_indices(before).find_map(|(at, _)| {
        let rest = &text[at + before.len()..];
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let follows = rest[digits.len()..].starts_with(after);
        (!digits.is_empty() && follows).then(|| digits.parse().ok())?
    })
}

/// Every text a body holds, counted as the provider would read it, plus a few tokens
/// for each message and block.
fn tokens(value: &Value) -> i64 {
    let counter = ctxd::policy::Policy::default().counter();
    fn walk(value: &Value, counter: &ctxd::tokenize::Counter) -> i64 {
        match value {
            Value::String(text) => counter.text(text),
            Value::Array(items) => items.iter().map(|item| walk(item, counter)).sum(),
            Value::Object(map) => 3 + map.values().map(|item| walk(item, counter)).sum::<i64>(),
            _ => 1,
        }
    }
    walk(value, &counter)
}

/// Records the checks every request gets; `history` is its message list.
fn check(state: &State, body: &Value, history: &[Value], problems: Vec<String>) {
    let mut record = state.record.lock().unwrap();
    record.requests += 1;
    record.last_body = body.clone();
    let counted = tokens(body);
    record.max_tokens = record.max_tokens.max(counted);
    let n = record.requests;
    let text = body.to_string();
    record
        .recall_offered
        .push(body["tools"].to_string().contains(ctxd::recall::SEARCH));
    let needle = state.needle.is_some_and(|needle| text.contains(needle));
    record.needle_seen.push(needle);
    if counted > state.window {
        record.violations.push(format!(
            "request {n}: {counted} tokens, over the {} window",
            state.window
        ));
    }
    record
        .violations
        .extend(problems.into_iter().map(|p| format!("request {n}: {p}")));
    // Prompt-cache markers move from request to request; the prefix is the content.
    let history: Vec<Value> = history.iter().map(without_cache_markers).collect();
    if let Some(previous) = record.previous.take()
        && !(history.len() >= previous.len() && history[..previous.len()] == previous[..])
    {
        record.restarts += 1;
        if std::env::var_os("CTXD_FAKE_DEBUG").is_some() {
            let at = history
                .iter()
                .zip(&previous)
                .take_while(|(a, b)| a == b)
                .count();
            let clip =
                |v: Option<&Value>| v.map(|v| v.to_string().chars().take(400).collect::<String>());
            eprintln!(
                "restart at request {n}, message {at}:\n  was {:?}\n  now {:?}",
                clip(previous.get(at)),
                clip(history.get(at))
            );
        }
    }
    record.previous = Some(history);
}

async fn anthropic(state: &State, body: &Value) -> Response<Body> {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    if body.get("tools").is_none() {
        return anthropic_reply(
            state,
            body,
            json!([{"type": "text", "text": "ok"}]),
            "end_turn",
        )
        .await;
    }
    check(state, body, &messages, anthropic_problems(&messages));
    if Value::Array(messages.clone())
        .to_string()
        .contains("\"cache_control\"")
    {
        state.record.lock().unwrap().history_breakpoints += 1;
    }
    let results = messages
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default());
    let ids = results
        .filter(|b| b["type"] == "tool_result")
        .map(|b| b["tool_use_id"].as_str().unwrap_or("").to_string());
    let (step, id) = next_step(state, body, ids, "toolu_s");
    let (content, stop) = match step {
        Move::Call(name, input) => (
            json!([{"type": "text", "text": "Next step."}, {"type": "tool_use", "id": id, "name": name, "input": input}]),
            "tool_use",
        ),
        Move::Answer(text) => (json!([{"type": "text", "text": text}]), "end_turn"),
    };
    anthropic_reply(state, body, content, stop).await
}

/// Anthropic's rules: the first message is the user's; each assistant tool_use is
/// answered by a tool_result in the very next user message; no result without its call.
fn anthropic_problems(messages: &[Value]) -> Vec<String> {
    let mut problems = Vec::new();
    let turns: Vec<&Value> = messages.iter().filter(|m| m["role"] != "system").collect();
    if turns.first().is_none_or(|m| m["role"] != "user") {
        problems.push("the first message is not the user's".into());
    }
    let blocks = |m: &Value, kind: &str, key: &str| -> Vec<String> {
        m["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|b| b["type"] == kind)
            .map(|b| b[key].as_str().unwrap_or("").to_string())
            .collect()
    };
    for (index, message) in turns.iter().enumerate() {
        let results = blocks(message, "tool_result", "tool_use_id");
        let calls_before = index
            .checked_sub(1)
            .map(|i| blocks(turns[i], "tool_use", "id"))
            .unwrap_or_default();
        for id in &results {
            if !calls_before.contains(id) {
                problems.push(format!("tool_result {id} does not follow its tool_use"));
            }
        }
        let calls = blocks(message, "tool_use", "id");
        if let Some(next) = turns.get(index + 1) {
            let answered = blocks(next, "tool_result", "tool_use_id");
            for id in &calls {
                if !answered.contains(id) {
                    problems.push(format!("tool_use {id} is not answered in the next message"));
                }
            }
        } else if !calls.is_empty() {
            problems.push("the request ends with an unanswered tool_use".into());
        }
    }
    problems
}

async fn anthropic_reply(
    state: &State,
    body: &Value,
    content: Value,
    stop: &str,
) -> Response<Body> {
    let input = tokens(body);
    // Claude Code joins the streamed messages of one id: each reply has its own.
    let id = format!("msg_{}", state.record.lock().unwrap().requests);
    let message = json!({"id": id, "type": "message", "role": "assistant", "model": body["model"],
        "content": content, "stop_reason": stop, "stop_sequence": null,
        "usage": {"input_tokens": input, "output_tokens": 20}});
    if body["stream"] != json!(true) {
        return json_response(200, message);
    }
    let mut events = vec![(
        "message_start",
        json!({"type": "message_start", "message": {
        "id": id, "type": "message", "role": "assistant", "model": body["model"], "content": [],
        "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": input, "output_tokens": 1}}}),
    )];
    for (index, block) in content.as_array().unwrap().iter().enumerate() {
        let (start, delta) = if block["type"] == "tool_use" {
            (
                json!({"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}),
                json!({"type": "input_json_delta", "partial_json": block["input"].to_string()}),
            )
        } else {
            (
                json!({"type": "text", "text": ""}),
                json!({"type": "text_delta", "text": block["text"]}),
            )
        };
        events.push((
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        events.push((
            "content_block_delta",
            json!({"type": "content_block_delta", "index": index, "delta": delta}),
        ));
        events.push((
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
    }
    events.push(("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 20}})));
    events.push(("message_stop", json!({"type": "message_stop"})));
    let frames: Vec<Bytes> = events
        .into_iter()
        .map(|(event, data)| Bytes::from(format!("event: {event}\ndata: {data}\n\n")))
        .collect();
    let hold = state.hold.lock().unwrap().take();
    let (sender, receiver) = mpsc::channel::<Result<Frame<Bytes>, Infallible>>(frames.len());
    tokio::spawn(async move {
        let mut frames = frames.into_iter();
        if let Some(first) = frames.next() {
            let _ = sender.send(Ok(Frame::data(first))).await;
        }
        if let Some(hold) = hold {
            let _ = hold.await;
        }
        for frame in frames {
            let _ = sender.send(Ok(Frame::data(frame))).await;
        }
    });
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(StreamBody::new(tokio_stream::wrappers::ReceiverStream::new(receiver)).boxed())
        .unwrap()
}

fn openai_chat(state: &State, body: &Value) -> Response<Body> {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    check(state, body, &messages, openai_problems(&messages));
    let ids = messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["tool_call_id"].as_str().unwrap_or("").to_string());
    let (step, id) = next_step(state, body, ids, "call_s");
    let message = match step {
        Move::Call(name, input) => {
            json!({"role": "assistant", "content": "Next step.", "tool_calls": [
            {"id": id, "type": "function", "function": {"name": name, "arguments": input.to_string()}}]})
        }
        // Each answer its own text, so a client's histories tell replies apart.
        Move::Answer(text) => {
            let n = state.record.lock().unwrap().requests;
            json!({"role": "assistant", "content": format!("{text} ({n})")})
        }
    };
    let finish = if message.get("tool_calls").is_some() {
        "tool_calls"
    } else {
        "stop"
    };
    json_response(
        200,
        json!({"id": "chatcmpl-fake", "object": "chat.completion", "created": 1, "model": body["model"],
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": tokens(body), "completion_tokens": 20, "total_tokens": tokens(body) + 20}}),
    )
}

/// OpenAI's rules: each assistant message's tool calls are answered by the tool
/// messages right after it; no tool message without its call.
fn openai_problems(messages: &[Value]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut open: Vec<String> = Vec::new();
    for message in messages {
        if message["role"] == "tool" {
            let id = message["tool_call_id"].as_str().unwrap_or("").to_string();
            if !open.contains(&id) {
                problems.push(format!("tool message {id} does not follow its call"));
            }
            open.retain(|o| o != &id);
            continue;
        }
        if !open.is_empty() {
            problems.push(format!(
                "calls {open:?} are not answered before the next message"
            ));
            open.clear();
        }
        if let Some(calls) = message["tool_calls"].as_array() {
            open = calls
                .iter()
                .map(|c| c["id"].as_str().unwrap_or("").to_string())
                .collect();
        }
    }
    if !open.is_empty() {
        problems.push("the request ends with unanswered calls".into());
    }
    problems
}

/// A Responses reply of one text, streamed as its events when asked.
fn responses(body: &Value) -> Response<Body> {
    let response = json!({"id": "resp_1", "object": "response", "status": "completed", "output": [
        {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
         "content": [{"type": "output_text", "text": "responses reply", "annotations": []}]}],
        "usage": {"input_tokens": 30, "output_tokens": 3, "total_tokens": 33}});
    if body["stream"] != json!(true) {
        return json_response(200, response);
    }
    let events = [
        json!({"type": "response.created", "response": {"id": "resp_1", "object": "response", "status": "in_progress", "output": []}}),
        json!({"type": "response.output_text.delta", "delta": "responses reply"}),
        json!({"type": "response.completed", "response": response}),
    ];
    let text: String = events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect();
    sse(text)
}

/// A Gemini reply of one text, in two chunks when streamed.
fn gemini(stream: bool) -> Response<Body> {
    let chunk = |text: &str, usage: bool| {
        let mut chunk = json!({"candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "index": 0}]});
        if usage {
            chunk["usageMetadata"] =
                json!({"promptTokenCount": 30, "candidatesTokenCount": 3, "totalTokenCount": 33});
        }
        chunk
    };
    if !stream {
        return json_response(200, chunk("gemini reply", true));
    }
    sse(format!(
        "data: {}\r\n\r\ndata: {}\r\n\r\n",
        chunk("gemini ", false),
        chunk("reply", true)
    ))
}

fn sse(text: String) -> Response<Body> {
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(Full::new(Bytes::from(text)).boxed())
        .unwrap()
}

/// A value without its `cache_control` fields (prompt-cache markers move from request
/// to request; the content is what a cached prefix is).
pub fn without_cache_markers(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(key, _)| *key != "cache_control")
                .map(|(key, value)| (key.clone(), without_cache_markers(value)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_cache_markers).collect()),
        other => other.clone(),
    }
}

/// The scripted model in the Responses shape, streamed as Codex reads it: each step's
/// item announced and done, then the completed response.
fn responses_model(state: &State, body: &Value) -> Response<Body> {
    let input = body["input"].as_array().cloned().unwrap_or_default();
    check(state, body, &input, responses_problems(&input));
    let ids = input
        .iter()
        .filter(|item| item["type"] == "function_call_output")
        .map(|item| item["call_id"].as_str().unwrap_or("").to_string());
    let (step, call_id) = next_step(state, body, ids, "call_s");
    let n = state.record.lock().unwrap().requests;
    let item = match step {
        Move::Call(name, arguments) => json!({"type": "function_call", "id": format!("fc_{n}"),
            "call_id": call_id, "name": name,
            "arguments": arguments.to_string(), "status": "completed"}),
        Move::Answer(text) => {
            json!({"type": "message", "id": format!("msg_{n}"), "role": "assistant",
            "status": "completed", "content": [{"type": "output_text", "text": text, "annotations": []}]})
        }
    };
    let usage = json!({"input_tokens": tokens(body), "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": tokens(body) + 20});
    let response = json!({"id": format!("resp_{n}"), "object": "response", "status": "completed",
        "model": body["model"], "output": [item], "usage": usage});
    let mut started = response.clone();
    started["status"] = json!("in_progress");
    started["output"] = json!([]);
    let events = [
        json!({"type": "response.created", "response": started}),
        json!({"type": "response.output_item.added", "output_index": 0, "item": item}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        json!({"type": "response.completed", "response": response}),
    ];
    let text: String = events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect();
    sse(text)
}

/// Responses' rules: each function call answered by an output before the next message;
/// no output without its call.
fn responses_problems(input: &[Value]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut open: Vec<String> = Vec::new();
    let id = |item: &Value| item["call_id"].as_str().unwrap_or("").to_string();
    for item in input {
        match item["type"].as_str().unwrap_or("message") {
            "function_call" | "custom_tool_call" => open.push(id(item)),
            "function_call_output" | "custom_tool_call_output" => {
                if !open.contains(&id(item)) {
                    problems.push(format!("output {} does not follow its call", id(item)));
                }
                open.retain(|o| *o != id(item));
            }
            _ if !open.is_empty() => {
                problems.push(format!(
                    "calls {open:?} are not answered before the next item"
                ));
                open.clear();
            }
            _ => {}
        }
    }
    if !open.is_empty() {
        problems.push("the request ends with unanswered calls".into());
    }
    problems
}
