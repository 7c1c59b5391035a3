//! Sentences: byte ranges of a text by Chinese and English rules.

use std::ops::Range;

/// Characters that end a sentence wherever they appear.
pub(super) fn is_hard_stop(c: char) -> bool {
    matches!(c, '。' | '！' | '？' | '；' | '…' | '．' | '｡')
}

/// Whether the line break at byte `i` ends a sentence. A blank line always
/// does; a single line break does unless it looks like hard wrapping inside
/// a sentence: a letter, digit, comma-like mark or ideograph before it and a
/// lower-case letter or ideograph after it.
pub(super) fn line_break_ends(text: &str, i: usize) -> bool {
    let after = text[i + 1..].trim_start_matches([' ', '\t', '\r', '\u{3000}']);
    let Some(next) = after.chars().next() else { return true };
    if next == '\n' {
        return true;
    }
    let before = text[..i].trim_end_matches([' ', '\t', '\r', '\u{3000}']);
    let Some(prev) = before.chars().next_back() else { return true };
    let continues_from = prev.is_alphanumeric()
        || matches!(prev, ',' | ';' | ':' | '-' | '–' | '—' | '(' | '，' | '、' | '：' | '（');
    let continues_to = next.is_lowercase() || (is_cjk(next) && next.is_alphanumeric());
    !(continues_from && continues_to)
}

/// Characters that close a sentence after its stop: quotes and brackets.
pub(super) fn is_closer(c: char) -> bool {
    matches!(c, '"' | '\'' | ')' | ']' | '）' | '】' | '」' | '』' | '》' | '〉' | '”' | '’' | '»')
}

/// Words whose trailing period does not end a sentence.
pub(super) const ABBREVIATIONS: &[&str] = &[
    "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "vs", "etc", "e.g", "i.e", "cf", "no", "fig", "al",
    "inc", "ltd", "co", "corp", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov",
    "dec", "u.s", "a.m", "p.m", "approx", "dept", "est", "vol", "pp",
];

/// Whether the `!` or `?` at byte `i` ends a sentence: followed by
/// whitespace, the end, a closer or a CJK character (not `<!--`, `?x=1`).
pub(super) fn mark_ends(text: &str, i: usize) -> bool {
    let next = text[i + 1..].trim_start_matches(|c| is_closer(c) || c == '!' || c == '?').chars().next();
    next.is_none_or(|c| c.is_whitespace() || is_cjk(c))
}

/// Whether the `.` at byte `i` of `text` ends a sentence: it must be
/// followed by whitespace, the end, or a CJK character, and not end an
/// abbreviation or an initial ("J. Smith").
pub(super) fn period_ends(text: &str, i: usize) -> bool {
    let after = &text[i + 1..];
    let next = after.trim_start_matches(is_closer).chars().next();
    match next {
        None => return true,
        Some(c) if c.is_whitespace() || is_cjk(c) => {}
        Some(_) => return false,
    }
    // The word before the period: at most a few characters back (the
    // abbreviations are short), so this stays linear on any input.
    let mut word_start = i;
    for (j, c) in text[..i].char_indices().rev().take(8) {
        if c.is_whitespace() || is_closer(c) || c == '(' {
            break;
        }
        word_start = j;
    }
    let word = &text[word_start..i];
    if word.chars().count() == 1 && word.chars().all(char::is_uppercase) {
        return false; // an initial
    }
    let lower = word.to_lowercase();
    !ABBREVIATIONS.contains(&lower.as_str())
}

pub(super) fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3000..=0x303F | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0xFF00..=0xFFEF)
}

/// The sentences of `text` as byte ranges, in order, trimmed of
/// whitespace; empty ones are left out.
///
/// A sentence ends at `。！？；…!?`, a blank line, a line break that does
/// not look like hard wrapping inside a sentence, or a `.` followed by
/// whitespace (not after an abbreviation such as "Dr." or an initial),
/// together with the quotes and brackets that close it; sentences longer
/// than `max_chars` characters are cut at the last space before the limit
/// (or at the limit). Offsets always fall on character boundaries.
pub fn sentences(text: &str, max_chars: usize) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut iter = text.char_indices().peekable();
    while let Some((i, c)) = iter.next() {
        let stop = is_hard_stop(c)
            || (c == '.' && period_ends(text, i))
            || (matches!(c, '!' | '?') && mark_ends(text, i))
            || (c == '\n' && line_break_ends(text, i));
        if !stop {
            continue;
        }
        let mut end = i + c.len_utf8();
        // Runs of stops ("?!", "……") and the closers after them (not after a
        // line break, where a quote opens the next sentence; an ASCII quote
        // closes only when followed by a space, a stop or the end).
        while let Some(&(j, d)) = iter.peek() {
            let closes = is_closer(d)
                && c != '\n'
                && (!matches!(d, '"' | '\'')
                    || text[j + 1..]
                        .chars()
                        .next()
                        .is_none_or(|x| x.is_whitespace() || is_hard_stop(x) || is_closer(x)));
            if (c != '\n' && (is_hard_stop(d) || matches!(d, '.' | '!' | '?'))) || closes {
                end = j + d.len_utf8();
                iter.next();
            } else {
                break;
            }
        }
        push_sentence(text, start..end, max_chars.max(1), &mut out);
        start = end;
    }
    push_sentence(text, start..text.len(), max_chars.max(1), &mut out);
    out
}

/// Trims a range and cuts it into pieces of at most `max_chars` characters.
pub(super) fn push_sentence(text: &str, r: Range<usize>, max_chars: usize, out: &mut Vec<Range<usize>>) {
    let s = &text[r.clone()];
    let lead = s.len() - s.trim_start().len();
    let trimmed = s.trim();
    if trimmed.is_empty() {
        return;
    }
    let mut start = r.start + lead;
    let end = start + trimmed.len();
    loop {
        let rest = &text[start..end];
        let Some((cut, _)) = rest.char_indices().nth(max_chars) else {
            out.push(start..end);
            return;
        };
        let at = rest[..cut].rfind(char::is_whitespace).filter(|&p| p > 0).unwrap_or(cut);
        let piece = &rest[..at];
        out.push(start..start + piece.trim_end().len());
        let next = &rest[at..];
        start += at + (next.len() - next.trim_start().len());
    }
}
