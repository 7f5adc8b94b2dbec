//! Checks of what a client sends that need no database: session ids, messages and their
//! tool calls, tool definitions, usage reports, and a batch's tool-call references
//! against what the session already holds. Each refusal names the field.
use std::collections::{HashMap, HashSet};

use crate::error::{Error, Result, quoted};
use crate::message::{Message, Part, Role, Usage};
use crate::policy::MAX_TOKENS;
use crate::tokenize::ToolDefinition;

/// Longest session id accepted.
const MAX_SESSION_ID_CHARS: usize = 128;

pub fn validate_session_id(session_id: &str) -> Result<()> {
    let ok_chars = session_id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '-'));
    if session_id.is_empty() || session_id.len() > MAX_SESSION_ID_CHARS || !ok_chars {
        return Err(Error::invalid(
            "session_id",
            format!(
                "must be 1 to {MAX_SESSION_ID_CHARS} characters from A-Z a-z 0-9 . _ : -, got {}",
                quoted(session_id)
            ),
        ));
    }
    Ok(())
}

pub fn validate_tools(definitions: &[ToolDefinition]) -> Result<()> {
    for (index, tool) in definitions.iter().enumerate() {
        if tool.name.is_empty() {
            return Err(Error::invalid(
                format!("tools.definitions.items[{index}].name"),
                "must not be empty",
            ));
        }
        if !tool.parameters_json_schema.is_empty()
            // Checked, not built: every build checks its tools.
            && serde_json::from_str::<serde::de::IgnoredAny>(&tool.parameters_json_schema)
                .is_err()
        {
            return Err(Error::invalid(
                format!("tools.definitions.items[{index}].parameters_json_schema"),
                "is not valid JSON",
            ));
        }
    }
    Ok(())
}

/// Checks what can be checked without the database.
pub fn validate_batch(messages: &[Message], max_content_bytes: usize) -> Result<()> {
    if messages.is_empty() {
        return Err(Error::invalid("messages", "must hold at least one message"));
    }
    let mut call_ids = HashSet::new();
    for (index, message) in messages.iter().enumerate() {
        validate_message(index, message, max_content_bytes, "messages")?;
        for (call_index, call) in message.tool_calls.iter().enumerate() {
            if !call_ids.insert(call.id.as_str()) {
                return Err(Error::invalid(
                    format!("messages[{index}].tool_calls[{call_index}].id"),
                    format!("{} is used twice in this request", quoted(&call.id)),
                ));
            }
        }
    }
    Ok(())
}

pub fn validate_message(
    index: usize,
    message: &Message,
    max_content_bytes: usize,
    list: &str,
) -> Result<()> {
    let field = |name: &str| format!("{list}[{index}].{name}");
    if message.content_bytes() > max_content_bytes {
        return Err(Error::invalid(
            field("content"),
            format!(
                "is {} bytes, over the limit of {max_content_bytes}",
                message.content_bytes()
            ),
        ));
    }
    match message.role {
        Role::Assistant => {
            if !message.has_content() && message.tool_calls.is_empty() {
                return Err(Error::invalid(
                    field("content"),
                    "an assistant message needs content, content parts or tool calls",
                ));
            }
        }
        Role::Tool => {
            if message.tool_call_id.is_empty() {
                return Err(Error::invalid(
                    field("tool_call_id"),
                    "a tool result must name the tool call it answers",
                ));
            }
        }
        Role::User | Role::System => {
            if !message.has_content() {
                return Err(Error::invalid(
                    field("content"),
                    format!(
                        "a {} message needs content or content parts",
                        message.role.as_str()
                    ),
                ));
            }
        }
    }
    if !message.tool_calls.is_empty() && message.role != Role::Assistant {
        return Err(Error::invalid(
            field("tool_calls"),
            "only assistant messages make tool calls",
        ));
    }
    if !message.tool_call_id.is_empty() && message.role != Role::Tool {
        return Err(Error::invalid(
            field("tool_call_id"),
            "only tool results answer tool calls",
        ));
    }
    for (call_index, call) in message.tool_calls.iter().enumerate() {
        let call_field = |name: &str| format!("{list}[{index}].tool_calls[{call_index}].{name}");
        if call.id.is_empty() {
            return Err(Error::invalid(call_field("id"), "must not be empty"));
        }
        if call.name.is_empty() {
            return Err(Error::invalid(call_field("name"), "must not be empty"));
        }
        if !call.arguments.is_empty() {
            let Ok(arguments) = serde_json::from_str::<serde_json::Value>(&call.arguments) else {
                return Err(Error::invalid(
                    call_field("arguments_json"),
                    "is not valid JSON",
                ));
            };
            if json_has_nul(&arguments) {
                return Err(Error::invalid(call_field("arguments_json"), NUL_REASON));
            }
        }
    }
    for (name, text) in message_texts(message) {
        if text.contains('\0') {
            return Err(Error::invalid(field(&name), NUL_REASON));
        }
    }
    Ok(())
}

pub const NUL_REASON: &str = "contains a NUL character (U+0000), which cannot be stored";

/// Every text field of a message with its field name (relative to the message).
fn message_texts(message: &Message) -> Vec<(String, &str)> {
    let mut texts = vec![
        ("content".to_string(), message.content.as_str()),
        ("reasoning".to_string(), message.reasoning.as_str()),
        ("tool_call_id".to_string(), message.tool_call_id.as_str()),
        ("name".to_string(), message.name.as_str()),
    ];
    for (index, part) in message.parts.iter().enumerate() {
        match part {
            Part::Text { text } => texts.push((format!("parts[{index}].text"), text)),
            Part::Media { uri, mime_type, .. } => {
                texts.push((format!("parts[{index}].media.uri"), uri));
                texts.push((format!("parts[{index}].media.mime_type"), mime_type));
            }
            Part::Native { json, .. } => texts.push((format!("parts[{index}].native"), json)),
        }
    }
    for (index, call) in message.tool_calls.iter().enumerate() {
        texts.push((format!("tool_calls[{index}].id"), &call.id));
        texts.push((format!("tool_calls[{index}].name"), &call.name));
    }
    for (key, value) in &message.metadata {
        texts.push(("metadata".to_string(), key));
        texts.push((format!("metadata[{}]", quoted(key)), value));
    }
    texts
}

fn json_has_nul(value: &serde_json::Value) -> bool {
    match value {
        serde_json::Value::String(text) => text.contains('\0'),
        serde_json::Value::Array(items) => items.iter().any(json_has_nul),
        serde_json::Value::Object(map) => map
            .iter()
            .any(|(key, value)| key.contains('\0') || json_has_nul(value)),
        _ => false,
    }
}

/// Index of the assistant message the usage belongs to.
pub fn validate_usage(usage: Option<Usage>, messages: &[Message]) -> Result<Option<usize>> {
    let Some(usage) = usage else {
        return Ok(None);
    };
    for (field, value) in [
        ("usage.input_tokens", usage.input_tokens),
        ("usage.output_tokens", usage.output_tokens),
        ("usage.cached_input_tokens", usage.cached_input_tokens),
    ] {
        if !(0..=MAX_TOKENS).contains(&value) {
            return Err(Error::invalid(
                field,
                format!("must be between 0 and {MAX_TOKENS}, got {value}"),
            ));
        }
    }
    if usage.cached_input_tokens > usage.input_tokens {
        return Err(Error::invalid(
            "usage.cached_input_tokens",
            "cannot exceed input_tokens",
        ));
    }
    match messages.iter().position(|m| m.role == Role::Assistant) {
        Some(index) => Ok(Some(index)),
        None => Err(Error::invalid(
            "usage",
            "describes a model call, but messages holds no assistant message",
        )),
    }
}

/// A tool call id and the seq of the message making or answering it.
pub type CallSeq = (String, i64);

/// Checks every tool result against the calls the session (and this batch) has made,
/// and every new call id against the session's (`known`: what the session knows of the
/// calls the batch names, id → seq of its result). Returns the new calls and answers
/// with the seqs they will get.
pub fn check_tool_references(
    known: &HashMap<String, Option<i64>>,
    messages: &[Message],
    message_count: i64,
) -> Result<(Vec<CallSeq>, Vec<CallSeq>)> {
    let mut batch_calls: HashMap<&str, bool> = HashMap::new();
    let mut calls = Vec::new();
    let mut answers = Vec::new();
    for (index, message) in messages.iter().enumerate() {
        let seq = message_count + 1 + index as i64;
        for (call_index, call) in message.tool_calls.iter().enumerate() {
            if known.contains_key(&call.id) {
                return Err(Error::invalid(
                    format!("messages[{index}].tool_calls[{call_index}].id"),
                    format!("the session already has a tool call {}", quoted(&call.id)),
                ));
            }
            batch_calls.insert(call.id.as_str(), false);
            calls.push((call.id.clone(), seq));
        }
        if message.role != Role::Tool {
            continue;
        }
        let id = message.tool_call_id.as_str();
        let field = format!("messages[{index}].tool_call_id");
        let already = match (batch_calls.get_mut(id), known.get(id)) {
            (Some(answered), _) => std::mem::replace(answered, true),
            (None, Some(Some(_))) => true,
            (None, Some(None)) => answers.iter().any(|(answered, _)| answered == id),
            (None, None) => {
                return Err(Error::invalid(
                    field,
                    format!("no tool call {} was made in this session", quoted(id)),
                ));
            }
        };
        if already {
            return Err(Error::invalid(
                field,
                format!("tool call {} was already answered", quoted(id)),
            ));
        }
        answers.push((id.to_string(), seq));
    }
    Ok((calls, answers))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::ToolCall;
    use proptest::prelude::*;

    /// A batch message: an assistant making calls, or a tool result answering one.
    #[derive(Debug, Clone)]
    enum Step {
        Calls(Vec<&'static str>),
        Answer(&'static str),
    }

    fn id() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec!["a", "b", "c", "d"])
    }

    fn message(step: &Step) -> Message {
        match step {
            Step::Calls(ids) => Message {
                tool_calls: ids
                    .iter()
                    .map(|id| ToolCall {
                        id: id.to_string(),
                        name: "bash".into(),
                        arguments: String::new(),
                    })
                    .collect(),
                ..Message::text(Role::Assistant, "")
            },
            Step::Answer(id) => Message {
                tool_call_id: id.to_string(),
                ..Message::text(Role::Tool, "out")
            },
        }
    }

    proptest! {
        /// A batch is accepted exactly when every result answers a call made earlier (in
        /// the session or the batch) and not answered yet, and no call reuses an id the
        /// session has; what it returns is every new call and answer with its seq.
        #[test]
        fn tool_references_accept_exactly_the_valid_batches(
            known in prop::collection::hash_map(id(), prop::option::of(1..50i64), 0..4),
            steps in prop::collection::vec(
                prop_oneof![
                    prop::collection::vec(id(), 1..3).prop_map(Step::Calls),
                    id().prop_map(Step::Answer),
                ],
                0..6,
            ),
        ) {
            // Ids repeated within one batch are refused earlier (validate_batch).
            let mut made: Vec<&str> = Vec::new();
            for step in &steps {
                if let Step::Calls(ids) = step {
                    made.extend(ids);
                }
            }
            let mut unique = made.clone();
            unique.sort_unstable();
            unique.dedup();
            prop_assume!(unique.len() == made.len());

            // The model: which calls are open, step by step.
            let mut open: HashMap<&str, bool> =
                known.iter().map(|(id, result)| (*id, result.is_none())).collect();
            let mut valid = true;
            for step in &steps {
                match step {
                    Step::Calls(ids) => {
                        for id in ids {
                            if open.contains_key(id) {
                                valid = false;
                            }
                            open.insert(id, true);
                        }
                    }
                    Step::Answer(id) => match open.get_mut(id) {
                        Some(still_open) if *still_open => *still_open = false,
                        _ => valid = false,
                    },
                }
            }

            let known: HashMap<String, Option<i64>> =
                known.into_iter().map(|(id, result)| (id.to_string(), result)).collect();
            let messages: Vec<Message> = steps.iter().map(message).collect();
            let outcome = check_tool_references(&known, &messages, 10);
            prop_assert_eq!(outcome.is_ok(), valid, "{:?}", outcome);
            if let Ok((calls, answers)) = outcome {
                prop_assert_eq!(calls.len(), made.len());
                let results = steps.iter().filter(|s| matches!(s, Step::Answer(_))).count();
                prop_assert_eq!(answers.len(), results);
                prop_assert!(calls.iter().chain(&answers).all(|(_, seq)| *seq > 10));
            }
        }
    }
}
