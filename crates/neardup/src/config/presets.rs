//! Named pipelines, selectable by name everywhere (`--preset NAME`).
//!
//! | name | what |
//! |---|---|
//! | `default` | HTML to text, NFKC, lower case; words (jieba for Chinese) without punctuation; tf; XXH3; 64 bits; k = 8 below 600 features, else 4. Chosen by the quality evaluation (docs/QUALITY.md). |
//! | `keywords` | jieba TF-IDF top-20 keywords hashed with FNV-1a 64 (the seeds' pipeline). |
//! | `python-simhash` | byte-identical to the PyPI `simhash` package 2.1.2. |
//! | `yanyiwu` | the pipeline of yanyiwu/simhash as it builds today (cppjieba v5.6.7's keywords, top 5, lookup3). |
//! | `yanyiwu-nodejieba` | `yanyiwu` with the older cppjieba bundled in nodejieba 3.5.8 (what `yanyiwu` was before neardup followed v5.6.7; differs on ASCII runs such as `5G3.14`). |
//! | `ferd` | ferd/simhash's `simhash:hash/1`, bit for bit: the UTF-8 bytes in 2-byte windows (not the first nor the last), counts as weights, MD5, 128 bits, ties give 1, bits reversed. |
//! | `minhash` | `default`'s text stages, word 2-shingles (character bigrams for Chinese: `han = "chars"`), a MinHash signature of 128 values; Jaccard ≥ 0.5 by LSH banding (32 bands × 4 rows: misses weighed 0.9). Chosen by the quality evaluation (docs/QUALITY.md). |
//!
//! Fingerprints from different presets must never be compared: they are
//! different functions of the text.

use super::{LshConfig, Method, MinHashConfig, PipelineConfig, VoteConfig, FORMAT_VERSION};
use crate::error::{Error, Result};
use crate::filter::FilterConfig;
use crate::fingerprint::Bits;
use crate::hash::HashConfig;
use crate::normalize::NormalizerConfig;
pub use crate::radius::Radius;
use crate::select::{SelectConfig, TieBreak};
use crate::tokenize::{CppjiebaVersion, HanSplit, ShortText, TokenizerConfig};
use crate::weight::{UnknownIdf, WeightConfig, BUILTIN_IDF};

/// The names of the SimHash presets.
pub const NAMES: [&str; 6] =
    ["default", "keywords", "python-simhash", "yanyiwu", "yanyiwu-nodejieba", "ferd"];

/// The method every front end uses when told none — `neardup dedup`,
/// `compare`, `eval`, `index build`, `index add` and `serve` on a new data
/// directory, Python's `dedup` and `pipeline`, the Spark job: MinHash,
/// preset `minhash`, which docs/QUALITY.md measured best on both languages
/// (F1 0.994 en / 0.990 zh against SimHash `default`'s 0.903 / 0.895, and
/// no false pair on the shared documents). An existing index or data
/// directory keeps the method it was made with.
pub const DEFAULT_METHOD: Method = Method::Minhash;

/// The Jaccard threshold of the word 3-shingles by which `dedup` verifies
/// SimHash's candidate pairs unless told not to (`--verify none`): the
/// fingerprints of short texts fall within the radius by chance (k = 8 of
/// 64 bits below 600 features), and a verified link keeps unrelated short
/// documents apart. Chosen on the labelled pairs (docs/QUALITY.md).
pub const SIMHASH_VERIFY: f64 = 0.3;

/// The preset a method runs when none is named: `default` (SimHash) or
/// `minhash`.
pub fn of_method(method: Method) -> &'static str {
    match method {
        Method::Simhash => "default",
        Method::Minhash => "minhash",
    }
}

/// The names of the MinHash presets.
pub const MINHASH_NAMES: [&str; 1] = ["minhash"];

fn unknown(name: &str) -> Error {
    Error::UnknownPreset {
        name: name.to_owned(),
        known: [&NAMES[..], &MINHASH_NAMES[..]].concat().join(", "),
    }
}

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
    if name == "minhash" {
        return Ok(PipelineConfig {
            method: Method::Minhash,
            minhash: Some(MinHashConfig::default()),
            lsh: Some(LshConfig {
                false_negative_weight: Some(MINHASH_FALSE_NEGATIVE_WEIGHT),
                ..LshConfig::at(MINHASH_THRESHOLD)
            }),
            tokenizer: TokenizerConfig::Shingles {
                n: 2,
                over: Box::new(TokenizerConfig::Words { hmm: false, han: HanSplit::Chars }),
            },
            ..fingerprint_config("default")?
        });
    }
    let mut c = fingerprint_config(name)?;
    c.radius = Some(recommended_radius(name, c.bits)?);
    Ok(c)
}

/// The preset's stages without its radius: what determines its fingerprints.
fn fingerprint_config(name: &str) -> Result<PipelineConfig> {
    let base = |tokenizer| PipelineConfig {
        format_version: FORMAT_VERSION,
        bits: Bits::B64,
        normalize: vec![NormalizerConfig::Nfkc, NormalizerConfig::Lowercase],
        tokenizer,
        filters: vec![],
        weight: WeightConfig::Tf,
        select: SelectConfig::All,
        hash: HashConfig::Xxh3,
        vote: VoteConfig::default(),
        radius: None,
        method: Method::Simhash,
        minhash: None,
        lsh: None,
    };
    Ok(match name {
        "default" => PipelineConfig {
            normalize: vec![NormalizerConfig::Html, NormalizerConfig::Nfkc, NormalizerConfig::Lowercase],
            filters: vec![FilterConfig::Punctuation],
            ..base(TokenizerConfig::Words { hmm: false, han: HanSplit::Jieba })
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
        "yanyiwu" | "yanyiwu-nodejieba" => PipelineConfig {
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
            ..base(TokenizerConfig::Cppjieba {
                hmm: true,
                version: if name == "yanyiwu" {
                    CppjiebaVersion::V5_6_7
                } else {
                    CppjiebaVersion::Nodejieba3_5_8
                },
            })
        },
        "ferd" => PipelineConfig {
            normalize: vec![],
            bits: Bits::B128,
            hash: HashConfig::Md5,
            vote: VoteConfig::FERD,
            ..base(TokenizerConfig::ByteGrams { n: 2, skip_first: 1, skip_last: 1 })
        },
        _ => return Err(unknown(name)),
    })
}

/// The Jaccard threshold of the `minhash` preset.
pub const MINHASH_THRESHOLD: f64 = 0.5;

/// How much the `minhash` preset's banding weighs a missed pair against a
/// needless candidate ([`LshConfig::false_negative_weight`]): 32 bands × 4
/// rows at its threshold, chosen on the labelled pairs and generated
/// reposts (docs/QUALITY.md).
pub const MINHASH_FALSE_NEGATIVE_WEIGHT: f64 = 0.9;

/// The classic radius for `bits`-bit fingerprints: 3 for 64 bits (Manku et
/// al.), scaled with the width (6 for 128). The recommendation for
/// configurations that are not presets.
pub fn classic_k(bits: Bits) -> u32 {
    Radius::classic(bits).max_k()
}

/// The features below which the `default` preset uses its larger radius.
pub const SHORT_FEATURES: usize = 600;

/// The radius a preset recommends for `bits`-bit fingerprints: what
/// `neardup dedup`, `eval` and `index` use when no `--k` is given.
///
/// For `default` it is length-dependent, chosen by the quality evaluation
/// (docs/QUALITY.md): k = 8 when the shorter document has fewer than
/// [`SHORT_FEATURES`] features, else 4 (64 bits; doubled for 128). For the
/// compatibility presets it is the peer's own default, fixed (PyPI
/// `simhash`'s `SimhashIndex`: k = 2; yanyiwu/simhash's `isEqual`: k = 3;
/// the seeds' keywords pipeline: k = 3; ferd/simhash has none, so the
/// classic 6 of 128 bits).
///
/// # Errors
///
/// [`Error::UnknownPreset`] listing the names that exist.
pub fn recommended_radius(name: &str, bits: Bits) -> Result<Radius> {
    if !NAMES.contains(&name) {
        return Err(unknown(name));
    }
    let scale = bits.get() / 64;
    Ok(match name {
        "default" => Radius::by_length(&[(SHORT_FEATURES, 8 * scale)], 4 * scale),
        "python-simhash" => Radius::fixed(2),
        _ => Radius::classic(bits),
    })
}

/// The radius of the preset whose stages make the same fingerprints as
/// `config`'s, if one does (a configuration written out by `neardup config
/// show PRESET`, or stored before pipelines carried their radius).
pub fn radius_of_same_stages(config: &PipelineConfig) -> Option<Radius> {
    NAMES.iter().find_map(|&name| {
        let preset = fingerprint_config(name).ok()?;
        let same = PipelineConfig { radius: None, ..config.clone() }
            == PipelineConfig { bits: config.bits, ..preset };
        same.then(|| recommended_radius(name, config.bits).ok()).flatten()
    })
}

/// The preset whose stages make the same fingerprints (or signatures) as
/// `pipeline`, if one does.
pub fn name_of(pipeline: &PipelineConfig) -> Option<&'static str> {
    NAMES
        .iter()
        .chain(&MINHASH_NAMES)
        .copied()
        .find(|&name| config(name).is_ok_and(|p| p.same_fingerprints(pipeline)))
}

/// A pipeline as errors name it: its id, and its preset's name when it has
/// one (`38cd40e42a2e1a46 (preset yanyiwu-nodejieba)`), so that a user
/// told two pipelines differ sees which preset opens the old index.
pub fn label(pipeline: &PipelineConfig) -> String {
    match name_of(pipeline) {
        Some(name) => format!("{:016x} (preset {name})", pipeline.id()),
        None => format!("{:016x}", pipeline.id()),
    }
}

/// The largest k of [`recommended_radius`]: the radius an index for this
/// preset must serve.
///
/// # Errors
///
/// [`Error::UnknownPreset`] listing the names that exist.
pub fn recommended_k(name: &str, bits: Bits) -> Result<u32> {
    Ok(recommended_radius(name, bits)?.max_k())
}
