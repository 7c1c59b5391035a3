//! The on-disk index of a data directory: immutable segment files
//! ([`neardup::disk::Segment`], memory-mapped) listed by a manifest, a
//! small in-memory segment of the documents written since the last flush,
//! and tombstones. The store stays the truth: every document has a
//! sequence number there, the manifest says up to which number the
//! segments hold the documents (`flushed`), and on open the documents
//! after it are read back into memory; a manifest or segment that is
//! missing, stale or damaged makes the index be rebuilt from the store.
//!
//! Merges are size-tiered: a segment's tier is how many times four fits
//! in its rows over a flush's; four segments of one tier merge into one of
//! the next, and a segment a quarter dead is rewritten alone. Each
//! document is thus rewritten about log₄(documents / flush) times (a
//! crawler's index is written far more than it is reorganised), and a
//! query reads at most three segments a tier.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use neardup::disk::{Segment, SegmentDoc, SegmentKind};
use neardup::index::file::IndexFile;
use neardup::index::{KeyedIndex, TableIndex};
use neardup::minhash::{equal_values, Banding, KeyedLsh};
use neardup::{PipelineConfig, Radius, Sketch};
use serde::{Deserialize, Serialize};

use super::{features_of, Found, Near};
use crate::error::StoreError;
use crate::record::DocRecord;
use crate::{Result, Store, Written};

/// The manifest's file name in the index directory.
pub const MANIFEST: &str = "MANIFEST.json";
/// The manifest format this version writes and reads.
const MANIFEST_VERSION: u32 = 1;

/// How the on-disk index flushes and merges.
#[derive(Clone, Copy, Debug)]
pub struct DiskOptions {
    /// Documents held in memory before they are written as a segment
    /// (default 65,536).
    pub flush_rows: usize,
    /// Memory a merge or a flush may use, in bytes (default 1 GiB): a
    /// merge that would need more is not made.
    pub memory: u64,
}

impl Default for DiskOptions {
    /// [`for_memory`](Self::for_memory) of 256 MiB: 32,768 documents in
    /// memory before a flush.
    fn default() -> DiskOptions {
        DiskOptions::for_memory(256 << 20)
    }
}

impl DiskOptions {
    /// Options within `bytes`: the memory part holds a quarter of it (about
    /// 2 KiB a document, measured: a MinHash signature, its band tables'
    /// slots and chains, the id), at least 64 documents; merges may use
    /// all of it.
    pub fn for_memory(bytes: u64) -> DiskOptions {
        let flush_rows = (bytes / 4 / 2048).clamp(64, 1 << 22) as usize;
        DiskOptions { flush_rows, memory: bytes }
    }
}

/// The manifest: what the index directory holds.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    version: u32,
    /// The pipeline id the sketches come from.
    pipeline: String,
    kind: SegmentKind,
    /// Every document numbered up to this is in a segment (or dead).
    flushed: u64,
    /// The number of the next segment file.
    next_file: u64,
    segments: Vec<SegFile>,
    /// Flushes and merges over the index's life.
    #[serde(default)]
    counters: DiskCounters,
}

/// One segment file as the manifest lists it.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SegFile {
    file: String,
    rows: u64,
    first_seq: u64,
    last_seq: u64,
    bytes: u64,
    checksum: u64,
}

/// The documents written since the last flush, searchable.
struct Memtable {
    /// By sequence number: id and features (the sketch is the index's).
    docs: std::collections::BTreeMap<u64, (Box<str>, u32)>,
    index: MemIndex,
    /// Sequence numbers removed from it (their store tombstones can go).
    removed: Vec<u64>,
}

enum MemIndex {
    SimHash(KeyedIndex<u64>),
    MinHash(KeyedLsh<u64>),
}

impl Memtable {
    fn new(kind: &SegmentKind) -> Result<Memtable> {
        let index = match kind {
            SegmentKind::Simhash { bits, radius } => {
                let bits = neardup::Bits::try_from(*bits).map_err(|e| StoreError::Invalid(e.to_string()))?;
                MemIndex::SimHash(KeyedIndex::for_radius(radius, TableIndex::builder().bits(bits))?)
            }
            SegmentKind::Minhash { permutations, .. } => {
                MemIndex::MinHash(KeyedLsh::new(kind.banding().expect("MinHash"), *permutations))
            }
        };
        Ok(Memtable { docs: Default::default(), index, removed: Vec::new() })
    }

    fn len(&self) -> usize {
        self.docs.len()
    }

    fn max_seq(&self) -> u64 {
        self.docs.keys().next_back().copied().unwrap_or(0)
    }

    /// Adds documents (one bulk load of the index).
    fn add_many(&mut self, docs: &[(u64, &DocRecord)]) -> Result<()> {
        let features = |r: &DocRecord| r.features.unwrap_or(neardup::dedup::UNKNOWN_FEATURES as u32);
        match &mut self.index {
            MemIndex::SimHash(i) => {
                let items = docs
                    .iter()
                    .map(|(seq, r)| match r.sketch {
                        Sketch::Fingerprint(fp) => Ok((*seq, fp, features(r) as usize)),
                        _ => Err(corrupt(&r.id, "a sketch of the other method")),
                    })
                    .collect::<Result<Vec<_>>>()?;
                i.insert_batch(items)?;
            }
            MemIndex::MinHash(i) => {
                let items = docs
                    .iter()
                    .map(|(seq, r)| match &r.sketch {
                        Sketch::Signature(s) => Ok((*seq, s.values())),
                        _ => Err(corrupt(&r.id, "a sketch of the other method")),
                    })
                    .collect::<Result<Vec<_>>>()?;
                i.insert_batch(items);
            }
        }
        for (seq, r) in docs {
            self.docs.insert(*seq, (r.id.as_str().into(), features(r)));
        }
        Ok(())
    }

    fn add(&mut self, seq: u64, r: &DocRecord) -> Result<()> {
        let features = r.features.unwrap_or(neardup::dedup::UNKNOWN_FEATURES as u32);
        match (&mut self.index, &r.sketch) {
            (MemIndex::SimHash(i), Sketch::Fingerprint(fp)) => i.insert(seq, *fp, features as usize)?,
            (MemIndex::MinHash(i), Sketch::Signature(s)) => i.insert(seq, s.values()),
            _ => return Err(corrupt(&r.id, "a sketch of the other method")),
        }
        self.docs.insert(seq, (r.id.as_str().into(), features));
        Ok(())
    }

    /// Removes a document; whether it was here.
    fn remove(&mut self, seq: u64) -> Result<bool> {
        if self.docs.remove(&seq).is_none() {
            return Ok(false);
        }
        match &mut self.index {
            MemIndex::SimHash(i) => {
                i.remove(&seq)?;
            }
            MemIndex::MinHash(i) => {
                i.remove(&seq);
            }
        }
        self.removed.push(seq);
        Ok(true)
    }

    /// The documents here near `sketch` that `dead` does not name.
    fn near(
        &self,
        sketch: &Sketch,
        near: Near,
        features: usize,
        radius: &Radius,
        threshold: f64,
        dead: &HashSet<u64>,
    ) -> Result<Vec<Found>> {
        let name =
            |seq: &u64| (!dead.contains(seq)).then(|| self.docs.get(seq).map(|d| d.0.to_string())).flatten();
        Ok(match (&self.index, sketch) {
            (MemIndex::SimHash(i), Sketch::Fingerprint(fp)) => {
                let found = match near {
                    Near::Within(k) => i.query(*fp, k)?,
                    _ => i.query_rule(*fp, features, radius)?,
                };
                found
                    .into_iter()
                    .filter_map(|(seq, distance)| Some(Found { id: name(seq)?, distance, similarity: None }))
                    .collect()
            }
            (MemIndex::MinHash(i), Sketch::Signature(s)) => i
                .query(s.values(), threshold)
                .into_iter()
                .filter_map(|(seq, m)| {
                    Some(Found { id: name(seq)?, distance: m.differing, similarity: Some(m.similarity) })
                })
                .collect(),
            _ => return Err(StoreError::Invalid("a sketch of the other method reached the index".into())),
        })
    }

    fn memory_bytes(&self) -> usize {
        let index = match &self.index {
            MemIndex::SimHash(i) => i.memory_bytes(),
            MemIndex::MinHash(i) => i.memory_bytes(),
        };
        index + self.docs.values().map(|d| 48 + d.0.len()).sum::<usize>()
    }
}

fn corrupt(id: &str, message: &str) -> StoreError {
    StoreError::Corrupt { id: id.to_owned(), message: message.to_owned() }
}

/// An opened segment and its manifest entry.
#[derive(Clone)]
struct Held {
    seg: Arc<Segment>,
    file: SegFile,
    /// Its checksum was checked (segments written by this process are;
    /// those opened are checked on the merger thread after open).
    verified: bool,
}

/// Counters for stats and metrics, over the index's life (kept in the
/// manifest; a rebuild starts them again).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct DiskCounters {
    /// Segments written from memory.
    pub flushes: u64,
    /// Merges made.
    pub merges: u64,
    /// Rows written by merges (write amplification: these over the
    /// documents flushed).
    pub merged_rows: u64,
    /// Rows written by flushes.
    pub flushed_rows: u64,
}

/// What `neardup index stats` shows of the on-disk index.
#[derive(Clone, Debug, Serialize)]
pub struct DiskStats {
    /// The index directory.
    pub dir: PathBuf,
    /// Segments, oldest first: rows and bytes.
    pub segments: Vec<(u64, u64)>,
    /// Documents in memory (not yet in a segment).
    pub in_memory: u64,
    /// Tombstones held (rows of segments that are dead).
    pub tombstones: u64,
    /// Merges due now.
    pub pending_merges: u64,
    /// Whether a flush is waiting.
    pub flush_pending: bool,
    /// Counters since open.
    pub counters: DiskCounters,
}

/// The on-disk index.
pub(crate) struct DiskIndex {
    dir: PathBuf,
    kind: SegmentKind,
    pipeline: String,
    options: DiskOptions,
    segments: Vec<Held>,
    mem: Memtable,
    frozen: Option<Arc<Memtable>>,
    dead: HashSet<u64>,
    flushed: u64,
    next_file: u64,
    live: u64,
    /// Tombstones the store may forget (the engine does, at its next write).
    forgettable: Vec<u64>,
    counters: DiskCounters,
    /// Why the index must be rebuilt from the store (a segment failed its
    /// checksum), once found.
    damaged: Option<String>,
}

/// The segment kind a pipeline's sketches need (SimHash: tables for
/// `radius`).
fn kind_of(config: &PipelineConfig, radius: &Radius) -> Result<SegmentKind> {
    if config.method == neardup::minhash::Method::Minhash {
        let permutations = config.minhash.clone().unwrap_or_default().permutations;
        let banding =
            config.lsh.clone().unwrap_or_default().banding(permutations).map_err(StoreError::Invalid)?;
        return Ok(SegmentKind::Minhash { permutations, bands: banding.bands, rows: banding.rows });
    }
    Ok(SegmentKind::Simhash { bits: config.bits.get(), radius: radius.clone() })
}

fn io(path: &Path, e: impl std::fmt::Display) -> StoreError {
    StoreError::Database { path: path.to_path_buf(), message: e.to_string() }
}

/// Writes `bytes` to `path` atomically and durably (temporary file, fsync,
/// rename, fsync of the directory).
pub(crate) fn write_durably(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = path.with_extension("tmp");
    let r = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
        std::fs::File::open(dir)?.sync_all()
    })();
    r.map_err(|e| io(path, e))
}

impl DiskIndex {
    /// Opens the index in `dir` over `store`, or builds it from the store
    /// when it is missing, stale or damaged (saying why).
    pub(crate) fn open(
        dir: &Path,
        store: &dyn Store,
        config: &PipelineConfig,
        radius: &Radius,
        options: DiskOptions,
    ) -> Result<(DiskIndex, Option<String>)> {
        std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
        let pipeline = format!("{:016x}", config.id());
        let wanted = kind_of(config, radius)?;
        let (mut index, why) = match Self::load(dir, store, &pipeline, &wanted, options)? {
            Ok(index) => (index, None),
            Err(why) => (Self::rebuild(dir, &pipeline, wanted, options)?, Some(why)),
        };
        index.remove_orphans();
        // The documents written after the last flush.
        let mut pending = Vec::new();
        store.for_each_after(index.flushed, &mut |seq, d| {
            pending.push((seq, d));
            if pending.len() >= options.flush_rows {
                for (seq, d) in pending.drain(..) {
                    index.mem.add(seq, &d)?;
                }
                index.freeze();
                index.flush_frozen()?;
            }
            Ok(())
        })?;
        for (seq, d) in pending {
            index.mem.add(seq, &d)?;
        }
        // Tombstones matter only for rows a segment holds.
        for seq in store.dead_seqs()? {
            if index.segments.iter().any(|h| h.seg.row_of(seq).is_some()) {
                index.dead.insert(seq);
            } else {
                index.forgettable.push(seq);
            }
        }
        index.live = store.len()?;
        Ok((index, why))
    }

    /// The index the manifest describes, or why it cannot be used.
    fn load(
        dir: &Path,
        store: &dyn Store,
        pipeline: &str,
        wanted: &SegmentKind,
        options: DiskOptions,
    ) -> Result<std::result::Result<DiskIndex, String>> {
        let path = dir.join(MANIFEST);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Err("no index was written yet".into()))
            }
            Err(e) => return Ok(Err(format!("{}: {e}", path.display()))),
        };
        let version = serde_json::from_slice::<serde_json::Value>(&bytes)
            .ok()
            .and_then(|v| v.get("version").and_then(|v| v.as_u64()));
        if version.is_some_and(|v| v > u64::from(MANIFEST_VERSION)) {
            return Err(StoreError::Database {
                path,
                message: format!(
                    "an index of manifest version {}, written by a newer neardup (this one reads version \
                     {MANIFEST_VERSION}): upgrade neardup, or delete the index directory to rebuild it from the store",
                    version.unwrap_or(0)
                ),
            });
        }
        let manifest: Manifest = match serde_json::from_slice(&bytes) {
            Ok(m) => m,
            Err(e) => return Ok(Err(format!("the manifest is unreadable ({e})"))),
        };
        if manifest.pipeline != pipeline {
            return Ok(Err("the index was made with another pipeline".into()));
        }
        let same = match (&manifest.kind, wanted) {
            // SimHash segments answer any radius exactly: keep theirs.
            (SegmentKind::Simhash { bits: a, .. }, SegmentKind::Simhash { bits: b, .. }) => a == b,
            (a, b) => a == b,
        };
        if !same {
            return Ok(Err("the index's tables are of another banding or width".into()));
        }
        if manifest.flushed > store.last_seq()? {
            return Ok(Err("the index is ahead of the store (a store restored from an older copy?)".into()));
        }
        let mut segments = Vec::with_capacity(manifest.segments.len());
        for f in &manifest.segments {
            let p = dir.join(&f.file);
            let len = std::fs::metadata(&p).map(|m| m.len()).ok();
            if len != Some(f.bytes) {
                return Ok(Err(format!("segment {} is missing or of the wrong size", f.file)));
            }
            match IndexFile::stored_checksum(&p) {
                Ok(sum) if sum == f.checksum => {}
                _ => return Ok(Err(format!("segment {} is not the one the manifest lists", f.file))),
            }
            match Segment::open(&p, false) {
                Ok(seg) if seg.len() as u64 == f.rows => {
                    segments.push(Held { seg: Arc::new(seg), file: f.clone(), verified: false })
                }
                Ok(_) => return Ok(Err(format!("segment {} has the wrong number of rows", f.file))),
                Err(e) => return Ok(Err(format!("segment {}: {e}", f.file))),
            }
        }
        let mem = Memtable::new(&manifest.kind)?;
        Ok(Ok(DiskIndex {
            dir: dir.to_path_buf(),
            kind: manifest.kind,
            pipeline: pipeline.to_owned(),
            options,
            segments,
            mem,
            frozen: None,
            dead: HashSet::new(),
            flushed: manifest.flushed,
            next_file: manifest.next_file,
            live: 0,
            forgettable: Vec::new(),
            counters: manifest.counters,
            damaged: None,
        }))
    }

    /// An empty index (its old files removed), to be filled from the store
    /// as documents after number 0.
    fn rebuild(dir: &Path, pipeline: &str, kind: SegmentKind, options: DiskOptions) -> Result<DiskIndex> {
        if let Ok(entries) = std::fs::read_dir(dir) {
            for e in entries.flatten() {
                if e.file_name().to_string_lossy().starts_with("seg-") {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
        let index = DiskIndex {
            dir: dir.to_path_buf(),
            mem: Memtable::new(&kind)?,
            kind,
            pipeline: pipeline.to_owned(),
            options,
            segments: Vec::new(),
            frozen: None,
            dead: HashSet::new(),
            flushed: 0,
            next_file: 1,
            live: 0,
            forgettable: Vec::new(),
            counters: DiskCounters::default(),
            damaged: None,
        };
        index.write_manifest(&index.manifest(&index.segments, 0))?;
        Ok(index)
    }

    /// Removes segment files the manifest does not list (a flush or merge
    /// cut short) and temporary files.
    fn remove_orphans(&self) {
        let listed: HashSet<&str> = self.segments.iter().map(|h| h.file.file.as_str()).collect();
        if let Ok(entries) = std::fs::read_dir(&self.dir) {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                let ours = name.starts_with("seg-") || name.starts_with(".neardup-index-");
                if ours && !listed.contains(name.as_str()) {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
    }

    fn manifest(&self, segments: &[Held], flushed: u64) -> Manifest {
        Manifest {
            version: MANIFEST_VERSION,
            pipeline: self.pipeline.clone(),
            kind: self.kind.clone(),
            flushed,
            next_file: self.next_file,
            segments: segments.iter().map(|h| h.file.clone()).collect(),
            counters: self.counters,
        }
    }

    fn write_manifest(&self, m: &Manifest) -> Result<()> {
        let json = serde_json::to_vec_pretty(m).expect("a manifest serializes");
        write_durably(&self.dir.join(MANIFEST), &json)
    }

    /// Documents stored.
    pub(crate) fn len(&self) -> usize {
        self.live as usize
    }

    /// Adds committed documents: each replaced one's old number becomes a
    /// tombstone (or leaves memory). Returns whether the memory part is
    /// full (a flush is due).
    pub(crate) fn add(&mut self, records: &[DocRecord], written: &[Written]) -> Result<bool> {
        // A replaced document may be one of this batch (a repeated id):
        // the store numbers a batch consecutively.
        let first = written.first().map_or(0, |w| w.seq);
        let mut batch: Vec<Option<(u64, &DocRecord)>> = Vec::with_capacity(records.len());
        for (r, w) in records.iter().zip(written) {
            match w.replaced {
                Some(old) if old >= first => batch[(old - first) as usize] = None,
                Some(old) => self.forget_seq(old)?,
                None => self.live += 1,
            }
            batch.push(Some((w.seq, r)));
        }
        let batch: Vec<(u64, &DocRecord)> = batch.into_iter().flatten().collect();
        self.mem.add_many(&batch)?;
        Ok(self.mem.len() >= self.options.flush_rows)
    }

    /// Removes a document by its number.
    pub(crate) fn remove(&mut self, seq: u64) -> Result<()> {
        self.forget_seq(seq)?;
        self.live = self.live.saturating_sub(1);
        Ok(())
    }

    fn forget_seq(&mut self, seq: u64) -> Result<()> {
        if !self.mem.remove(seq)? {
            self.dead.insert(seq);
        }
        Ok(())
    }

    /// Writes the memory part (and any frozen one) as segments: what a
    /// clean close does, so that the next open reads nothing back.
    pub(crate) fn flush_all(&mut self) -> Result<()> {
        self.flush_frozen()?;
        self.freeze();
        self.flush_frozen()
    }

    /// Moves the memory part aside to be flushed (if none is waiting).
    pub(crate) fn freeze(&mut self) {
        if self.frozen.is_none() && self.mem.len() > 0 {
            if let Ok(fresh) = Memtable::new(&self.kind) {
                let full = std::mem::replace(&mut self.mem, fresh);
                self.frozen = Some(Arc::new(full));
            }
        }
    }

    /// Whether the memory part has grown past twice a flush while one waits
    /// (writers then flush themselves).
    pub(crate) fn overfull(&self) -> bool {
        self.mem.len() >= 2 * self.options.flush_rows
    }

    /// Why the index must be rebuilt from the store, if a segment failed
    /// its checksum.
    pub(crate) fn damaged(&self) -> Option<&str> {
        self.damaged.as_deref()
    }

    /// Tombstones the store may forget now.
    pub(crate) fn take_forgettable(&mut self) -> Vec<u64> {
        std::mem::take(&mut self.forgettable)
    }

    fn next_name(&mut self) -> String {
        let name = format!("seg-{:08}.nds", self.next_file);
        self.next_file += 1;
        name
    }

    /// Writes a segment file of `docs`; its manifest entry.
    fn write_segment(
        dir: &Path,
        name: String,
        kind: &SegmentKind,
        docs: &[SegmentDoc<'_>],
        memory: u64,
    ) -> Result<Held> {
        let path = dir.join(&name);
        Segment::write(&path, kind, docs, memory)?;
        Self::held(&path, name)
    }

    fn held(path: &Path, name: String) -> Result<Held> {
        let seg = Segment::open(path, false)?;
        let (first_seq, last_seq) = seg.seq_range();
        let bytes = std::fs::metadata(path).map_err(|e| io(path, e))?.len();
        let file = SegFile {
            file: name,
            rows: seg.len() as u64,
            first_seq,
            last_seq,
            bytes,
            checksum: IndexFile::stored_checksum(path)?,
        };
        Ok(Held { seg: Arc::new(seg), file, verified: true })
    }

    /// Flushes the frozen memory part here and now (open and overfull
    /// writers; the merger thread does it without the lock).
    pub(crate) fn flush_frozen(&mut self) -> Result<()> {
        let Some(frozen) = self.frozen.clone() else { return Ok(()) };
        let name = self.next_name();
        let held =
            Self::write_segment(&self.dir, name, &self.kind, &segment_docs(&frozen), self.options.memory)?;
        self.install_flush(held, &frozen)
    }

    /// Puts a flushed segment in place of the frozen part: manifest first.
    fn install_flush(&mut self, held: Held, frozen: &Memtable) -> Result<()> {
        let flushed = self.flushed.max(frozen.max_seq());
        let mut segments = self.segments.clone();
        segments.push(held.clone());
        self.counters.flushes += 1;
        self.counters.flushed_rows += held.file.rows;
        self.write_manifest(&self.manifest(&segments, flushed))?;
        self.segments = segments;
        self.flushed = flushed;
        self.forgettable.extend(&frozen.removed);
        self.frozen = None;
        Ok(())
    }

    /// The merge due now, if any: four segments of one tier, or one a
    /// quarter dead; `None` when the merge would exceed the memory.
    fn merge_due(&self, merges: Merges) -> Option<Vec<String>> {
        let tier = |rows: u64| -> u32 {
            let base = self.options.flush_rows.max(1) as u64;
            let mut t = 0;
            let mut cap = base;
            while rows > cap && t < 32 {
                cap = cap.saturating_mul(4);
                t += 1;
            }
            t
        };
        // What a merge holds per row: the rows' order, names, numbers and
        // counts (~120 B), one band's entries at a time (8 B, twice while
        // sorted) and the band filter being made (24 B) for MinHash; the
        // tables being built for SimHash.
        let per_row = match &self.kind {
            SegmentKind::Simhash { .. } => 320,
            SegmentKind::Minhash { .. } => 164,
        };
        let max_rows = self.options.memory / per_row;
        if merges == Merges::All {
            if let Some(pick) = self.compaction(max_rows) {
                return Some(pick);
            }
        }
        let mut by_tier: HashMap<u32, Vec<&Held>> = HashMap::new();
        for h in &self.segments {
            by_tier.entry(tier(h.file.rows)).or_default().push(h);
        }
        let mut tiers: Vec<_> = by_tier.into_iter().filter(|(_, v)| v.len() >= 4).collect();
        tiers.sort_by_key(|(t, _)| *t);
        // The oldest segments of the lowest full tier that a merge within
        // the memory can take (at least two): segments stop growing at the
        // largest merge the memory allows, rather than piling up below it.
        for (_, v) in &tiers {
            let pick = fitting(v.iter().take(4).copied(), max_rows);
            if pick.len() >= 2 {
                return Some(pick);
            }
        }
        self.segments
            .iter()
            .find(|h| {
                let dead = self.dead.iter().filter(|&&s| h.seg.row_of(s).is_some()).count();
                dead > 0 && dead as u64 * 4 >= h.file.rows && h.file.rows <= max_rows
            })
            .map(|h| vec![h.file.file.clone()])
    }

    /// A compaction's next merge: the smallest segments that fit in one
    /// merge of at most `max_rows` rows, if two or more do; else a segment
    /// with tombstones that fits, alone (rewritten without its dead rows).
    /// Repeated until `None`, the index has as few segments as merges of
    /// that size allow, and none with dead rows that a merge can drop.
    fn compaction(&self, max_rows: u64) -> Option<Vec<String>> {
        let mut by_size: Vec<&Held> = self.segments.iter().collect();
        by_size.sort_by_key(|h| h.file.rows);
        let pick = fitting(by_size.iter().copied(), max_rows);
        if pick.len() >= 2 {
            return Some(pick);
        }
        by_size
            .iter()
            .find(|h| h.file.rows <= max_rows && self.dead.iter().any(|&s| h.seg.row_of(s).is_some()))
            .map(|h| vec![h.file.file.clone()])
    }

    /// The documents near `sketch`, by `near` (the engine resolved the
    /// threshold). MinHash candidates of segments are confirmed against
    /// their signatures in `store`.
    pub(crate) fn near(
        &self,
        store: &dyn Store,
        sketch: &Sketch,
        near: Near,
        features: Option<u32>,
        radius: &Radius,
        threshold: f64,
    ) -> Result<Vec<Found>> {
        let features = features_of(features);
        let mut out = self.mem.near(sketch, near, features, radius, threshold, &self.dead)?;
        if let Some(f) = &self.frozen {
            // Documents replaced or deleted while frozen are tombstones.
            out.extend(f.near(sketch, near, features, radius, threshold, &self.dead)?);
        }
        match sketch {
            Sketch::Fingerprint(fp) => {
                for h in &self.segments {
                    for m in h.seg.query_fingerprint(*fp, near.k(), radius, features)? {
                        let row = m.id as u32;
                        if self.dead.contains(&h.seg.seq(row)) {
                            continue;
                        }
                        if let Some(name) = h.seg.name(row) {
                            out.push(Found { id: name.to_owned(), distance: m.distance, similarity: None });
                        }
                    }
                }
            }
            Sketch::Signature(s) => {
                let banding = self
                    .kind
                    .banding()
                    .ok_or_else(|| StoreError::Invalid("a signature for a SimHash index".into()))?;
                out.extend(self.confirm(store, banding, s.values(), threshold)?);
            }
        }
        Ok(out)
    }

    /// The segments' MinHash candidates of `q` confirmed by their stored
    /// signatures: sharing a band key, at least `threshold` similar.
    fn confirm(&self, store: &dyn Store, banding: Banding, q: &[u32], threshold: f64) -> Result<Vec<Found>> {
        let keys: Vec<u64> = (0..banding.bands).map(|b| banding.key(q, b)).collect();
        let mut names: Vec<&str> = Vec::new();
        let segs: Vec<&Segment> = self.segments.iter().map(|h| &*h.seg).collect();
        let mut rows = Vec::new();
        neardup::disk::band_candidates_of(&segs, &keys, &mut rows);
        rows.sort_unstable();
        rows.dedup();
        for &(i, row) in &rows {
            let seg = segs[i as usize];
            if !self.dead.contains(&seg.seq(row)) {
                if let Some(n) = seg.name(row) {
                    names.push(n);
                }
            }
        }
        if names.is_empty() {
            return Ok(Vec::new());
        }
        let k = q.len();
        let sketches = store.get_sketches(&names)?;
        Ok(names
            .into_iter()
            .zip(sketches)
            .filter_map(|(name, sketch)| {
                let Some(Sketch::Signature(sig)) = sketch else { return None };
                let other = sig.values();
                if other.len() != k || !(0..banding.bands).any(|b| banding.key(other, b) == keys[b]) {
                    return None;
                }
                let equal = equal_values(q, other);
                let similarity = equal as f64 / k as f64;
                (similarity >= threshold).then(|| Found {
                    id: name.to_owned(),
                    distance: (k - equal) as u32,
                    similarity: Some(similarity),
                })
            })
            .collect())
    }

    /// Bytes held in memory: the memory part, the frozen one, tombstones.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.mem.memory_bytes() + self.frozen.as_ref().map_or(0, |f| f.memory_bytes()) + self.dead.len() * 16
    }

    /// Sizes, pending work and counters.
    pub(crate) fn stats(&self) -> DiskStats {
        DiskStats {
            dir: self.dir.clone(),
            segments: self.segments.iter().map(|h| (h.file.rows, h.file.bytes)).collect(),
            in_memory: self.mem.len() as u64,
            tombstones: self.dead.len() as u64,
            pending_merges: u64::from(self.merge_due(Merges::Due).is_some()),
            flush_pending: self.frozen.is_some(),
            counters: self.counters,
        }
    }

    /// The k of the SimHash segments' first tables (`None` for MinHash).
    pub(crate) fn table_k(&self) -> Option<u32> {
        match &self.kind {
            SegmentKind::Simhash { radius, .. } => Some(neardup::dedup::Plan::new(radius).passes()[0].k),
            SegmentKind::Minhash { .. } => None,
        }
    }

    /// The number of segments.
    pub(crate) fn segment_count(&self) -> usize {
        self.segments.len()
    }
}

/// The rows of a memory part, in sequence order.
fn segment_docs(m: &Memtable) -> Vec<SegmentDoc<'_>> {
    m.docs
        .iter()
        .map(|(&seq, (name, features))| {
            let (fingerprint, signature) = match &m.index {
                MemIndex::SimHash(i) => (i.get(&seq), &[][..]),
                MemIndex::MinHash(i) => (None, i.get(&seq).unwrap_or(&[])),
            };
            SegmentDoc { seq, name, fingerprint, signature, features: *features }
        })
        .collect()
}

/// Checks the checksum of every segment opened but not yet checked (with
/// no lock held: it reads each file once); a damaged one marks the index
/// for a rebuild from the store, which the engine makes before its next
/// answer.
fn scrub(state: &std::sync::RwLock<super::state::State>) {
    let unchecked: Vec<(String, PathBuf)> = match state.read().expect("lock").disk() {
        Some(d) if d.damaged.is_none() => d
            .segments
            .iter()
            .filter(|h| !h.verified)
            .map(|h| (h.file.file.clone(), d.dir.join(&h.file.file)))
            .collect(),
        _ => return,
    };
    for (name, path) in unchecked {
        let r = IndexFile::open(&path);
        let mut s = state.write().expect("lock");
        let Some(d) = s.disk_mut() else { return };
        match r {
            Ok(_) => {
                for h in d.segments.iter_mut().filter(|h| h.file.file == name) {
                    h.verified = true;
                }
            }
            // A segment merged away meanwhile is no longer there: fine.
            Err(_) if !d.segments.iter().any(|h| h.file.file == name) => {}
            Err(e) => {
                d.damaged = Some(format!("segment {name} failed its check: {e}"));
                return;
            }
        }
    }
}

/// The files of the first `segments` that one merge of at most `max_rows`
/// rows can take.
fn fitting<'a>(segments: impl Iterator<Item = &'a Held>, max_rows: u64) -> Vec<String> {
    let mut rows = 0u64;
    segments
        .take_while(|h| {
            rows += h.file.rows;
            rows <= max_rows
        })
        .map(|h| h.file.file.clone())
        .collect()
}

/// Which merges [`maintain`] makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Merges {
    /// Those the size-tiered policy calls for (after writes).
    Due,
    /// Besides those, every merge that lowers the number of segments or
    /// drops tombstones within the memory ([`Engine::compact`](super::Engine::compact)).
    All,
}

/// Flushes and merges whatever is due, off the read and write paths:
/// files are written with no lock held, and installed (manifest first)
/// under a short write lock. Stops at the first error (the work is retried
/// at the next wake-up; answers stay exact meanwhile).
pub(super) fn maintain(
    state: &std::sync::RwLock<super::state::State>,
    stop: &AtomicBool,
    merges: Merges,
) -> Result<()> {
    scrub(state);
    while !stop.load(Ordering::Relaxed) {
        // A flush.
        let job = {
            let mut s = state.write().expect("lock");
            let Some(d) = s.disk_mut() else { return Ok(()) };
            d.frozen.clone().map(|f| (f, d.next_name(), d.dir.clone(), d.kind.clone(), d.options.memory))
        };
        if let Some((frozen, name, dir, kind, memory)) = job {
            let held = DiskIndex::write_segment(&dir, name, &kind, &segment_docs(&frozen), memory)?;
            let mut s = state.write().expect("lock");
            if let Some(d) = s.disk_mut() {
                if d.frozen.as_ref().is_some_and(|f| Arc::ptr_eq(f, &frozen)) {
                    d.install_flush(held, &frozen)?;
                }
            }
            continue;
        }
        // A merge.
        let job = {
            let mut s = state.write().expect("lock");
            let Some(d) = s.disk_mut() else { return Ok(()) };
            match d.merge_due(merges) {
                Some(pick) => {
                    let inputs: Vec<Held> =
                        d.segments.iter().filter(|h| pick.contains(&h.file.file)).cloned().collect();
                    let dead: HashSet<u64> = inputs
                        .iter()
                        .flat_map(|h| {
                            let seg = h.seg.clone();
                            d.dead
                                .iter()
                                .copied()
                                .filter(move |&s| seg.row_of(s).is_some())
                                .collect::<Vec<_>>()
                        })
                        .collect();
                    Some((inputs, dead, d.next_name(), d.dir.clone(), d.kind.clone(), d.options.memory))
                }
                None => None,
            }
        };
        let Some((inputs, dead, name, dir, kind, memory)) = job else { return Ok(()) };
        let path = dir.join(&name);
        let segs: Vec<Arc<Segment>> = inputs.iter().map(|h| h.seg.clone()).collect();
        let rows = Segment::merge(&path, &kind, &segs, &|s| dead.contains(&s), memory)?;
        let held = DiskIndex::held(&path, name)?;
        let mut s = state.write().expect("lock");
        let Some(d) = s.disk_mut() else { return Ok(()) };
        let picked: HashSet<&str> = inputs.iter().map(|h| h.file.file.as_str()).collect();
        let mut segments: Vec<Held> = Vec::with_capacity(d.segments.len());
        let mut placed = false;
        for h in &d.segments {
            if picked.contains(h.file.file.as_str()) {
                if !placed {
                    segments.push(held.clone());
                    placed = true;
                }
            } else {
                segments.push(h.clone());
            }
        }
        d.counters.merges += 1;
        d.counters.merged_rows += rows as u64;
        d.write_manifest(&d.manifest(&segments, d.flushed))?;
        d.segments = segments;
        for seq in &dead {
            d.dead.remove(seq);
        }
        d.forgettable.extend(dead);
        for h in &inputs {
            let _ = std::fs::remove_file(d.dir.join(&h.file.file));
        }
    }
    Ok(())
}
