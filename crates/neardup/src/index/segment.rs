//! An immutable sorted segment: the distinct fingerprints of a set of
//! entries, one permuted sorted table per layout table, and the ids.
//!
//! Each table is stored compactly: a directory over the top `d` bits of the
//! permuted fingerprint (offsets, `u32`) and, per entry, only the remaining
//! `f - d` bits in `ceil((f - d) / 8)` bytes. Table 0 leads with blocks
//! `0..m-k`, which is the identity permutation, so its position is the
//! fingerprint's row; ids are stored per row (with offsets when some
//! fingerprint has several ids).

use std::sync::Arc;

use rayon::prelude::*;

use super::blob::{huge_vec, read_u32, read_u64, Blob};
use super::layout::{dir_bits, entry_bytes, Layout};
use super::sort::sort_words;
use super::word::Word;
use crate::error::{Error, Result};

/// One compact permuted table.
#[derive(Clone, Debug)]
pub(crate) struct TableData {
    pub dir_bits: u32,
    pub entry_bytes: usize,
    /// `2^dir_bits + 1` little-endian `u32` offsets.
    pub dir: Blob,
    /// `rows * entry_bytes` bytes plus 16 bytes of padding.
    pub entries: Blob,
}

/// Padding after the packed entries, so that a whole word can always be read.
pub(crate) const ENTRY_PADDING: usize = 16;

#[derive(Clone, Debug)]
pub(crate) struct Segment<W: Word> {
    pub layout: Arc<Layout>,
    /// Distinct fingerprints.
    pub rows: usize,
    /// Ids (little-endian `u64`), grouped by row.
    pub ids: Blob,
    /// `rows + 1` little-endian `u32` offsets into `ids`, when some row has
    /// more than one id; otherwise ids are one per row.
    pub offsets: Option<Blob>,
    pub tables: Vec<TableData>,
    _word: std::marker::PhantomData<W>,
}

impl<W: Word> Segment<W> {
    /// Builds a segment from `(id, fingerprint)` entries.
    pub fn build(layout: Arc<Layout>, mut entries: Vec<(u64, W)>) -> Result<Segment<W>> {
        if entries.len() >= u32::MAX as usize {
            return Err(Error::Config(format!(
                "a segment holds fewer than 2^32 entries, not {}; split the input",
                entries.len()
            )));
        }
        entries.par_sort_unstable_by_key(|&(id, w)| (w, id));
        let mut words: Vec<W> = Vec::with_capacity(entries.len());
        let mut offsets: Vec<u32> = Vec::with_capacity(entries.len() + 1);
        let mut ids = huge_vec(entries.len() * 8);
        for (i, &(id, w)) in entries.iter().enumerate() {
            if words.last() != Some(&w) {
                words.push(w);
                offsets.push(i as u32);
            }
            ids.extend_from_slice(&id.to_le_bytes());
        }
        offsets.push(entries.len() as u32);
        drop(entries);
        Self::from_sorted_unique(layout, words, ids, offsets)
    }

    /// Builds from distinct sorted words, their ids and `rows + 1` offsets.
    pub fn from_sorted_unique(
        layout: Arc<Layout>,
        words: Vec<W>,
        ids: Vec<u8>,
        offsets: Vec<u32>,
    ) -> Result<Segment<W>> {
        let rows = words.len();
        let offsets =
            if offsets.len() == rows + 1 && offsets.iter().enumerate().all(|(i, &o)| o as usize == i) {
                None
            } else {
                let mut b = Vec::with_capacity(offsets.len() * 4);
                for o in offsets {
                    b.extend_from_slice(&o.to_le_bytes());
                }
                Some(Blob::from_vec(b))
            };
        let f = layout.spec.bits;
        let tables = layout
            .tables
            .iter()
            .enumerate()
            .map(|(t, plan)| {
                let d = dir_bits(rows, plan.key_bits);
                if t == 0 {
                    pack_table(&words, f, d)
                } else {
                    let mut p: Vec<W> = words.par_iter().map(|&w| plan.permute(w)).collect();
                    sort_words(&mut p, f);
                    pack_table(&p, f, d)
                }
            })
            .collect();
        Ok(Segment {
            layout,
            rows,
            ids: Blob::from_vec(ids),
            offsets,
            tables,
            _word: std::marker::PhantomData,
        })
    }

    /// Reassembles a segment from stored parts (an index file); the caller
    /// has validated the sizes with [`Segment::check`].
    pub fn from_parts(
        layout: Arc<Layout>,
        rows: usize,
        ids: Blob,
        offsets: Option<Blob>,
        tables: Vec<TableData>,
    ) -> Segment<W> {
        Segment { layout, rows, ids, offsets, tables, _word: std::marker::PhantomData }
    }

    /// Checks that every stored array has the size and order the queries
    /// rely on, so that a damaged file can never make a query read out of
    /// bounds or loop.
    pub fn check(&self) -> std::result::Result<(), String> {
        let f = self.layout.spec.bits;
        if self.tables.len() != self.layout.tables.len() {
            return Err(format!(
                "{} tables stored, the layout has {}",
                self.tables.len(),
                self.layout.tables.len()
            ));
        }
        let n_ids = match &self.offsets {
            None => self.rows,
            Some(o) => {
                if o.len() != (self.rows + 1) * 4 {
                    return Err("the id offsets have the wrong size".into());
                }
                let b = o.bytes();
                let mut prev = 0;
                for i in 0..=self.rows {
                    let v = read_u32(b, i);
                    if v < prev || (i == 0 && v != 0) {
                        return Err("the id offsets are not increasing".into());
                    }
                    prev = v;
                }
                prev as usize
            }
        };
        if self.ids.len() != n_ids * 8 {
            return Err("the ids have the wrong size".into());
        }
        for (t, (td, plan)) in self.tables.iter().zip(&self.layout.tables).enumerate() {
            if td.dir_bits > plan.key_bits.min(30) || td.entry_bytes != entry_bytes(f, td.dir_bits) {
                return Err(format!("table {t} has an impossible shape"));
            }
            if td.dir.len() != ((1usize << td.dir_bits) + 1) * 4
                || td.entries.len() != self.rows * td.entry_bytes + ENTRY_PADDING
            {
                return Err(format!("table {t} has the wrong size"));
            }
            let dir = td.dir.bytes();
            let mut prev = 0u32;
            for b in 0..=(1usize << td.dir_bits) {
                let v = read_u32(dir, b);
                if v < prev || v as usize > self.rows {
                    return Err(format!("table {t}'s directory is not increasing"));
                }
                prev = v;
            }
            if prev as usize != self.rows {
                return Err(format!("table {t}'s directory does not cover the rows"));
            }
        }
        Ok(())
    }

    /// Number of `(id, fingerprint)` entries.
    pub fn entries(&self) -> usize {
        self.ids.len() / 8
    }

    /// The ids of row `row`.
    #[inline]
    pub fn row_ids(&self, row: usize) -> impl Iterator<Item = u64> + '_ {
        let (a, b) = match &self.offsets {
            None => (row, row + 1),
            Some(o) => (read_u32(o.bytes(), row) as usize, read_u32(o.bytes(), row + 1) as usize),
        };
        let ids = self.ids.bytes();
        (a..b).map(move |i| read_u64(ids, i))
    }

    /// The directory bucket of the permuted query `pq` in table `t`.
    #[inline]
    fn bucket(&self, t: usize, pq: W) -> usize {
        let d = self.tables[t].dir_bits;
        if d == 0 {
            0
        } else {
            pq.shr(self.layout.spec.bits - d).low_usize()
        }
    }

    /// Calls `each(position, permuted word)` for the entries of table `t`
    /// whose key equals that of the permuted query `pq`, which lies in
    /// directory bucket `b` spanning entries `lo..hi`.
    #[inline]
    fn probe(&self, t: usize, pq: W, b: usize, mut lo: usize, hi: usize, mut each: impl FnMut(usize, W)) {
        let td = &self.tables[t];
        let f = self.layout.spec.bits;
        let key_bits = self.layout.tables[t].key_bits;
        let w = td.entry_bytes;
        let ent = td.entries.bytes();
        let rest = f - td.dir_bits;
        let emask = W::low_mask(rest);
        let rshift = f - key_bits;
        let target = pq.and(emask).shr(rshift);
        let load = |i: usize| W::read_le(&ent[i * w..]).and(emask);
        let mut len = hi - lo;
        while len > 8 {
            let half = len / 2;
            if load(lo + half).shr(rshift) < target {
                lo += half + 1;
                len -= half + 1;
            } else {
                len = half;
            }
        }
        let top = W::from_u128(b as u128).shl(rest);
        for i in lo..hi {
            let e = load(i);
            let key = e.shr(rshift);
            if key < target {
                continue;
            }
            if key > target {
                break;
            }
            each(i, top.or(e));
        }
    }

    /// The row of fingerprint `x`, if present.
    pub fn find_row(&self, x: W) -> Option<usize> {
        let td = &self.tables[0];
        let f = self.layout.spec.bits;
        let d = td.dir_bits;
        let dir = td.dir.bytes();
        let ent = td.entries.bytes();
        let b = if d == 0 { 0 } else { x.shr(f - d).low_usize() };
        let (mut lo, mut hi) = (read_u32(dir, b) as usize, read_u32(dir, b + 1) as usize);
        let emask = W::low_mask(f - d);
        let target = x.and(emask);
        while lo < hi {
            let mid = (lo + hi) / 2;
            let e = W::read_le(&ent[mid * td.entry_bytes..]).and(emask);
            match e.cmp(&target) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }

    /// Calls `each(id, distance)` for every entry within `k` of `q`, once.
    pub fn query(&self, q: W, k: u32, mut each: impl FnMut(u64, u32)) {
        if k > self.layout.spec.k {
            return self.scan(q, k, each);
        }
        // Three passes over the tables so that their cache misses overlap:
        // prefetch every directory slot, then every first entry, then scan.
        const BATCH: usize = 16;
        let tables = &self.layout.tables;
        let mut pqs = [W::default(); BATCH];
        let mut buckets = [0usize; BATCH];
        let mut ranges = [(0usize, 0usize); BATCH];
        for first in (0..tables.len()).step_by(BATCH) {
            let last = (first + BATCH).min(tables.len());
            for t in first..last {
                let pq = tables[t].permute(q);
                let b = self.bucket(t, pq);
                pqs[t - first] = pq;
                buckets[t - first] = b;
                prefetch(&self.tables[t].dir.bytes()[4 * b..]);
            }
            for t in first..last {
                let dir = self.tables[t].dir.bytes();
                let b = buckets[t - first];
                let (lo, hi) = (read_u32(dir, b) as usize, read_u32(dir, b + 1) as usize);
                ranges[t - first] = (lo, hi);
                prefetch(&self.tables[t].entries.bytes()[lo * self.tables[t].entry_bytes..]);
            }
            for t in first..last {
                self.query_table(t, q, pqs[t - first], buckets[t - first], ranges[t - first], k, &mut each);
            }
        }
    }

    /// [`query`](Self::query) for many queries, with their memory reads
    /// overlapped: queries go in groups of [`GROUP`], and each stage
    /// (directory slots, then first entries, then the probes) runs for
    /// every table of every query of the group before the next stage, so a
    /// group has `GROUP × tables` independent cache misses in flight
    /// instead of one query's. Calls `each(query index, id, distance)`, for
    /// each query in order, each of its matches once.
    pub fn query_batch(&self, qs: &[W], k: u32, mut each: impl FnMut(usize, u64, u32)) {
        if k > self.layout.spec.k {
            for (i, &q) in qs.iter().enumerate() {
                self.scan(q, k, |id, d| each(i, id, d));
            }
            return;
        }
        let tables = &self.layout.tables;
        let nt = tables.len();
        // Per (query in group, table): permuted query, bucket, entry range.
        let mut pqs = vec![W::default(); GROUP * nt];
        let mut buckets = vec![0usize; GROUP * nt];
        let mut ranges = vec![(0usize, 0usize); GROUP * nt];
        for (g, group) in qs.chunks(GROUP).enumerate() {
            for (j, &q) in group.iter().enumerate() {
                for (t, plan) in tables.iter().enumerate() {
                    let pq = plan.permute(q);
                    let b = self.bucket(t, pq);
                    pqs[j * nt + t] = pq;
                    buckets[j * nt + t] = b;
                    prefetch(&self.tables[t].dir.bytes()[4 * b..]);
                }
            }
            for j in 0..group.len() {
                for t in 0..nt {
                    let td = &self.tables[t];
                    let dir = td.dir.bytes();
                    let b = buckets[j * nt + t];
                    let (lo, hi) = (read_u32(dir, b) as usize, read_u32(dir, b + 1) as usize);
                    ranges[j * nt + t] = (lo, hi);
                    prefetch(&td.entries.bytes()[lo * td.entry_bytes..]);
                }
            }
            for (j, &q) in group.iter().enumerate() {
                let i = g * GROUP + j;
                for t in 0..nt {
                    let x = j * nt + t;
                    self.query_table(t, q, pqs[x], buckets[x], ranges[x], k, &mut |id, d| each(i, id, d));
                }
            }
        }
    }

    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn query_table(
        &self,
        t: usize,
        q: W,
        pq: W,
        b: usize,
        (lo, hi): (usize, usize),
        k: u32,
        each: &mut impl FnMut(u64, u32),
    ) {
        let plan = &self.layout.tables[t];
        {
            self.probe(t, pq, b, lo, hi, |pos, full| {
                let dist = full.dist(pq);
                if dist > k {
                    return;
                }
                let x = plan.unpermute(full);
                if self.layout.owner(q, x) != t {
                    return;
                }
                let row = if t == 0 { Some(pos) } else { self.find_row(x) };
                if let Some(row) = row {
                    for id in self.row_ids(row) {
                        each(id, dist);
                    }
                }
            });
        }
    }

    /// Exact answer by reading every row: for radii beyond the layout's `k`.
    pub fn scan(&self, q: W, k: u32, mut each: impl FnMut(u64, u32)) {
        for (row, w) in self.words().enumerate() {
            let d = w.dist(q);
            if d <= k {
                for id in self.row_ids(row) {
                    each(id, d);
                }
            }
        }
    }

    /// The distinct fingerprints in ascending order.
    pub fn words(&self) -> impl Iterator<Item = W> + '_ {
        let td = &self.tables[0];
        let f = self.layout.spec.bits;
        let rest = f - td.dir_bits;
        let emask = W::low_mask(rest);
        let dir = td.dir.bytes();
        let ent = td.entries.bytes();
        (0..(1usize << td.dir_bits)).flat_map(move |b| {
            let top = W::from_u128(b as u128).shl(rest);
            (read_u32(dir, b) as usize..read_u32(dir, b + 1) as usize)
                .map(move |i| top.or(W::read_le(&ent[i * td.entry_bytes..]).and(emask)))
        })
    }

    /// Every `(id, fingerprint)` entry.
    pub fn iter(&self) -> impl Iterator<Item = (u64, W)> + '_ {
        self.words().enumerate().flat_map(move |(row, w)| self.row_ids(row).map(move |id| (id, w)))
    }

    /// Bytes held by the tables, ids and offsets.
    pub fn bytes(&self) -> usize {
        self.ids.len()
            + self.offsets.as_ref().map_or(0, Blob::len)
            + self.tables.iter().map(|t| t.dir.len() + t.entries.len()).sum::<usize>()
    }
}

/// Queries interleaved by [`Segment::query_batch`]: enough that their
/// misses keep the memory system busy (a core tracks a few dozen at once),
/// few enough that the group's lines are still cached when probed.
pub(crate) const GROUP: usize = 8;

/// Asks the CPU to start loading the cache line at the start of `bytes`.
#[inline(always)]
fn prefetch(bytes: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint; any address is allowed, and this one is valid.
    unsafe {
        std::arch::x86_64::_mm_prefetch(bytes.as_ptr() as *const i8, std::arch::x86_64::_MM_HINT_T0)
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = bytes;
}

/// Packs a sorted table: directory over the top `d` bits, entries of the rest.
fn pack_table<W: Word>(sorted: &[W], f: u32, d: u32) -> TableData {
    let rest = f - d;
    let w = entry_bytes(f, d);
    let emask = W::low_mask(rest);
    let buckets = 1usize << d;
    let mut dir = huge_vec((buckets + 1) * 4);
    let mut entries = huge_vec(sorted.len() * w + ENTRY_PADDING);
    let mut next = 0usize;
    for (i, &p) in sorted.iter().enumerate() {
        let b = if d == 0 { 0 } else { p.shr(rest).low_usize() };
        while next <= b {
            dir.extend_from_slice(&(i as u32).to_le_bytes());
            next += 1;
        }
        p.and(emask).write_le(&mut entries, w);
    }
    while next <= buckets {
        dir.extend_from_slice(&(sorted.len() as u32).to_le_bytes());
        next += 1;
    }
    entries.extend_from_slice(&[0u8; ENTRY_PADDING]);
    TableData { dir_bits: d, entry_bytes: w, dir: Blob::from_vec(dir), entries: Blob::from_vec(entries) }
}
