//! The `words` tokenizer: words in mixed Chinese, Japanese, Korean and
//! space-delimited text.

use unicode_segmentation::UnicodeSegmentation;

use super::ascii::ascii_words;
use super::jieba::cut_han;
use super::script::{script_of, Script};
use super::Tokenizer;

/// Words in any script; see
/// [`TokenizerConfig::Words`](super::TokenizerConfig::Words).
#[derive(Clone, Copy, Debug, Default)]
pub struct Words {
    /// Use jieba's HMM for words its dictionary does not know.
    pub hmm: bool,
}

impl Tokenizer for Words {
    fn tokenize<'t>(&self, text: &'t str, out: &mut Vec<&'t str>) {
        if text.is_ascii() {
            ascii_words(text, out);
            return;
        }
        let mut start = 0;
        let mut cur = Script::Other;
        for (i, c) in text.char_indices() {
            let s = script_of(c);
            if s != cur {
                self.run(&text[start..i], cur, out);
                start = i;
                cur = s;
            }
        }
        self.run(&text[start..], cur, out);
    }
}

impl Words {
    fn run<'t>(&self, run: &'t str, script: Script, out: &mut Vec<&'t str>) {
        if run.is_empty() {
            return;
        }
        match script {
            Script::Other if run.is_ascii() => ascii_words(run, out),
            Script::Other => out.extend(run.unicode_words()),
            Script::Han => cut_han(run, self.hmm, out),
            Script::Kana | Script::Hangul => bigrams(run, out),
        }
    }
}

/// Overlapping character bigrams; a one-character run is itself.
fn bigrams<'t>(run: &'t str, out: &mut Vec<&'t str>) {
    let starts: Vec<usize> = run.char_indices().map(|(i, _)| i).chain(std::iter::once(run.len())).collect();
    if starts.len() <= 3 {
        out.push(run);
        return;
    }
    out.extend(starts.windows(3).map(|w| &run[w[0]..w[2]]));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<&str> {
        let mut v = Vec::new();
        Words { hmm: false }.tokenize(s, &mut v);
        v
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
}
