//! Named pipelines, selectable by name everywhere (`--preset NAME`).
//!
//! | name | what |
//! |---|---|
//! | `default` | NFKC + lower case, words (jieba for Chinese), word 3-shingles, tf, XXH3, 64 bits. Provisional: the quality evaluation chooses the final default. |
//! | `keywords` | jieba TF-IDF top-20 keywords hashed with FNV-1a 64 (the seeds' pipeline). |
//! | `python-simhash` | byte-identical to the PyPI `simhash` package 2.1.2. |
//! | `yanyiwu` | the pipeline of yanyiwu/simhash (cppjieba keywords, top 5, lookup3). |
//!
//! Fingerprints from different presets must never be compared: they are
//! different functions of the text.

use crate::config::{PipelineConfig, FORMAT_VERSION};
use crate::error::{Error, Result};
use crate::filter::FilterConfig;
use crate::fingerprint::Bits;
use crate::hash::HashConfig;
use crate::normalize::NormalizerConfig;
use crate::select::{SelectConfig, TieBreak};
use crate::tokenize::{ShortText, TokenizerConfig};
use crate::weight::{UnknownIdf, WeightConfig, BUILTIN_IDF};

/// The names of the presets.
pub const NAMES: [&str; 4] = ["default", "keywords", "python-simhash", "yanyiwu"];

/// The mean IDF of cppjieba's `idf.utf8` (its `idfAverage_`): the jieba
/// table without single characters, summed in file order.
pub const CPPJIEBA_MEAN_IDF: f64 = 11.739204307083542;

/// `jieba.analyse`'s `median_idf` of the bundled table.
pub const JIEBA_MEDIAN_IDF: f64 = 11.9547675029;

/// The configuration of the preset `name`.
///
/// # Errors
///
/// [`Error::UnknownPreset`] listing the names that exist.
pub fn config(name: &str) -> Result<PipelineConfig> {
    let base = |tokenizer| PipelineConfig {
        format_version: FORMAT_VERSION,
        bits: Bits::B64,
        normalize: vec![NormalizerConfig::Nfkc, NormalizerConfig::Lowercase],
        tokenizer,
        filters: vec![],
        weight: WeightConfig::Tf,
        select: SelectConfig::All,
        hash: HashConfig::Xxh3,
    };
    Ok(match name {
        "default" => PipelineConfig {
            filters: vec![FilterConfig::Punctuation],
            ..base(TokenizerConfig::Shingles { n: 3, over: Box::new(TokenizerConfig::Words { hmm: false }) })
        },
        "keywords" => PipelineConfig {
            filters: vec![
                FilterConfig::Punctuation,
                FilterConfig::MinChars { min: 2 },
                FilterConfig::Stopwords { lists: vec!["jieba".into()], files: vec![] },
            ],
            weight: WeightConfig::Tfidf {
                idf: BUILTIN_IDF.into(),
                unknown: UnknownIdf::Value(JIEBA_MEDIAN_IDF),
            },
            select: SelectConfig::TopN { n: 20, ties: TieBreak::FirstOccurrence },
            hash: HashConfig::Fnv1a,
            ..base(TokenizerConfig::Jieba { hmm: true })
        },
        "python-simhash" => PipelineConfig {
            normalize: vec![NormalizerConfig::PythonSimhash],
            hash: HashConfig::Md5,
            ..base(TokenizerConfig::CharNgrams { n: 4, short: ShortText::Whole })
        },
        "yanyiwu" => PipelineConfig {
            normalize: vec![],
            filters: vec![
                FilterConfig::MinChars { min: 2 },
                FilterConfig::Stopwords { lists: vec!["cppjieba".into()], files: vec![] },
            ],
            weight: WeightConfig::Tfidf {
                idf: BUILTIN_IDF.into(),
                unknown: UnknownIdf::Value(CPPJIEBA_MEAN_IDF),
            },
            select: SelectConfig::TopN { n: 5, ties: TieBreak::Cppjieba },
            hash: HashConfig::Lookup3,
            ..base(TokenizerConfig::Jieba { hmm: true })
        },
        _ => return Err(Error::UnknownPreset { name: name.to_owned(), known: NAMES.join(", ") }),
    })
}

/// The classic radius for `bits`-bit fingerprints: 3 for 64 bits (Manku et
/// al.), scaled with the width (6 for 128). The recommendation for
/// configurations that are not presets.
pub fn classic_k(bits: Bits) -> u32 {
    3 * bits.get() / 64
}

/// The radius `k` a preset recommends for `bits`-bit fingerprints: the `k`
/// that `neardup dedup` and `neardup index` use when none is given.
///
/// For the compatibility presets this is the peer's own default (PyPI
/// `simhash`'s `SimhashIndex` uses k = 2; yanyiwu/simhash's `isEqual` k = 3;
/// the seeds' keywords pipeline k = 3). For `default` it is the radius
/// chosen by the quality evaluation (docs/QUALITY.md).
///
/// # Errors
///
/// [`Error::UnknownPreset`] listing the names that exist.
pub fn recommended_k(name: &str, bits: Bits) -> Result<u32> {
    config(name)?;
    Ok(match name {
        "python-simhash" => 2,
        _ => classic_k(bits),
    })
}
