//! PLACEHOLDER: being written.
use super::{IngestError, Ingested};

pub(super) fn response(_json: &str) -> Result<Ingested, IngestError> {
    Err(IngestError::new(
        "$",
        "this provider's responses are not read yet",
    ))
}

pub(super) fn items(_json: &str) -> Result<Ingested, IngestError> {
    Err(IngestError::new(
        "$",
        "this provider's items are not read yet",
    ))
}
