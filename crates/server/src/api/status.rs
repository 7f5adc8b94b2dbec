//! The one mapping from the domain error to a gRPC status: the code, the message
//! clipped, and the google.rpc details a client can act on (BadRequest for a field,
//! ErrorInfo for a version conflict or a request that does not fit, PreconditionFailure
//! naming the field whose state refuses the request, QuotaFailure for a
//! server limit or a tenant's quota, with RetryInfo when a rate will have room). Internal and database causes are logged here and never sent.
use std::collections::HashMap;

use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};

use crate::error::Error;

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

/// The status a client receives for `error`.
pub fn status(error: Error) -> Status {
    let message = clipped(error.to_string(), MAX_MESSAGE_BYTES);
    match error {
        Error::NotFound { .. } => Status::not_found(message),
        Error::InvalidArgument { field, reason } => {
            let details = ErrorDetails::with_bad_request_violation(
                clipped(field, MAX_FIELD_BYTES),
                clipped(reason, MAX_REASON_BYTES),
            );
            Status::with_error_details(Code::InvalidArgument, message, details)
        }
        Error::AlreadyExists(_) => Status::already_exists(message),
        Error::Conflict {
            current_version, ..
        } => {
            let metadata =
                HashMap::from([("current_version".to_string(), current_version.to_string())]);
            let details = ErrorDetails::with_error_info("VERSION_MISMATCH", "ctxd", metadata);
            Status::with_error_details(Code::Aborted, message, details)
        }
        Error::FailedPrecondition { figures, .. } => {
            let metadata: HashMap<String, String> = figures
                .into_iter()
                .map(|(name, value)| (name.to_string(), value.to_string()))
                .collect();
            let details = ErrorDetails::with_error_info("DOES_NOT_FIT", "ctxd", metadata);
            Status::with_error_details(Code::FailedPrecondition, message, details)
        }
        Error::Precondition { field, reason } => {
            let details = ErrorDetails::with_precondition_failure_violation(
                "STATE",
                clipped(field, MAX_FIELD_BYTES),
                clipped(reason, MAX_REASON_BYTES),
            );
            Status::with_error_details(Code::FailedPrecondition, message, details)
        }
        Error::Unauthenticated(_) => Status::unauthenticated(message),
        Error::OutOfRange(_) => Status::out_of_range(message),
        Error::ResourceExhausted {
            limit, retry_after, ..
        } => {
            let mut details = ErrorDetails::with_quota_failure_violation(limit, message.clone());
            if retry_after.is_some() {
                details.set_retry_info(retry_after);
            }
            Status::with_error_details(Code::ResourceExhausted, message, details)
        }
        Error::Unavailable(cause) => {
            tracing::warn!(error = %cause, "database unavailable");
            Status::unavailable(message)
        }
        Error::Internal(cause) => {
            tracing::error!(error = ?cause, "internal error");
            Status::internal(message)
        }
    }
}
