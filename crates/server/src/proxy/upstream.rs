//! The call upstream: the body ctxd built, with the client's own headers (its provider
//! credentials among them, passed on as they came and never kept), and its reply back to
//! the client as it arrives — a stream chunk by chunk, never buffered, unless a recall
//! round may follow (the stream is then held until it ends, so that the agent receives
//! only the final answer's) — while the response is assembled for the session.
use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use hyper::header::{HeaderMap, HeaderName};
use hyper::{Response, StatusCode};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

use super::answer::{Body, full, refusal};
use super::conversation::Conversation;
use super::{Proxy, route};
use crate::error::Result;
use crate::exchange::errors::{Kind, is_context_length};
use crate::exchange::stream::Assembler;
use crate::format::Format;
use crate::ingest::MAX_BODY_BYTES;

/// Chunks of a streamed reply queued for a slow client before the upstream is read
/// more slowly too.
const STREAM_QUEUE: usize = 64;

/// The request being forwarded: its head, and its format.
pub(super) struct Forward<'a> {
    pub parts: &'a hyper::http::request::Parts,
    pub provider: Format,
}

/// What the upstream answered.
pub(super) enum Reply {
    /// A success, read whole (a held stream too): the client's response and the
    /// response body to record.
    Whole(Response<Body>, Bytes),
    /// A success streaming: the client's response, its body fed by the pump.
    Streaming(Response<Body>, Box<Pump>),
    /// A refusal for length (the reactive path may compact and retry once).
    TooLong(Response<Body>),
    /// Anything else, passed through as it came.
    Done(Response<Body>),
}

/// A streamed reply on its way: the upstream's body and the client's.
pub(super) struct Pump {
    upstream: reqwest::Response,
    client: mpsc::Sender<std::result::Result<Frame<Bytes>, Infallible>>,
    /// What was read of the stream before it was passed on (a held stream too large to
    /// hold), and the assembly of it.
    prefix: Vec<Bytes>,
    assembler: Assembler,
}

/// Sends `body` upstream and sorts the reply; with `hold`, a stream is read to its end
/// before anything is passed on.
pub(super) async fn send(
    proxy: &Proxy,
    forward: &Forward<'_>,
    body: String,
    stream: bool,
    hold: bool,
) -> Result<Reply> {
    let upstream = match call(proxy, forward, body).await {
        Ok(upstream) => upstream,
        Err(response) => return Ok(Reply::Done(response)),
    };
    let status = upstream.status();
    let head = response_head(status, upstream.headers());
    if !status.is_success() {
        let bytes = read_bounded(upstream).await;
        let too_long = is_context_length(status.as_u16(), &String::from_utf8_lossy(&bytes));
        let response = with_body(head, full(bytes));
        return Ok(if too_long {
            Reply::TooLong(response)
        } else {
            Reply::Done(response)
        });
    }
    if !stream {
        let bytes = read_bounded(upstream).await;
        return Ok(Reply::Whole(with_body(head, full(bytes.clone())), bytes));
    }
    let assembler = Assembler::new(forward.provider);
    if hold {
        return Ok(held(head, upstream, assembler).await);
    }
    Ok(streaming(head, upstream, Vec::new(), assembler))
}

/// A stream passed on from where it stands.
fn streaming(
    head: hyper::http::response::Builder,
    upstream: reqwest::Response,
    prefix: Vec<Bytes>,
    assembler: Assembler,
) -> Reply {
    let (client, receiver) = mpsc::channel(STREAM_QUEUE);
    let body = StreamBody::new(ReceiverStream::new(receiver)).boxed();
    let pump = Pump {
        upstream,
        client,
        prefix,
        assembler,
    };
    Reply::Streaming(with_body(head, body), Box::new(pump))
}

/// A stream read to its end, then answered whole with the chunks as they came; one
/// over [`MAX_BODY_BYTES`] is passed on from there; one broken off goes to the client as
/// far as it came, unrecorded.
async fn held(
    head: hyper::http::response::Builder,
    mut upstream: reqwest::Response,
    mut assembler: Assembler,
) -> Reply {
    let mut chunks = Vec::new();
    let mut size = 0;
    loop {
        match upstream.chunk().await {
            Ok(Some(bytes)) => {
                assembler.feed(&bytes);
                size += bytes.len();
                chunks.push(bytes);
                if size > MAX_BODY_BYTES {
                    return streaming(head, upstream, chunks, assembler);
                }
            }
            Ok(None) => break,
            Err(_) => return Reply::Done(with_body(head, full(chunks.concat().into()))),
        }
    }
    let body = Bytes::from(chunks.concat());
    match assembler.finish() {
        Some(response) => Reply::Whole(with_body(head, full(body)), Bytes::from(response)),
        None => Reply::Done(with_body(head, full(body))),
    }
}

/// Forwards the request as the client sent it (Anthropic's count_tokens).
pub(super) async fn pass_through(
    proxy: &Proxy,
    forward: &Forward<'_>,
    body: Bytes,
) -> Response<Body> {
    match call(proxy, forward, body).await {
        Ok(upstream) => {
            let head = response_head(upstream.status(), upstream.headers());
            let bytes = read_bounded(upstream).await;
            with_body(head, full(bytes))
        }
        Err(response) => response,
    }
}

/// Passes a streamed reply to the client as it arrives, then records it. A client that
/// goes away, or an upstream that breaks off, leaves the reply unrecorded: the client's
/// next request carries whatever it kept.
pub(super) async fn record_stream(
    proxy: Arc<Proxy>,
    mut conversation: Conversation,
    provider: Format,
    pump: Box<Pump>,
) {
    if let Some(response) = pass_stream(&conversation.session_id, *pump).await {
        record(&proxy, &mut conversation, provider, &response).await;
    }
    conversation.finish(&proxy).await;
}

/// Passes a stream to the client; the whole response, when it came whole and the
/// client stayed.
async fn pass_stream(session_id: &str, pump: Pump) -> Option<String> {
    let Pump {
        mut upstream,
        client,
        prefix,
        mut assembler,
    } = pump;
    for bytes in prefix {
        client.send(Ok(Frame::data(bytes))).await.ok()?;
    }
    loop {
        match upstream.chunk().await {
            Ok(Some(bytes)) => {
                assembler.feed(&bytes);
                client.send(Ok(Frame::data(bytes))).await.ok()?;
            }
            Ok(None) => break,
            Err(_) => {
                tracing::info!(
                    session_id,
                    "provider endpoint: the upstream broke off a streamed reply"
                );
                return None;
            }
        }
    }
    drop(client);
    assembler.finish()
}

/// Records a reply read whole.
pub(super) async fn record_whole(
    proxy: Arc<Proxy>,
    mut conversation: Conversation,
    provider: Format,
    body: Bytes,
) {
    record(
        &proxy,
        &mut conversation,
        provider,
        &String::from_utf8_lossy(&body),
    )
    .await;
    conversation.finish(&proxy).await;
}

async fn record(proxy: &Proxy, conversation: &mut Conversation, provider: Format, body: &str) {
    if let Err(error) = conversation.record_reply(proxy, provider, body).await {
        tracing::warn!(session_id = %conversation.session_id, error = %error, "provider endpoint: the reply was not recorded; the client's next request carries it");
    }
}

async fn call(
    proxy: &Proxy,
    forward: &Forward<'_>,
    body: impl Into<reqwest::Body>,
) -> std::result::Result<reqwest::Response, Response<Body>> {
    let base = match forward.provider {
        Format::OpenAiChat | Format::OpenAiResponses => &proxy.upstreams.openai,
        Format::AnthropicMessages => &proxy.upstreams.anthropic,
        Format::Gemini => &proxy.upstreams.gemini,
    };
    let uri = &forward.parts.uri;
    let query = uri
        .query()
        .map(|query| format!("?{query}"))
        .unwrap_or_default();
    let url = format!(
        "{}{}{query}",
        base.trim_end_matches('/'),
        route::upstream_path(uri.path())
    );
    let request = proxy
        .client
        .post(url)
        .headers(request_headers(&forward.parts.headers))
        .body(body);
    request.send().await.map_err(|_| {
        tracing::warn!(upstream = %base, "provider endpoint: the upstream could not be reached");
        refusal(
            Some(forward.provider),
            Kind::BadGateway,
            "the upstream provider could not be reached",
        )
    })
}

/// Headers that belong to one connection, not to the request (and ctxd's own).
fn is_hop(name: &HeaderName) -> bool {
    matches!(
        name.as_str(),
        "host"
            | "content-length"
            | "connection"
            | "keep-alive"
            | "transfer-encoding"
            | "te"
            | "trailer"
            | "upgrade"
            | "proxy-authorization"
            | "proxy-connection"
            | "accept-encoding"
    ) || name.as_str().starts_with("x-ctxd-")
}

fn request_headers(headers: &HeaderMap) -> HeaderMap {
    let mut out = HeaderMap::new();
    for (name, value) in headers {
        if !is_hop(name) {
            out.append(name.clone(), value.clone());
        }
    }
    out
}

fn response_head(status: StatusCode, headers: &HeaderMap) -> hyper::http::response::Builder {
    let mut builder = Response::builder().status(status);
    for (name, value) in headers {
        if !is_hop(name) && name != "content-encoding" {
            builder = builder.header(name, value);
        }
    }
    builder
}

fn with_body(head: hyper::http::response::Builder, body: Body) -> Response<Body> {
    head.body(body)
        .unwrap_or_else(|_| Response::new(full(Bytes::new())))
}

/// An upstream's whole body, at most [`MAX_BODY_BYTES`] of it.
async fn read_bounded(mut upstream: reqwest::Response) -> Bytes {
    let mut out = Vec::new();
    while let Ok(Some(chunk)) = upstream.chunk().await {
        if out.len() + chunk.len() > MAX_BODY_BYTES {
            break;
        }
        out.extend_from_slice(&chunk);
    }
    Bytes::from(out)
}
