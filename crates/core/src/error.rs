//! The one domain error, transport- and storage-neutral: no driver or gRPC type in it.
//! The API layer maps it to a status (`api::status`); internal causes are logged whole
//! there and never sent to clients.

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
    /// A limit of the server's or a quota of the tenant's (named as its setting) would
    /// be passed; for a rate, how long until there is room.
    #[error("{message}")]
    ResourceExhausted {
        limit: &'static str,
        message: String,
        retry_after: Option<std::time::Duration>,
    },
    /// The database cannot serve now; the cause is the store's.
    #[error("the database is unavailable; retry shortly")]
    Unavailable(#[source] Box<dyn std::error::Error + Send + Sync>),
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
