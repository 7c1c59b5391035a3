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
            let mut out = Vec::new();
            ascii_lower_words(text.as_bytes(), &mut out);
            // Only ASCII bytes were written.
            return Cow::Owned(String::from_utf8(out).expect("ASCII is UTF-8"));
        }
        if text.contains('\u{3a3}') {
            return Cow::Owned(normalize_chars(text));
        }
        // Mostly ASCII text (English with curly quotes, say): the ASCII runs
        // take the fast path and only the other characters are looked up.
        // Without a capital sigma, each character lowers on its own.
        let bytes = text.as_bytes();
        let mut out = Vec::with_capacity(text.len() + 8);
        let mut i = 0;
        while i < bytes.len() {
            let run = bytes[i..].iter().position(|b| !b.is_ascii()).unwrap_or(bytes.len() - i);
            ascii_lower_words(&bytes[i..i + run], &mut out);
            i += run;
            // `i` is at a character boundary: the bytes before it are ASCII
            // or whole characters.
            let rest = &text[i..];
            for (at, c) in rest.char_indices() {
                if c.is_ascii() {
                    i += at;
                    break;
                }
                let mut buf = [0u8; 4];
                for kept in lowered_word_chars(c) {
                    out.extend_from_slice(kept.encode_utf8(&mut buf).as_bytes());
                }
                if at + c.len_utf8() == rest.len() {
                    i = bytes.len();
                }
            }
        }
        // ASCII runs and whole characters were written.
        Cow::Owned(String::from_utf8(out).expect("whole characters are UTF-8"))
    }
}

/// The character-by-character normalization, for text with a capital
/// sigma (whose lower case depends on its neighbours).
fn normalize_chars(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii() {
            if c.is_ascii_alphanumeric() || c == '_' {
                out.push(c.to_ascii_lowercase());
            }
        } else if c == '\u{3a3}' {
            out.push(if final_sigma(&chars, i) { '\u{3c2}' } else { '\u{3c3}' });
        } else {
            out.extend(lowered_word_chars(c));
        }
    }
    out
}

/// What a non-ASCII character other than the capital sigma becomes: its
/// lower case, keeping only word characters.
fn lowered_word_chars(c: char) -> impl Iterator<Item = char> {
    let (lowered, itself) = match lower(c) {
        Some(l) => (l, None),
        None => ("", Some(c)),
    };
    lowered.chars().chain(itself).filter(|&k| is_word(k))
}

/// Appends the ASCII bytes `b` lower-cased to `out`, keeping only
/// `[a-z0-9_]`: 32 bytes at a time with AVX2 where [`crate::simd::level`]
/// allows, else a table per byte.
fn ascii_lower_words(b: &[u8], out: &mut Vec<u8>) {
    let base = out.len();
    // Eight bytes of slack: the AVX2 path stores eight bytes at a time.
    out.resize(base + b.len() + 8, 0);
    let (done, mut n) = simd_lower_words(b, &mut out[base..]);
    n += base;
    // Branch-free: always write the lowered byte, advance only when kept.
    for &c in &b[done..] {
        out[n] = ASCII_LOWER[c as usize];
        n += usize::from(ASCII_WORD[c as usize]);
    }
    out.truncate(n);
}

/// The SIMD part of [`ascii_lower_words`]: how many bytes of `b` it read
/// and how many it wrote to `out` (none without AVX2).
fn simd_lower_words(b: &[u8], out: &mut [u8]) -> (usize, usize) {
    #[cfg(target_arch = "x86_64")]
    if crate::simd::level() >= crate::simd::Level::Avx2 {
        // SAFETY: the level is at most what the CPU supports.
        return unsafe { avx2::lower_words(b, out) };
    }
    let _ = (b, out);
    (0, 0)
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    /// `PACK[m]`: the shuffle that moves the bytes of an 8-byte group whose
    /// bits are set in `m` to its front, in order.
    static PACK: [u64; 256] = {
        let mut t = [0u64; 256];
        let mut m = 0;
        while m < 256 {
            let (mut v, mut k, mut i) = (0u64, 0, 0);
            while i < 8 {
                if (m >> i) & 1 == 1 {
                    v |= (i as u64) << (8 * k);
                    k += 1;
                }
                i += 1;
            }
            t[m] = v;
            m += 1;
        }
        t
    };

    /// Lower-cases and keeps the word bytes of `b` 32 at a time (left-packing
    /// eight bytes per shuffle); returns how many input bytes it read and
    /// how many it wrote to `out`, which has eight bytes of slack.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn lower_words(b: &[u8], out: &mut [u8]) -> (usize, usize) {
        let mut n = 0;
        let mut i = 0;
        let in_range = |v: __m256i, lo: u8, hi: u8| {
            _mm256_and_si256(
                _mm256_cmpgt_epi8(v, _mm256_set1_epi8(lo as i8 - 1)),
                _mm256_cmpgt_epi8(_mm256_set1_epi8(hi as i8 + 1), v),
            )
        };
        while i + 32 <= b.len() {
            // SAFETY: bytes i..i + 32 are inside `b`.
            let v = unsafe { _mm256_loadu_si256(b.as_ptr().add(i).cast()) };
            // ASCII only (checked by the caller), so signed compares order bytes.
            let upper = in_range(v, b'A', b'Z');
            let lowered = _mm256_or_si256(v, _mm256_and_si256(upper, _mm256_set1_epi8(0x20)));
            let keep = _mm256_or_si256(
                _mm256_or_si256(in_range(lowered, b'a', b'z'), in_range(v, b'0', b'9')),
                _mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'_' as i8)),
            );
            let mask = _mm256_movemask_epi8(keep) as u32;
            let halves = [_mm256_castsi256_si128(lowered), _mm256_extracti128_si256::<1>(lowered)];
            for (h, &half) in halves.iter().enumerate() {
                for g in 0..2 {
                    let m = (mask >> (16 * h + 8 * g)) & 0xff;
                    // Group g's indices are 8·g higher within the half.
                    let idx = PACK[m as usize] + 0x0808_0808_0808_0808 * g as u64;
                    let packed = _mm_shuffle_epi8(half, _mm_cvtsi64_si128(idx as i64));
                    assert!(n + 8 <= out.len());
                    // SAFETY: n + 8 <= out.len(), checked just above.
                    unsafe { _mm_storel_epi64(out.as_mut_ptr().add(n).cast(), packed) };
                    n += m.count_ones() as usize;
                }
            }
            i += 32;
        }
        (i, n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::Strategy;

    #[test]
    fn every_simd_level_lowers_and_filters_ascii_alike() {
        let mut text = String::new();
        for i in 0..2000u32 {
            text.push(char::from((i.wrapping_mul(2_654_435_761) >> 25) as u8));
        }
        for len in [0, 1, 31, 32, 33, 64, 100, 2000] {
            let want: Vec<u8> = text.as_bytes()[..len]
                .iter()
                .filter(|b| b.is_ascii_alphanumeric() || **b == b'_')
                .map(u8::to_ascii_lowercase)
                .collect();
            for level in crate::simd::supported() {
                let got = crate::simd::scoped(level, || {
                    let mut out = b"kept".to_vec();
                    ascii_lower_words(&text.as_bytes()[..len], &mut out);
                    out
                });
                let want = [&b"kept"[..], &want].concat();
                assert_eq!(got, want, "{level}, {len} bytes");
            }
        }
    }

    proptest::proptest! {
        /// Mostly ASCII text, normalized run by run, matches the
        /// character-by-character path.
        #[test]
        fn ascii_runs_match_the_character_path(
            parts in proptest::collection::vec(
                proptest::prop_oneof![
                    "[ -~]{0,40}",
                    proptest::prelude::any::<char>().prop_map(String::from),
                    proptest::sample::select(vec!["“", "’", "é", "É", "²", "ǅ", "İ", "ß", "東京", "\u{301}", "ΟΔ"])
                        .prop_map(String::from),
                ],
                0..12,
            )
        ) {
            let text: String = parts.concat();
            for level in crate::simd::supported() {
                let got = crate::simd::scoped(level, || PythonSimhash.normalize(&text).into_owned());
                proptest::prop_assert_eq!(&got, &normalize_chars(&text), "{}", level);
            }
        }
    }

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
