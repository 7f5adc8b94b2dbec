//! The provider endpoint's added latency: the same agent traffic sent straight to a fake
//! upstream and through ctxd's endpoint in front of it, alternating round by round, with
//! BuildMessages (gRPC, OPENAI_CHAT) of the same sessions beside them. 16 clients, each
//! holding a 200-message Chat Completions history that grows by its reply and a new
//! message with every request through ctxd (so each such request appends two messages
//! and builds); the direct requests carry the same history. Then the time to the first
//! streamed byte of an Anthropic request, direct and through ctxd.
use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use ctxd::engine::Engine;
use ctxd::pb;
use ctxd::pb::context_service_client::ContextServiceClient;
use ctxd::store::Store;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::Latencies;

pub struct ProxyScale {
    pub clients: usize,
    pub messages: usize,
    pub rounds: usize,
    /// Requests per client per arm per round.
    pub per_round: usize,
}

pub const FULL: ProxyScale = ProxyScale {
    clients: 16,
    messages: 200,
    rounds: 3,
    per_round: 20,
};
pub const SMOKE: ProxyScale = ProxyScale {
    clients: 2,
    messages: 20,
    rounds: 1,
    per_round: 2,
};

/// A fake provider answering at once: a short Chat Completion, or a short Anthropic
/// stream.
async fn fake_upstream() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let _ = stream.set_nodelay(true);
            let service = hyper::service::service_fn(
                |request: hyper::Request<hyper::body::Incoming>| async move {
                    let anthropic = request.uri().path().ends_with("/messages");
                    let _ = request.into_body().collect().await;
                    let (kind, body) = if anthropic {
                        ("text/event-stream", ANTHROPIC_STREAM.to_string())
                    } else {
                        ("application/json", CHAT_REPLY.to_string())
                    };
                    Ok::<_, Infallible>(
                        hyper::Response::builder()
                            .header("content-type", kind)
                            .body(Full::new(Bytes::from(body)))
                            .unwrap(),
                    )
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

const CHAT_REPLY: &str = r#"{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Noted; next."},"finish_reason":"stop"}],"usage":{"prompt_tokens":40000,"completion_tokens":4,"total_tokens":40004}}"#;
const ANTHROPIC_STREAM: &str = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"usage\":{\"input_tokens\":9,\"output_tokens\":1}}}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Noted.\"}}\n\nevent: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\nevent: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":3}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";

/// A history of `n` alternating user and assistant messages with the corpus's texts.
fn history(corpus: &[pb::Message], n: usize, client: usize) -> Vec<Value> {
    let texts: Vec<&str> = corpus
        .iter()
        .map(|m| m.content.as_str())
        .filter(|t| !t.is_empty())
        .collect();
    (0..n)
        .map(|i| {
            let role = if i % 2 == 0 { "user" } else { "assistant" };
            json!({"role": role, "content": format!("{}{}", texts[(i + client * 7) % texts.len()], if i == 0 { format!(" (client {client})") } else { String::new() })})
        })
        .collect()
}

async fn post(
    client: &reqwest::Client,
    url: &str,
    session: &str,
    body: &Value,
) -> (Duration, Value) {
    let started = Instant::now();
    let response = client
        .post(url)
        .header("content-type", "application/json")
        .header("x-ctxd-session", session)
        .body(body.to_string())
        .send()
        .await
        .expect("request");
    assert!(
        response.status().is_success(),
        "{url}: {}",
        response.status()
    );
    let bytes = response.bytes().await.expect("body");
    (
        started.elapsed(),
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

struct Client {
    http: reqwest::Client,
    session: String,
    messages: Vec<Value>,
    grpc: ContextServiceClient<tonic::transport::Channel>,
}

#[derive(Clone, Copy, PartialEq)]
enum Arm {
    Direct,
    Proxy,
    Build,
}

async fn one(client: &mut Client, arm: Arm, upstream: &str, proxy: &str) -> Duration {
    let body = json!({"model": "m", "messages": client.messages});
    match arm {
        Arm::Direct => {
            post(
                &client.http,
                &format!("{upstream}/v1/chat/completions"),
                &client.session,
                &body,
            )
            .await
            .0
        }
        Arm::Proxy => {
            let (took, reply) = post(
                &client.http,
                &format!("{proxy}/v1/chat/completions"),
                &client.session,
                &body,
            )
            .await;
            client.messages.push(reply["choices"][0]["message"].clone());
            client.messages.push(
                json!({"role": "user", "content": format!("go on ({})", client.messages.len())}),
            );
            took
        }
        Arm::Build => {
            let started = Instant::now();
            client
                .grpc
                .build_messages(pb::BuildMessagesRequest {
                    session_id: client.session.clone(),
                    format: pb::OutputFormat::OpenaiChat as i32,
                    ..Default::default()
                })
                .await
                .expect("BuildMessages");
            started.elapsed()
        }
    }
}

/// Runs `per_round` requests of `arm` on every client at once.
async fn arm_round(
    clients: Vec<Client>,
    arm: Arm,
    per_round: usize,
    upstream: &str,
    proxy: &str,
) -> (Vec<Client>, Vec<Duration>) {
    let tasks: Vec<_> = clients
        .into_iter()
        .map(|mut client| {
            let (upstream, proxy) = (upstream.to_string(), proxy.to_string());
            tokio::spawn(async move {
                let mut took = Vec::new();
                for _ in 0..per_round {
                    took.push(one(&mut client, arm, &upstream, &proxy).await);
                }
                (client, took)
            })
        })
        .collect();
    let mut clients = Vec::new();
    let mut all = Vec::new();
    for task in tasks {
        let (client, took) = task.await.unwrap();
        clients.push(client);
        all.extend(took);
    }
    (clients, all)
}

async fn first_byte(
    http: &reqwest::Client,
    url: &str,
    session: &str,
    messages: &[Value],
) -> Duration {
    let body = json!({"model": "m", "max_tokens": 100, "stream": true, "messages": messages});
    let started = Instant::now();
    let mut response = http
        .post(url)
        .header("content-type", "application/json")
        .header("x-ctxd-session", session)
        .body(body.to_string())
        .send()
        .await
        .expect("request");
    response
        .chunk()
        .await
        .expect("first chunk")
        .expect("a chunk");
    let took = started.elapsed();
    while response.chunk().await.expect("chunk").is_some() {}
    took
}

pub async fn run(
    addr: std::net::SocketAddr,
    engine: &Engine,
    store: &Store,
    corpus: &[pb::Message],
    scale: &ProxyScale,
) {
    let upstream = fake_upstream().await;
    let auth = Arc::new(
        ctxd::auth::Auth::new(store.clone(), true)
            .await
            .expect("auth"),
    );
    let upstreams = ctxd::proxy::Upstreams {
        openai: upstream.clone(),
        anthropic: upstream.clone(),
        gemini: upstream.clone(),
    };
    let proxy = Arc::new(ctxd::proxy::Proxy::new(
        engine.clone(),
        auth,
        upstreams,
        ctxd::proxy::Settings::new(64 << 20),
    ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxy_url = format!("http://{}", listener.local_addr().unwrap());
    let stop = CancellationToken::new();
    tokio::spawn(ctxd::proxy::serve(listener, proxy, None, stop.clone()));

    let mut clients = Vec::new();
    for c in 0..scale.clients {
        let mut client = Client {
            http: reqwest::Client::new(),
            session: format!("bench-proxy-{c}"),
            messages: history(corpus, scale.messages - 1, c),
            grpc: crate::client(addr).await,
        };
        // The first request appends the history and the reply: a 200-message session.
        one(&mut client, Arm::Proxy, &upstream, &proxy_url).await;
        clients.push(client);
    }
    let mut times = [Vec::new(), Vec::new(), Vec::new()];
    for _ in 0..scale.rounds {
        for (slot, arm) in [(0, Arm::Direct), (1, Arm::Proxy), (2, Arm::Build)] {
            let (back, took) =
                arm_round(clients, arm, scale.per_round, &upstream, &proxy_url).await;
            clients = back;
            times[slot].extend(took);
        }
    }
    let [direct, through, build] = times.map(Latencies);
    let (mut direct, mut through, mut build) = (direct, through, build);
    println!("## Provider endpoint: added latency\n");
    println!(
        "{} clients, Chat Completions histories of {} messages growing by two per request through ctxd; {} rounds alternating direct, through ctxd, BuildMessages (gRPC, OPENAI_CHAT) of the same sessions.\n",
        scale.clients, scale.messages, scale.rounds
    );
    println!("path | requests | p50 ms | p99 ms\n---|---|---|---");
    let row = |name: &str, l: &mut Latencies| {
        println!(
            "{name} | {} | {:.2} | {:.2}",
            l.0.len(),
            l.quantile_ms(0.5),
            l.quantile_ms(0.99)
        )
    };
    row("straight to the fake upstream", &mut direct);
    row("through ctxd's endpoint", &mut through);
    row("BuildMessages of the same sessions", &mut build);
    let added50 = through.quantile_ms(0.5) - direct.quantile_ms(0.5);
    let added99 = through.quantile_ms(0.99) - direct.quantile_ms(0.99);
    println!(
        "\nadded by the endpoint: p50 {added50:.2} ms, p99 {added99:.2} ms; BuildMessages' p50 + 1 ms = {:.2} ms\n",
        build.quantile_ms(0.5) + 1.0
    );

    // Time to the first streamed byte: Anthropic, a short history, one client at a time.
    let http = reqwest::Client::new();
    let short = vec![json!({"role": "user", "content": "Stream something."})];
    let (mut direct_first, mut proxy_first) = (Vec::new(), Vec::new());
    for round in 0..scale.rounds * scale.per_round {
        direct_first
            .push(first_byte(&http, &format!("{upstream}/v1/messages"), "direct", &short).await);
        let mut messages = short.clone();
        messages[0]["content"] = json!(format!("Stream something ({round})."));
        proxy_first.push(
            first_byte(
                &http,
                &format!("{proxy_url}/v1/messages"),
                &format!("bench-stream-{round}"),
                &messages,
            )
            .await,
        );
    }
    let (mut direct_first, mut proxy_first) = (Latencies(direct_first), Latencies(proxy_first));
    println!(
        "first streamed byte (Anthropic, new sessions) | requests | p50 ms | p99 ms\n---|---|---|---"
    );
    row("straight to the fake upstream", &mut direct_first);
    row("through ctxd's endpoint", &mut proxy_first);
    println!(
        "\nadded to the first byte: p50 {:.2} ms\n",
        proxy_first.quantile_ms(0.5) - direct_first.quantile_ms(0.5)
    );
    stop.cancel();
}
