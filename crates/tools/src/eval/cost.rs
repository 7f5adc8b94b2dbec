//! What a request costs with provider prompt caching. Every request is serialized the
//! same way — the tool definitions, then an OpenAI Chat Completions body of the system
//! prompt and the messages (the order providers cache in: tools, system, messages) —
//! and the longest byte prefix it shares with the same strategy's previous request is
//! billed at the cache-read rate, the rest at the input rate. Tokens are o200k_base
//! counts of the prefix text and of the rest, each tokenized on its own (a token
//! straddling the cut is counted on both sides' terms: the approximation is at most a
//! few tokens per request).
use ctxd_core::message::Message;
use ctxd_core::render::openai_chat;
use ctxd_core::tokenize::{Counter, ToolDefinition};

/// Cache-read price as a share of the input price.
pub const CACHE_READ_RATIO: f64 = 0.1;

/// The price list the dollars use: Anthropic Claude Sonnet 4.5, per million tokens.
pub const PRICE_LIST: &str = "Anthropic Claude Sonnet 4.5 (anthropic.com/pricing, 2025 list: \
     $3 per million input tokens, $0.30 per million cache-read tokens; the 1.25x \
     cache-write premium is not counted)";
pub const INPUT_USD_PER_MILLION: f64 = 3.0;

/// A request as bytes on the wire.
pub fn serialize(system: &str, messages: &[Message], tools: &[ToolDefinition]) -> String {
    let tools = openai_chat("", [], tools);
    let body = openai_chat(system, messages, &[]);
    format!("{tools}\n{body}")
}

/// Bytes `a` and `b` share from the start, cut back to a character boundary of `b`.
pub fn shared_prefix(a: &str, b: &str) -> usize {
    let mut len = a
        .as_bytes()
        .iter()
        .zip(b.as_bytes())
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    while !b.is_char_boundary(len) {
        len -= 1;
    }
    len
}

/// A request's input tokens, split into those read from the cache and the rest.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Billed {
    pub cached: i64,
    pub fresh: i64,
}

impl Billed {
    /// In input-token units: cache reads at [`CACHE_READ_RATIO`].
    pub fn units(&self) -> f64 {
        self.cached as f64 * CACHE_READ_RATIO + self.fresh as f64
    }
}

/// Bills `text` after `previous` (the same strategy's previous request, if any).
pub fn bill(previous: Option<&str>, text: &str, counter: &Counter) -> Billed {
    let cut = previous.map_or(0, |previous| shared_prefix(previous, text));
    Billed {
        cached: counter.text(&text[..cut]),
        fresh: counter.text(&text[cut..]),
    }
}

/// Dollars of `units` input-token units at the price list.
pub fn dollars(units: f64) -> f64 {
    units * INPUT_USD_PER_MILLION / 1e6
}

#[cfg(test)]
mod tests {
    use super::*;
    use ctxd_core::tokenize::Tokenizer;

    #[test]
    fn the_shared_prefix_is_billed_at_a_tenth() {
        let counter = Counter::new(Tokenizer::O200kBase, 0);
        // By hand: "The cat sat." is 4 o200k tokens (The, " cat", " sat", "."), and so
        // is " The dog ran.".
        assert_eq!(counter.text("The cat sat."), 4);
        assert_eq!(counter.text(" The dog ran."), 4);
        let first = bill(None, "The cat sat.", &counter);
        assert_eq!(
            first,
            Billed {
                cached: 0,
                fresh: 4
            }
        );
        assert_eq!(first.units(), 4.0);
        // The second request extends the first: its 12 bytes are read from the cache.
        let second = bill(Some("The cat sat."), "The cat sat. The dog ran.", &counter);
        assert_eq!(
            second,
            Billed {
                cached: 4,
                fresh: 4
            }
        );
        assert!((second.units() - 4.4).abs() < 1e-9);
        // A request that changed its first byte shares nothing.
        let third = bill(Some("The cat sat."), "A cat sat.", &counter);
        assert_eq!(third.cached, 0);
    }

    #[test]
    fn a_prefix_never_splits_a_character() {
        // "é" is two bytes that share their first byte with "è".
        assert_eq!(shared_prefix("aé", "aè"), 1);
        assert_eq!(shared_prefix("abc", "abc"), 3);
        assert_eq!(shared_prefix("abc", "abcd"), 3);
        assert_eq!(shared_prefix("", "abc"), 0);
    }

    #[test]
    fn dollars_follow_the_list() {
        // 1 M units at $3/M; 1 M cached tokens cost 0.1 M units, $0.30.
        assert!((dollars(1e6) - 3.0).abs() < 1e-9);
        let cached = Billed {
            cached: 1_000_000,
            fresh: 0,
        };
        assert!((dollars(cached.units()) - 0.30).abs() < 1e-9);
    }
}
