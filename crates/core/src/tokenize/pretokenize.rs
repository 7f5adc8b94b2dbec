//! The pre-tokenizers of o200k_base and cl100k_base, written out by hand: the text is cut
//! into the pieces tiktoken's regular expressions cut it into, in one pass over the
//! bytes, without a regex engine. The patterns, as tiktoken has them:
//!
//! ```text
//! o200k_base:  [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//!             |[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//!             |\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
//! cl100k_base: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}
//!             | ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//! ```
//!
//! Each piece is the pattern's match anchored where the previous piece ended (the
//! patterns match at every position, have no look-behind, and `(?!\S)` only looks one
//! character ahead), chosen as a backtracking engine chooses it: the first alternative
//! that matches, each `?`, `*` and `+` taking as much as still lets the rest match. Each
//! alternative below says which match that is. Every character is read a bounded number
//! of times, so splitting is linear in the text (see `piece_end_o200k`'s first word
//! alternative for the one place that reads ahead and gives back).
//!
//! Which characters are letters, marks, numbers or whitespace is [`super::classes`]'
//! business. The tests check the pieces against `bpe-openai`'s regex pre-tokenizer on
//! arbitrary text.
use super::classes::{self, Class, Class::*, Classes};

/// Which encoding's pattern cuts the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Pattern {
    O200k,
    Cl100k,
}

/// The pieces of `text`, in order, as byte ranges of it.
pub(super) fn pieces(pattern: Pattern, text: &str) -> Pieces<'_> {
    Pieces {
        scan: Scan {
            text: text.as_bytes(),
            classes: classes::get(),
        },
        pattern,
        at: 0,
    }
}

pub(super) struct Pieces<'a> {
    scan: Scan<'a>,
    pattern: Pattern,
    at: usize,
}

impl<'a> Iterator for Pieces<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        let start = self.at;
        if start >= self.scan.text.len() {
            return None;
        }
        let end = match self.pattern {
            Pattern::O200k => self.scan.piece_end_o200k(start),
            Pattern::Cl100k => self.scan.piece_end_cl100k(start),
        };
        self.at = end;
        Some(&self.scan.text[start..end])
    }
}

struct Scan<'a> {
    /// UTF-8 (it comes from a `&str`); positions are always at character boundaries.
    text: &'a [u8],
    classes: &'a Classes,
}

impl Scan<'_> {
    /// The class and byte length of the character at `at`, `None` at the end.
    #[inline(always)]
    fn at(&self, at: usize) -> Option<(Class, usize)> {
        self.classes.at(self.text, at)
    }

    /// The end of the run of characters from `at` that `keep` accepts.
    #[inline(always)]
    fn run(&self, mut at: usize, keep: impl Fn(Class) -> bool) -> usize {
        while let Some((class, len)) = self.at(at) {
            if !keep(class) {
                break;
            }
            at += len;
        }
        at
    }

    /// The bytes of `(?i:'s|'t|'re|'ve|'m|'ll|'d)` at `at`, 0 when it does not match.
    /// Case-insensitive as the regex crates fold case: `s` also matches `ſ` (U+017F);
    /// no other letter here folds to a non-ASCII one.
    #[inline]
    fn contraction(&self, at: usize) -> usize {
        let s = self.text;
        if s.get(at) != Some(&b'\'') {
            return 0;
        }
        let next = |i: usize| s.get(at + i).map(u8::to_ascii_lowercase);
        match next(1) {
            Some(b's' | b't' | b'm' | b'd') => 2,
            Some(b'r' | b'v') if next(2) == Some(b'e') => 3,
            Some(b'l') if next(2) == Some(b'l') => 3,
            // ſ is C5 BF; 0xC5 lowercases to itself.
            Some(0xC5) if s.get(at + 2) == Some(&0xBF) => 3,
            _ => 0,
        }
    }

    /// `\p{N}{1,3}` where one `\p{N}` ended at `at`: up to two more.
    fn number(&self, mut at: usize) -> usize {
        for _ in 0..2 {
            match self.at(at) {
                Some((Number, len)) => at += len,
                _ => break,
            }
        }
        at
    }

    /// `[^\s\p{L}\p{N}]+` from `at` (the optional space before it is the caller's), then
    /// `[\r\n]*` (cl100k) or `[\r\n/]*` (o200k).
    fn punctuation(&self, at: usize, slash: bool) -> usize {
        let mut end = self.run(at, Class::punctuation);
        while let Some(&b) = self.text.get(end) {
            if b == b'\r' || b == b'\n' || (slash && b == b'/') {
                end += 1;
            } else {
                break;
            }
        }
        end
    }

    /// `\s*[\r\n]+|\s+(?!\S)|\s+` at `at`, where a whitespace character is. The first
    /// ends after the run's last newline; the second takes the whole run at the end of
    /// the text, and otherwise all of it but its last character (which then starts the
    /// next piece, a word's or punctuation's prefix); the third a single character.
    fn whitespace(&self, at: usize) -> usize {
        let mut end = at;
        let mut last = at;
        let mut after_newline = None;
        while let Some((class, len)) = self.at(end) {
            if !class.space() {
                break;
            }
            last = end;
            end += len;
            if class == Newline {
                after_newline = Some(end);
            }
        }
        if let Some(after) = after_newline {
            after
        } else if end == self.text.len() || last == at {
            end
        } else {
            last
        }
    }

    /// o200k's first word alternative without its prefix, from `at`:
    /// `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+` then a contraction.
    /// The leading run takes every "upper" character; if a "lower" one (`\p{Ll}`, as
    /// the others are both) follows, the trailing run takes it and all after it. If not,
    /// the leading run gives back characters until the trailing run can take one: the
    /// run's last `\p{Lm}`/`\p{Lo}`/`\p{M}`, which ends the match, as the character after
    /// it is not "lower". The characters given back are read again by the next piece,
    /// once: they are all `\p{Lu}`/`\p{Lt}`, which the second alternative takes whole.
    fn o200k_lower_word(&self, at: usize) -> Option<usize> {
        let mut end = at;
        let mut after_last_lower = None;
        loop {
            match self.at(end) {
                Some((class, len)) if class.o200k_upper() => {
                    end += len;
                    if class.o200k_lower() {
                        after_last_lower = Some(end);
                    }
                }
                Some((Lower, _)) => {
                    let end = self.run(end, Class::o200k_lower);
                    return Some(end + self.contraction(end));
                }
                _ => break,
            }
        }
        after_last_lower.map(|end| end + self.contraction(end))
    }

    /// o200k's second word alternative without its prefix, from `at`:
    /// `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*` then a contraction.
    fn o200k_upper_word(&self, at: usize) -> Option<usize> {
        let upper = self.run(at, Class::o200k_upper);
        if upper == at {
            return None;
        }
        let end = self.run(upper, Class::o200k_lower);
        Some(end + self.contraction(end))
    }

    fn piece_end_o200k(&self, at: usize) -> usize {
        // ASCII words, optionally after a space, first (most pieces): what the first two
        // alternatives below give them, without reading their first letter twice.
        let s = self.text;
        let start = at + usize::from(s[at] == b' ');
        match s.get(start) {
            Some(b) if b.is_ascii_lowercase() => {
                let end = self.run(start + 1, Class::o200k_lower);
                return end + self.contraction(end);
            }
            Some(b) if b.is_ascii_uppercase() => {
                // The second alternative always takes an upper-case letter.
                return self
                    .o200k_lower_word(start)
                    .or_else(|| self.o200k_upper_word(start))
                    .unwrap_or(start + 1);
            }
            _ => {}
        }
        let Some((first, len)) = self.at(at) else {
            return at;
        };
        let after = at + len;
        let next = self.at(after).map(|(class, _)| class);
        let prefixed = first.word_prefix();
        // The word alternatives, each first with the optional prefix taken, then without;
        // a word needs a letter or mark, after the prefix or at the start.
        if prefixed
            && next.is_some_and(|next| next.o200k_upper() || next.o200k_lower())
            && let Some(end) = self.o200k_lower_word(after)
        {
            return end;
        }
        if (first.o200k_upper() || first.o200k_lower())
            && let Some(end) = self.o200k_lower_word(at)
        {
            return end;
        }
        if prefixed
            && next.is_some_and(Class::o200k_upper)
            && let Some(end) = self.o200k_upper_word(after)
        {
            return end;
        }
        if first.o200k_upper()
            && let Some(end) = self.o200k_upper_word(at)
        {
            return end;
        }
        match first {
            Number => self.number(after),
            Mark | Other => self.punctuation(at, true),
            Space if self.text[at] == b' ' && next.is_some_and(Class::punctuation) => {
                self.punctuation(after, true)
            }
            Newline | Space => self.whitespace(at),
            // Not reached: a word alternative took every letter.
            Upper | Lower | Letter => after,
        }
    }

    fn piece_end_cl100k(&self, at: usize) -> usize {
        let contraction = self.contraction(at);
        if contraction > 0 {
            return at + contraction;
        }
        let Some((first, len)) = self.at(at) else {
            return at;
        };
        let after = at + len;
        if first.letter() {
            return self.run(after, Class::letter);
        }
        let next = self.at(after).map(|(class, _)| class);
        if first.word_prefix() && next.is_some_and(Class::letter) {
            return self.run(after, Class::letter);
        }
        match first {
            Number => self.number(after),
            Mark | Other => self.punctuation(at, false),
            Space if self.text[at] == b' ' && next.is_some_and(Class::punctuation) => {
                self.punctuation(after, false)
            }
            Newline | Space => self.whitespace(at),
            // Not reached: the word alternative took every letter.
            Upper | Lower | Letter => after,
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use proptest::prelude::*;

    use super::*;

    fn reference(pattern: Pattern) -> &'static bpe_openai::Tokenizer {
        match pattern {
            Pattern::O200k => bpe_openai::o200k_base(),
            Pattern::Cl100k => bpe_openai::cl100k_base(),
        }
    }

    /// Characters and strings of every class the patterns tell apart: letters of each
    /// category (Lu, Ll, Lt, Lm, Lo; `K` is the Kelvin sign, `ſ` folds to `s`), marks
    /// (Mn, Mc, Me), numbers (Nd, Nl, No), each kind of whitespace, contractions in both
    /// cases, slashes, punctuation, emoji (with a modifier, a flag), format, control,
    /// private-use and unassigned code points.
    #[rustfmt::skip]
    pub(in crate::tokenize) const TRICKY: &[&str] = &[
        "a", "z", "A", "Z", "ǅ", "ß", "é", "ſ", "K", "ʰ", "ª", "中", "あ", "ア", "한",
        "\u{0301}", "\u{0903}", "\u{20DD}", "0", "9", "²", "Ⅻ", "١", "½", " ", "  ", "\t",
        "\n", "\r", "\r\n", "\u{0B}", "\u{0C}", "\u{85}", "\u{A0}", "\u{1680}", "\u{2028}",
        "\u{3000}", "\u{200B}", "\u{200D}", "'", "’", "s", "S", "t", "re", "RE", "ve",
        "m", "ll", "LL", "d", "/", "//", ".", "-", "_", "\"", "(", "{", "<|endoftext|>",
        "😀", "👍🏽", "🇩🇪", "\u{0}", "\u{1F}", "\u{7F}", "\u{FFFD}", "\u{E000}",
        "\u{10FFFF}", "\u{378}", "hello", "World", "HTTPServer", "12345",
    ];

    /// Text made of [`TRICKY`] pieces.
    pub(in crate::tokenize) fn tricky_text() -> impl Strategy<Value = String> {
        prop::collection::vec(prop::sample::select(TRICKY), 0..60).prop_map(|parts| parts.concat())
    }

    fn same_pieces(pattern: Pattern, text: &str) -> Result<(), TestCaseError> {
        let ours: Vec<&[u8]> = pieces(pattern, text).collect();
        let regex: Vec<&[u8]> = reference(pattern).split(text).map(str::as_bytes).collect();
        prop_assert_eq!(ours, regex, "{:?} ({:?})", text, pattern);
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]

        /// The pieces are the regex pre-tokenizer's, on text dense in the cases the
        /// patterns tell apart.
        #[test]
        fn pieces_are_the_regex_pieces_on_tricky_text(text in tricky_text()) {
            same_pieces(Pattern::O200k, &text)?;
            same_pieces(Pattern::Cl100k, &text)?;
        }

        /// And on arbitrary Unicode text.
        #[test]
        fn pieces_are_the_regex_pieces_on_any_text(text in "(?s).{0,300}") {
            same_pieces(Pattern::O200k, &text)?;
            same_pieces(Pattern::Cl100k, &text)?;
        }
    }

    #[test]
    fn the_hard_cases_split_as_the_regex_splits_them() {
        for text in [
            // Leading run gives back upper-case letters after its last Lo/Lm/M.
            "中ABC. 中A'S x\u{0301}YZ! ǅA",
            // Marks as a word's prefix, or alone.
            "\u{0301}\u{0301}AB. \u{0301}x",
            // Whitespace before words, punctuation, newlines, the end.
            "a  b \t(c)\n  \n d   ",
            "x \r\n\r\n  // y /\n/",
            // Contractions, with ſ.
            "it'ſ I'M we'Re they'LL 'd''s",
            "12345 ١٢٣٤ ²³⁴⁵",
        ] {
            same_pieces(Pattern::O200k, text).unwrap();
            same_pieces(Pattern::Cl100k, text).unwrap();
        }
    }
}
