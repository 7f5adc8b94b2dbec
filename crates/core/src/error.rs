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
    /// The request is well formed but the state of what it names refuses it (a finished
    /// session, a parent too deep in its tree): the field that names it, and why.
    #[error("{field}: {reason}")]
    Precondition { field: String, reason: String },
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

    pub fn precondition(field: impl Into<String>, reason: impl Into<String>) -> Error {
        Error::Precondition {
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

/// An error with its causes, `a: b: c`, for operators and command-line users (a domain
/// error says only "internal error", what clients see; its causes say what went wrong).
/// A cause that repeats the one before it is said once.
pub fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut last = text.clone();
    let mut source = error.source();
    while let Some(cause) = source {
        let said = cause.to_string();
        if said != last {
            text.push_str(": ");
            text.push_str(&said);
        }
        last = said;
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("{0}")]
    struct Layer(&'static str, #[source] Option<Box<Layer>>);

    #[test]
    fn a_chain_names_every_cause_once() {
        let inner = Layer("connection refused", None);
        let repeated = Layer("connection refused", Some(Box::new(inner)));
        let outer = Layer("cannot start", Some(Box::new(repeated)));
        assert_eq!(chain(&outer), "cannot start: connection refused");
        assert_eq!(
            chain(&Error::internal("disk full")),
            "internal error: disk full"
        );
    }
}
