//! Token counting: exact o200k_base / cl100k_base / DeepSeek-V3 BPE (vocabularies
//! embedded in the binary, linear time even on adversarial input) or a rune-counting
//! heuristic, plus the chat framing providers add around each message, tool call and
//! tool definition.
//!
//! Framing follows OpenAI's published accounting for chat models: every message costs
//! 3 tokens plus its role, a name costs 1 more, and every request is primed with 3
//! tokens for the reply. Tool calls and tool definitions are counted from their name,
//! description, arguments and JSON schema plus a small fixed overhead each.
use std::collections::HashMap;
use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{LazyLock, Mutex};

use bpe_openai::byte_pair_encoding::BytePairEncoding;

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

/// Whether each exact tokenizer's vocabulary is built: o200k, cl100k, deepseek_v3.
static LOADED: [AtomicBool; 3] = [
    AtomicBool::new(false),
    AtomicBool::new(false),
    AtomicBool::new(false),
];

/// The slot of `tokenizer` in [`LOADED`]; the heuristic has no vocabulary.
fn slot(tokenizer: Tokenizer) -> Option<usize> {
    match tokenizer {
        Tokenizer::O200kBase => Some(0),
        Tokenizer::Cl100kBase => Some(1),
        Tokenizer::DeepseekV3 => Some(2),
        Tokenizer::Heuristic { .. } => None,
    }
}

/// Whether counting with `tokenizer` is ready without building a vocabulary first.
pub fn is_loaded(tokenizer: Tokenizer) -> bool {
    slot(tokenizer).is_none_or(|slot| LOADED[slot].load(Ordering::Acquire))
}

/// Builds `tokenizer`'s vocabulary if it is not built yet. A vocabulary is built on its
/// first use, once per process: a fraction of a second of CPU and tens of megabytes
/// (docs/benchmarks.md, "Memory"), so only the ones sessions use are ever built, and a
/// caller on an async runtime does it on the blocking pool first ([`is_loaded`]).
pub fn load(tokenizer: Tokenizer) {
    let Some(slot) = slot(tokenizer) else {
        return;
    };
    match tokenizer {
        Tokenizer::O200kBase => bpe_openai::o200k_base().count("load"),
        Tokenizer::Cl100kBase => bpe_openai::cl100k_base().count("load"),
        Tokenizer::DeepseekV3 => DEEPSEEK_V3.count("load"),
        Tokenizer::Heuristic { .. } => 0,
    };
    LOADED[slot].store(true, Ordering::Release);
}

/// DeepSeek-V3's vocabulary: every token's bytes in rank order, each as a one-byte length
/// then the bytes, gzip-compressed; written by `scripts/deepseek-vocab.py` from the
/// `tokenizer.json` DeepSeek publishes with the model (its merges create tokens in rank
/// order, so merging by rank, as this BPE does, merges as the model's tokenizer does).
const DEEPSEEK_V3_VOCABULARY: &[u8] = include_bytes!("vocab/deepseek_v3.bpe.gz");

/// Spreads the vocabulary's byte strings over the BPE's hash table without collisions.
const DEEPSEEK_V3_HASH_FACTOR: u64 = 17485029721327973433;

/// DeepSeek-V3's pre-tokenizer, a sequence of three splits (digits in runs of at most
/// three; runs of CJK ideographs and kana; then the word / punctuation / whitespace
/// pattern within what is left), as one pass of patterns in priority order. A pattern
/// marked `true` matched one character past its piece (a look-ahead, which the regex
/// engine lacks), and that character is left for the next piece: whitespace up to a
/// digit or CJK character is a piece of its own, as it ends a split there; whitespace
/// before other whitespace gives up its last character. Word and punctuation runs stop
/// at CJK characters, which the second split cuts out first. Runs of characters no
/// pattern starts on (control and format characters) are one piece, as the splits leave
/// them, but before a letter, where the run's last character starts the word's piece,
/// the others are a piece each (DeepSeek keeps them as one: a token more or less).
/// The ranges of DeepSeek's second split (CJK ideographs, hiragana, katakana), for the
/// character classes of [`DEEPSEEK_V3_PATTERNS`].
macro_rules! cjk {
    () => {
        r"\x{4E00}-\x{9FA5}\x{3040}-\x{309F}\x{30A0}-\x{30FF}"
    };
}

const DEEPSEEK_V3_PATTERNS: [(&str, bool); 7] = [
    (
        concat!(
            r"\p{N}{1,3}",
            "|[",
            cjk!(),
            "]+",
            r##"|[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+"##,
            r"|[^\r\n\p{L}\p{P}\p{S}]?[[\p{L}\p{M}]--[",
            cjk!(),
            "]]+",
            r"| ?[[\p{P}\p{S}]--[",
            cjk!(),
            r"]]+[\r\n]*",
            r"|\s*[\r\n]+",
            r"|\s+$",
        ),
        false,
    ),
    (concat!(r"\s+[\p{N}", cjk!(), "]"), true),
    (r"\s+\s", true),
    (r"\s+", false),
    (r"[^\s\p{L}\p{M}\p{N}\p{P}\p{S}]+$", false),
    (
        concat!(
            r"[^\s\p{L}\p{M}\p{N}\p{P}\p{S}]+[\s\p{N}\p{P}\p{S}",
            cjk!(),
            "]"
        ),
        true,
    ),
    (r"(?s:.)", false),
];

static DEEPSEEK_V3: LazyLock<bpe_openai::Tokenizer> = LazyLock::new(|| {
    let mut packed = Vec::new();
    flate2::read::GzDecoder::new(DEEPSEEK_V3_VOCABULARY)
        .read_to_end(&mut packed)
        .expect("the embedded vocabulary is valid gzip");
    let mut tokens = Vec::with_capacity(128_000);
    let mut rest = packed.as_slice();
    while let Some((&len, tail)) = rest.split_first() {
        let (token, tail) = tail.split_at(usize::from(len));
        tokens.push(token.to_vec());
        rest = tail;
    }
    let bpe = BytePairEncoding::from_dictionary(tokens, Some(DEEPSEEK_V3_HASH_FACTOR));
    bpe_openai::Tokenizer::new_lookahead(bpe, &DEEPSEEK_V3_PATTERNS, false)
        .expect("the pre-tokenizer patterns are valid")
});

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
            Tokenizer::DeepseekV3 => DEEPSEEK_V3.count(text),
            Tokenizer::Heuristic { chars_per_token } => {
                let chars = text.chars().count() as f64;
                return (chars / chars_per_token).ceil() as i64;
            }
        };
        count as i64
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
    deepseek_v3: HashMap<String, i64>,
    bytes: usize,
}

impl Generation {
    /// The map of `tokenizer`'s counts; `None` for the heuristic, which is not kept.
    fn map(&mut self, tokenizer: Tokenizer) -> Option<&mut HashMap<String, i64>> {
        match tokenizer {
            Tokenizer::O200kBase => Some(&mut self.o200k),
            Tokenizer::Cl100kBase => Some(&mut self.cl100k),
            Tokenizer::DeepseekV3 => Some(&mut self.deepseek_v3),
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
    fn a_vocabulary_is_built_once_on_load_and_the_heuristic_needs_none() {
        assert!(is_loaded(Tokenizer::Heuristic {
            chars_per_token: 4.0
        }));
        load(Tokenizer::Cl100kBase);
        assert!(is_loaded(Tokenizer::Cl100kBase));
        assert_eq!(
            Counter::new(Tokenizer::Cl100kBase, 1000).text("hello world"),
            2
        );
    }

    #[test]
    fn exact_counts_match_known_values() {
        // Reference counts from OpenAI's tiktoken.
        assert_eq!(o200k().text("hello world"), 2);
        let cl = Counter::new(Tokenizer::Cl100kBase, 1000);
        assert_eq!(cl.text("tiktoken is great!"), 6);
    }

    #[test]
    fn deepseek_counts_match_deepseeks_own_tokenizer() {
        // Reference counts from DeepSeek-V3's tokenizer.json, run by Hugging Face's
        // `tokenizers`. They cover each split of its pre-tokenizer: digits in threes, CJK
        // runs cut out of words, whitespace before digits, runs of format characters.
        // Over the corpus's 4 483 message texts and tool-call arguments and 3 000 random
        // strings of those classes the counts are equal but for one random string, where
        // three zero-width joiners precede a letter.
        let deepseek = Counter::new(Tokenizer::DeepseekV3, 1000);
        let cases = [
            ("hello world", 2),
            ("Total 12345678 items,   42 left", 10),
            ("def f(x):\n    return x  # 中文注释 ゠・ー", 17),
            ("a\u{200d}\u{200d}  1\n\n  2", 7),
            ("drwxr-xr-x  2 root root 4096 Nov 25 02:50 .", 21),
            (r#"{"command": "cd /testbed && grep -rn 'foo' ."}"#, 17),
            ("trailing   ", 3),
        ];
        for (text, count) in cases {
            assert_eq!(deepseek.text(text), count, "{text:?}");
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
