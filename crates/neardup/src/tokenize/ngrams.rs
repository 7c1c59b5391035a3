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
        let before = out.len();
        for_each_char_window(text, n, |w| out.push(w));
        if out.len() == before && self.short == ShortText::Whole {
            out.push(text);
        }
    }
}

/// Calls `f` with every window of `n` consecutive characters of `text`, in
/// order; none if `text` has fewer than `n` characters, or if `n` is 0.
pub(crate) fn for_each_char_window<'t>(text: &'t str, n: usize, mut f: impl FnMut(&'t str)) {
    if n == 0 {
        return;
    }
    // Byte offsets of the last character starts, in a ring whose size is a
    // power of two above n.
    let size = (n + 1).next_power_of_two();
    let mut starts = vec![0usize; size];
    let mut seen = 0usize;
    for (i, _) in text.char_indices() {
        if seen >= n {
            f(&text[starts[(seen - n) & (size - 1)]..i]);
        }
        starts[seen & (size - 1)] = i;
        seen += 1;
    }
    if seen >= n {
        f(&text[starts[(seen - n) & (size - 1)]..]);
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

    proptest::proptest! {
        #[test]
        fn char_windows_are_consecutive_characters(text in "(\\PC|[a-z]){0,40}", n in 1usize..9) {
            let chars: Vec<char> = text.chars().collect();
            let want: Vec<String> = chars.windows(n).map(|w| w.iter().collect()).collect();
            let mut got = Vec::new();
            for_each_char_window(&text, n, |w| got.push(w.to_owned()));
            proptest::prop_assert_eq!(got, want);
        }
    }
}
