//! Overlapping character n-grams.

use super::{ShortText, Tokenizer};

/// Overlapping `n`-character grams; see
/// [`TokenizerConfig::CharNgrams`](super::TokenizerConfig::CharNgrams).
#[derive(Clone, Copy, Debug)]
pub struct CharNgrams {
    /// Characters per gram.
    pub n: usize,
    /// What a text shorter than `n` characters gives.
    pub short: ShortText,
}

impl Tokenizer for CharNgrams {
    fn tokenize<'t>(&self, text: &'t str, out: &mut Vec<&'t str>) {
        let n = self.n.max(1);
        if text.is_ascii() {
            let len = text.len();
            if len < n {
                if self.short == ShortText::Whole {
                    out.push(text);
                }
                return;
            }
            out.extend((0..=len - n).map(|i| &text[i..i + n]));
            return;
        }
        // Byte offsets of the last n + 1 character starts, in a ring.
        let mut starts = std::collections::VecDeque::with_capacity(n + 1);
        let before = out.len();
        for (i, _) in text.char_indices() {
            starts.push_back(i);
            if starts.len() > n {
                let s = starts.pop_front().expect("non-empty");
                out.push(&text[s..i]);
            }
        }
        if starts.len() == n {
            out.push(&text[starts[0]..]);
        }
        if out.len() == before && self.short == ShortText::Whole {
            out.push(text);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grams(n: usize, short: ShortText, s: &str) -> Vec<&str> {
        let mut v = Vec::new();
        CharNgrams { n, short }.tokenize(s, &mut v);
        v
    }

    #[test]
    fn ascii_and_unicode_agree_on_shape() {
        assert_eq!(grams(2, ShortText::Skip, "abcd"), ["ab", "bc", "cd"]);
        assert_eq!(grams(2, ShortText::Skip, "你好世界"), ["你好", "好世", "世界"]);
        assert_eq!(grams(4, ShortText::Skip, "你好"), Vec::<&str>::new());
        assert_eq!(grams(4, ShortText::Whole, "你好"), ["你好"]);
        assert_eq!(grams(4, ShortText::Whole, ""), [""]);
        assert_eq!(grams(4, ShortText::Whole, "abcd"), ["abcd"]);
        assert_eq!(grams(1, ShortText::Skip, "aé"), ["a", "é"]);
    }
}
