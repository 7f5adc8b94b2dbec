//! One request to the console: the page's files, or a JSON API call under the tenant's
//! key; every answer with the headers that keep a page from running what a session holds.
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{HeaderMap, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};

use super::query::Query;
use super::{Console, api, assets};
use crate::error::{Error, Result};

/// The header carrying a ctxd API key.
const KEY_HEADER: &str = "x-ctxd-key";
/// No inline script or style, nothing from elsewhere, no framing.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

pub(super) type Body = Full<Bytes>;

pub(super) async fn handle(console: &Console, request: Request<Incoming>) -> Response<Body> {
    if request.method() != Method::GET {
        return json_error(
            StatusCode::METHOD_NOT_ALLOWED,
            "the console answers GET only",
        );
    }
    let path = request.uri().path().to_string();
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
    let answered = match tenant(console, request.headers()).await {
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

async fn tenant(console: &Console, headers: &HeaderMap) -> Result<i64> {
    let key = headers.get(KEY_HEADER).map(|value| value.as_bytes());
    let how = "your ctxd key (the console asks for it)";
    console.auth.tenant_of_header(key, how).await
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
    let mut response = Response::new(Full::new(body));
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
