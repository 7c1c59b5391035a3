//! The `words` tokenizer: words in mixed Chinese, Japanese, Korean and
//! space-delimited text.

use unicode_segmentation::UnicodeSegmentation;

use super::ascii::ascii_words_into as ascii_words;
use super::script::{script_of, Script};
use super::{TokenSink, Tokenizer};
use crate::scan::{ideograph_at, Window};

/// Words in any script; see
/// [`TokenizerConfig::Words`](super::TokenizerConfig::Words).
#[derive(Clone, Copy, Debug, Default)]
pub struct Words {
    /// Use jieba's HMM for words its dictionary does not know.
    pub hmm: bool,
    /// Runs of Han characters as jieba's words, or one token per character.
    pub han: super::HanSplit,
}

impl Tokenizer for Words {
    fn tokenize<'t>(&self, text: &'t str, out: &mut Vec<&'t str>) {
        self.tokens_into(text, out);
    }
}

impl Words {
    /// [`Tokenizer::tokenize`] into any [`TokenSink`].
    pub(crate) fn tokens_into<'t>(&self, text: &'t str, out: &mut impl TokenSink<'t>) {
        if text.is_ascii() {
            ascii_words(text, out);
            return;
        }
        let bytes = text.as_bytes();
        let level = crate::simd::level();
        let mut start = 0;
        let mut cur = Script::Other;
        let mut i = 0;
        while i < bytes.len() {
            // Whole stretches of ASCII and of ideographs in one step where
            // 65 bytes are left (the window is built only for those two
            // kinds); byte by byte or character by character near the end.
            // ASCII is always `Other`: skipped without decoding.
            if bytes[i] < 0x80 {
                if cur != Script::Other {
                    self.run(&text[start..i], cur, out);
                    start = i;
                    cur = Script::Other;
                }
                i += Window::at(bytes, i, level).map_or(1, Window::ascii_run);
                continue;
            }
            // Ideographs on their lead byte, the rest decoded.
            let (s, len) = if ideograph_at(bytes, i) {
                let n = Window::at(bytes, i, level).map_or(1, Window::ideographs);
                if self.han == super::HanSplit::Chars {
                    // A token each, as they come: no run to walk again.
                    self.run(&text[start..i], cur, out);
                    for k in 0..n {
                        out.push(&text[i + 3 * k..i + 3 * k + 3]);
                    }
                    i += 3 * n;
                    start = i;
                    cur = Script::Other;
                    continue;
                }
                (Script::Han, 3 * n)
            } else {
                let c = text[i..].chars().next().expect("i is a char boundary");
                (script_of(c), c.len_utf8())
            };
            if s != cur {
                self.run(&text[start..i], cur, out);
                start = i;
                cur = s;
            }
            i += len;
        }
        self.run(&text[start..], cur, out);
    }

    fn run<'t>(&self, run: &'t str, script: Script, out: &mut impl TokenSink<'t>) {
        if run.is_empty() {
            return;
        }
        match script {
            Script::Other if run.is_ascii() => ascii_words(run, out),
            // UAX #29 keeps only words with a letter or digit: a run of
            // punctuation (most runs between Chinese words) has none.
            Script::Other if !run.chars().any(may_be_alphanumeric) => {}
            Script::Other => other_words(run, out),
            Script::Han => match self.han {
                super::HanSplit::Jieba => out.cut_han(run, self.hmm),
                super::HanSplit::Chars => {
                    for (i, c) in run.char_indices() {
                        out.push(&run[i..i + c.len_utf8()]);
                    }
                }
            },
            Script::Kana | Script::Hangul => bigrams(run, out),
        }
    }
}

/// Whether `c` may be a letter or a digit: false without a table lookup
/// for the punctuation and symbols of Chinese text (general punctuation,
/// CJK marks and brackets, full-width punctuation); a test checks them.
#[inline]
fn may_be_alphanumeric(c: char) -> bool {
    match c as u32 {
        0x2010..=0x205E
        | 0x3001..=0x3004
        | 0x3008..=0x3020
        | 0x3030
        | 0xFF01..=0xFF0F
        | 0xFF1A..=0xFF20
        | 0xFF3B..=0xFF40
        | 0xFF5B..=0xFF65 => false,
        _ => c.is_alphanumeric(),
    }
}

/// UAX #29 words of a run with some non-ASCII characters. UAX #29 never
/// joins a word across whitespace, so the run is cut at ASCII whitespace
/// and the pieces that are pure ASCII take the fast path; a property test
/// checks that this gives exactly `unicode_words`.
fn other_words<'t>(run: &'t str, out: &mut impl TokenSink<'t>) {
    let bytes = run.as_bytes();
    // Text before `ascii_from` is done; pure-ASCII stretches between
    // non-ASCII pieces are tokenized together, in one call.
    let mut ascii_from = 0;
    while let Some(p) = bytes[ascii_from..].iter().position(|&b| b >= 0x80) {
        let p = ascii_from + p;
        // The piece holding byte p: from after the previous ASCII whitespace
        // to the end of the next ASCII whitespace run.
        let start = bytes[ascii_from..p]
            .iter()
            .rposition(u8::is_ascii_whitespace)
            .map_or(ascii_from, |w| ascii_from + w + 1);
        let mut end = p;
        while end < bytes.len() && !bytes[end].is_ascii_whitespace() {
            end += 1;
        }
        while end < bytes.len() && bytes[end].is_ascii_whitespace() {
            end += 1;
        }
        ascii_words(&run[ascii_from..start], out);
        for w in run[start..end].unicode_words() {
            out.push(w);
        }
        ascii_from = end;
    }
    ascii_words(&run[ascii_from..], out);
}

/// Overlapping character bigrams; a one-character run is itself.
fn bigrams<'t>(run: &'t str, out: &mut impl TokenSink<'t>) {
    let starts: Vec<usize> = run.char_indices().map(|(i, _)| i).chain(std::iter::once(run.len())).collect();
    if starts.len() <= 3 {
        out.push(run);
        return;
    }
    for w in starts.windows(3) {
        out.push(&run[w[0]..w[2]]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<&str> {
        let mut v = Vec::new();
        Words { hmm: false, han: super::super::HanSplit::Jieba }.tokenize(s, &mut v);
        v
    }

    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn latin_text_gives_unicode_words(s in "([a-zA-Z0-9_.,:;' \t\n-]|é|ß|Σ|ǅ|’|\u{301}|\u{200d}|\u{a0}|\u{2028}|½|٣|😀|🇫🇷){0,40}") {
            let mut got = Vec::new();
            other_words(&s, &mut got);
            let want: Vec<&str> = s.unicode_words().collect();
            prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn punctuation_shortcut_matches_the_tables() {
        for c in (0..0x11_0000u32).filter_map(char::from_u32) {
            if !may_be_alphanumeric(c) {
                assert!(!c.is_alphanumeric(), "{c:?}");
                assert_eq!(c.to_string().unicode_words().count(), 0, "{c:?}");
            }
        }
        assert_eq!(words("“你好”——《书》"), ["你好", "书"]);
    }

    #[test]
    fn lead_byte_shortcut_matches_script_of() {
        for c in ('\u{4000}'..='\u{9FFF}').filter(|c| !('\u{4DC0}'..='\u{4DFF}').contains(c)) {
            assert_eq!(script_of(c), Script::Han, "{c:?}");
        }
        assert_eq!(words("䷀中"), ["中"]);
    }

    #[test]
    fn mixed_scripts() {
        assert_eq!(words("我们使用Rust编写neardup工具"), ["我们", "使用", "Rust", "编写", "neardup", "工具"]);
        assert_eq!(words("2024年，café au lait。"), ["2024", "年", "café", "au", "lait"]);
        assert_eq!(words("ひらがな"), ["ひら", "らが", "がな"]);
        assert_eq!(words("한국어 텍스트"), ["한국", "국어", "텍스", "스트"]);
        assert_eq!(words("の"), ["の"]);
        assert_eq!(words("Hello, world!"), ["Hello", "world"]);
    }

    /// `han = "chars"`: each Han character is a token, and nothing else
    /// changes; a configuration without `han` reads and writes as before
    /// (so every existing configuration keeps its id).
    #[test]
    fn han_as_characters() {
        let chars = |s| {
            let mut v = Vec::new();
            Words { hmm: false, han: super::super::HanSplit::Chars }.tokenize(s, &mut v);
            v
        };
        assert_eq!(
            chars("我们使用Rust编写neardup工具"),
            ["我", "们", "使", "用", "Rust", "编", "写", "neardup", "工", "具"]
        );
        assert_eq!(chars("2024年，café 𠀋字。"), ["2024", "年", "café", "𠀋", "字"]);
        assert_eq!(chars("ひらがな Hello"), words("ひらがな Hello"));
        use super::super::TokenizerConfig;
        let plain: TokenizerConfig = toml::from_str("type = \"words\"\nhmm = false\n").unwrap();
        assert_eq!(toml::to_string(&plain).unwrap(), "type = \"words\"\nhmm = false\n");
        let by_chars: TokenizerConfig = toml::from_str("type = \"words\"\nhan = \"chars\"\n").unwrap();
        assert_eq!(by_chars, TokenizerConfig::Words { hmm: false, han: super::super::HanSplit::Chars });
        assert!(toml::to_string(&by_chars).unwrap().contains("han = \"chars\""));
        assert!(toml::from_str::<TokenizerConfig>("type = \"words\"\nhan = \"bytes\"\n").is_err());
    }
}
