//! AppendNative: a provider's own response body and request items, read by
//! `ingest` into messages and appended as AppendTurn appends them.

use super::ContextApi;
use crate::engine;
use crate::error::{Error, Result};
use crate::format::Format;
use crate::ingest::{self, IngestError, Ingested};
use crate::pb;

pub(super) async fn append_native(
    api: &ContextApi,
    tenant: i64,
    req: pb::AppendNativeRequest,
) -> Result<pb::AppendTurnResponse> {
    let provider = provider(req.format)?;
    if req.response_json.is_empty() && req.items_json.is_empty() {
        return Err(Error::invalid(
            "response_json",
            "give a response body, request items, or both",
        ));
    }
    let mut read = Ingested::default();
    if !req.response_json.is_empty() {
        read = ingest::response(provider, &req.response_json)
            .map_err(|error| json_error("response_json", error))?;
    }
    if !req.items_json.is_empty() {
        let items = ingest::items_after(provider, &req.items_json, &read)
            .map_err(|error| json_error("items_json", error))?;
        read.messages.extend(items.messages);
        read.paths.extend(
            items
                .paths
                .into_iter()
                .map(|path| format!("items_json: {path}")),
        );
    }
    let idempotency = super::turns::idempotency(&req, &req.idempotency_key, |unkeyed| {
        unkeyed.idempotency_key.clear()
    });
    let Ingested {
        messages,
        paths,
        usage,
    } = read;
    let outcome = api
        .engine
        .append_turn(
            tenant,
            engine::AppendRequest {
                session_id: req.session_id,
                messages,
                expected_version: req.expected_version,
                idempotency,
                usage,
                recall: None,
            },
        )
        .await
        .map_err(|error| at_path(error, &paths, provider))?;
    Ok(super::turns::append_response(outcome))
}

fn provider(format: i32) -> Result<Format> {
    pb::OutputFormat::try_from(format)
        .ok()
        .and_then(super::convert::provider_of)
        .ok_or_else(|| {
            Error::invalid(
                "format",
                "must be OPENAI_CHAT, OPENAI_RESPONSES, ANTHROPIC_MESSAGES or GEMINI",
            )
        })
}

fn json_error(field: &str, error: IngestError) -> Error {
    Error::invalid(format!("{field}: {}", error.path), error.reason)
}

/// A check of the appended messages names `messages[i]…`; the client sent JSON, so the
/// error names the JSON path message `i` came from instead (with the provider's name
/// for a tool result's call id).
fn at_path(error: Error, paths: &[String], provider: Format) -> Error {
    let Error::InvalidArgument { field, reason } = error else {
        return error;
    };
    let located = field
        .strip_prefix("messages[")
        .and_then(|rest| rest.split_once(']'))
        .and_then(|(index, rest)| {
            let path = paths.get(index.parse::<usize>().ok()?)?;
            let path = if path.starts_with("items_json") {
                path.clone()
            } else {
                format!("response_json: {path}")
            };
            let rest = match (provider, rest) {
                (Format::OpenAiResponses, ".tool_call_id") => ".call_id",
                _ => rest,
            };
            Some(format!("{path}{rest}"))
        });
    Error::InvalidArgument {
        field: located.unwrap_or(field),
        reason,
    }
}
