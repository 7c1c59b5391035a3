//! The tokens passages are aligned on: runs of letters and digits, and
//! each Han, kana or Hangul character on its own, with their bytes, a hash
//! of their folded form (lower case, full-width ASCII as ASCII) and a
//! weight (a word 2, a CJK character 1: two characters are about a word).
//!
//! Punctuation, whitespace and line breaks are not tokens, so a copy with
//! its commas dropped or its lines wrapped anew has the same tokens.

use std::ops::Range;

use crate::tokenize::{script_of, Script};

/// The weight of a word of letters or digits.
pub(super) const WORD: u32 = 2;
/// The weight of a Han, kana or Hangul character.
pub(super) const CJK: u32 = 1;

/// One token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Token {
    /// Its bytes in the text.
    pub start: usize,
    /// Its end in the text.
    pub end: usize,
    /// XXH3 of its folded form.
    pub hash: u64,
    /// [`WORD`] or [`CJK`].
    pub weight: u32,
}

/// A text's tokens, with the running sum of their weights.
#[derive(Clone, Debug, Default)]
pub(super) struct Tokens {
    /// In order.
    pub list: Vec<Token>,
    /// `weight_before[i]`: the weights of tokens `0..i` (one more entry
    /// than tokens).
    pub weight_before: Vec<u32>,
}

impl Tokens {
    /// The tokens of `text`.
    pub fn of(text: &str) -> Tokens {
        let mut list = Vec::new();
        let mut word: Option<usize> = None;
        let mut folded = String::new();
        let end_word = |start: Option<usize>, end: usize, folded: &mut String, list: &mut Vec<Token>| {
            if let Some(start) = start {
                let hash = xxhash_rust::xxh3::xxh3_64(folded.as_bytes());
                list.push(Token { start, end, hash, weight: WORD });
                folded.clear();
            }
        };
        for (i, c) in text.char_indices() {
            let c = fold_width(c);
            if script_of(c) != Script::Other {
                end_word(word.take(), i, &mut folded, &mut list);
                let mut buf = [0u8; 4];
                let hash = xxhash_rust::xxh3::xxh3_64(c.encode_utf8(&mut buf).as_bytes());
                list.push(Token { start: i, end: i + c.len_utf8(), hash, weight: CJK });
            } else if c.is_alphanumeric() {
                word.get_or_insert(i);
                folded.extend(c.to_lowercase());
            } else {
                end_word(word.take(), i, &mut folded, &mut list);
            }
        }
        end_word(word, text.len(), &mut folded, &mut list);
        let mut weight_before = Vec::with_capacity(list.len() + 1);
        let mut w = 0;
        weight_before.push(0);
        for t in &list {
            w += t.weight;
            weight_before.push(w);
        }
        Tokens { list, weight_before }
    }

    /// The number of tokens.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// The weight of tokens `r`.
    pub fn weight(&self, r: Range<usize>) -> u32 {
        self.weight_before[r.end] - self.weight_before[r.start]
    }

    /// The bytes from token `r.start`'s start to token `r.end - 1`'s end.
    pub fn bytes(&self, r: Range<usize>) -> Range<usize> {
        self.list[r.start].start..self.list[r.end - 1].end
    }
}

/// A full-width ASCII form (U+FF01–U+FF5E) as ASCII, the ideographic
/// space as a space; any other character as it is.
fn fold_width(c: char) -> char {
    match c as u32 {
        f @ 0xFF01..=0xFF5E => char::from_u32(f - 0xFEE0).unwrap_or(c),
        0x3000 => ' ',
        _ => c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(text: &str) -> Vec<&str> {
        Tokens::of(text).list.iter().map(|t| &text[t.start..t.end]).collect()
    }

    #[test]
    fn words_and_characters() {
        assert_eq!(texts("Hello, world! 3.14"), vec!["Hello", "world", "3", "14"]);
        assert_eq!(
            texts("版本3.0发布了，Linux内核"),
            vec!["版", "本", "3", "0", "发", "布", "了", "Linux", "内", "核"]
        );
        assert!(texts("  ,.;\n\n").is_empty());
        let t = Tokens::of("ab 中文");
        assert_eq!(t.weight_before, vec![0, 2, 3, 4]);
        assert_eq!(t.weight(0..3), 4);
        assert_eq!(t.bytes(1..3), 3..9);
    }

    #[test]
    fn folded_forms_hash_alike() {
        let a = Tokens::of("Ｈｅｌｌｏ WORLD");
        let b = Tokens::of("hello, world");
        assert_eq!(
            a.list.iter().map(|t| t.hash).collect::<Vec<_>>(),
            b.list.iter().map(|t| t.hash).collect::<Vec<_>>()
        );
        assert_ne!(Tokens::of("hello").list[0].hash, Tokens::of("help").list[0].hash);
    }
}
