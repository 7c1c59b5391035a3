//! A MinHash segment's band tables: per band, one column `bandp.B` of a
//! directory over the top bits of the band key's upper half (`u32`
//! offsets) followed by the entries, sorted by `(key half, row)` and packed
//! in five bytes each: the key half's bits below the directory's, then the
//! row's bits (see [`Packing`]). Segments written before packing have
//! columns `band.B` of eight-byte entries `(key half) << 32 | row`; they
//! are read as they are, and merges write the packed form.

use std::io::Write;
use std::sync::{Arc, Mutex};

use rayon::prelude::*;

use super::filter::{self, FilterBits};
use super::Segment;
use crate::index::file::{Column, Deferred};
use crate::minhash::Banding;

/// The name of a MinHash segment's band filter column ([`super::filter`]).
pub(super) const FILTER: &str = "filter";

/// How a band table of `rows` entries lays them out.
///
/// The directory has `2^dir_bits + 1` offsets, one bucket per value of the
/// key half's top `dir_bits` bits (about eight entries a bucket); an entry
/// stores the key half's other `key_bits` bits above the row's `row_bits`
/// bits, little-endian in `width` bytes. Packed, `key_bits + row_bits` is
/// at most 37 (the directory takes the key's top bits, the row needs
/// about as many), so five bytes hold every entry of a table of up to
/// 2^32 rows, where the unpacked form took eight: 96 bytes a document at
/// 32 bands.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Packing {
    dir_bits: u32,
    key_bits: u32,
    row_bits: u32,
    width: usize,
}

/// The column name prefix of packed tables.
const PACKED: &str = "bandp";
/// The column name prefix of tables written before packing.
const WIDE: &str = "band";

impl Packing {
    /// The packed layout of a table of `rows` entries.
    fn packed(rows: usize) -> Packing {
        let dir_bits = dir_bits(rows);
        let row_bits = (usize::BITS - rows.saturating_sub(1).leading_zeros()).max(1);
        let p = Packing { dir_bits, key_bits: 32 - dir_bits, row_bits, width: 5 };
        debug_assert!(p.key_bits + p.row_bits <= 40, "{p:?}");
        p
    }

    /// The layout of tables written before packing.
    fn wide(rows: usize) -> Packing {
        Packing { dir_bits: dir_bits(rows), key_bits: 32, row_bits: 32, width: 8 }
    }

    /// Bytes of the directory.
    fn dir_len(self) -> usize {
        ((1usize << self.dir_bits) + 1) * 4
    }

    /// Bytes of the column for `rows` entries: directory, then entries.
    fn column_len(self, rows: usize) -> usize {
        self.dir_len() + rows * self.width
    }

    /// The stored value of an entry `(key half) << 32 | row`.
    #[inline]
    fn pack(self, entry: u64) -> u64 {
        (((entry >> 32) & mask(self.key_bits)) << self.row_bits) | (entry & 0xffff_ffff)
    }

    /// The stored key bits of a key half (`key >> 32`).
    #[inline]
    fn key_part(self, half: u64) -> u64 {
        half & mask(self.key_bits)
    }
}

/// The low `bits` bits set.
#[inline]
fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// One band's table, read in place from a segment file.
#[derive(Clone, Debug)]
pub struct BandTable {
    packing: Packing,
    /// `2^dir_bits + 1` little-endian `u32` offsets into `entries`.
    dir: Column,
    /// The entries, `packing.width` bytes each.
    entries: Column,
}

/// Directory bits for `n` entries: about eight entries a bucket, at most
/// 24 bits.
fn dir_bits(n: usize) -> u32 {
    if n < 16 {
        0
    } else {
        (n.ilog2() - 3).min(24)
    }
}

/// Bytes of a packed band's column for `rows` rows: directory, then
/// entries.
pub(super) fn column_len(rows: usize) -> usize {
    Packing::packed(rows).column_len(rows)
}

/// Writes a packed band's column of sorted `entries` (`(key half) << 32
/// | row`): the directory over the top bits of the keys, then the entries.
fn write_column(entries: &[u64], out: &mut dyn Write) -> std::io::Result<()> {
    let p = Packing::packed(entries.len());
    let d = p.dir_bits;
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
        for &e in chunk {
            buf.extend_from_slice(&p.pack(e).to_le_bytes()[..p.width]);
        }
        out.write_all(&buf)?;
    }
    Ok(())
}

/// The value of entry `i` of `width`-byte entries (`None` past the end).
#[inline]
fn load(entries: &[u8], width: usize, i: usize) -> Option<u64> {
    let at = i * width;
    if let Some(b) = entries.get(at..at + 8) {
        let v = u64::from_le_bytes(b.try_into().expect("8 bytes"));
        return Some(if width == 8 { v } else { v & mask(8 * width as u32) });
    }
    let b = entries.get(at..at + width)?;
    let mut buf = [0u8; 8];
    buf[..width].copy_from_slice(b);
    Some(u64::from_le_bytes(buf))
}

impl BandTable {
    /// The table of band `band` as stored under the columns `column`
    /// names (packed, or as written before packing), for a segment of
    /// `rows` rows; `None` if missing or of the wrong size.
    pub(super) fn from_columns(
        band: usize,
        rows: usize,
        column: &dyn Fn(&str) -> Option<Column>,
    ) -> Option<BandTable> {
        let (col, packing) = match column(&format!("{PACKED}.{band}")) {
            Some(col) => (col, Packing::packed(rows)),
            None => (column(&format!("{WIDE}.{band}"))?, Packing::wide(rows)),
        };
        if col.len() != packing.column_len(rows) {
            return None;
        }
        let d = packing.dir_len();
        Some(BandTable { packing, dir: col.slice(0, d)?, entries: col.slice(d, rows * packing.width)? })
    }

    /// How many entries.
    pub fn len(&self) -> usize {
        self.entries.len() / self.packing.width
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Directory slot `i` (`None` past the end).
    #[inline]
    fn slot(&self, i: usize) -> Option<usize> {
        let c = self.dir.bytes().get(i * 4..i * 4 + 4)?;
        Some(u32::from_le_bytes(c.try_into().expect("4 bytes")) as usize)
    }

    /// Every entry as `(key half) << 32 | row`, in order (a damaged
    /// directory gives fewer or other entries, never a panic).
    fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        let p = self.packing;
        let n = self.len();
        let mut from = 0usize;
        (0..1u64 << p.dir_bits).flat_map(move |bucket| {
            let hi = self.slot(bucket as usize + 1).unwrap_or(n).clamp(from, n);
            let span = from..hi;
            from = hi;
            span.filter_map(move |i| {
                let v = load(self.entries.bytes(), p.width, i)?;
                let half = ((bucket << p.key_bits) | (v >> p.row_bits)) & 0xffff_ffff;
                Some((half << 32) | (v & mask(p.row_bits)))
            })
        })
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
    (format!("{PACKED}.{band}"), Deferred { len: column_len(rows), write: Arc::new(write) })
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
        let mut bucket = [0usize; MAX];
        for (b, &(t, key, _)) in chunk.iter().enumerate() {
            bucket[b] = top(key & !0xffff_ffff, t.packing.dir_bits) as usize;
            if let Some(p) = t.dir.bytes().get(bucket[b] * 4) {
                crate::simd::prefetch(p);
            }
        }
        let mut span = [(0usize, 0usize); MAX];
        for (b, &(t, _, _)) in chunk.iter().enumerate().take(n) {
            let entries = t.len();
            let (lo, hi) = match (t.slot(bucket[b]), t.slot(bucket[b] + 1)) {
                (Some(lo), Some(hi)) => (lo.min(entries), hi.min(entries)),
                _ => (0, 0),
            };
            span[b] = (lo.min(hi), hi);
            if let Some(p) = t.entries.bytes().get(span[b].0 * t.packing.width) {
                crate::simd::prefetch(p);
            }
        }
        for (b, &(t, key, tag)) in chunk.iter().enumerate() {
            let p = t.packing;
            let entries = t.entries.bytes();
            let at = |i: usize| load(entries, p.width, i).unwrap_or(u64::MAX);
            let want = p.key_part(key >> 32);
            // A bucket holds about eight entries (more where documents
            // share a band): scanned in order, which measured faster than
            // a binary search over five-byte entries.
            let (lo, hi) = span[b];
            for i in lo..hi {
                let v = at(i);
                let k = v >> p.row_bits;
                if k < want {
                    continue;
                }
                if k > want {
                    break;
                }
                out.push((tag, (v & mask(p.row_bits)) as u32));
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
            (format!("{PACKED}.{band}"), Column::from_vec(bytes))
        })
        .collect();
    let filter = filter.into_inner().expect("the filter's lock");
    columns.push((FILTER.to_owned(), Column::from_vec(filter.to_bytes())));
    columns
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The column of `entries` as written before packing (eight bytes an
    /// entry), for reading old segments.
    fn wide_column(entries: &[u64]) -> Vec<u8> {
        let d = dir_bits(entries.len());
        let mut out = Vec::new();
        let mut at = 0usize;
        for bucket in 0..(1u64 << d) {
            while at < entries.len() && top(entries[at], d) < bucket {
                at += 1;
            }
            out.extend_from_slice(&(at as u32).to_le_bytes());
        }
        out.extend_from_slice(&(entries.len() as u32).to_le_bytes());
        for e in entries {
            out.extend_from_slice(&e.to_le_bytes());
        }
        out
    }

    /// Sorted entries of `rows` rows with keys from a small pool (so keys
    /// repeat) and some sharing only their key's top bits.
    fn entries(rows: usize, seed: u64) -> Vec<u64> {
        let mut x = seed;
        let mut pool = Vec::new();
        let mut v: Vec<u64> = (0..rows as u64)
            .map(|row| {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                let half = match x >> 61 {
                    0 if !pool.is_empty() => pool[(x as usize >> 8) % pool.len()],
                    1 if !pool.is_empty() => pool[(x as usize >> 8) % pool.len()] ^ 1,
                    _ => {
                        pool.push(x >> 32);
                        x >> 32
                    }
                };
                (half << 32) | row
            })
            .collect();
        v.sort_unstable();
        v
    }

    #[test]
    fn packed_and_wide_tables_hold_and_find_the_same_entries() {
        for rows in [0usize, 1, 2, 15, 16, 17, 100, 1000, 4097, 70_000] {
            let want = entries(rows, rows as u64 + 7);
            let mut packed = Vec::new();
            write_column(&want, &mut packed).unwrap();
            assert_eq!(packed.len(), column_len(rows));
            let wide = wide_column(&want);
            let tables: Vec<BandTable> = [(PACKED, packed), (WIDE, wide)]
                .into_iter()
                .map(|(prefix, bytes)| {
                    let col = Column::from_vec(bytes);
                    let name = format!("{prefix}.3");
                    BandTable::from_columns(3, rows, &|n: &str| (n == name).then(|| col.clone())).unwrap()
                })
                .collect();
            assert_eq!(tables[0].packing.width, 5);
            assert_eq!(tables[1].packing.width, 8);
            for t in &tables {
                assert_eq!(t.len(), rows);
                assert_eq!(t.iter().collect::<Vec<_>>(), want, "rows {rows} {:?}", t.packing);
            }
            // Probes: every stored key (its rows, in order) and keys
            // that are not stored (nothing).
            let mut keys: Vec<u64> = want.iter().map(|e| e & !0xffff_ffff | 0xabc).collect();
            keys.dedup();
            keys.extend(want.iter().take(50).map(|e| (e ^ (1 << 40)) & !0xffff_ffff));
            for &key in &keys {
                let from = want.partition_point(|e| e >> 32 < key >> 32);
                let to = want.partition_point(|e| e >> 32 <= key >> 32);
                let expect: Vec<(u32, u32)> = want[from..to].iter().map(|&e| (9, e as u32)).collect();
                for t in &tables {
                    let mut got = Vec::new();
                    rows_with_many(&[(t, key, 9)], &mut got);
                    assert_eq!(got, expect, "rows {rows} key {key:x} {:?}", t.packing);
                }
            }
        }
    }

    /// A damaged table (any bytes of the right length: a segment opened
    /// without its checksum) gives wrong or no entries, never a panic.
    #[test]
    fn damaged_tables_do_not_panic() {
        let mut x = 0x1234_5678_9abc_def0u64;
        for rows in [1usize, 17, 300, 5000] {
            for prefix in [PACKED, WIDE] {
                let p = if prefix == PACKED { Packing::packed(rows) } else { Packing::wide(rows) };
                let bytes: Vec<u8> = (0..p.column_len(rows))
                    .map(|_| {
                        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                        (x >> 56) as u8
                    })
                    .collect();
                let col = Column::from_vec(bytes);
                let name = format!("{prefix}.0");
                let t =
                    BandTable::from_columns(0, rows, &|n: &str| (n == name).then(|| col.clone())).unwrap();
                let _ = t.iter().count();
                let mut out = Vec::new();
                for k in 0..64u64 {
                    rows_with_many(&[(&t, k.wrapping_mul(0x9e37_79b9_7f4a_7c15), 0)], &mut out);
                }
            }
        }
    }

    #[test]
    fn packing_fits_five_bytes_at_every_size() {
        for shift in 0..32 {
            for rows in [1usize << shift, (1usize << shift) + 1, (2usize << shift) - 1] {
                let p = Packing::packed(rows.min(u32::MAX as usize));
                assert!(p.key_bits + p.row_bits <= 40, "{rows}: {p:?}");
                assert!((rows - 1) as u64 <= mask(p.row_bits), "{rows}: {p:?}");
            }
        }
    }
}
