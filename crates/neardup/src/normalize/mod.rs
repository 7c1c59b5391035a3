//! Stage 1, normalize: rewrite the text before it is split into tokens.
//!
//! Normalizers never fail and never copy text they do not change: each
//! returns [`Cow::Borrowed`] when its input is already normal.

mod html;
mod python_simhash;
mod pyunicode_tables;

pub use html::html_to_text;

use std::borrow::Cow;
use std::fmt;

use crate::scan::{ideograph_at, Kind, Skipper};

use serde::{Deserialize, Serialize};
use unicode_general_category::{get_general_category, GeneralCategory};
use unicode_normalization::{is_nfkc_quick, IsNormalized, UnicodeNormalization};

/// Rewrites text before tokenization.
pub trait Normalizer: Send + Sync + fmt::Debug {
    /// The normalized text; borrowed when nothing changed.
    fn normalize<'a>(&self, text: &'a str) -> Cow<'a, str>;
}

/// The built-in normalizers, as they appear in a configuration:
/// `normalize = [{ type = "nfkc" }, { type = "lowercase" }]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
#[non_exhaustive]
pub enum NormalizerConfig {
    /// Text out of HTML: tags, comments, scripts, styles and non-content
    /// elements (`head`, `nav`, `header`, `footer`, `aside`) removed; only
    /// `<main>`/`<article>` kept when the page has them; character
    /// references decoded. Text without HTML tags is left as it is. See
    /// [`html_to_text`].
    Html,
    /// Unicode NFKC: full-width letters and digits become ASCII, compatibility
    /// ideographs become unified ones, ligatures are split.
    Nfkc,
    /// Unicode lower case (full mappings, final sigma in context).
    Lowercase,
    /// Every punctuation or symbol character (general categories P* and S*)
    /// becomes a space.
    StripPunctuation,
    /// Every run of whitespace becomes one space; leading and trailing
    /// whitespace is removed.
    CollapseWhitespace,
    /// What the PyPI `simhash` package does to text: CPython 3.11's
    /// `str.lower()`, then only the characters matching
    /// `[\w\u4e00-\u9fcc]` are kept, joined without separators.
    PythonSimhash,
}

impl Normalizer for NormalizerConfig {
    fn normalize<'a>(&self, text: &'a str) -> Cow<'a, str> {
        match self {
            NormalizerConfig::Html => html_to_text(text),
            NormalizerConfig::Nfkc => Nfkc.normalize(text),
            NormalizerConfig::Lowercase => Lowercase.normalize(text),
            NormalizerConfig::StripPunctuation => StripPunctuation.normalize(text),
            NormalizerConfig::CollapseWhitespace => CollapseWhitespace.normalize(text),
            NormalizerConfig::PythonSimhash => python_simhash::PythonSimhash.normalize(text),
        }
    }
}

/// Applies a list of normalizers in order, copying at most once per step
/// that changes something.
pub fn normalize_all<'a>(steps: &[NormalizerConfig], text: &'a str) -> Cow<'a, str> {
    let mut cur = Cow::Borrowed(text);
    for step in steps {
        if let Cow::Owned(s) = step.normalize(&cur) {
            cur = Cow::Owned(s);
        }
    }
    cur
}

/// Unicode NFKC.
#[derive(Clone, Copy, Debug, Default)]
pub struct Nfkc;

impl Normalizer for Nfkc {
    fn normalize<'a>(&self, text: &'a str) -> Cow<'a, str> {
        if is_nfkc_quick_fast(text) {
            return Cow::Borrowed(text);
        }
        let out = nfkc_by_stretches(text);
        if out == text {
            Cow::Borrowed(text)
        } else {
            Cow::Owned(out)
        }
    }
}

/// A character that NFKC leaves alone and that nothing composes with or
/// reorders across (canonical combining class 0, NFKC quick check Yes, no
/// decomposition, never the second half of a composition): ASCII, the CJK
/// unified ideographs, and the punctuation and line drawing that Chinese
/// text is full of (CJK brackets and marks, quotes and dashes, box
/// drawing and shapes). A test checks every one against the Unicode
/// tables. Text is checked and normalized in the stretches between such
/// characters (and [`fullwidth`] ones).
#[inline]
const fn is_stable_starter(c: char) -> bool {
    c.is_ascii()
        || matches!(c as u32,
            0x3400..=0x4DBF | 0x4E00..=0x9FFF
            | 0x3001..=0x3003 | 0x3008..=0x3011 | 0x3014..=0x301F
            | 0x2010 | 0x2012..=0x2016 | 0x2018..=0x2023 | 0x2027
            | 0x2500..=0x25FF | 0xB7 | 0x30FB)
}

/// Bit `c` set when the BMP character `c` is a stable starter or a
/// full-width form: one lookup (8 KiB, in cache) instead of a chain of
/// range compares per punctuation mark, whose branches Chinese text's mix
/// of marks mispredicts.
static PASSES_NFKC: [u64; 1024] = {
    let mut t = [0u64; 1024];
    let mut c = 0u32;
    while c < 0x10000 {
        if let Some(ch) = char::from_u32(c) {
            if is_stable_starter(ch) || matches!(c, 0x3000 | 0xFF01..=0xFF5E) {
                t[(c / 64) as usize] |= 1 << (c % 64);
            }
        }
        c += 1;
    }
    t
};

/// What NFKC makes of a full-width ASCII form (U+FF01–U+FF5E) or the
/// ideographic space: one ASCII character, itself a stable starter, and
/// nothing composes with or reorders across the original either; so these
/// are mapped in place, between the stretches, without the normalizer.
#[inline]
fn fullwidth(c: char) -> Option<u8> {
    match c as u32 {
        0x3000 => Some(b' '),
        // The full-width forms are the ASCII ones 0xFEE0 higher.
        f @ 0xFF01..=0xFF5E => Some((f - 0xFEE0) as u8),
        _ => None,
    }
}

/// Whether the character at byte `i` of `text` (not ASCII) is a stable
/// starter or a full-width form, and its length. Most of Chinese text is
/// decided on its lead byte ([`ideograph_at`]); the rest is decoded.
#[inline(always)]
fn stable_at(text: &str, i: usize) -> (bool, usize) {
    if ideograph_at(text.as_bytes(), i) {
        return (true, 3);
    }
    let b = text.as_bytes();
    // Two- and three-byte characters (the BMP but for surrogates) from the
    // table; the rest are never stable starters or full-width forms.
    let (c, len) = match b[i] {
        0..=0x7F => return (true, 1),
        0xC0..=0xDF => ((u32::from(b[i] & 0x1F) << 6) | u32::from(b[i + 1] & 0x3F), 2),
        0xE0..=0xEF => (
            (u32::from(b[i] & 0x0F) << 12) | (u32::from(b[i + 1] & 0x3F) << 6) | u32::from(b[i + 2] & 0x3F),
            3,
        ),
        _ => return (false, text[i..].chars().next().expect("char boundary").len_utf8()),
    };
    (PASSES_NFKC[(c / 64) as usize] >> (c % 64) & 1 != 0, len)
}

/// The stretches of `text` between stable starters, as byte ranges.
fn unstable_stretches(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let b = text.as_bytes();
    let mut i = 0;
    let mut blocks = Skipper::new(Kind::NfkcStable);
    std::iter::from_fn(move || {
        // Skip stable starters: whole blocks of ASCII and ideographs at
        // once, the rest character by character.
        while i < b.len() {
            if let Some(j) = blocks.jump(b, i) {
                i = j;
                continue;
            }
            if b[i] < 0x80 {
                i += 1;
                continue;
            }
            let (stable, len) = stable_at(text, i);
            if !stable {
                break;
            }
            i += len;
        }
        if i >= b.len() {
            return None;
        }
        let start = i;
        while i < b.len() && b[i] >= 0x80 {
            let (stable, len) = stable_at(text, i);
            if stable {
                break;
            }
            i += len;
        }
        Some((start, i))
    })
}

/// The NFKC quick check, run only over the stretches between stable
/// starters: those have combining class 0 and are NFKC, which resets the
/// check's state, so checking the stretches apart is exact. A full-width
/// form outside the stretches is not NFKC.
fn is_nfkc_quick_fast(text: &str) -> bool {
    let mut from = 0;
    unstable_stretches(text).all(|(s, e)| {
        let between = &text[from..s];
        from = e;
        !has_fullwidth(between) && is_nfkc_quick(text[s..e].chars()) == IsNormalized::Yes
    }) && !has_fullwidth(&text[from..])
}

/// The full-width forms of `text`: each one's byte offset and the ASCII
/// character NFKC makes of it. Found by their UTF-8 (U+3000 is E3 80 80,
/// U+FF01–U+FF5E are EF BC 81 – EF BD 9E), so other text is not decoded.
fn fullwidth_forms(text: &str) -> impl Iterator<Item = (usize, u8)> + '_ {
    let b = text.as_bytes();
    memchr::memchr2_iter(0xE3, 0xEF, b).filter_map(move |i| {
        let candidate = matches!(
            (b[i], b.get(i + 1), b.get(i + 2)),
            (0xE3, Some(0x80), Some(0x80)) | (0xEF, Some(0xBC | 0xBD), _)
        );
        // E3 and EF are lead bytes, so `i` is a character boundary.
        candidate.then(|| text[i..].chars().next().and_then(fullwidth).map(|a| (i, a))).flatten()
    })
}

/// Whether `text` has a full-width form.
fn has_fullwidth(text: &str) -> bool {
    fullwidth_forms(text).next().is_some()
}

/// `text` (stable starters and full-width forms only) as NFKC makes it:
/// copied, with the full-width forms mapped.
fn push_mapped(out: &mut String, text: &str) {
    let mut copied = 0;
    for (i, a) in fullwidth_forms(text) {
        out.push_str(&text[copied..i]);
        out.push(char::from(a));
        // Every full-width form is three bytes.
        copied = i + 3;
    }
    out.push_str(&text[copied..]);
}

/// NFKC of `text`, normalizing only the stretches between stable starters
/// (each with the character before it, which a combining mark may compose
/// with) and copying the rest through.
fn nfkc_by_stretches(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut copied = 0; // text[..copied] is in `out`
    for (s, e) in unstable_stretches(text) {
        // Include the preceding starter, if it has not been copied yet.
        let start = text[copied..s].char_indices().next_back().map_or(s, |(i, _)| copied + i);
        push_mapped(&mut out, &text[copied..start]);
        let stretch = &text[start..e];
        if is_nfkc_quick(stretch.chars()) == IsNormalized::Yes {
            out.push_str(stretch);
        } else {
            out.extend(stretch.nfkc());
        }
        copied = e;
    }
    push_mapped(&mut out, &text[copied..]);
    out
}

/// Unicode lower case.
#[derive(Clone, Copy, Debug, Default)]
pub struct Lowercase;

/// Whether lower-casing `c` can change anything: false for the large
/// caseless blocks (general punctuation, box drawing and shapes, CJK,
/// kana, Hangul), which are skipped without a lookup (a test checks them).
#[inline]
fn may_have_lowercase(c: char) -> bool {
    !matches!(c as u32, 0x2000..=0x206F | 0x2500..=0x25FF | 0x3000..=0x9FFF | 0xAC00..=0xD7FF | 0x20000..=0x3FFFF)
}

/// The byte offset of the first character at or after `from` that lower
/// case changes. Characters U+3000–U+9FFF (CJK punctuation, kana,
/// ideographs: lead bytes E3–E9) are stepped over without decoding.
fn next_change(text: &str, from: usize) -> Option<usize> {
    let b = text.as_bytes();
    let mut i = from;
    let mut blocks = Skipper::new(Kind::Caseless);
    while i < b.len() {
        if let Some(j) = blocks.jump(b, i) {
            i = j;
            continue;
        }
        let x = b[i];
        if x < 0x80 {
            if x.is_ascii_uppercase() {
                return Some(i);
            }
            i += 1;
        } else if (0xE3..=0xE9).contains(&x) {
            i += 3;
        } else {
            let c = text[i..].chars().next().expect("char boundary");
            if changes_when_lowercased(c) {
                return Some(i);
            }
            i += c.len_utf8();
        }
    }
    None
}

#[inline]
fn changes_when_lowercased(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_uppercase();
    }
    if !may_have_lowercase(c) {
        return false;
    }
    let mut l = c.to_lowercase();
    !(l.next() == Some(c) && l.next().is_none())
}

impl Normalizer for Lowercase {
    fn normalize<'a>(&self, text: &'a str) -> Cow<'a, str> {
        if text.is_ascii() {
            if !text.bytes().any(|b| b.is_ascii_uppercase()) {
                return Cow::Borrowed(text);
            }
            return Cow::Owned(text.to_ascii_lowercase());
        }
        let Some(first) = next_change(text, 0) else {
            return Cow::Borrowed(text);
        };
        // Capital sigma depends on its neighbours (final sigma): let the
        // standard library handle the whole text.
        if text[first..].contains('Σ') {
            return Cow::Owned(text.to_lowercase());
        }
        let mut out = String::with_capacity(text.len());
        let mut from = 0;
        let mut at = Some(first);
        // Copy what does not change in bulk; lower-case the rest.
        while let Some(i) = at {
            out.push_str(&text[from..i]);
            let c = text[i..].chars().next().expect("char boundary");
            if c.is_ascii() {
                out.push(c.to_ascii_lowercase());
            } else {
                out.extend(c.to_lowercase());
            }
            from = i + c.len_utf8();
            at = next_change(text, from);
        }
        out.push_str(&text[from..]);
        Cow::Owned(out)
    }
}

/// Replaces punctuation and symbols with spaces.
#[derive(Clone, Copy, Debug, Default)]
pub struct StripPunctuation;

/// Whether `c` is punctuation or a symbol (general category P* or S*).
pub fn is_punctuation_or_symbol(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_punctuation();
    }
    use GeneralCategory::*;
    matches!(
        get_general_category(c),
        ConnectorPunctuation
            | DashPunctuation
            | OpenPunctuation
            | ClosePunctuation
            | InitialPunctuation
            | FinalPunctuation
            | OtherPunctuation
            | MathSymbol
            | CurrencySymbol
            | ModifierSymbol
            | OtherSymbol
    )
}

impl Normalizer for StripPunctuation {
    fn normalize<'a>(&self, text: &'a str) -> Cow<'a, str> {
        if !text.chars().any(is_punctuation_or_symbol) {
            return Cow::Borrowed(text);
        }
        Cow::Owned(text.chars().map(|c| if is_punctuation_or_symbol(c) { ' ' } else { c }).collect())
    }
}

/// Collapses whitespace runs to one space and trims the ends.
#[derive(Clone, Copy, Debug, Default)]
pub struct CollapseWhitespace;

impl Normalizer for CollapseWhitespace {
    fn normalize<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut prev_space = true;
        let normal = text.chars().all(|c| {
            let ok = if c.is_whitespace() { c == ' ' && !prev_space } else { true };
            prev_space = c.is_whitespace();
            ok
        }) && !text.ends_with(' ');
        if normal {
            return Cow::Borrowed(text);
        }
        let mut out = String::with_capacity(text.len());
        for w in text.split_whitespace() {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(w);
        }
        Cow::Owned(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! test_normalizer {
        ($name:ident, $n:expr, $($input:expr => $want:expr),+ $(,)?) => {
            #[test]
            fn $name() {
                $(
                    let got = $n.normalize($input);
                    assert_eq!(got, $want, "help: {:?} normalized {:?}", $n, $input);
                    if $input == $want {
                        assert!(matches!(got, Cow::Borrowed(_)), "help: unchanged text must not be copied");
                    }
                )+
            }
        };
    }

    test_normalizer!(nfkc, Nfkc,
        "abc" => "abc",
        "ＡＢＣ１２３" => "ABC123",
        "ﬁne" => "fine",
        "中文" => "中文",
        "ｶﾀｶﾅ" => "カタカナ",
    );
    proptest::proptest! {
        #[test]
        fn lowercase_equals_std(s in "([a-zA-Z .]|Σ|σ|ς|İ|ǅ|Ω|中|。|ア|─|“|Ⅻ|Ⓐ|Ω|K|가|Ａ|\u{301}|\u{10400}){0,16}") {
            proptest::prop_assert_eq!(Lowercase.normalize(&s), s.to_lowercase());
        }
    }

    test_normalizer!(lowercase, Lowercase,
        "abc" => "abc",
        "ABC" => "abc",
        "ΟΔΟΣ" => "οδος",
        "中文" => "中文",
        "Ǆ" => "ǆ",
    );
    test_normalizer!(strip, StripPunctuation,
        "a b" => "a b",
        "a,b.c!" => "a b c ",
        "你好，世界。" => "你好 世界 ",
        "$5+3" => " 5 3",
    );

    test_normalizer!(collapse, CollapseWhitespace,
        "a b" => "a b",
        "  a \t\n b  " => "a b",
        "" => "",
        "a " => "a",
    );

    /// The fast quick check and both fast NFKC paths give what the
    /// normalizer crate gives for `s`.
    fn nfkc_paths_agree(s: &str) -> Result<(), proptest::test_runner::TestCaseError> {
        let slow = is_nfkc_quick(s.chars()) == IsNormalized::Yes;
        proptest::prop_assert_eq!(is_nfkc_quick_fast(s), slow);
        let nfkc: String = s.nfkc().collect();
        proptest::prop_assert_eq!(Nfkc.normalize(s), nfkc.as_str());
        proptest::prop_assert_eq!(nfkc_by_stretches(s), nfkc);
        Ok(())
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]
        #[test]
        fn nfkc_fast_check_is_exact(s in "([a-zA-Z .]|é|文|㐀|，|。|\u{3099}|か|\u{301}|\u{327}|\u{308}|\u{a0}|ﬁ|Å|Å|ｶ|ﾞ|①|中|…|\u{0345}|\u{1100}|\u{1161}|가|\u{11a8}){0,16}") {
            nfkc_paths_agree(&s)?;
        }

        /// Chinese as it is written: ideographs, CJK punctuation, full-width
        /// forms and spaces, box drawing, and marks that compose with or
        /// reorder around any of them.
        #[test]
        fn nfkc_fast_path_is_exact_on_chinese_punctuation(s in "(中|文|，|。|、|「|」|（|）|：|！|ａ|Ａ|１|\u{3000}|─|│|“|”|—|·|・|…|\u{301}|\u{308}|\u{3099}|\u{20dd}|ｶ|ﾞ|\u{338}|←|=){0,20}") {
            nfkc_paths_agree(&s)?;
        }

        /// Mostly ASCII, as English is: runs long enough for the
        /// eight-bytes-at-a-time skip, broken at every offset in a word.
        #[test]
        fn nfkc_fast_check_is_exact_on_ascii_runs(s in "([a-z .]{0,19}(é|文|\u{301}|\u{308}|ﬁ|①|\u{a0}|ｶ|ﾞ|가|\u{11a8})){0,5}[a-z]{0,9}") {
            nfkc_paths_agree(&s)?;
        }
    }

    /// Every stable starter is one by the Unicode tables the normalizer
    /// uses, and every full-width mapping is NFKC's.
    #[test]
    fn stable_starters_and_fullwidth_forms_agree_with_the_tables() {
        use unicode_normalization::char::canonical_combining_class;
        let mut n = 0;
        for c in (0..0x11_0000u32).filter_map(char::from_u32) {
            if is_stable_starter(c) {
                assert_eq!(canonical_combining_class(c), 0, "{c:?}");
                assert_eq!(is_nfkc_quick(std::iter::once(c)), IsNormalized::Yes, "{c:?}");
                assert!(fullwidth(c).is_none());
                n += 1;
            }
            if !c.is_ascii() {
                // The lead-byte shortcut decides as the decoded check.
                let want = (is_stable_starter(c) || fullwidth(c).is_some(), c.len_utf8());
                assert_eq!(stable_at(&c.to_string(), 0), want, "{c:?}");
            }
            if let Some(a) = fullwidth(c) {
                assert_eq!(std::iter::once(c).nfkc().collect::<String>(), char::from(a).to_string(), "{c:?}");
                assert_eq!(canonical_combining_class(c), 0, "{c:?}");
                assert!(has_fullwidth(&c.to_string()), "{c:?}");
            } else {
                assert!(!has_fullwidth(&c.to_string()), "{c:?}");
            }
        }
        assert_eq!(n, 128 + 6592 + 20992 + 3 + 10 + 12 + 1 + 5 + 12 + 1 + 256 + 2);
    }

    #[test]
    fn the_caseless_blocks_are_caseless() {
        for c in (0..0x11_0000u32).filter_map(char::from_u32).filter(|&c| !may_have_lowercase(c)) {
            assert_eq!(c.to_lowercase().collect::<String>(), c.to_string(), "{c:?}");
        }
        for (c, b) in [('\u{3000}', 0xE3), ('\u{9FFF}', 0xE9)] {
            assert_eq!(c.to_string().as_bytes()[0], b);
        }
    }

    #[test]
    fn sequence_copies_only_when_needed() {
        let steps = [NormalizerConfig::Nfkc, NormalizerConfig::Lowercase];
        assert!(matches!(normalize_all(&steps, "plain"), Cow::Borrowed(_)));
        assert_eq!(normalize_all(&steps, "ＨＥＬＬＯ"), "hello");
    }
}
