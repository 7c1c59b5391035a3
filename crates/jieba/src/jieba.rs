//! The jieba-rs flavour: `Jieba::cut` of jieba-rs 0.11, step for step.

use crate::{decode, Scratch, Segmenter};

/// jieba's `re_han_default`: CJK ideographs, ASCII letters and digits, `+#&._%-`.
#[inline(always)]
pub(crate) fn in_block(c: u32) -> bool {
    if (0x4E00..=0x9FFF).contains(&c) {
        return true;
    }
    if c < 0x80 {
        return ascii_in_block(c as u8);
    }
    matches!(c,
        0x3400..=0x4DBF
        | 0xF900..=0xFAFF
        | 0x20000..=0x2A6DF
        | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F
        | 0x2B820..=0x2CEAF
        | 0x2CEB0..=0x2EBEF
        | 0x2F800..=0x2FA1F)
}

/// The characters jieba-rs's HMM decodes (its emission table's range).
#[inline(always)]
fn hmm_han(c: u32) -> bool {
    (0x4E00..=0x9FD5).contains(&c)
}

#[inline(always)]
fn ascii_alnum(c: u32) -> bool {
    c < 0x80 && (c as u8).is_ascii_alphanumeric()
}

pub(crate) fn cut<'t>(seg: &Segmenter, text: &'t str, hmm: bool, out: &mut Vec<&'t str>, sc: &mut Scratch) {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let (c, l) = decode(b, i);
        if !in_block(c) {
            // Outside a block every character is a word, but `\r\n` is one.
            let l = if c == 0x0D && b.get(i + 1) == Some(&b'\n') { 2 } else { l };
            out.push(&text[i..i + l]);
            i += l;
            continue;
        }
        if c < 0x80 {
            if let Some(end) = ascii_block(seg, b, i) {
                ascii_words(&text[i..end], hmm, out);
                i = end;
                continue;
            }
        }
        let start = i;
        i = sc.fill(&seg.dict, b, i, in_block);
        block(seg, &text[start..i], hmm, out, sc);
    }
}

/// The ASCII characters of [`in_block`].
#[inline(always)]
fn ascii_in_block(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'#' | b'&' | b'.' | b'_' | b'%' | b'-')
}

/// The end of the block starting at `i` (an ASCII character of a block),
/// if the block is ASCII only and holds no word of the dictionary longer
/// than one character. A third of the blocks of Chinese text are such
/// runs (Latin words, numbers, code), and their words follow from their
/// bytes alone ([`ascii_words`]), without a trie walk per character.
#[inline(always)]
fn ascii_block(seg: &Segmenter, b: &[u8], i: usize) -> Option<usize> {
    let mut j = i;
    let mut pairs = false;
    while j < b.len() && ascii_in_block(b[j]) {
        if j + 1 < b.len() && b[j + 1] < 0x80 {
            pairs |= seg.ascii_pairs[usize::from(b[j])] >> b[j + 1] & 1 != 0;
        }
        j += 1;
    }
    // The block goes on past the ASCII when the next character is in it.
    let ends = j == b.len() || b[j] < 0x80 || !in_block(decode(b, j).0);
    (ends && !pairs).then_some(j)
}

/// The words of an ASCII block with no dictionary word longer than one
/// character, as [`block`] makes them: every route step is one character.
/// Without the HMM, runs of letters and digits join and each other
/// character is a word; with it, the block is one run of single steps
/// that is not a word, which the HMM's `re_skip` split cuts.
fn ascii_words<'t>(block: &'t str, hmm: bool, out: &mut Vec<&'t str>) {
    if hmm {
        if block.len() == 1 {
            out.push(block);
        } else {
            skip_split(block, out);
        }
        return;
    }
    let b = block.as_bytes();
    let mut k = 0;
    while k < b.len() {
        let start = k;
        k += 1;
        if b[start].is_ascii_alphanumeric() {
            while k < b.len() && b[k].is_ascii_alphanumeric() {
                k += 1;
            }
        }
        out.push(&block[start..k]);
    }
}

/// How many characters ahead of the walk the trie is prefetched.
const LOOKAHEAD: usize = 4;

/// One block: the best route, then its words.
fn block<'t>(seg: &Segmenter, block: &'t str, hmm: bool, out: &mut Vec<&'t str>, sc: &mut Scratch) {
    let n = sc.codes.len();
    let dict = &seg.dict;
    sc.route.clear();
    sc.route.resize(n + 1, (0.0, n as u32));
    let route = &mut sc.route;
    let codes = &sc.codes;
    let root = dict.root();
    // Backwards, so that the route after every word is known when the trie
    // walk from a character meets the word's end.
    for idx in (0..n).rev() {
        if idx >= LOOKAHEAD {
            dict.prefetch(codes[idx - LOOKAHEAD], codes[idx - LOOKAHEAD + 1]);
        }
        let mut best = (0.0, 0u32);
        let (mut s, mut v) = (0, root);
        let mut j = idx;
        while j < n {
            match dict.step_from(s, v, codes[j]) {
                Some(t) => (s, v) = t,
                None => break,
            }
            j += 1;
            if let Some(lp) = dict.word_of(v) {
                let p = lp + route[j].0;
                // Ends rise along the walk: a tie goes to the longer word.
                if best.1 == 0 || p >= best.0 {
                    best = (p, j as u32);
                }
            }
        }
        route[idx] = if best.1 == 0 { (dict.unknown + route[idx + 1].0, idx as u32 + 1) } else { best };
    }

    let len = block.len();
    let mut x = 0;
    let mut left: Option<usize> = None;
    while x < n {
        let y = sc.route[x].1 as usize;
        if y - x == 1 && (hmm || ascii_alnum(sc.chars[x])) {
            left.get_or_insert(x);
        } else {
            if let Some(l) = left.take() {
                run(seg, block, l, x, hmm, out, sc);
            }
            out.push(&block[sc.off(x, len)..sc.off(y, len)]);
        }
        x = y;
    }
    if let Some(l) = left {
        run(seg, block, l, n, hmm, out, sc);
    }
}

/// Characters `x..y`, each a route step of its own. Without the HMM they
/// are ASCII letters and digits and make one word; with it, a run the
/// dictionary has as a word stays single characters (the route chose
/// them over it), and any other run goes to the HMM.
fn run<'t>(
    seg: &Segmenter,
    block: &'t str,
    x: usize,
    y: usize,
    hmm: bool,
    out: &mut Vec<&'t str>,
    sc: &mut Scratch,
) {
    let len = block.len();
    if !hmm || y - x == 1 {
        out.push(&block[sc.off(x, len)..sc.off(y, len)]);
    } else if seg.dict.is_word(&sc.codes[x..y]) {
        for k in x..y {
            out.push(&block[sc.off(k, len)..sc.off(k + 1, len)]);
        }
    } else {
        hmm_cut(seg, block, x, y, out, sc);
    }
}

/// jieba-rs's `hmm::cut`: runs of HMM characters through Viterbi, anything
/// else split as its `re_skip` did.
fn hmm_cut<'t>(
    seg: &Segmenter,
    block: &'t str,
    x: usize,
    y: usize,
    out: &mut Vec<&'t str>,
    sc: &mut Scratch,
) {
    let len = block.len();
    let mut i = x;
    while i < y {
        let han = hmm_han(sc.chars[i]);
        let mut j = i + 1;
        while j < y && hmm_han(sc.chars[j]) == han {
            j += 1;
        }
        if !han {
            skip_split(&block[sc.off(i, len)..sc.off(j, len)], out);
        } else if j - i == 1 {
            out.push(&block[sc.off(i, len)..sc.off(j, len)]);
        } else {
            let Scratch { chars, offs, prev, path, .. } = sc;
            seg.hmm.viterbi_jieba(&chars[i..j], prev, path);
            let off = |k: usize| offs.get(k).map_or(len, |&o| o as usize);
            let mut begin = i;
            let mut next = i;
            for (k, &state) in path.iter().enumerate() {
                let k = i + k;
                if crate::hmm::opens(state) {
                    begin = k;
                } else if crate::hmm::closes(state) {
                    let from = if crate::hmm::single(state) { k } else { begin };
                    out.push(&block[off(from)..off(k + 1)]);
                    next = k + 1;
                }
            }
            if next < j {
                out.push(&block[off(next)..off(j)]);
            }
        }
        i = j;
    }
}

/// jieba-rs's `HmmSkipSplitter`: alternating gaps and matches of
/// `[a-zA-Z0-9]+(?:[._-][a-zA-Z0-9]+)*%?`, each a word.
fn skip_split<'t>(text: &'t str, out: &mut Vec<&'t str>) {
    let b = text.as_bytes();
    let mut pos = 0;
    while pos < b.len() {
        let gap = pos;
        while pos < b.len() && !b[pos].is_ascii_alphanumeric() {
            pos += 1;
        }
        if pos > gap {
            out.push(&text[gap..pos]);
        }
        if pos == b.len() {
            break;
        }
        let start = pos;
        loop {
            while pos < b.len() && b[pos].is_ascii_alphanumeric() {
                pos += 1;
            }
            if pos + 1 < b.len() && matches!(b[pos], b'.' | b'_' | b'-') && b[pos + 1].is_ascii_alphanumeric()
            {
                pos += 1;
            } else {
                break;
            }
        }
        if pos < b.len() && b[pos] == b'%' {
            pos += 1;
        }
        out.push(&text[start..pos]);
    }
}
