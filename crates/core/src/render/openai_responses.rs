//! PLACEHOLDER: being written. OpenAI Responses: `{"instructions", "input", "tools", "max_output_tokens"}`.
use crate::message::Message;
use crate::tokenize::ToolDefinition;

/// An OpenAI Responses body.
pub fn openai_responses<'a>(
    _system_prompt: &'a str,
    _messages: impl IntoIterator<Item = &'a Message>,
    _tools: &'a [ToolDefinition],
    _max_output_tokens: i64,
) -> String {
    String::new()
}
