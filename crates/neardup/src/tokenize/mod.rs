//! Stage 2, tokenize: split normalized text into tokens.
//!
//! Tokenizers never fail and never copy: every token is a slice of the
//! text they were given. Word shingles, which are not slices, are built
//! after filtering (see [`TokenizerConfig::Shingles`]).

mod ascii;
mod bytes;
mod jieba;
mod ngrams;
mod script;
mod words;

use std::fmt;

use serde::{Deserialize, Serialize};

pub use ascii::ascii_words;
pub use bytes::{escape_bytes, unescape_bytes, ByteGrams};
#[cfg(feature = "jieba")]
pub use neardup_jieba::{Flavor as JiebaFlavor, Segmenter};
pub(crate) use ngrams::for_each_char_window;
pub use ngrams::CharNgrams;
pub use script::{script_of, Script};
pub use words::Words;

/// Where a tokenizer puts its tokens, one at a time, in order: a `Vec`,
/// or a later stage that takes each token as it comes (the filters and
/// shingles of [`Stages`](crate::stages::Stages)), so that no list of
/// tokens is written and read again.
pub(crate) trait TokenSink<'t> {
    /// Takes the next token.
    fn push(&mut self, token: &'t str);

    /// Takes jieba's words of `run`, a run of Han characters.
    fn cut_han(&mut self, run: &'t str, hmm: bool);
}

impl<'t> TokenSink<'t> for Vec<&'t str> {
    #[inline(always)]
    fn push(&mut self, token: &'t str) {
        Vec::push(self, token);
    }

    fn cut_han(&mut self, run: &'t str, hmm: bool) {
        jieba::cut_han(run, hmm, self);
    }
}

/// Splits text into tokens, each a slice of the text.
pub trait Tokenizer: Send + Sync + fmt::Debug {
    /// Appends the tokens of `text` to `out`, in order.
    fn tokenize<'t>(&self, text: &'t str, out: &mut Vec<&'t str>);
}

/// The built-in tokenizers, as they appear in a configuration:
/// `tokenizer = { type = "words", hmm = false }`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
#[non_exhaustive]
pub enum TokenizerConfig {
    /// Words in any script: Unicode word boundaries (UAX #29) for
    /// space-delimited scripts, with an ASCII fast path that gives the same
    /// words; runs of Han characters segmented by jieba (its bundled
    /// dictionary); Japanese kana and Korean Hangul runs as overlapping
    /// character bigrams. Latin words inside Chinese text stay whole.
    Words {
        /// Let jieba's HMM join characters its dictionary does not know
        /// into words (slower, better on names and new words). By default,
        /// this is `false`.
        #[serde(default)]
        hmm: bool,
        /// How runs of Han characters become tokens: `jieba` words (the
        /// default), or `chars`, one token per character (shingles of
        /// them are character n-grams, which reworded Chinese keeps
        /// better than word shingles; docs/QUALITY.md).
        #[serde(default, skip_serializing_if = "HanSplit::is_jieba")]
        han: HanSplit,
    },
    /// The whole text through jieba's `cut`, as jieba and cppjieba do
    /// (non-Han characters become tokens of their own; whitespace tokens
    /// are dropped). Used by the jieba-based presets.
    Jieba {
        /// Use jieba's HMM for unknown words. By default, this is `true`.
        #[serde(default = "yes")]
        hmm: bool,
    },
    /// The whole text as cppjieba cuts it (`MixSegment`, the segmenter of
    /// cppjieba's keyword extractor, which yanyiwu/simhash runs): ranges
    /// between ` \t\n，。`, its route weights, every run of single
    /// characters through its HMM, ASCII by its letter and number rules.
    /// Words that are one whitespace character are dropped. Used by the
    /// `yanyiwu` preset.
    Cppjieba {
        /// Use cppjieba's HMM (`MixSegment`; `false` is `MPSegment`). By
        /// default, this is `true`.
        #[serde(default = "yes")]
        hmm: bool,
        /// Which cppjieba's words. By default (and in every configuration
        /// written before there was a choice), `nodejieba-3.5.8`; the
        /// `yanyiwu` preset says `5.6.7`.
        #[serde(default, skip_serializing_if = "CppjiebaVersion::is_default")]
        version: CppjiebaVersion,
    },
    /// Overlapping `n`-character grams (robust for CJK and OCR noise).
    /// Whitespace counts as a character; add the `collapse-whitespace`
    /// normalizer to make all whitespace one space, or `python-simhash` to
    /// drop it.
    CharNgrams {
        /// Characters per gram.
        n: usize,
        /// What a text shorter than `n` characters gives. By default,
        /// this is `skip` (no grams); `whole` gives the whole text as one
        /// token, even when it is empty (the PyPI `simhash` package).
        #[serde(default)]
        short: ShortText,
    },
    /// Overlapping `n`-byte windows of the text's UTF-8 bytes, which need
    /// not be whole characters, leaving out the first `skip_first` and the
    /// last `skip_last` windows; a repeated window votes with its count.
    /// A window is not a word, so a byte-grams pipeline takes no filters,
    /// weighs by `tf`, selects all and is SimHash only. Its features show
    /// as [`escape_bytes`] writes them. The `ferd` preset:
    /// `n = 2, skip_first = 1, skip_last = 1`.
    ByteGrams {
        /// Bytes per window.
        n: usize,
        /// Windows left out at the start. By default, none.
        #[serde(default)]
        skip_first: usize,
        /// Windows left out at the end. By default, none.
        #[serde(default)]
        skip_last: usize,
    },
    /// Overlapping `n`-token shingles over another tokenizer's tokens,
    /// joined by a space. Filters apply to the tokens before they are
    /// joined. A text with fewer than `n` tokens gives one shingle of all
    /// of them.
    Shingles {
        /// Tokens per shingle.
        n: usize,
        /// The tokenizer whose tokens are joined.
        over: Box<TokenizerConfig>,
    },
}

fn yes() -> bool {
    true
}

/// Which cppjieba [`TokenizerConfig::Cppjieba`] cuts as. The versions
/// differ only in how the HMM cuts runs of ASCII (v5.6.7 keeps digits
/// followed by letters, and a decimal suffix, in one word: `5G3.14`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum CppjiebaVersion {
    /// The cppjieba bundled in the npm package nodejieba 3.5.8 (what
    /// neardup followed before v5.6.7, and what a configuration without
    /// `version` means).
    #[default]
    #[serde(rename = "nodejieba-3.5.8")]
    Nodejieba3_5_8,
    /// cppjieba v5.6.7, which yanyiwu/simhash pins (submodule `b3602be`).
    #[serde(rename = "5.6.7")]
    V5_6_7,
}

impl CppjiebaVersion {
    /// Whether this is the default (left out when a configuration is
    /// written, so that configurations written before the choice keep
    /// their text and their ids).
    pub fn is_default(&self) -> bool {
        *self == CppjiebaVersion::default()
    }
}

/// How the `words` tokenizer splits runs of Han characters (see
/// [`TokenizerConfig::Words`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HanSplit {
    /// Into jieba's words.
    #[default]
    Jieba,
    /// One token per character.
    Chars,
}

impl HanSplit {
    /// Whether this is the default, jieba (configurations leave it out).
    pub fn is_jieba(&self) -> bool {
        *self == HanSplit::Jieba
    }
}

/// What a text shorter than one gram gives (see [`TokenizerConfig::CharNgrams`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ShortText {
    /// No tokens.
    #[default]
    Skip,
    /// The whole text as one token, even when empty.
    Whole,
}

impl TokenizerConfig {
    /// The tokenizer that makes the base tokens, and the shingle size
    /// applied after filtering (1 for none).
    pub(crate) fn split_shingles(&self) -> (&TokenizerConfig, usize) {
        match self {
            TokenizerConfig::Shingles { n, over } => (over, *n),
            t => (t, 1),
        }
    }

    /// The byte windows, if this tokenizer makes them
    /// ([`TokenizerConfig::ByteGrams`]): features that are not slices of
    /// the text.
    pub fn byte_grams(&self) -> Option<ByteGrams> {
        match *self {
            TokenizerConfig::ByteGrams { n, skip_first, skip_last } => {
                Some(ByteGrams { n, skip_first, skip_last })
            }
            _ => None,
        }
    }

    /// Whether this tokenizer makes byte windows.
    pub fn is_bytes(&self) -> bool {
        self.byte_grams().is_some()
    }

    pub(crate) fn validate(&self) -> Result<(), String> {
        match self {
            TokenizerConfig::CharNgrams { n: 0, .. } => Err("char-ngrams needs n ≥ 1".into()),
            TokenizerConfig::ByteGrams { n: 0, .. } => Err("byte-grams needs n ≥ 1".into()),
            TokenizerConfig::Shingles { over, .. } if over.is_bytes() => {
                Err("shingles over byte-grams is not supported: byte windows are not tokens".into())
            }
            TokenizerConfig::Shingles { n: 0, .. } => Err("shingles needs n ≥ 1".into()),
            TokenizerConfig::Shingles { over, .. } if matches!(**over, TokenizerConfig::Shingles { .. }) => {
                Err("shingles over shingles is not supported; use one shingles tokenizer with a larger n"
                    .into())
            }
            TokenizerConfig::Shingles { over, .. } => over.validate(),
            TokenizerConfig::Words { .. } | TokenizerConfig::Jieba { .. } | TokenizerConfig::Cppjieba { .. }
                if !jieba::AVAILABLE =>
            {
                Err("this neardup was built without the `jieba` feature, which the words, jieba and cppjieba \
                 tokenizers need; rebuild with default features, or use char-ngrams"
                    .into())
            }
            _ => Ok(()),
        }
    }
}

impl Tokenizer for TokenizerConfig {
    fn tokenize<'t>(&self, text: &'t str, out: &mut Vec<&'t str>) {
        match self {
            TokenizerConfig::Words { hmm, han } => Words { hmm: *hmm, han: *han }.tokenize(text, out),
            TokenizerConfig::Jieba { hmm } => jieba::cut_whole(text, *hmm, out),
            TokenizerConfig::Cppjieba { hmm, version } => {
                jieba::cut_cppjieba_whole(text, *hmm, *version, out)
            }
            TokenizerConfig::CharNgrams { n, short } => {
                CharNgrams { n: *n, short: *short }.tokenize(text, out)
            }
            // Byte windows are not slices of the text: `Stages` gives them
            // escaped, and the `Fingerprinter` counts them on the bytes.
            TokenizerConfig::ByteGrams { .. } => {}
            // Shingles are joined after filtering; here only the base tokens.
            TokenizerConfig::Shingles { over, .. } => over.tokenize(text, out),
        }
    }
}
