//! Tokens for substring dedup: a word (a run of letters, digits, marks
//! and connectors, outside the scripts written without spaces), one Han,
//! kana, Hangul or other letter of those scripts, or one punctuation or
//! symbol character. Whitespace is between tokens. A span may start or
//! end only where no token is cut: never inside a word, never inside a
//! UTF-8 character.

use std::ops::Range;

/// Whether `c` is written without spaces between words (each character a
/// token): Han, kana, Hangul, Thai and the like.
fn is_unspaced(c: char) -> bool {
    matches!(c as u32,
        0x0E00..=0x0EFF      // Thai, Lao
        | 0x1000..=0x109F    // Myanmar
        | 0x1780..=0x17FF    // Khmer
        | 0x2E80..=0x2FDF    // CJK radicals
        | 0x3040..=0x30FF    // kana
        | 0x3100..=0x31FF    // bopomofo, kana extensions
        | 0x3400..=0x4DBF    // CJK extension A
        | 0x4E00..=0x9FFF    // CJK unified ideographs
        | 0xAC00..=0xD7AF    // Hangul syllables
        | 0xF900..=0xFAFF    // CJK compatibility ideographs
        | 0x20000..=0x3FFFF  // CJK extensions B and later
    )
}

/// Whether `c` belongs in a word run.
fn is_word(c: char) -> bool {
    (c.is_alphanumeric() || c == '_' || c == '\'' || is_mark(c)) && !is_unspaced(c)
}

/// Combining marks stay with their letter.
fn is_mark(c: char) -> bool {
    matches!(c as u32, 0x0300..=0x036F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF | 0xFE20..=0xFE2F)
}

/// The tokens of `text`, as byte spans, in order.
pub fn tokens(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut word: Option<usize> = None;
    for (i, c) in text.char_indices() {
        if is_word(c) {
            if word.is_none() {
                word = Some(i);
            }
            continue;
        }
        if let Some(s) = word.take() {
            out.push(s..i);
        }
        if !c.is_whitespace() {
            out.push(i..i + c.len_utf8());
        }
    }
    if let Some(s) = word {
        out.push(s..text.len());
    }
    out
}

/// `range` of `text` shrunk to the nearest places where it cuts no token
/// (`tokens` are `text`'s [`tokens`]), and without whitespace at either end
/// (so cutting it never joins the words around it), or `None` if nothing
/// is left.
pub fn snap(text: &str, tokens: &[Range<usize>], range: Range<usize>) -> Option<Range<usize>> {
    let inside = |p: usize| {
        // The token that starts before p, if p falls strictly inside it.
        let i = tokens.partition_point(|t| t.start < p);
        (i > 0 && tokens[i - 1].end > p).then(|| tokens[i - 1].clone())
    };
    let mut s = range.start.min(text.len());
    let mut e = range.end.min(text.len());
    if let Some(t) = inside(s) {
        s = t.end;
    }
    while s < text.len() && !text.is_char_boundary(s) {
        s += 1;
    }
    if let Some(t) = inside(e) {
        e = t.start;
    }
    while e > 0 && !text.is_char_boundary(e) {
        e -= 1;
    }
    if s >= e {
        return None;
    }
    let inner = &text[s..e];
    let (s, e) = (s + inner.len() - inner.trim_start().len(), s + inner.trim_end().len());
    (s < e).then_some(s..e)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(t: &str) -> Vec<&str> {
        tokens(t).into_iter().map(|r| &t[r]).collect()
    }

    #[test]
    fn words_han_and_punctuation() {
        assert_eq!(toks("It's 3.14, naïve café!"), ["It's", "3", ".", "14", ",", "naïve", "café", "!"]);
        assert_eq!(toks("我们在北京。OK"), ["我", "们", "在", "北", "京", "。", "OK"]);
    }

    #[test]
    fn spans_never_cut_a_word_or_a_character() {
        let t = "hello world 你好世界 end";
        let tk = tokens(t);
        assert_eq!(snap(t, &tk, 2..13).map(|r| &t[r]), Some("world"));
        // 13 is inside the 3-byte 你: the span starts after it.
        assert_eq!(snap(t, &tk, 13..21).map(|r| &t[r]), Some("好世"));
        assert_eq!(snap(t, &tk, 1..4), None);
        for s in 0..=t.len() {
            for e in s..=t.len() {
                if let Some(r) = snap(t, &tk, s..e) {
                    assert!(t.is_char_boundary(r.start) && t.is_char_boundary(r.end));
                    assert!(s <= r.start && r.end <= e);
                    for w in &tk {
                        assert!(!(w.start < r.start && r.start < w.end), "{s}..{e} cuts {:?}", &t[w.clone()]);
                        assert!(!(w.start < r.end && r.end < w.end), "{s}..{e} cuts {:?}", &t[w.clone()]);
                    }
                }
            }
        }
    }
}
