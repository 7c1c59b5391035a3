//! [`OutOfCore`]: SimHash dedup of more 64-bit fingerprints than memory
//! holds — the batch of [`Dedup::batch`](super::Dedup::batch) with every
//! per-record column on disk.
//!
//! In memory a batch holds the fingerprints, their sorted tables and
//! union-find (60–80 bytes a record). Here:
//!
//! 1. **Pairs, a table at a time.** For each table of a pigeonhole layout
//!    (the fewest tables whose key runs hold ~32 records: a table costs a
//!    pass over the disk, not sorting time), every record is written as
//!    `(permuted fingerprint, record)` (12 bytes) to one of `P` partition
//!    files by the top bits of its key, so a key run never straddles two;
//!    each partition is read back, sorted in memory, and its runs are
//!    joined exactly as a shuffled group of the distributed job
//!    ([`ShardedPairs`]): identical fingerprints are linked, distinct ones
//!    within `k` found by the table that owns the pair.
//! 2. **Components**, by union-find over record numbers ([`Parents`]: 4
//!    bytes a record, in memory or, past half of `memory`, a mapped
//!    temporary file) — the one per-record structure; links are never
//!    held, they go into it as each partition yields them.
//! 3. **Clusters.** Every record of a component of two or more is written
//!    as `(root, record, fingerprint)` to an external sort; components come
//!    back one at a time, in record order, and are split into justified
//!    clusters (or kept whole) by the same code as in memory. Clusters are
//!    sorted by their first member through a second external sort, so they
//!    come out in [`Dedup::batch`](super::Dedup::batch)'s order.
//!
//! The clusters are exactly those of [`Dedup::batch`](super::Dedup::batch)
//! with the same fixed radius and keep-first order (a test compares them).
//! Memory: union-find (4 bytes a record unless mapped), a bit a record for
//! the removed set, one partition, one batch of components — the largest
//! component must fit.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use rayon::prelude::*;

use super::batch::FingerprintRule;
use super::extsort::Sorter;
use super::parents::Parents;
use super::spill::{spill_error, SpillColumn};
use super::split::{self, ClusterMode};
use super::{Cluster, Records};
use crate::error::{Error, Result};
use crate::index::layout::LayoutSpec;
use crate::index::pairs::PairsOptions;
use crate::index::sharded::ShardedPairs;
use crate::index::sort::sort_by_top;
use crate::index::Words;
use crate::radius::Radius;

/// Key-run length the layout aims at: each table is a pass over the disk,
/// so fewer, longer runs win where in memory more tables would.
const RUN_ROWS: usize = 32;

/// Bytes of a partition row on disk: permuted fingerprint and record.
const ROW_BYTES: usize = 12;

/// Bytes a partition row takes while sorted (two `u128` copies) and
/// joined.
const ROW_MEMORY: u64 = 40;

/// Bytes a component member takes while its batch is split (its row and
/// fingerprint, the batch's records, the split's centres and clusters).
const MEMBER_MEMORY: u64 = 128;

/// Out-of-core SimHash dedup of 64-bit fingerprints: the clusters of
/// [`Dedup::batch`](super::Dedup::batch) (fixed radius, keep-first order)
/// with nothing per record in memory but union-find (4 bytes a record,
/// a mapped temporary file past half of [`memory`](Self::memory)). Pairs
/// are found a table at a time through partition files of `(permuted
/// fingerprint, record)` rows; components and clusters leave through
/// external sorts. Temporary files go to the folder given to
/// [`new`](Self::new) and are gone when the run ends, even by `kill -9`.
///
/// ```
/// use neardup::dedup::{OutOfCore, SpillColumn};
/// use neardup::Radius;
///
/// let dir = tempfile::tempdir()?;
/// let mut fps = SpillColumn::new(2);
/// for fp in [0b1011u64, 0xffff_0000_ffff_0000, 0b1001] {
///     fps.push(&[fp as u32, (fp >> 32) as u32])?;
/// }
/// let mut clusters = Vec::new();
/// let found = OutOfCore::new(Radius::fixed(3), dir.path()).memory(64 << 20).run(&fps, &mut |c| {
///     clusters.push(c.members.clone());
///     Ok(())
/// })?;
/// assert_eq!(clusters, [vec![0, 2]]);
/// assert!(found.is_removed(2) && !found.is_removed(0));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct OutOfCore {
    radius: Radius,
    dir: PathBuf,
    memory: u64,
    clusters: ClusterMode,
    blocks: Option<u32>,
}

/// What an [`OutOfCore`] run found, besides the clusters it handed out.
#[derive(Clone, Debug)]
pub struct OutOfCoreResult {
    /// Records read.
    pub documents: usize,
    /// Clusters handed out.
    pub clusters: usize,
    /// Records removed.
    pub removed: usize,
    /// The layout of the pairs stage, as `blocks=M tables=T`.
    pub layout: String,
    /// Partitions a table was cut into.
    pub partitions: usize,
    /// Whether union-find lived in a mapped file.
    pub mapped: bool,
    /// Bytes written to temporary files.
    pub spilled_bytes: u64,
    /// Stage names and seconds.
    pub timings: Vec<(&'static str, f64)>,
    removed_bits: Vec<u64>,
}

impl OutOfCoreResult {
    /// Whether record `i` was removed (a member, not the kept one, of a
    /// cluster).
    pub fn is_removed(&self, i: usize) -> bool {
        self.removed_bits[i / 64] >> (i % 64) & 1 == 1
    }
}

impl OutOfCore {
    /// Fingerprints within `radius` (a fixed one: without feature counts a
    /// radius cannot shrink with length), temporary files in `dir`.
    /// Defaults: `memory` 1 GiB, justified clusters, the layout chosen for
    /// the records' number.
    pub fn new(radius: Radius, dir: impl Into<PathBuf>) -> OutOfCore {
        OutOfCore { radius, dir: dir.into(), memory: 1 << 30, clusters: ClusterMode::Justified, blocks: None }
    }

    /// Bytes the run may hold (at least 64 KiB is used); the largest
    /// component is held whole whatever this says.
    pub fn memory(mut self, bytes: u64) -> OutOfCore {
        self.memory = bytes;
        self
    }

    /// Justified clusters (the default) or whole components.
    pub fn clusters(mut self, mode: ClusterMode) -> OutOfCore {
        self.clusters = mode;
        self
    }

    /// Blocks of the pigeonhole layout (`None`: chosen for the records).
    pub fn blocks(mut self, blocks: Option<u32>) -> OutOfCore {
        self.blocks = blocks;
        self
    }

    /// Deduplicates `fingerprints` (a column of width 2: each row a 64-bit
    /// fingerprint as its low and high halves), handing each cluster to
    /// `on_cluster` in the order of their first members.
    ///
    /// # Errors
    ///
    /// A radius that is not fixed or not below 64 bits, a column
    /// not of width 2, more than `u32::MAX - 1` records, temporary files
    /// that cannot be written or read, or what `on_cluster` returns.
    pub fn run(
        &self,
        fingerprints: &SpillColumn,
        on_cluster: &mut dyn FnMut(&Cluster) -> Result<()>,
    ) -> Result<OutOfCoreResult> {
        if !self.radius.is_fixed() {
            return Err(Error::Config(
                "out-of-core dedup takes a fixed radius (fingerprints without feature counts)".into(),
            ));
        }
        if fingerprints.width() != 2 {
            return Err(Error::Config(format!(
                "a column of 64-bit fingerprints has width 2, not {}",
                fingerprints.width()
            )));
        }
        let n = fingerprints.len();
        if n >= u32::MAX as usize {
            return Err(Error::Config(format!("at most 2^32 - 2 fingerprints at once, not {n}")));
        }
        let k = self.radius.max_k();
        let plan = match self.blocks {
            Some(m) => ShardedPairs::new(LayoutSpec { bits: 64, k, blocks: m })?,
            None => ShardedPairs::for_shuffle(64, k, n, RUN_ROWS)?,
        };
        let memory = self.memory.max(64 << 10);
        let mut timings = Vec::new();
        let mut spilled = 0u64;
        // Union-find in memory when it takes at most half the budget.
        let mut parents = Parents::new(n, memory / 2, &self.dir)?;
        let held = if parents.is_mapped() { 0 } else { n as u64 * 4 };
        let work = memory.saturating_sub(held + n as u64 / 8).max(64 << 10);
        let partitions = partitions_for(n, work, &plan);
        let t0 = Instant::now();
        for t in 0..plan.tables() {
            spilled += self.table_links(fingerprints, &plan, t, partitions, &mut parents)?;
        }
        timings.push(("find pairs (out of core)", t0.elapsed().as_secs_f64()));
        let mapped = parents.is_mapped();
        let t0 = Instant::now();
        let sorter = self.components(fingerprints, parents, work / 2)?;
        spilled += sorter.spilled_bytes();
        timings.push(("components", t0.elapsed().as_secs_f64()));
        let t0 = Instant::now();
        let mut found = OutOfCoreResult {
            documents: n,
            clusters: 0,
            removed: 0,
            layout: format!("blocks={} tables={}", plan.spec().blocks, plan.tables()),
            partitions,
            mapped,
            spilled_bytes: 0,
            timings: Vec::new(),
            removed_bits: vec![0; n.div_ceil(64)],
        };
        spilled += self.clusters_of(sorter, work / 2, &mut found, on_cluster)?;
        timings.push(("split components", t0.elapsed().as_secs_f64()));
        found.spilled_bytes = spilled;
        found.timings = timings;
        Ok(found)
    }

    /// Table `t`'s pairs into `parents`; returns the bytes written.
    fn table_links(
        &self,
        fingerprints: &SpillColumn,
        plan: &ShardedPairs,
        t: usize,
        partitions: usize,
        parents: &mut Parents,
    ) -> Result<u64> {
        let dir = &self.dir;
        let pbits = partitions.trailing_zeros();
        let part_of = |p: u64| if pbits == 0 { 0 } else { (p >> (64 - pbits)) as usize };
        let buffer = (1usize << 20).min((64 << 20) / partitions).max(16 << 10);
        let mut files: Vec<BufWriter<File>> = (0..partitions)
            .map(|_| {
                Ok(BufWriter::with_capacity(
                    buffer,
                    tempfile::tempfile_in(dir).map_err(|e| spill_error(dir, e, 0))?,
                ))
            })
            .collect::<Result<_>>()?;
        let mut written = 0u64;
        fingerprints.chunks(|first, values| {
            let rows: Vec<(usize, [u8; ROW_BYTES])> = values
                .par_chunks(2)
                .enumerate()
                .map(|(i, v)| {
                    let p = plan.permute(t, u64::from(v[0]) | u64::from(v[1]) << 32);
                    let mut b = [0u8; ROW_BYTES];
                    b[..8].copy_from_slice(&p.to_le_bytes());
                    b[8..].copy_from_slice(&((first + i) as u32).to_le_bytes());
                    (part_of(p), b)
                })
                .collect();
            for (part, b) in rows {
                files[part].write_all(&b).map_err(|e| spill_error(dir, e, written))?;
                written += ROW_BYTES as u64;
            }
            Ok(())
        })?;
        let key_shift = 64 - plan.key_bits(t);
        for w in files {
            let mut file = w.into_inner().map_err(|e| spill_error(dir, e.into_error(), written))?;
            std::io::Seek::rewind(&mut file).map_err(|e| spill_error(dir, e, written))?;
            let rows = read_partition(file, dir)?;
            let links = partition_links(plan, t, rows, pbits, key_shift);
            for (a, b) in links {
                parents.union(a, b);
            }
        }
        Ok(written)
    }

    /// Writes every record of a component of two or more as `(root,
    /// record, fingerprint)` to a sorter; drops union-find.
    fn components(&self, fingerprints: &SpillColumn, mut parents: Parents, memory: u64) -> Result<Sorter> {
        let n = parents.len();
        let root = parents.flatten();
        let mut grouped = vec![0u64; n.div_ceil(64)];
        for (i, &r) in root.iter().enumerate() {
            if r as usize != i {
                grouped[i / 64] |= 1 << (i % 64);
                grouped[r as usize / 64] |= 1 << (r % 64);
            }
        }
        let mut sorter = Sorter::new(&self.dir, memory);
        fingerprints.chunks(|first, values| {
            for (j, v) in values.chunks_exact(2).enumerate() {
                let i = first + j;
                if grouped[i / 64] >> (i % 64) & 1 == 1 {
                    let fp = u64::from(v[0]) | u64::from(v[1]) << 32;
                    sorter.push(u128::from(root[i]) << 96 | (i as u128) << 64 | u128::from(fp))?;
                }
            }
            Ok(())
        })?;
        Ok(sorter)
    }

    /// Splits the sorted components into clusters (or keeps them whole)
    /// and hands them out by first member; returns the bytes written.
    fn clusters_of(
        &self,
        sorter: Sorter,
        memory: u64,
        found: &mut OutOfCoreResult,
        on_cluster: &mut dyn FnMut(&Cluster) -> Result<()>,
    ) -> Result<u64> {
        let whole = self.clusters == ClusterMode::Components;
        // Justified clusters go to a file, their places to a sorter by
        // first member; whole components already come in that order.
        let mut places = Sorter::new(&self.dir, memory / 4);
        let mut file = if whole {
            None
        } else {
            Some(BufWriter::new(tempfile::tempfile_in(&self.dir).map_err(|e| spill_error(&self.dir, e, 0))?))
        };
        let mut offset = 0u64;
        let mut emit = |c: Cluster, found: &mut OutOfCoreResult| -> Result<()> {
            for &m in &c.members {
                if m != c.kept {
                    found.removed_bits[m as usize / 64] |= 1 << (m % 64);
                    found.removed += 1;
                }
            }
            found.clusters += 1;
            match &mut file {
                None => on_cluster(&c),
                Some(f) => {
                    places.push(u128::from(c.members[0]) << 64 | u128::from(offset))?;
                    let mut bytes = Vec::with_capacity(8 + 4 * c.members.len());
                    bytes.extend_from_slice(&c.kept.to_le_bytes());
                    bytes.extend_from_slice(&(c.members.len() as u32).to_le_bytes());
                    bytes.extend(c.members.iter().flat_map(|m| m.to_le_bytes()));
                    f.write_all(&bytes).map_err(|e| spill_error(&self.dir, e, offset))?;
                    offset += bytes.len() as u64;
                    Ok(())
                }
            }
        };
        let mut batch = Batch::default();
        let mut last_root = u32::MAX;
        sorter.for_each(|v| {
            let (root, row, fp) = ((v >> 96) as u32, (v >> 64) as u32, v as u64);
            if root != last_root {
                if batch.rows.len() as u64 * MEMBER_MEMORY >= memory {
                    for c in self.split_batch(&batch)? {
                        emit(c, found)?;
                    }
                    batch.clear();
                }
                batch.starts.push(batch.rows.len());
                last_root = root;
            }
            batch.rows.push(row);
            batch.fps.push(fp);
            Ok(())
        })?;
        for c in self.split_batch(&batch)? {
            emit(c, found)?;
        }
        let Some(f) = file else { return Ok(0) };
        let file = f.into_inner().map_err(|e| spill_error(&self.dir, e.into_error(), offset))?;
        let spilled = offset + places.spilled_bytes();
        let mut head = [0u8; 8];
        places.for_each(|v| {
            let at = v as u64;
            let read = |buf: &mut [u8], at: u64| {
                file.read_exact_at(buf, at).map_err(|e| Error::Spill {
                    dir: self.dir.clone(),
                    message: format!("cannot read a cluster back: {e}"),
                })
            };
            read(&mut head, at)?;
            let kept = u32::from_le_bytes(head[..4].try_into().expect("4 bytes"));
            let len = u32::from_le_bytes(head[4..].try_into().expect("4 bytes")) as usize;
            let mut body = vec![0u8; 4 * len];
            read(&mut body, at + 8)?;
            let members =
                body.chunks_exact(4).map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes"))).collect();
            on_cluster(&Cluster { kept, members })
        })?;
        Ok(spilled)
    }

    /// The clusters of a batch of whole components, members ascending.
    fn split_batch(&self, batch: &Batch) -> Result<Vec<Cluster>> {
        let bounds: Vec<(usize, usize)> = batch
            .starts
            .iter()
            .enumerate()
            .map(|(c, &s)| (s, batch.starts.get(c + 1).copied().unwrap_or(batch.rows.len())))
            .collect();
        if self.clusters == ClusterMode::Components {
            return Ok(bounds
                .iter()
                .map(|&(s, e)| Cluster { kept: batch.rows[s], members: batch.rows[s..e].to_vec() })
                .collect());
        }
        let records = Records::from_words(Words::B64(batch.fps.clone()));
        let layout = PairsOptions { blocks: None, memory: self.memory / 4 };
        let rule = FingerprintRule { records: &records, radius: &self.radius, layout };
        let split: Vec<Vec<Cluster>> = bounds
            .into_par_iter()
            .map(|(s, e)| split::component(&rule, &(s as u32..e as u32).collect::<Vec<u32>>(), None))
            .collect::<Result<_>>()?;
        Ok(split
            .into_iter()
            .flatten()
            .map(|c| Cluster {
                kept: batch.rows[c.kept as usize],
                members: c.members.iter().map(|&m| batch.rows[m as usize]).collect(),
            })
            .collect())
    }
}

/// Components gathered to be split together: rows and fingerprints in
/// order, each component's start.
#[derive(Default)]
struct Batch {
    rows: Vec<u32>,
    fps: Vec<u64>,
    starts: Vec<usize>,
}

impl Batch {
    fn clear(&mut self) {
        self.rows.clear();
        self.fps.clear();
        self.starts.clear();
    }
}

/// Partitions a table is cut into: a power of two, enough that one fits
/// `memory` while sorted, no more than the shortest key has bits for.
fn partitions_for(n: usize, memory: u64, plan: &ShardedPairs) -> usize {
    let rows = (memory / ROW_MEMORY).max(1);
    let wanted = (n as u64).div_ceil(rows).max(1).next_power_of_two();
    let max_bits = (0..plan.tables()).map(|t| plan.key_bits(t)).min().unwrap_or(0).min(12);
    wanted.min(1 << max_bits) as usize
}

/// A partition file's rows as `permuted << 32 | record`.
fn read_partition(file: File, dir: &Path) -> Result<Vec<u128>> {
    let len = file.metadata().map_err(|e| Error::io(dir, e))?.len() as usize;
    let mut bytes = vec![0u8; len];
    BufReader::new(file).read_exact(&mut bytes).map_err(|e| Error::io(dir, e))?;
    Ok(bytes
        .par_chunks_exact(ROW_BYTES)
        .map(|b| {
            let p = u64::from_le_bytes(b[..8].try_into().expect("8 bytes"));
            let row = u32::from_le_bytes(b[8..].try_into().expect("4 bytes"));
            u128::from(p) << 32 | u128::from(row)
        })
        .collect())
}

/// The links of one partition of table `t`: rows sorted, then each key run
/// joined (identical fingerprints linked on table 0 only, where every
/// repeat meets its first; distinct ones by the table owning the pair).
fn partition_links(
    plan: &ShardedPairs,
    t: usize,
    mut rows: Vec<u128>,
    pbits: u32,
    key_shift: u32,
) -> Vec<(u32, u32)> {
    let top_shift = 64u32.saturating_sub(pbits + crate::index::sort::RADIX_BITS);
    let mask = (1usize << crate::index::sort::RADIX_BITS) - 1;
    sort_by_top(&mut rows, |&x| (((x >> 32) as u64) >> top_shift) as usize & mask);
    let key = |x: u128| if key_shift >= 64 { 0 } else { ((x >> 32) as u64) >> key_shift };
    // Chunks cut at run ends, joined on every core.
    let step = (rows.len() / (rayon::current_num_threads() * 8)).max(1 << 12);
    let mut cuts = vec![0usize];
    while let Some(&last) = cuts.last() {
        if last >= rows.len() {
            break;
        }
        let mut end = (last + step).min(rows.len());
        while end < rows.len() && key(rows[end]) == key(rows[end - 1]) {
            end += 1;
        }
        cuts.push(end);
    }
    let parts: Vec<Vec<(u32, u32)>> = cuts
        .par_windows(2)
        .map(|c| {
            let chunk = &rows[c[0]..c[1]];
            let mut links = Vec::new();
            let (mut ps, mut firsts, mut pairs) = (Vec::new(), Vec::new(), Vec::new());
            let mut s = 0;
            while s < chunk.len() {
                let k0 = key(chunk[s]);
                let mut e = s + 1;
                while e < chunk.len() && key(chunk[e]) == k0 {
                    e += 1;
                }
                ps.clear();
                firsts.clear();
                for &x in &chunk[s..e] {
                    let (p, row) = ((x >> 32) as u64, x as u32);
                    if ps.last() == Some(&p) {
                        if t == 0 {
                            links.push((*firsts.last().expect("a first"), row));
                        }
                    } else {
                        ps.push(p);
                        firsts.push(row);
                    }
                }
                if ps.len() > 1 {
                    pairs.clear();
                    plan.sorted_group_pairs(t, &ps, &mut pairs);
                    for &(a, b, _) in &pairs {
                        let at = |w: u64| {
                            firsts[ps.binary_search(&plan.permute(t, w)).expect("a word of the run")]
                        };
                        links.push((at(a), at(b)));
                    }
                }
                s = e;
            }
            links
        })
        .collect();
    parts.into_iter().flatten().collect()
}
