//! A real HTTP server on 127.0.0.1 speaking the OpenAI Chat Completions and Anthropic
//! Messages APIs (or failing in the ways real endpoints fail), for the model-backed
//! summarizers to call. It records every request.
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;

/// What the server does with a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behavior {
    /// Answers as the API its path names.
    Answer,
    /// Answers HTTP 500.
    Status500,
    /// Answers 200 with a body that is not JSON.
    Garbage,
    /// Answers after this many ms (longer than the client waits).
    Slow(u64),
    /// The first request never gets an answer; later ones are answered.
    HangFirst,
    /// No request ever gets an answer.
    Hang,
    /// Nothing listens: connections are refused.
    Down,
}

/// A request as received.
#[derive(Debug, Clone)]
pub struct Seen {
    pub path: String,
    pub headers: HashMap<String, String>,
    pub body: serde_json::Value,
}

pub struct ModelServer {
    pub addr: std::net::SocketAddr,
    pub seen: Arc<Mutex<Vec<Seen>>>,
    /// Signalled at each request received.
    pub received: Arc<Notify>,
    task: tokio::task::JoinHandle<()>,
}

/// The text the server's model answers with.
pub const MODEL_SUMMARY: &str =
    "MODEL SUMMARY: the user asked for the notes; the agent read them with cat.";

impl ModelServer {
    pub async fn start(behavior: Behavior) -> ModelServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let received = Arc::new(Notify::new());
        let (seen2, received2) = (seen.clone(), received.clone());
        // Down: the listener is closed at once, so connections are refused.
        let listener = (behavior != Behavior::Down).then_some(listener);
        let task = tokio::spawn(async move {
            let Some(listener) = listener else {
                return;
            };
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let (seen, received) = (seen2.clone(), received2.clone());
                tokio::spawn(async move {
                    let _ = serve(stream, behavior, seen, received).await;
                });
            }
        });
        ModelServer {
            addr,
            seen,
            received,
            task,
        }
    }

    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// A ctxd config file's summarizer profile "model" on this server (its key read
    /// from CTXD_TEST_MODEL_KEY).
    pub fn profile_toml(&self) -> String {
        format!(
            "[summarizers.model]\napi = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"test-model\"\napi_key_env = \"CTXD_TEST_MODEL_KEY\"\ntimeout_secs = 30\n",
            self.base_url()
        )
    }

    pub fn requests(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve(
    mut stream: TcpStream,
    behavior: Behavior,
    seen: Arc<Mutex<Vec<Seen>>>,
    received: Arc<Notify>,
) -> std::io::Result<()> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 8192];
    let header_end = loop {
        let read = stream.read(&mut chunk).await?;
        if read == 0 {
            return Ok(());
        }
        buffer.extend_from_slice(&chunk[..read]);
        if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
    };
    let head = String::from_utf8_lossy(&buffer[..header_end]).to_string();
    let mut lines = head.lines();
    let path = lines
        .next()
        .and_then(|line| line.split_whitespace().nth(1))
        .unwrap_or("")
        .to_string();
    let headers: HashMap<String, String> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let length: usize = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    while buffer.len() < header_end + length {
        let read = stream.read(&mut chunk).await?;
        if read == 0 {
            break;
        }
        buffer.extend_from_slice(&chunk[..read]);
    }
    let body = serde_json::from_slice(&buffer[header_end..]).unwrap_or(serde_json::Value::Null);
    let first = {
        let mut seen = seen.lock().unwrap();
        seen.push(Seen {
            path: path.clone(),
            headers,
            body,
        });
        seen.len() == 1
    };
    received.notify_one();
    let (status, body) = match behavior {
        Behavior::Status500 => (
            "500 Internal Server Error",
            r#"{"error":"overloaded"}"#.to_string(),
        ),
        Behavior::Garbage => ("200 OK", "<html>this is not an API</html>".to_string()),
        Behavior::Slow(ms) => {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            ("200 OK", answer(&path))
        }
        Behavior::Hang | Behavior::HangFirst if behavior == Behavior::Hang || first => {
            // Held until the client goes away.
            let mut sink = [0u8; 64];
            while stream.read(&mut sink).await? > 0 {}
            return Ok(());
        }
        Behavior::Answer | Behavior::HangFirst => ("200 OK", answer(&path)),
        Behavior::Hang => unreachable!("held above"),
        Behavior::Down => unreachable!("nothing listens"),
    };
    let response = format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(response.as_bytes()).await?;
    stream.shutdown().await
}

fn answer(path: &str) -> String {
    if path.ends_with("/v1/messages") {
        serde_json::json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
            "content": [{"type": "text", "text": MODEL_SUMMARY}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 100, "output_tokens": 20}
        })
        .to_string()
    } else {
        serde_json::json!({
            "id": "chatcmpl-1", "object": "chat.completion", "model": "test-model",
            "choices": [{"index": 0, "finish_reason": "stop",
                "message": {"role": "assistant", "content": MODEL_SUMMARY}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
        })
        .to_string()
    }
}
