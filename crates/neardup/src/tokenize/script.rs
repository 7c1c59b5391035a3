//! Which tokenization rule a character falls under.

/// The script classes the `words` tokenizer treats differently.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Script {
    /// Han ideographs (Chinese characters, kanji, hanja): segmented by jieba.
    Han,
    /// Japanese hiragana and katakana: character bigrams.
    Kana,
    /// Korean Hangul: character bigrams.
    Hangul,
    /// Everything else: Unicode word boundaries.
    Other,
}

/// The class of `c`.
#[inline]
pub fn script_of(c: char) -> Script {
    let u = c as u32;
    if u < 0x3000 {
        if (0x1100..=0x11FF).contains(&u) {
            return Script::Hangul;
        }
        return Script::Other;
    }
    match u {
        0x3005 | 0x3007 | 0x3021..=0x3029 | 0x3038..=0x303B => Script::Han,
        0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x323AF => Script::Han,
        // Not ゛゜ (U+309B/C, symbols), ゠ (U+30A0) or ・ (U+30FB), which are punctuation.
        0x3041..=0x309A
        | 0x309D..=0x309F
        | 0x30A1..=0x30FA
        | 0x30FC..=0x30FF
        | 0x31F0..=0x31FF
        | 0xFF66..=0xFF9F
        | 0x1B000..=0x1B16F => Script::Kana,
        0xAC00..=0xD7A3 | 0x3130..=0x318F | 0xA960..=0xA97F | 0xD7B0..=0xD7FF | 0xFFA0..=0xFFDC => {
            Script::Hangul
        }
        _ => Script::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes() {
        assert_eq!(script_of('中'), Script::Han);
        assert_eq!(script_of('〇'), Script::Han);
        assert_eq!(script_of('𠀀'), Script::Han);
        assert_eq!(script_of('の'), Script::Kana);
        assert_eq!(script_of('カ'), Script::Kana);
        assert_eq!(script_of('ー'), Script::Kana);
        assert_eq!(script_of('・'), Script::Other);
        assert_eq!(script_of('゛'), Script::Other);
        assert_eq!(script_of('한'), Script::Hangul);
        assert_eq!(script_of('a'), Script::Other);
        assert_eq!(script_of('。'), Script::Other);
        assert_eq!(script_of('é'), Script::Other);
    }
}
