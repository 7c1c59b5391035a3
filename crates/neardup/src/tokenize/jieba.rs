//! The jieba segmenters (crate `neardup-jieba`), loaded once per process
//! and shared.
//!
//! Behind the default-on `jieba` feature. Without it, pipelines that need
//! jieba are refused when they are built ([`TokenizerConfig`](super::TokenizerConfig)'s
//! validation); a tokenizer used without that check cuts Han runs into
//! single characters instead.

#[cfg(feature = "jieba")]
mod loaded {
    use neardup_jieba::Segmenter;

    /// jieba-rs's words of `text` (Python jieba's rules), appended to `out`.
    pub(crate) fn cut_into<'t>(text: &'t str, hmm: bool, out: &mut Vec<&'t str>) {
        Segmenter::jieba().cut(text, hmm, out);
    }

    /// cppjieba's words of `text` (`MixSegment` with the HMM), appended
    /// to `out`.
    pub(crate) fn cut_cppjieba<'t>(text: &'t str, hmm: bool, out: &mut Vec<&'t str>) {
        Segmenter::cppjieba().cut(text, hmm, out);
    }
}

#[cfg(feature = "jieba")]
use loaded::{cut_cppjieba, cut_into};

/// Without jieba: single characters (never reached through a validated
/// pipeline).
#[cfg(not(feature = "jieba"))]
fn cut_into<'t>(text: &'t str, _hmm: bool, out: &mut Vec<&'t str>) {
    out.extend(text.char_indices().map(|(i, c)| &text[i..i + c.len_utf8()]));
}

#[cfg(not(feature = "jieba"))]
use cut_into as cut_cppjieba;

/// Whether this build has jieba.
pub(crate) const AVAILABLE: bool = cfg!(feature = "jieba");

/// Appends jieba's words for a run of Han characters.
pub(crate) fn cut_han<'t>(run: &'t str, hmm: bool, out: &mut Vec<&'t str>) {
    cut_into(run, hmm, out);
}

/// The whole text as cppjieba's `MixSegment` cuts it, but for words that
/// are one whitespace character (its separators among them): the words
/// its keyword extractor counts, exactly, and its punctuation.
pub(crate) fn cut_cppjieba_whole<'t>(text: &'t str, hmm: bool, out: &mut Vec<&'t str>) {
    let from = out.len();
    cut_cppjieba(text, hmm, out);
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
pub(crate) fn cut_whole<'t>(text: &'t str, hmm: bool, out: &mut Vec<&'t str>) {
    let base = text.as_ptr() as usize;
    // The pending stretch of adjacent ASCII tokens, as a byte range of `text`.
    let mut ascii: Option<(usize, usize)> = None;
    let mut words = Vec::new();
    cut_into(text, hmm, &mut words);
    for w in words {
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
