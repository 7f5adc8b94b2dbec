//! PLACEHOLDER: being written. Gemini generateContent: `{"systemInstruction", "contents", "tools", "generationConfig"}`.
use crate::message::Message;
use crate::tokenize::ToolDefinition;

/// A Gemini generateContent body.
pub fn gemini<'a>(
    _system_prompt: &'a str,
    _messages: impl IntoIterator<Item = &'a Message>,
    _tools: &'a [ToolDefinition],
    _max_output_tokens: i64,
) -> String {
    String::new()
}
