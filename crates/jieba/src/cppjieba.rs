//! The cppjieba flavour: `MixSegment::Cut` (`MPSegment::Cut` without the
//! HMM) of the cppjieba in nodejieba 3.5.8, step for step.

use crate::hmm::{closes, MIN_FLOAT};
use crate::{decode, Scratch, Segmenter};

/// cppjieba's `SPECIAL_SEPARATORS`: ` \t\n，。`, each a range of its own.
#[inline(always)]
fn separator(c: u32) -> bool {
    matches!(c, 0x20 | 0x09 | 0x0A | 0xFF0C | 0x3002)
}

pub(crate) fn cut<'t>(seg: &Segmenter, text: &'t str, hmm: bool, out: &mut Vec<&'t str>, sc: &mut Scratch) {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let (c, l) = decode(b, i);
        if separator(c) {
            out.push(&text[i..i + l]);
            i += l;
            continue;
        }
        let start = i;
        i = sc.fill(&seg.dict, b, i, |c| !separator(c));
        range(seg, &text[start..i], hmm, out, sc);
    }
}

/// `MPSegment::Cut` of one range, then (with the HMM) every run of
/// single-character words through `HMMSegment::Cut`.
fn range<'t>(seg: &Segmenter, text: &'t str, hmm: bool, out: &mut Vec<&'t str>, sc: &mut Scratch) {
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
    let mut singles: Option<usize> = None;
    while i < n {
        let step = sc.route[i].1 as usize;
        if step == 1 && hmm {
            singles.get_or_insert(i);
        } else {
            if let Some(s) = singles.take() {
                hmm_cut(seg, text, s, i, out, sc);
            }
            out.push(&text[sc.off(i, len)..sc.off(i + step, len)]);
        }
        i += step;
    }
    if let Some(s) = singles {
        hmm_cut(seg, text, s, n, out, sc);
    }
}

/// `HMMSegment::Cut` of characters `x..y`: ASCII by its letter and number
/// rules, the rest by Viterbi.
fn hmm_cut<'t>(seg: &Segmenter, text: &'t str, x: usize, y: usize, out: &mut Vec<&'t str>, sc: &mut Scratch) {
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
        let letter = |c: u32| c < 0x80 && (c as u8).is_ascii_alphabetic();
        let digit = |c: u32| c < 0x80 && (c as u8).is_ascii_digit();
        let mut end = right + 1;
        if letter(chars[right]) {
            while end < y && (letter(chars[end]) || digit(chars[end])) {
                end += 1;
            }
        } else if digit(chars[right]) {
            while end < y && (digit(chars[end]) || chars[end] == u32::from(b'.')) {
                end += 1;
            }
        }
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
