//! Messages, content parts and tool definitions: proto ⇄ core.

use super::timestamp;
use crate::engine;
use crate::error::{Error, Result};
use crate::message::{Message, Part, Role, StoredMessage, ToolCall};
use crate::pb;
use crate::tokenize::ToolDefinition;

pub(in crate::api) fn messages_from_pb(
    messages: Vec<pb::Message>,
    list: &str,
) -> Result<Vec<Message>> {
    messages
        .into_iter()
        .enumerate()
        .map(|(index, message)| message_from_pb(index, message, list))
        .collect()
}

pub(in crate::api) fn message_from_pb(
    index: usize,
    message: pb::Message,
    list: &str,
) -> Result<Message> {
    let role = Role::from_i32(message.role).ok_or_else(|| {
        Error::invalid(
            format!("{list}[{index}].role"),
            "must be ROLE_SYSTEM, ROLE_USER, ROLE_ASSISTANT or ROLE_TOOL",
        )
    })?;
    let parts = message
        .parts
        .into_iter()
        .enumerate()
        .map(|(part_index, part)| match part.part {
            Some(pb::content_part::Part::Text(text)) => Ok(Part::Text { text }),
            Some(pb::content_part::Part::Media(media))
                if i64::from(media.token_estimate) > crate::policy::MAX_TOKENS =>
            {
                Err(Error::invalid(
                    format!("{list}[{index}].parts[{part_index}].media.token_estimate"),
                    format!(
                        "must be at most {}, got {}",
                        crate::policy::MAX_TOKENS,
                        media.token_estimate
                    ),
                ))
            }
            Some(pb::content_part::Part::Media(media)) => Ok(Part::Media {
                uri: media.uri,
                mime_type: media.mime_type,
                token_estimate: media.token_estimate,
            }),
            None => Err(Error::invalid(
                format!("{list}[{index}].parts[{part_index}]"),
                "must hold text or media",
            )),
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Message {
        role,
        content: message.content,
        parts,
        reasoning: message.reasoning,
        tool_calls: message
            .tool_calls
            .into_iter()
            .map(|call| ToolCall {
                id: call.id,
                name: call.name,
                arguments: call.arguments_json,
            })
            .collect(),
        tool_call_id: message.tool_call_id,
        name: message.name,
        metadata: message.metadata.into_iter().collect(),
        pinned: message.pinned,
    })
}

/// A synthetic message (no seq: not in the log).
pub(in crate::api) fn message_to_pb(message: &Message) -> pb::Message {
    pb::Message {
        role: message.role as i32,
        content: message.content.clone(),
        view_state: pb::ViewState::Full as i32,
        ..Default::default()
    }
}

/// `message` as the API shows it, with the row of the stored message it is sent for.
pub(in crate::api) fn stored_to_pb(stored: &StoredMessage, message: &Message) -> pb::Message {
    pb::Message {
        role: message.role as i32,
        content: message.content.clone(),
        parts: message
            .parts
            .iter()
            .map(|part| pb::ContentPart {
                part: Some(match part {
                    Part::Text { text } => pb::content_part::Part::Text(text.clone()),
                    Part::Media {
                        uri,
                        mime_type,
                        token_estimate,
                    } => pb::content_part::Part::Media(pb::MediaRef {
                        uri: uri.clone(),
                        mime_type: mime_type.clone(),
                        token_estimate: *token_estimate,
                    }),
                    // NEUTRAL has no part for a provider's own block: its JSON as text.
                    Part::Native { json, .. } => pb::content_part::Part::Text(json.clone()),
                }),
            })
            .collect(),
        reasoning: message.reasoning.clone(),
        tool_calls: message
            .tool_calls
            .iter()
            .map(|call| pb::ToolCall {
                id: call.id.clone(),
                name: call.name.clone(),
                arguments_json: call.arguments.clone(),
            })
            .collect(),
        tool_call_id: message.tool_call_id.clone(),
        name: message.name.clone(),
        metadata: message
            .metadata
            .iter()
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect(),
        pinned: message.pinned,
        seq: stored.seq,
        turn: stored.turn,
        token_count: stored.token_count,
        view_state: stored.view_state as i32,
        view_token_count: stored.view_tokens,
        created_at: Some(timestamp(stored.created_at)),
    }
}

pub(in crate::api) fn tools_from_pb(tools: Option<pb::Tools>) -> engine::Tools {
    match tools.and_then(|tools| tools.tools) {
        None => engine::Tools::None,
        Some(pb::tools::Tools::TokenCount(count)) => engine::Tools::TokenCount(count),
        Some(pb::tools::Tools::Definitions(list)) => engine::Tools::Definitions(
            list.items
                .into_iter()
                .map(|tool| ToolDefinition {
                    name: tool.name,
                    description: tool.description,
                    parameters_json_schema: tool.parameters_json_schema,
                })
                .collect(),
        ),
    }
}

/// The provider shape of a wire format; `None` for NEUTRAL (and unspecified).
pub(in crate::api) fn provider_of(format: pb::OutputFormat) -> Option<crate::format::Format> {
    match format {
        pb::OutputFormat::OpenaiChat => Some(crate::format::Format::OpenAiChat),
        pb::OutputFormat::OpenaiResponses => Some(crate::format::Format::OpenAiResponses),
        pb::OutputFormat::AnthropicMessages => Some(crate::format::Format::AnthropicMessages),
        pb::OutputFormat::Gemini => Some(crate::format::Format::Gemini),
        pb::OutputFormat::Unspecified | pb::OutputFormat::Neutral => None,
    }
}
