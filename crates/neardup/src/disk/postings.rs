//! Postings segments: which documents hold which keys, for a passage
//! library ([`crate::passage::LibraryKeys`]). A segment is an
//! [`IndexFile`] (checksummed, written atomically, mapped and read in
//! place) with no fingerprint tables and three columns:
//!
//! - `seqs`: each row's document sequence number, ascending (the library
//!   names documents by them; a removed document's rows are skipped by the
//!   caller and dropped by the next merge);
//! - `pdir`: a directory of `2^D + 1` entry offsets (`u64`) over the top
//!   `D` bits of the keys' upper 48 bits;
//! - `post`: the entries, eight bytes each: the 48-bit key's bits below
//!   the directory's, then the row (`16 + D` bits), sorted, so that the
//!   rows holding one key are a run found by binary search within its
//!   directory bucket.
//!
//! Keys are compared on their upper 48 bits: two keys differing only below
//! them (odds of about `postings / 2^48` per lookup) find each other's
//! documents, which the caller's alignment then finds nothing in. A
//! [`MemPostings`] holds the same for documents not yet in a segment.

use std::collections::{BinaryHeap, HashMap};
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::index::file::{Column, Deferred, IndexFile};
use crate::index::TableIndex;

/// The version of the postings segment layout.
pub const POSTINGS_VERSION: u32 = 1;

const SEQS: &str = "seqs";
const DIR: &str = "pdir";
const POST: &str = "post";

/// Entries per directory bucket a segment aims at.
const PER_BUCKET: usize = 32;
/// The most directory bits (a directory of 2^22 offsets is 32 MiB).
const MAX_DIR_BITS: u32 = 22;

#[derive(Serialize, Deserialize)]
struct Meta {
    postings: PostingsMeta,
}

#[derive(Serialize, Deserialize)]
struct PostingsMeta {
    version: u32,
    dir_bits: u32,
    entries: u64,
}

/// One document to write into a segment: its sequence number and its keys
/// (any order; repeats are kept once).
#[derive(Clone, Copy, Debug)]
pub struct PostingsDoc<'a> {
    /// Its sequence number.
    pub seq: u64,
    /// Its keys.
    pub keys: &'a [u64],
}

/// An opened postings segment.
#[derive(Clone, Debug)]
pub struct Postings {
    seqs: Column,
    dir: Column,
    post: Column,
    dir_bits: u32,
    rows: usize,
    entries: usize,
}

/// A key's upper 48 bits.
fn key48(key: u64) -> u64 {
    key >> 16
}

/// The directory bits for a segment of `entries` entries and `rows` rows.
fn dir_bits_for(entries: usize, rows: usize) -> u32 {
    let by_size = (entries / PER_BUCKET).max(1).next_power_of_two().trailing_zeros().min(MAX_DIR_BITS);
    let row_bits = usize::BITS - rows.leading_zeros();
    by_size.max(row_bits.saturating_sub(16))
}

/// How one segment packs its entries.
#[derive(Clone, Copy, Debug)]
struct Packing {
    dir_bits: u32,
}

impl Packing {
    fn bucket(self, k48: u64) -> usize {
        if self.dir_bits == 0 {
            0
        } else {
            (k48 >> (48 - self.dir_bits)) as usize
        }
    }
    fn row_bits(self) -> u32 {
        16 + self.dir_bits
    }
    fn low(self, k48: u64) -> u64 {
        k48 & ((1u64 << (48 - self.dir_bits)) - 1)
    }
    fn entry(self, k48: u64, row: u32) -> u64 {
        (self.low(k48) << self.row_bits()) | u64::from(row)
    }
    /// (48-bit key, row) of an entry in `bucket`.
    fn decode(self, bucket: usize, entry: u64) -> (u64, u32) {
        let low = entry >> self.row_bits();
        let k48 = ((bucket as u64) << (48 - self.dir_bits)) | low;
        (k48, (entry & ((1u64 << self.row_bits()) - 1)) as u32)
    }
    fn buckets(self) -> usize {
        1 << self.dir_bits
    }
}

fn bad(path: &Path, m: &str) -> Error {
    Error::IndexFile { path: path.to_path_buf(), message: format!("not a postings segment: {m}") }
}

impl Postings {
    /// Writes a segment of `docs` (in ascending sequence order) to `path`,
    /// atomically.
    ///
    /// # Errors
    ///
    /// Documents out of order, too many of them, or an I/O error.
    pub fn write(path: &Path, docs: &[PostingsDoc<'_>]) -> Result<()> {
        if docs.windows(2).any(|w| w[0].seq >= w[1].seq) {
            return Err(Error::Config("a segment's documents must be in ascending sequence order".into()));
        }
        if docs.len() >= u32::MAX as usize {
            return Err(Error::Config(format!(
                "a segment holds fewer than 2^32 documents, not {}",
                docs.len()
            )));
        }
        let mut pairs: Vec<(u64, u32)> = Vec::with_capacity(docs.iter().map(|d| d.keys.len()).sum());
        for (row, d) in docs.iter().enumerate() {
            pairs.extend(d.keys.iter().map(|&k| (key48(k), row as u32)));
        }
        pairs.sort_unstable();
        pairs.dedup();
        let packing = Packing { dir_bits: dir_bits_for(pairs.len(), docs.len()) };
        let mut dir = vec![0u64; packing.buckets() + 1];
        let mut post = Vec::with_capacity(pairs.len());
        for &(k48, row) in &pairs {
            dir[packing.bucket(k48) + 1] += 1;
            post.push(packing.entry(k48, row));
        }
        for b in 1..dir.len() {
            dir[b] += dir[b - 1];
        }
        let seqs: Vec<u64> = docs.iter().map(|d| d.seq).collect();
        let columns = vec![
            (SEQS.to_owned(), Column::of_u64s(&seqs)),
            (DIR.to_owned(), Column::from_u64_vec(dir)),
            (POST.to_owned(), Column::from_u64_vec(post)),
        ];
        write_file(path, packing, pairs.len(), columns, Vec::new())
    }

    /// Opens a segment through mmap; `verify` checks its checksum (reading
    /// it whole), else its structure only.
    ///
    /// # Errors
    ///
    /// A missing, damaged or foreign file.
    pub fn open(path: &Path, verify: bool) -> Result<Postings> {
        let file = if verify { IndexFile::open(path)? } else { IndexFile::open_unverified(path)? };
        let meta = match file.meta.clone().map(serde_json::from_value::<Meta>) {
            Some(Ok(m)) => m.postings,
            _ => return Err(bad(path, "no postings metadata")),
        };
        if meta.version != POSTINGS_VERSION {
            return Err(bad(
                path,
                &format!("postings version {}, this neardup reads {POSTINGS_VERSION}", meta.version),
            ));
        }
        let column = |name: &str| {
            file.columns
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, c)| c.clone())
                .ok_or_else(|| bad(path, name))
        };
        let (seqs, dir, post) = (column(SEQS)?, column(DIR)?, column(POST)?);
        if meta.dir_bits > MAX_DIR_BITS.max(32) {
            return Err(bad(path, "directory too large"));
        }
        let packing = Packing { dir_bits: meta.dir_bits };
        let entries = meta.entries as usize;
        let rows = seqs.len() / 8;
        let sound = seqs.len() % 8 == 0
            && dir.len() == (packing.buckets() + 1) * 8
            && post.len() == entries.saturating_mul(8)
            && dir.u64_at(0) == Some(0)
            && dir.u64_at(packing.buckets()) == Some(entries as u64)
            && (rows as u64) < (1u64 << packing.row_bits().min(63));
        if !sound {
            return Err(bad(path, "its columns do not agree (damaged)"));
        }
        Ok(Postings { seqs, dir, post, dir_bits: meta.dir_bits, rows, entries })
    }

    /// Its documents.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Its (key, document) entries.
    pub fn entries(&self) -> usize {
        self.entries
    }

    /// The sequence number of row `row`.
    pub fn seq(&self, row: usize) -> Option<u64> {
        self.seqs.u64_at(row)
    }

    /// Its sequence numbers, in row order.
    pub fn seqs(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.rows).filter_map(|r| self.seq(r))
    }

    fn packing(&self) -> Packing {
        Packing { dir_bits: self.dir_bits }
    }

    /// The entries of `bucket` (a damaged directory gives none).
    fn bucket_range(&self, bucket: usize) -> std::ops::Range<usize> {
        let lo = self.dir.u64_at(bucket).unwrap_or(0) as usize;
        let hi = self.dir.u64_at(bucket + 1).unwrap_or(0) as usize;
        if lo <= hi && hi <= self.entries {
            lo..hi
        } else {
            0..0
        }
    }

    /// Adds the sequence numbers of the documents holding `key` to `out`,
    /// unless more than `cap` hold it (then adds none); how many hold it.
    pub fn lookup(&self, key: u64, cap: usize, out: &mut Vec<u64>) -> usize {
        let p = self.packing();
        let k48 = key48(key);
        let range = self.bucket_range(p.bucket(k48));
        let at = |i: usize| self.post.u64_at(i).unwrap_or(u64::MAX);
        let first = p.entry(k48, 0);
        let last = p.entry(k48, u32::MAX >> (32 - p.row_bits().min(32)));
        let (mut lo, mut hi) = (range.start, range.end);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if at(mid) < first {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let start = lo;
        let mut end = start;
        while end < range.end && at(end) <= last {
            end += 1;
            if end - start > cap {
                return end - start;
            }
        }
        let row_mask = (1u64 << p.row_bits()) - 1;
        out.extend((start..end).filter_map(|i| self.seq((at(i) & row_mask) as usize)));
        end - start
    }

    /// Every entry as (48-bit key, row), in order.
    fn iter(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        let p = self.packing();
        (0..p.buckets()).flat_map(move |b| {
            self.bucket_range(b).filter_map(move |i| self.post.u64_at(i).map(|e| p.decode(b, e)))
        })
    }

    /// Merges `inputs` (holding disjoint documents) into one segment at
    /// `path`, leaving out the documents `alive` says are gone; reads the
    /// inputs as it writes, holding only a row map and the directory.
    ///
    /// # Errors
    ///
    /// Inputs sharing a document, or an I/O error.
    pub fn merge(inputs: &[Postings], alive: &(dyn Fn(u64) -> bool + Sync), path: &Path) -> Result<()> {
        // The output's rows: the inputs' live documents in sequence order.
        let mut all: Vec<(u64, usize, u32)> = Vec::new();
        for (i, p) in inputs.iter().enumerate() {
            all.extend(p.seqs().enumerate().filter(|&(_, s)| alive(s)).map(|(r, s)| (s, i, r as u32)));
        }
        all.sort_unstable();
        if all.windows(2).any(|w| w[0].0 == w[1].0) {
            return Err(Error::Config("merged segments share a document".into()));
        }
        let mut row_of: Vec<Vec<u32>> = inputs.iter().map(|p| vec![u32::MAX; p.rows]).collect();
        for (new, &(_, i, r)) in all.iter().enumerate() {
            row_of[i][r as usize] = new as u32;
        }
        let entries: usize = inputs
            .iter()
            .zip(&row_of)
            .map(|(p, rows)| {
                p.iter().filter(|&(_, r)| rows.get(r as usize).is_some_and(|&n| n != u32::MAX)).count()
            })
            .sum();
        let packing = Packing { dir_bits: dir_bits_for(entries, all.len()) };
        let seqs: Vec<u64> = all.iter().map(|a| a.0).collect();
        let inputs: Arc<Vec<Postings>> = Arc::new(inputs.to_vec());
        let row_of = Arc::new(row_of);
        let dir = Arc::new(std::sync::Mutex::new(vec![0u64; packing.buckets() + 1]));
        let post = {
            let (inputs, row_of, dir) = (inputs.clone(), row_of.clone(), dir.clone());
            move |out: &mut dyn Write| -> std::io::Result<()> {
                let mut dir = dir.lock().expect("the directory's lock");
                let mut w = std::io::BufWriter::with_capacity(1 << 20, out);
                for (k48, row) in merged(&inputs, &row_of) {
                    dir[packing.bucket(k48) + 1] += 1;
                    w.write_all(&packing.entry(k48, row).to_le_bytes())?;
                }
                for b in 1..dir.len() {
                    dir[b] += dir[b - 1];
                }
                w.flush()
            }
        };
        let dir_column = move |out: &mut dyn Write| -> std::io::Result<()> {
            let dir = dir.lock().expect("the directory's lock");
            let mut w = std::io::BufWriter::with_capacity(1 << 20, out);
            for d in dir.iter() {
                w.write_all(&d.to_le_bytes())?;
            }
            w.flush()
        };
        let deferred = vec![
            (POST.to_owned(), Deferred { len: entries * 8, write: Arc::new(post) }),
            (DIR.to_owned(), Deferred { len: (packing.buckets() + 1) * 8, write: Arc::new(dir_column) }),
        ];
        write_file(path, packing, entries, vec![(SEQS.to_owned(), Column::of_u64s(&seqs))], deferred)
    }
}

/// The inputs' live entries as (48-bit key, output row), in order.
fn merged<'a>(inputs: &'a [Postings], row_of: &'a [Vec<u32>]) -> impl Iterator<Item = (u64, u32)> + 'a {
    let mut iters: Vec<_> = inputs
        .iter()
        .zip(row_of)
        .map(|(p, rows)| {
            p.iter()
                .filter_map(move |(k, r)| rows.get(r as usize).filter(|&&n| n != u32::MAX).map(|&n| (k, n)))
        })
        .collect();
    let mut heap: BinaryHeap<std::cmp::Reverse<(u64, u32, usize)>> = BinaryHeap::new();
    for (i, it) in iters.iter_mut().enumerate() {
        if let Some((k, r)) = it.next() {
            heap.push(std::cmp::Reverse((k, r, i)));
        }
    }
    std::iter::from_fn(move || {
        let std::cmp::Reverse((k, r, i)) = heap.pop()?;
        if let Some((k2, r2)) = iters[i].next() {
            heap.push(std::cmp::Reverse((k2, r2, i)));
        }
        Some((k, r))
    })
}

fn write_file(
    path: &Path,
    packing: Packing,
    entries: usize,
    columns: Vec<(String, Column)>,
    deferred: Vec<(String, Deferred)>,
) -> Result<()> {
    let meta = Meta {
        postings: PostingsMeta {
            version: POSTINGS_VERSION,
            dir_bits: packing.dir_bits,
            entries: entries as u64,
        },
    };
    IndexFile {
        meta: Some(serde_json::to_value(meta).expect("postings metadata serializes")),
        columns,
        deferred,
        ..IndexFile::new(TableIndex::builder().build()?)
    }
    .write(path)
}

/// Postings of documents not yet in a segment: a key's documents chained
/// through one vector (about 16 bytes an entry, and a map entry per key).
#[derive(Debug, Default)]
pub struct MemPostings {
    /// Documents, in the order added.
    seqs: Vec<u64>,
    /// Their keys, by document, concatenated (for writing a segment).
    keys: Vec<u64>,
    key_ends: Vec<usize>,
    /// Key (48 bits) → its last entry.
    heads: HashMap<u64, u32>,
    /// (document index, previous entry of the same key or `u32::MAX`).
    chain: Vec<(u32, u32)>,
}

impl MemPostings {
    /// Adds a document (after every one held: ascending sequence numbers).
    pub fn add(&mut self, seq: u64, keys: &[u64]) {
        let doc = self.seqs.len() as u32;
        self.seqs.push(seq);
        let mut ks: Vec<u64> = keys.to_vec();
        ks.sort_unstable_by_key(|&k| key48(k));
        ks.dedup_by_key(|k| key48(*k));
        for &k in &ks {
            let prev = self.heads.insert(key48(k), self.chain.len() as u32).unwrap_or(u32::MAX);
            self.chain.push((doc, prev));
        }
        self.keys.extend_from_slice(&ks);
        self.key_ends.push(self.keys.len());
    }

    /// Documents held.
    pub fn len(&self) -> usize {
        self.seqs.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.seqs.is_empty()
    }

    /// Entries held.
    pub fn entries(&self) -> usize {
        self.chain.len()
    }

    /// About the bytes it takes.
    pub fn bytes(&self) -> usize {
        self.chain.len() * 8 + self.keys.len() * 8 + self.heads.len() * 24 + self.seqs.len() * 16
    }

    /// The highest sequence number held.
    pub fn last_seq(&self) -> Option<u64> {
        self.seqs.last().copied()
    }

    /// As [`Postings::lookup`].
    pub fn lookup(&self, key: u64, cap: usize, out: &mut Vec<u64>) -> usize {
        let mut at = self.heads.get(&key48(key)).copied().unwrap_or(u32::MAX);
        let start = out.len();
        let mut n = 0;
        while let Some(&(doc, prev)) = self.chain.get(at as usize) {
            n += 1;
            if n > cap {
                out.truncate(start);
                return n;
            }
            out.push(self.seqs[doc as usize]);
            at = prev;
        }
        out[start..].reverse();
        n
    }

    /// Writes what it holds as a segment.
    ///
    /// # Errors
    ///
    /// As [`Postings::write`].
    pub fn write(&self, path: &Path) -> Result<()> {
        let docs: Vec<PostingsDoc<'_>> = (0..self.seqs.len())
            .map(|i| {
                let start = if i == 0 { 0 } else { self.key_ends[i - 1] };
                PostingsDoc { seq: self.seqs[i], keys: &self.keys[start..self.key_ends[i]] }
            })
            .collect();
        Postings::write(path, &docs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Brute force: the documents holding `key` (on its upper 48 bits).
    fn holding(docs: &[(u64, Vec<u64>)], key: u64) -> Vec<u64> {
        docs.iter().filter(|(_, ks)| ks.iter().any(|&k| key48(k) == key48(key))).map(|(s, _)| *s).collect()
    }

    fn docs_strategy() -> impl Strategy<Value = Vec<(u64, Vec<u64>)>> {
        // Keys from a small set (shared often), spread over the 64 bits.
        let key = (0u64..40).prop_map(|k| k.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        proptest::collection::vec(proptest::collection::vec(key, 0..12), 0..40)
            .prop_map(|v| v.into_iter().enumerate().map(|(i, ks)| (3 * i as u64 + 1, ks)).collect())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(16))]
        /// Segments, the memory part and merges against a linear scan.
        #[test]
        fn lookups_equal_a_linear_scan(docs in docs_strategy(), split in 0usize..40, dead in proptest::collection::vec(any::<bool>(), 40)) {
            let dir = tempfile::tempdir().unwrap();
            let split = split.min(docs.len());
            let write = |name: &str, part: &[(u64, Vec<u64>)]| {
                let d: Vec<PostingsDoc> = part.iter().map(|(s, k)| PostingsDoc { seq: *s, keys: k }).collect();
                let path = dir.path().join(name);
                Postings::write(&path, &d).unwrap();
                Postings::open(&path, true).unwrap()
            };
            let (a, b) = (write("a", &docs[..split]), write("b", &docs[split..]));
            let mut mem = MemPostings::default();
            for (s, k) in &docs {
                mem.add(*s, k);
            }
            let alive = |s: u64| !dead[(s as usize / 3) % dead.len()];
            let merged_path = dir.path().join("m");
            Postings::merge(&[a.clone(), b.clone()], &alive, &merged_path).unwrap();
            let m = Postings::open(&merged_path, true).unwrap();
            let live: Vec<(u64, Vec<u64>)> = docs.iter().filter(|(s, _)| alive(*s)).cloned().collect();
            prop_assert_eq!(m.rows(), live.len());
            for k in 0u64..45 {
                let key = k.wrapping_mul(0x9E37_79B9_7F4A_7C15);
                let want = holding(&docs, key);
                let mut got = Vec::new();
                a.lookup(key, usize::MAX, &mut got);
                b.lookup(key, usize::MAX, &mut got);
                prop_assert_eq!(&got, &want);
                let mut got = Vec::new();
                prop_assert_eq!(mem.lookup(key, usize::MAX, &mut got), want.len());
                prop_assert_eq!(&got, &want);
                let mut got = Vec::new();
                m.lookup(key, usize::MAX, &mut got);
                prop_assert_eq!(got, holding(&live, key));
                // Over the cap: none.
                if !want.is_empty() {
                    let mut got = Vec::new();
                    prop_assert_eq!(mem.lookup(key, want.len() - 1, &mut got), want.len());
                    a.lookup(key, 0, &mut got);
                    prop_assert!(got.is_empty());
                }
            }
            // The memory part written is the segment of all of them.
            mem.write(&dir.path().join("w")).unwrap();
            let w = Postings::open(&dir.path().join("w"), true).unwrap();
            prop_assert_eq!(w.entries(), a.entries() + b.entries());
        }
    }

    #[test]
    fn a_damaged_segment_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s");
        let keys: Vec<u64> = (0..1000).map(|k: u64| k.wrapping_mul(0x9E37_79B9_7F4A_7C15)).collect();
        Postings::write(&path, &[PostingsDoc { seq: 1, keys: &keys }]).unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        let n = bytes.len();
        bytes[n / 2] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert!(Postings::open(&path, true).unwrap_err().to_string().contains("checksum"));
        std::fs::write(&path, &bytes[..n / 2]).unwrap();
        assert!(Postings::open(&path, false).is_err());
    }
}
