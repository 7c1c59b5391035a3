//! [`ShardedLsh`]: MinHash LSH dedup cut for a shuffle — the twin of
//! [`ShardedDedup`](super::ShardedDedup) for signatures. A distributed job
//! (the Spark job in `bindings/python`) only moves rows; which rows a
//! signature sends, which candidates a shuffled partition yields and how a
//! group of candidates becomes clusters are decided here, once.
//!
//! The job moves each signature (512 bytes at K = 128) once, not once per
//! band:
//!
//! 1. [`band_rows`](ShardedLsh::band_rows): a signature sends one row
//!    `(band key, vertex)` per band — 16 bytes each, its
//!    [vertex](ShardedLsh::vertex) standing for the signature.
//! 2. Rows shuffled by band key; [`candidates`](ShardedLsh::candidates)
//!    links the vertices of each run of equal keys — unjudged, a spanning
//!    forest per partition, and `(v, v)` for a vertex that more than one
//!    document has.
//! 3. The connected components of all the candidates (on the driver or in
//!    DataFrames) name each signature's group.
//! 4. The documents of every group of two or more, signatures included,
//!    shuffled by group and sorted in input order: [`owners`](ShardedLsh::owners)
//!    runs [`LshDedup::batch`] on each group.
//!
//! A pair the batch links shares a band key, so both ends are in one
//! group: each group is a union of the batch's components, and the batch
//! over a group decides for its members what the batch over the whole
//! input decides (justified clusters included, since a member is removed
//! only for a centre it links to). So the clusters are exactly those of
//! `neardup dedup --method minhash` on the same documents in the same order.
//!
//! ```
//! use neardup::dedup::{SignatureRecords, ShardedLsh};
//! use neardup::minhash::MinHasher;
//!
//! let m = MinHasher::preset("minhash")?;
//! let texts = ["the quick brown fox jumps over the lazy dog by the river bank today",
//!              "the quick brown fox jumps over the lazy dog by the river bank today!",
//!              "an unrelated sentence about rice, beans and the slow art of cooking"];
//! let sigs = texts.iter().map(|t| Ok(m.signature(t)?.values().to_vec())).collect::<neardup::Result<Vec<_>>>()?;
//! let plan = ShardedLsh::of(&m);
//! let vertices: Vec<u64> = sigs.iter().map(|s| ShardedLsh::vertex(s)).collect();
//! let mut rows = Vec::new();
//! plan.band_rows(&sigs.concat(), &vertices, &mut rows);
//! // One machine stands for the shuffle here: every row in one partition.
//! let links = ShardedLsh::candidates(&mut rows);
//! assert_eq!(links, [(vertices[0].min(vertices[1]), vertices[0].max(vertices[1]))]);
//! // The group of the first two, in input order.
//! let mut group = SignatureRecords::new(m.permutations());
//! for (s, t) in sigs.iter().zip(&texts).take(2) {
//!     group.push(s, 1, t.chars().count())?;
//! }
//! let owners = plan.owners(&group, &vertices[..2], &[7, 7])?;
//! assert_eq!(owners.owner, [0, 0]); // the second is removed for the first
//! assert_eq!(owners.first, [0, 0]);
//! # Ok::<(), neardup::Error>(())
//! ```

use std::collections::HashMap;

use rayon::prelude::*;

use super::lsh::signature_hash;
use super::{ClusterMode, Keep, LshDedup, SignatureRecords};
use crate::error::{Error, Result};
use crate::index::cluster::UnionFind;
use crate::minhash::{estimate, Banding, MinHasher};
use crate::similarity::round4;

/// The MinHash rule of a sharded job: the threshold and banding of the
/// pipeline, which member is kept and how clusters are made (as
/// [`LshDedup`] has them).
#[derive(Clone, Copy, Debug)]
pub struct ShardedLsh {
    threshold: f64,
    banding: Banding,
    keep: Keep,
    clusters: ClusterMode,
}

/// What [`ShardedLsh::owners`] says of each document of a partition.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Owners {
    /// The document it is removed for (its position), or itself when kept.
    pub owner: Vec<u32>,
    /// The first document (in input order) of its cluster, or itself when
    /// in none.
    pub first: Vec<u32>,
    /// Its estimated similarity to its cluster's kept document, rounded to
    /// 4 places as `neardup dedup` writes it (1 for the kept one).
    pub similarity: Vec<f64>,
    /// Whether it is in a cluster of two or more.
    pub clustered: Vec<bool>,
}

impl ShardedLsh {
    /// The rule at Jaccard `threshold` with candidates from `banding`,
    /// keeping the first of each cluster, justified clusters.
    pub fn new(threshold: f64, banding: Banding) -> ShardedLsh {
        ShardedLsh { threshold, banding, keep: Keep::First, clusters: ClusterMode::Justified }
    }

    /// The rule of `minhasher`'s pipeline.
    pub fn of(minhasher: &MinHasher) -> ShardedLsh {
        ShardedLsh::new(minhasher.threshold(), minhasher.banding())
    }

    /// Which member of a cluster is kept. By default, the first.
    pub fn keep(mut self, keep: Keep) -> Self {
        self.keep = keep;
        self
    }

    /// How clusters are made. By default, [`ClusterMode::Justified`].
    pub fn clusters(mut self, mode: ClusterMode) -> Self {
        self.clusters = mode;
        self
    }

    /// The threshold.
    pub fn threshold(&self) -> f64 {
        self.threshold
    }

    /// The banding.
    pub fn banding(&self) -> Banding {
        self.banding
    }

    /// The vertex that stands for a signature in the shuffle: the XXH3-64
    /// of its values' little-endian bytes. Two different signatures with
    /// one vertex (about once in 10^19 pairs) are an error in
    /// [`owners`](Self::owners), never a silent merge.
    pub fn vertex(signature: &[u32]) -> u64 {
        signature_hash(signature)
    }

    /// Appends to `out` the rows `(band key, vertex)` that a batch of
    /// signatures (`signatures` holds them one after another) sends: one
    /// per band for each distinct vertex of the batch, and one more of the
    /// first band for a vertex the batch has twice or more (so that the
    /// partition sees it repeated).
    ///
    /// # Panics
    ///
    /// If `signatures` is not one signature per vertex.
    pub fn band_rows(&self, signatures: &[u32], vertices: &[u64], out: &mut Vec<(u64, u64)>) {
        let n = vertices.len();
        assert!(n == 0 || signatures.len().is_multiple_of(n), "one signature per vertex");
        let k = signatures.len().checked_div(n).unwrap_or(0);
        let mut seen: HashMap<u64, bool> = HashMap::with_capacity(n);
        let firsts: Vec<usize> = (0..n)
            .filter(|&i| match seen.get_mut(&vertices[i]) {
                Some(repeated) => {
                    *repeated = true;
                    false
                }
                None => {
                    seen.insert(vertices[i], false);
                    true
                }
            })
            .collect();
        out.reserve(firsts.len() * self.banding.bands);
        for i in firsts {
            let signature = &signatures[i * k..(i + 1) * k];
            let v = vertices[i];
            for band in 0..self.banding.bands {
                out.push((self.banding.key(signature, band), v));
            }
            if seen[&v] {
                out.push((self.banding.key(signature, 0), v));
            }
        }
    }

    /// The shuffle partition (of `parts`) a band row of `key` goes to, for
    /// a job that sends rows packed per partition: rows of one key always
    /// meet. `parts` must be at least 1.
    pub fn part(key: u64, parts: usize) -> usize {
        // Band keys are uniform hashes: their high bits spread as well as any.
        ((u128::from(key) * parts as u128) >> 64) as usize
    }

    /// The candidate links of one shuffled partition of band rows, in any
    /// order: the vertices of each run of equal band keys joined — a
    /// spanning forest of them, each link `(smaller, larger)` — and `(v,
    /// v)` for each vertex a run holds twice (two documents with one
    /// signature). Sorted.
    pub fn candidates(rows: &mut [(u64, u64)]) -> Vec<(u64, u64)> {
        rows.par_sort_unstable();
        let mut local: HashMap<u64, u32> = HashMap::new();
        let mut names: Vec<u64> = Vec::new();
        let mut id = |v: u64| {
            *local.entry(v).or_insert_with(|| {
                names.push(v);
                (names.len() - 1) as u32
            })
        };
        let mut joins: Vec<(u32, u32)> = Vec::new();
        let mut repeated: Vec<u64> = Vec::new();
        for run in rows.chunk_by(|x, y| x.0 == y.0).filter(|r| r.len() > 1) {
            let first = id(run[0].1);
            for pair in run.windows(2) {
                if pair[0].1 == pair[1].1 {
                    repeated.push(pair[0].1);
                } else {
                    joins.push((first, id(pair[1].1)));
                }
            }
        }
        let mut uf = UnionFind::new(names.len());
        let mut links: Vec<(u64, u64)> = joins
            .into_iter()
            .filter(|&(a, b)| uf.union(a, b))
            .map(|(a, b)| {
                (names[a as usize].min(names[b as usize]), names[a as usize].max(names[b as usize]))
            })
            .collect();
        repeated.sort_unstable();
        repeated.dedup();
        links.extend(repeated.into_iter().map(|v| (v, v)));
        links.sort_unstable();
        links
    }

    /// The clusters of one shuffled partition of groups: `records` are the
    /// documents (signature, length in characters) of whole groups,
    /// `groups[i]` names document `i`'s group, a group's documents are
    /// adjacent and in input order; `vertices` are their vertices. Each
    /// group is deduplicated by [`LshDedup::batch`] with this rule's keep
    /// and cluster mode, the groups on all cores.
    ///
    /// # Errors
    ///
    /// Columns of different lengths, a bad threshold or banding, or two
    /// different signatures with one vertex.
    pub fn owners(&self, records: &SignatureRecords, vertices: &[u64], groups: &[i64]) -> Result<Owners> {
        let n = records.len();
        if vertices.len() != n || groups.len() != n {
            return Err(Error::Config(format!(
                "{n} records, {} vertices and {} groups: give one of each per record",
                vertices.len(),
                groups.len()
            )));
        }
        let runs = super::split::group_runs(groups);
        let dedup = LshDedup::new(self.threshold, self.banding).keep(self.keep).clusters(self.clusters);
        let decided: Vec<Vec<(u32, u32, u32, f64)>> = runs
            .into_par_iter()
            .map(|run| self.group(&dedup, records, vertices, run))
            .collect::<Result<_>>()?;
        let mut out = Owners {
            owner: (0..n as u32).collect(),
            first: (0..n as u32).collect(),
            similarity: vec![1.0; n],
            clustered: vec![false; n],
        };
        for (member, owner, first, similarity) in decided.into_iter().flatten() {
            let m = member as usize;
            out.owner[m] = owner;
            out.first[m] = first;
            out.similarity[m] = similarity;
            out.clustered[m] = true;
        }
        Ok(out)
    }

    /// One group's clustered members: `(member, owner, first, similarity)`,
    /// positions in the partition.
    fn group(
        &self,
        dedup: &LshDedup<'_>,
        records: &SignatureRecords,
        vertices: &[u64],
        run: std::ops::Range<usize>,
    ) -> Result<Vec<(u32, u32, u32, f64)>> {
        let base = run.start as u32;
        let mut group = SignatureRecords::new(records.permutations());
        group.reserve(run.len());
        let mut by_vertex: HashMap<u64, u32> = HashMap::with_capacity(run.len());
        for i in run.clone() {
            let signature = records.signature(i as u32);
            let first = *by_vertex.entry(vertices[i]).or_insert(i as u32);
            if records.signature(first) != signature {
                return Err(Error::Config(format!(
                    "two different MinHash signatures share the vertex {:#018x}; please report this \
                     (it is expected about once in 10^19 pairs)",
                    vertices[i]
                )));
            }
            group.push(signature, records.features(i as u32), records.length(i as u32) as usize)?;
        }
        let result = dedup.batch(&group)?;
        let mut out = Vec::new();
        for c in &result.clusters {
            let kept = group.signature(c.kept);
            for &m in &c.members {
                let similarity = round4(estimate(group.signature(m), kept));
                out.push((base + m, base + c.kept, base + c.members[0], similarity));
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A band key's run names each vertex once in the links, and repeats
    /// of one vertex give a self link; runs of one row give nothing.
    #[test]
    fn candidates_are_a_forest_with_self_links_for_repeats() {
        let mut rows = vec![(1, 10), (1, 11), (2, 11), (2, 12), (2, 10), (3, 13), (4, 14), (4, 14), (5, 15)];
        assert_eq!(ShardedLsh::candidates(&mut rows), [(10, 11), (10, 12), (14, 14)]);
        assert!(ShardedLsh::candidates(&mut []).is_empty());
    }

    /// Band keys spread evenly over the parts, each below the count.
    #[test]
    fn parts_are_even_and_in_range() {
        let mut rng = neardup_testkit::Rng(5);
        for parts in [1usize, 3, 8, 200] {
            let mut count = vec![0u32; parts];
            for _ in 0..20_000 * parts {
                count[ShardedLsh::part(rng.next(), parts)] += 1;
            }
            let (lo, hi) = (count.iter().min().unwrap(), count.iter().max().unwrap());
            assert!(*lo > 18_000 && *hi < 22_000, "{parts} parts: {lo}..{hi}");
        }
    }
}
