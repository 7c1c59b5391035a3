//! A MinHash segment's band tables: per band, sorted `u64` entries
//! `(upper 32 bits of the band key) << 32 | row` under a directory over
//! the top bits of that upper half.

use rayon::prelude::*;

use crate::index::file::Column;
use crate::minhash::Banding;

/// One band's table, read in place from a segment file.
#[derive(Clone, Debug)]
pub struct BandTable {
    dir_bits: u32,
    /// `2^dir_bits + 1` little-endian `u32` offsets into `entries`.
    dir: Column,
    /// Sorted little-endian `u64` entries.
    entries: Column,
}

/// Directory bits for `n` entries: about eight entries a bucket (one
/// cache line), at most 24 bits.
fn dir_bits(n: usize) -> u32 {
    if n < 16 {
        0
    } else {
        (n.ilog2() - 3).min(24)
    }
}

impl BandTable {
    /// A table of sorted entries.
    fn from_sorted(entries: Vec<u64>) -> BandTable {
        let d = dir_bits(entries.len());
        let mut dir = Vec::with_capacity((1usize << d) + 1);
        let mut at = 0usize;
        for bucket in 0..(1u64 << d) {
            while at < entries.len() && top(entries[at], d) < bucket {
                at += 1;
            }
            dir.push(at as u32);
        }
        dir.push(entries.len() as u32);
        BandTable { dir_bits: d, dir: Column::of_u32s(&dir), entries: Column::from_u64_vec(entries) }
    }

    /// The table of band `band` as stored under the columns `column`
    /// names, for a segment of `rows` rows; `None` if missing or of the
    /// wrong size.
    pub(super) fn from_columns(
        band: usize,
        rows: usize,
        column: &dyn Fn(&str) -> Option<Column>,
    ) -> Option<BandTable> {
        let dir = column(&format!("band.{band}.dir"))?;
        let entries = column(&format!("band.{band}.entries"))?;
        let buckets = (dir.len() / 4).checked_sub(1)?;
        if !buckets.is_power_of_two() || dir.len() % 4 != 0 || entries.len() != rows * 8 {
            return None;
        }
        let dir_bits = buckets.ilog2();
        (dir_bits <= 24).then_some(BandTable { dir_bits, dir, entries })
    }

    /// The columns a segment file stores for band `band`.
    pub(super) fn columns(self, band: usize) -> [(String, Column); 2] {
        [(format!("band.{band}.dir"), self.dir), (format!("band.{band}.entries"), self.entries)]
    }

    /// How many entries.
    pub fn len(&self) -> usize {
        self.entries.len() / 8
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every entry, in order.
    fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.entries.bytes().chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
    }

    /// The table of a merge: each input's entries with their rows renumbered
    /// (`u32::MAX`: left out), for `rows` rows in all.
    pub(super) fn merged<'a>(
        inputs: impl Iterator<Item = (&'a BandTable, &'a Vec<u32>)>,
        rows: usize,
    ) -> BandTable {
        let mut entries = Vec::with_capacity(rows);
        for (table, renumber) in inputs {
            for e in table.iter() {
                match renumber.get(e as u32 as usize) {
                    Some(&n) if n != u32::MAX => entries.push((e & !0xffff_ffff) | u64::from(n)),
                    _ => {}
                }
            }
        }
        entries.par_sort_unstable();
        BandTable::from_sorted(entries)
    }
}

/// Adds to `out` the rows (with each probe's tag) of every probe's table
/// whose key has the upper half of the probe's key, for many probes at
/// once — every band of every segment of a query — their
/// memory reads overlapped 64 at a time (every directory slot is fetched
/// ahead, then every bucket's first line, then the buckets are scanned),
/// since each probe is a cache miss or two on a large segment.
pub(super) fn rows_with_many(probes: &[(&BandTable, u64, u32)], out: &mut Vec<(u32, u32)>) {
    const MAX: usize = 64;
    for chunk in probes.chunks(MAX) {
        let n = chunk.len();
        let mut slices: [(&[u8], &[u8]); MAX] = [(&[], &[]); MAX];
        let mut bucket = [0usize; MAX];
        for (b, &(t, key, _)) in chunk.iter().enumerate() {
            slices[b] = (t.dir.bytes(), t.entries.bytes());
            bucket[b] = top(key & !0xffff_ffff, t.dir_bits) as usize;
            if let Some(p) = slices[b].0.get(bucket[b] * 4) {
                crate::simd::prefetch(p);
            }
        }
        let mut span = [(0usize, 0usize); MAX];
        for b in 0..n {
            let dir = slices[b].0;
            let read = |i: usize| {
                dir.get(i * 4..i * 4 + 4).map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
            };
            let entries = slices[b].1.len() / 8;
            let (lo, hi) = match (read(bucket[b]), read(bucket[b] + 1)) {
                (Some(lo), Some(hi)) => ((lo as usize).min(entries), (hi as usize).min(entries)),
                _ => (0, 0),
            };
            span[b] = (lo.min(hi), hi);
            if let Some(p) = slices[b].1.get(span[b].0 * 8) {
                crate::simd::prefetch(p);
            }
        }
        for (b, &(_, key, tag)) in chunk.iter().enumerate() {
            let entries = slices[b].1;
            let at = |i: usize| u64::from_le_bytes(entries[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
            let want = key >> 32;
            let (mut lo, hi) = span[b];
            // The first entry of the key (a bucket may hold many documents
            // sharing one band).
            let mut h = hi;
            while lo < h {
                let mid = (lo + h) / 2;
                if at(mid) >> 32 < want {
                    lo = mid + 1;
                } else {
                    h = mid;
                }
            }
            for i in lo..hi {
                let e = at(i);
                if e >> 32 != want {
                    break;
                }
                out.push((tag, e as u32));
            }
        }
    }
}

/// The top `d` bits of an entry's key half.
#[inline]
fn top(entry: u64, d: u32) -> u64 {
    if d == 0 {
        0
    } else {
        entry >> (64 - d)
    }
}

/// The band tables of signatures (row = position).
pub(super) fn build<'a>(banding: Banding, signatures: impl Iterator<Item = &'a [u32]>) -> Vec<BandTable> {
    let signatures: Vec<&[u32]> = signatures.collect();
    (0..banding.bands)
        .into_par_iter()
        .map(|band| {
            let mut entries: Vec<u64> = signatures
                .iter()
                .enumerate()
                .map(|(row, s)| (banding.key(s, band) & !0xffff_ffff) | row as u64)
                .collect();
            entries.sort_unstable();
            BandTable::from_sorted(entries)
        })
        .collect()
}
