//! The one domain error, transport-neutral, and its single conversion to a gRPC status.
//! Internal causes are logged whole and never sent to clients.
use std::collections::HashMap;

use tonic_types::{ErrorDetails, StatusExt};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{what} was not found")]
    NotFound { what: String },
    #[error("{field}: {reason}")]
    InvalidArgument { field: String, reason: String },
    #[error("{0}")]
    AlreadyExists(String),
    #[error(
        "the session is at version {current_version}, not the expected {expected_version}; re-read it and retry"
    )]
    Conflict {
        current_version: i64,
        expected_version: i64,
    },
    #[error("{message}")]
    FailedPrecondition {
        message: String,
        /// Figures a client can act on (region -> tokens).
        figures: Vec<(&'static str, i64)>,
    },
    #[error("{0}")]
    Unauthenticated(String),
    #[error("{0}")]
    OutOfRange(String),
    /// A limit of the server's (named as its setting) would be passed.
    #[error("{message}")]
    ResourceExhausted {
        limit: &'static str,
        message: String,
    },
    #[error("the database is unavailable; retry shortly")]
    Unavailable(#[source] sqlx::Error),
    #[error("internal error")]
    Internal(#[source] Box<dyn std::error::Error + Send + Sync>),
}

pub type Result<T> = std::result::Result<T, Error>;

/// Characters of a client's value an error repeats; the rest becomes "…".
pub const ECHO_CHARS: usize = 64;

/// A client-supplied value as an error quotes it: in quotes, escaped, at most
/// [`ECHO_CHARS`] characters of it.
pub fn quoted(value: &str) -> String {
    let mut chars = value.chars();
    let head: String = chars.by_ref().take(ECHO_CHARS).collect();
    if chars.next().is_some() {
        format!("{head:?}…")
    } else {
        format!("{head:?}")
    }
}

/// At most `max_bytes` of `text`, cut at a character boundary, "…" marking a cut.
fn clipped(text: String, max_bytes: usize) -> String {
    if text.len() <= max_bytes {
        return text;
    }
    let mut end = max_bytes.saturating_sub('…'.len_utf8());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// Bounds on what an error sends back, whatever produced it: the status message, a
/// field name and a reason (each ends up in the trailers, which clients cap at 8–16 KiB).
const MAX_MESSAGE_BYTES: usize = 512;
const MAX_FIELD_BYTES: usize = 160;
const MAX_REASON_BYTES: usize = 384;

impl Error {
    pub fn invalid(field: impl Into<String>, reason: impl Into<String>) -> Error {
        Error::InvalidArgument {
            field: field.into(),
            reason: reason.into(),
        }
    }

    pub fn not_found(what: impl Into<String>) -> Error {
        Error::NotFound { what: what.into() }
    }

    pub fn internal(cause: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Error {
        Error::Internal(cause.into())
    }
}

impl From<sqlx::Error> for Error {
    fn from(error: sqlx::Error) -> Error {
        match &error {
            sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::Io(_) => {
                Error::Unavailable(error)
            }
            sqlx::Error::Database(db) if is_unavailable_sqlstate(db.code().as_deref()) => {
                Error::Unavailable(error)
            }
            _ => Error::Internal(Box::new(error)),
        }
    }
}

/// SQLSTATE classes meaning "try again later": connection exceptions (08),
/// insufficient resources (53), operator intervention such as shutdown (57).
fn is_unavailable_sqlstate(code: Option<&str>) -> bool {
    matches!(code, Some(code) if code.starts_with("08") || code.starts_with("53") || code.starts_with("57"))
}

/// The SQLSTATE of a unique violation, for callers that turn it into a conflict.
pub fn is_unique_violation(error: &sqlx::Error) -> bool {
    matches!(error, sqlx::Error::Database(db) if db.code().as_deref() == Some("23505"))
}

impl From<Error> for tonic::Status {
    fn from(error: Error) -> tonic::Status {
        let message = clipped(error.to_string(), MAX_MESSAGE_BYTES);
        match error {
            Error::NotFound { .. } => tonic::Status::not_found(message),
            Error::InvalidArgument { field, reason } => {
                let details = ErrorDetails::with_bad_request_violation(
                    clipped(field, MAX_FIELD_BYTES),
                    clipped(reason, MAX_REASON_BYTES),
                );
                tonic::Status::with_error_details(tonic::Code::InvalidArgument, message, details)
            }
            Error::AlreadyExists(_) => tonic::Status::already_exists(message),
            Error::Conflict {
                current_version, ..
            } => {
                let metadata =
                    HashMap::from([("current_version".to_string(), current_version.to_string())]);
                let details = ErrorDetails::with_error_info("VERSION_MISMATCH", "ctxd", metadata);
                tonic::Status::with_error_details(tonic::Code::Aborted, message, details)
            }
            Error::FailedPrecondition { figures, .. } => {
                let metadata: HashMap<String, String> = figures
                    .into_iter()
                    .map(|(name, value)| (name.to_string(), value.to_string()))
                    .collect();
                let details = ErrorDetails::with_error_info("DOES_NOT_FIT", "ctxd", metadata);
                tonic::Status::with_error_details(tonic::Code::FailedPrecondition, message, details)
            }
            Error::Unauthenticated(_) => tonic::Status::unauthenticated(message),
            Error::OutOfRange(_) => tonic::Status::out_of_range(message),
            Error::ResourceExhausted { limit, .. } => {
                let details = ErrorDetails::with_quota_failure_violation(limit, message.clone());
                tonic::Status::with_error_details(tonic::Code::ResourceExhausted, message, details)
            }
            Error::Unavailable(cause) => {
                tracing::warn!(error = %cause, "database unavailable");
                tonic::Status::unavailable(message)
            }
            Error::Internal(cause) => {
                tracing::error!(error = ?cause, "internal error");
                tonic::Status::internal(message)
            }
        }
    }
}
