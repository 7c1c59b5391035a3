//! A MinHash segment's band tables: per band, one column `band.B` of a
//! directory over the top bits of the band key's upper half (`u32`
//! offsets) followed by sorted `u64` entries `(upper 32 bits of the band
//! key) << 32 | row`.

use std::io::Write;
use std::sync::{Arc, Mutex};

use rayon::prelude::*;

use super::filter::{self, FilterBits};
use super::Segment;
use crate::index::file::{Column, Deferred};
use crate::minhash::Banding;

/// The name of a MinHash segment's band filter column ([`super::filter`]).
pub(super) const FILTER: &str = "filter";

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

/// Bytes of band `rows`' directory.
fn dir_len(rows: usize) -> usize {
    ((1usize << dir_bits(rows)) + 1) * 4
}

/// Bytes of a band's column for `rows` rows: directory, then entries.
pub(super) fn column_len(rows: usize) -> usize {
    dir_len(rows) + rows * 8
}

/// Writes a band's column of sorted `entries`: the directory over the top
/// bits of the keys, then the entries (little-endian).
fn write_column(entries: &[u64], out: &mut dyn Write) -> std::io::Result<()> {
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
    let mut buf = Vec::with_capacity(1 << 16);
    for v in dir {
        buf.extend_from_slice(&v.to_le_bytes());
    }
    out.write_all(&buf)?;
    for chunk in entries.chunks(8192) {
        buf.clear();
        for e in chunk {
            buf.extend_from_slice(&e.to_le_bytes());
        }
        out.write_all(&buf)?;
    }
    Ok(())
}

impl BandTable {
    /// The table of band `band` as stored under the columns `column`
    /// names, for a segment of `rows` rows; `None` if missing or of the
    /// wrong size.
    pub(super) fn from_columns(
        band: usize,
        rows: usize,
        column: &dyn Fn(&str) -> Option<Column>,
    ) -> Option<BandTable> {
        let col = column(&format!("band.{band}"))?;
        if col.len() != column_len(rows) {
            return None;
        }
        let d = dir_len(rows);
        Some(BandTable { dir_bits: dir_bits(rows), dir: col.slice(0, d)?, entries: col.slice(d, rows * 8)? })
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
}

/// The column of band `band` of a merge, made while the file is written
/// (one band's entries in memory at a time): each input's entries with
/// their rows renumbered (`u32::MAX`: left out), `rows` rows in all.
pub(super) fn merged_column(
    band: usize,
    inputs: Arc<[Arc<Segment>]>,
    renumber: Arc<Vec<Vec<u32>>>,
    rows: usize,
    filter: Arc<Mutex<FilterBits>>,
) -> (String, Deferred) {
    let write = move |out: &mut dyn Write| {
        let mut entries = Vec::with_capacity(rows);
        for (seg, renumber) in inputs.iter().zip(renumber.iter()) {
            let Some(table) = seg.bands().get(band) else { continue };
            for e in table.iter() {
                match renumber.get(e as u32 as usize) {
                    Some(&n) if n != u32::MAX => entries.push((e & !0xffff_ffff) | u64::from(n)),
                    _ => {}
                }
            }
        }
        if entries.len() != rows {
            return Err(std::io::Error::other(format!(
                "band {band} of a merge has {} entries for {rows} rows: an input is damaged",
                entries.len()
            )));
        }
        entries.par_sort_unstable();
        filter.lock().expect("the filter's lock").add_entries(band, entries.iter().copied());
        write_column(&entries, out)
    };
    (format!("band.{band}"), Deferred { len: column_len(rows), write: Arc::new(write) })
}

/// The filter column of a merge, written after its bands (which fill
/// `filter` as they are written).
pub(super) fn merged_filter(rows: usize, bands: usize, filter: Arc<Mutex<FilterBits>>) -> (String, Deferred) {
    let write =
        move |out: &mut dyn Write| out.write_all(&filter.lock().expect("the filter's lock").to_bytes());
    (FILTER.to_owned(), Deferred { len: filter::column_len(rows, bands), write: Arc::new(write) })
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

/// The band columns of signatures (row = position), built in memory (a
/// flush: at most the memory part).
pub(super) fn build(banding: Banding, signatures: &[&[u32]]) -> Vec<(String, Column)> {
    let filter = Mutex::new(FilterBits::new(signatures.len(), banding.bands));
    let mut columns: Vec<(String, Column)> = (0..banding.bands)
        .into_par_iter()
        .map(|band| {
            let mut entries: Vec<u64> = signatures
                .iter()
                .enumerate()
                .map(|(row, s)| (banding.key(s, band) & !0xffff_ffff) | row as u64)
                .collect();
            entries.sort_unstable();
            filter.lock().expect("the filter's lock").add_entries(band, entries.iter().copied());
            let mut bytes = Vec::with_capacity(column_len(entries.len()));
            write_column(&entries, &mut bytes).expect("writing to memory");
            (format!("band.{band}"), Column::from_vec(bytes))
        })
        .collect();
    let filter = filter.into_inner().expect("the filter's lock");
    columns.push((FILTER.to_owned(), Column::from_vec(filter.to_bytes())));
    columns
}
