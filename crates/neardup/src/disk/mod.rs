//! Segments of an on-disk index: immutable index files over a set of
//! stored documents, memory-mapped and searched in place, for either
//! method. The store's engine (crate `neardup-store`) keeps a data
//! directory's documents in segments like these plus a small in-memory
//! part, and merges them; this module is the file and its queries.
//!
//! A segment is an ordinary [`IndexFile`] (checksummed, written atomically,
//! opened through mmap) whose rows are documents in sequence order:
//!
//! - `names` (the documents' ids) and `features` (their feature counts),
//!   by row;
//! - the column `seqs`: each row's sequence number (ascending), by which
//!   the engine's tombstones name documents;
//! - SimHash: the table index over the rows' fingerprints (entry id = row)
//!   at the first k of the rule's [`Plan`], and the
//!   tables of its later passes ([`RuleTables`]);
//! - MinHash: per band, the column `bandp.B`: a directory over the top
//!   bits of the band key's upper half, then the entries sorted by
//!   `(upper 32 bits of the band key, row)`, five bytes each (the key
//!   half's bits below the directory's, then the row; segments written
//!   before kept eight-byte entries in `band.B` and are still read). A
//!   merge writes them one band at a time. A query's band keys
//!   find the rows sharing the upper half of a key; the caller confirms a
//!   candidate against its stored signature (full band key and estimate),
//!   so answers are exactly those of the in-memory [`LshIndex`](crate::minhash::index::LshIndex).
//!   Signatures are not in the segment: the store holds them, once.
//!
//! Nothing proportional to the rows is read on open but the checksum (and
//! that only when asked: [`Segment::open`] with `verify`); a damaged
//! segment gives errors or wrong candidates, never a panic, and the engine
//! rebuilds segments from the store when their checksum fails.

mod filter;
mod lsh;
pub mod postings;

use std::path::Path;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::fingerprint::{Bits, Fingerprint};
use crate::index::file::{Column, Deferred, Features, IndexFile, Names};
use crate::index::{HammingIndex, Match, RuleTables, TableIndex};
use crate::minhash::Banding;
use crate::radius::{Plan, Radius, UNKNOWN_FEATURES};
use filter::{BandFilter, FilterBits};

pub use lsh::BandTable;

/// What a segment's tables are for: the method and its parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "method", rename_all = "lowercase")]
pub enum SegmentKind {
    /// SimHash fingerprints of `bits` bits, tables for `radius`'s plan.
    Simhash {
        /// Fingerprint width.
        bits: u32,
        /// The rule whose passes the tables serve.
        radius: Radius,
    },
    /// MinHash signatures of `permutations` values, banded.
    Minhash {
        /// Values per signature.
        permutations: usize,
        /// Bands.
        bands: usize,
        /// Values per band.
        rows: usize,
    },
}

impl SegmentKind {
    /// The banding of a MinHash kind.
    pub fn banding(&self) -> Option<Banding> {
        match self {
            SegmentKind::Minhash { bands, rows, .. } => Some(Banding { bands: *bands, rows: *rows }),
            SegmentKind::Simhash { .. } => None,
        }
    }
}

/// The metadata a segment file carries (its `meta`).
#[derive(Serialize, Deserialize)]
struct SegmentMeta {
    segment: SegmentKind,
}

/// One document to write into a segment.
#[derive(Clone, Debug)]
pub struct SegmentDoc<'a> {
    /// Its sequence number (rows are written in this order).
    pub seq: u64,
    /// Its id.
    pub name: &'a str,
    /// Its fingerprint (SimHash), or `None`.
    pub fingerprint: Option<Fingerprint>,
    /// Its signature's values (MinHash), or empty.
    pub signature: &'a [u32],
    /// Its feature count ([`UNKNOWN_FEATURES`] if not known).
    pub features: u32,
}

/// An opened segment.
#[derive(Clone, Debug)]
pub struct Segment {
    file: IndexFile,
    kind: SegmentKind,
    seqs: Column,
    names: Names,
    features: Features,
    tables: Tables,
    /// MinHash: the band filter, read in place (segments written before
    /// it have none: every probe reads the tables).
    filter: Option<BandFilter>,
}

#[derive(Clone, Debug)]
enum Tables {
    SimHash(Option<RuleTables>),
    MinHash(Vec<BandTable>),
}

/// A SimHash segment's match: the row and its distance.
pub type RowMatch = Match;

impl Segment {
    /// Writes a segment of `docs` (in ascending sequence order) to `path`,
    /// atomically. `memory` bounds the SimHash tables' layout.
    ///
    /// # Errors
    ///
    /// Documents out of order or of the wrong method or width, or an I/O
    /// error.
    pub fn write(path: &Path, kind: &SegmentKind, docs: &[SegmentDoc<'_>], memory: u64) -> Result<()> {
        if docs.windows(2).any(|w| w[0].seq >= w[1].seq) {
            return Err(Error::Config("a segment's documents must be in ascending sequence order".into()));
        }
        if docs.len() >= u32::MAX as usize {
            return Err(Error::Config(format!(
                "a segment holds fewer than 2^32 documents, not {}",
                docs.len()
            )));
        }
        match kind {
            SegmentKind::Simhash { bits, radius } => {
                let bits = Bits::try_from(*bits).map_err(|e| Error::Config(e.to_string()))?;
                let entries = docs
                    .iter()
                    .enumerate()
                    .map(|(row, d)| match d.fingerprint {
                        Some(fp) if fp.bits() == bits => Ok((row as u64, fp, d.features as usize)),
                        _ => Err(Error::Config(format!("document {} has no {bits}-bit fingerprint", d.name))),
                    })
                    .collect::<Result<Vec<_>>>()?;
                let (index, later) = simhash_tables(bits, radius, entries, memory)?;
                write_file(path, kind, docs, index, later, Vec::new(), Vec::new())
            }
            SegmentKind::Minhash { permutations, .. } => {
                let banding = kind.banding().expect("a MinHash kind");
                if let Some(d) = docs.iter().find(|d| d.signature.len() != *permutations) {
                    return Err(Error::Config(format!(
                        "document {} has no signature of {permutations} values",
                        d.name
                    )));
                }
                let signatures: Vec<&[u32]> = docs.iter().map(|d| d.signature).collect();
                let columns = lsh::build(banding, &signatures);
                write_file(path, kind, docs, TableIndex::builder().build()?, Vec::new(), columns, Vec::new())
            }
        }
    }

    /// Opens a segment through mmap; `verify` checks its checksum (reading
    /// it whole), else only its structure.
    ///
    /// # Errors
    ///
    /// A missing, damaged or foreign file.
    pub fn open(path: &Path, verify: bool) -> Result<Segment> {
        let file = if verify { IndexFile::open(path)? } else { IndexFile::open_unverified(path)? };
        let bad =
            |m: &str| Error::IndexFile { path: path.to_path_buf(), message: format!("not a segment: {m}") };
        let kind = match file.meta.clone().map(serde_json::from_value::<SegmentMeta>) {
            Some(Ok(m)) => m.segment,
            _ => return Err(bad("no segment metadata")),
        };
        let column = |name: &str| file.columns.iter().find(|(n, _)| n == name).map(|(_, c)| c.clone());
        let seqs = column("seqs").ok_or_else(|| bad("no sequence numbers"))?;
        let names = file.names.clone().ok_or_else(|| bad("no names"))?;
        let features = file.features.clone().ok_or_else(|| bad("no feature counts"))?;
        let rows = names.len();
        if seqs.len() != rows * 8 || features.len() != rows {
            return Err(bad("columns of different lengths"));
        }
        let tables = match &kind {
            SegmentKind::Simhash { bits, radius } => {
                if file.index.bits().get() != *bits || file.index.len() != rows {
                    return Err(bad("its tables do not hold its rows"));
                }
                Tables::SimHash(RuleTables::from_tables(radius, file.later.clone()).ok())
            }
            SegmentKind::Minhash { .. } => {
                let banding = kind.banding().expect("a MinHash kind");
                let bands = (0..banding.bands)
                    .map(|b| {
                        BandTable::from_columns(b, rows, &column)
                            .ok_or_else(|| bad("a band is missing or damaged"))
                    })
                    .collect::<Result<Vec<_>>>()?;
                Tables::MinHash(bands)
            }
        };
        let filter = match (kind.banding(), column(lsh::FILTER)) {
            (Some(banding), Some(col)) => Some(
                BandFilter::from_column(col, rows, banding.bands)
                    .ok_or_else(|| bad("its band filter is damaged"))?,
            ),
            _ => None,
        };
        Ok(Segment { file, kind, seqs, names, features, tables, filter })
    }

    /// Bytes of the band filter (MinHash; 24 a row at 32 bands; 0 for
    /// SimHash and for segments written before it).
    pub fn filter_bytes(&self) -> usize {
        self.filter.as_ref().map_or(0, |f| f.bytes().len())
    }

    /// What the segment's tables are for.
    pub fn kind(&self) -> &SegmentKind {
        &self.kind
    }

    /// Its rows (documents, live or not).
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// True when it has no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The sequence number of a row (0 past the end).
    #[inline]
    pub fn seq(&self, row: u32) -> u64 {
        self.seqs.u64_at(row as usize).unwrap_or(0)
    }

    /// The id of a row.
    pub fn name(&self, row: u32) -> Option<&str> {
        self.names.get(u64::from(row))
    }

    /// The feature count of a row.
    pub fn features(&self, row: u32) -> usize {
        self.features.get(u64::from(row)).map_or(UNKNOWN_FEATURES, |n| n as usize)
    }

    /// The first and last sequence numbers (0, 0 when empty).
    pub fn seq_range(&self) -> (u64, u64) {
        match self.len() {
            0 => (0, 0),
            n => (self.seq(0), self.seq(n as u32 - 1)),
        }
    }

    /// The row of a sequence number, if the segment holds it.
    pub fn row_of(&self, seq: u64) -> Option<u32> {
        let (mut lo, mut hi) = (0usize, self.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.seq(mid as u32).cmp(&seq) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid as u32),
            }
        }
        None
    }

    /// The SimHash rows within `k` of `fp` (`Some(k)`), or near it by
    /// `radius`'s rule for a document of `features` features (`None`),
    /// sorted by distance then row.
    ///
    /// # Errors
    ///
    /// A MinHash segment, or a fingerprint of another width.
    pub fn query_fingerprint(
        &self,
        fp: Fingerprint,
        k: Option<u32>,
        radius: &Radius,
        features: usize,
    ) -> Result<Vec<RowMatch>> {
        let Tables::SimHash(rule) = &self.tables else {
            return Err(Error::Config("a MinHash segment has no fingerprints".into()));
        };
        let index = &self.file.index;
        let features_of = |id: u64| self.features(id as u32);
        match (k, rule) {
            (Some(k), _) => index.query(fp, k),
            (None, Some(rule)) => rule.query_by(index, radius, fp, features, features_of),
            (None, None) => RuleTables::query_scanning(index, radius, fp, features, features_of),
        }
    }

    /// Every row's fingerprint (SimHash), by row: what a merge rebuilds
    /// the tables from.
    ///
    /// # Errors
    ///
    /// A MinHash segment.
    pub fn fingerprints(&self) -> Result<Vec<Fingerprint>> {
        if !matches!(self.tables, Tables::SimHash(_)) {
            return Err(Error::Config("a MinHash segment has no fingerprints".into()));
        }
        let mut out = vec![Fingerprint::new(0, self.file.index.bits()); self.len()];
        for (row, fp) in self.file.index.entries() {
            if let Some(slot) = out.get_mut(row as usize) {
                *slot = fp;
            }
        }
        Ok(out)
    }

    /// Adds to `out` the MinHash rows sharing the upper half of a band key
    /// with `signature` (`keys`: its band keys); they may repeat. The
    /// caller confirms each against its stored signature.
    pub fn band_candidates(&self, keys: &[u64], out: &mut Vec<u32>) {
        let mut tagged = Vec::new();
        band_candidates_of(&[self], keys, &mut tagged);
        out.extend(tagged.into_iter().map(|(_, row)| row));
    }

    /// The band tables (MinHash; empty for SimHash), for merges.
    pub fn bands(&self) -> &[BandTable] {
        match &self.tables {
            Tables::MinHash(b) => b,
            Tables::SimHash(_) => &[],
        }
    }

    /// Merges segments into one at `path`, leaving out the rows whose
    /// sequence numbers `dead` names; returns the rows written. Every
    /// input must be of `kind` (a SimHash merge rebuilds the tables for
    /// `kind`'s radius, within `memory`; a MinHash merge merges the band
    /// tables).
    ///
    /// # Errors
    ///
    /// Inputs of another kind, or an I/O error.
    pub fn merge(
        path: &Path,
        kind: &SegmentKind,
        inputs: &[Arc<Segment>],
        dead: &dyn Fn(u64) -> bool,
        memory: u64,
    ) -> Result<usize> {
        if let Some(s) = inputs.iter().find(|s| !same_method(&s.kind, kind)) {
            return Err(Error::Config(format!("cannot merge a segment of {:?} into {kind:?}", s.kind)));
        }
        // Rows in sequence order across the inputs (their ranges may
        // interleave after a rebuild).
        let mut rows: Vec<(u64, usize, u32)> = Vec::new();
        for (i, s) in inputs.iter().enumerate() {
            for row in 0..s.len() as u32 {
                let seq = s.seq(row);
                if !dead(seq) {
                    rows.push((seq, i, row));
                }
            }
        }
        rows.sort_unstable();
        rows.dedup_by_key(|r| r.0);
        let fps = match kind {
            SegmentKind::Simhash { .. } => {
                inputs.iter().map(|s| s.fingerprints()).collect::<Result<Vec<_>>>()?
            }
            SegmentKind::Minhash { .. } => Vec::new(),
        };
        let docs: Vec<SegmentDoc<'_>> = rows
            .iter()
            .map(|&(seq, i, row)| SegmentDoc {
                seq,
                name: inputs[i].name(row).unwrap_or(""),
                fingerprint: fps.get(i).map(|f| f[row as usize]),
                signature: &[],
                features: inputs[i].features(row) as u32,
            })
            .collect();
        match kind {
            SegmentKind::Simhash { .. } => Segment::write(path, kind, &docs, memory)?,
            SegmentKind::Minhash { .. } => {
                // New row of each (input, old row).
                let mut new_row: Vec<Vec<u32>> = inputs.iter().map(|s| vec![u32::MAX; s.len()]).collect();
                for (n, &(_, i, row)) in rows.iter().enumerate() {
                    new_row[i][row as usize] = n as u32;
                }
                // Each band's table is made while the file is written: one
                // band's entries in memory at a time.
                let (shared, new_row): (Arc<[Arc<Segment>]>, _) = (inputs.into(), Arc::new(new_row));
                let banding = kind.banding().expect("a MinHash kind");
                let filter = Arc::new(Mutex::new(FilterBits::new(rows.len(), banding.bands)));
                let mut deferred: Vec<_> = (0..banding.bands)
                    .map(|b| {
                        lsh::merged_column(b, shared.clone(), new_row.clone(), rows.len(), filter.clone())
                    })
                    .collect();
                deferred.push(lsh::merged_filter(rows.len(), banding.bands, filter));
                write_file(
                    path,
                    kind,
                    &docs,
                    TableIndex::builder().build()?,
                    Vec::new(),
                    Vec::new(),
                    deferred,
                )?;
            }
        }
        Ok(rows.len())
    }
}

/// [`Segment::band_candidates`] of many segments at once (their probes'
/// memory reads overlapped): `(segment's position in segs, row)`, possibly
/// repeated.
///
/// A segment's band filter is checked first (every check's line fetched
/// ahead, then tested), so a probe that cannot match reads no table.
pub fn band_candidates_of(segs: &[&Segment], keys: &[u64], out: &mut Vec<(u32, u32)>) {
    let mut probes: Vec<(&BandTable, u64, u32)> = Vec::with_capacity(segs.len() * keys.len());
    let mut checks: Vec<(usize, [u32; 3], &[u8])> = Vec::with_capacity(keys.len());
    for (i, s) in segs.iter().enumerate() {
        let bands = s.bands();
        match &s.filter {
            None => probes.extend(bands.iter().zip(keys).map(|(t, &k)| (t, k, i as u32))),
            Some(f) => {
                let bytes = f.bytes();
                checks.clear();
                for (band, &k) in keys.iter().enumerate().take(bands.len()) {
                    let (at, bits) = f.place(band, k);
                    if let Some(p) = bytes.get(at) {
                        crate::simd::prefetch(p);
                    }
                    checks.push((at, bits, bytes));
                }
                for (band, &(at, bits, bytes)) in checks.iter().enumerate() {
                    if filter::has(bytes, at, bits) {
                        probes.push((&bands[band], keys[band], i as u32));
                    }
                }
            }
        }
    }
    lsh::rows_with_many(&probes, out);
}

/// Whether two kinds are of one method and width.
fn same_method(a: &SegmentKind, b: &SegmentKind) -> bool {
    match (a, b) {
        (SegmentKind::Simhash { bits: x, .. }, SegmentKind::Simhash { bits: y, .. }) => x == y,
        (SegmentKind::Minhash { .. }, SegmentKind::Minhash { .. }) => a == b,
        _ => false,
    }
}

/// Writes a segment file: the rows' columns and the method's tables.
fn write_file(
    path: &Path,
    kind: &SegmentKind,
    docs: &[SegmentDoc<'_>],
    index: TableIndex,
    later: Vec<TableIndex>,
    mut columns: Vec<(String, Column)>,
    deferred: Vec<(String, Deferred)>,
) -> Result<()> {
    let seqs: Vec<u64> = docs.iter().map(|d| d.seq).collect();
    let names: Vec<&str> = docs.iter().map(|d| d.name).collect();
    let features: Vec<u32> = docs.iter().map(|d| d.features).collect();
    columns.insert(0, ("seqs".to_owned(), Column::of_u64s(&seqs)));
    let meta =
        serde_json::to_value(SegmentMeta { segment: kind.clone() }).expect("segment metadata serializes");
    IndexFile {
        index,
        later,
        names: Some(Names::from_strings(&names)),
        features: Some(features.into()),
        meta: Some(meta),
        columns,
        deferred,
    }
    .write(path)
}

/// The tables of a SimHash segment: pass 0 of `radius`'s plan over every
/// entry, and the later passes (given the memory pass 0 takes).
fn simhash_tables(
    bits: Bits,
    radius: &Radius,
    entries: Vec<(u64, Fingerprint, usize)>,
    memory: u64,
) -> Result<(TableIndex, Vec<TableIndex>)> {
    let plan = Plan::new(radius);
    let builder = TableIndex::builder().bits(bits).memory(memory).expected_len(entries.len().max(1));
    let first = builder.clone().k(plan.passes()[0].k);
    let pairs: Vec<(u64, Fingerprint)> = entries.iter().map(|e| (e.0, e.1)).collect();
    let index = if pairs.is_empty() { first.build()? } else { first.build_from(pairs)? };
    let later = if plan.passes().len() > 1 {
        // Mapped, not resident: the later passes may take four times pass
        // 0's bytes (about 45 tables at k = 8 where the chooser's budget
        // would take 165, and a tenth of the candidates of 9).
        let budget = (4 * index.memory_bytes() as u64).clamp(16 << 20, memory.max(16 << 20));
        let rule = RuleTables::build(plan, &TableIndex::builder().bits(bits).memory(budget), entries)?;
        rule.tables().cloned().collect()
    } else {
        Vec::new()
    };
    Ok((index, later))
}
