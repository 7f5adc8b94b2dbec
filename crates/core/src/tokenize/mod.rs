//! Token counting: exact o200k_base / cl100k_base / DeepSeek-V3 BPE (vocabularies
//! embedded in the binary, linear time even on adversarial input) or a rune-counting
//! heuristic, plus the chat framing providers add around each message, tool call and
//! tool definition.
//!
//! Framing follows OpenAI's published accounting for chat models: every message costs
//! 3 tokens plus its role, a name costs 1 more, and every request is primed with 3
//! tokens for the reply. Tool calls and tool definitions are counted from their name,
//! description, arguments and JSON schema plus a small fixed overhead each.
mod classes;
mod memo;
mod openai;
mod pretokenize;
mod vocabularies;

pub use memo::TextCounts;
pub use vocabularies::{is_loaded, load};

use crate::message::{Message, Part, ToolCall};

/// Tokens of framing around every message.
pub const MESSAGE_OVERHEAD: i64 = 3;
/// Extra framing when a message carries a `name`.
pub const NAME_OVERHEAD: i64 = 1;
/// Tokens priming every request for the assistant's reply.
pub const REPLY_PRIMING: i64 = 3;
/// Framing of one tool call (type, id and argument delimiters).
pub const TOOL_CALL_OVERHEAD: i64 = 4;
/// Framing of one tool call as DeepSeek counts it, with the result's framing beyond
/// [`MESSAGE_OVERHEAD`] (call and parameter markup, result delimiters): measured on the
/// recorded deepseek-chat sessions, where every step (an assistant message making one
/// call, then its result) grew the provider's count by the decoded content plus 55 or
/// 56 tokens, at every one of 1 547 steps.
pub const DEEPSEEK_TOOL_CALL_OVERHEAD: i64 = 45;
/// Framing of the tools block of a request as DeepSeek counts it (its tool-use
/// instructions): the recorded deepseek-chat sessions' first requests, one tool each,
/// exceed ctxd's count with [`TOOLS_BLOCK_OVERHEAD`] by 232 tokens, all 20 of them.
/// Which part of that is per definition they cannot tell; the block takes it all, and
/// each definition costs [`TOOL_DEFINITION_OVERHEAD`] as for OpenAI.
pub const DEEPSEEK_TOOLS_BLOCK_OVERHEAD: i64 = TOOLS_BLOCK_OVERHEAD + 232;
/// Framing of one tool definition (namespace entry, delimiters).
pub const TOOL_DEFINITION_OVERHEAD: i64 = 8;
/// Framing of the tools block of a request, when it has any tools.
pub const TOOLS_BLOCK_OVERHEAD: i64 = 12;

/// Which tokenizer a session counts with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Tokenizer {
    O200kBase,
    Cl100kBase,
    /// DeepSeek-V3's byte-level BPE (deepseek-chat, deepseek-reasoner).
    DeepseekV3,
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
        if let Tokenizer::Heuristic { chars_per_token } = self.tokenizer {
            let chars = text.chars().count() as f64;
            return (chars / chars_per_token).ceil() as i64;
        }
        vocabularies::count(self.tokenizer, text) as i64
    }

    /// At least [`Counter::text`] of `text`, without tokenizing: every token of the
    /// byte-level BPEs covers at least one byte; the heuristic is exact and cheap.
    pub fn text_at_most(&self, text: &str) -> i64 {
        match self.tokenizer {
            Tokenizer::Heuristic { .. } => self.text(text),
            _ => i64::try_from(text.len()).unwrap_or(i64::MAX),
        }
    }

    /// Tokens a message costs in a request, framing included.
    pub fn message(&self, message: &Message) -> i64 {
        let mut tokens = MESSAGE_OVERHEAD + self.text(message.role.as_str());
        tokens += self.text(&message.content);
        for part in &message.parts {
            // Client estimates are bounded, but a message may carry many of them.
            tokens = tokens.saturating_add(match part {
                Part::Text { text } => self.text(text),
                Part::Media { token_estimate, .. } if *token_estimate > 0 => {
                    i64::from(*token_estimate)
                }
                Part::Media { .. } => self.media_item_tokens,
                Part::Native { json, .. } => self.text(json),
            });
        }
        tokens += self.text(&message.reasoning);
        if !message.name.is_empty() {
            tokens += NAME_OVERHEAD + self.text(&message.name);
        }
        // DeepSeek's template does not render call ids.
        if !message.tool_call_id.is_empty() && self.tokenizer != Tokenizer::DeepseekV3 {
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
        if self.tokenizer == Tokenizer::DeepseekV3 {
            return DEEPSEEK_TOOL_CALL_OVERHEAD
                + self.text(&call.name)
                + self.deepseek_arguments(&call.arguments);
        }
        TOOL_CALL_OVERHEAD
            + self.text(&call.id)
            + self.text(&call.name)
            + self.text(&call.arguments)
    }

    /// Arguments as DeepSeek renders them to its model: each parameter's name and value,
    /// a string value decoded (no quotes, no JSON escapes), any other value as compact
    /// JSON; arguments that are not a JSON object, as sent.
    fn deepseek_arguments(&self, arguments: &str) -> i64 {
        let Ok(serde_json::Value::Object(parameters)) = serde_json::from_str(arguments) else {
            return self.text(arguments);
        };
        parameters
            .iter()
            .map(|(name, value)| {
                self.text(name)
                    + match value {
                        serde_json::Value::String(text) => self.text(text),
                        other => self.text(&other.to_string()),
                    }
            })
            .sum()
    }

    /// Tokens of the system prompt, framing included (0 when empty: no message is sent);
    /// a long prompt's count is looked up in, or kept in, `memo`.
    pub fn system_prompt(&self, prompt: &str, memo: &TextCounts) -> i64 {
        if prompt.is_empty() {
            return 0;
        }
        MESSAGE_OVERHEAD + self.text("system") + memo.count(self, prompt)
    }

    /// Tokens of a set of tool definitions, framing included; long descriptions' and
    /// schemas' counts are looked up in, or kept in, `memo`.
    pub fn tool_definitions(&self, tools: &[ToolDefinition], memo: &TextCounts) -> i64 {
        if tools.is_empty() {
            return 0;
        }
        let defs: i64 = tools
            .iter()
            .map(|tool| {
                TOOL_DEFINITION_OVERHEAD
                    + self.text(&tool.name)
                    + memo.count(self, &tool.description)
                    + memo.count(self, &tool.parameters_json_schema)
            })
            .sum();
        let block = match self.tokenizer {
            Tokenizer::DeepseekV3 => DEEPSEEK_TOOLS_BLOCK_OVERHEAD,
            _ => TOOLS_BLOCK_OVERHEAD,
        };
        block + defs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Role;

    fn o200k() -> Counter {
        Counter::new(Tokenizer::O200kBase, 1000)
    }

    proptest::proptest! {
        /// The cheap bound a preview is checked against first never undercounts.
        #[test]
        fn text_at_most_never_undercounts(text in ".{0,200}", heuristic in 0.5..100.0f64) {
            for counter in [
                o200k(),
                Counter::new(Tokenizer::Cl100kBase, 1000),
                Counter::new(Tokenizer::DeepseekV3, 1000),
                Counter::new(Tokenizer::Heuristic { chars_per_token: heuristic }, 1000),
            ] {
                proptest::prop_assert!(counter.text_at_most(&text) >= counter.text(&text));
            }
        }
    }

    #[test]
    fn deepseek_counts_calls_as_deepseek_renders_them() {
        let deepseek = Counter::new(Tokenizer::DeepseekV3, 1000);
        let command = "cd /testbed && cat > a.py << 'EOF'\nprint(\"hi\")\nEOF";
        let call = |id: &str| {
            let mut message = Message::text(Role::Assistant, "");
            message.tool_calls.push(ToolCall {
                id: id.into(),
                name: "bash".into(),
                arguments: serde_json::json!({ "command": command }).to_string(),
            });
            message
        };
        // Parameter names and decoded values: no quotes, no escapes, no call id.
        let expected = MESSAGE_OVERHEAD
            + deepseek.text("assistant")
            + DEEPSEEK_TOOL_CALL_OVERHEAD
            + deepseek.text("bash")
            + deepseek.text("command")
            + deepseek.text(command);
        assert_eq!(deepseek.message(&call("call_1")), expected);
        assert_eq!(
            deepseek.message(&call("call_00_I97A8x52p7uzGuPltfmmxyg7")),
            expected
        );
        let mut result = Message::text(Role::Tool, "done");
        result.tool_call_id = "call_00_I97A8x52p7uzGuPltfmmxyg7".into();
        assert_eq!(
            deepseek.message(&result),
            MESSAGE_OVERHEAD + deepseek.text("tool") + deepseek.text("done")
        );
        // Non-string values as compact JSON; arguments that are not an object, as sent.
        let mut typed = Message::text(Role::Assistant, "");
        typed.tool_calls.push(ToolCall {
            id: "c".into(),
            name: "read".into(),
            arguments: r#"{"path": "a.py", "lines": [1, 20]}"#.into(),
        });
        let arguments = deepseek.text("path")
            + deepseek.text("a.py")
            + deepseek.text("lines")
            + deepseek.text("[1,20]");
        let framing = MESSAGE_OVERHEAD + deepseek.text("assistant") + DEEPSEEK_TOOL_CALL_OVERHEAD;
        assert_eq!(
            deepseek.message(&typed),
            framing + deepseek.text("read") + arguments
        );
        typed.tool_calls[0].arguments = "not json".into();
        assert_eq!(
            deepseek.message(&typed),
            framing + deepseek.text("read") + deepseek.text("not json")
        );
        // OpenAI's framing counts the id and the arguments as sent.
        let o200k = o200k();
        assert_eq!(
            o200k.message(&call("call_1")),
            MESSAGE_OVERHEAD
                + o200k.text("assistant")
                + TOOL_CALL_OVERHEAD
                + o200k.text("call_1")
                + o200k.text("bash")
                + o200k.text(&serde_json::json!({ "command": command }).to_string())
        );
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
        let memo = TextCounts::new(0);
        let one = counter.tool_definitions(std::slice::from_ref(&tool), &memo);
        assert!(one > TOOLS_BLOCK_OVERHEAD + TOOL_DEFINITION_OVERHEAD + 10);
        assert_eq!(counter.tool_definitions(&[], &memo), 0);
    }
}
