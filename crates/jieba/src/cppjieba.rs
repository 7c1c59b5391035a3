//! The cppjieba flavour: `MixSegment::Cut` (`MPSegment::Cut` without the
//! HMM) of cppjieba v5.6.7, step for step, or of the older cppjieba in
//! nodejieba 3.5.8, which differs in its HMM's ASCII rules only
//! ([`CppjiebaRules`]).

use crate::hmm::{closes, MIN_FLOAT};
use crate::{decode, CppjiebaRules, Scratch, Segmenter};

/// cppjieba's `SPECIAL_SEPARATORS`: ` \t\n，。`, each a range of its own.
#[inline(always)]
fn separator(c: u32) -> bool {
    matches!(c, 0x20 | 0x09 | 0x0A | 0xFF0C | 0x3002)
}

/// `MixSegment::Cut` of `text` with the HMM's ASCII rules `hmm`, or
/// `MPSegment::Cut` (`None`).
pub(crate) fn cut<'t>(
    seg: &Segmenter,
    text: &'t str,
    hmm: Option<CppjiebaRules>,
    out: &mut Vec<&'t str>,
    sc: &mut Scratch,
) {
    cut_with::<true>(seg, text, hmm, out, sc);
}

/// [`cut`], with or without the shortcut for ASCII ranges
/// ([`ascii_range`]); tests compare the two.
pub(crate) fn cut_with<'t, const SHORTCUT: bool>(
    seg: &Segmenter,
    text: &'t str,
    hmm: Option<CppjiebaRules>,
    out: &mut Vec<&'t str>,
    sc: &mut Scratch,
) {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let (c, l) = decode(b, i);
        if separator(c) {
            out.push(&text[i..i + l]);
            i += l;
            continue;
        }
        if SHORTCUT && c < 0x80 {
            if let Some(end) = ascii_range(seg, b, i) {
                ascii_words(&text[i..end], hmm, out);
                i = end;
                continue;
            }
        }
        let start = i;
        i = sc.fill(&seg.dict, b, i, |c| !separator(c));
        range(seg, &text[start..i], hmm, out, sc);
    }
}

/// The end of the range starting at `i` (an ASCII character that is not a
/// separator), if the range is ASCII only and holds no word of the
/// dictionary longer than one character. Such ranges (Latin words and
/// numbers between spaces) are a large part of Chinese web text, and their
/// words follow from their bytes ([`ascii_words`]) without a trie walk per
/// character.
#[inline(always)]
fn ascii_range(seg: &Segmenter, b: &[u8], i: usize) -> Option<usize> {
    let mut j = i;
    let mut pairs = false;
    while j < b.len() && b[j] < 0x80 && !separator(u32::from(b[j])) {
        if j + 1 < b.len() && b[j + 1] < 0x80 {
            pairs |= seg.ascii_pairs[usize::from(b[j])] >> b[j + 1] & 1 != 0;
        }
        j += 1;
    }
    // The range goes on past the ASCII unless a separator or the end follows.
    let ends = j == b.len() || separator(decode(b, j).0);
    (ends && !pairs).then_some(j)
}

/// The words [`range`] gives an ASCII range without dictionary words
/// longer than a character: every route step is one character, so
/// without the HMM each character is a word, and with it the whole range
/// is one run of single characters, cut by `HMMSegment`'s ASCII rules
/// ([`ascii_run`]).
fn ascii_words<'t>(text: &'t str, hmm: Option<CppjiebaRules>, out: &mut Vec<&'t str>) {
    let Some(rules) = hmm else {
        out.extend((0..text.len()).map(|k| &text[k..k + 1]));
        return;
    };
    let b = text.as_bytes();
    let mut k = 0;
    while k < b.len() {
        let end = ascii_run(k, b.len(), rules, |x| u32::from(b[x]));
        out.push(&text[k..end]);
        k = end;
    }
}

/// The end of the ASCII word `HMMSegment::Cut` takes from position
/// `right` (below `y`), where `c(x)` is the character at position `x`.
///
/// v5.6.7 (`SequentialLetterRule`, then `NumbersRule`): a letter or a
/// digit and the letters and digits after it, then at most one decimal
/// suffix — a dot followed by digits, taken with them ("5G3.14", "abc1.2";
/// "3.14.15" is "3.14", ".", "15"). nodejieba 3.5.8: a letter and the
/// letters and digits after it; a digit and the digits and dots after it
/// ("3.14.15" whole, "5G" two words). Any other character alone.
#[inline(always)]
fn ascii_run(right: usize, y: usize, rules: CppjiebaRules, c: impl Fn(usize) -> u32) -> usize {
    let letter = |c: u32| c < 0x80 && (c as u8).is_ascii_alphabetic();
    let digit = |c: u32| c < 0x80 && (c as u8).is_ascii_digit();
    let dot = u32::from(b'.');
    let mut end = right + 1;
    match rules {
        CppjiebaRules::V5_6_7 => {
            if !letter(c(right)) && !digit(c(right)) {
                return end;
            }
            while end < y && (letter(c(end)) || digit(c(end))) {
                end += 1;
            }
            if end + 1 < y && c(end) == dot && digit(c(end + 1)) {
                end += 2;
                while end < y && digit(c(end)) {
                    end += 1;
                }
            }
        }
        CppjiebaRules::Nodejieba3_5_8 => {
            if letter(c(right)) {
                while end < y && (letter(c(end)) || digit(c(end))) {
                    end += 1;
                }
            } else if digit(c(right)) {
                while end < y && (digit(c(end)) || c(end) == dot) {
                    end += 1;
                }
            }
        }
    }
    end
}

/// `MPSegment::Cut` of one range, then (with the HMM) every run of
/// single-character words through `HMMSegment::Cut`.
fn range<'t>(
    seg: &Segmenter,
    text: &'t str,
    hmm: Option<CppjiebaRules>,
    out: &mut Vec<&'t str>,
    sc: &mut Scratch,
) {
    let n = sc.codes.len();
    let dict = &seg.dict;
    sc.route.clear();
    sc.route.resize(n + 1, (0.0, 1));
    let route = &mut sc.route;
    let codes = &sc.codes;
    // `CalcDP`: the character alone first (a word or not), then longer
    // words in order; a later candidate must score strictly higher.
    for i in (0..n).rev() {
        let mut best = (MIN_FLOAT, 1u32);
        let mut node = dict.step(0, codes[i]);
        let w = node.and_then(|t| dict.word(t)).unwrap_or(dict.unknown);
        let v = route[i + 1].0 + w;
        if v > best.0 {
            best = (v, 1);
        }
        let mut j = i + 1;
        while let Some(s) = node {
            if j >= n {
                break;
            }
            node = dict.step(s, codes[j]);
            j += 1;
            if let Some(w) = node.and_then(|t| dict.word(t)) {
                let v = route[j].0 + w;
                if v > best.0 {
                    best = (v, (j - i) as u32);
                }
            }
        }
        route[i] = best;
    }

    let len = text.len();
    let mut i = 0;
    // The run of single characters going on (with the HMM): its start.
    let mut singles: Option<(usize, CppjiebaRules)> = None;
    while i < n {
        let step = sc.route[i].1 as usize;
        match hmm {
            Some(rules) if step == 1 => {
                singles.get_or_insert((i, rules));
            }
            _ => {
                if let Some((s, rules)) = singles.take() {
                    hmm_cut(seg, text, (s, i), rules, out, sc);
                }
                out.push(&text[sc.off(i, len)..sc.off(i + step, len)]);
            }
        }
        i += step;
    }
    if let Some((s, rules)) = singles {
        hmm_cut(seg, text, (s, n), rules, out, sc);
    }
}

/// `HMMSegment::Cut` of characters `x..y`: ASCII by its letter and number
/// rules, the rest by Viterbi.
fn hmm_cut<'t>(
    seg: &Segmenter,
    text: &'t str,
    (x, y): (usize, usize),
    rules: CppjiebaRules,
    out: &mut Vec<&'t str>,
    sc: &mut Scratch,
) {
    let len = text.len();
    let mut left = x;
    let mut right = x;
    while right < y {
        if sc.chars[right] >= 0x80 {
            right += 1;
            continue;
        }
        if left != right {
            viterbi_cut(seg, text, left, right, out, sc);
        }
        let chars = &sc.chars;
        let end = ascii_run(right, y, rules, |x| chars[x]);
        out.push(&text[sc.off(right, len)..sc.off(end, len)]);
        left = end;
        right = end;
    }
    if left != right {
        viterbi_cut(seg, text, left, right, out, sc);
    }
}

/// `HMMSegment::InternalCut`: a word closes at every E or S.
fn viterbi_cut<'t>(
    seg: &Segmenter,
    text: &'t str,
    x: usize,
    y: usize,
    out: &mut Vec<&'t str>,
    sc: &mut Scratch,
) {
    let len = text.len();
    let Scratch { chars, offs, prev, path, .. } = sc;
    seg.hmm.viterbi_cppjieba(&chars[x..y], prev, path);
    let off = |k: usize| offs.get(k).map_or(len, |&o| o as usize);
    let mut left = x;
    for (k, &state) in path.iter().enumerate() {
        if closes(state) {
            out.push(&text[off(left)..off(x + k + 1)]);
            left = x + k + 1;
        }
    }
}
