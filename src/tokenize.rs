//! Token counting: exact o200k_base / cl100k_base BPE (vocabularies embedded in the
//! binary, linear time even on adversarial input) or a rune-counting heuristic, plus the
//! chat framing providers add around each message, tool call and tool definition.
//!
//! Framing follows OpenAI's published accounting for chat models: every message costs
//! 3 tokens plus its role, a name costs 1 more, and every request is primed with 3
//! tokens for the reply. Tool calls and tool definitions are counted from their name,
//! description, arguments and JSON schema plus a small fixed overhead each.
use crate::message::{Message, Part, ToolCall};

/// Tokens of framing around every message.
pub const MESSAGE_OVERHEAD: i64 = 3;
/// Extra framing when a message carries a `name`.
pub const NAME_OVERHEAD: i64 = 1;
/// Tokens priming every request for the assistant's reply.
pub const REPLY_PRIMING: i64 = 3;
/// Framing of one tool call (type, id and argument delimiters).
pub const TOOL_CALL_OVERHEAD: i64 = 4;
/// Framing of one tool definition (namespace entry, delimiters).
pub const TOOL_DEFINITION_OVERHEAD: i64 = 8;
/// Framing of the tools block of a request, when it has any tools.
pub const TOOLS_BLOCK_OVERHEAD: i64 = 12;

/// Which tokenizer a session counts with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Tokenizer {
    O200kBase,
    Cl100kBase,
    /// Unicode scalar values per token.
    Heuristic {
        chars_per_token: f64,
    },
}

/// A tool definition as offered to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDefinition {
    pub name: String,
    pub description: String,
    pub parameters_json_schema: String,
}

/// Loads both vocabularies (they are decoded on first use, which takes a noticeable
/// fraction of a second), so no request pays for it.
pub fn warm() {
    bpe_openai::o200k_base().count("warm");
    bpe_openai::cl100k_base().count("warm");
}

/// Counts tokens of text and of messages for one session's policy.
#[derive(Debug, Clone, Copy)]
pub struct Counter {
    pub tokenizer: Tokenizer,
    /// Flat cost of a media item whose client gave no estimate.
    pub media_item_tokens: i64,
}

impl Counter {
    pub fn new(tokenizer: Tokenizer, media_item_tokens: i64) -> Counter {
        Counter {
            tokenizer,
            media_item_tokens,
        }
    }

    /// Tokens of a bare text, without framing.
    pub fn text(&self, text: &str) -> i64 {
        if text.is_empty() {
            return 0;
        }
        let count = match self.tokenizer {
            Tokenizer::O200kBase => bpe_openai::o200k_base().count(text),
            Tokenizer::Cl100kBase => bpe_openai::cl100k_base().count(text),
            Tokenizer::Heuristic { chars_per_token } => {
                let chars = text.chars().count() as f64;
                return (chars / chars_per_token).ceil() as i64;
            }
        };
        count as i64
    }

    /// Tokens a message costs in a request, framing included.
    pub fn message(&self, message: &Message) -> i64 {
        let mut tokens = MESSAGE_OVERHEAD + self.text(message.role.as_str());
        tokens += self.text(&message.content);
        for part in &message.parts {
            tokens += match part {
                Part::Text { text } => self.text(text),
                Part::Media { token_estimate, .. } if *token_estimate > 0 => {
                    i64::from(*token_estimate)
                }
                Part::Media { .. } => self.media_item_tokens,
            };
        }
        tokens += self.text(&message.reasoning);
        if !message.name.is_empty() {
            tokens += NAME_OVERHEAD + self.text(&message.name);
        }
        if !message.tool_call_id.is_empty() {
            tokens += self.text(&message.tool_call_id);
        }
        tokens += message
            .tool_calls
            .iter()
            .map(|call| self.tool_call(call))
            .sum::<i64>();
        tokens
    }

    fn tool_call(&self, call: &ToolCall) -> i64 {
        TOOL_CALL_OVERHEAD
            + self.text(&call.id)
            + self.text(&call.name)
            + self.text(&call.arguments)
    }

    /// Tokens of the system prompt, framing included (0 when empty: no message is sent).
    pub fn system_prompt(&self, prompt: &str) -> i64 {
        if prompt.is_empty() {
            return 0;
        }
        MESSAGE_OVERHEAD + self.text("system") + self.text(prompt)
    }

    /// Tokens of a set of tool definitions, framing included.
    pub fn tool_definitions(&self, tools: &[ToolDefinition]) -> i64 {
        if tools.is_empty() {
            return 0;
        }
        let defs: i64 = tools
            .iter()
            .map(|tool| {
                TOOL_DEFINITION_OVERHEAD
                    + self.text(&tool.name)
                    + self.text(&tool.description)
                    + self.text(&tool.parameters_json_schema)
            })
            .sum();
        TOOLS_BLOCK_OVERHEAD + defs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Role;

    fn o200k() -> Counter {
        Counter::new(Tokenizer::O200kBase, 1000)
    }

    #[test]
    fn exact_counts_match_known_values() {
        // Reference counts from OpenAI's tiktoken.
        assert_eq!(o200k().text("hello world"), 2);
        let cl = Counter::new(Tokenizer::Cl100kBase, 1000);
        assert_eq!(cl.text("tiktoken is great!"), 6);
    }

    #[test]
    fn heuristic_counts_runes_not_bytes() {
        let counter = Counter::new(
            Tokenizer::Heuristic {
                chars_per_token: 4.0,
            },
            1000,
        );
        assert_eq!(counter.text("abcd"), 1);
        assert_eq!(counter.text("abcde"), 2);
        // Eight two-byte runes are eight characters, not sixteen.
        assert_eq!(counter.text("éééééééé"), 2);
    }

    #[test]
    fn message_counts_framing_tool_calls_reasoning_and_media() {
        let counter = o200k();
        let bare = Message::text(Role::Assistant, "");
        let framing = counter.message(&bare);
        assert_eq!(framing, MESSAGE_OVERHEAD + 1);

        let mut with_call = bare.clone();
        with_call.tool_calls.push(ToolCall {
            id: "call_1".into(),
            name: "bash".into(),
            arguments: r#"{"command":"ls"}"#.into(),
        });
        assert!(counter.message(&with_call) > framing + TOOL_CALL_OVERHEAD);

        let mut with_reasoning = bare.clone();
        with_reasoning.reasoning = "thinking hard about it".into();
        assert_eq!(
            counter.message(&with_reasoning),
            framing + counter.text("thinking hard about it")
        );

        let mut with_media = Message::text(Role::User, "");
        with_media.parts.push(Part::Media {
            uri: "file://a.png".into(),
            mime_type: "image/png".into(),
            token_estimate: 0,
        });
        with_media.parts.push(Part::Media {
            uri: "file://b.png".into(),
            mime_type: "image/png".into(),
            token_estimate: 85,
        });
        assert_eq!(
            counter.message(&with_media),
            MESSAGE_OVERHEAD + 1 + 1000 + 85
        );
    }

    #[test]
    fn tool_definitions_count_schema() {
        let counter = o200k();
        let tool = ToolDefinition {
            name: "bash".into(),
            description: "Execute a bash command".into(),
            parameters_json_schema:
                r#"{"type":"object","properties":{"command":{"type":"string"}}}"#.into(),
        };
        let one = counter.tool_definitions(std::slice::from_ref(&tool));
        assert!(one > TOOLS_BLOCK_OVERHEAD + TOOL_DEFINITION_OVERHEAD + 10);
        assert_eq!(counter.tool_definitions(&[]), 0);
    }
}
