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
    #[error("the database is unavailable; retry shortly")]
    Unavailable(#[source] sqlx::Error),
    #[error("internal error")]
    Internal(#[source] Box<dyn std::error::Error + Send + Sync>),
}

pub type Result<T> = std::result::Result<T, Error>;

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
        let message = error.to_string();
        match error {
            Error::NotFound { .. } => tonic::Status::not_found(message),
            Error::InvalidArgument { field, reason } => {
                let details = ErrorDetails::with_bad_request_violation(field, reason);
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
