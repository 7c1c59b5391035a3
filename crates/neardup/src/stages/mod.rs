//! [`Stages`]: the text stages of a pipeline, loaded — normalize →
//! tokenize → filter → shingle — shared by both methods. A
//! [`Fingerprinter`](crate::Fingerprinter) weighs, hashes and votes the
//! features they give; a [`MinHasher`](crate::minhash::MinHasher) takes
//! their set into a signature; verification and passages compare their
//! tokens.
//!
//! ```
//! use neardup::stages::Stages;
//!
//! let stages = Stages::load(neardup::presets::config("minhash")?)?;
//! assert_eq!(stages.tokens("The quick, brown fox!"), ["the", "quick", "brown", "fox"]);
//! // The minhash preset's features are word 2-shingles.
//! let n = stages.with_features("The quick, brown fox!", |f| f.len());
//! assert_eq!(n, 3);
//! # Ok::<(), neardup::Error>(())
//! ```

mod stream;

use std::borrow::Cow;

use crate::config::PipelineConfig;
use crate::error::Result;
use crate::filter::{Filters, TokenFilter};
use crate::normalize::normalize_all;
use crate::tokenize::{escape_bytes, Tokenizer, TokenizerConfig};

/// A pipeline's text stages, loaded (stop-word sets read, the jieba
/// dictionary shared): `Send + Sync`, cheap to clone.
#[derive(Debug, Clone)]
pub struct Stages {
    config: PipelineConfig,
    tokenizer: TokenizerConfig,
    shingle: usize,
    filters: Filters,
}

impl Stages {
    /// Loads the text stages of `config`, whatever its method.
    ///
    /// # Errors
    ///
    /// An invalid configuration, or a stop-word file that cannot be read.
    pub fn load(config: PipelineConfig) -> Result<Stages> {
        config.validate()?;
        let (tokenizer, shingle) = config.tokenizer.split_shingles();
        let filters = Filters::load(&config.filters)?;
        Ok(Stages { tokenizer: tokenizer.clone(), shingle, filters, config })
    }

    /// The whole configuration the stages were loaded from.
    pub fn config(&self) -> &PipelineConfig {
        &self.config
    }

    /// Sets the configuration's near-duplicate rule, which no stage reads.
    pub(crate) fn set_radius(&mut self, radius: Option<crate::radius::Radius>) {
        self.config.radius = radius;
    }

    /// The tokenizer without its shingling.
    pub fn tokenizer(&self) -> &TokenizerConfig {
        &self.tokenizer
    }

    /// Tokens per shingle (1: features are the tokens).
    pub fn shingle(&self) -> usize {
        self.shingle
    }

    /// Whether any filter is configured.
    pub fn has_filters(&self) -> bool {
        !self.config.filters.is_empty()
    }

    /// `text` normalized (borrowed when no normalizer changes it).
    #[inline]
    pub fn normalize<'t>(&self, text: &'t str) -> Cow<'t, str> {
        normalize_all(&self.config.normalize, text)
    }

    /// The tokens of `text` after normalization, tokenization and
    /// filtering, before shingling: what an IDF table must be keyed by.
    /// Byte windows ([`TokenizerConfig::ByteGrams`]) are given as
    /// [`escape_bytes`] writes them.
    pub fn tokens(&self, text: &str) -> Vec<String> {
        let norm = self.normalize(text);
        if let Some(grams) = self.tokenizer.byte_grams() {
            return grams.windows(norm.as_bytes()).map(escape_bytes).collect();
        }
        self.filtered_tokens(&norm).into_iter().map(str::to_owned).collect()
    }

    /// The features of `text` (normalized, tokenized, filtered, shingled;
    /// repeats included, in order), passed to `f`. Byte windows are given
    /// escaped, as by [`tokens`](Self::tokens).
    pub fn with_features<R>(&self, text: &str, f: impl FnOnce(&[&str]) -> R) -> R {
        if self.tokenizer.is_bytes() {
            let tokens = self.tokens(text);
            return f(&tokens.iter().map(String::as_str).collect::<Vec<_>>());
        }
        let norm = self.normalize(text);
        self.shingled(self.filtered_tokens(&norm), f)
    }

    /// Tokenizes normalized text and applies the filters. A byte-grams
    /// tokenizer gives no tokens here (its windows are not slices of the
    /// text): use [`tokens`](Self::tokens) or
    /// [`with_features`](Self::with_features).
    #[inline]
    pub fn filtered_tokens<'t>(&self, norm: &'t str) -> Vec<&'t str> {
        let mut tokens: Vec<&str> = Vec::with_capacity(norm.len() / 4 + 1);
        self.tokenizer.tokenize(norm, &mut tokens);
        if self.has_filters() {
            // Every token is written back and the end moves on only if
            // it is kept: no branch on the answer, which for Chinese
            // (many one-character tokens) is a coin toss.
            let mut kept = 0;
            for i in 0..tokens.len() {
                let t = tokens[i];
                tokens[kept] = t;
                kept += usize::from(self.filters.keep(t));
            }
            tokens.truncate(kept);
        }
        tokens
    }

    /// The features made of `tokens` (the tokens themselves, or their
    /// shingles), passed to `f`. Shingles are slices of one string holding
    /// all tokens joined by spaces, so each token is copied once, not once
    /// per shingle.
    pub fn shingled<R>(&self, tokens: Vec<&str>, f: impl FnOnce(&[&str]) -> R) -> R {
        if self.shingle <= 1 {
            f(&tokens)
        } else {
            let (joined, spans) = join_tokens(&tokens);
            f(&shingle_slices(&joined, &spans, self.shingle))
        }
    }
}

impl AsRef<Stages> for Stages {
    fn as_ref(&self) -> &Stages {
        self
    }
}

/// All tokens joined by single spaces, with each token's byte span in it.
fn join_tokens(tokens: &[&str]) -> (String, Vec<(usize, usize)>) {
    let mut joined = String::with_capacity(tokens.iter().map(|t| t.len() + 1).sum());
    let mut spans = Vec::with_capacity(tokens.len());
    for t in tokens {
        if !joined.is_empty() {
            joined.push(' ');
        }
        let s = joined.len();
        joined.push_str(t);
        spans.push((s, joined.len()));
    }
    (joined, spans)
}

/// The `n`-token shingles as slices of `joined`: tokens `i..i + n` joined
/// by a space. Fewer than `n` tokens make one shingle of all of them; no
/// tokens make none.
fn shingle_slices<'j>(joined: &'j str, spans: &[(usize, usize)], n: usize) -> Vec<&'j str> {
    if spans.is_empty() {
        return Vec::new();
    }
    if spans.len() < n {
        return vec![joined];
    }
    spans.windows(n).map(|w| &joined[w[0].0..w[n - 1].1]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::FilterConfig;

    /// A pipeline with a filter configured has filters, even one that
    /// drops nothing (an empty stop-word list).
    #[test]
    fn configured_filters_count_even_when_they_drop_nothing() {
        let mut config = crate::presets::config("minhash").unwrap();
        config.filters = vec![];
        assert!(!Stages::load(config.clone()).unwrap().has_filters());
        config.filters = vec![FilterConfig::Stopwords { lists: vec![], files: vec![] }];
        assert!(Stages::load(config).unwrap().has_filters());
    }
}
