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
    let built = api
        .engine
        .build_messages(
            tenant,
            engine::BuildRequest {
                session_id: req.session_id,
                system_prompt: req.system_prompt.clone(),
                tools: tools_from_pb(req.tools),
                max_output_tokens: req.max_output_tokens,
            },
        )
        .await?;
    let first_seq = built.history.first_seq();
    let mut last_seq = built.history.last_seq();
    let summaries = built.summaries.iter().map(summary_to_pb).collect();
    let budget = Some(report_to_pb(&built.report));
    // A provider takes no request ending with an unanswered call: the bodies end before
    // a step the client is still running the tools of (NEUTRAL shows it).
    let history: Vec<&crate::message::Message> =
        built.history.iter().map(|(_, message)| message).collect();
    let neutral = matches!(
        format,
        pb::OutputFormat::Unspecified | pb::OutputFormat::Neutral
    );
    let sendable = match crate::turns::open_step(&history) {
        Some(start) if !neutral => start,
        _ => history.len(),
    };
    // What the body leaves out of the view is reported as an incomplete step.
    let open_messages = (history.len() - sendable) as i64;
    if open_messages > 0 {
        last_seq = built
            .history
            .iter()
            .nth(sendable.wrapping_sub(1))
            .map_or(0, |(stored, _)| stored.seq);
    }
    // The summaries' message, when it is not in the system prompt, goes after `at` of
    // the messages sent (0: it leads).
    let (at, block) = match &built.block_message {
        Some((at, message)) => ((*at).min(sendable), Some(message)),
        None => (0, None),
    };
    let views = || {
        history[..at]
            .iter()
            .copied()
            .chain(block)
            .chain(history[at..sendable].iter().copied())
    };
    let (messages, json) = match format {
        pb::OutputFormat::Unspecified | pb::OutputFormat::Neutral => {
            let mut messages: Vec<pb::Message> = built
                .history
                .iter()
                .map(|(stored, message)| stored_to_pb(stored, message))
                .collect();
            if let Some(block) = block {
                messages.insert(at.min(messages.len()), message_to_pb(block));
            }
            (messages, String::new())
        }
        pb::OutputFormat::OpenaiChat => {
            let body = render::openai_chat(&built.system_prompt, views(), &built.tool_definitions);
            (Vec::new(), body)
        }
        pb::OutputFormat::AnthropicMessages => {
            let body = render::anthropic_messages(
                &built.system_prompt,
                views(),
                &built.tool_definitions,
                built.report.output_reserve_tokens,
            );
            (Vec::new(), body)
        }
        pb::OutputFormat::OpenaiResponses => {
            let body = render::openai_responses(
                &built.system_prompt,
                views(),
                &built.tool_definitions,
                built.report.output_reserve_tokens,
            );
            (Vec::new(), body)
        }
        pb::OutputFormat::Gemini => {
            let body = render::gemini(
                &built.system_prompt,
                views(),
                &built.tool_definitions,
                built.report.output_reserve_tokens,
            );
            (Vec::new(), body)
        }
    };
    Ok(pb::BuildMessagesResponse {
        messages,
        json,
        budget,
        version: built.version,
        trimmed: Some(pb::Trimmed {
            turns: built.trimmed.turns,
            messages: built.trimmed.messages + open_messages,
            tokens: built.trimmed.tokens,
            incomplete_step_messages: built.trimmed.incomplete_step_messages + open_messages,
            summaries: built.trimmed.summaries,
        }),
        first_seq,
        last_seq,
        system_prompt: built.system_prompt,
        summaries,
    })
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
