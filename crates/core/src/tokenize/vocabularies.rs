//! The exact tokenizers' vocabularies: built once per process on first use, and the
//! counting that uses them.
use std::io::Read;
use std::sync::LazyLock;
use std::sync::atomic::{AtomicBool, Ordering};

use bpe_openai::byte_pair_encoding::BytePairEncoding;

use super::Tokenizer;
use super::openai::{CL100K_BASE, O200K_BASE};

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
        Tokenizer::O200kBase => O200K_BASE.count("load"),
        Tokenizer::Cl100kBase => CL100K_BASE.count("load"),
        Tokenizer::DeepseekV3 => DEEPSEEK_V3.count("load"),
        Tokenizer::Heuristic { .. } => 0,
    };
    LOADED[slot].store(true, Ordering::Release);
}

/// DeepSeek-V3's vocabulary: every token's bytes in rank order, each as a one-byte length
/// then the bytes, gzip-compressed; written by `scripts/deepseek-vocab.py` from the
/// `tokenizer.json` DeepSeek publishes with the model (its merges create tokens in rank
/// order, so merging by rank, as this BPE does, merges as the model's tokenizer does).
const DEEPSEEK_V3_VOCABULARY: &[u8] = include_bytes!("../vocab/deepseek_v3.bpe.gz");

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

/// Tokens of `text` with an exact tokenizer; 0 for the heuristic, which has no
/// vocabulary (the caller counts it).
pub(super) fn count(tokenizer: Tokenizer, text: &str) -> usize {
    match tokenizer {
        Tokenizer::O200kBase => O200K_BASE.count(text),
        Tokenizer::Cl100kBase => CL100K_BASE.count(text),
        Tokenizer::DeepseekV3 => DEEPSEEK_V3.count(text),
        Tokenizer::Heuristic { .. } => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenize::Counter;

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
        assert_eq!(
            Counter::new(Tokenizer::O200kBase, 1000).text("hello world"),
            2
        );
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
}
