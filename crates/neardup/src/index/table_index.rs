//! [`TableIndex`]: permuted sorted tables with online inserts and removals.
//!
//! Entries live in immutable sorted [segments](super::segment) plus a small
//! mutable buffer. When the buffer fills it becomes a segment, and a new
//! segment is merged with the one before it while that one is at most twice
//! its size, so there are `O(log n)` segments. Removals are tombstones (ids
//! per segment), dropped when the segment is next merged or when a quarter
//! of it is dead.

use std::collections::HashSet;
use std::sync::Arc;

use rayon::prelude::*;
use serde::Serialize;

use super::blob::read_u64;
use super::layout::{self, human_bytes, Layout, LayoutSpec};
use super::segment::Segment;
use super::word::Word;
use super::{check_width, HammingIndex, Id, Match};
use crate::error::Result;
use crate::fingerprint::{Bits, Fingerprint};

/// The layout and segments of one width.
pub(crate) type SegmentsOf<'a, W> = Option<(&'a Arc<Layout>, Vec<Arc<Segment<W>>>)>;

/// Builds a [`TableIndex`]. Every setter documents its default.
#[derive(Clone, Debug)]
pub struct TableIndexBuilder {
    bits: Bits,
    k: u32,
    blocks: Option<u32>,
    expected_len: usize,
    memory: u64,
    buffer_len: usize,
}

impl Default for TableIndexBuilder {
    fn default() -> Self {
        TableIndexBuilder {
            bits: Bits::B64,
            k: 3,
            blocks: None,
            expected_len: 1_000_000,
            memory: 8 << 30,
            buffer_len: 1024,
        }
    }
}

impl TableIndexBuilder {
    /// Fingerprint width. Default: 64.
    pub fn bits(mut self, bits: Bits) -> Self {
        self.bits = bits;
        self
    }

    /// The largest radius answered through the tables. Larger radii are
    /// still answered exactly, by reading every entry. Default: 3.
    pub fn k(mut self, k: u32) -> Self {
        self.k = k;
        self
    }

    /// Number of blocks `m > k`, overriding the automatic choice. Default:
    /// chosen by [`layout::choose`] from the expected size and memory budget.
    pub fn blocks(mut self, m: u32) -> Self {
        self.blocks = Some(m);
        self
    }

    /// The number of entries the layout is chosen for. Default: 1,000,000;
    /// [`build_from`](Self::build_from) uses the real count.
    pub fn expected_len(mut self, n: usize) -> Self {
        self.expected_len = n;
        self
    }

    /// Memory budget in bytes for the layout choice. Default: 8 GiB.
    pub fn memory(mut self, bytes: u64) -> Self {
        self.memory = bytes;
        self
    }

    /// Entries held in the unsorted buffer before it becomes a segment.
    /// Default: 1024 (queries scan the buffer).
    pub fn buffer_len(mut self, n: usize) -> Self {
        self.buffer_len = n.max(1);
        self
    }

    fn choose(&self, n: usize) -> Result<(LayoutSpec, String)> {
        let f = self.bits.get();
        match self.blocks {
            Some(m) => {
                let spec = LayoutSpec { bits: f, k: self.k, blocks: m };
                spec.validate()?;
                Ok((spec, format!("{m} blocks were asked for")))
            }
            None => {
                let c = layout::choose(f, self.k, n, self.memory)?;
                Ok((c.spec, c.reason))
            }
        }
    }

    /// An empty index.
    ///
    /// # Errors
    /// An impossible layout (`blocks <= k`, too many tables).
    pub fn build(self) -> Result<TableIndex> {
        let (spec, reason) = self.choose(self.expected_len)?;
        TableIndex::with_layout(spec, reason, self.buffer_len)
    }

    /// An index holding `entries`, bulk-loaded into one segment, its layout
    /// chosen for their number.
    ///
    /// # Errors
    /// An impossible layout, or an entry of the wrong width.
    pub fn build_from(self, entries: impl IntoIterator<Item = (Id, Fingerprint)>) -> Result<TableIndex> {
        let entries: Vec<(Id, Fingerprint)> = entries.into_iter().collect();
        for &(_, fp) in &entries {
            check_width(self.bits, fp)?;
        }
        let (spec, reason) = self.choose(entries.len())?;
        let mut index = TableIndex::with_layout(spec, reason, self.buffer_len)?;
        index.bulk_load(entries)?;
        Ok(index)
    }
}

/// The generalized pigeonhole index: one permuted sorted table per choice of
/// `m - k` of the `m` blocks. See the [module docs](super) and
/// [`LayoutSpec`].
#[derive(Clone, Debug)]
pub struct TableIndex {
    inner: Inner,
    reason: String,
}

#[derive(Clone, Debug)]
enum Inner {
    B64(Tables<u64>),
    B128(Tables<u128>),
}

macro_rules! dispatch {
    ($self:expr, $t:ident => $e:expr) => {
        match $self {
            Inner::B64($t) => $e,
            Inner::B128($t) => $e,
        }
    };
}

impl TableIndex {
    /// A builder with the defaults: 64 bits, k = 3, automatic layout.
    pub fn builder() -> TableIndexBuilder {
        TableIndexBuilder::default()
    }

    /// An empty index with an explicit layout.
    pub fn with_layout(spec: LayoutSpec, reason: String, buffer_len: usize) -> Result<TableIndex> {
        let layout = Arc::new(Layout::new(spec)?);
        let inner = match spec.bits {
            64 => Inner::B64(Tables::new(layout, buffer_len)),
            128 => Inner::B128(Tables::new(layout, buffer_len)),
            b => {
                return Err(crate::Error::Config(format!(
                    "an index holds 64- or 128-bit fingerprints, not {b}"
                )))
            }
        };
        Ok(TableIndex { inner, reason })
    }

    /// The layout in use.
    pub fn layout(&self) -> LayoutSpec {
        dispatch!(&self.inner, t => t.layout.spec)
    }

    /// Why the layout was chosen.
    pub fn layout_reason(&self) -> &str {
        &self.reason
    }

    /// Adds many entries at once: one new segment, then the usual merges.
    pub fn bulk_load(&mut self, entries: Vec<(Id, Fingerprint)>) -> Result<()> {
        let bits = self.bits();
        for &(_, fp) in &entries {
            check_width(bits, fp)?;
        }
        dispatch!(&mut self.inner, t => {
            let words = entries.into_iter().map(|(id, fp)| (id, Word::from_u128(fp.value()))).collect();
            t.add_segment(words)
        })
    }

    /// Removes the entries with this id and fingerprint; returns how many.
    /// Like [`HammingIndex::remove`] for an id that only ever had this
    /// fingerprint, but a lookup per segment rather than a read of every id:
    /// what a store that knows its documents' fingerprints should call.
    ///
    /// # Errors
    /// A fingerprint of the wrong width.
    pub fn remove_entry(&mut self, id: Id, fp: Fingerprint) -> Result<usize> {
        check_width(self.bits(), fp)?;
        Ok(dispatch!(&mut self.inner, t => t.remove(id, Some(Word::from_u128(fp.value())))))
    }

    /// Defers segment merges: new segments are only appended, and the owner
    /// merges them by [`merge_plan`](Self::merge_plan), [`MergePlan::build`]
    /// and [`apply_merge`](Self::apply_merge) — so that an index shared
    /// behind a lock is locked for writing only to append and to swap, never
    /// while a large merge sorts. Off by default (inserts merge in place).
    pub fn set_deferred_merges(&mut self, deferred: bool) {
        dispatch!(&mut self.inner, t => t.deferred = deferred);
    }

    /// The merge the segments are due for, if any (cheap: clones `Arc`s
    /// and the removed-id sets of the segments involved).
    pub fn merge_plan(&self) -> Option<MergePlan> {
        match &self.inner {
            Inner::B64(t) => t.plan().map(|p| MergePlan(PlanInner::B64(p))),
            Inner::B128(t) => t.plan().map(|p| MergePlan(PlanInner::B128(p))),
        }
    }

    /// Swaps a built merge in, if the segments it was made from are still
    /// there unchanged (segments appended meanwhile are fine; a removal in
    /// one of them makes it stale); returns whether it was applied (a stale
    /// merge is dropped, and answers stay exact either way).
    pub fn apply_merge(&mut self, merged: Merged) -> bool {
        match (&mut self.inner, merged.0) {
            (Inner::B64(t), MergedInner::B64(p, s)) => t.apply(p.start, &p.parts, s),
            (Inner::B128(t), MergedInner::B128(p, s)) => t.apply(p.start, &p.parts, s),
            _ => false,
        }
    }

    /// Turns the buffer into a segment and merges all segments into one,
    /// dropping removed entries. Queries are fastest afterwards.
    pub fn compact(&mut self) -> Result<()> {
        dispatch!(&mut self.inner, t => t.compact())
    }

    /// Every live entry (order unspecified).
    pub fn entries(&self) -> Vec<(Id, Fingerprint)> {
        let bits = self.bits();
        dispatch!(&self.inner, t => t.entries().into_iter().map(|(id, w)| (id, Fingerprint::new(w.to_u128(), bits))).collect())
    }

    /// Bytes held by the tables, ids and buffer.
    pub fn memory_bytes(&self) -> usize {
        dispatch!(&self.inner, t => t.bytes())
    }

    /// Layout, sizes and the distribution of key-run lengths per table.
    pub fn stats(&self) -> IndexStats {
        let spec = self.layout();
        let mut s = dispatch!(&self.inner, t => t.stats());
        s.layout = spec;
        s.layout_text = spec.to_string();
        s.reason = self.reason.clone();
        s
    }

    pub(crate) fn segments_u64(&self) -> SegmentsOf<'_, u64> {
        match &self.inner {
            Inner::B64(t) => Some((&t.layout, t.segments.iter().map(|l| l.seg.clone()).collect())),
            Inner::B128(_) => None,
        }
    }

    pub(crate) fn segments_u128(&self) -> SegmentsOf<'_, u128> {
        match &self.inner {
            Inner::B128(t) => Some((&t.layout, t.segments.iter().map(|l| l.seg.clone()).collect())),
            Inner::B64(_) => None,
        }
    }

    /// Whether everything is in one segment with nothing removed or buffered.
    pub(crate) fn is_compact(&self) -> bool {
        dispatch!(&self.inner, t => t.buffer.is_empty() && t.segments.len() <= 1 && t.segments.iter().all(|l| l.dead.is_empty()))
    }

    pub(crate) fn from_segment_u64(seg: Segment<u64>, reason: String, buffer_len: usize) -> TableIndex {
        TableIndex { inner: Inner::B64(Tables::with_segment(seg, buffer_len)), reason }
    }

    pub(crate) fn from_segment_u128(seg: Segment<u128>, reason: String, buffer_len: usize) -> TableIndex {
        TableIndex { inner: Inner::B128(Tables::with_segment(seg, buffer_len)), reason }
    }
}

impl HammingIndex for TableIndex {
    fn bits(&self) -> Bits {
        if matches!(self.inner, Inner::B64(_)) {
            Bits::B64
        } else {
            Bits::B128
        }
    }

    fn len(&self) -> usize {
        dispatch!(&self.inner, t => t.len)
    }

    fn insert(&mut self, id: Id, fp: Fingerprint) -> Result<()> {
        check_width(self.bits(), fp)?;
        dispatch!(&mut self.inner, t => t.insert(id, Word::from_u128(fp.value())))
    }

    fn remove(&mut self, id: Id) -> usize {
        dispatch!(&mut self.inner, t => t.remove(id, None))
    }

    fn query(&self, fp: Fingerprint, k: u32) -> Result<Vec<Match>> {
        check_width(self.bits(), fp)?;
        let mut out = Vec::new();
        dispatch!(&self.inner, t => t.query(Word::from_u128(fp.value()), k, &mut out));
        out.sort_unstable();
        Ok(out)
    }

    /// Answers in chunks spread over rayon's threads; within a chunk the
    /// queries' memory reads overlap (see [`TableIndex::query_batch_local`]).
    fn query_batch(&self, fps: &[Fingerprint], k: u32) -> Result<Vec<Vec<Match>>> {
        for &fp in fps {
            check_width(self.bits(), fp)?;
        }
        let chunks: Vec<Vec<Vec<Match>>> =
            fps.par_chunks(BATCH_CHUNK).map(|c| self.query_batch_local(c, k)).collect::<Result<_>>()?;
        Ok(chunks.into_iter().flatten().collect())
    }
}

/// Queries per rayon task in [`TableIndex`]'s `query_batch`.
const BATCH_CHUNK: usize = 1024;

impl TableIndex {
    /// [`query`](HammingIndex::query) for each fingerprint, on this thread,
    /// with the memory reads of groups of queries overlapped (software
    /// pipelining with prefetches across queries): the throughput form of
    /// a query, for batches. The same answers as one query at a time.
    ///
    /// # Errors
    /// [`Error::WidthMismatch`](crate::Error::WidthMismatch) when a fingerprint
    /// is not [`bits`](HammingIndex::bits) wide.
    pub fn query_batch_local(&self, fps: &[Fingerprint], k: u32) -> Result<Vec<Vec<Match>>> {
        for &fp in fps {
            check_width(self.bits(), fp)?;
        }
        let mut outs = vec![Vec::new(); fps.len()];
        dispatch!(&self.inner, t => {
            let qs: Vec<_> = fps.iter().map(|fp| Word::from_u128(fp.value())).collect();
            t.query_batch(&qs, k, &mut outs)
        });
        for out in &mut outs {
            out.sort_unstable();
        }
        Ok(outs)
    }
}

/// A merge of the last segments, planned under a read lock and built
/// without one (see [`TableIndex::merge_plan`]).
#[derive(Debug)]
pub struct MergePlan(PlanInner);

#[derive(Debug)]
enum PlanInner {
    B64(Plan<u64>),
    B128(Plan<u128>),
}

#[derive(Debug)]
struct Plan<W: Word> {
    layout: Arc<Layout>,
    start: usize,
    parts: Vec<Live<W>>,
}

/// A built merge, to hand to [`TableIndex::apply_merge`].
#[derive(Debug)]
pub struct Merged(MergedInner);

#[derive(Debug)]
enum MergedInner {
    B64(Plan<u64>, Segment<u64>),
    B128(Plan<u128>, Segment<u128>),
}

impl MergePlan {
    /// Entries the merged segment will hold.
    pub fn entries(&self) -> usize {
        match &self.0 {
            PlanInner::B64(p) => p.parts.iter().map(Live::len).sum(),
            PlanInner::B128(p) => p.parts.iter().map(Live::len).sum(),
        }
    }

    /// Builds the merged segment (the slow part: sorting every table).
    ///
    /// # Errors
    /// Only what building any segment can fail with.
    pub fn build(self) -> Result<Merged> {
        fn merge<W: Word>(p: &Plan<W>) -> Result<Segment<W>> {
            let all: Vec<(u64, W)> = p.parts.iter().flat_map(Live::live_entries).collect();
            Segment::build(p.layout.clone(), all)
        }
        Ok(Merged(match self.0 {
            PlanInner::B64(p) => {
                let s = merge(&p)?;
                MergedInner::B64(p, s)
            }
            PlanInner::B128(p) => {
                let s = merge(&p)?;
                MergedInner::B128(p, s)
            }
        }))
    }
}

#[derive(Clone, Debug)]
struct Live<W: Word> {
    seg: Arc<Segment<W>>,
    /// Removed ids (all their entries in this segment are dead).
    dead: HashSet<u64>,
    dead_entries: usize,
}

impl<W: Word> Live<W> {
    fn new(seg: Arc<Segment<W>>) -> Self {
        Live { seg, dead: HashSet::new(), dead_entries: 0 }
    }

    fn live_entries(&self) -> impl Iterator<Item = (u64, W)> + '_ {
        self.seg.iter().filter(|(id, _)| !self.dead.contains(id))
    }

    fn len(&self) -> usize {
        self.seg.entries() - self.dead_entries
    }
}

#[derive(Clone, Debug)]
struct Tables<W: Word> {
    layout: Arc<Layout>,
    segments: Vec<Live<W>>,
    buffer: Vec<(u64, W)>,
    buffer_len: usize,
    len: usize,
    /// When set, new segments are only appended; the owner merges them
    /// with [`TableIndex::merge_plan`] (off any lock) and
    /// [`TableIndex::apply_merge`].
    deferred: bool,
}

impl<W: Word> Tables<W> {
    fn new(layout: Arc<Layout>, buffer_len: usize) -> Self {
        Tables { layout, segments: Vec::new(), buffer: Vec::new(), buffer_len, len: 0, deferred: false }
    }

    fn with_segment(seg: Segment<W>, buffer_len: usize) -> Self {
        let mut t = Tables::new(seg.layout.clone(), buffer_len);
        t.len = seg.entries();
        t.segments.push(Live::new(Arc::new(seg)));
        t
    }

    fn insert(&mut self, id: u64, w: W) -> Result<()> {
        self.buffer.push((id, w));
        self.len += 1;
        if self.buffer.len() >= self.buffer_len {
            let entries = std::mem::take(&mut self.buffer);
            self.len -= entries.len();
            self.add_segment(entries)?;
        }
        Ok(())
    }

    fn add_segment(&mut self, entries: Vec<(u64, W)>) -> Result<()> {
        if entries.is_empty() {
            return Ok(());
        }
        self.len += entries.len();
        self.segments.push(Live::new(Arc::new(Segment::build(self.layout.clone(), entries)?)));
        while !self.deferred && self.segments.len() >= 2 {
            let n = self.segments.len();
            if self.segments[n - 2].len() > 2 * self.segments[n - 1].len() {
                break;
            }
            let b = self.segments.pop().expect("two segments");
            let a = self.segments.pop().expect("two segments");
            let merged: Vec<(u64, W)> = a.live_entries().chain(b.live_entries()).collect();
            self.segments.push(Live::new(Arc::new(Segment::build(self.layout.clone(), merged)?)));
        }
        Ok(())
    }

    /// The first segment of the merge the cascade rule asks for (the
    /// segments from it to the last), if any: merge the last two while the
    /// one before is at most twice the size of what follows it.
    fn merge_start(&self) -> Option<usize> {
        let n = self.segments.len();
        let mut acc = self.segments.last()?.len();
        let mut j = n - 1;
        while j >= 1 && self.segments[j - 1].len() <= 2 * acc {
            acc += self.segments[j - 1].len();
            j -= 1;
        }
        (j < n - 1).then_some(j)
    }

    fn plan(&self) -> Option<Plan<W>> {
        let start = self.merge_start()?;
        Some(Plan { layout: self.layout.clone(), start, parts: self.segments[start..].to_vec() })
    }

    /// Puts a merged segment in place of the segments it was made from, if
    /// they are still there unchanged (segments appended since stay after
    /// it); else drops it and returns false.
    fn apply(&mut self, start: usize, parts: &[Live<W>], merged: Segment<W>) -> bool {
        let end = start + parts.len();
        let same = self.segments.len() >= end
            && self.segments[start..end]
                .iter()
                .zip(parts)
                .all(|(a, b)| Arc::ptr_eq(&a.seg, &b.seg) && a.dead == b.dead);
        if same {
            self.segments.splice(start..end, [Live::new(Arc::new(merged))]);
        }
        same
    }

    fn compact(&mut self) -> Result<()> {
        let needs = !self.buffer.is_empty()
            || self.segments.len() > 1
            || self.segments.iter().any(|l| !l.dead.is_empty());
        if !needs {
            return Ok(());
        }
        let all = self.entries();
        self.segments.clear();
        self.buffer.clear();
        self.len = 0;
        self.add_segment(all)
    }

    fn entries(&self) -> Vec<(u64, W)> {
        let mut all: Vec<(u64, W)> = Vec::with_capacity(self.len);
        for l in &self.segments {
            all.extend(l.live_entries());
        }
        all.extend_from_slice(&self.buffer);
        all
    }

    /// Removes the entries of `id`; with its fingerprint `known`, each
    /// segment is searched by fingerprint (a binary search) instead of
    /// read through.
    fn remove(&mut self, id: u64, known: Option<W>) -> usize {
        let before = self.buffer.len();
        self.buffer.retain(|e| e.0 != id || known.is_some_and(|w| e.1 != w));
        let mut removed = before - self.buffer.len();
        let mut rebuild = Vec::new();
        for (i, l) in self.segments.iter_mut().enumerate() {
            if l.dead.contains(&id) {
                continue;
            }
            let count = match known {
                Some(w) => l.seg.find_row(w).map_or(0, |row| l.seg.row_ids(row).filter(|&x| x == id).count()),
                None => {
                    let ids = l.seg.ids.bytes();
                    (0..ids.len() / 8).filter(|&i| read_u64(ids, i) == id).count()
                }
            };
            if count > 0 {
                l.dead.insert(id);
                l.dead_entries += count;
                removed += count;
                if l.dead_entries * 4 > l.seg.entries() {
                    rebuild.push(i);
                }
            }
        }
        for i in rebuild {
            let live: Vec<(u64, W)> = self.segments[i].live_entries().collect();
            // A rebuild of entries that were valid cannot fail.
            if let Ok(seg) = Segment::build(self.layout.clone(), live) {
                self.segments[i] = Live::new(Arc::new(seg));
            }
        }
        self.len -= removed;
        removed
    }

    fn query(&self, q: W, k: u32, out: &mut Vec<Match>) {
        for l in &self.segments {
            if l.dead.is_empty() {
                l.seg.query(q, k, |id, distance| out.push(Match { distance, id }));
            } else {
                l.seg.query(q, k, |id, distance| {
                    if !l.dead.contains(&id) {
                        out.push(Match { distance, id })
                    }
                });
            }
        }
        for &(id, w) in &self.buffer {
            let distance = w.dist(q);
            if distance <= k {
                out.push(Match { distance, id });
            }
        }
    }

    /// [`query`](Self::query) for each of `qs`, the segments' reads
    /// overlapped across queries; `outs[i]` gets query `i`'s matches.
    fn query_batch(&self, qs: &[W], k: u32, outs: &mut [Vec<Match>]) {
        for l in &self.segments {
            l.seg.query_batch(qs, k, |i, id, distance| {
                if l.dead.is_empty() || !l.dead.contains(&id) {
                    outs[i].push(Match { distance, id });
                }
            });
        }
        for &(id, w) in &self.buffer {
            for (out, &q) in outs.iter_mut().zip(qs) {
                let distance = w.dist(q);
                if distance <= k {
                    out.push(Match { distance, id });
                }
            }
        }
    }

    fn bytes(&self) -> usize {
        self.segments.iter().map(|l| l.seg.bytes() + l.dead.len() * 16).sum::<usize>()
            + self.buffer.capacity() * std::mem::size_of::<(u64, W)>()
    }

    fn stats(&self) -> IndexStats {
        let f = self.layout.spec.bits;
        let mut tables: Vec<TableStats> = self
            .layout
            .tables
            .iter()
            .map(|p| TableStats {
                lead_blocks: p.lead.clone(),
                key_bits: p.key_bits,
                ..TableStats::default()
            })
            .collect();
        let mut distinct = 0;
        for l in &self.segments {
            distinct += l.seg.rows;
            for (t, plan) in self.layout.tables.iter().enumerate() {
                let td = &l.seg.tables[t];
                tables[t].dir_bits = td.dir_bits;
                tables[t].entry_bytes = td.entry_bytes;
                let shift = f - plan.key_bits;
                let mut keys: Vec<W> = l.seg.words().map(|w| plan.permute(w).shr(shift)).collect();
                keys.sort_unstable();
                let mut i = 0;
                while i < keys.len() {
                    let mut j = i + 1;
                    while j < keys.len() && keys[j] == keys[i] {
                        j += 1;
                    }
                    tables[t].runs.push(j - i);
                    i = j;
                }
            }
        }
        let mut warnings = Vec::new();
        for (t, ts) in tables.iter_mut().enumerate() {
            let mut runs = std::mem::take(&mut ts.runs);
            runs.sort_unstable();
            let pct =
                |p: f64| runs.get(((runs.len() as f64 - 1.0) * p).round() as usize).copied().unwrap_or(0);
            ts.run_p50 = pct(0.5);
            ts.run_p90 = pct(0.9);
            ts.run_p99 = pct(0.99);
            ts.run_max = runs.last().copied().unwrap_or(0);
            ts.expected_run = distinct as f64 / 2f64.powi(ts.key_bits as i32);
            let threshold = (ts.expected_run * 50.0).max(1000.0);
            if ts.run_max as f64 > threshold {
                warnings.push(format!(
                    "table {t} (blocks {:?}): a key run of {} fingerprints, expected about {:.2}: the \
                     fingerprints are skewed (many near-identical documents, or few features per \
                     document); queries near them read the whole run",
                    ts.lead_blocks, ts.run_max, ts.expected_run
                ));
            }
        }
        let entries = self.len;
        if distinct > 0 && entries >= 2 * distinct && entries > 1000 {
            warnings.push(format!(
                "{entries} entries share {distinct} distinct fingerprints: identical documents are \
                 stored once per id"
            ));
        }
        let bytes = self.bytes();
        IndexStats {
            bits: f,
            entries,
            distinct,
            segments: self.segments.len(),
            buffered: self.buffer.len(),
            removed_pending: self.segments.iter().map(|l| l.dead_entries).sum(),
            bytes,
            bytes_human: human_bytes(bytes as u64),
            bytes_per_entry: if entries == 0 { 0.0 } else { bytes as f64 / entries as f64 },
            tables,
            warnings,
            ..IndexStats::default()
        }
    }
}

/// What [`TableIndex::stats`] reports.
#[derive(Clone, Debug, Default, Serialize)]
pub struct IndexStats {
    /// Fingerprint width.
    pub bits: u32,
    /// The layout.
    pub layout: LayoutSpec,
    /// The layout in words.
    pub layout_text: String,
    /// Why the layout was chosen.
    pub reason: String,
    /// Live entries.
    pub entries: usize,
    /// Distinct fingerprints in the segments.
    pub distinct: usize,
    /// Immutable segments.
    pub segments: usize,
    /// Entries in the mutable buffer.
    pub buffered: usize,
    /// Removed entries not yet compacted away.
    pub removed_pending: usize,
    /// Bytes of tables, ids and buffer.
    pub bytes: usize,
    /// `bytes`, readable.
    pub bytes_human: String,
    /// `bytes / entries`.
    pub bytes_per_entry: f64,
    /// Per table.
    pub tables: Vec<TableStats>,
    /// Skew and duplication warnings.
    pub warnings: Vec<String>,
}

impl Default for LayoutSpec {
    fn default() -> Self {
        LayoutSpec { bits: 64, k: 3, blocks: 4 }
    }
}

/// One table's shape and key-run statistics (a key run is the set of
/// distinct fingerprints sharing the table's key: what one probe reads).
#[derive(Clone, Debug, Default, Serialize)]
pub struct TableStats {
    /// The blocks that lead.
    pub lead_blocks: Vec<u32>,
    /// Key length.
    pub key_bits: u32,
    /// Directory bits (of the last segment).
    pub dir_bits: u32,
    /// Bytes per stored entry (of the last segment).
    pub entry_bytes: usize,
    /// Expected run length for uniform fingerprints.
    pub expected_run: f64,
    /// Median run length.
    pub run_p50: usize,
    /// 90th percentile.
    pub run_p90: usize,
    /// 99th percentile.
    pub run_p99: usize,
    /// Longest run.
    pub run_max: usize,
    #[serde(skip)]
    runs: Vec<usize>,
}
