//! Named pipelines, selectable by name everywhere (`--preset NAME`).
//!
//! | name | what |
//! |---|---|
//! | `default` | HTML to text, NFKC, lower case; words (jieba for Chinese) without punctuation; tf; XXH3; 64 bits; k = 8 below 600 features, else 4. Chosen by the quality evaluation (docs/QUALITY.md). |
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
            normalize: vec![NormalizerConfig::Html, NormalizerConfig::Nfkc, NormalizerConfig::Lowercase],
            filters: vec![FilterConfig::Punctuation],
            ..base(TokenizerConfig::Words { hmm: false })
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

/// The Hamming radius as a function of document length: near duplicates
/// of short documents differ in more bits, because fewer features vote.
///
/// A pair is a near duplicate when its distance is at most
/// [`k_for_pair`](Radius::k_for_pair) of the two documents' feature counts
/// (the counts [`Fingerprinter::fingerprint_counted`](crate::Fingerprinter::fingerprint_counted)
/// returns): a step's larger k applies when the shorter document is below
/// the step's count and the longer one below twice it (a document twice
/// as long as another is not its near duplicate beyond the long-document k,
/// and this keeps the expensive radius to a subset of the corpus).
///
/// ```
/// use neardup::presets::Radius;
///
/// let r = Radius::by_length(&[(600, 8)], 4);
/// assert_eq!((r.k_for(599), r.k_for(600), r.max_k(), r.min_k()), (8, 4, 8, 4));
/// assert_eq!((r.k_for_pair(100, 1199), r.k_for_pair(100, 1200)), (8, 4));
/// assert_eq!(r.to_string(), "k = 8 below 600 features, else 4");
/// assert_eq!(Radius::fixed(3).to_string(), "k = 3");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Radius {
    /// (below this many features, k), by increasing feature count.
    steps: Vec<(usize, u32)>,
    /// k for documents with at least as many features as the last step.
    rest: u32,
}

impl Radius {
    /// The same k for every length.
    pub fn fixed(k: u32) -> Radius {
        Radius { steps: Vec::new(), rest: k }
    }

    /// `steps[i] = (n, k)`: documents with fewer than `n` features (and at
    /// least the previous step's `n`) get `k`; longer ones get `rest`.
    pub fn by_length(steps: &[(usize, u32)], rest: u32) -> Radius {
        let mut steps = steps.to_vec();
        steps.sort_unstable();
        Radius { steps, rest }
    }

    /// The radius for a document of `features` features paired with one of
    /// the same length.
    pub fn k_for(&self, features: usize) -> u32 {
        self.k_for_pair(features, features)
    }

    /// The radius for a pair of documents of `a` and `b` features.
    pub fn k_for_pair(&self, a: usize, b: usize) -> u32 {
        let (lo, hi) = (a.min(b), a.max(b));
        self.steps.iter().find(|s| lo < s.0 && hi < 2 * s.0).map_or(self.rest, |s| s.1)
    }

    /// The largest radius of any length.
    pub fn max_k(&self) -> u32 {
        self.steps.iter().map(|s| s.1).fold(self.rest, u32::max)
    }

    /// The smallest radius of any length.
    pub fn min_k(&self) -> u32 {
        self.steps.iter().map(|s| s.1).fold(self.rest, u32::min)
    }

    /// Whether every length gets the same k.
    pub fn is_fixed(&self) -> bool {
        self.steps.iter().all(|s| s.1 == self.rest)
    }

    /// The steps: (below this many features, k), then the k beyond.
    pub fn steps(&self) -> (&[(usize, u32)], u32) {
        (&self.steps, self.rest)
    }
}

impl std::fmt::Display for Radius {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_fixed() {
            return write!(f, "k = {}", self.rest);
        }
        f.write_str("k = ")?;
        for (n, k) in &self.steps {
            write!(f, "{k} below {n} features, ")?;
        }
        write!(f, "else {}", self.rest)
    }
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
/// the seeds' keywords pipeline: k = 3).
///
/// # Errors
///
/// [`Error::UnknownPreset`] listing the names that exist.
pub fn recommended_radius(name: &str, bits: Bits) -> Result<Radius> {
    config(name)?;
    let scale = bits.get() / 64;
    Ok(match name {
        "default" => Radius::by_length(&[(SHORT_FEATURES, 8 * scale)], 4 * scale),
        "python-simhash" => Radius::fixed(2),
        _ => Radius::fixed(classic_k(bits)),
    })
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
