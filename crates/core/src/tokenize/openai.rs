//! Counting with OpenAI's o200k_base and cl100k_base: the text cut into pieces by the
//! hand-written pre-tokenizer ([`super::pretokenize`]), each piece's tokens counted by
//! tiktoken's own merge (the lowest-ranked adjacent pair first) when the piece is short,
//! and by `bpe-openai`'s backtracking encoder, linear in the piece, when it is long.
//! Both give tiktoken's tokens: the merge is tiktoken's algorithm, and the encoder was
//! checked equal to it (decision 0001; the tests here check both on arbitrary text).
//!
//! The vocabularies are `bpe-openai`'s, embedded in the binary; a token's id there is
//! its tiktoken rank. The merge looks ranks up by the token's bytes in a table built
//! from them when the encoding is first used.
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::LazyLock;

use bpe_openai::byte_pair_encoding::BytePairEncoding;

use super::pretokenize::{self, Pattern};

/// Pieces up to this many bytes are merged here (quadratic in the piece, but short);
/// longer ones go to the linear encoder. Nearly every piece of ordinary text is shorter.
const MERGE_MAX_BYTES: usize = 64;

/// One of the two encodings.
pub(super) struct Encoding {
    pattern: Pattern,
    bpe: &'static BytePairEncoding,
    /// The rank of every two-byte token, by its bytes as a little-endian `u16`
    /// (`u32::MAX` where the pair is no token).
    pairs: Box<[u32]>,
    /// The ranks of the tokens of 3 to 15 bytes, by [`short_key`] as two words (which
    /// packs an entry in 24 bytes where a `u128` takes 32).
    short: HashMap<(u64, u64), u32, BuildHasherDefault<KeyHasher>>,
    /// The ranks of the longer tokens, by their bytes.
    long: HashMap<&'static [u8], u32, BuildHasherDefault<KeyHasher>>,
    /// Set in the keys of this encoding's remembered counts (a bit no [`short_key`]
    /// sets), so one encoding's count is never another's.
    remember_as: u128,
}

/// Tokens of this many bytes or fewer are looked up by [`short_key`].
const SHORT_MAX_BYTES: usize = 15;

/// A string of at most [`SHORT_MAX_BYTES`] bytes as one integer: its bytes, then its
/// length in the last byte (so `"a"` and `"a\0"` differ). Read as two overlapping words
/// (the first and the last of the string), the overlap shifted out of the second.
#[inline(always)]
fn short_key(bytes: &[u8]) -> u128 {
    let n = bytes.len();
    debug_assert!(n <= SHORT_MAX_BYTES);
    let packed = if n >= 8 {
        let head = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"));
        let tail = u64::from_le_bytes(bytes[n - 8..].try_into().expect("8 bytes"));
        u128::from(head) | u128::from((tail >> (8 * (15 - n))) >> 8) << 64
    } else if n >= 4 {
        let head = u32::from_le_bytes(bytes[..4].try_into().expect("4 bytes"));
        let tail = u32::from_le_bytes(bytes[n - 4..].try_into().expect("4 bytes"));
        u128::from(head) | u128::from((tail >> (8 * (7 - n))) >> 8) << 32
    } else if n >= 2 {
        let head = u16::from_le_bytes([bytes[0], bytes[1]]);
        let tail = u16::from_le_bytes([bytes[n - 2], bytes[n - 1]]);
        u128::from(head) | u128::from((tail >> (8 * (3 - n))) >> 8) << 16
    } else {
        bytes.first().map_or(0, |&b| u128::from(b))
    };
    packed | (n as u128) << 120
}

/// A key as two words.
#[inline(always)]
fn words(key: u128) -> (u64, u64) {
    (key as u64, (key >> 64) as u64)
}

pub(super) static O200K_BASE: LazyLock<Encoding> =
    LazyLock::new(|| Encoding::new(Pattern::O200k, bpe_openai::o200k_base(), 0));

pub(super) static CL100K_BASE: LazyLock<Encoding> =
    LazyLock::new(|| Encoding::new(Pattern::Cl100k, bpe_openai::cl100k_base(), 1 << 127));

impl Encoding {
    fn new(
        pattern: Pattern,
        tokenizer: &'static bpe_openai::Tokenizer,
        remember_as: u128,
    ) -> Encoding {
        super::classes::get();
        let bpe = &tokenizer.bpe;
        let tokens = u32::try_from(bpe.num_tokens()).expect("fewer than 2^32 tokens");
        let mut pairs = vec![u32::MAX; 1 << 16].into_boxed_slice();
        let lengths = (0..tokens).map(|rank| bpe.token_len(rank));
        let (short_tokens, long_tokens) = lengths.fold((0, 0), |(short, long), len| match len {
            0..=2 => (short, long),
            3..=SHORT_MAX_BYTES => (short + 1, long),
            _ => (short, long + 1),
        });
        let mut short = HashMap::with_capacity_and_hasher(short_tokens, Default::default());
        let mut long = HashMap::with_capacity_and_hasher(long_tokens, Default::default());
        for rank in 0..tokens {
            let bytes = bpe.token_bytes(rank);
            match bytes.len() {
                0 | 1 => {}
                2 => pairs[usize::from(u16::from_le_bytes([bytes[0], bytes[1]]))] = rank,
                3..=SHORT_MAX_BYTES => {
                    short.insert(words(short_key(bytes)), rank);
                }
                _ => {
                    long.insert(bytes, rank);
                }
            }
        }
        Encoding {
            pattern,
            bpe,
            pairs,
            short,
            long,
            remember_as,
        }
    }

    /// Tokens of `text`, as tiktoken's `encode_ordinary` makes them.
    pub(super) fn count(&self, text: &str) -> usize {
        let count = |remembered: &mut Remembered| {
            pretokenize::pieces(self.pattern, text)
                .map(|piece| self.count_piece(piece, remembered))
                .sum()
        };
        // This thread's memo; a fresh one where it is gone (a thread's end) or in use.
        REMEMBERED
            .try_with(|memo| memo.try_borrow_mut().ok().map(|mut memo| count(&mut memo)))
            .ok()
            .flatten()
            .unwrap_or_else(|| count(&mut Remembered::new()))
    }

    fn count_piece(&self, piece: &[u8], remembered: &mut Remembered) -> usize {
        let n = piece.len();
        if n <= 1 {
            return n;
        }
        if n > SHORT_MAX_BYTES {
            return if self.long.contains_key(piece) {
                1
            } else if n <= MERGE_MAX_BYTES {
                self.merge(piece)
            } else {
                self.bpe.count(piece)
            };
        }
        let key = short_key(piece);
        let found = if n == 2 {
            self.pairs[usize::from(u16::from_le_bytes([piece[0], piece[1]]))] != u32::MAX
        } else {
            self.short.contains_key(&words(key))
        };
        if found {
            return 1;
        }
        let key = key | self.remember_as;
        if let Some(count) = remembered.get(key) {
            return count;
        }
        let count = self.merge(piece);
        remembered.put(key, count);
        count
    }

    /// The rank of the token of `bytes` (two or more), `u32::MAX` if none is.
    #[inline(always)]
    fn rank(&self, bytes: &[u8]) -> u32 {
        let found = match bytes.len() {
            0 | 1 => None,
            2 => return self.pairs[usize::from(u16::from_le_bytes([bytes[0], bytes[1]]))],
            3..=SHORT_MAX_BYTES => self.short.get(&words(short_key(bytes))),
            _ => self.long.get(bytes),
        };
        found.copied().unwrap_or(u32::MAX)
    }

    /// Tokens of a piece of 2 to [`MERGE_MAX_BYTES`] bytes by tiktoken's
    /// `byte_pair_merge`: start from single bytes, merge the adjacent pair whose joined
    /// bytes have the lowest rank (the leftmost among equals) until no pair is a token.
    /// Part `i` starts at `starts[i]`, and `ranks[i]` is the rank of it joined with the
    /// next part; the last entry of `starts` is the piece's end.
    fn merge(&self, piece: &[u8]) -> usize {
        let n = piece.len();
        debug_assert!((2..=MERGE_MAX_BYTES).contains(&n));
        let mut starts = [0u8; MERGE_MAX_BYTES + 1];
        let mut ranks = [u32::MAX; MERGE_MAX_BYTES + 1];
        for i in 0..n - 1 {
            starts[i] = i as u8;
            ranks[i] = self.pairs[usize::from(u16::from_le_bytes([piece[i], piece[i + 1]]))];
        }
        starts[n - 1] = (n - 1) as u8;
        starts[n] = n as u8;
        // Parts, plus the end.
        let mut len = n + 1;
        loop {
            let (mut lowest, mut at) = (u32::MAX, 0);
            for (i, &rank) in ranks[..len - 1].iter().enumerate() {
                if rank < lowest {
                    (lowest, at) = (rank, i);
                }
            }
            if lowest == u32::MAX {
                return len - 1;
            }
            // Part `at` takes in part `at + 1`; the ranks of it joined with its
            // neighbours change (read before `at + 1` goes, hence `+ 3`).
            let joined = |i: usize| {
                if i + 3 < len {
                    self.rank(&piece[usize::from(starts[i])..usize::from(starts[i + 3])])
                } else {
                    u32::MAX
                }
            };
            if at > 0 {
                ranks[at - 1] = joined(at - 1);
            }
            ranks[at] = joined(at);
            starts.copy_within(at + 2..len, at + 1);
            ranks.copy_within(at + 2..len, at + 1);
            len -= 1;
        }
    }
}

/// The counts of the pieces of this thread's texts that are not one token (3 to
/// [`SHORT_MAX_BYTES`] bytes), so that a piece seen again is not merged again: a table
/// of [`REMEMBERED_SLOTS`] by the piece's key, each slot holding the last piece that
/// hashed to it (about 68 KB per thread that counts). Keyed by the whole piece, so a
/// count is never another piece's.
struct Remembered {
    keys: Box<[u128]>,
    counts: Box<[u8]>,
}

const REMEMBERED_SLOTS: usize = 1 << 12;

thread_local! {
    static REMEMBERED: std::cell::RefCell<Remembered> = std::cell::RefCell::new(Remembered::new());
}

impl Remembered {
    fn new() -> Remembered {
        Remembered {
            keys: vec![0; REMEMBERED_SLOTS].into_boxed_slice(),
            counts: vec![0; REMEMBERED_SLOTS].into_boxed_slice(),
        }
    }

    #[inline(always)]
    fn slot(key: u128) -> usize {
        let mixed = ((key as u64) ^ ((key >> 64) as u64).rotate_left(29)).wrapping_mul(SEED);
        (mixed >> (64 - REMEMBERED_SLOTS.trailing_zeros())) as usize
    }

    /// The count of the piece of `key`; an empty slot's key (0) is no piece's.
    #[inline(always)]
    fn get(&self, key: u128) -> Option<usize> {
        let slot = Self::slot(key);
        (self.keys[slot] == key).then(|| usize::from(self.counts[slot]))
    }

    fn put(&mut self, key: u128, count: usize) {
        let slot = Self::slot(key);
        self.keys[slot] = key;
        self.counts[slot] = u8::try_from(count).expect("at most 15 tokens in 15 bytes");
    }
}

/// A fast hash of integers and short byte strings (FxHash's multiply-rotate over 8-byte
/// words, then a final mix so the table's low bits depend on every byte). Not resistant
/// to chosen keys, and it need not be: the tables hold the fixed vocabulary, nothing is
/// ever inserted from input, so a hostile text can only look pieces up, never lengthen
/// a probe chain.
#[derive(Default)]
struct KeyHasher(u64);

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl KeyHasher {
    #[inline(always)]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            self.add(u64::from_le_bytes(word.try_into().expect("8 bytes")));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word));
        }
    }

    #[inline(always)]
    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    #[inline(always)]
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    #[inline(always)]
    fn finish(&self) -> u64 {
        self.0.rotate_left(26)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::tokenize::pretokenize::tests::{TRICKY, tricky_text};

    fn same_counts(text: &str) -> Result<(), TestCaseError> {
        prop_assert_eq!(
            O200K_BASE.count(text),
            bpe_openai::o200k_base().count(text),
            "o200k {:?}",
            text
        );
        prop_assert_eq!(
            CL100K_BASE.count(text),
            bpe_openai::cl100k_base().count(text),
            "cl100k {:?}",
            text
        );
        Ok(())
    }

    /// Long runs of one piece: single pieces of every length, merged here up to
    /// MERGE_MAX_BYTES and by the linear encoder beyond.
    fn runs() -> impl Strategy<Value = String> {
        prop::collection::vec((prop::sample::select(TRICKY), 1..120usize), 1..4).prop_map(|runs| {
            runs.into_iter()
                .map(|(part, times)| part.repeat(times))
                .collect()
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]

        /// The fast path counts what the reference path (`bpe-openai`: regex pieces,
        /// backtracking encoder; decision 0001) counts.
        #[test]
        fn counts_are_the_reference_counts_on_tricky_text(text in tricky_text()) {
            same_counts(&text)?;
        }

        #[test]
        fn counts_are_the_reference_counts_on_any_text(text in "(?s).{0,300}") {
            same_counts(&text)?;
        }

        #[test]
        fn counts_are_the_reference_counts_on_long_pieces(text in runs()) {
            same_counts(&text)?;
        }

        /// Words, numbers and identifiers of code and prose, the pieces merged most.
        #[test]
        fn counts_are_the_reference_counts_on_words(
            text in "([ _.]?[A-Za-z][a-z]{0,20}|[0-9]{1,6}|[ \n]{1,3}|[A-Z_]{2,12}|[(){}:;,]){0,40}",
        ) {
            same_counts(&text)?;
        }

        /// A key is its string: two strings of at most 15 bytes have the same key only
        /// when they are the same.
        #[test]
        fn short_keys_are_the_strings(
            a in prop::collection::vec(prop::sample::select(vec![0u8, 1, 97, 255]), 0..=SHORT_MAX_BYTES),
            b in prop::collection::vec(any::<u8>(), 0..=SHORT_MAX_BYTES),
        ) {
            prop_assert_eq!(short_key(&a) == short_key(&b), a == b);
            let mut c = a.clone();
            c.push(0);
            if c.len() <= SHORT_MAX_BYTES {
                prop_assert_ne!(short_key(&a), short_key(&c));
            }
        }
    }

    #[test]
    fn counts_match_tiktoken() {
        // Counts by Python tiktoken 0.14.0 (`encode_ordinary`), o200k_base and
        // cl100k_base, its vocabularies the files bpe-openai embeds (their SHA-256 is
        // the one tiktoken expects).
        let cases: [(&str, usize, usize); 23] = [
            ("hello world", 2, 2),
            ("tiktoken is great!", 6, 6),
            (
                "I'm sure they're here, DON'T you think? We'LL see; it'S o'clock 'ſ x'ſ",
                23,
                28,
            ),
            (
                "camelCaseWordHTTPServer XMLHttpRequest getHTTPResponseCode ǅungla ǈ",
                19,
                18,
            ),
            ("Total 12345678 items, x²³ Ⅻ ١٢٣٤٥ ½ 3.14159", 26, 31),
            (
                "a  b\t\tc   \n\n  d\r\n\r\n e \u{b}\u{c} f\u{85}g\u{a0}\u{a0}h\u{2028}i\u{3000}j   ",
                25,
                26,
            ),
            ("中文注释，测试。日本語のテキストAB한국어 텍스트", 18, 23),
            (
                "😀👍🏽 family 👨\u{200d}👩\u{200d}👧\u{200d}👦 flags 🇩🇪🇫🇷",
                25,
                39,
            ),
            (
                "e\u{301} a\u{301}b \u{301}x \u{301}\u{301} Ab\u{301}C \u{301}\u{301}\u{301}",
                18,
                18,
            ),
            ("/usr/local/bin/\n a/b//c ../x/./y\\z ://\r\n//", 17, 18),
            (
                "def f(x):\n    return x  # comment\n\tif (a && b) { c++; }\n",
                21,
                21,
            ),
            (&"a".repeat(100), 13, 13),
            (&"ab".repeat(60), 30, 60),
            (&" ".repeat(70), 1, 1),
            ("\n\n\n\n\n     ", 2, 2),
            (
                "مرحبا بالعالم हिन्दी भाषा ภาษาไทย Ελληνικά Русский текст",
                13,
                45,
            ),
            ("<|endoftext|> <|im_start|>user", 14, 13),
            ("drwxr-xr-x  2 root root 4096 Nov 25 02:50 .", 22, 22),
            (r#"{"command": "cd /testbed && grep -rn 'foo' ."}"#, 17, 17),
            ("x\u{200d}\u{200d}\u{200d}y  \u{200b} z", 8, 11),
            ("ÀÉÎÕÜ àéîõü ßẞ İı ﬁﬂ", 19, 22),
            ("trailing   ", 3, 3),
            ("'s'S'T're'VE'm'LL'd 'x", 12, 12),
        ];
        for (text, o200k, cl100k) in cases {
            assert_eq!(O200K_BASE.count(text), o200k, "o200k {text:?}");
            assert_eq!(CL100K_BASE.count(text), cl100k, "cl100k {text:?}");
        }
    }

    #[test]
    fn one_encodings_remembered_count_is_never_the_others() {
        // Pieces of 3 to 15 bytes that neither encoding has as one token, counted
        // differently by the two: each count, remembered on this thread, stays its
        // encoding's, whichever encoding counted the piece first.
        let words = [" Köln", "ſſſſ", " Grüße", "ǅungla", " ١٢٣", "ẞẞẞ"];
        let mut differing = 0;
        for _ in 0..3 {
            for word in words {
                let (o200k, cl100k) = (O200K_BASE.count(word), CL100K_BASE.count(word));
                assert_eq!(o200k, bpe_openai::o200k_base().count(word), "{word:?}");
                assert_eq!(cl100k, bpe_openai::cl100k_base().count(word), "{word:?}");
                differing += usize::from(o200k != cl100k && o200k > 1 && cl100k > 1);
            }
        }
        assert!(differing > 0, "no word tells the encodings apart");
    }
}
