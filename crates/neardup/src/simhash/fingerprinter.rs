//! [`Fingerprinter`]: a loaded pipeline that turns text into fingerprints.

use std::path::Path;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::vote::{Lanes, UnitVotes, Vote};
use crate::config::{Method, PipelineConfig, VoteConfig};
use crate::error::{Error, Result};
use crate::filter::FilterConfig;
use crate::fingerprint::{Bits, Fingerprint};
use crate::hash::{FeatureHasher, HashConfig};
use crate::normalize::NormalizerConfig;
use crate::radius::Radius;
use crate::select::SelectConfig;
use crate::similarity::{FeatureSet, SHINGLE};
use crate::stages::Stages;
use crate::tokenize::{escape_bytes, unescape_bytes, ByteGrams, TokenizerConfig};
use crate::weight::{FeatureCounts, LoadedWeighter, WeightConfig, Weighter};

/// A loaded pipeline. Build it once (loading stop words, IDF tables and the
/// jieba dictionary) and share it: it is `Send + Sync` and every method
/// takes `&self`.
///
/// # Example
///
/// ```
/// use neardup::Fingerprinter;
///
/// let fingerprinter = Fingerprinter::preset("default")?;
/// let a = fingerprinter.fingerprint("The quick brown fox jumps over the lazy dog by the river bank today");
/// let b = fingerprinter.fingerprint("The quick brown fox jumps over the lazy dog by the river bank today!");
/// assert_eq!(a.distance(b), 0);
/// # Ok::<(), neardup::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Fingerprinter {
    stages: Stages,
    weighter: LoadedWeighter,
    hash: HashConfig,
    bits: Bits,
    vote: VoteConfig,
    radius: Radius,
}

/// One feature's part in a fingerprint, as [`Fingerprinter::explain`] reports it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct FeatureVote {
    /// The feature text (a token, or tokens joined by a space).
    pub feature: String,
    /// Its weight in the vote.
    pub weight: f64,
    /// Its hash, as hex of the fingerprint's width.
    pub hash: Fingerprint,
}

/// Why a fingerprint came out as it did.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Explanation {
    /// The fingerprint.
    pub fingerprint: Fingerprint,
    /// The features that voted, in voting order.
    pub features: Vec<FeatureVote>,
    /// The lane sums, one per bit: bit `j` is 1 iff `lanes[j] > 0` (by
    /// the classic rule; the pipeline's [`VoteConfig`] may let a tie give
    /// 1 and reverse the bits).
    pub lanes: Vec<f64>,
    /// The sum of the absolute weights: no lane can exceed it.
    pub total_weight: f64,
    /// How many features the text produced, counted as
    /// [`Fingerprinter::fingerprint_counted`] counts them (repeats included):
    /// the length a [`Radius`] that grows with length reads.
    pub feature_count: usize,
}

/// A feature whose weight differs between two documents (see
/// [`Explanation::changes`]).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct FeatureChange {
    /// The feature text.
    pub feature: String,
    /// Its weight in the first document (0 where it is absent).
    pub weight_a: f64,
    /// Its weight in the second document (0 where it is absent).
    pub weight_b: f64,
}

impl Explanation {
    /// The features whose weights differ between this document (a) and
    /// `other` (b), the largest difference first (ties by feature text):
    /// what moved one fingerprint away from the other. Features with equal
    /// weights in both are left out.
    pub fn changes(&self, other: &Explanation) -> Vec<FeatureChange> {
        let mut weights: std::collections::HashMap<&str, (f64, f64)> = std::collections::HashMap::new();
        for v in &self.features {
            weights.entry(&v.feature).or_default().0 += v.weight;
        }
        for v in &other.features {
            weights.entry(&v.feature).or_default().1 += v.weight;
        }
        let mut changes: Vec<FeatureChange> = weights
            .into_iter()
            .filter(|(_, (a, b))| a != b)
            .map(|(f, (a, b))| FeatureChange { feature: f.to_owned(), weight_a: a, weight_b: b })
            .collect();
        changes.sort_by(|x, y| {
            (y.weight_a - y.weight_b)
                .abs()
                .total_cmp(&(x.weight_a - x.weight_b).abs())
                .then_with(|| x.feature.cmp(&y.feature))
        });
        changes
    }

    /// How far bit `j` was from flipping, as a share of the total weight in
    /// `[0, 1]`: 0 means a tie, 1 means every feature agreed.
    pub fn margin(&self, j: usize) -> f64 {
        if self.total_weight == 0.0 {
            0.0
        } else {
            self.lanes[j].abs() / self.total_weight
        }
    }
}

impl Fingerprinter {
    /// A builder, starting from the `default` preset.
    pub fn builder() -> FingerprinterBuilder {
        FingerprinterBuilder::new()
    }

    /// Loads the pipeline of a named preset (see [`crate::presets`]).
    ///
    /// # Errors
    ///
    /// An unknown name.
    pub fn preset(name: &str) -> Result<Fingerprinter> {
        Fingerprinter::new(crate::config::presets::config(name)?)
    }

    /// Loads a pipeline from its configuration.
    ///
    /// # Errors
    ///
    /// An invalid configuration, or data it names (stop-word files, IDF
    /// tables) that cannot be loaded.
    pub fn new(config: PipelineConfig) -> Result<Fingerprinter> {
        if config.method == Method::Minhash {
            return Err(Error::Config(
                "this pipeline's method is minhash: it makes signatures, not fingerprints \
                 (use a MinHasher, or --method minhash)"
                    .into(),
            ));
        }
        let stages = Stages::load(config)?;
        let config = stages.config();
        Ok(Fingerprinter {
            weighter: LoadedWeighter::load(&config.weight)?,
            hash: config.hash,
            bits: config.bits,
            vote: config.vote,
            radius: config.radius(),
            stages,
        })
    }

    /// Loads a pipeline from a configuration file (see [`PipelineConfig::load`]).
    ///
    /// # Errors
    ///
    /// As [`PipelineConfig::load`] and [`new`](Self::new).
    pub fn from_file(path: impl AsRef<Path>) -> Result<Fingerprinter> {
        Self::new(PipelineConfig::load(path)?)
    }

    /// The configuration this pipeline was built from.
    pub fn config(&self) -> &PipelineConfig {
        self.stages.config()
    }

    /// The text stages (normalize → tokenize → filter → shingle).
    pub fn stages(&self) -> &Stages {
        &self.stages
    }

    /// The fingerprint width.
    pub fn bits(&self) -> Bits {
        self.bits
    }

    /// The pipeline's near-duplicate rule ([`PipelineConfig::radius`]):
    /// what every job uses when the caller gives no `k`.
    pub fn radius(&self) -> &Radius {
        &self.radius
    }

    /// The same pipeline with another near-duplicate rule: the
    /// fingerprints do not change, and nothing is loaded again.
    ///
    /// # Errors
    ///
    /// A radius beyond the fingerprint's bits.
    pub fn with_radius(mut self, radius: Radius) -> Result<Fingerprinter> {
        radius.validate(self.bits).map_err(Error::Config)?;
        self.stages.set_radius(Some(radius.clone()));
        self.radius = radius;
        Ok(self)
    }

    /// The fingerprint of `text`. A text with no features (empty, or all
    /// filtered out) gives the all-zero fingerprint; use
    /// [`try_fingerprint`](Self::try_fingerprint) to treat that as an error.
    pub fn fingerprint(&self, text: &str) -> Fingerprint {
        self.run(text, None, None).0
    }

    /// The fingerprint of any bytes. UTF-8 gives what
    /// [`fingerprint`](Self::fingerprint) gives for the text; other bytes
    /// are fingerprinted as they are by a byte-grams pipeline without
    /// normalizers (the `ferd` preset: ferd/simhash's `simhash:hash/1` on
    /// any binary).
    ///
    /// ```
    /// let ferd = neardup::Fingerprinter::preset("ferd")?;
    /// let fp = ferd.fingerprint_bytes(&[0xff, 0x00, 0xfe, 0x01, 0x80])?;
    /// assert_eq!(fp, ferd.fingerprint_bytes(&[0x11, 0x00, 0xfe, 0x01, 0x22])?);
    /// assert!(neardup::Fingerprinter::preset("default")?.fingerprint_bytes(&[0xff]).is_err());
    /// # Ok::<(), neardup::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::NotUtf8`] for bytes that are not UTF-8 and a pipeline that
    /// reads text.
    pub fn fingerprint_bytes(&self, bytes: &[u8]) -> Result<Fingerprint> {
        let invalid = match std::str::from_utf8(bytes) {
            Ok(text) => return Ok(self.fingerprint(text)),
            Err(e) => e,
        };
        match self.stages.tokenizer().byte_grams() {
            Some(grams) if self.stages.config().normalize.is_empty() => {
                Ok(self.byte_votes(grams, bytes, None).0)
            }
            _ => Err(Error::NotUtf8 { offset: invalid.valid_up_to() }),
        }
    }

    /// The fingerprint of `text` and how many features voted (counting
    /// repeats): the document's length as the fingerprint sees it, which
    /// sets how noisy its distances are (see [`Radius`]).
    pub fn fingerprint_counted(&self, text: &str) -> (Fingerprint, usize) {
        self.run(text, None, None)
    }

    /// The fingerprint of `text`, or an error if it has no features.
    ///
    /// # Errors
    ///
    /// [`Error::EmptyDocument`].
    pub fn try_fingerprint(&self, text: &str) -> Result<Fingerprint> {
        let (fp, n) = self.run(text, None, None);
        crate::error::require_features(n, false)?;
        Ok(fp)
    }

    /// The fingerprints of many texts, computed in parallel on rayon's
    /// thread pool, in input order.
    pub fn fingerprint_batch<S: AsRef<str> + Sync>(&self, texts: &[S]) -> Vec<Fingerprint> {
        texts.par_iter().map(|t| self.fingerprint(t.as_ref())).collect()
    }

    /// The fingerprint of `text` with every feature that voted, the lane
    /// sums and the margins.
    pub fn explain(&self, text: &str) -> Explanation {
        let mut ex = Explanation {
            fingerprint: Fingerprint::new(0, self.bits),
            features: Vec::new(),
            lanes: Vec::new(),
            total_weight: 0.0,
            feature_count: 0,
        };
        (ex.fingerprint, ex.feature_count) = self.run(text, Some(&mut ex), None);
        ex
    }

    /// The fingerprint of features with weights the caller chose: each is
    /// hashed with this pipeline's hash and votes with its weight, in the
    /// order given. Normalization, tokenization, filtering, weighting and
    /// selection are skipped, so the features must already be what the
    /// pipeline would produce for its fingerprints to be comparable (for
    /// a byte-grams pipeline, windows escaped as
    /// [`features`](Self::features) gives them).
    ///
    /// # Errors
    ///
    /// A weight that is not finite.
    pub fn fingerprint_weighted<S: AsRef<str>>(
        &self,
        features: impl IntoIterator<Item = (S, f64)>,
    ) -> Result<Fingerprint> {
        let mut votes = Vec::new();
        let bytes = self.stages.tokenizer().is_bytes();
        for (f, w) in features {
            if !w.is_finite() {
                return Err(Error::Config(format!(
                    "weight of feature {:?} is {w}; weights must be finite numbers",
                    f.as_ref()
                )));
            }
            let f = f.as_ref();
            let hash = match bytes {
                // Byte windows arrive as `features` gives them: escaped.
                true => {
                    let bytes = unescape_bytes(f).ok_or_else(|| {
                        Error::Config(format!(
                            "feature {f:?} is not a byte window as this byte-grams pipeline writes \
                             them (bytes as UTF-8, `\\\\` for a backslash, `\\xNN` for others)"
                        ))
                    })?;
                    self.hash.hash(self.bits, &bytes)
                }
                false => self.hash.hash(self.bits, f.as_bytes()),
            };
            votes.push(Vote { hash, weight: w });
        }
        let mut lanes = Lanes::new(self.bits);
        lanes.add(&votes);
        Ok(lanes.fingerprint_by(self.vote))
    }

    /// The features of `text` that vote, with their weights, in voting order.
    pub fn features(&self, text: &str) -> Vec<(String, f64)> {
        self.explain(text).features.into_iter().map(|f| (f.feature, f.weight)).collect()
    }

    /// The tokens of `text` after normalization, tokenization and
    /// filtering, before shingling: what an IDF table must be keyed by.
    pub fn tokens(&self, text: &str) -> Vec<String> {
        self.stages.tokens(text)
    }

    /// [`fingerprint_counted`](Self::fingerprint_counted), and the hashes of
    /// the text's token 3-shingles appended to `shingles`
    /// ([`similarity::shingle_hashes`](crate::similarity::shingle_hashes)):
    /// what verification compares, made from the tokens the fingerprint is
    /// made of instead of tokenizing the text again.
    pub fn fingerprint_keeping_shingles(&self, text: &str, shingles: &mut Vec<u64>) -> (Fingerprint, usize) {
        self.run(text, None, Some(shingles))
    }

    /// Runs the pipeline; returns the fingerprint and how many features
    /// voted. With `keep`, the text's verification shingles are appended
    /// to it.
    fn run(
        &self,
        text: &str,
        explain: Option<&mut Explanation>,
        keep: Option<&mut Vec<u64>>,
    ) -> (Fingerprint, usize) {
        let config = self.stages.config();
        let norm = self.stages.normalize(text);
        let keep = match keep {
            // The fast paths below have no token list: the shingles are
            // made from the text.
            Some(out)
                if self.stages.tokenizer().byte_grams().is_some()
                    || matches!(self.stages.tokenizer(), TokenizerConfig::CharNgrams { .. }) =>
            {
                crate::similarity::shingle_hashes(&self.stages, text, SHINGLE, out);
                None
            }
            keep => keep,
        };
        if let Some(grams) = self.stages.tokenizer().byte_grams() {
            return self.byte_votes(grams, norm.as_bytes(), explain);
        }
        // Per-occurrence voting with weight 1 sums to exactly the same lanes
        // as voting each distinct feature with its count (integers are exact
        // in f64), so tf with every feature voting skips counting, unless
        // hashing costs more than counting.
        let unit_votes = explain.is_none()
            && matches!(config.weight, WeightConfig::Tf)
            && config.select.is_all()
            && !self.hash.is_expensive();
        if let TokenizerConfig::CharNgrams { n, .. } = *self.stages.tokenizer() {
            // Enough characters for one gram: otherwise the tokenizer's
            // short-text rule decides.
            if unit_votes && !self.stages.has_filters() && norm.len() >= n && has_chars(&norm, n) {
                return self.ngram_votes(&norm, n);
            }
        }
        if unit_votes && keep.is_none() {
            // One pass: the features are hashed and counted a chunk at a
            // time, as the tokenizer finds them.
            let mut votes = UnitVotes::new(self.bits);
            let mut hashes = Vec::with_capacity(256);
            let count = self.stages.for_each_chunk(&norm, |chunk| {
                hashes.clear();
                self.hash.hash_batch(self.bits, chunk, &mut hashes);
                votes.add(&hashes);
            });
            return (votes.fingerprint_by(self.vote), count);
        }
        let tokens = self.stages.filtered_tokens(&norm);
        if let Some(out) = keep {
            crate::similarity::shingle_hashes_of_tokens(tokens.iter().copied(), SHINGLE, out);
        }
        self.stages.shingled(tokens, |features| self.vote(features, unit_votes, explain))
    }

    /// Votes the features: unit votes when every occurrence votes with
    /// weight 1, else weighed, selected and voted.
    fn vote(
        &self,
        features: &[&str],
        unit_votes: bool,
        explain: Option<&mut Explanation>,
    ) -> (Fingerprint, usize) {
        if unit_votes {
            // In chunks, so the hashes stay in the nearest cache.
            let mut votes = UnitVotes::new(self.bits);
            let mut hashes = Vec::with_capacity(256);
            for chunk in features.chunks(256) {
                hashes.clear();
                self.hash.hash_batch(self.bits, chunk, &mut hashes);
                votes.add(&hashes);
            }
            return (votes.fingerprint_by(self.vote), features.len());
        }
        self.weighted_votes(features, Lanes::new(self.bits), explain)
    }

    /// Hashes the character `n`-grams in place (byte windows of ASCII
    /// text) and counts unit votes, without a list of features or of hashes.
    fn ngram_votes(&self, norm: &str, n: usize) -> (Fingerprint, usize) {
        let mut votes = UnitVotes::new(self.bits);
        match self.bits {
            // 64-bit hashes stay 64-bit words end to end.
            Bits::B64 => self.hash.char_windows::<u64>(norm, n, |hashes| votes.add64(hashes)),
            Bits::B128 => self.hash.char_windows::<u128>(norm, n, |hashes| votes.add(hashes)),
        }
        (votes.fingerprint_by(self.vote), votes.len() as usize)
    }

    /// Counts the distinct byte windows and votes each with its count, in
    /// byte order (counts are integers, so the lanes do not depend on the
    /// order). Hashes the raw bytes; explanations show them escaped.
    fn byte_votes(
        &self,
        grams: ByteGrams,
        bytes: &[u8],
        explain: Option<&mut Explanation>,
    ) -> (Fingerprint, usize) {
        let counted = grams.counted(bytes);
        let votes: Vec<Vote> = counted
            .iter()
            .map(|&(w, c)| Vote { hash: self.hash.hash(self.bits, w), weight: c as f64 })
            .collect();
        let mut lanes = Lanes::new(self.bits);
        lanes.add(&votes);
        let fp = lanes.fingerprint_by(self.vote);
        let count = counted.iter().map(|&(_, c)| c as usize).sum();
        if let Some(ex) = explain {
            ex.features = counted
                .iter()
                .zip(&votes)
                .map(|(&(w, _), v)| FeatureVote {
                    feature: escape_bytes(w),
                    weight: v.weight,
                    hash: Fingerprint::new(v.hash, self.bits),
                })
                .collect();
            ex.lanes = lanes.sums().to_vec();
            ex.total_weight = votes.iter().map(|v| v.weight).sum();
        }
        (fp, count)
    }

    /// Counts distinct features, weighs and selects them, and votes in the
    /// selection's order.
    fn weighted_votes(
        &self,
        features: &[&str],
        mut lanes: Lanes,
        explain: Option<&mut Explanation>,
    ) -> (Fingerprint, usize) {
        // Sized for every feature distinct, so the map never grows.
        let mut index: FxHashMap<&str, u32> =
            FxHashMap::with_capacity_and_hasher(features.len(), Default::default());
        let mut distinct: Vec<&str> = Vec::with_capacity(features.len());
        let mut counts: Vec<u32> = Vec::with_capacity(features.len());
        let mut sequence: Vec<u32> = Vec::with_capacity(features.len());
        for f in features {
            let id = *index.entry(f).or_insert_with(|| {
                distinct.push(f);
                counts.push(0);
                (distinct.len() - 1) as u32
            });
            counts[id as usize] += 1;
            sequence.push(id);
        }
        let doc = FeatureCounts { distinct: &distinct, counts: &counts, sequence: &sequence };
        let mut weights = Vec::with_capacity(distinct.len());
        self.weighter.weigh(&doc, &mut weights);
        let chosen = self.stages.config().select.select(&distinct, &weights);
        let chosen_features: Vec<&str> = chosen.iter().map(|&i| distinct[i as usize]).collect();
        let mut hashes = Vec::with_capacity(chosen.len());
        self.hash.hash_batch(self.bits, &chosen_features, &mut hashes);
        let votes: Vec<Vote> =
            chosen.iter().zip(hashes).map(|(&i, hash)| Vote { hash, weight: weights[i as usize] }).collect();
        lanes.add(&votes);
        let fp = lanes.fingerprint_by(self.vote);
        if let Some(ex) = explain {
            ex.features = chosen_features
                .iter()
                .zip(&votes)
                .map(|(f, v)| FeatureVote {
                    feature: (*f).to_owned(),
                    weight: v.weight,
                    hash: Fingerprint::new(v.hash, self.bits),
                })
                .collect();
            ex.lanes = lanes.sums().to_vec();
            ex.total_weight = votes.iter().map(|v| v.weight.abs()).sum();
        }
        (fp, features.len())
    }
}

/// Whether `text` has at least `n` characters.
fn has_chars(text: &str, n: usize) -> bool {
    text.is_ascii() || text.chars().nth(n.saturating_sub(1)).is_some()
}

impl AsRef<Stages> for Fingerprinter {
    fn as_ref(&self) -> &Stages {
        &self.stages
    }
}

impl FeatureSet {
    /// The feature set of `text` under `fingerprinter`'s pipeline: the
    /// distinct features that vote (after weighting and selection).
    pub fn of(fingerprinter: &Fingerprinter, text: &str) -> FeatureSet {
        FeatureSet::from_features(fingerprinter.features(text).iter().map(|(f, _)| f.as_str()))
    }
}

/// Builds a [`Fingerprinter`] stage by stage, starting from the `default`
/// preset. Every setter says what it replaces and what the default is.
///
/// # Example
///
/// ```
/// use neardup::{Fingerprinter, TokenizerConfig, WeightConfig, Bits};
///
/// let fingerprinter = Fingerprinter::builder()
///     .tokenizer(TokenizerConfig::CharNgrams { n: 3, short: Default::default() })
///     .weight(WeightConfig::Tf)
///     .bits(Bits::B128)
///     .build()?;
/// assert_eq!(fingerprinter.fingerprint("hello world").to_string().len(), 32);
/// # Ok::<(), neardup::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct FingerprinterBuilder {
    config: PipelineConfig,
}

impl Default for FingerprinterBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl FingerprinterBuilder {
    /// A builder holding the `default` preset's stages, with no radius of
    /// its own (so [`PipelineConfig::radius`] gives the preset's rule while
    /// the stages stay the preset's, and the classic k after a change).
    pub fn new() -> FingerprinterBuilder {
        let preset = crate::config::presets::config("default").expect("the default preset exists");
        FingerprinterBuilder { config: preset.stages() }
    }

    /// A builder holding `config`.
    pub fn from_config(config: PipelineConfig) -> FingerprinterBuilder {
        FingerprinterBuilder { config }
    }

    /// The normalizers, in order. By default, these are NFKC then lower case.
    pub fn normalize(&mut self, steps: Vec<NormalizerConfig>) -> &mut Self {
        self.config.normalize = steps;
        self
    }

    /// The tokenizer. By default, this is word 3-shingles over `words`.
    pub fn tokenizer(&mut self, t: TokenizerConfig) -> &mut Self {
        self.config.tokenizer = t;
        self
    }

    /// The filters. By default, punctuation-only tokens are dropped.
    pub fn filters(&mut self, f: Vec<FilterConfig>) -> &mut Self {
        self.config.filters = f;
        self
    }

    /// The weighter. By default, this is `tf`.
    pub fn weight(&mut self, w: WeightConfig) -> &mut Self {
        self.config.weight = w;
        self
    }

    /// The selection. By default, every feature votes.
    pub fn select(&mut self, s: SelectConfig) -> &mut Self {
        self.config.select = s;
        self
    }

    /// The feature hash. By default, this is XXH3.
    pub fn hash(&mut self, h: HashConfig) -> &mut Self {
        self.config.hash = h;
        self
    }

    /// The fingerprint width. By default, this is 64 bits.
    pub fn bits(&mut self, b: Bits) -> &mut Self {
        self.config.bits = b;
        self
    }

    /// The near-duplicate rule. By default, none of its own: the
    /// `default` preset's while the stages are its, else the classic k.
    pub fn radius(&mut self, r: Radius) -> &mut Self {
        self.config.radius = Some(r);
        self
    }

    /// The configuration built so far.
    pub fn config(&self) -> &PipelineConfig {
        &self.config
    }

    /// Loads the pipeline.
    ///
    /// # Errors
    ///
    /// As [`Fingerprinter::new`].
    pub fn build(&self) -> Result<Fingerprinter> {
        Fingerprinter::new(self.config.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A new rule without reloading gives what loading the changed
    /// configuration gives, and the same fingerprints.
    #[test]
    fn with_radius_equals_loading_the_changed_config() {
        let f = Fingerprinter::preset("default").unwrap();
        let changed = f.clone().with_radius(Radius::fixed(5)).unwrap();
        let loaded =
            Fingerprinter::new(PipelineConfig { radius: Some(Radius::fixed(5)), ..f.config().clone() })
                .unwrap();
        assert_eq!((changed.config(), changed.radius()), (loaded.config(), loaded.radius()));
        let text = "the same fingerprint whatever the rule says about it";
        assert_eq!(changed.fingerprint(text), f.fingerprint(text));
        let e = f.with_radius(Radius::fixed(65)).unwrap_err().to_string();
        assert!(e.contains("more than the 64 bits"), "{e}");
    }

    #[test]
    fn a_minhash_pipeline_is_not_a_fingerprinter() {
        let minhash =
            PipelineConfig::from_toml("method = \"minhash\"\ntokenizer = { type = \"words\" }\n").unwrap();
        let e = Fingerprinter::new(minhash).unwrap_err().to_string();
        assert!(e.contains("MinHasher"), "{e}");
    }
}

/// Built without jieba (`--no-default-features`): the pipelines that need
/// it are refused with a message that says so; the others work.
#[cfg(all(test, not(feature = "jieba")))]
mod without_jieba {
    use super::Fingerprinter;

    #[test]
    fn jieba_pipelines_are_refused_others_work() {
        let e = Fingerprinter::preset("default").unwrap_err().to_string();
        assert!(e.contains("`jieba` feature"), "{e}");
        assert!(Fingerprinter::preset("keywords").is_err());
        let py = Fingerprinter::preset("python-simhash").unwrap();
        assert_eq!(py.fingerprint("").to_string(), "e9800998ecf8427e");
    }
}
