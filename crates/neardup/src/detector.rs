//! A loaded pipeline of either method: what front ends hold when the
//! configuration (a preset, a file, a store's) decides between SimHash
//! fingerprints and MinHash signatures.
//!
//! ```
//! use neardup::detector::Detector;
//! use neardup::minhash::Method;
//!
//! let d = Detector::preset("minhash")?;
//! assert_eq!(d.method(), Method::Minhash);
//! assert_eq!(d.rule(), "Jaccard ≥ 0.5 (32 bands × 4 rows of 128 values)");
//! let d = d.with_method(Some(Method::Minhash), Some(0.6))?;
//! assert_eq!(d.minhasher().unwrap().threshold(), 0.6);
//! // A threshold is MinHash's; a method must match the pipeline's.
//! assert!(Detector::preset("default")?.with_method(None, Some(0.6)).is_err());
//! assert!(Detector::preset("default")?.with_method(Some(Method::Minhash), None).is_err());
//! # Ok::<(), neardup::Error>(())
//! ```

use std::path::Path;

use crate::config::presets;
use crate::config::PipelineConfig;
use crate::config::{LshConfig, Method};
use crate::dedup::{job, DedupOptions, DedupRecords, DedupResult, Records, SignatureRecords};
use crate::error::{Error, Result};
use crate::minhash::MinHasher;
use crate::radius::Radius;
use crate::simhash::Fingerprinter;
use crate::sketch::Sketch;

/// A SimHash [`Fingerprinter`] or a MinHash [`MinHasher`], as the
/// configuration's `method` says.
#[derive(Clone, Debug)]
pub enum Detector {
    /// `method = "simhash"`: 64- or 128-bit fingerprints, a radius.
    SimHash(Fingerprinter),
    /// `method = "minhash"`: signatures, a Jaccard threshold, LSH bands.
    MinHash(MinHasher),
}

impl Detector {
    /// Loads `config` as its method says.
    ///
    /// # Errors
    ///
    /// As [`Fingerprinter::new`] and [`MinHasher::new`].
    pub fn new(config: PipelineConfig) -> Result<Detector> {
        Ok(match config.method {
            Method::Simhash => Detector::SimHash(Fingerprinter::new(config)?),
            Method::Minhash => Detector::MinHash(MinHasher::new(config)?),
        })
    }

    /// Loads the preset `name` (see [`crate::presets`]).
    ///
    /// # Errors
    ///
    /// An unknown name.
    pub fn preset(name: &str) -> Result<Detector> {
        Detector::new(presets::config(name)?)
    }

    /// Loads a configuration file (see [`PipelineConfig::load`]).
    ///
    /// # Errors
    ///
    /// As [`PipelineConfig::load`] and [`new`](Self::new).
    pub fn from_file(path: impl AsRef<Path>) -> Result<Detector> {
        Detector::new(PipelineConfig::load(path)?)
    }

    /// Checks that this pipeline is of `method` (if given) and, for
    /// MinHash, sets the Jaccard `threshold` (if given; a banding fixed by
    /// the configuration stays, else it is chosen anew for the threshold).
    ///
    /// # Errors
    ///
    /// [`Error::Config`] when the method differs (saying which preset has
    /// the wanted one), or a threshold is given to a SimHash pipeline or
    /// lies outside (0, 1].
    pub fn with_method(self, method: Option<Method>, threshold: Option<f64>) -> Result<Detector> {
        if let Some(m) = method {
            if m != self.method() {
                let preset = if m == Method::Minhash { "minhash" } else { "default" };
                return Err(Error::Config(format!(
                    "this pipeline's method is {}, not {m}: use a {m} pipeline (e.g. the preset {preset}) \
                     or leave the method out",
                    self.method()
                )));
            }
        }
        match (self, threshold) {
            (d, None) => Ok(d),
            (Detector::SimHash(_), Some(_)) => Err(Error::Config(
                "a Jaccard threshold is a MinHash setting; a SimHash pipeline takes a radius k".into(),
            )),
            (Detector::MinHash(m), Some(t)) => {
                let mut config = m.config().clone();
                let lsh = config.lsh.take().unwrap_or_default();
                config.lsh = Some(LshConfig { threshold: t, ..lsh });
                Ok(Detector::MinHash(MinHasher::new(config)?))
            }
        }
    }

    /// The pipeline a deduplication runs, as every front end resolves it:
    /// `given` (a preset or file the caller loaded) or else the preset of
    /// the method asked for, of the one a radius `k` (SimHash) or a
    /// `threshold` (MinHash) implies, else of [`DEFAULT_METHOD`]
    /// (`default` or `minhash`); then checked against the method and given
    /// the threshold as in [`with_method`](Self::with_method), or the fixed
    /// radius `k` as in [`with_radius`](Self::with_radius). The detector's
    /// rule ([`rule`](Self::rule)) is then the one the dedup runs.
    ///
    /// ```
    /// use neardup::detector::Detector;
    /// use neardup::minhash::Method;
    ///
    /// assert_eq!(Detector::for_dedup(None, None, Some(4), None)?.method(), Method::Simhash);
    /// assert_eq!(Detector::for_dedup(None, None, Some(4), None)?.rule(), "k = 4");
    /// assert_eq!(Detector::for_dedup(None, None, None, Some(0.7))?.method(), Method::Minhash);
    /// let minhash = Detector::preset("minhash")?;
    /// assert!(Detector::for_dedup(Some(minhash), None, Some(4), None).is_err());
    /// # Ok::<(), neardup::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`with_method`](Self::with_method): a method (asked for, or
    /// implied by `k` or `threshold`) that is not the pipeline's, both `k`
    /// and `threshold`, a threshold outside (0, 1], a k beyond the
    /// fingerprint's bits.
    ///
    /// [`DEFAULT_METHOD`]: crate::presets::DEFAULT_METHOD
    pub fn for_dedup(
        given: Option<Detector>,
        method: Option<Method>,
        k: Option<u32>,
        threshold: Option<f64>,
    ) -> Result<Detector> {
        let method = method.or(crate::near::Near::of(k, threshold)?.method());
        let detector = match given {
            Some(d) => d,
            None => Detector::preset(presets::of_method(method.unwrap_or(presets::DEFAULT_METHOD)))?,
        };
        let detector = detector.with_method(method, threshold)?;
        match k {
            Some(k) => detector.with_radius(Radius::fixed(k)),
            None => Ok(detector),
        }
    }

    /// The same SimHash pipeline with another near-duplicate rule (the
    /// fingerprints do not change).
    ///
    /// # Errors
    ///
    /// A MinHash pipeline (whose rule is a threshold), or a k beyond the
    /// fingerprint's bits.
    pub fn with_radius(self, radius: Radius) -> Result<Detector> {
        match self {
            Detector::SimHash(f) => Ok(Detector::SimHash(f.with_radius(radius)?)),
            Detector::MinHash(_) => Err(Error::Config(
                "a radius k is a SimHash setting; a MinHash pipeline takes a Jaccard threshold".into(),
            )),
        }
    }

    /// The whole configuration.
    pub fn config(&self) -> &PipelineConfig {
        match self {
            Detector::SimHash(f) => f.config(),
            Detector::MinHash(m) => m.config(),
        }
    }

    /// Which method.
    pub fn method(&self) -> Method {
        self.config().method
    }

    /// The pipeline's text stages, loaded.
    pub fn stages(&self) -> &crate::stages::Stages {
        match self {
            Detector::SimHash(f) => f.stages(),
            Detector::MinHash(m) => m.as_ref(),
        }
    }

    /// The exact key of `text` ([`crate::dedup::exact_key`]) of the
    /// pipeline's normalized text, or of the raw text.
    pub fn exact_key(&self, text: &str, mode: crate::dedup::ExactText) -> u128 {
        crate::dedup::exact_key(&mode.text(self.stages(), text))
    }

    /// The fingerprinter, for a SimHash pipeline.
    pub fn fingerprinter(&self) -> Option<&Fingerprinter> {
        match self {
            Detector::SimHash(f) => Some(f),
            Detector::MinHash(_) => None,
        }
    }

    /// The MinHasher, for a MinHash pipeline.
    pub fn minhasher(&self) -> Option<&MinHasher> {
        match self {
            Detector::SimHash(_) => None,
            Detector::MinHash(m) => Some(m),
        }
    }

    /// The sketch of `text` and its feature count, by the empty-document
    /// rule every front end applies: a text without features is an
    /// [`Error::EmptyDocument`] unless `allow_empty`, and then it has no
    /// signature (MinHash: kept by dedup, never a near duplicate, left out
    /// of indexes) or the fingerprint its empty feature list votes (SimHash).
    ///
    /// ```
    /// use neardup::detector::Detector;
    ///
    /// let d = Detector::preset("minhash")?;
    /// assert_eq!(d.sign("one two three", false)?.1, 2);
    /// assert!(d.sign("，。！", false).is_err());
    /// assert_eq!(d.sign("，。！", true)?, (None, 0));
    /// let s = Detector::preset("default")?;
    /// assert!(s.sign("，。！", false).is_err() && s.sign("，。！", true)?.0.is_some());
    /// # Ok::<(), neardup::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::EmptyDocument`], as above.
    pub fn sign(&self, text: &str, allow_empty: bool) -> Result<(Option<Sketch>, usize)> {
        self.sign_keeping(text, allow_empty, None)
    }

    /// [`sign`](Self::sign), and the text's verification shingles appended
    /// to `shingles` ([`similarity::shingle_hashes`](crate::similarity::shingle_hashes)
    /// under this pipeline, at [`SHINGLE`](crate::similarity::SHINGLE)):
    /// what a dedup that verifies compares, made from the tokens the
    /// sketch is made of, so that no text is tokenized twice. See
    /// [`ShingleColumn`](crate::dedup::ShingleColumn).
    ///
    /// # Errors
    ///
    /// As [`sign`](Self::sign).
    pub fn sign_keeping_shingles(
        &self,
        text: &str,
        allow_empty: bool,
        shingles: &mut Vec<u64>,
    ) -> Result<(Option<Sketch>, usize)> {
        self.sign_keeping(text, allow_empty, Some(shingles))
    }

    fn sign_keeping(
        &self,
        text: &str,
        allow_empty: bool,
        shingles: Option<&mut Vec<u64>>,
    ) -> Result<(Option<Sketch>, usize)> {
        let (sketch, n) = match self {
            Detector::SimHash(f) => {
                let (fp, n) = match shingles {
                    Some(out) => f.fingerprint_keeping_shingles(text, out),
                    None => f.fingerprint_counted(text),
                };
                (Some(Sketch::Fingerprint(fp)), n)
            }
            Detector::MinHash(m) => {
                let signed = match shingles {
                    Some(out) => m.signature_keeping_shingles(text, out),
                    None => m.signature_counted(text),
                };
                match signed {
                    Some((s, n)) => (Some(Sketch::Signature(s)), n),
                    None => (None, 0),
                }
            }
        };
        crate::error::require_features(n, allow_empty)?;
        Ok((sketch, n))
    }

    /// An empty column of records of this method, for [`dedup`](Self::dedup).
    pub fn records(&self) -> DedupRecords {
        match self {
            Detector::SimHash(f) => DedupRecords::Fingerprints(Records::new(f.bits())),
            Detector::MinHash(m) => DedupRecords::Signatures(SignatureRecords::new(m.permutations())),
        }
    }

    /// The records of `texts`, signed in parallel (a text without features
    /// has no signature; see [`sign`](Self::sign)).
    pub fn records_of<T: AsRef<str> + Sync>(&self, texts: &[T]) -> DedupRecords {
        match self {
            Detector::SimHash(f) => DedupRecords::Fingerprints(Records::from_texts(f, texts)),
            Detector::MinHash(m) => DedupRecords::Signatures(SignatureRecords::from_texts(m, texts)),
        }
    }

    /// The exact keys of `texts` ([`Detector::exact_key`]), hashed in
    /// parallel: records for `--method exact`.
    pub fn exact_records<T: AsRef<str> + Sync>(
        &self,
        texts: &[T],
        mode: crate::dedup::ExactText,
    ) -> DedupRecords {
        use rayon::prelude::*;
        let keys: Vec<(u128, usize)> = texts
            .par_iter()
            .map(|t| (self.exact_key(t.as_ref(), mode), t.as_ref().chars().count()))
            .collect();
        let mut records = crate::dedup::ExactRecords::new();
        for (k, chars) in keys {
            records.push(k, chars);
        }
        DedupRecords::Exact(records)
    }

    /// Removes near duplicates from `records` by this detector's method and
    /// rule ([`rule`](Self::rule)): a batch (clusters, one kept per
    /// cluster) or online, as `options` say. `texts` (by position) are
    /// needed only to verify pairs (`options.verify`); pass `&[] as &[&str]`
    /// otherwise.
    ///
    /// ```
    /// use neardup::dedup::DedupOptions;
    /// use neardup::detector::Detector;
    ///
    /// let texts = [
    ///     "the quick brown fox jumps over the lazy dog near the river bank today",
    ///     "a completely different sentence about cooking rice and beans slowly",
    ///     "the quick brown fox jumps over the lazy dog near the river bank yesterday",
    /// ];
    /// for method in ["minhash", "default"] {
    ///     let d = Detector::preset(method)?;
    ///     let found = d.dedup(&d.records_of(&texts), &texts, &DedupOptions::default())?;
    ///     assert_eq!(found.kept_mask(texts.len()), [true, true, false], "{method}");
    /// }
    /// # Ok::<(), neardup::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// Records of the other method, verification without the texts, or
    /// what the method's dedup refuses (too many records, an impossible
    /// layout).
    pub fn dedup<X: crate::dedup::Texts + ?Sized>(
        &self,
        records: &DedupRecords,
        texts: &X,
        options: &DedupOptions,
    ) -> Result<DedupResult> {
        if options.verify.is_some() && texts.count() != records.len() {
            return Err(Error::Config(format!(
                "verification needs every text: {} records but {} texts",
                records.len(),
                texts.count()
            )));
        }
        self.dedup_aside(records, texts, options, None)
    }

    /// Removes near duplicates from new `records` that are checked against
    /// an index too: `matches` gives, for the new records near an indexed
    /// document, the nearest such (by position). The indexed documents
    /// count as kept before any new one (see [`DedupResult::against`]).
    ///
    /// # Errors
    ///
    /// As [`dedup`](Self::dedup).
    pub fn dedup_against<X: crate::dedup::Texts + ?Sized>(
        &self,
        records: &DedupRecords,
        texts: &X,
        options: &DedupOptions,
        matches: &std::collections::BTreeMap<u32, crate::dedup::IndexMatch>,
    ) -> Result<DedupResult> {
        let aside = |i: u32| matches.contains_key(&i);
        let justified = options.clusters == crate::dedup::ClusterMode::Justified && !options.online;
        let found = self.dedup_aside(records, texts, options, justified.then_some(&aside))?;
        let mode = if justified { options.clusters } else { crate::dedup::ClusterMode::Components };
        Ok(found.against(matches, mode))
    }

    fn dedup_aside<X: crate::dedup::Texts + ?Sized>(
        &self,
        records: &DedupRecords,
        texts: &X,
        options: &DedupOptions,
        aside: Option<crate::dedup::Aside<'_>>,
    ) -> Result<DedupResult> {
        match (self, records) {
            (Detector::SimHash(f), DedupRecords::Fingerprints(r)) => {
                job::fingerprints(r, f.radius(), Some((f, texts)), options, aside)
            }
            (Detector::MinHash(m), DedupRecords::Signatures(r)) => {
                job::signatures(r, m, texts, options, aside)
            }
            // Online, each record is kept unless it equals one kept before
            // it: the first of each group, as in a batch keeping the first.
            (_, DedupRecords::Exact(r)) => Ok(
                r.dedup(if options.online { crate::dedup::Keep::First } else { options.keep }, options.pairs)
            ),
            _ => {
                Err(Error::Config(format!("records of the other method for this {} pipeline", self.method())))
            }
        }
    }

    /// The verification `dedup` runs unless told otherwise
    /// ([`Method::default_verify`]): SimHash's candidate pairs by the
    /// Jaccard similarity of their word 3-shingles, none for MinHash.
    ///
    /// ```
    /// use neardup::detector::Detector;
    ///
    /// assert_eq!(Detector::preset("default")?.default_verify().map(|t| t.get()), Some(0.3));
    /// assert_eq!(Detector::preset("minhash")?.default_verify(), None);
    /// # Ok::<(), neardup::Error>(())
    /// ```
    pub fn default_verify(&self) -> Option<crate::dedup::Threshold> {
        self.method().default_verify()
    }

    /// The near-duplicate rule as data, for summaries: `{"method":
    /// "simhash", "k": 4, "steps": [...]}` or `{"method": "minhash",
    /// "threshold": 0.5, "permutations": 128, "bands": 32, "rows": 4}`.
    pub fn rule_json(&self) -> serde_json::Value {
        match self {
            Detector::SimHash(f) => {
                let mut rule = serde_json::to_value(f.radius()).expect("a radius serializes");
                rule["method"] = "simhash".into();
                rule
            }
            Detector::MinHash(m) => serde_json::json!({ "method": "minhash", "threshold": m.threshold(),
                "permutations": m.permutations(), "bands": m.banding().bands, "rows": m.banding().rows }),
        }
    }

    /// The near-duplicate rule in words: the radius, or the threshold and
    /// banding.
    pub fn rule(&self) -> String {
        match self {
            Detector::SimHash(f) => f.radius().to_string(),
            Detector::MinHash(m) => m.banding().rule(m.threshold(), m.permutations()),
        }
    }

    /// The method and its rule in words, as each command says which it used:
    /// `SimHash, k = 3` or `MinHash, Jaccard ≥ 0.5 (32 bands × 4 rows of
    /// 128 values)`.
    ///
    /// ```
    /// use neardup::detector::Detector;
    ///
    /// let d = Detector::for_dedup(None, None, Some(3), None)?;
    /// assert_eq!(d.describe(), "SimHash, k = 3");
    /// # Ok::<(), neardup::Error>(())
    /// ```
    pub fn describe(&self) -> String {
        format!("{}, {}", self.method().title(), self.rule())
    }
}

impl From<Fingerprinter> for Detector {
    fn from(f: Fingerprinter) -> Detector {
        Detector::SimHash(f)
    }
}

impl From<MinHasher> for Detector {
    fn from(m: MinHasher) -> Detector {
        Detector::MinHash(m)
    }
}
