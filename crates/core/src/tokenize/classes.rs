//! The character classes of o200k_base's and cl100k_base's pre-tokenizer patterns, for
//! every code point: the general categories and White_Space as `regex-syntax` has them,
//! the tables of the regex engines behind tiktoken and `bpe-openai`, so a character is a
//! letter, a mark, a number or whitespace exactly when their patterns say so.
use std::collections::HashMap;
use std::sync::LazyLock;

/// What the patterns ask of a character. The general categories are disjoint, and no
/// White_Space character is a letter, mark or number, so every character has one class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(super) enum Class {
    /// `\p{Lu}`, `\p{Lt}`: only in o200k's leading ("upper") letter class.
    Upper,
    /// `\p{Ll}`: only in o200k's trailing ("lower") letter class.
    Lower,
    /// `\p{Lm}`, `\p{Lo}`: letters in both of o200k's classes.
    Letter,
    /// `\p{M}`: in both of o200k's letter classes, but not `\p{L}`.
    Mark,
    /// `\p{N}`.
    Number,
    /// `\r`, `\n`.
    Newline,
    /// Every other `\s` (White_Space) character.
    Space,
    /// Everything else: punctuation, symbols, controls, unassigned code points.
    Other,
}

use Class::*;

impl Class {
    /// `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`.
    pub(super) fn o200k_upper(self) -> bool {
        matches!(self, Upper | Letter | Mark)
    }

    /// `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`.
    pub(super) fn o200k_lower(self) -> bool {
        matches!(self, Lower | Letter | Mark)
    }

    /// `\p{L}`.
    pub(super) fn letter(self) -> bool {
        matches!(self, Upper | Lower | Letter)
    }

    /// `[^\r\n\p{L}\p{N}]`: what may precede a word.
    pub(super) fn word_prefix(self) -> bool {
        matches!(self, Mark | Space | Other)
    }

    /// `[^\s\p{L}\p{N}]`: punctuation and the like.
    pub(super) fn punctuation(self) -> bool {
        matches!(self, Mark | Other)
    }

    /// `\s`.
    pub(super) fn space(self) -> bool {
        matches!(self, Newline | Space)
    }
}

/// Every code point's class, in blocks of 256 code points; identical blocks are stored
/// once (140 blocks, 35 KB, for the Unicode version of regex-syntax 0.8).
pub(super) struct Classes {
    /// The block of each run of 256 code points.
    index: Vec<u16>,
    blocks: Vec<[Class; 256]>,
}

const CODE_POINTS: usize = 0x11_0000;

impl Classes {
    fn build() -> Classes {
        let mut all = vec![Other; CODE_POINTS];
        for (pattern, class) in [
            (r"\p{Lu}", Upper),
            (r"\p{Lt}", Upper),
            (r"\p{Ll}", Lower),
            (r"\p{Lm}", Letter),
            (r"\p{Lo}", Letter),
            (r"\p{M}", Mark),
            (r"\p{N}", Number),
            (r"\s", Space),
            (r"[\r\n]", Newline),
        ] {
            let hir = regex_syntax::parse(pattern).expect("a valid class");
            let regex_syntax::hir::HirKind::Class(regex_syntax::hir::Class::Unicode(set)) =
                hir.kind()
            else {
                unreachable!("{pattern} is a Unicode class");
            };
            for range in set.ranges() {
                for code in u32::from(range.start())..=u32::from(range.end()) {
                    all[code as usize] = class;
                }
            }
        }
        let mut index = Vec::with_capacity(CODE_POINTS / 256);
        let mut blocks: Vec<[Class; 256]> = Vec::new();
        // Keyed by the block's bytes, hashed as one string.
        let mut seen: HashMap<[u8; 256], u16> = HashMap::new();
        for chunk in all.chunks_exact(256) {
            let block: [Class; 256] = chunk.try_into().expect("256 classes");
            let at = *seen
                .entry(block.map(|class| class as u8))
                .or_insert_with(|| {
                    blocks.push(block);
                    u16::try_from(blocks.len() - 1).expect("fewer than 65 536 distinct blocks")
                });
            index.push(at);
        }
        Classes { index, blocks }
    }

    /// The class and byte length of the character at `at` of UTF-8 `text`, `None` at
    /// its end. `at` is at a character's first byte.
    #[inline(always)]
    pub(super) fn at(&self, text: &[u8], at: usize) -> Option<(Class, usize)> {
        let s = text;
        let &b0 = s.get(at)?;
        if b0 < 0x80 {
            return Some((ASCII[usize::from(b0)], 1));
        }
        let tail = |i: usize| u32::from(s[at + i] & 0x3F);
        let (code, len) = if b0 < 0xE0 {
            (u32::from(b0 & 0x1F) << 6 | tail(1), 2)
        } else if b0 < 0xF0 {
            (u32::from(b0 & 0x0F) << 12 | tail(1) << 6 | tail(2), 3)
        } else {
            (
                u32::from(b0 & 0x07) << 18 | tail(1) << 12 | tail(2) << 6 | tail(3),
                4,
            )
        };
        Some((self.of(code), len))
    }

    #[inline(always)]
    fn of(&self, code: u32) -> Class {
        let block = self.index[(code >> 8) as usize];
        self.blocks[usize::from(block)][(code & 0xFF) as usize]
    }
}

static CLASSES: LazyLock<Classes> = LazyLock::new(Classes::build);

/// The classes, built on first use (a few milliseconds).
pub(super) fn get() -> &'static Classes {
    &CLASSES
}

/// The classes of ASCII, as the Unicode tables have them (checked by a test).
const ASCII: [Class; 128] = {
    let mut table = [Other; 128];
    let mut b = 0;
    while b < 128 {
        table[b] = match b as u8 {
            b'A'..=b'Z' => Upper,
            b'a'..=b'z' => Lower,
            b'0'..=b'9' => Number,
            b'\r' | b'\n' => Newline,
            b'\t' | 0x0B | 0x0C | b' ' => Space,
            _ => Other,
        };
        b += 1;
    }
    table
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_classes_are_the_unicode_tables_classes() {
        let classes = Classes::build();
        for b in 0..128u8 {
            assert_eq!(ASCII[usize::from(b)], classes.of(u32::from(b)), "{b:#x}");
        }
        // Spot checks of the tables themselves.
        for (c, class) in [
            ('ǅ', Upper),
            ('ʰ', Letter),
            ('中', Letter),
            ('\u{0301}', Mark),
            ('Ⅻ', Number),
            ('\u{85}', Space),
            ('\u{3000}', Space),
            ('\u{200B}', Other),
            ('😀', Other),
            ('\u{10FFFF}', Other),
        ] {
            assert_eq!(classes.of(u32::from(c)), class, "{c:?}");
        }
        // Identical blocks are shared: the table stays small.
        assert!(
            classes.blocks.len() < 256,
            "{} blocks",
            classes.blocks.len()
        );
        println!(
            "{} distinct blocks of 256 code points",
            classes.blocks.len()
        );
    }
}
