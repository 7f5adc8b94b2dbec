//! One request of the provider endpoint, from its head to the reply.
use std::sync::Arc;

use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use hyper::header::HeaderMap;
use hyper::{Method, Request, Response};
use tracing::Instrument;

use super::Proxy;
use super::answer::{Body, failure, refusal};
use super::conversation::{Conversation, SESSION_HEADER};
use super::rounds::{self, Rounds};
use super::route::{self, Call};
use super::upstream::{self, Reply};
use crate::engine::{BuildRequest, CompactMode, CompactRequest, Recipient, Tools};
use crate::error::Error;
use crate::exchange::{self, ClientRequest, errors::Kind};
use crate::format::Format;
use crate::{recall, render};

/// The header carrying a ctxd API key (the provider's own credentials go upstream).
const KEY_HEADER: &str = "x-ctxd-key";

/// One request, in a span that records its path (never its query or headers: a
/// Gemini key may ride in the query) and the status answered.
pub(super) async fn handle(proxy: &Arc<Proxy>, request: Request<Incoming>) -> Response<Body> {
    let span = tracing::info_span!(
        "proxy",
        path = %clip(request.uri().path()),
        status = tracing::field::Empty,
    );
    let started = std::time::Instant::now();
    let route = route::template(request.uri().path());
    let response = answer(proxy, request).instrument(span.clone()).await;
    let status = response.status().as_u16();
    span.record("status", status);
    crate::metrics::metrics().proxy_answered(route, status, started.elapsed());
    response
}

/// A path as logs show it: at most 120 characters.
fn clip(path: &str) -> String {
    path.chars().take(120).collect()
}

async fn answer(proxy: &Arc<Proxy>, request: Request<Incoming>) -> Response<Body> {
    let path = request.uri().path().to_string();
    let Some(call) = route::call(&path) else {
        return refusal(
            None,
            Kind::NotFound,
            "no provider API at this path: ctxd answers POST /v1/chat/completions, /v1/responses, /v1/messages, /v1/messages/count_tokens and /v1beta/models/{model}:generateContent or :streamGenerateContent",
        );
    };
    let provider = match call {
        Call::Generate { provider, .. } => provider,
        Call::CountTokens => Format::AnthropicMessages,
    };
    if request.method() != Method::POST {
        return refusal(
            Some(provider),
            Kind::NotFound,
            "only POST is answered at this path",
        );
    }
    let (parts, body) = request.into_parts();
    let body = match Limited::new(body, proxy.settings.max_body_bytes)
        .collect()
        .await
    {
        Ok(collected) => collected.to_bytes(),
        Err(error) if error.is::<http_body_util::LengthLimitError>() => {
            let message = format!(
                "the request body is over the {} bytes this endpoint takes",
                proxy.settings.max_body_bytes
            );
            return refusal(Some(provider), Kind::TooLarge, &message);
        }
        Err(_) => {
            return refusal(
                Some(provider),
                Kind::InvalidRequest,
                "the request body could not be read",
            );
        }
    };
    let tenant = match tenant(proxy, &parts.headers).await {
        Ok(tenant) => tenant,
        Err(error) => return failure(provider, error),
    };
    if let Err(error) = proxy.engine.quotas().admit_request(tenant).await {
        return failure(provider, error);
    }
    let forward = upstream::Forward {
        parts: &parts,
        provider,
    };
    match call {
        Call::CountTokens => upstream::pass_through(proxy, &forward, body).await,
        Call::Generate { stream, .. } => generate(proxy, tenant, &forward, stream, &body)
            .await
            .unwrap_or_else(|error| failure(provider, error)),
    }
}

async fn tenant(proxy: &Proxy, headers: &HeaderMap) -> crate::error::Result<i64> {
    let key = headers.get(KEY_HEADER).map(|value| value.as_bytes());
    let how = "your ctxd key in the `x-ctxd-key` header";
    proxy
        .auth
        .tenant_of_header(key, headers.get("host").map(|v| v.as_bytes()), how)
        .await
}

/// A model call: the history reconciled, the session built, forwarded, the reply
/// recorded — after any recall rounds the reply asked for.
async fn generate(
    proxy: &Arc<Proxy>,
    tenant: i64,
    forward: &upstream::Forward<'_>,
    stream: bool,
    body: &[u8],
) -> crate::error::Result<Response<Body>> {
    let provider = forward.provider;
    let text = std::str::from_utf8(body).map_err(|_| Error::invalid("$", "is not UTF-8 text"))?;
    let request = exchange::split(provider, text, stream)
        .map_err(|error| Error::invalid(error.path, error.reason))?;
    exchange::check_reserved(&request, recall::PREFIX)
        .map_err(|error| Error::invalid(error.path, error.reason))?;
    let named = forward
        .parts
        .headers
        .get(SESSION_HEADER)
        .map(|value| value.to_str().unwrap_or("\u{0}"));
    let mut conversation = Conversation::open(proxy, tenant, named, &request).await?;
    let mut rounds = Rounds::new(proxy.settings.recall_rounds);
    let mut retried = false;
    loop {
        let outgoing = build(proxy, tenant, &conversation, &request, rounds.left()).await?;
        // The reply is recorded only onto the session as this build left it.
        conversation.expect_version(outgoing.version);
        let hold = outgoing.offered;
        match upstream::send(proxy, forward, outgoing.body, request.stream, hold).await? {
            Reply::TooLong(_) if !retried => {
                retried = true;
                compact_now(proxy, tenant, &conversation.session_id).await?;
            }
            Reply::TooLong(response) | Reply::Done(response) => {
                conversation.finish(proxy).await;
                return Ok(response);
            }
            Reply::Whole(response, bytes) => {
                if hold
                    && rounds::answered(proxy, &mut conversation, provider, &bytes, &mut rounds)
                        .await?
                {
                    continue;
                }
                // Recorded after the answer, the conversation still held: its next
                // request waits for the record, the client does not.
                tokio::spawn(upstream::record_whole(
                    proxy.clone(),
                    conversation,
                    provider,
                    bytes,
                ));
                return Ok(response);
            }
            Reply::Streaming(response, pump) => {
                tokio::spawn(upstream::record_stream(
                    proxy.clone(),
                    conversation,
                    provider,
                    pump,
                ));
                return Ok(response);
            }
        }
    }
}

/// The body to send upstream, the session's version it was built at, and whether it
/// offers the recall tools.
struct Outgoing {
    body: String,
    version: i64,
    offered: bool,
}

/// The body to send upstream: the session built for a provider (the one decision every
/// front door takes), in the client's body, with the recall tools after the client's
/// own when the session has them and `offer` (rounds are left).
async fn build(
    proxy: &Proxy,
    tenant: i64,
    conversation: &Conversation,
    request: &ClientRequest,
    offer: bool,
) -> crate::error::Result<Outgoing> {
    let built = proxy
        .engine
        .build_messages(
            tenant,
            BuildRequest {
                session_id: conversation.session_id.clone(),
                system_prompt: request.counted_text.clone(),
                tools: Tools::None,
                // The session's policy reserves the output: an agent's max_tokens is
                // often the model's whole output limit, not what it needs room for.
                max_output_tokens: None,
                recipient: Recipient::Provider,
            },
        )
        .await?;
    let rendered = render::body(
        request.provider,
        "",
        built.messages.messages(),
        &[],
        built.report.output_reserve_tokens,
    );
    // The build counted the recall tools (the only definitions it has here) whether or
    // not they are sent: the request fits either way.
    let recall = !built.tool_definitions.is_empty();
    if recall && !offer {
        crate::metrics::metrics().recall_round("limit");
    }
    let tools = match recall && offer {
        true => Some(
            exchange::offering(request, &built.tool_definitions, recall::PREFIX)
                .map_err(|error| Error::invalid(error.path, error.reason))?,
        ),
        false => None,
    };
    // The summaries, when the build put them in the system prompt, follow the client's
    // own system text (which goes upstream as it came).
    let extra = built.system_block.as_deref();
    Ok(Outgoing {
        body: exchange::merge(request, &rendered, extra, tools.as_deref()),
        version: built.version,
        offered: tools.is_some(),
    })
}

/// The reactive path: the upstream refused the request for length.
async fn compact_now(proxy: &Proxy, tenant: i64, session_id: &str) -> crate::error::Result<()> {
    tracing::info!(
        session_id,
        "provider endpoint: the upstream refused the request for length; compacting once and retrying"
    );
    let request = CompactRequest {
        session_id: session_id.to_string(),
        mode: CompactMode::Emergency,
        target_tokens: 0,
        dry_run: false,
        wait: None,
    };
    proxy.engine.compact(tenant, request).await.map(|_| ())
}
