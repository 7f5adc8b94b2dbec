//! AppendTurn, BuildMessages and CheckBudget.

use sha2::{Digest, Sha256};

use super::ContextApi;
use super::convert::{
    message_to_pb, messages_from_pb, report_to_pb, stored_to_pb, summary_to_pb, tools_from_pb,
};
use crate::engine;
use crate::error::{Error, Result};
use crate::pb;
use crate::render;

pub(super) async fn append_turn(
    api: &ContextApi,
    tenant: i64,
    req: pb::AppendTurnRequest,
) -> Result<pb::AppendTurnResponse> {
    let idempotency = idempotency(&req, &req.idempotency_key, |unkeyed| {
        unkeyed.idempotency_key.clear()
    });
    let usage = req.usage.map(|usage| engine::Usage {
        input_tokens: usage.input_tokens,
        output_tokens: usage.output_tokens,
        cached_input_tokens: usage.cached_input_tokens,
    });
    let outcome = api
        .engine
        .append_turn(
            tenant,
            engine::AppendRequest {
                session_id: req.session_id,
                messages: messages_from_pb(req.messages, "messages")?,
                expected_version: req.expected_version,
                idempotency,
                usage,
                recall: None,
            },
        )
        .await?;
    Ok(append_response(outcome))
}

/// A request's idempotency key with the hash of the request without it (a retry with
/// the same key must carry the same payload); `None` without a key.
pub(super) fn idempotency<R: prost::Message + Clone>(
    request: &R,
    key: &str,
    clear_key: impl FnOnce(&mut R),
) -> Option<(String, Vec<u8>)> {
    (!key.is_empty()).then(|| {
        let mut unkeyed = request.clone();
        clear_key(&mut unkeyed);
        (
            key.to_string(),
            Sha256::digest(unkeyed.encode_to_vec()).to_vec(),
        )
    })
}

/// What AppendTurn and AppendNative answer.
pub(super) fn append_response(outcome: engine::AppendOutcome) -> pb::AppendTurnResponse {
    pb::AppendTurnResponse {
        version: outcome.version,
        seqs: outcome.seqs,
        budget: Some(report_to_pb(&outcome.report)),
        replayed: outcome.replayed,
        evicted_seqs: outcome.evicted_seqs,
        summarization_job_id: outcome.summarization_job_id.unwrap_or(0),
    }
}

pub(super) async fn build_messages(
    api: &ContextApi,
    tenant: i64,
    req: pb::BuildMessagesRequest,
) -> Result<pb::BuildMessagesResponse> {
    let format = pb::OutputFormat::try_from(req.format)
        .map_err(|_| Error::invalid("format", format!("unknown output format {}", req.format)))?;
    let provider = super::convert::provider_of(format);
    let recipient = match provider {
        Some(_) => engine::Recipient::Provider,
        None => engine::Recipient::Client,
    };
    let built = api
        .engine
        .build_messages(
            tenant,
            engine::BuildRequest {
                session_id: req.session_id,
                system_prompt: req.system_prompt,
                tools: tools_from_pb(req.tools),
                max_output_tokens: req.max_output_tokens,
                recipient,
            },
        )
        .await?;
    let (messages, json) = match provider {
        None => (neutral_messages(&built.messages), String::new()),
        Some(provider) => {
            let body = render::built_body(
                provider,
                &built.system_prompt,
                built.messages.messages(),
                &built.tool_definitions,
                built.report.output_reserve_tokens,
                built.stable,
            );
            (Vec::new(), body)
        }
    };
    Ok(pb::BuildMessagesResponse {
        messages,
        json,
        budget: Some(report_to_pb(&built.report)),
        version: built.version,
        trimmed: Some(pb::Trimmed {
            turns: built.trimmed.turns,
            messages: built.trimmed.messages,
            tokens: built.trimmed.tokens,
            incomplete_step_messages: built.trimmed.incomplete_step_messages,
            summaries: built.trimmed.summaries,
        }),
        first_seq: built.first_seq,
        last_seq: built.last_seq,
        system_prompt: built.system_prompt,
        summaries: built.summaries.iter().map(summary_to_pb).collect(),
    })
}

/// The NEUTRAL body: each message with its stored row's seq and state.
fn neutral_messages(sent: &engine::Sent) -> Vec<pb::Message> {
    sent.iter()
        .map(|(stored, message)| match stored {
            Some(stored) => stored_to_pb(stored, message),
            None => message_to_pb(message),
        })
        .collect()
}

pub(super) async fn check_budget(
    api: &ContextApi,
    tenant: i64,
    req: pb::CheckBudgetRequest,
) -> Result<pb::CheckBudgetResponse> {
    let report = api
        .engine
        .check_budget(
            tenant,
            engine::CheckRequest {
                session_id: req.session_id,
                system_prompt: req.system_prompt,
                tools: tools_from_pb(req.tools),
                max_output_tokens: req.max_output_tokens,
                pending: messages_from_pb(req.pending_messages, "pending_messages")?,
            },
        )
        .await?;
    Ok(pb::CheckBudgetResponse {
        budget: Some(report_to_pb(&report)),
    })
}
