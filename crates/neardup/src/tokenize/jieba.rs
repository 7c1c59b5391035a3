//! The jieba segmenters (crate `neardup-jieba`), loaded once per process
//! and shared.
//!
//! Behind the default-on `jieba` feature. Without it, pipelines that need
//! jieba are refused when they are built ([`TokenizerConfig`](super::TokenizerConfig)'s
//! validation); a tokenizer used without that check cuts Han runs into
//! single characters instead.

#[cfg(feature = "jieba")]
mod loaded {
    use super::CppjiebaVersion;
    use neardup_jieba::{CppjiebaRules, Segmenter};

    /// jieba-rs's words of `text` (Python jieba's rules), appended to `out`.
    pub(crate) fn cut_into<'t>(text: &'t str, hmm: bool, out: &mut Vec<&'t str>) {
        Segmenter::jieba().cut(text, hmm, out);
    }

    /// Whether `c` is in the jieba flavour's blocks.
    pub(crate) fn block_char(c: char) -> bool {
        Segmenter::in_jieba_block(c)
    }

    /// cppjieba's words of `text` (`MixSegment` with the HMM) as
    /// `version` cuts them, appended to `out`.
    pub(crate) fn cut_cppjieba<'t>(
        text: &'t str,
        hmm: bool,
        version: CppjiebaVersion,
        out: &mut Vec<&'t str>,
    ) {
        let rules = match version {
            CppjiebaVersion::V5_6_7 => CppjiebaRules::V5_6_7,
            CppjiebaVersion::Nodejieba3_5_8 => CppjiebaRules::Nodejieba3_5_8,
        };
        Segmenter::cppjieba().cut_with_rules(text, hmm, rules, out);
    }
}

use super::CppjiebaVersion;

#[cfg(feature = "jieba")]
use loaded::{block_char, cut_cppjieba, cut_into};

/// Without jieba: single characters (never reached through a validated
/// pipeline).
#[cfg(not(feature = "jieba"))]
fn cut_into<'t>(text: &'t str, _hmm: bool, out: &mut Vec<&'t str>) {
    out.extend(text.char_indices().map(|(i, c)| &text[i..i + c.len_utf8()]));
}

#[cfg(not(feature = "jieba"))]
fn cut_cppjieba<'t>(text: &'t str, hmm: bool, _version: CppjiebaVersion, out: &mut Vec<&'t str>) {
    cut_into(text, hmm, out);
}

/// Without jieba every character is a word of its own: any cut is safe.
#[cfg(not(feature = "jieba"))]
fn block_char(_: char) -> bool {
    false
}

/// Whether this build has jieba.
pub(crate) const AVAILABLE: bool = cfg!(feature = "jieba");

/// Appends jieba's words for a run of Han characters.
pub(crate) fn cut_han<'t>(run: &'t str, hmm: bool, out: &mut Vec<&'t str>) {
    cut_into(run, hmm, out);
}

/// The whole text as cppjieba's `MixSegment` cuts it, but for words that
/// are one whitespace character (its separators among them): the words
/// its keyword extractor counts, exactly, and its punctuation.
pub(crate) fn cut_cppjieba_whole<'t>(
    text: &'t str,
    hmm: bool,
    version: CppjiebaVersion,
    out: &mut Vec<&'t str>,
) {
    let from = out.len();
    cut_cppjieba(text, hmm, version, out);
    let mut keep = from;
    for i in from..out.len() {
        let w = out[i];
        let mut cs = w.chars();
        let lone_space = matches!((cs.next(), cs.next()), (Some(c), None) if c.is_whitespace());
        if !lone_space {
            out[keep] = w;
            keep += 1;
        }
    }
    out.truncate(keep);
}

/// The whole text through `cut`, whitespace tokens dropped, and ASCII
/// re-split as cppjieba's HMM segment splits it: jieba-rs keeps runs such
/// as `git-credential-cache` or `A.13` whole, or cuts `2.` apart, so each
/// stretch of adjacent ASCII tokens is joined and cut again by cppjieba's
/// rules.
///
/// What jieba does inside a stretch of ASCII (no whitespace) is undone by
/// the re-split, so a stretch that no block of jieba's crosses into (its
/// neighbours are whitespace, the text's ends, or characters outside
/// blocks) is split at once, and only the text between such stretches and
/// runs of ASCII whitespace goes through jieba: cut there, jieba gives the
/// words it gives the whole text (its blocks are not cut), and a test
/// checks the result against [`cut_whole_reference`].
pub(crate) fn cut_whole<'t>(text: &'t str, hmm: bool, out: &mut Vec<&'t str>) {
    let b = text.as_bytes();
    let ascii_block = |x: u8| block_char(char::from(x));
    let mut words = Vec::new();
    // Text before `pending` is done.
    let mut pending = 0;
    let mut i = 0;
    while i < b.len() {
        if b[i] >= 0x80 {
            i += 1;
            continue;
        }
        let start = i;
        if b[i].is_ascii_whitespace() {
            while i < b.len() && b[i].is_ascii_whitespace() {
                i += 1;
            }
            // Whitespace is outside blocks, and its words are dropped.
            cut_rest(&text[pending..start], hmm, &mut words, out);
            pending = i;
            continue;
        }
        while i < b.len() && b[i] < 0x80 && !b[i].is_ascii_whitespace() {
            i += 1;
        }
        let joined_before =
            start > 0 && ascii_block(b[start]) && text[..start].chars().next_back().is_some_and(block_char);
        let joined_after =
            i < b.len() && ascii_block(b[i - 1]) && text[i..].chars().next().is_some_and(block_char);
        if !joined_before && !joined_after {
            cut_rest(&text[pending..start], hmm, &mut words, out);
            split_ascii(&text[start..i], out);
            pending = i;
        }
    }
    cut_rest(&text[pending..], hmm, &mut words, out);
}

/// [`cut_whole_reference`] of a piece of text that begins and ends where no
/// block of jieba's is cut, with `words` as a buffer.
fn cut_rest<'t>(text: &'t str, hmm: bool, words: &mut Vec<&'t str>, out: &mut Vec<&'t str>) {
    if text.is_empty() {
        return;
    }
    words.clear();
    cut_into(text, hmm, words);
    join_ascii(text, words, out);
}

/// The words of `cut_into(text)` as [`cut_whole`] gives them: whitespace
/// dropped, stretches of adjacent ASCII words split again by
/// [`split_ascii`].
fn join_ascii<'t>(text: &'t str, words: &[&'t str], out: &mut Vec<&'t str>) {
    let base = text.as_ptr() as usize;
    // The pending stretch of adjacent ASCII tokens, as a byte range of `text`.
    let mut ascii: Option<(usize, usize)> = None;
    for &w in words {
        // Most words start with an ideograph: neither ASCII nor whitespace.
        if !w.is_empty() && crate::scan::ideograph_at(w.as_bytes(), 0) {
            if let Some((s, e)) = ascii.take() {
                split_ascii(&text[s..e], out);
            }
            out.push(w);
            continue;
        }
        let start = w.as_ptr() as usize - base;
        if w.is_ascii() && !w.bytes().all(|b| b.is_ascii_whitespace()) {
            ascii = match ascii {
                Some((s, e)) if e == start => Some((s, start + w.len())),
                Some((s, e)) => {
                    split_ascii(&text[s..e], out);
                    Some((start, start + w.len()))
                }
                None => Some((start, start + w.len())),
            };
            continue;
        }
        if let Some((s, e)) = ascii.take() {
            split_ascii(&text[s..e], out);
        }
        if !w.chars().all(char::is_whitespace) {
            out.push(w);
        }
    }
    if let Some((s, e)) = ascii {
        split_ascii(&text[s..e], out);
    }
}

/// [`cut_whole`] as first written: the whole text through jieba, then
/// [`join_ascii`]. The reference the shortcut is tested against.
#[cfg(test)]
fn cut_whole_reference<'t>(text: &'t str, hmm: bool, out: &mut Vec<&'t str>) {
    let mut words = Vec::new();
    cut_into(text, hmm, &mut words);
    join_ascii(text, &words, out);
}

/// cppjieba's rules for ASCII: a letter and the letters and digits after it
/// are one word; a digit and the digits and dots after it are one number;
/// any other character is a token of its own. Whitespace is dropped.
fn split_ascii<'t>(w: &'t str, out: &mut Vec<&'t str>) {
    let b = w.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let start = i;
        if b[i].is_ascii_alphabetic() {
            i += 1;
            while i < b.len() && b[i].is_ascii_alphanumeric() {
                i += 1;
            }
        } else if b[i].is_ascii_digit() {
            i += 1;
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
                i += 1;
            }
        } else {
            i += 1;
            if b[start].is_ascii_whitespace() {
                continue;
            }
        }
        out.push(&w[start..i]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn both(text: &str, hmm: bool) -> (Vec<&str>, Vec<&str>) {
        let (mut fast, mut slow) = (Vec::new(), Vec::new());
        cut_whole(text, hmm, &mut fast);
        cut_whole_reference(text, hmm, &mut slow);
        (fast, slow)
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]

        /// Splitting ASCII stretches at once gives what jieba and the
        /// re-split give: stretches next to ideographs, dictionary words
        /// across scripts (`AA制`, `T恤`, `C++`), every kind of whitespace.
        #[test]
        fn cut_whole_equals_the_reference(parts in proptest::collection::vec(proptest::prop_oneof![
            3 => "[的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分]{1,6}",
            2 => "(AA制|T恤|B超|1号店|4S店|卡拉OK|C\\+\\+|C#|AT&T|c\\+\\+|c#)",
            3 => "[a-zA-Z0-9]{1,8}",
            2 => "[+#&._%\\-,;:!?()'\"/=<>@]{1,3}",
            2 => "[ \t\r\n\u{b}\u{c}]{1,3}",
            1 => "[，。！？、\u{3000}ＡＢ１２ぁ한é😀]{1,3}",
        ], 0..24)) {
            let text: String = parts.concat();
            for hmm in [false, true] {
                let (fast, slow) = both(&text, hmm);
                proptest::prop_assert_eq!(fast, slow, "hmm = {}", hmm);
            }
        }
    }

    /// The sample documents (and ../shared/data when present).
    #[test]
    fn cut_whole_equals_the_reference_on_documents() {
        for t in neardup_testkit::sample_texts(2000) {
            for hmm in [false, true] {
                let (fast, slow) = both(&t, hmm);
                assert_eq!(fast, slow, "{}", &t[..t.len().min(80)]);
            }
        }
    }

    #[test]
    fn ascii_is_split_as_cppjieba_does() {
        let mut v = Vec::new();
        for w in ["git-credential-cache", "A.13", "pg_prepared_xacts", "3.0rc1", "a b"] {
            split_ascii(w, &mut v);
        }
        let want = [
            "git",
            "-",
            "credential",
            "-",
            "cache",
            "A",
            ".",
            "13",
            "pg",
            "_",
            "prepared",
            "_",
            "xacts",
            "3.0",
            "rc1",
            "a",
            "b",
        ];
        assert_eq!(v, want);
    }
}
