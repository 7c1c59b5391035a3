//! Removing near duplicates from a collection: the job behind `neardup
//! dedup`, Python's `neardup.dedup` and the Spark job, written once.
//!
//! The input is a column of [`Records`] (fingerprint, feature count,
//! length; a record's id is its position). [`Dedup`] holds the settings —
//! the [`Radius`] (by default the pipeline's), which member of a cluster
//! to [`Keep`], an optional [`Verifier`] — and runs one of two modes:
//!
//! - [`Dedup::batch`]: identical fingerprints collapsed, one all-pairs pass
//!   per radius of the rule ([`Plan`]), each pair kept by the rule,
//!   union-find into candidate components, each split into justified
//!   clusters ([`ClusterMode`]): a record is removed only when it is near
//!   (and, with a verifier, verified against) the record kept for it;
//! - [`Dedup::online`]: records in order, each kept unless it is a near
//!   duplicate (by the same rule) of one kept before it — what a crawler
//!   or the service does.
//!
//! ```
//! use neardup::dedup::{Dedup, Keep, Records};
//! use neardup::Fingerprinter;
//!
//! let fingerprinter = Fingerprinter::preset("default")?;
//! let texts = [
//!     "SimHash maps similar documents to similar fingerprints, so near duplicates differ in few bits.",
//!     "A different text altogether, about rice, beans and the slow art of cooking them well.",
//!     "SimHash maps similar documents to similar fingerprints, so near duplicates differ in few bits!!!",
//! ];
//! let records = Records::from_texts(&fingerprinter, &texts);
//! let result = Dedup::new(fingerprinter.radius()).keep(Keep::Longest).batch(&records)?;
//! assert_eq!(result.clusters.len(), 1);
//! assert_eq!((result.clusters[0].kept, result.clusters[0].members.as_slice()), (2, &[0, 2][..]));
//! assert_eq!(result.kept_mask(texts.len()), [false, true, true]);
//! # Ok::<(), neardup::Error>(())
//! ```

mod against;
mod batch;
mod checkpoint;
mod exact;
mod extsort;
pub(crate) mod job;
mod lsh;
mod online;
mod outofcore;
mod parents;
mod sharded;
mod sharded_lsh;
mod spill;
mod split;
mod texts;
mod verify;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

pub use crate::radius::{Pass, Plan, UNKNOWN_FEATURES};
pub use crate::similarity::SHINGLE;
pub use against::IndexMatch;
pub use exact::{exact_key, ExactPass, ExactRecords, ExactText, Repeat, SeenTexts};
pub use job::{fingerprint_list, Closeness, DedupOptions, DedupRecords, Threshold};
pub use lsh::{LshDedup, SignatureRecords};
pub use outofcore::{OutOfCore, OutOfCoreResult};
pub use sharded::{KeyRows, ShardedDedup};
pub use sharded_lsh::{Owners, ShardedLsh};
pub use spill::{free_bytes, SpillColumn, SpillTo};
pub use split::{Aside, ClusterMode};
pub use texts::{Column, ShingleColumn, Shingles, Text, TextColumn};
pub use verify::{ShingleJaccard, Texts, Verifier};

use crate::error::{Error, Result};
use crate::fingerprint::{Bits, Fingerprint};
use crate::index::cluster::UnionFind;
use crate::index::pairs::PairsOptions;
use crate::index::Words;
use crate::radius::Radius;
use crate::simhash::Fingerprinter;

/// Which member of a cluster is kept.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Keep {
    /// The first in input order (the default).
    #[default]
    First,
    /// The longest (ties: the first).
    Longest,
    /// The shortest (ties: the first).
    Shortest,
}

impl std::str::FromStr for Keep {
    type Err = Error;

    fn from_str(s: &str) -> Result<Keep> {
        match s {
            "first" => Ok(Keep::First),
            "longest" => Ok(Keep::Longest),
            "shortest" => Ok(Keep::Shortest),
            _ => Err(Error::Config(format!("keep must be first, longest or shortest, not {s:?}"))),
        }
    }
}

impl std::fmt::Display for Keep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Keep::First => "first",
            Keep::Longest => "longest",
            Keep::Shortest => "shortest",
        })
    }
}

/// The records to deduplicate, as columns: fingerprint, feature count (see
/// [`Fingerprinter::fingerprint_counted`]) and length (in characters, for
/// [`Keep::Longest`] and [`Keep::Shortest`]). A record's id is its position.
#[derive(Clone, Debug)]
pub struct Records {
    words: Words,
    features: Vec<u32>,
    lengths: Vec<u64>,
}

impl Records {
    /// No records yet, of `bits`-bit fingerprints.
    pub fn new(bits: Bits) -> Records {
        Records { words: Words::new(bits), features: Vec::new(), lengths: Vec::new() }
    }

    /// Fingerprints from a list, with unknown feature counts and lengths.
    pub fn from_words(words: Words) -> Records {
        let n = words.len();
        Records { words, features: vec![UNKNOWN_FEATURES as u32; n], lengths: vec![0; n] }
    }

    /// Fingerprints `texts` on every core.
    pub fn from_texts<T: AsRef<str> + Sync>(fingerprinter: &Fingerprinter, texts: &[T]) -> Records {
        let made: Vec<(Fingerprint, usize, usize)> = texts
            .par_iter()
            .map(|t| {
                let (f, n) = fingerprinter.fingerprint_counted(t.as_ref());
                (f, n, t.as_ref().chars().count())
            })
            .collect();
        let mut r = Records::new(fingerprinter.bits());
        for (f, n, len) in made {
            r.push(f, n, len);
        }
        r
    }

    /// Appends a record.
    ///
    /// # Panics
    ///
    /// If the fingerprint's width is not the records'.
    pub fn push(&mut self, fingerprint: Fingerprint, features: usize, length: usize) {
        self.words.push(fingerprint);
        self.features.push(features.min(UNKNOWN_FEATURES) as u32);
        self.lengths.push(length as u64);
    }

    /// How many records.
    pub fn len(&self) -> usize {
        self.words.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// The fingerprint width.
    pub fn bits(&self) -> Bits {
        self.words.bits()
    }

    /// The fingerprints.
    pub fn words(&self) -> &Words {
        &self.words
    }

    /// Record `i`'s fingerprint.
    pub fn fingerprint(&self, i: u32) -> Fingerprint {
        self.words.get(i as usize)
    }

    /// Record `i`'s feature count ([`UNKNOWN_FEATURES`] if not known).
    pub fn features(&self, i: u32) -> usize {
        self.features[i as usize] as usize
    }

    /// Record `i`'s length.
    pub fn length(&self, i: u32) -> u64 {
        self.lengths[i as usize]
    }
}

/// A near-duplicate pair of records: `a < b`, their distance, and the
/// verifier's score when pairs were verified.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Pair {
    /// The earlier record.
    pub a: u32,
    /// The later record.
    pub b: u32,
    /// The Hamming distance of their fingerprints.
    pub distance: u32,
    /// The verifier's score, if pairs were verified.
    pub score: Option<f64>,
}

/// A cluster of near duplicates (two or more records).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cluster {
    /// The member kept (see [`Keep`]; always the first in online mode).
    pub kept: u32,
    /// Every member, ascending.
    pub members: Vec<u32>,
}

/// What a run found.
#[derive(Clone, Debug, Default)]
pub struct DedupResult {
    /// The clusters, ordered by their first member.
    pub clusters: Vec<Cluster>,
    /// The near-duplicate pairs, if [`Dedup::pairs`] asked for them (batch:
    /// every pair; online: each removed record with the kept one it matched).
    pub pairs: Vec<Pair>,
    /// The index layout of the first pass (or of the online index).
    pub layout: String,
    /// Seconds per stage, in order.
    pub timings: Vec<(&'static str, f64)>,
    /// Against an index ([`DedupResult::against`]): for each cluster, the
    /// indexed document it is near, if any (then none of its members is
    /// kept). Empty otherwise.
    pub indexed: Vec<Option<IndexMatch>>,
}

impl DedupResult {
    /// For each of the `n` records, whether it is kept.
    pub fn kept_mask(&self, n: usize) -> Vec<bool> {
        let mut kept = vec![true; n];
        for (i, c) in self.clusters.iter().enumerate() {
            let indexed = self.is_indexed(i);
            for &m in &c.members {
                kept[m as usize] = m == c.kept && !indexed;
            }
        }
        kept
    }

    /// Whether cluster `i` is near an indexed document (and keeps none of
    /// its members).
    pub fn is_indexed(&self, i: usize) -> bool {
        self.indexed.get(i).is_some_and(Option::is_some)
    }

    /// How many records were removed.
    pub fn removed(&self) -> usize {
        self.clusters
            .iter()
            .enumerate()
            .map(|(i, c)| c.members.len() - usize::from(!self.is_indexed(i)))
            .sum()
    }
}

/// The settings of a deduplication; see the [module](self) documentation.
#[derive(Clone, Copy)]
pub struct Dedup<'v> {
    radius: &'v Radius,
    keep: Keep,
    layout: PairsOptions,
    pairs: bool,
    verifier: Option<&'v dyn Verifier>,
    clusters: ClusterMode,
    aside: Option<Aside<'v>>,
}

impl<'v> Dedup<'v> {
    /// Deduplicates by `radius` (usually [`Fingerprinter::radius`]), keeping
    /// the first of each cluster, with an automatic layout, no pairs
    /// collected, no verification and justified clusters.
    pub fn new(radius: &'v Radius) -> Dedup<'v> {
        Dedup {
            radius,
            keep: Keep::First,
            layout: PairsOptions::default(),
            pairs: false,
            verifier: None,
            clusters: ClusterMode::Justified,
            aside: None,
        }
    }

    /// Records already removed elsewhere — near a document of an index the
    /// batch runs against — which justified clusters neither keep nor
    /// remove for a kept record (see [`DedupResult::against`]). By
    /// default, none.
    pub fn set_aside(mut self, aside: Aside<'v>) -> Self {
        self.aside = Some(aside);
        self
    }

    /// How the batch makes clusters of its candidate components. By
    /// default, [`ClusterMode::Justified`]: a record is removed only when it
    /// is near the record kept for it.
    pub fn clusters(mut self, mode: ClusterMode) -> Self {
        self.clusters = mode;
        self
    }

    /// Which member of a cluster is kept (batch mode). By default, the first.
    pub fn keep(mut self, keep: Keep) -> Self {
        self.keep = keep;
        self
    }

    /// The all-pairs layout options. By default, chosen automatically
    /// within 4 GiB.
    pub fn layout(mut self, layout: PairsOptions) -> Self {
        self.layout = layout;
        self
    }

    /// Whether to collect the pairs in [`DedupResult::pairs`]. By default, no.
    pub fn pairs(mut self, pairs: bool) -> Self {
        self.pairs = pairs;
        self
    }

    /// Verifies candidate pairs; only pairs scoring at least the verifier's
    /// threshold link records (justified clusters verify each removal's
    /// link to its kept record; whole components, every pair). By
    /// default, none.
    pub fn verify(mut self, verifier: &'v dyn Verifier) -> Self {
        self.verifier = Some(verifier);
        self
    }

    /// The radius.
    pub fn radius(&self) -> &Radius {
        self.radius
    }

    /// Removes near duplicates from `records` as a batch (see the
    /// [module](self) documentation).
    ///
    /// # Errors
    ///
    /// A radius not below the fingerprint width, more than `u32::MAX - 1`
    /// records, or an impossible layout.
    pub fn batch(&self, records: &Records) -> Result<DedupResult> {
        self.check(records)?;
        batch::run(self, records)
    }

    /// Removes near duplicates from `records` in order: each is kept
    /// unless it is a near duplicate of one kept before it (the nearest
    /// such, ties to the earliest, that passes verification).
    ///
    /// # Errors
    ///
    /// As [`batch`](Self::batch).
    pub fn online(&self, records: &Records) -> Result<DedupResult> {
        self.check(records)?;
        online::run(self, records)
    }

    fn check(&self, records: &Records) -> Result<()> {
        self.radius.validate(records.bits()).map_err(Error::Config)?;
        if records.len() >= u32::MAX as usize {
            return Err(Error::Config(format!("at most 2^32 - 2 records at once, not {}", records.len())));
        }
        Ok(())
    }
}

/// Clusters from linked records, with the kept member chosen (online: always
/// the first); `length` gives a record's length.
fn make_clusters(mut uf: UnionFind, keep: Keep, online: bool, length: impl Fn(u32) -> u64) -> Vec<Cluster> {
    uf.clusters()
        .into_iter()
        .map(|members| {
            let kept = if online { members[0] } else { kept_of(&members, keep, &length) };
            Cluster { kept, members }
        })
        .collect()
}

/// The member of a cluster (ascending, not empty) that `keep` keeps.
pub(crate) fn kept_of(members: &[u32], keep: Keep, length: impl Fn(u32) -> u64) -> u32 {
    match keep {
        Keep::First => members[0],
        Keep::Longest => *members
            .iter()
            .max_by_key(|&&i| (length(i), std::cmp::Reverse(i)))
            .expect("a cluster has members"),
        Keep::Shortest => *members.iter().min_by_key(|&&i| (length(i), i)).expect("a cluster has members"),
    }
}

/// Times a stage into `timings`.
fn timed<T>(
    timings: &mut Vec<(&'static str, f64)>,
    name: &'static str,
    f: impl FnOnce() -> Result<T>,
) -> Result<T> {
    let t = std::time::Instant::now();
    let r = f();
    timings.push((name, t.elapsed().as_secs_f64()));
    r
}
