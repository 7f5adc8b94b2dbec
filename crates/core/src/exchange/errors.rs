//! Errors in each provider's own shape, so an unmodified client reads ctxd's refusals
//! the way it reads its provider's.
use serde_json::json;

use crate::format::Format;

/// What kind of error, as an HTTP status says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// 400: the body is malformed or does not fit.
    InvalidRequest,
    /// 401: no key, or a key ctxd does not know.
    Authentication,
    /// 404: a path the endpoint does not answer.
    NotFound,
    /// 413: the body is over the limit.
    TooLarge,
    /// 429: a quota.
    RateLimited,
    /// 500: ctxd failed.
    Internal,
    /// 502: the upstream could not be reached.
    BadGateway,
}

impl Kind {
    pub fn status(self) -> u16 {
        match self {
            Kind::InvalidRequest => 400,
            Kind::Authentication => 401,
            Kind::NotFound => 404,
            Kind::TooLarge => 413,
            Kind::RateLimited => 429,
            Kind::Internal => 500,
            Kind::BadGateway => 502,
        }
    }

    fn anthropic_type(self) -> &'static str {
        match self {
            Kind::InvalidRequest => "invalid_request_error",
            Kind::Authentication => "authentication_error",
            Kind::NotFound => "not_found_error",
            Kind::TooLarge => "request_too_large",
            Kind::RateLimited => "rate_limit_error",
            Kind::Internal | Kind::BadGateway => "api_error",
        }
    }

    fn openai_type(self) -> &'static str {
        match self {
            Kind::InvalidRequest | Kind::TooLarge | Kind::NotFound => "invalid_request_error",
            Kind::Authentication => "authentication_error",
            Kind::RateLimited => "rate_limit_error",
            Kind::Internal | Kind::BadGateway => "server_error",
        }
    }

    fn gemini_status(self) -> &'static str {
        match self {
            Kind::InvalidRequest | Kind::TooLarge => "INVALID_ARGUMENT",
            Kind::Authentication => "UNAUTHENTICATED",
            Kind::NotFound => "NOT_FOUND",
            Kind::RateLimited => "RESOURCE_EXHAUSTED",
            Kind::Internal => "INTERNAL",
            Kind::BadGateway => "UNAVAILABLE",
        }
    }
}

/// The body of an error `provider`'s clients read; `message` is already clipped and free
/// of anything internal.
pub fn body(provider: Option<Format>, kind: Kind, message: &str) -> String {
    let value = match provider {
        Some(Format::AnthropicMessages) => json!({
            "type": "error",
            "error": {"type": kind.anthropic_type(), "message": message},
        }),
        Some(Format::Gemini) => json!({
            "error": {"code": kind.status(), "message": message, "status": kind.gemini_status()},
        }),
        Some(Format::OpenAiChat | Format::OpenAiResponses) | None => json!({
            "error": {"message": message, "type": kind.openai_type(), "param": null, "code": null},
        }),
    };
    value.to_string()
}

/// Whether an upstream's error body says the request was over the model's context
/// window (the reactive path: compact at once, retry once).
pub fn is_context_length(status: u16, body: &str) -> bool {
    if !(400..500).contains(&status) {
        return false;
    }
    let body = body.to_ascii_lowercase();
    [
        "context_length_exceeded",
        "prompt is too long",
        "maximum context length",
        "exceeds the maximum number of tokens",
        "input token count",
    ]
    .iter()
    .any(|phrase| body.contains(phrase))
}
