//! Stage 3, filter ("降噪"): drop tokens that carry no signal.

use rustc_hash::FxHashSet as HashSet;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::normalize::is_punctuation_or_symbol;
use crate::scan::ideograph_at;

/// Decides which tokens to keep.
pub trait TokenFilter: Send + Sync + fmt::Debug {
    /// Whether `token` is kept.
    fn keep(&self, token: &str) -> bool;
}

/// The built-in filters, as they appear in a configuration:
/// `filters = [{ type = "punctuation" }, { type = "stopwords", lists = ["en"] }]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
#[non_exhaustive]
pub enum FilterConfig {
    /// Drop tokens made only of punctuation, symbols and whitespace.
    Punctuation,
    /// Drop stop words: built-in lists by name and user files (one word
    /// per line, UTF-8; blank lines are ignored). Matching is exact, so
    /// normalize (lower-case) first.
    Stopwords {
        /// Built-in lists: `en` (the Glasgow list of 318 English words, as
        /// in scikit-learn), `zh` (the Chinese words of cppjieba's list),
        /// `cppjieba` (cppjieba's whole list, 1,534 lines: Chinese, English
        /// and punctuation), `jieba` (the 31 English words that
        /// `jieba.analyse` drops). By default, this is empty.
        #[serde(default)]
        lists: Vec<String>,
        /// User files, relative to the configuration file's folder when
        /// loaded from one. By default, this is empty.
        #[serde(default)]
        files: Vec<PathBuf>,
    },
    /// Drop tokens shorter than `min` characters (Unicode scalar values).
    MinChars {
        /// The shortest token kept.
        min: usize,
    },
}

/// The names of the built-in stop-word lists.
pub const STOPWORD_LISTS: [&str; 4] = ["en", "zh", "cppjieba", "jieba"];

fn builtin_list(name: &str) -> Option<&'static str> {
    Some(match name {
        "en" => include_str!("../data/stopwords/en.txt"),
        "zh" => include_str!("../data/stopwords/zh.txt"),
        "cppjieba" => include_str!("../data/stopwords/cppjieba.txt"),
        "jieba" => JIEBA_STOP_WORDS,
        _ => return None,
    })
}

/// jieba's `STOP_WORDS` (jieba.analyse and jieba-rs).
const JIEBA_STOP_WORDS: &str =
    "the\nof\nis\nand\nto\nin\nthat\nwe\nfor\nan\nare\nby\nbe\nas\non\nwith\ncan\nif\n\
from\nwhich\nyou\nit\nthis\nthen\nat\nhave\nall\nnot\none\nhas\nor\n";

/// A set of stop words.
#[derive(Clone, Debug, Default)]
pub struct Stopwords {
    words: Arc<HashSet<String>>,
    /// The first bytes of the words, a bit each: most tokens start with a
    /// byte no stop word does (jieba's list is English, most tokens of
    /// Chinese text start with an ideograph's lead byte) and are kept
    /// without hashing them.
    first: [u64; 4],
}

impl Stopwords {
    /// Loads the named built-in lists and the files; relative file paths
    /// are resolved against `base`.
    ///
    /// # Errors
    ///
    /// An unknown list name, or a file that cannot be read or is not UTF-8.
    pub fn load(lists: &[String], files: &[PathBuf], base: Option<&Path>) -> Result<Stopwords> {
        let mut words = HashSet::default();
        for name in lists {
            let text = builtin_list(name).ok_or_else(|| {
                Error::Config(format!(
                    "unknown stop-word list {name:?}; the built-in lists are {}; use `files` for your own",
                    STOPWORD_LISTS.join(", ")
                ))
            })?;
            // cppjieba compares whole lines, spaces included; so do we.
            words.extend(text.lines().filter(|l| !l.is_empty()).map(str::to_owned));
        }
        for file in files {
            let path = match base {
                Some(b) if file.is_relative() => b.join(file),
                _ => file.clone(),
            };
            let bytes = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
            let text = String::from_utf8(bytes).map_err(|e| {
                Error::io(
                    &path,
                    std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!("stop-word file is not UTF-8 ({e}); convert it to UTF-8"),
                    ),
                )
            })?;
            words.extend(text.lines().map(str::trim).filter(|l| !l.is_empty()).map(str::to_owned));
        }
        let mut first = [0u64; 4];
        for w in &words {
            if let Some(&b) = w.as_bytes().first() {
                first[usize::from(b >> 6)] |= 1 << (b & 63);
            }
        }
        Ok(Stopwords { words: Arc::new(words), first })
    }

    /// How many words the set holds.
    pub fn len(&self) -> usize {
        self.words.len()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// Whether `word` is a stop word.
    #[inline]
    pub fn contains(&self, word: &str) -> bool {
        match word.as_bytes().first() {
            Some(&b) if self.first[usize::from(b >> 6)] >> (b & 63) & 1 == 0 => false,
            _ => self.words.contains(word),
        }
    }
}

impl TokenFilter for Stopwords {
    #[inline]
    fn keep(&self, token: &str) -> bool {
        !self.contains(token)
    }
}

/// Drops tokens made only of punctuation, symbols and whitespace.
#[derive(Clone, Copy, Debug, Default)]
pub struct Punctuation;

impl TokenFilter for Punctuation {
    #[inline]
    fn keep(&self, token: &str) -> bool {
        // Most tokens start with an ASCII letter or digit or a CJK
        // ideograph (a letter): decide on the first bytes.
        let b = token.as_bytes();
        if b.first().is_some_and(u8::is_ascii_alphanumeric) || (!b.is_empty() && ideograph_at(b, 0)) {
            return true;
        }
        !token.chars().all(|c| c.is_whitespace() || is_punctuation_or_symbol(c))
    }
}

/// The length in bytes of the UTF-8 character whose lead byte is `b`.
#[inline(always)]
fn utf8_len(b: u8) -> usize {
    match b {
        0..=0x7F => 1,
        0x80..=0xDF => 2,
        0xE0..=0xEF => 3,
        _ => 4,
    }
}

/// Drops tokens shorter than `min` characters.
#[derive(Clone, Copy, Debug, Default)]
pub struct MinChars {
    /// The shortest token kept.
    pub min: usize,
}

impl TokenFilter for MinChars {
    #[inline]
    fn keep(&self, token: &str) -> bool {
        // A character has at most four bytes, so a long token is long
        // enough; a shorter one is when `min` characters can be stepped
        // over by their lead bytes.
        let n = token.len();
        if n >= 4 * self.min {
            return true;
        }
        let b = token.as_bytes();
        let mut at = 0;
        for _ in 0..self.min {
            if at >= n {
                return false;
            }
            at += utf8_len(b[at]);
        }
        true
    }
}

/// A pipeline's filters, loaded and merged into one test: every filter is
/// a predicate and a token is kept when all keep it, so their order does
/// not change the answer. Stop-word sets are united into one, `MinChars`
/// keeps the largest minimum, and the test runs cheapest first (length,
/// first byte, then the set) as one inlined function, not a loop over
/// boxed filters.
#[derive(Clone, Debug, Default)]
pub(crate) struct Filters {
    /// Whether punctuation-only tokens are dropped.
    punctuation: bool,
    /// The fewest characters a kept token has (0: no minimum).
    min_chars: usize,
    /// The united stop words, if any filter lists some.
    stopwords: Option<Stopwords>,
}

impl Filters {
    /// Loads the filters of a configuration; file paths in it are used as
    /// they are ([`PipelineConfig::load`](crate::PipelineConfig::load)
    /// makes them absolute).
    pub(crate) fn load(configs: &[FilterConfig]) -> Result<Filters> {
        let mut f = Filters::default();
        let (mut lists, mut files) = (Vec::new(), Vec::new());
        let mut stop = false;
        for config in configs {
            match config {
                FilterConfig::Punctuation => f.punctuation = true,
                FilterConfig::MinChars { min } => f.min_chars = f.min_chars.max(*min),
                FilterConfig::Stopwords { lists: l, files: fs } => {
                    stop = true;
                    lists.extend(l.iter().cloned());
                    files.extend(fs.iter().cloned());
                }
            }
        }
        if stop {
            f.stopwords = Some(Stopwords::load(&lists, &files, None)?);
        }
        Ok(f)
    }
}

impl TokenFilter for Filters {
    #[inline(always)]
    fn keep(&self, token: &str) -> bool {
        (self.min_chars == 0 || MinChars { min: self.min_chars }.keep(token))
            && (!self.punctuation || Punctuation.keep(token))
            && self.stopwords.as_ref().is_none_or(|s| s.keep(token))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_lists_load() {
        for name in STOPWORD_LISTS {
            let s = Stopwords::load(&[name.to_string()], &[], None).unwrap();
            assert!(s.len() > 20, "{name}");
        }
        let en = Stopwords::load(&["en".into()], &[], None).unwrap();
        assert!(en.contains("the") && !en.contains("fox"));
        let zh = Stopwords::load(&["zh".into()], &[], None).unwrap();
        assert!(zh.contains("的") && !zh.contains("the"));
        let err = Stopwords::load(&["klingon".into()], &[], None).unwrap_err().to_string();
        assert!(err.contains("klingon") && err.contains("en, zh"), "{err}");
    }

    proptest::proptest! {
        /// The first-byte shortcut answers as the set does: every listed
        /// word is found, and any other token as the set says.
        #[test]
        fn stopword_lookup_equals_the_set(token in "(\\PC{0,4}|[a-z的了是在]{1,4})") {
            for name in STOPWORD_LISTS {
                let s = Stopwords::load(&[name.to_string()], &[], None).unwrap();
                proptest::prop_assert_eq!(s.contains(&token), s.words.contains(token.as_str()));
                for w in s.words.iter() {
                    proptest::prop_assert!(s.contains(w), "{}", w);
                }
            }
        }
    }

    proptest::proptest! {
        /// The merged filters keep what every filter alone keeps, and
        /// `MinChars` counts characters as `chars` does.
        #[test]
        fn merged_filters_equal_each_filter(
            token in "(\\PC{0,6}|[a-z的了是在，。!-]{0,5})",
            min in 0usize..5,
            punctuation: bool,
            lists in proptest::sample::subsequence(STOPWORD_LISTS.to_vec(), 0..=2),
        ) {
            let mut configs = vec![FilterConfig::MinChars { min }];
            if punctuation {
                configs.push(FilterConfig::Punctuation);
            }
            for l in &lists {
                configs.push(FilterConfig::Stopwords { lists: vec![l.to_string()], files: vec![] });
            }
            let merged = Filters::load(&configs).unwrap();
            let each = token.chars().count() >= min
                && (!punctuation || !token.chars().all(|c| c.is_whitespace() || is_punctuation_or_symbol(c)))
                && lists.iter().all(|l| !Stopwords::load(&[l.to_string()], &[], None).unwrap().contains(&token));
            proptest::prop_assert_eq!(merged.keep(&token), each);
            proptest::prop_assert_eq!(MinChars { min }.keep(&token), token.chars().count() >= min);
        }
    }

    #[test]
    fn no_filters_keep_everything() {
        let none = Filters::load(&[]).unwrap();
        assert!(none.keep("") && none.keep("，"));
    }

    #[test]
    fn ideographs_are_never_punctuation() {
        // The first-byte shortcut of `Punctuation::keep` matches the tables.
        for c in ('\u{4000}'..='\u{9FFF}').filter(|c| !('\u{4DC0}'..='\u{4DFF}').contains(c)) {
            assert!(!crate::normalize::is_punctuation_or_symbol(c), "{c:?}");
        }
        assert!(!Punctuation.keep("\u{4DC0}"));
    }

    #[test]
    fn simple_filters() {
        assert!(!Punctuation.keep("，。"));
        assert!(!Punctuation.keep("--"));
        assert!(Punctuation.keep("a-b"));
        assert!(!MinChars { min: 2 }.keep("中"));
        assert!(MinChars { min: 2 }.keep("中国"));
        assert!(!MinChars { min: 2 }.keep("a"));
    }
}
