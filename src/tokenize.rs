//! Token counting: exact o200k_base / cl100k_base BPE (vocabularies embedded in the
//! binary, linear time even on adversarial input) or a rune-counting heuristic, plus the
//! chat framing providers add around each message, tool call and tool definition.
//!
//! Framing follows OpenAI's published accounting for chat models: every message costs
//! 3 tokens plus its role, a name costs 1 more, and every request is primed with 3
//! tokens for the reply. Tool calls and tool definitions are counted from their name,
//! description, arguments and JSON schema plus a small fixed overhead each.
use std::collections::HashMap;
use std::sync::Mutex;

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
        TOOLS_BLOCK_OVERHEAD + defs
    }
}

/// Texts shorter than this are tokenized every time (about as fast as looking them up).
const REMEMBER_MIN_BYTES: usize = 256;

/// The token counts of the long texts clients send with every request — system prompts,
/// tool descriptions and schemas — per exact tokenizer, so that a build or a budget
/// check does not tokenize them again each time. Keyed by the text itself, so a count is
/// never another text's. Bounded by the bytes of text it holds, in two generations: when
/// the newer one holds half the budget it becomes the older one and the older one is
/// dropped, and a hit in the older one moves the text to the newer one, so the texts in
/// use stay while the rest age out. Heuristic counts are not kept (they cost less than
/// the lookup). Lookups hash the whole text: callers keep large ones off the async
/// runtime.
#[derive(Debug)]
pub struct TextCounts {
    capacity_bytes: usize,
    inner: Mutex<Generations>,
}

#[derive(Debug, Default)]
struct Generations {
    newer: Generation,
    older: Generation,
}

#[derive(Debug, Default)]
struct Generation {
    o200k: HashMap<String, i64>,
    cl100k: HashMap<String, i64>,
    bytes: usize,
}

impl Generation {
    /// The map of `tokenizer`'s counts; `None` for the heuristic, which is not kept.
    fn map(&mut self, tokenizer: Tokenizer) -> Option<&mut HashMap<String, i64>> {
        match tokenizer {
            Tokenizer::O200kBase => Some(&mut self.o200k),
            Tokenizer::Cl100kBase => Some(&mut self.cl100k),
            Tokenizer::Heuristic { .. } => None,
        }
    }
}

impl TextCounts {
    /// A memo of at most `capacity_bytes` of text; 0 keeps nothing.
    pub fn new(capacity_bytes: usize) -> TextCounts {
        TextCounts {
            capacity_bytes,
            inner: Mutex::new(Generations::default()),
        }
    }

    /// `counter.text(text)`, from the memo when it has it; kept when worth keeping.
    pub fn count(&self, counter: &Counter, text: &str) -> i64 {
        if !self.worth_keeping(counter, text) {
            return counter.text(text);
        }
        if let Some(count) = self.get(counter.tokenizer, text) {
            return count;
        }
        let count = counter.text(text);
        self.put(counter.tokenizer, text, count);
        count
    }

    fn worth_keeping(&self, counter: &Counter, text: &str) -> bool {
        !matches!(counter.tokenizer, Tokenizer::Heuristic { .. })
            && text.len() >= REMEMBER_MIN_BYTES
            && text.len() <= self.capacity_bytes / 2
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Generations> {
        // A panic while holding the lock leaves whole entries or none: still usable.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn get(&self, tokenizer: Tokenizer, text: &str) -> Option<i64> {
        let mut inner = self.lock();
        if let Some(&count) = inner.newer.map(tokenizer)?.get(text) {
            return Some(count);
        }
        let count = inner.older.map(tokenizer)?.remove(text)?;
        inner.older.bytes -= text.len();
        self.insert(&mut inner, tokenizer, text, count);
        Some(count)
    }

    fn put(&self, tokenizer: Tokenizer, text: &str, count: i64) {
        let mut inner = self.lock();
        self.insert(&mut inner, tokenizer, text, count);
    }

    fn insert(&self, inner: &mut Generations, tokenizer: Tokenizer, text: &str, count: i64) {
        if inner.newer.bytes + text.len() > self.capacity_bytes / 2 {
            inner.older = std::mem::take(&mut inner.newer);
        }
        let newer = &mut inner.newer;
        if let Some(map) = newer.map(tokenizer)
            && map.insert(text.to_string(), count).is_none()
        {
            newer.bytes += text.len();
        }
    }

    #[cfg(test)]
    fn held_bytes(&self) -> usize {
        let inner = self.lock();
        inner.newer.bytes + inner.older.bytes
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
        let memo = TextCounts::new(0);
        let one = counter.tool_definitions(std::slice::from_ref(&tool), &memo);
        assert!(one > TOOLS_BLOCK_OVERHEAD + TOOL_DEFINITION_OVERHEAD + 10);
        assert_eq!(counter.tool_definitions(&[], &memo), 0);
    }

    #[test]
    fn remembered_counts_equal_fresh_counts_and_stay_bounded() {
        let prompt = "You are a careful engineer. Answer briefly. ".repeat(20);
        let tool = ToolDefinition {
            name: "bash".into(),
            description: "Run one shell command and return its output. ".repeat(10),
            parameters_json_schema: format!(
                r#"{{"type":"object","properties":{{"command":{{"type":"string","description":"{}"}}}}}}"#,
                "the command line ".repeat(30)
            ),
        };
        let tools = [tool];
        let kept =
            prompt.len() + tools[0].description.len() + tools[0].parameters_json_schema.len();
        for counter in [o200k(), Counter::new(Tokenizer::Cl100kBase, 1000)] {
            let memo = TextCounts::new(1 << 20);
            let none = TextCounts::new(0);
            let fresh = (
                counter.system_prompt(&prompt, &none),
                counter.tool_definitions(&tools, &none),
            );
            assert_eq!(none.held_bytes(), 0);
            for _ in 0..3 {
                let counted = (
                    counter.system_prompt(&prompt, &memo),
                    counter.tool_definitions(&tools, &memo),
                );
                assert_eq!(counted, fresh);
            }
            // The prompt, the description and the schema are kept once each; the name is
            // short.
            assert_eq!(memo.held_bytes(), kept);
        }
        // One tokenizer's count is never another's.
        let memo = TextCounts::new(1 << 20);
        let cl100k = Counter::new(Tokenizer::Cl100kBase, 1000);
        let text = "Grüße aus Köln — schön, dass es Dich gibt! ".repeat(10);
        assert_ne!(o200k().text(&text), cl100k.text(&text));
        assert_eq!(memo.count(&o200k(), &text), o200k().text(&text));
        assert_eq!(memo.count(&cl100k, &text), cl100k.text(&text));
        assert_eq!(memo.count(&o200k(), &text), o200k().text(&text));
        // Heuristic counts are not kept.
        let heuristic = Counter::new(
            Tokenizer::Heuristic {
                chars_per_token: 4.0,
            },
            1000,
        );
        let memo = TextCounts::new(1 << 20);
        heuristic.system_prompt(&prompt, &memo);
        assert_eq!(memo.held_bytes(), 0);
    }

    #[test]
    fn texts_in_use_stay_while_others_age_out() {
        let counter = o200k();
        let text = |i: usize| format!("{i:04} {}", "filler words to make it long ".repeat(10));
        let size = text(0).len();
        // Room for four texts per generation.
        let memo = TextCounts::new(8 * size + 1);
        let hot = text(0);
        memo.count(&counter, &hot);
        for i in 1..100 {
            memo.count(&counter, &text(i));
            // The hot text, used between the others, is a hit every time...
            assert!(memo.get(counter.tokenizer, &hot).is_some(), "lost at {i}");
            // ...and the memo never holds more than its budget.
            assert!(memo.held_bytes() <= 8 * size + 1);
        }
        // A text used once long ago is gone.
        assert!(memo.get(counter.tokenizer, &text(1)).is_none());
        // A text larger than half the budget is counted, not kept.
        let small = TextCounts::new(2 * size - 2);
        assert_eq!(small.count(&counter, &hot), counter.text(&hot));
        assert_eq!(small.held_bytes(), 0);
    }
}
