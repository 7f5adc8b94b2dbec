//! The endpoint's own answers: the body type every response has, and ctxd's errors in
//! each provider's shape (clipped, nothing internal).
use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::header::CONTENT_TYPE;
use hyper::{Response, StatusCode};

use crate::error::Error;
use crate::exchange::{self, errors::Kind};
use crate::format::Format;

pub(super) type Body = BoxBody<Bytes, Infallible>;

/// Longest message of an error ctxd writes.
const MAX_ERROR_CHARS: usize = 500;

/// An error of ctxd's in the provider's shape.
pub(super) fn failure(provider: Format, error: Error) -> Response<Body> {
    let kind = match &error {
        Error::InvalidArgument { .. }
        | Error::FailedPrecondition { .. }
        | Error::Precondition { .. }
        | Error::OutOfRange(_)
        | Error::Conflict { .. }
        | Error::AlreadyExists(_) => Kind::InvalidRequest,
        Error::NotFound { .. } => Kind::NotFound,
        Error::Unauthenticated(_) => Kind::Authentication,
        Error::ResourceExhausted { .. } => Kind::RateLimited,
        Error::Unavailable(_) | Error::Internal(_) => {
            tracing::warn!(error = %error, "provider endpoint: request failed");
            Kind::Internal
        }
    };
    refusal(Some(provider), kind, &error.to_string())
}

pub(super) fn refusal(provider: Option<Format>, kind: Kind, message: &str) -> Response<Body> {
    let message: String = message.chars().take(MAX_ERROR_CHARS).collect();
    let body = exchange::errors::body(provider, kind, &message);
    let mut response = Response::new(full(Bytes::from(body)));
    *response.status_mut() =
        StatusCode::from_u16(kind.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    response.headers_mut().insert(
        CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    response
}

pub(super) fn full(bytes: Bytes) -> Body {
    Full::new(bytes).boxed()
}
