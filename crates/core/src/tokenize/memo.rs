//! Remembered counts of the long texts clients send with every request.
use std::collections::HashMap;
use std::sync::Mutex;

use super::{Counter, Tokenizer};

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
    use crate::tokenize::ToolDefinition;

    fn o200k() -> Counter {
        Counter::new(Tokenizer::O200kBase, 1000)
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
