//! MinHash beside SimHash: a signature of K 32-bit values per document
//! whose share of equal values estimates the Jaccard similarity of the two
//! documents' feature sets, and LSH banding ([`lsh`]) to find the pairs
//! above a threshold without comparing every pair.
//!
//! A MinHash pipeline is a [`PipelineConfig`] with `method = "minhash"`:
//! the same normalize → tokenize → filter stages as SimHash (so jieba,
//! shingles and stop words carry over), then the set of features goes
//! into a signature ([`sketch`]: one-permutation hashing with optimal
//! densification, O(features + K)) instead of the weighted vote. Weights
//! and selection do not apply (a set has no weights).
//!
//! ```
//! use neardup::minhash::MinHasher;
//!
//! let minhasher = MinHasher::preset("minhash")?;
//! let a = minhasher.signature("the quick brown fox jumps over the lazy dog near the river bank today")?;
//! let b = minhasher.signature("the quick brown fox jumps over the lazy dog near the river bank yesterday")?;
//! let c = minhasher.signature("a completely different sentence about cooking rice and beans slowly")?;
//! assert!(a.jaccard(&b) > 0.5 && a.jaccard(&c) < 0.2);
//! # Ok::<(), neardup::Error>(())
//! ```

pub mod datasketch;
pub mod index;
mod keyed;
pub mod lsh;
pub mod sketch;

use rayon::prelude::*;

pub use keyed::KeyedLsh;
pub use lsh::{Banding, LshConfig};

pub use crate::config::method::{Method, MinHashConfig, DEFAULT_PERMUTATIONS, MAX_PERMUTATIONS};
use crate::config::PipelineConfig;
use crate::error::{Error, Result};
use crate::similarity::{FeatureSet, SHINGLE};
use crate::stages::Stages;

/// A MinHash signature: K 32-bit values.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Signature(Box<[u32]>);

impl Signature {
    /// A signature from its values.
    pub fn from_values(values: impl Into<Box<[u32]>>) -> Signature {
        Signature(values.into())
    }

    /// The values.
    pub fn values(&self) -> &[u32] {
        &self.0
    }

    /// How many values (K).
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True for a signature of no values (never made by a [`MinHasher`]).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The estimated Jaccard similarity: the share of equal values.
    ///
    /// # Panics
    ///
    /// If the signatures differ in length.
    pub fn jaccard(&self, other: &Signature) -> f64 {
        estimate(&self.0, &other.0)
    }

    /// The values as lower-case hex, 8 digits each: the text form.
    pub fn to_hex(&self) -> String {
        self.0.iter().map(|v| format!("{v:08x}")).collect()
    }

    /// Parses [`to_hex`](Self::to_hex)'s form.
    ///
    /// # Errors
    ///
    /// [`Error::ParseSignature`] for a length that is not a multiple of 8 or a
    /// non-hex digit.
    pub fn from_hex(s: &str) -> Result<Signature> {
        let bad = |reason| Error::ParseSignature { input: truncate(s).to_owned(), reason };
        if s.is_empty() || !s.len().is_multiple_of(8) || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad("expected 8 hex digits per value"));
        }
        s.as_bytes()
            .chunks(8)
            .map(|c| u32::from_str_radix(std::str::from_utf8(c).expect("ascii"), 16))
            .collect::<std::result::Result<Vec<u32>, _>>()
            .map(Signature::from_values)
            .map_err(|_| bad("not hex"))
    }

    /// The low bits of each value, for storage: a quarter or half the
    /// bytes. Compare with [`b_bit_jaccard`].
    pub fn b_bit(&self, bits: BBits) -> Vec<u8> {
        match bits {
            BBits::Eight => self.0.iter().map(|&v| v as u8).collect(),
            BBits::Sixteen => self.0.iter().flat_map(|&v| (v as u16).to_le_bytes()).collect(),
        }
    }
}

/// How many low bits of each value a b-bit signature keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BBits {
    /// One byte per value.
    Eight,
    /// Two bytes per value (little-endian).
    Sixteen,
}

impl BBits {
    /// 8 or 16.
    pub fn get(self) -> u32 {
        match self {
            BBits::Eight => 8,
            BBits::Sixteen => 16,
        }
    }
}

fn truncate(s: &str) -> &str {
    match s.char_indices().nth(24) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// The share of equal values of two signatures.
///
/// # Panics
///
/// If they differ in length or are empty.
pub fn estimate(a: &[u32], b: &[u32]) -> f64 {
    assert!(!a.is_empty(), "empty signatures");
    equal_values(a, b) as f64 / a.len() as f64
}

/// How many positions of two signatures hold equal values (the estimate
/// is this over K; K minus this is their distance).
///
/// # Panics
///
/// If they differ in length.
#[inline]
pub fn equal_values(a: &[u32], b: &[u32]) -> usize {
    assert_eq!(a.len(), b.len(), "signatures of different lengths");
    a.iter().zip(b).filter(|(x, y)| x == y).count()
}

/// The Jaccard estimate from two `b`-bit signatures ([`Signature::b_bit`]):
/// values agree by chance with probability 2^−b, so the share of equal
/// values `E` gives `(E − 2^−b) / (1 − 2^−b)` (Li & König 2010), clamped
/// to [0, 1].
///
/// # Panics
///
/// If they differ in length or are empty.
pub fn b_bit_jaccard(a: &[u8], b: &[u8], bits: BBits) -> f64 {
    assert_eq!(a.len(), b.len(), "signatures of different lengths");
    let (equal, k) = match bits {
        BBits::Eight => (a.iter().zip(b).filter(|(x, y)| x == y).count(), a.len()),
        BBits::Sixteen => {
            (a.chunks_exact(2).zip(b.chunks_exact(2)).filter(|(x, y)| x == y).count(), a.len() / 2)
        }
    };
    assert!(k > 0, "empty signatures");
    let chance = 0.5f64.powi(bits.get() as i32);
    ((equal as f64 / k as f64 - chance) / (1.0 - chance)).clamp(0.0, 1.0)
}

/// Makes MinHash signatures: a [`PipelineConfig`] with `method =
/// "minhash"`, loaded.
#[derive(Clone, Debug)]
pub struct MinHasher {
    stages: Stages,
    config: MinHashConfig,
    lsh: LshConfig,
    banding: Banding,
}

impl MinHasher {
    /// Loads a MinHash pipeline.
    ///
    /// # Errors
    ///
    /// A configuration that is not valid or whose method is not minhash.
    pub fn new(config: PipelineConfig) -> Result<MinHasher> {
        if config.method != Method::Minhash {
            return Err(Error::Config(
                "this pipeline's method is simhash: a MinHasher needs method = \"minhash\" (e.g. --preset minhash)"
                    .into(),
            ));
        }
        let mh = config.minhash.clone().unwrap_or_default();
        let lsh = config.lsh.clone().unwrap_or_default();
        let banding = lsh.banding(mh.permutations).map_err(Error::Config)?;
        mh.validate().map_err(Error::Config)?;
        let stages = Stages::load(config)?;
        Ok(MinHasher { stages, config: mh, lsh, banding })
    }

    /// Loads the pipeline of a named preset (see [`crate::presets`]).
    ///
    /// # Errors
    ///
    /// An unknown name, or a preset that is not a MinHash pipeline.
    pub fn preset(name: &str) -> Result<MinHasher> {
        MinHasher::new(crate::config::presets::config(name)?)
    }

    /// The whole configuration.
    pub fn config(&self) -> &PipelineConfig {
        self.stages.config()
    }

    /// Values per signature (K).
    pub fn permutations(&self) -> usize {
        self.config.permutations
    }

    /// The Jaccard threshold of a near duplicate.
    pub fn threshold(&self) -> f64 {
        self.lsh.threshold
    }

    /// The near-duplicate rule as configured.
    pub fn lsh(&self) -> &LshConfig {
        &self.lsh
    }

    /// The banding candidates are found by.
    pub fn banding(&self) -> Banding {
        self.banding
    }

    /// The signature of `text` and how many features it had (repeats
    /// included), or `None` for a text without features.
    pub fn signature_counted(&self, text: &str) -> Option<(Signature, usize)> {
        if self.stages.tokenizer().is_bytes() {
            return self.stages.with_features(text, |features| self.sign_features(features));
        }
        // One pass: the features are hashed into their bins a chunk at a time.
        let norm = self.stages.normalize(text);
        let seed = self.config.seed;
        let mut bins = sketch::Bins::new(self.config.permutations);
        let count = self.stages.for_each_chunk(&norm, |chunk| {
            for f in chunk {
                bins.add(sketch::feature_hash(f, seed));
            }
        });
        let mut values = vec![0u32; self.config.permutations];
        bins.finish(seed, &mut values).then(|| (Signature::from_values(values), count))
    }

    /// [`signature_counted`](Self::signature_counted), and the hashes of
    /// the text's token 3-shingles appended to `shingles`
    /// ([`shingle_hashes`](crate::similarity::shingle_hashes)): what
    /// verification compares, made from the tokens the signature is made
    /// of instead of tokenizing the text again.
    pub fn signature_keeping_shingles(
        &self,
        text: &str,
        shingles: &mut Vec<u64>,
    ) -> Option<(Signature, usize)> {
        use crate::similarity::{shingle_hashes_of_tokens, SHINGLE};
        if self.stages.tokenizer().is_bytes() {
            let tokens = self.stages.tokens(text);
            shingle_hashes_of_tokens(tokens.iter().map(String::as_str), SHINGLE, shingles);
            return self.sign_features(&tokens.iter().map(String::as_str).collect::<Vec<_>>());
        }
        let norm = self.stages.normalize(text);
        let tokens = self.stages.filtered_tokens(&norm);
        shingle_hashes_of_tokens(tokens.iter().copied(), SHINGLE, shingles);
        self.stages.shingled(tokens, |features| self.sign_features(features))
    }

    /// The signature of a document's features (the text stages done) and
    /// how many there were.
    fn sign_features(&self, features: &[&str]) -> Option<(Signature, usize)> {
        let mut values = vec![0u32; self.config.permutations];
        let seed = self.config.seed;
        let hashes = features.iter().map(|f| sketch::feature_hash(f, seed));
        sketch::one_permutation(hashes, seed, &mut values)
            .then(|| (Signature::from_values(values), features.len()))
    }

    /// The signature of a set of features given as they are (shingles made
    /// elsewhere), without the text stages; repeats count once. `None` for
    /// no features.
    pub fn signature_of_features<S: AsRef<str>>(
        &self,
        features: impl IntoIterator<Item = S>,
    ) -> Option<Signature> {
        self.signature_of_hashes(features.into_iter().map(|f| self.feature_hash(f.as_ref())))
    }

    /// The 64-bit hash a feature enters this pipeline's signatures with
    /// (XXH3 under the pipeline's seed): for callers that hash features as
    /// they read them and sign with [`signature_of_hashes`](Self::signature_of_hashes).
    #[inline]
    pub fn feature_hash(&self, feature: &str) -> u64 {
        sketch::feature_hash(feature, self.config.seed)
    }

    /// The signature of features given by their
    /// [`feature_hash`](Self::feature_hash)es; repeats count once. `None`
    /// for none.
    pub fn signature_of_hashes(&self, hashes: impl IntoIterator<Item = u64>) -> Option<Signature> {
        let mut values = vec![0u32; self.config.permutations];
        sketch::one_permutation(hashes, self.config.seed, &mut values).then(|| Signature::from_values(values))
    }

    /// The signature of `text`.
    ///
    /// # Errors
    ///
    /// [`Error::EmptyDocument`] for a text without features.
    pub fn signature(&self, text: &str) -> Result<Signature> {
        self.signature_counted(text).map(|(s, _)| s).ok_or(Error::EmptyDocument)
    }

    /// The signatures of many texts, in parallel, in order (`None` for
    /// texts without features).
    pub fn signature_batch<S: AsRef<str> + Sync>(&self, texts: &[S]) -> Vec<Option<Signature>> {
        texts.par_iter().map(|t| self.signature_counted(t.as_ref()).map(|(s, _)| s)).collect()
    }

    /// The features of `text` (normalized, tokenized, filtered, shingled).
    pub fn features(&self, text: &str) -> Vec<String> {
        self.stages.with_features(text, |f| f.iter().map(|s| (*s).to_owned()).collect())
    }

    /// The text stages (normalize → tokenize → filter → shingle).
    pub fn stages(&self) -> &Stages {
        &self.stages
    }
    /// The exact Jaccard similarity of the word 3-shingles of two texts'
    /// tokens: what verification compares, for both methods (see
    /// [`ShingleJaccard`](crate::dedup::ShingleJaccard)).
    pub fn shingle_jaccard(&self, a: &str, b: &str) -> f64 {
        let set = |t: &str| FeatureSet::shingles(&self.stages, t, SHINGLE);
        set(a).jaccard(&set(b))
    }

    /// The exact Jaccard similarity of two texts' feature sets.
    pub fn exact_jaccard(&self, a: &str, b: &str) -> f64 {
        let set = |t: &str| FeatureSet::from_features(self.features(t).iter().map(String::as_str));
        set(a).jaccard(&set(b))
    }
}

impl AsRef<Stages> for MinHasher {
    fn as_ref(&self) -> &Stages {
        &self.stages
    }
}
