//! Input billed as each provider bills it with its prompt cache, for one strategy's
//! requests of one session in order:
//!
//! - **OpenAI** caches automatically: the longest prefix a request shares with an
//!   earlier one is read at a tenth of the price once it is at least 1 024 tokens, in
//!   steps of 128 tokens; nothing is charged for writing.
//! - **Anthropic** caches only up to a block marked `cache_control`: every strategy is
//!   billed as marking the end of its system prompt and its newest message (as ctxd's
//!   body does, and the agents the strategies come from); a request reads the longest
//!   cached prefix that ends at a mark or up to 20 blocks before one (a block here is a
//!   message), and what it writes up to its last mark costs 1.25 times the input price.
//! - **Gemini** caches implicitly: a repeated prefix of at least 1 024 tokens is billed
//!   at a quarter of the price.
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

/// The providers, in report order.
pub const PROVIDERS: [&str; 3] = ["OpenAI", "Anthropic", "Gemini"];

/// The price lists the dollars use, per million input tokens: (name, input, cache
/// read, cache write).
pub const PRICES: [(&str, f64, f64, f64); 3] = [
    (
        "OpenAI GPT-5: $1.25 input, $0.125 cached",
        1.25,
        0.125,
        1.25,
    ),
    (
        "Anthropic Claude Sonnet 4.5: $3 input, $0.30 cache read, $3.75 cache write",
        3.0,
        0.30,
        3.75,
    ),
    (
        "Gemini 2.5 Pro (prompts up to 200k): $1.25 input, $0.3125 implicitly cached",
        1.25,
        0.3125,
        1.25,
    ),
];

/// Smallest prefix a provider caches, in tokens.
const MIN_CACHED: i64 = 1024;
/// OpenAI caches in steps of this many tokens past the first 1 024.
const OPENAI_STEP: i64 = 128;
/// Blocks before a mark an Anthropic lookup also tries.
const LOOKBACK: usize = 20;

/// One request's input on one provider: read from the cache, written to it, the rest.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Split {
    pub read: i64,
    pub written: i64,
    pub fresh: i64,
}

impl Split {
    /// Dollars at provider `index`'s list.
    pub fn dollars(&self, index: usize) -> f64 {
        let (_, input, read, write) = PRICES[index];
        (self.fresh as f64 * input + self.read as f64 * read + self.written as f64 * write) / 1e6
    }
}

/// The caches of one strategy's session on the three providers.
#[derive(Default)]
pub struct Caches {
    anthropic: HashMap<u64, i64>,
}

impl Caches {
    /// Bills one request: `shared`, the tokens of the prefix it shares with the
    /// strategy's previous request (the meter's own count, for the prefix caches), and
    /// its blocks (the system prompt with the tools, then each message, by content key)
    /// with their tokens (for Anthropic's marks).
    pub fn bill(&mut self, shared: i64, blocks: &[(u64, i64)]) -> [Split; 3] {
        let total: i64 = blocks.iter().map(|(_, tokens)| tokens).sum();
        let shared = shared.min(total);
        let openai = if shared >= MIN_CACHED {
            MIN_CACHED + (shared - MIN_CACHED) / OPENAI_STEP * OPENAI_STEP
        } else {
            0
        };
        let gemini = if shared >= MIN_CACHED { shared } else { 0 };
        let prefix = |read: i64| Split {
            read,
            written: 0,
            fresh: total - read,
        };
        [prefix(openai), self.anthropic(blocks), prefix(gemini)]
    }

    /// Anthropic: marks at the end of the system block and of the newest message.
    fn anthropic(&mut self, blocks: &[(u64, i64)]) -> Split {
        let (mut prefixes, mut ends) = (Vec::with_capacity(blocks.len()), Vec::new());
        let (mut chain, mut total) = (0u64, 0);
        for (key, tokens) in blocks {
            let mut hasher = DefaultHasher::new();
            (chain, key).hash(&mut hasher);
            chain = hasher.finish();
            prefixes.push(chain);
            total += tokens;
            ends.push(total);
        }
        let marks: Vec<usize> = match blocks.len() {
            0 => Vec::new(),
            1 => vec![0],
            n => vec![0, n - 1],
        };
        let read = marks
            .iter()
            .filter_map(|&mark| {
                (mark.saturating_sub(LOOKBACK)..=mark)
                    .rev()
                    .find_map(|at| self.anthropic.get(&prefixes[at]).copied())
            })
            .max()
            .unwrap_or(0);
        let last = marks.last().map_or(0, |&mark| ends[mark]);
        let written = if last >= MIN_CACHED {
            (last - read).max(0)
        } else {
            0
        };
        for &mark in &marks {
            if ends[mark] >= MIN_CACHED {
                self.anthropic.insert(prefixes[mark], ends[mark]);
            }
        }
        Split {
            read,
            written,
            fresh: total - read - written,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(n: usize) -> Vec<(u64, i64)> {
        (0..n as u64).map(|key| (key, 600)).collect()
    }

    #[test]
    fn anthropic_reads_what_it_marked_and_charges_the_write() {
        let mut caches = Caches::default();
        // The first: everything up to the newest message written.
        let first = caches.anthropic(&request(4));
        assert_eq!(
            first,
            Split {
                read: 0,
                written: 2400,
                fresh: 0
            }
        );
        // The next extends it by two blocks: read up to where the first ended.
        let second = caches.anthropic(&request(6));
        assert_eq!(
            second,
            Split {
                read: 2400,
                written: 1200,
                fresh: 0
            }
        );
        // A prefix changed at its second block: only the first block's mark... is under
        // the minimum, so nothing is read.
        let mut changed = request(6);
        changed[1].0 = 99;
        assert_eq!(caches.anthropic(&changed).read, 0);
        // Dollars: written at 1.25 times the input price.
        assert!((second.dollars(1) - (2400.0 * 0.30 + 1200.0 * 3.75) / 1e6).abs() < 1e-12);
    }

    #[test]
    fn openai_reads_from_1024_tokens_in_steps_of_128_and_gemini_all_of_it() {
        let mut caches = Caches::default();
        let [openai, _, gemini] = caches.bill(2000, &request(4));
        assert_eq!((openai.read, gemini.read), (1024 + 7 * 128, 2000));
        assert_eq!((openai.written, openai.fresh), (0, 2400 - openai.read));
        // Under the minimum nothing is cached.
        let [openai, _, gemini] = caches.bill(1000, &request(4));
        assert_eq!((openai.read, gemini.read), (0, 0));
    }
}
