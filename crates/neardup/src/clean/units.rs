//! Cutting a text into units — paragraphs, lines or sentences — as byte
//! spans of the text, and the key of a unit's normalized text.
//!
//! A unit's span is its text without the whitespace around it; blank
//! stretches are no unit. Sentences end at `.`, `!` or `?` followed by
//! whitespace (with closing quotes and brackets kept in the sentence),
//! at Chinese and full-width `。！？!?；…` (no whitespace needed), and at
//! line breaks.

use std::ops::Range;

use crate::error::Error;

/// What a text is cut into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Stretches between blank lines.
    Paragraph,
    /// Lines.
    Line,
    /// Windows of this many consecutive sentences (datatrove's
    /// `SentenceDedup` spans of 3); a window is what is counted, and the
    /// sentences of a removed window are removed.
    Sentences(usize),
}

impl std::str::FromStr for Unit {
    type Err = Error;
    fn from_str(s: &str) -> Result<Unit, Error> {
        let bad =
            || Error::Config(format!("{s:?}: a unit is paragraph, line or sentences:N (N from 1 to 64)"));
        match s {
            "paragraph" => Ok(Unit::Paragraph),
            "line" => Ok(Unit::Line),
            "sentence" => Ok(Unit::Sentences(1)),
            _ => match s.strip_prefix("sentences:").map(str::parse::<usize>) {
                Some(Ok(n)) if (1..=64).contains(&n) => Ok(Unit::Sentences(n)),
                _ => Err(bad()),
            },
        }
    }
}

impl std::fmt::Display for Unit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unit::Paragraph => f.write_str("paragraph"),
            Unit::Line => f.write_str("line"),
            Unit::Sentences(n) => write!(f, "sentences:{n}"),
        }
    }
}

impl Unit {
    /// How many pieces (paragraphs, lines, sentences) make one counted unit.
    pub fn window(self) -> usize {
        match self {
            Unit::Sentences(n) => n,
            _ => 1,
        }
    }

    /// The pieces of `text`, as byte spans without surrounding whitespace,
    /// in order.
    pub fn pieces(self, text: &str) -> Vec<Range<usize>> {
        match self {
            Unit::Paragraph => paragraphs(text),
            Unit::Line => lines(text),
            Unit::Sentences(_) => sentences(text),
        }
    }
}

/// `range` of `text` without the whitespace at either end (None if blank).
fn trimmed(text: &str, range: Range<usize>) -> Option<Range<usize>> {
    let s = &text[range.clone()];
    let start = range.start + (s.len() - s.trim_start().len());
    let end = range.start + s.trim_end().len();
    (start < end).then_some(start..end)
}

fn lines(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, _) in text.match_indices('\n') {
        out.extend(trimmed(text, start..i));
        start = i + 1;
    }
    out.extend(trimmed(text, start..text.len()));
    out
}

fn paragraphs(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut para_start: Option<usize> = None;
    let mut line_start = 0;
    let mut last_end = 0;
    let bytes = text.len();
    let push_line = |ls: usize,
                     le: usize,
                     out: &mut Vec<Range<usize>>,
                     para_start: &mut Option<usize>,
                     last_end: &mut usize| {
        if text[ls..le].trim().is_empty() {
            if let Some(s) = para_start.take() {
                out.extend(trimmed(text, s..*last_end));
            }
        } else {
            if para_start.is_none() {
                *para_start = Some(ls);
            }
            *last_end = le;
        }
    };
    for (i, _) in text.match_indices('\n') {
        push_line(line_start, i, &mut out, &mut para_start, &mut last_end);
        line_start = i + 1;
    }
    push_line(line_start, bytes, &mut out, &mut para_start, &mut last_end);
    if let Some(s) = para_start {
        out.extend(trimmed(text, s..last_end));
    }
    out
}

/// Whether `c` may close a sentence after its end mark (quotes, brackets).
fn is_closer(c: char) -> bool {
    matches!(c, '"' | '\'' | ')' | ']' | '}' | '”' | '’' | '」' | '』' | '）' | '】' | '》' | '〉')
}

/// The end mark at byte `i` of `b`, if one starts there: its length, and
/// whether it is a Chinese or full-width one.
#[inline]
fn end_mark(b: &[u8], i: usize) -> Option<(usize, bool)> {
    match b[i] {
        b'.' | b'!' | b'?' => Some((1, false)),
        0xE2 | 0xE3 | 0xEF => {
            let m = b.get(i..i + 3)?;
            matches!(
                m,
                [0xE3, 0x80, 0x82]          // 。
                | [0xEF, 0xBC, 0x81]        // ！
                | [0xEF, 0xBC, 0x9F]        // ？
                | [0xEF, 0xBC, 0x9B]        // ；
                | [0xE2, 0x80, 0xA6]        // …
                | [0xEF, 0xBD, 0xA1] // ｡
            )
            .then_some((3, true))
        }
        _ => None,
    }
}

/// The character starting at byte `i` of `text`.
#[inline]
fn char_at(text: &str, i: usize) -> char {
    text[i..].chars().next().expect("a char boundary")
}

fn sentences(text: &str) -> Vec<Range<usize>> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < b.len() {
        let x = b[i];
        if x == b'\n' {
            out.extend(trimmed(text, start..i));
            start = i;
            i += 1;
            continue;
        }
        let Some((len, mut cjk)) = end_mark(b, i) else {
            // Not an end: skip the character (ASCII bytes one by one).
            i += if x < 0x80 { 1 } else { char_at(text, i).len_utf8() };
            continue;
        };
        // The end mark, repeated marks and closers stay in the sentence.
        let mut end = i + len;
        while end < b.len() {
            if let Some((l, c)) = end_mark(b, end) {
                cjk |= c;
                end += l;
                continue;
            }
            let c = if b[end] < 0x80 { b[end] as char } else { char_at(text, end) };
            if !is_closer(c) {
                break;
            }
            end += c.len_utf8();
        }
        i = end;
        let ends = end >= b.len() || cjk || {
            let d = if b[end] < 0x80 { b[end] as char } else { char_at(text, end) };
            d.is_whitespace()
        };
        if ends {
            out.extend(trimmed(text, start..end));
            start = end;
        }
    }
    out.extend(trimmed(text, start..text.len()));
    out
}

/// How many words `text` has, counting up to `at_most`: runs of letters
/// and digits, with every Chinese, Japanese or Korean character a word of
/// its own (as jieba's single characters, kana and Hangul are). A unit
/// with fewer than [`MIN_UNIT_WORDS`] is a heading or a number ("Note",
/// "SYNOPSIS", "跋", "63"), which many documents share without being
/// boilerplate.
pub fn words_up_to(text: &str, at_most: usize) -> usize {
    let mut n = 0;
    let mut in_word = false;
    for c in text.chars() {
        if n >= at_most {
            break;
        }
        if is_cjk(c) {
            n += 1;
            in_word = false;
        } else if c.is_alphanumeric() {
            n += usize::from(!in_word);
            in_word = true;
        } else {
            in_word = false;
        }
    }
    n.min(at_most)
}

/// The fewest words a boilerplate unit has by default ([`words_up_to`]):
/// "Share this page" and "返回顶部" are removed when they repeat, a
/// repeated heading or page number is not.
pub const MIN_UNIT_WORDS: usize = 3;

/// Han ideographs, kana and Hangul syllables: a word each.
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7A3 | 0xF900..=0xFAFF
        | 0x20000..=0x323AF)
}

/// The key of a unit's text: XXH3-128 of it in lower case with every run
/// of whitespace made one space (so a banner counts as one unit however it
/// was wrapped or capitalised).
pub fn unit_key(text: &str) -> u128 {
    thread_local! {
        static BUF: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    BUF.with(|b| {
        let mut out = b.borrow_mut();
        out.clear();
        normalized_into(text, &mut out);
        xxhash_rust::xxh3::xxh3_128(&out)
    })
}

/// `text` in lower case with whitespace runs as one space and none at
/// either end, appended to `out` as UTF-8 (runs of ASCII copied and
/// lower-cased at once, the rest a character at a time).
fn normalized_into(text: &str, out: &mut Vec<u8>) {
    let b = text.as_bytes();
    let mut space = false;
    let mut i = 0;
    while i < b.len() {
        let run =
            b[i..].iter().position(|&x| x >= 0x80 || x.is_ascii_whitespace()).map_or(b.len(), |p| i + p);
        if run > i {
            if space && !out.is_empty() {
                out.push(b' ');
            }
            space = false;
            let at = out.len();
            out.extend_from_slice(&b[i..run]);
            out[at..].make_ascii_lowercase();
            i = run;
            continue;
        }
        if b[i] < 0x80 {
            space = true; // ASCII whitespace
            i += 1;
            continue;
        }
        let c = text[i..].chars().next().expect("a char boundary");
        i += c.len_utf8();
        if c.is_whitespace() {
            space = true;
            continue;
        }
        if space && !out.is_empty() {
            out.push(b' ');
        }
        space = false;
        let mut buf = [0u8; 4];
        if matches!(c as u32, 0x3000..=0x9FFF | 0xAC00..=0xD7FF | 0x20000..=0x3FFFF) {
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes()); // caseless: CJK, kana, Hangul
        } else {
            for l in c.to_lowercase() {
                out.extend_from_slice(l.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The splitter's rule written plainly, a character at a time.
    fn sentences_by_chars(text: &str) -> Vec<Range<usize>> {
        let is_cjk_end = |c: char| matches!(c, '。' | '！' | '？' | '；' | '…' | '｡');
        let mut out = Vec::new();
        let mut start = 0;
        let mut chars = text.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            let end = if c == '\n' {
                Some(i)
            } else if is_cjk_end(c) || matches!(c, '.' | '!' | '?') {
                let mut end = i + c.len_utf8();
                while let Some(&(j, d)) = chars.peek() {
                    if is_closer(d) || is_cjk_end(d) || matches!(d, '.' | '!' | '?') {
                        end = j + d.len_utf8();
                        chars.next();
                    } else {
                        break;
                    }
                }
                let cjk = text[i..end].chars().any(is_cjk_end);
                match chars.peek() {
                    None => Some(end),
                    Some(&(_, d)) if cjk || d.is_whitespace() => Some(end),
                    _ => None,
                }
            } else {
                None
            };
            if let Some(end) = end {
                out.extend(trimmed(text, start..end));
                start = end;
            }
        }
        out.extend(trimmed(text, start..text.len()));
        out
    }

    proptest! {
        /// The byte-wise splitter cuts where the plain rule does.
        #[test]
        fn sentences_follow_the_rule(t in "[a. !?\n\"”)。！？；…｡\u{3000}好é]{0,40}") {
            prop_assert_eq!(sentences(&t), sentences_by_chars(&t));
        }
    }

    fn texts(unit: Unit, t: &str) -> Vec<&str> {
        unit.pieces(t).into_iter().map(|r| &t[r]).collect()
    }

    #[test]
    fn paragraphs_lines_and_sentences() {
        let t = "  First para line one.\nline two!\n\n \n Second para. Has two sentences? Yes.\n";
        assert_eq!(
            texts(Unit::Paragraph, t),
            ["First para line one.\nline two!", "Second para. Has two sentences? Yes."]
        );
        assert_eq!(
            texts(Unit::Line, t),
            ["First para line one.", "line two!", "Second para. Has two sentences? Yes."]
        );
        assert_eq!(
            texts(Unit::Sentences(1), t),
            ["First para line one.", "line two!", "Second para.", "Has two sentences?", "Yes."]
        );
        assert_eq!(
            texts(Unit::Sentences(1), "He said \"stop.\" Then 3.14 is pi"),
            ["He said \"stop.\"", "Then 3.14 is pi"]
        );
    }

    #[test]
    fn chinese_sentences_end_at_full_width_marks() {
        let t = "转载请注明出处。今天天气很好！你去吗？好的……走吧";
        assert_eq!(
            texts(Unit::Sentences(1), t),
            ["转载请注明出处。", "今天天气很好！", "你去吗？", "好的……", "走吧"]
        );
        assert_eq!(texts(Unit::Sentences(1), "他说：“好。”然后走了。"), ["他说：“好。”", "然后走了。"]);
    }

    #[test]
    fn normalized_text() {
        let mut out = Vec::new();
        normalized_into("  Accept\tALL \n cookies　今天 ÉCOLE ", &mut out);
        assert_eq!(String::from_utf8(out).unwrap(), "accept all cookies 今天 école");
    }

    #[test]
    fn keys_ignore_case_and_spacing() {
        assert_eq!(unit_key("Accept  all\ncookies"), unit_key("accept all cookies"));
        assert_ne!(unit_key("accept all cookies"), unit_key("accept all cookie"));
        assert_eq!(unit_key("ÉCOLE"), unit_key("école"));
    }

    #[test]
    fn units_parse_and_print() {
        for s in ["paragraph", "line", "sentences:3"] {
            assert_eq!(s.parse::<Unit>().unwrap().to_string(), s);
        }
        assert!("sentences:0".parse::<Unit>().is_err());
        assert!("words".parse::<Unit>().is_err());
    }
}
