//! One request to the console: the page's files, or a JSON API call under the tenant's
//! key; every answer with the headers that keep a page from running what a session holds.
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{HeaderMap, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};

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
    match headers.get(KEY_HEADER) {
        None => console
            .auth
            .anonymous_tenant("your ctxd key (the console asks for it)"),
        Some(value) => {
            let key = value.to_str().map_err(|_| {
                Error::Unauthenticated("the x-ctxd-key header is not a ctxd key".into())
            })?;
            console.auth.tenant_of_key(key.trim()).await
        }
    }
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

/// A request's query parameters (`a=1&b=2`), read as they came: the console's own
/// values (numbers, ids, page tokens) need no percent-decoding, and one that has it is
/// refused where it is read.
pub(super) struct Query<'a> {
    pairs: Vec<(&'a str, &'a str)>,
}

impl<'a> Query<'a> {
    fn parse(query: &'a str) -> Query<'a> {
        let pairs = query
            .split('&')
            .filter(|pair| !pair.is_empty())
            .take(16)
            .map(|pair| pair.split_once('=').unwrap_or((pair, "")))
            .collect();
        Query { pairs }
    }

    /// The parameter's value, if given; refused when it is over 512 bytes or
    /// percent-encoded.
    pub(super) fn text(&self, name: &str) -> Result<Option<&'a str>> {
        let Some((_, value)) = self.pairs.iter().find(|(key, _)| *key == name) else {
            return Ok(None);
        };
        if value.len() > 512 || value.contains('%') {
            return Err(Error::invalid(
                name,
                "must be at most 512 characters, without percent-encoding",
            ));
        }
        Ok(Some(value))
    }

    /// A whole number in `range`, or `default` when not given.
    pub(super) fn number(
        &self,
        name: &str,
        range: std::ops::RangeInclusive<i64>,
        default: i64,
    ) -> Result<i64> {
        match self.text(name)? {
            None => Ok(default),
            Some(value) => value
                .parse::<i64>()
                .ok()
                .filter(|number| range.contains(number))
                .ok_or_else(|| {
                    Error::invalid(
                        name,
                        format!(
                            "must be a whole number from {} to {}",
                            range.start(),
                            range.end()
                        ),
                    )
                }),
        }
    }
}
