//! Stage 4, weight: how much each distinct feature counts in the vote.

mod idf;
mod idf_layout;
mod textrank;

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::error::Result;
pub use idf::{IdfRule, IdfTable, UnknownIdf, BUILTIN_IDF};
pub use textrank::TextRank;

/// A document's features after counting: the distinct features in order
/// of first occurrence, how often each occurs, and the sequence of
/// occurrences (as indices into `distinct`).
#[derive(Clone, Copy, Debug)]
pub struct FeatureCounts<'a> {
    /// Distinct features, in order of first occurrence.
    pub distinct: &'a [&'a str],
    /// `counts[i]` is how often `distinct[i]` occurs.
    pub counts: &'a [u32],
    /// The document as a sequence of indices into `distinct`.
    pub sequence: &'a [u32],
}

/// Assigns a weight to every distinct feature of a document.
pub trait Weighter: Send + Sync + fmt::Debug {
    /// Writes one weight per distinct feature, in the same order, to `out`
    /// (which is empty on entry).
    fn weigh(&self, doc: &FeatureCounts<'_>, out: &mut Vec<f64>);
}

/// The built-in weighters, as they appear in a configuration:
/// `weight = { type = "tfidf", idf = "jieba", unknown = "median" }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
#[non_exhaustive]
pub enum WeightConfig {
    /// Every distinct feature weighs 1.
    Uniform,
    /// A feature weighs its number of occurrences (term frequency).
    Tf,
    /// Term frequency times inverse document frequency.
    Tfidf {
        /// The IDF table: `jieba` for the table bundled with jieba
        /// (270,132 Chinese words), or the path of a `word idf` file such
        /// as `neardup idf build` writes (relative to the configuration
        /// file). By default, this is `jieba`.
        #[serde(default = "default_idf")]
        idf: String,
        /// The IDF of a feature the table lacks: `median` (as
        /// `jieba.analyse`), `mean` (as cppjieba), or a number. By
        /// default, this is `median`.
        #[serde(default)]
        unknown: UnknownIdf,
    },
    /// TextRank (Mihalcea & Tarau 2004) over the co-occurrence graph of
    /// features within a sliding window, as `jieba.analyse.textrank`
    /// (without its part-of-speech filter).
    Textrank {
        /// Features co-occur when fewer than `window` positions apart.
        /// By default, this is 5.
        #[serde(default = "default_window")]
        window: usize,
        /// The damping factor. By default, this is 0.85.
        #[serde(default = "default_damping")]
        damping: f64,
        /// Iterations of the rank update. By default, this is 10.
        #[serde(default = "default_iterations")]
        iterations: usize,
    },
}

fn default_idf() -> String {
    BUILTIN_IDF.to_string()
}
fn default_window() -> usize {
    5
}
fn default_damping() -> f64 {
    0.85
}
fn default_iterations() -> usize {
    10
}

/// Uniform weights.
#[derive(Clone, Copy, Debug, Default)]
pub struct Uniform;

impl Weighter for Uniform {
    fn weigh(&self, doc: &FeatureCounts<'_>, out: &mut Vec<f64>) {
        out.resize(doc.distinct.len(), 1.0);
    }
}

/// Term-frequency weights.
#[derive(Clone, Copy, Debug, Default)]
pub struct Tf;

impl Weighter for Tf {
    fn weigh(&self, doc: &FeatureCounts<'_>, out: &mut Vec<f64>) {
        out.extend(doc.counts.iter().map(|&c| f64::from(c)));
    }
}

/// TF-IDF weights: `count × idf`, with a fixed IDF for unknown features.
#[derive(Clone, Debug)]
pub struct TfIdf {
    table: Arc<IdfTable>,
    unknown: f64,
}

impl TfIdf {
    /// TF-IDF over `table`, using `unknown` for features it lacks.
    pub fn new(table: Arc<IdfTable>, unknown: &UnknownIdf) -> TfIdf {
        let unknown = table.resolve_unknown(unknown);
        TfIdf { table, unknown }
    }

    /// The IDF used for `feature`.
    pub fn idf(&self, feature: &str) -> f64 {
        self.table.get(feature).unwrap_or(self.unknown)
    }
}

impl Weighter for TfIdf {
    fn weigh(&self, doc: &FeatureCounts<'_>, out: &mut Vec<f64>) {
        self.table.get_each(doc.distinct, |i, idf| {
            out.push(f64::from(doc.counts[i]) * idf.unwrap_or(self.unknown));
        });
    }
}

/// A weighter loaded from its configuration.
#[derive(Clone, Debug)]
pub(crate) enum LoadedWeighter {
    Uniform,
    Tf,
    TfIdf(TfIdf),
    TextRank(TextRank),
}

impl LoadedWeighter {
    /// Loads a weighter; an IDF path in `config` is used as it is.
    pub(crate) fn load(config: &WeightConfig) -> Result<LoadedWeighter> {
        Ok(match config {
            WeightConfig::Uniform => LoadedWeighter::Uniform,
            WeightConfig::Tf => LoadedWeighter::Tf,
            WeightConfig::Tfidf { idf, unknown } => {
                LoadedWeighter::TfIdf(TfIdf::new(IdfTable::load(idf, None)?, unknown))
            }
            WeightConfig::Textrank { window, damping, iterations } => LoadedWeighter::TextRank(TextRank {
                window: *window,
                damping: *damping,
                iterations: *iterations,
            }),
        })
    }
}

impl Weighter for LoadedWeighter {
    fn weigh(&self, doc: &FeatureCounts<'_>, out: &mut Vec<f64>) {
        match self {
            LoadedWeighter::Uniform => Uniform.weigh(doc, out),
            LoadedWeighter::Tf => Tf.weigh(doc, out),
            LoadedWeighter::TfIdf(w) => w.weigh(doc, out),
            LoadedWeighter::TextRank(w) => w.weigh(doc, out),
        }
    }
}
