//! One dedup for either method — what front ends call instead of choosing
//! between [`Dedup`] and [`LshDedup`] themselves: a column of
//! [`DedupRecords`] (fingerprints or signatures), the [`DedupOptions`] a
//! user sets (keep, online, pairs, verification, layout), and
//! [`Detector::dedup`](crate::detector::Detector::dedup), which runs the
//! detector's method with its rule. [`Closeness`] says how near two records
//! are in the method's own terms (bits apart, or estimated similarity).

use serde::Serialize;

use super::lsh::{LshDedup, SignatureRecords};
use super::split::{Aside, ClusterMode};
use super::verify::{ShingleJaccard, Texts};
use super::ExactRecords;
use super::{Dedup, DedupResult, Keep, Records};
pub use crate::config::lsh::Threshold;
use crate::error::{Error, Result};
use crate::index::pairs::PairsOptions;
use crate::minhash::{estimate, MinHasher};
use crate::radius::Radius;
use crate::simhash::Fingerprinter;
use crate::similarity::round4;
use crate::sketch::Sketch;

/// A column of records of either method, in input order (a record's id is
/// its position).
#[derive(Clone, Debug)]
pub enum DedupRecords {
    /// SimHash fingerprints.
    Fingerprints(Records),
    /// MinHash signatures.
    Signatures(SignatureRecords),
    /// Exact keys (`--method exact`): only identical texts are duplicates.
    Exact(ExactRecords),
}

impl DedupRecords {
    /// Appends a record: its sketch (`None` for a document without
    /// features, which is kept and never a near duplicate), its feature
    /// count and its length in characters.
    ///
    /// # Errors
    ///
    /// Signatures that spill cannot write their temporary file.
    ///
    /// # Panics
    ///
    /// If the sketch is of the other method, or of another width or length
    /// than the records'.
    pub fn push(&mut self, sketch: Option<&Sketch>, features: usize, chars: usize) -> Result<()> {
        match (self, sketch) {
            (DedupRecords::Fingerprints(r), Some(Sketch::Fingerprint(f))) => r.push(*f, features, chars),
            (DedupRecords::Fingerprints(r), None) => r.push(crate::Fingerprint::new(0, r.bits()), 0, chars),
            (DedupRecords::Signatures(r), Some(Sketch::Signature(s))) => {
                return r.push(s.values(), features, chars)
            }
            (DedupRecords::Signatures(r), None) => return r.push_empty(chars),
            (DedupRecords::Exact(_), _) => {
                panic!("exact records hold keys, not sketches: push to ExactRecords")
            }
            (_, Some(s)) => panic!("a {} sketch pushed to records of the other method", s.method()),
        }
        Ok(())
    }

    /// Bytes of signatures spilled to a temporary file (0 in memory, and
    /// always for fingerprints, which are small).
    pub fn spilled_bytes(&self) -> u64 {
        match self {
            DedupRecords::Fingerprints(_) | DedupRecords::Exact(_) => 0,
            DedupRecords::Signatures(r) => r.spilled_bytes(),
        }
    }

    /// How many records.
    pub fn len(&self) -> usize {
        match self {
            DedupRecords::Fingerprints(r) => r.len(),
            DedupRecords::Signatures(r) => r.len(),
            DedupRecords::Exact(r) => r.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Record `i`'s sketch (`None`: a document without features, which
    /// MinHash does not sign).
    ///
    /// # Errors
    ///
    /// Spilled signatures cannot be read back.
    pub fn sketch(&self, i: u32) -> Result<Option<Sketch>> {
        Ok(match self {
            DedupRecords::Fingerprints(r) => Some(Sketch::Fingerprint(r.fingerprint(i))),
            DedupRecords::Signatures(r) if r.features(i) == 0 => None,
            DedupRecords::Exact(_) => None,
            DedupRecords::Signatures(r) => {
                let mut buf = r.buffer();
                let values = r.read_signature(i, &mut buf)?;
                Some(Sketch::Signature(crate::minhash::Signature::from_values(values.to_vec())))
            }
        })
    }

    /// Record `i`'s length in characters.
    pub fn length(&self, i: u32) -> u64 {
        match self {
            DedupRecords::Fingerprints(r) => r.length(i),
            DedupRecords::Signatures(r) => r.length(i),
            DedupRecords::Exact(r) => r.length(i),
        }
    }

    /// Record `i`'s feature count.
    pub fn features(&self, i: u32) -> usize {
        match self {
            DedupRecords::Fingerprints(r) => r.features(i),
            DedupRecords::Signatures(r) => r.features(i),
            DedupRecords::Exact(_) => 0,
        }
    }

    /// How near records `a` and `b` are, in the method's terms.
    ///
    /// # Errors
    ///
    /// Spilled signatures cannot be read back.
    ///
    /// # Panics
    ///
    /// If either is out of range.
    pub fn closeness(&self, a: u32, b: u32) -> Result<Closeness> {
        Ok(match self {
            DedupRecords::Fingerprints(r) => Closeness::Distance(r.fingerprint(a).distance(r.fingerprint(b))),
            DedupRecords::Signatures(r) => {
                // Empty buffers while the signatures are in memory (no read).
                let (mut ba, mut bb) = (r.buffer(), r.buffer());
                let (sa, sb) = (r.read_signature(a, &mut ba)?, r.read_signature(b, &mut bb)?);
                Closeness::Similarity(round4(estimate(sa, sb)))
            }
            DedupRecords::Exact(r) => Closeness::Similarity(if r.key(a) == r.key(b) { 1.0 } else { 0.0 }),
        })
    }
}

/// How near two records are.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Closeness {
    /// SimHash: the bits their fingerprints differ in.
    Distance(u32),
    /// MinHash: the share of equal signature values, to 4 places.
    Similarity(f64),
}

impl Closeness {
    /// The field name outputs use: `distance` or `similarity`.
    pub fn name(&self) -> &'static str {
        match self {
            Closeness::Distance(_) => "distance",
            Closeness::Similarity(_) => "similarity",
        }
    }

    /// The value as JSON (an integer or a number).
    pub fn value(&self) -> serde_json::Value {
        match *self {
            Closeness::Distance(d) => d.into(),
            Closeness::Similarity(s) => s.into(),
        }
    }
}

impl std::fmt::Display for Closeness {
    /// `distance 3` or `similarity 0.74`, as a person reads it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Closeness::Distance(d) => write!(f, "distance {d}"),
            Closeness::Similarity(s) => write!(f, "similarity {s:.2}"),
        }
    }
}

/// What a user sets for a dedup, whatever the method.
#[derive(Clone, Copy, Debug, Default)]
pub struct DedupOptions {
    /// Which member of a cluster is kept (batch mode). By default, the first.
    pub keep: Keep,
    /// Online: each record kept unless it is a near duplicate of one kept
    /// before it. By default, no (a batch).
    pub online: bool,
    /// Whether to collect the pairs. By default, no.
    pub pairs: bool,
    /// Verify candidate pairs by the Jaccard similarity of their word
    /// 3-shingles at this threshold (needs the texts). By default, none.
    pub verify: Option<Threshold>,
    /// SimHash's all-pairs layout. By default, chosen within 4 GiB.
    pub layout: PairsOptions,
    /// MinHash: the memory for band keys when signatures were spilled
    /// (see [`LshDedup::memory`]). By default (`None`), 1 GiB.
    pub key_memory: Option<u64>,
    /// How a batch makes clusters of its candidate components. By default,
    /// justified: a record is removed only when it is near (verified, when
    /// verification is on) the record kept for it.
    pub clusters: ClusterMode,
}

/// Deduplicates SimHash `records` by `radius`, with the texts at hand for
/// verification when `stages` is given (a list of fingerprints has none).
pub(crate) fn fingerprints<X: Texts + ?Sized>(
    records: &Records,
    radius: &Radius,
    stages: Option<(&Fingerprinter, &X)>,
    options: &DedupOptions,
    aside: Option<Aside<'_>>,
) -> Result<DedupResult> {
    let verifier = match (options.verify, stages) {
        (Some(t), Some((f, texts))) => Some(ShingleJaccard::new(f, texts, t.get())),
        (Some(_), None) => {
            return Err(Error::Config("verification needs the texts, not fingerprints".into()))
        }
        (None, _) => None,
    };
    let mut dedup = Dedup::new(radius)
        .keep(options.keep)
        .layout(options.layout)
        .pairs(options.pairs)
        .clusters(options.clusters);
    if let Some(v) = &verifier {
        dedup = dedup.verify(v);
    }
    if let Some(a) = aside {
        dedup = dedup.set_aside(a);
    }
    if options.online {
        dedup.online(records)
    } else {
        dedup.batch(records)
    }
}

/// Deduplicates MinHash `records` by `minhasher`'s threshold and banding.
pub(crate) fn signatures<X: Texts + ?Sized>(
    records: &SignatureRecords,
    minhasher: &MinHasher,
    texts: &X,
    options: &DedupOptions,
    aside: Option<Aside<'_>>,
) -> Result<DedupResult> {
    let verifier = options.verify.map(|t| ShingleJaccard::for_minhash(minhasher, texts, t.get()));
    let mut dedup =
        LshDedup::of(minhasher).keep(options.keep).pairs(options.pairs).clusters(options.clusters);
    if let Some(m) = options.key_memory {
        dedup = dedup.memory(m);
    }
    if let Some(v) = &verifier {
        dedup = dedup.verify(v);
    }
    if let Some(a) = aside {
        dedup = dedup.set_aside(a);
    }
    if options.online {
        dedup.online(records)
    } else {
        dedup.batch(records)
    }
}

/// Deduplicates a list of fingerprints (no texts, no pipeline) by `k`, or
/// the classic k of their width: `neardup dedup --fingerprints`.
///
/// # Errors
///
/// Verification asked for (it needs the texts), a k beyond the width, or
/// what [`Dedup::batch`] refuses.
pub fn fingerprint_list(
    records: &Records,
    k: Option<u32>,
    options: &DedupOptions,
) -> Result<(Radius, DedupResult)> {
    let radius = k.map_or_else(|| Radius::classic(records.bits()), Radius::fixed);
    radius.validate(records.bits()).map_err(Error::Config)?;
    let found = fingerprints::<[&str]>(records, &radius, None, options, None)?;
    Ok((radius, found))
}
