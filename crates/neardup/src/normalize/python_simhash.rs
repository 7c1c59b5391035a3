//! The text handling of the PyPI `simhash` package (1e0ng/simhash 2.1.2),
//! reproduced exactly.
//!
//! The package lower-cases with `str.lower()` and keeps the characters
//! matched by `[\w\u4e00-\u9fcc]`. Python's `\w` is `_` or any character
//! that `str.isalnum()` accepts: neither Rust's `char::is_alphanumeric` nor
//! the regex crate's `\w`. Both steps depend on the Unicode database of
//! the CPython that runs it, so the tables in `pyunicode_tables.rs` are
//! generated from CPython 3.11 (Unicode 14.0) by `tools/gen_pyunicode.py`.

use std::borrow::Cow;

use super::pyunicode_tables::{CASED, CASE_IGNORABLE, LOWER, WORD};
use super::Normalizer;

static ASCII_WORD: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 128 {
        t[b] = (b as u8).is_ascii_alphanumeric() || b == b'_' as usize;
        b += 1;
    }
    t
};

static ASCII_LOWER: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = (b as u8).to_ascii_lowercase();
        b += 1;
    }
    t
};

/// CPython 3.11 `str.lower()` followed by the word-character filter.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PythonSimhash;

fn in_ranges(table: &[(u32, u32)], c: char) -> bool {
    let c = c as u32;
    table
        .binary_search_by(|&(lo, hi)| {
            if hi < c {
                std::cmp::Ordering::Less
            } else if lo > c {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// Whether `[\w\u4e00-\u9fcc]` matches `c` in CPython 3.11.
pub(crate) fn is_word(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric() || c == '_';
    }
    if ('\u{4e00}'..='\u{9fcc}').contains(&c) {
        return true;
    }
    in_ranges(WORD, c)
}

/// `c.lower()` in CPython 3.11 for every character but capital sigma.
fn lower(c: char) -> Option<&'static str> {
    if c.is_ascii() || ('\u{3000}'..='\u{9fff}').contains(&c) {
        return None;
    }
    LOWER.binary_search_by_key(&(c as u32), |&(cp, _)| cp).ok().map(|i| LOWER[i].1)
}

/// CPython's `handle_capital_sigma`: whether the capital sigma at `i` is
/// word-final (`\p{cased}\p{case-ignorable}* Σ !(\p{case-ignorable}* \p{cased})`).
fn final_sigma(chars: &[char], i: usize) -> bool {
    let is_cased = |c: char| in_ranges(CASED, c);
    let is_ignorable = |c: char| in_ranges(CASE_IGNORABLE, c);
    let before = chars[..i].iter().rev().find(|&&c| !is_ignorable(c));
    if !matches!(before, Some(&c) if is_cased(c)) {
        return false;
    }
    match chars[i + 1..].iter().find(|&&c| !is_ignorable(c)) {
        None => true,
        Some(&c) => !is_cased(c),
    }
}

impl Normalizer for PythonSimhash {
    fn normalize<'a>(&self, text: &'a str) -> Cow<'a, str> {
        if text.is_ascii() {
            if text.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_') {
                return Cow::Borrowed(text);
            }
            // Branch-free: always write the lowered byte, advance only when kept.
            let mut out = vec![0u8; text.len()];
            let mut n = 0;
            for b in text.bytes() {
                out[n] = ASCII_LOWER[b as usize];
                n += usize::from(ASCII_WORD[b as usize]);
            }
            out.truncate(n);
            // Only ASCII bytes were written.
            return Cow::Owned(String::from_utf8(out).expect("ASCII is UTF-8"));
        }
        let chars: Vec<char> = text.chars().collect();
        let mut out = String::with_capacity(text.len());
        for (i, &c) in chars.iter().enumerate() {
            if c.is_ascii() {
                if c.is_ascii_alphanumeric() || c == '_' {
                    out.push(c.to_ascii_lowercase());
                }
            } else if c == '\u{3a3}' {
                out.push(if final_sigma(&chars, i) { '\u{3c2}' } else { '\u{3c3}' });
            } else if let Some(l) = lower(c) {
                out.extend(l.chars().filter(|&lc| is_word(lc)));
            } else if is_word(c) {
                out.push(c);
            }
        }
        Cow::Owned(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_word_characters() {
        // `_` and categories L*/N* are word characters in Python; marks are not.
        for c in ['a', 'Z', '9', '_', '中', 'ß', '٣', 'Ⅷ', '½', 'ª'] {
            assert!(is_word(c), "{c:?}");
        }
        for c in [' ', '-', '\u{301}', '€', '😀', '。'] {
            assert!(!is_word(c), "{c:?}");
        }
    }

    #[test]
    fn lower_then_filter() {
        let n = |s| PythonSimhash.normalize(s).into_owned();
        assert_eq!(n("Hello, World_1!"), "helloworld_1");
        assert_eq!(n("ΟΔΟΣ ΟΔΟΣ."), "οδοςοδος");
        assert_eq!(n("ΣΑ"), "σα");
        // İ lowers to i + U+0307 COMBINING DOT ABOVE, which is not a word char.
        assert_eq!(n("İ"), "i");
        assert_eq!(n("你好，世界"), "你好世界");
        assert_eq!(n("ȍI̱土"), "ȍi土");
    }
}
