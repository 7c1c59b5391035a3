//! Deduplication by MinHash signatures: the same job as [`Dedup`](super::Dedup)
//! for SimHash fingerprints, with a Jaccard threshold instead of a radius
//! and LSH bands instead of all-pairs tables.
//!
//! Batch: identical signatures are collapsed first; then, band by band,
//! the distinct signatures are sorted by the band's key, and every pair
//! in a run of equal keys is a candidate, linked when its estimated
//! similarity reaches the threshold (and the verifier, if any, agrees). A
//! pair already in one cluster is not estimated again. Memory beyond the
//! signatures is one band's keys at a time.
//!
//! Online: records in order, each kept unless an earlier kept record
//! shares a band with it and reaches the threshold (the most similar such,
//! ties to the earliest, that passes verification).

use rayon::prelude::*;

use super::split::{self, Aside, ClusterMode, Rule, SCANNED_CENTRES};
use super::verify::SetCache;
use super::{make_clusters, timed, DedupResult, Keep, Pair, Verifier};
use crate::config::lsh::Threshold;
use crate::error::{Error, Result};
use crate::index::cluster::UnionFind;
use crate::index::sort::{sort_by_top, RADIX_BITS};
use crate::minhash::index::LshIndex;
use crate::minhash::{estimate, Banding, MinHasher};

use super::spill::{SpillColumn, SpillTo};

/// Signatures to deduplicate, as columns: K values each, feature count
/// (0: the document had no features and is never a near duplicate) and
/// length in characters. A record's id is its position.
///
/// The signatures live in memory ([`new`](Self::new)) or, past a budget,
/// in a temporary file ([`spilling`](Self::spilling)): 4·K bytes a
/// document move to disk and only 12 stay in memory, and
/// [`LshDedup::batch`] gives the same clusters either way.
#[derive(Clone, Debug)]
pub struct SignatureRecords {
    values: SpillColumn,
    features: Vec<u32>,
    lengths: Vec<u64>,
}

impl SignatureRecords {
    /// No records yet, of signatures of `permutations` values, held in
    /// memory.
    pub fn new(permutations: usize) -> SignatureRecords {
        SignatureRecords { values: SpillColumn::new(permutations), features: Vec::new(), lengths: Vec::new() }
    }

    /// No records yet, of signatures that move to a temporary file in
    /// `to.dir` once they take more than `to.limit` bytes.
    pub fn spilling(permutations: usize, to: SpillTo) -> SignatureRecords {
        SignatureRecords {
            values: SpillColumn::spilling(permutations, to),
            features: Vec::new(),
            lengths: Vec::new(),
        }
    }

    /// Records of `values` and their (feature count, length) columns.
    pub(crate) fn from_columns(values: SpillColumn, columns: Vec<(u32, u64)>) -> SignatureRecords {
        let (features, lengths) = columns.into_iter().unzip();
        SignatureRecords { values, features, lengths }
    }

    /// The signatures' column.
    pub(crate) fn values_column(&self) -> &SpillColumn {
        &self.values
    }

    /// Signs `texts` on every core; a text without features becomes a
    /// record that matches nothing.
    pub fn from_texts<T: AsRef<str> + Sync>(minhasher: &MinHasher, texts: &[T]) -> SignatureRecords {
        let k = minhasher.permutations();
        let made: Vec<(Option<(crate::minhash::Signature, usize)>, usize)> = texts
            .par_iter()
            .map(|t| (minhasher.signature_counted(t.as_ref()), t.as_ref().chars().count()))
            .collect();
        let mut r = SignatureRecords::new(k);
        r.reserve(made.len());
        for (s, len) in made {
            let pushed = match s {
                Some((sig, n)) => r.push(sig.values(), n, len),
                None => r.push_empty(len),
            };
            pushed.expect("records held in memory take every push");
        }
        r
    }

    /// Room for `n` more records without growing (in memory).
    pub fn reserve(&mut self, n: usize) {
        self.values.reserve(n);
        self.features.reserve(n);
        self.lengths.reserve(n);
    }

    /// Appends a record.
    ///
    /// # Errors
    ///
    /// Records that spill cannot write their temporary file (records held
    /// in memory never fail).
    ///
    /// # Panics
    ///
    /// If the signature's length is not the records'.
    pub fn push(&mut self, signature: &[u32], features: usize, length: usize) -> Result<()> {
        assert_eq!(signature.len(), self.permutations(), "a signature of the records' length");
        self.values.push(signature)?;
        self.features.push(features.min(u32::MAX as usize) as u32);
        self.lengths.push(length as u64);
        Ok(())
    }

    /// Appends a record of a document without features: no signature (its
    /// values are 0) and 0 features, so it is never a near duplicate.
    ///
    /// # Errors
    ///
    /// As [`push`](Self::push).
    pub fn push_empty(&mut self, length: usize) -> Result<()> {
        self.values.push_zeros()?;
        self.features.push(0);
        self.lengths.push(length as u64);
        Ok(())
    }

    /// How many records.
    pub fn len(&self) -> usize {
        self.features.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.features.is_empty()
    }

    /// Values per signature.
    pub fn permutations(&self) -> usize {
        self.values.width()
    }

    /// Bytes of signatures written to the temporary file (0 in memory).
    pub fn spilled_bytes(&self) -> u64 {
        self.values.spilled_bytes()
    }

    /// Record `i`'s signature, from memory.
    ///
    /// # Panics
    ///
    /// If the signatures were spilled to a file ([`spilled_bytes`](Self::spilled_bytes)
    /// above 0): read them with [`read_signature`](Self::read_signature).
    pub fn signature(&self, i: u32) -> &[u32] {
        let k = self.permutations();
        let i = i as usize;
        &self.values.as_slice().expect("signatures in memory; spilled ones are read with read_signature")
            [i * k..(i + 1) * k]
    }

    /// Record `i`'s signature, from memory or read into `buf` (at least
    /// [`permutations`](Self::permutations) long) from the file.
    ///
    /// # Errors
    ///
    /// The temporary file cannot be read.
    pub fn read_signature<'a>(&'a self, i: u32, buf: &'a mut [u32]) -> Result<&'a [u32]> {
        self.values.get(i as usize, buf)
    }

    /// Record `i`'s signature after [`read_signature`](Self::read_signature)
    /// read it into `buf`: from memory, or `buf`.
    fn read_before<'a>(&'a self, i: u32, buf: &'a [u32]) -> &'a [u32] {
        self.values.in_memory(i as usize).unwrap_or_else(|| &buf[..self.permutations()])
    }

    /// A buffer for [`read_signature`](Self::read_signature): empty when
    /// the signatures are in memory (none is needed).
    pub(crate) fn buffer(&self) -> Vec<u32> {
        vec![0; if self.values.as_slice().is_some() { 0 } else { self.permutations() }]
    }

    /// Record `i`'s feature count.
    pub fn features(&self, i: u32) -> usize {
        self.features[i as usize] as usize
    }

    /// Record `i`'s length.
    pub fn length(&self, i: u32) -> u64 {
        self.lengths[i as usize]
    }

    /// Whether record `i` takes part (it had features).
    fn live(&self, i: u32) -> bool {
        self.features[i as usize] > 0
    }
}

/// Two signature buffers, for judging a pair.
struct Bufs {
    a: Vec<u32>,
    b: Vec<u32>,
}

impl Bufs {
    fn of(records: &SignatureRecords) -> Bufs {
        Bufs { a: records.buffer(), b: records.buffer() }
    }
}

/// `keys` sorted by key, then id, into `out`: the index's sort (one
/// parallel scatter by the keys' top 12 bits, then each bucket sorted on
/// its own thread; band keys are uniform hashes, so the buckets are even).
fn sort_by_key_bits(keys: &[(u64, u32)], out: &mut Vec<(u64, u32)>) {
    out.clear();
    out.extend_from_slice(keys);
    sort_by_top(out, |&(k, _)| (k >> (64 - RADIX_BITS)) as usize);
}

/// A 64-bit hash of a signature's values (XXH3 of their little-endian
/// bytes).
pub(super) fn signature_hash(values: &[u32]) -> u64 {
    let mut bytes = [0u8; 4 * crate::minhash::MAX_PERMUTATIONS];
    for (chunk, v) in bytes.chunks_exact_mut(4).zip(values) {
        chunk.copy_from_slice(&v.to_le_bytes());
    }
    xxhash_rust::xxh3::xxh3_64(&bytes[..4 * values.len()])
}

/// The settings of a MinHash deduplication.
#[derive(Clone, Copy)]
pub struct LshDedup<'v> {
    threshold: f64,
    banding: Banding,
    keep: Keep,
    pairs: bool,
    memory: u64,
    verifier: Option<&'v dyn Verifier>,
    clusters: ClusterMode,
    aside: Option<Aside<'v>>,
}

/// Bytes a band key takes while sorted: the key and record (16 with
/// padding), and as much again for the sort's output.
const KEY_BYTES: u64 = 16;

impl<'v> LshDedup<'v> {
    /// Deduplicates at Jaccard `threshold` with candidates from `banding`
    /// (usually [`MinHasher::threshold`] and [`MinHasher::banding`]),
    /// keeping the first of each cluster, no pairs collected, no
    /// verification, within 1 GiB for band keys, justified clusters.
    pub fn new(threshold: f64, banding: Banding) -> LshDedup<'v> {
        LshDedup {
            threshold,
            banding,
            keep: Keep::First,
            pairs: false,
            memory: 1 << 30,
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
    /// shares a band with the record kept for it and their estimate (and
    /// verification, if any) reaches the threshold.
    pub fn clusters(mut self, mode: ClusterMode) -> Self {
        self.clusters = mode;
        self
    }

    /// The settings of `minhasher`'s pipeline.
    pub fn of(minhasher: &MinHasher) -> LshDedup<'v> {
        LshDedup::new(minhasher.threshold(), minhasher.banding())
    }

    /// Which member of a cluster is kept (batch mode). By default, the first.
    pub fn keep(mut self, keep: Keep) -> Self {
        self.keep = keep;
        self
    }

    /// Whether to collect the pairs in [`DedupResult::pairs`] (their
    /// `distance` is the number of unequal values, `score` the estimate or
    /// the verifier's score). By default, no.
    pub fn pairs(mut self, pairs: bool) -> Self {
        self.pairs = pairs;
        self
    }

    /// The memory for band keys (16 bytes a distinct signature per band,
    /// and as much again to sort one band). With signatures spilled to a
    /// file, as many bands as fit are keyed in one read of the file. By
    /// default, 1 GiB.
    pub fn memory(mut self, bytes: u64) -> Self {
        self.memory = bytes;
        self
    }

    /// Verifies candidate pairs that reach the threshold. By default, none.
    pub fn verify(mut self, verifier: &'v dyn Verifier) -> Self {
        self.verifier = Some(verifier);
        self
    }

    /// Whether [`batch`](Self::batch) links two signatures (before any
    /// verifier): they share a band and the estimate reaches the threshold.
    pub fn links(&self, a: &[u32], b: &[u32]) -> bool {
        self.banding.shares_band(a, b) && estimate(a, b) >= self.threshold
    }

    fn check(&self, records: &SignatureRecords) -> Result<()> {
        Threshold::check(self.threshold)
            .map_err(|e| Error::Config(format!("the MinHash {}", e.trim_start_matches("the "))))?;
        self.banding.validate(records.permutations()).map_err(Error::Config)?;
        if records.len() >= u32::MAX as usize {
            return Err(Error::Config(format!("at most 2^32 - 2 records at once, not {}", records.len())));
        }
        Ok(())
    }

    /// The pair `(a, b)` of signatures `sa`, `sb` if it stands: estimate
    /// at least the threshold and, with verification sets, the verifier's
    /// score at least its threshold.
    fn judge(&self, a: u32, sa: &[u32], b: u32, sb: &[u32], sets: Option<&SetCache>) -> Result<Option<Pair>> {
        let similarity = estimate(sa, sb);
        if similarity < self.threshold {
            return Ok(None);
        }
        let distance = sa.iter().zip(sb).filter(|(x, y)| x != y).count() as u32;
        let score = match sets {
            None => similarity,
            Some(sets) => match sets.stands(a, b)? {
                Some(s) => s,
                None => return Ok(None),
            },
        };
        Ok(Some(Pair { a, b, distance, score: Some(score) }))
    }

    /// Removes near duplicates from `records` as a batch: identical
    /// signatures collapsed, then the pairs of each band's runs of equal
    /// keys linked where they stand. Signatures spilled to a file are read
    /// in order, as many bands keyed per read as the memory allows, and
    /// the pairs judged by reading their two signatures: the clusters are
    /// those of records held in memory.
    ///
    /// # Errors
    ///
    /// A threshold outside (0, 1], a banding that does not fit, more than
    /// `u32::MAX - 1` records, or a spill file that cannot be read.
    pub fn batch(&self, records: &SignatureRecords) -> Result<DedupResult> {
        self.check(records)?;
        let n = records.len();
        let mut timings = Vec::new();
        let mut uf = UnionFind::new(n);
        let mut pairs = Vec::new();
        let mut bufs = Bufs::of(records);
        let justified = self.clusters == ClusterMode::Justified;
        // Justified clusters verify each link they keep, not every pair:
        // the components are then found unverified.
        let sets = self.verifier.filter(|_| self.pairs || !justified).map(|v| SetCache::new(v, n));
        let sets = sets.as_ref();
        let reps = timed(&mut timings, "collapse identical signatures", || {
            self.collapse(records, &mut uf, &mut pairs, &mut bufs, sets)
        })?;
        timed(&mut timings, "find pairs by band", || {
            let per_pass = self.bands_per_pass(records, reps.len());
            let mut sorted: Vec<(u64, u32)> = Vec::new();
            for first in (0..self.banding.bands).step_by(per_pass) {
                let bands = first..(first + per_pass).min(self.banding.bands);
                for keys in self.band_keys(records, &reps, bands)? {
                    sort_by_key_bits(&keys, &mut sorted);
                    drop(keys);
                    for run in sorted.chunk_by(|x, y| x.0 == y.0).filter(|r| r.len() > 1) {
                        self.link_run(records, run, &mut uf, &mut bufs, sets, &mut |p| {
                            if self.pairs {
                                pairs.push(p);
                            }
                        })?;
                    }
                }
            }
            Ok(())
        })?;
        if self.pairs {
            pairs.sort_unstable_by_key(|p| (p.a, p.b));
            pairs.dedup_by_key(|p| (p.a, p.b));
        }
        let clusters = if justified {
            let rule = SignatureRule { records, threshold: self.threshold, banding: self.banding };
            timed(&mut timings, "split components", || {
                split::split(&rule, uf, self.keep, |i| records.length(i), self.verifier, self.aside)
            })?
        } else {
            make_clusters(uf, self.keep, false, |i| records.length(i))
        };
        let layout = format!("MinHash LSH, {}, threshold {}", self.banding, self.threshold);
        Ok(DedupResult { clusters, pairs, layout, timings, indexed: Vec::new() })
    }

    /// How many bands to key per read of the signatures: one when they are
    /// in memory (reading them again costs nothing), else as many as the
    /// memory holds beside one band's sort.
    fn bands_per_pass(&self, records: &SignatureRecords, reps: usize) -> usize {
        if records.spilled_bytes() == 0 {
            return 1;
        }
        let per_band = KEY_BYTES * reps.max(1) as u64;
        ((self.memory / per_band).saturating_sub(1) as usize).clamp(1, self.banding.bands)
    }

    /// The keys of `bands` for the records `reps` (ascending), one vector
    /// per band, each in the order of `reps`: one read of the signatures,
    /// each block keyed on every core.
    fn band_keys(
        &self,
        records: &SignatureRecords,
        reps: &[u32],
        bands: std::ops::Range<usize>,
    ) -> Result<Vec<Vec<(u64, u32)>>> {
        let k = records.permutations();
        let mut keys: Vec<Vec<(u64, u32)>> = bands.clone().map(|_| Vec::with_capacity(reps.len())).collect();
        records.values.chunks(|first, values| {
            let end = first + values.len() / k;
            let lo = reps.partition_point(|&i| (i as usize) < first);
            let hi = reps.partition_point(|&i| (i as usize) < end);
            let here = &reps[lo..hi];
            for (band, out) in bands.clone().zip(keys.iter_mut()) {
                out.par_extend(here.par_iter().map(|&i| {
                    let at = (i as usize - first) * k;
                    (self.banding.key(&values[at..at + k], band), i)
                }));
            }
            Ok(())
        })?;
        Ok(keys)
    }

    /// Groups identical signatures, links each group's members that stand,
    /// and returns the records that stand for the distinct signatures (the
    /// live ones only; each group's lowest record). Signatures are sorted
    /// by a 64-bit hash of their values, not by the values (a comparison
    /// of two 512-byte rows misses the cache twice); records of equal
    /// hashes are then grouped by their values, so a collision costs time,
    /// never a wrong group.
    fn collapse(
        &self,
        records: &SignatureRecords,
        uf: &mut UnionFind,
        pairs: &mut Vec<Pair>,
        bufs: &mut Bufs,
        sets: Option<&SetCache>,
    ) -> Result<Vec<u32>> {
        let k = records.permutations();
        let mut order: Vec<(u64, u32)> = Vec::with_capacity(records.len());
        records.values.chunks(|first, values| {
            let rows = (first as u32..(first + values.len() / k) as u32).into_par_iter();
            order.par_extend(rows.filter(|&i| records.live(i)).map(|i| {
                let at = (i as usize - first) * k;
                (signature_hash(&values[at..at + k]), i)
            }));
            Ok(())
        })?;
        order.par_sort_unstable();
        let mut reps = Vec::with_capacity(order.len());
        let mut members: Vec<(Vec<u32>, u32)> = Vec::new();
        for run in order.chunk_by(|x, y| x.0 == y.0) {
            if let [(_, only)] = run {
                reps.push(*only);
                continue;
            }
            members.clear();
            for &(_, i) in run {
                members.push((records.read_signature(i, &mut bufs.a)?.to_vec(), i));
            }
            members.sort_unstable();
            for group in members.chunk_by(|a, b| a.0 == b.0) {
                reps.push(group[0].1);
                if group.len() > 1 {
                    let run: Vec<(u64, u32)> = group.iter().map(|&(_, i)| (0, i)).collect();
                    self.link_run(records, &run, uf, bufs, sets, &mut |p| {
                        if self.pairs {
                            pairs.push(p);
                        }
                    })?;
                }
            }
        }
        reps.par_sort_unstable();
        Ok(reps)
    }

    /// Links the pairs of one run of records sharing a key and hands each
    /// pair that stands to `found`: every one when pairs are collected,
    /// else only those that joined two clusters (pairs already in one
    /// cluster are not estimated again).
    fn link_run<K>(
        &self,
        records: &SignatureRecords,
        run: &[(K, u32)],
        uf: &mut UnionFind,
        bufs: &mut Bufs,
        sets: Option<&SetCache>,
        found: &mut dyn FnMut(Pair),
    ) -> Result<()> {
        // A run already inside one cluster has no pair to judge: checked
        // once per member, not once per pair (a cluster of m copies meets
        // m(m − 1)/2 pairs in each of the bands after the first).
        if !self.pairs {
            if let Some(&(_, first)) = run.first() {
                let root = uf.find(first);
                if run[1..].iter().all(|&(_, b)| uf.find(b) == root) {
                    return Ok(());
                }
            }
        }
        for (x, &(_, a)) in run.iter().enumerate() {
            let mut read_a = false;
            for &(_, b) in &run[x + 1..] {
                if !self.pairs && uf.find(a) == uf.find(b) {
                    continue;
                }
                if !read_a {
                    records.read_signature(a, &mut bufs.a)?;
                    read_a = true;
                }
                let sa = records.read_before(a, &bufs.a);
                let sb = records.read_signature(b, &mut bufs.b)?;
                let p = if a < b { self.judge(a, sa, b, sb, sets)? } else { self.judge(b, sb, a, sa, sets)? };
                if let Some(p) = p {
                    uf.union(a, b);
                    found(p);
                }
            }
        }
        Ok(())
    }

    /// The links among rows of band keys that a distributed job shuffled
    /// together: `rows` are `((band, key), record)` in any order (a record
    /// may appear under several bands); the records of each run of equal
    /// `(band, key)` are judged as [`batch`](Self::batch) judges them.
    /// Returns the pairs that stand: all of them when pairs are collected,
    /// else a spanning forest (enough to give the same clusters), sorted.
    /// Identical signatures are not collapsed here (give each once).
    ///
    /// # Errors
    ///
    /// As [`batch`](Self::batch).
    pub fn band_links(
        &self,
        records: &SignatureRecords,
        rows: &mut [((u32, u64), u32)],
    ) -> Result<Vec<Pair>> {
        self.check(records)?;
        if let Some(&(_, r)) = rows.iter().find(|r| r.1 as usize >= records.len()) {
            return Err(Error::Config(format!(
                "band row of record {r}, beyond the {} records",
                records.len()
            )));
        }
        rows.par_sort_unstable();
        let mut uf = UnionFind::new(records.len());
        let mut pairs = Vec::new();
        let mut bufs = Bufs::of(records);
        let sets = self.verifier.map(|v| SetCache::new(v, records.len()));
        for run in rows.chunk_by(|x, y| x.0 == y.0).filter(|r| r.len() > 1) {
            self.link_run(records, run, &mut uf, &mut bufs, sets.as_ref(), &mut |p| pairs.push(p))?;
        }
        pairs.sort_unstable_by_key(|p| (p.a, p.b));
        pairs.dedup_by_key(|p| (p.a, p.b));
        Ok(pairs)
    }

    /// The justified split of records shuffled into groups, as a
    /// distributed job has them after finding components: `groups[i]`
    /// names record `i`'s component; a component's records are adjacent
    /// and in keep order. Returns, for each record, the record it is
    /// removed for (sharing a band, estimate at least the threshold and,
    /// with a verifier, verified), or itself when it is kept — what
    /// [`batch`](Self::batch) decides for the same component.
    ///
    /// # Errors
    ///
    /// As [`batch`](Self::batch), or `groups` not one per record.
    pub fn split_groups(&self, records: &SignatureRecords, groups: &[i64]) -> Result<Vec<u32>> {
        self.check(records)?;
        let rule = SignatureRule { records, threshold: self.threshold, banding: self.banding };
        split::owners(&rule, records.len(), groups, self.verifier)
    }

    /// Removes near duplicates from `records` in order: each is kept
    /// unless an earlier kept record shares a band with it and stands with
    /// it (the most similar, ties to the earliest).
    ///
    /// # Errors
    ///
    /// As [`batch`](Self::batch).
    pub fn online(&self, records: &SignatureRecords) -> Result<DedupResult> {
        self.check(records)?;
        let n = records.len();
        let k = records.permutations();
        let mut index = LshIndex::new(self.banding, k);
        let mut uf = UnionFind::new(n);
        let mut pairs = Vec::new();
        let mut timings = Vec::new();
        let mut buf = records.buffer();
        let sets = self.verifier.map(|v| SetCache::new(v, n));
        timed(&mut timings, "online check", || {
            records.values.chunks(|first, values| {
                for (at, sig) in values.chunks_exact(k).enumerate() {
                    let i = (first + at) as u32;
                    if !records.live(i) {
                        continue;
                    }
                    let mut owner = None;
                    for m in index.query(sig, self.threshold) {
                        let kept = records.read_signature(m.id, &mut buf)?;
                        if let Some(p) = self.judge(m.id, kept, i, sig, sets.as_ref())? {
                            owner = Some(p);
                            break;
                        }
                    }
                    match owner {
                        Some(p) => {
                            uf.union(p.a, i);
                            if self.pairs {
                                pairs.push(p);
                            }
                        }
                        None => index.insert(i, sig),
                    }
                }
                Ok(())
            })
        })?;
        let clusters = make_clusters(uf, Keep::First, true, |i| records.length(i));
        let layout = format!("MinHash LSH, {}, threshold {}", self.banding, self.threshold);
        Ok(DedupResult { clusters, pairs, layout, timings, indexed: Vec::new() })
    }
}

/// MinHash's rule for the split: a shared band key and an estimate at
/// least the threshold ([`LshDedup::links`], by keys). Centres are scanned
/// while few, then looked up in an [`LshIndex`] of the same banding.
struct SignatureRule<'a> {
    records: &'a SignatureRecords,
    threshold: f64,
    banding: Banding,
}

/// A member for the split: its signature and band keys.
struct Banded {
    values: Vec<u32>,
    keys: Vec<u64>,
}

/// A component's centres, by position: their signatures and band keys
/// (flat), and their index once they are many.
struct SignatureCentres {
    values: Vec<u32>,
    keys: Vec<u64>,
    index: Option<LshIndex>,
}

impl Rule for SignatureRule<'_> {
    type Member = Banded;
    type Centres = SignatureCentres;

    fn load(&self, i: u32) -> Result<Banded> {
        let mut buf = self.records.buffer();
        let values = self.records.read_signature(i, &mut buf)?.to_vec();
        let keys = (0..self.banding.bands).map(|b| self.banding.key(&values, b)).collect();
        Ok(Banded { values, keys })
    }

    fn centres(&self, _members: usize) -> Result<SignatureCentres> {
        Ok(SignatureCentres { values: Vec::new(), keys: Vec::new(), index: None })
    }

    fn near(&self, c: &SignatureCentres, x: &Banded, out: &mut Vec<u32>) -> Result<()> {
        if let Some(index) = &c.index {
            out.extend(index.query(&x.values, self.threshold).into_iter().map(|m| m.id));
            return Ok(());
        }
        let (k, bands) = (x.values.len(), x.keys.len());
        let mut found: Vec<(std::cmp::Reverse<usize>, u32)> = Vec::new();
        for (at, (values, keys)) in c.values.chunks_exact(k).zip(c.keys.chunks_exact(bands)).enumerate() {
            if keys.iter().zip(&x.keys).any(|(a, b)| a == b) {
                let equal = crate::minhash::equal_values(values, &x.values);
                if equal as f64 / k as f64 >= self.threshold {
                    found.push((std::cmp::Reverse(equal), at as u32));
                }
            }
        }
        found.sort_unstable();
        out.extend(found.into_iter().map(|(_, at)| at));
        Ok(())
    }

    fn add(&self, c: &mut SignatureCentres, x: Banded) -> Result<()> {
        let k = x.values.len();
        let at = (c.values.len() / k) as u32;
        c.values.extend_from_slice(&x.values);
        c.keys.extend_from_slice(&x.keys);
        match &mut c.index {
            Some(index) => index.insert(at, &x.values),
            None if at as usize >= SCANNED_CENTRES => {
                let mut index = LshIndex::new(self.banding, k);
                for (i, values) in c.values.chunks_exact(k).enumerate() {
                    index.insert(i as u32, values);
                }
                c.index = Some(index);
            }
            None => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bucketed sort equals a plain sort: uniform keys, keys crowded
    /// into one bucket, repeats, and inputs below the bucketing size.
    #[test]
    fn the_bucketed_sort_is_a_sort() {
        let mut rng = neardup_testkit::Rng(1);
        let mut next = || rng.next();
        let uniform: Vec<(u64, u32)> = (0..200_000u32).map(|i| (next(), i)).collect();
        let crowded: Vec<(u64, u32)> = (0..100_000u32).map(|i| (next() >> 20, 100_000 - i)).collect();
        let repeats: Vec<(u64, u32)> = (0..150_000u32).map(|i| (next() % 50, i)).collect();
        let small: Vec<(u64, u32)> = (0..1000u32).map(|i| (next(), i % 7)).collect();
        let mut out = Vec::new();
        for keys in [uniform, crowded, repeats, small] {
            sort_by_key_bits(&keys, &mut out);
            let mut want = keys.clone();
            want.sort_unstable();
            assert_eq!(out, want);
        }
    }
}
