//! One request to the console: the page's files, a JSON API call under the tenant's
//! key, or (POST) a session's action from the console's own page; every answer with the
//! headers that keep a page from running what a session holds.
use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt as _, Full, StreamBody};
use hyper::body::Incoming;
use hyper::header::{HeaderMap, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};

use super::query::Query;
use super::{Console, api, assets};
use crate::error::{Error, Result};

/// The header carrying a ctxd API key.
const KEY_HEADER: &str = "x-ctxd-key";
/// The header the page sends with an action (`action`).
const ACTION_HEADER: &str = "x-ctxd-console";
/// No inline script or style, nothing from elsewhere, no framing.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// A whole answer, or a live stream's lines as they come.
pub(super) type Body = BoxBody<Bytes, std::convert::Infallible>;

pub(super) async fn handle(console: &Console, request: Request<Incoming>) -> Response<Body> {
    let path = request.uri().path().to_string();
    let action = request.method() == Method::POST && api::is_action(&path);
    if request.method() != Method::GET && !action {
        return json_error(
            StatusCode::METHOD_NOT_ALLOWED,
            "the console answers GET, and POST for a session's actions",
        );
    }
    if action && let Err(refusal) = same_origin(request.headers()) {
        return json_error(StatusCode::FORBIDDEN, &refusal);
    }
    if let Some((_, kind, body)) = assets::FILES.iter().find(|(at, _, _)| *at == path) {
        return answer(StatusCode::OK, kind, Bytes::from_static(body.as_bytes()));
    }
    if path == "/favicon.ico" {
        // Browsers ask for it on their own; the console has none.
        return answer(StatusCode::NO_CONTENT, "image/x-icon", Bytes::new());
    }
    let Some(call) = path.strip_prefix("/api/") else {
        return json_error(StatusCode::NOT_FOUND, "no such page");
    };
    let query = Query::parse(request.uri().query().unwrap_or(""));
    if let Some(id) = live_session(call) {
        let opened = match tenant(console, request.headers()).await {
            Ok(tenant) => super::live::open(console, tenant, id, &query).await,
            Err(error) => Err(error),
        };
        return match opened {
            Ok(lines) => streamed(lines),
            Err(error) => failure(error),
        };
    }
    let answered = match tenant(console, request.headers()).await {
        Ok(tenant) if action => api::act(console, tenant, call, &query).await,
        Ok(tenant) => api::call(console, tenant, call, &query).await,
        Err(error) => Err(error),
    };
    match answered {
        Ok(value) => answer(
            StatusCode::OK,
            "application/json",
            Bytes::from(value.to_string()),
        ),
        Err(error) => failure(error),
    }
}

/// The session of a live stream's path (`sessions/{id}/live`).
fn live_session(call: &str) -> Option<&str> {
    let id = call.strip_prefix("sessions/")?.strip_suffix("/live")?;
    (!id.contains('/')).then_some(id)
}

/// A live stream's answer: its lines as they come, never cached or buffered by a proxy.
fn streamed(lines: tokio::sync::mpsc::Receiver<Bytes>) -> Response<Body> {
    use tokio_stream::StreamExt as _;
    let frames = tokio_stream::wrappers::ReceiverStream::new(lines)
        .map(|line| Ok(hyper::body::Frame::data(line)));
    let mut response = answer(StatusCode::OK, "application/x-ndjson", Bytes::new());
    *response.body_mut() = StreamBody::new(frames).boxed();
    response
        .headers_mut()
        .insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

/// An action comes from the console's own page: it carries the page's header (which a
/// page elsewhere cannot send without a CORS preflight the console never grants), and
/// whatever the browser says of its origin names this console.
fn same_origin(headers: &HeaderMap) -> std::result::Result<(), String> {
    let text = |name: &str| headers.get(name).and_then(|value| value.to_str().ok());
    if text(ACTION_HEADER) != Some("action") {
        return Err(format!(
            "{ACTION_HEADER}: an action needs the console page's header"
        ));
    }
    if let Some(site) = text("sec-fetch-site")
        && site != "same-origin"
    {
        return Err("sec-fetch-site: actions come from the console's own page".to_string());
    }
    if let Some(origin) = text("origin") {
        let host = text("host").unwrap_or("");
        let own = [format!("http://{host}"), format!("https://{host}")];
        if !own.iter().any(|own| own == origin) {
            return Err("origin: actions come from the console's own page".to_string());
        }
    }
    Ok(())
}

async fn tenant(console: &Console, headers: &HeaderMap) -> Result<i64> {
    let key = headers.get(KEY_HEADER).map(|value| value.as_bytes());
    let how = "your ctxd key (the console asks for it)";
    console
        .auth
        .tenant_of_header(key, headers.get("host").map(|v| v.as_bytes()), how)
        .await
}

/// An error as the RPCs would answer it (the same clipped, leak-free text), with the
/// HTTP status of its gRPC code.
fn failure(error: Error) -> Response<Body> {
    let status = crate::api::status(error);
    let http = match status.code() {
        tonic::Code::InvalidArgument | tonic::Code::FailedPrecondition => StatusCode::BAD_REQUEST,
        tonic::Code::NotFound => StatusCode::NOT_FOUND,
        tonic::Code::Unauthenticated => StatusCode::UNAUTHORIZED,
        tonic::Code::PermissionDenied => StatusCode::FORBIDDEN,
        tonic::Code::ResourceExhausted => StatusCode::TOO_MANY_REQUESTS,
        tonic::Code::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    };
    json_error(http, status.message())
}

fn json_error(status: StatusCode, message: &str) -> Response<Body> {
    let body = serde_json::json!({"error": {"status": status.as_u16(), "message": message}});
    answer(status, "application/json", Bytes::from(body.to_string()))
}

fn answer(status: StatusCode, content_type: &str, body: Bytes) -> Response<Body> {
    let mut response = Response::new(Full::new(body).boxed());
    *response.status_mut() = status;
    let headers = response.headers_mut();
    let set = |headers: &mut HeaderMap, name: &'static str, value: &str| {
        if let Ok(value) = HeaderValue::from_str(value) {
            headers.insert(name, value);
        }
    };
    set(headers, "content-type", content_type);
    set(headers, "content-security-policy", CSP);
    set(headers, "x-content-type-options", "nosniff");
    set(headers, "referrer-policy", "no-referrer");
    set(headers, "cache-control", "no-store");
    response
}
