//! [`Engine`]: a [`Store`] plus the in-memory index over its fingerprints.
//!
//! `types.rs` (requests and answers), `state.rs` (the keyed index),
//! `commit.rs` (group commit, loads, deletes), `merger.rs` (background
//! merges), `snapshot.rs` (open from a snapshot or rebuild; write one).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use neardup::config::lsh::Threshold;
use neardup::minhash::{Banding, Method};
use neardup::{Bits, Fingerprint, PipelineConfig, Radius, Sketch, FORMAT_VERSION};

use crate::error::StoreError;
use crate::record::{DocRecord, StoreMeta};
use crate::{Result, Store};

use commit::{Job, Slot};
use disk::DiskIndex;
pub use disk::{DiskCounters, DiskOptions, DiskStats};
use merger::Merger;
use snapshot::{load_snapshot, rebuild};
use state::State;

mod commit;
pub(crate) mod disk;
mod merger;
mod snapshot;
mod state;
mod types;

pub use types::*;

/// A store and the index over it. Reads (search, check, get) run
/// concurrently; writes are serialized, and a write returns only after the
/// store committed it.
pub struct Engine<S: Store> {
    store: S,
    config: PipelineConfig,
    /// The rule requests without a k get (SimHash).
    radius: Radius,
    /// The signatures' length, banding and threshold (MinHash).
    lsh: Option<Lsh>,
    state: Arc<RwLock<State>>,
    /// Held by the writer applying a group of queued jobs.
    writer: Mutex<()>,
    /// Writes waiting for the next group commit.
    queue: Mutex<Vec<(Job, Arc<Slot>)>>,
    /// Commits of documents so far.
    commits: AtomicU64,
    /// Wakes the thread that merges index segments.
    merger: Merger,
    /// The store's generation the index holds (see [`Store::generation`]).
    generation: AtomicU64,
    /// A write failed at the disk: before trusting the index again, check
    /// the store's generation (a commit whose acknowledgement failed may
    /// have reached the disk after all).
    suspect: AtomicBool,
    /// Writes that failed at the disk, and index rebuilds they caused.
    write_failures: AtomicU64,
    rebuilds: AtomicU64,
    /// The on-disk index's directory and options, when it has one.
    disk: Option<(PathBuf, DiskOptions)>,
    /// Why the on-disk index was rebuilt while open, if it was.
    healed: Mutex<Option<String>>,
    /// An on-disk index's lookup threads: a write's checks against the
    /// stored documents run here, more threads than cores, since a lookup
    /// that misses the page cache waits on the disk (`None`: rayon's pool).
    lookups: Option<rayon::ThreadPool>,
}

/// Lookup threads a core for an on-disk index ([`Engine::open_dir`]): at
/// 5·10^7 documents, twice the page cache, batched check-and-insert went
/// from 2 disk reads in flight to 32 (8 a core measured 37–44k inserts/s,
/// 16 a core 46–51k/s).
const LOOKUPS_PER_CORE: usize = 16;

/// At most this many lookup threads whatever the cores (a disk queue
/// deeper than this gains nothing; idle threads still cost their stacks).
const MAX_LOOKUPS: usize = 256;

impl<S: Store> Drop for Engine<S> {
    /// An on-disk index writes its memory part as a segment on a clean
    /// close, so that the next open reads nothing back from the store (a
    /// failure only leaves it to be read back).
    fn drop(&mut self) {
        if let Ok(mut state) = self.state.write() {
            if let Some(d) = state.disk_mut() {
                let _ = d.flush_all();
            }
        }
    }
}

impl<S: Store> std::fmt::Debug for Engine<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine").field("pipeline", &format!("{:016x}", self.config.id())).finish()
    }
}

/// Refuses a store made with another pipeline or format; records them in a
/// new one.
fn check_meta(store: &dyn Store, config: &PipelineConfig) -> Result<()> {
    match store.meta()? {
        Some(m) if m.format_version != FORMAT_VERSION => {
            Err(StoreError::FormatVersion { stored: m.format_version, current: FORMAT_VERSION })
        }
        Some(m) if m.config.method != config.method => {
            Err(StoreError::MethodMismatch { stored: m.config.method, wanted: config.method })
        }
        Some(m) if !m.config.same_fingerprints(config) => Err(StoreError::ConfigMismatch {
            stored: neardup::presets::label(&m.config),
            wanted: neardup::presets::label(config),
        }),
        Some(_) => Ok(()),
        None => store.set_meta(&StoreMeta { format_version: FORMAT_VERSION, config: config.clone() }),
    }
}

/// Index tables merge their segments on the merger thread, not inline.
fn defer_merges(state: &mut State) {
    if let Some(docs) = state.simhash_mut() {
        for i in 0.. {
            match docs.index_mut(i) {
                Some(t) => t.set_deferred_merges(true),
                None => break,
            }
        }
    }
}

/// A MinHash store's rule: signatures of `permutations` values, banded,
/// near at `threshold` or above.
#[derive(Clone, Copy, Debug)]
pub(super) struct Lsh {
    pub(super) permutations: usize,
    pub(super) banding: Banding,
    pub(super) threshold: f64,
}

impl Lsh {
    /// The rule of a MinHash pipeline; `None` for SimHash.
    fn of(config: &PipelineConfig) -> Result<Option<Lsh>> {
        if config.method != Method::Minhash {
            return Ok(None);
        }
        let permutations = config.minhash.clone().unwrap_or_default().permutations;
        let lsh = config.lsh.clone().unwrap_or_default();
        let banding = lsh.banding(permutations).map_err(StoreError::Invalid)?;
        Ok(Some(Lsh { permutations, banding, threshold: lsh.threshold }))
    }
}

impl<S: Store> Engine<S> {
    /// Opens an engine over `store` for sketches of `config`. A SimHash
    /// engine answers requests without a k by `radius` (usually
    /// `config.radius()`, the pipeline's rule; [`Radius::fixed`] for one
    /// k), with index tables for each pass of its plan (other radii are
    /// answered exactly, larger ones by a scan); a MinHash engine bands the
    /// signatures as the pipeline says and answers by its threshold
    /// (`radius` does not apply). A new store records `config`; a store
    /// made with another pipeline (or method) or fingerprint format is
    /// refused.
    pub fn open(store: S, config: PipelineConfig, radius: Radius) -> Result<Engine<S>> {
        check_meta(&store, &config)?;
        let state = rebuild(&store, &config, &radius)?;
        Engine::with_state(store, config, radius, state)
    }

    /// Like [`open`](Self::open), but takes the index from the snapshot
    /// file at `snapshot` when it holds exactly the store's current state
    /// (its mark in the store names the store's generation and the file's
    /// checksum, and the file's pipeline and radius are the wanted ones);
    /// otherwise rebuilds it from the store, saying why in the returned
    /// [`IndexSource`].
    ///
    /// The snapshot holds pass 0's tables and the feature counts; the
    /// tables of later passes are built from them on open. `radius: None`
    /// takes the rule the snapshot was written for (for tools that only
    /// read or bulk-load), or the pipeline's when it rebuilds.
    pub fn open_with_snapshot(
        store: S,
        config: PipelineConfig,
        radius: Option<Radius>,
        snapshot: &Path,
    ) -> Result<(Engine<S>, IndexSource)> {
        check_meta(&store, &config)?;
        let loaded = if config.method == Method::Minhash {
            Err("MinHash data directories rebuild their index on open".to_owned())
        } else {
            load_snapshot(&store, &config, radius.as_ref(), snapshot)?
        };
        let (state, radius, source) = match loaded {
            Ok((state, radius)) => (state, radius, IndexSource::Snapshot),
            Err(why) => {
                let radius = radius.unwrap_or_else(|| config.radius());
                (rebuild(&store, &config, &radius)?, radius, IndexSource::Rebuilt { why })
            }
        };
        Ok((Engine::with_state(store, config, radius, state)?, source))
    }

    fn with_state(store: S, config: PipelineConfig, radius: Radius, mut state: State) -> Result<Engine<S>> {
        defer_merges(&mut state);
        let lsh = Lsh::of(&config)?;
        let generation = AtomicU64::new(store.generation()?);
        let state = Arc::new(RwLock::new(state));
        Ok(Engine {
            store,
            config,
            radius,
            lsh,
            merger: Merger::start(state.clone()),
            state,
            writer: Mutex::new(()),
            queue: Mutex::default(),
            commits: AtomicU64::new(0),
            generation,
            suspect: AtomicBool::new(false),
            write_failures: AtomicU64::new(0),
            rebuilds: AtomicU64::new(0),
            disk: None,
            healed: Mutex::new(None),
            lookups: None,
        })
    }

    /// Opens an engine over `store` whose index lives on disk in `dir`
    /// (segment files and a manifest, see [`DiskOptions`]): nothing
    /// proportional to the store is read, but the documents written after
    /// the index's last flush (at most a flush or two) and the tombstones.
    /// An index that is missing, stale or damaged is rebuilt from the
    /// store, saying why in the returned [`IndexSource`]. `radius: None`
    /// takes the pipeline's rule.
    ///
    /// # Errors
    ///
    /// The store's ([`Engine::open`]'s), an index directory written by a
    /// newer neardup, or an I/O error writing the index.
    pub fn open_dir(
        store: S,
        config: PipelineConfig,
        radius: Option<Radius>,
        dir: &Path,
        options: DiskOptions,
    ) -> Result<(Engine<S>, IndexSource)> {
        check_meta(&store, &config)?;
        let radius = radius.unwrap_or_else(|| config.radius());
        let (disk, why) = DiskIndex::open(dir, &store, &config, &radius, options)?;
        let source = match why {
            Some(why) => IndexSource::Rebuilt { why },
            None => {
                IndexSource::Segments { segments: disk.segment_count(), in_memory: disk.stats().in_memory }
            }
        };
        let mut engine = Engine::with_state(store, config, radius, State::Disk(Box::new(disk)))?;
        engine.disk = Some((dir.to_path_buf(), options));
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        engine.lookups = rayon::ThreadPoolBuilder::new()
            .num_threads((cores * LOOKUPS_PER_CORE).min(MAX_LOOKUPS))
            .thread_name(|i| format!("neardup-lookup-{i}"))
            .build()
            .ok();
        engine.merger.wake();
        Ok((engine, source))
    }

    /// Compacts the store (see [`Store::compact`]), with writes held, and
    /// merges the on-disk index's segments as far as its memory allows:
    /// the smallest together while they fit one merge, and any segment
    /// with tombstones rewritten without them.
    ///
    /// # Errors
    ///
    /// The store's.
    pub fn compact(&self) -> Result<()> {
        let _writer = self.writer.lock().expect("lock");
        self.store.compact()?;
        if let Some(d) = self.state.write().expect("lock").disk_mut() {
            d.flush_all()?;
        }
        if self.state.read().expect("lock").disk().is_some() {
            disk::maintain(&self.state, &merger::NEVER, disk::Merges::All)?;
        } else {
            merger::merge_due(&self.state, &merger::NEVER);
        }
        Ok(())
    }

    /// The on-disk index's segments, pending work and counters (`None`
    /// for an in-memory index).
    pub fn disk_stats(&self) -> Option<DiskStats> {
        self.state.read().expect("lock").disk().map(DiskIndex::stats)
    }

    /// Called with the writer lock held after a store write's result:
    /// counts a failure at the disk (and marks the index suspect), or, for
    /// a success that moved the generation by `moved`, checks a suspect
    /// index against the store and rebuilds it from the store when the
    /// store holds more than the index knows. Returns whether it rebuilt
    /// (the new state then already holds the write).
    fn after_write<T>(&self, r: &Result<T>, moved: u64) -> Result<bool> {
        match r {
            Err(e) => {
                if e.write_failure().is_some() {
                    self.write_failures.fetch_add(1, Ordering::Relaxed);
                    self.suspect.store(true, Ordering::Release);
                }
                Ok(false)
            }
            Ok(_) => {
                let expected = self.generation.load(Ordering::Acquire) + moved;
                if !self.suspect.swap(false, Ordering::AcqRel) {
                    self.generation.store(expected, Ordering::Release);
                    return Ok(false);
                }
                let actual = self.store.generation()?;
                self.generation.store(actual, Ordering::Release);
                if actual == expected {
                    return Ok(false);
                }
                let mut fresh = self.fresh_state()?;
                defer_merges(&mut fresh);
                *self.state.write().expect("lock") = fresh;
                self.rebuilds.fetch_add(1, Ordering::Relaxed);
                Ok(true)
            }
        }
    }

    /// Rebuilds an on-disk index whose segment failed its checksum (found
    /// on the merger thread) before it answers again.
    fn heal(&self) -> Result<()> {
        let damaged = self.state.read().expect("lock").disk().and_then(|d| d.damaged().map(str::to_owned));
        let Some(why) = damaged else { return Ok(()) };
        let _writer = self.writer.lock().expect("lock");
        if self.state.read().expect("lock").disk().is_some_and(|d| d.damaged().is_none()) {
            return Ok(()); // healed meanwhile
        }
        if let Some((dir, _)) = &self.disk {
            // The manifest goes, so that the reopen rebuilds.
            let _ = std::fs::remove_file(dir.join(disk::MANIFEST));
        }
        let fresh = self.fresh_state()?;
        *self.state.write().expect("lock") = fresh;
        self.rebuilds.fetch_add(1, Ordering::Relaxed);
        *self.healed.lock().expect("lock") = Some(why);
        self.merger.wake();
        Ok(())
    }

    /// Why the on-disk index was last rebuilt while open (a segment that
    /// failed its checksum), if it was.
    pub fn healed(&self) -> Option<String> {
        self.healed.lock().expect("lock").clone()
    }

    /// The index rebuilt from the store (an on-disk one reopened: it
    /// catches up with the store by sequence number).
    fn fresh_state(&self) -> Result<State> {
        match &self.disk {
            Some((dir, options)) => {
                let (d, _) = DiskIndex::open(dir, &self.store, &self.config, &self.radius, *options)?;
                Ok(State::Disk(Box::new(d)))
            }
            None => rebuild(&self.store, &self.config, &self.radius),
        }
    }

    /// Why writes fail now, if they do (the store's last write failed at
    /// the disk and none has succeeded since); first tries to make the
    /// store writable again ([`Store::recover`]), so that a health check
    /// sees a disk that was freed while no write came.
    pub fn write_health(&self) -> Option<(crate::WriteFailure, String)> {
        if self.store.write_failing().is_some() {
            let _ = self.store.recover();
        }
        self.store.write_failing()
    }

    /// Writes that failed at the disk since the engine opened, and index
    /// rebuilds after them (see [`Engine::write_health`]).
    pub fn fault_counts(&self) -> (u64, u64) {
        (self.write_failures.load(Ordering::Relaxed), self.rebuilds.load(Ordering::Relaxed))
    }

    /// The pipeline its fingerprints come from.
    pub fn config(&self) -> &PipelineConfig {
        &self.config
    }

    /// The rule SimHash requests without a k get.
    pub fn radius(&self) -> &Radius {
        &self.radius
    }

    /// Which method the stored sketches are of.
    pub fn method(&self) -> Method {
        self.config.method
    }

    /// The rule requests without a k or threshold get, in words: the
    /// radius (SimHash), or the threshold and banding (MinHash).
    pub fn rule(&self) -> String {
        self.rule_of(Near::Rule)
    }

    /// The rule a request was answered by, in words.
    pub fn rule_of(&self, near: Near) -> String {
        match (near, &self.lsh) {
            (Near::Within(k), _) => format!("k = {k}"),
            (_, Some(l)) => l.banding.rule(self.threshold(near).unwrap_or(l.threshold), l.permutations),
            (Near::AtLeast(t), None) => format!("Jaccard ≥ {t}"),
            (Near::Rule, None) => self.radius.to_string(),
        }
    }

    /// The Jaccard threshold a MinHash request is answered at: its own, or
    /// the pipeline's; `None` for SimHash.
    pub fn threshold(&self, near: Near) -> Option<f64> {
        self.lsh.map(|l| match near {
            Near::AtLeast(t) => t,
            _ => l.threshold,
        })
    }

    /// The store.
    pub fn store(&self) -> &S {
        &self.store
    }

    fn bits(&self) -> Bits {
        self.config.bits
    }

    /// Checks that a request's sketch and rule are of this store's method
    /// and fit it.
    fn check(&self, sketch: &Sketch, near: Near) -> Result<()> {
        self.check_sketch(sketch)?;
        self.check_near(near)
    }

    /// Checks that a sketch is of this store's method and width (every
    /// write and search does; front ends call it to name the record).
    ///
    /// # Errors
    ///
    /// [`StoreError::Invalid`] saying what to send instead.
    pub fn check_sketch(&self, sketch: &Sketch) -> Result<()> {
        match (sketch, &self.lsh) {
            (Sketch::Fingerprint(fp), None) if fp.bits() != self.bits() => {
                return Err(StoreError::Invalid(format!(
                    "a {}-bit fingerprint, but this store holds {}-bit ones",
                    fp.bits(),
                    self.bits()
                )))
            }
            (Sketch::Signature(s), Some(l)) if s.len() != l.permutations => {
                return Err(StoreError::Invalid(format!(
                    "a signature of {} values, but this store holds signatures of {}",
                    s.len(),
                    l.permutations
                )))
            }
            (Sketch::Fingerprint(_), None) | (Sketch::Signature(_), Some(_)) => {}
            (Sketch::Signature(_), None) => {
                return Err(StoreError::Invalid(
                    "a MinHash signature, but this store holds SimHash fingerprints: send the text, or its fingerprint"
                        .into(),
                ))
            }
            (Sketch::Fingerprint(_), Some(_)) => {
                return Err(StoreError::Invalid(
                    "a SimHash fingerprint, but this store holds MinHash signatures: send the text, or its signature"
                        .into(),
                ))
            }
        }
        Ok(())
    }

    /// Checks that a rule is of this store's method: a k (at most the
    /// bits) for SimHash, a threshold in (0, 1] for MinHash (every write
    /// and search does; front ends call it to answer before reading).
    ///
    /// # Errors
    ///
    /// [`StoreError::Invalid`] saying what to give instead.
    pub fn check_near(&self, near: Near) -> Result<()> {
        match (near, &self.lsh) {
            (Near::Within(k), None) => Radius::fixed(k).validate(self.bits()).map_err(StoreError::Invalid),
            (Near::Within(_), Some(_)) => Err(StoreError::Invalid(
                "k is a SimHash radius, but this store holds MinHash signatures: give a threshold instead"
                    .into(),
            )),
            (Near::AtLeast(_), None) => Err(StoreError::Invalid(
                "a threshold is for MinHash stores, but this one holds SimHash fingerprints: give k instead"
                    .into(),
            )),
            (Near::AtLeast(t), Some(_)) if Threshold::check(t).is_err() => {
                Err(StoreError::Invalid(format!("the threshold must be in (0, 1], not {t}")))
            }
            _ => Ok(()),
        }
    }

    /// The stored documents near `sketch`, nearest first, at most `limit`:
    /// within `k` bits ([`Near::Within`]), at a Jaccard estimate of at
    /// least `t` among those sharing a band ([`Near::AtLeast`]), or by the
    /// engine's [rule](Self::rule) for a document of `features` features
    /// (unknown: a long document). `None` and `Some(k)` convert to the
    /// rule and `Near::Within(k)`.
    pub fn search(
        &self,
        sketch: impl Into<Sketch>,
        near: impl Into<Near>,
        features: Option<u32>,
        limit: usize,
    ) -> Result<Vec<Found>> {
        let (sketch, near) = (sketch.into(), near.into());
        self.check(&sketch, near)?;
        self.heal()?;
        let state = self.state.read().expect("lock");
        let mut found = self.near_in(&state, &sketch, near, features)?;
        found.truncate(limit);
        Ok(found)
    }

    /// [`search`](Self::search) for each of `queries` (sketch, feature
    /// count), in order, on every core — and, for an on-disk index, on
    /// its lookup threads, more than the cores, so that searches waiting
    /// on the disk overlap.
    pub fn search_many(
        &self,
        queries: &[(&Sketch, Option<u32>)],
        near: Near,
        limit: usize,
    ) -> Vec<Result<Vec<Found>>> {
        use rayon::prelude::*;
        let run = || queries.par_iter().map(|&(s, f)| self.search(s.clone(), near, f, limit)).collect();
        self.on_lookup_threads(run)
    }

    /// Runs `f` (parallel lookups) on the on-disk index's lookup threads,
    /// or where it is called.
    fn on_lookup_threads<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        match &self.lookups {
            Some(pool) => pool.install(f),
            None => f(),
        }
    }

    fn near_in(
        &self,
        state: &State,
        sketch: &Sketch,
        near: Near,
        features: Option<u32>,
    ) -> Result<Vec<Found>> {
        state.near(&self.store, sketch, near, features, &self.radius, self.threshold(near).unwrap_or(1.0))
    }

    /// The stored document with this id.
    pub fn get(&self, id: &str) -> Result<Option<DocRecord>> {
        self.store.get(id)
    }

    /// How many documents are stored.
    pub fn len(&self) -> usize {
        self.state.read().expect("lock").len()
    }

    /// True when nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Sizes and settings.
    pub fn stats(&self) -> EngineStats {
        let state = self.state.read().expect("lock");
        let simhash = state.simhash();
        EngineStats {
            documents: state.len() as u64,
            method: self.method(),
            bits: (self.lsh.is_none()).then(|| self.bits().get()),
            table_k: simhash
                .map(|d| d.index().layout().k)
                .or_else(|| state.disk().and_then(DiskIndex::table_k)),
            permutations: self.lsh.map(|l| l.permutations),
            radius: self.rule(),
            index_bytes: state.memory_bytes() as u64,
            disk_bytes: self.store.disk_bytes(),
            pipeline: format!("{:016x}", self.config.id()),
            commits: self.commits.load(Ordering::Relaxed),
            segments: match state.disk() {
                Some(d) => d.segment_count() as u64,
                None => simhash.map_or(0, |d| d.indexes().map(|t| t.stats().segments as u64).sum()),
            },
        }
    }

    /// Every stored (id, sketch), by id, for checks against a linear scan.
    pub fn sketches(&self) -> Vec<(String, Sketch)> {
        let held = self.state.read().expect("lock").sketches();
        let mut v = match held {
            Some(v) => v,
            // On disk: the store's (in id order already).
            None => {
                let mut v = Vec::new();
                let _ = self.store.for_each_sketch(&mut |id, s, _| {
                    v.push((id.to_owned(), s));
                    Ok(())
                });
                v
            }
        };
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }

    /// Every stored (id, fingerprint), by id (none in a MinHash store).
    pub fn fingerprints(&self) -> Vec<(String, Fingerprint)> {
        self.sketches().into_iter().filter_map(|(id, s)| Some((id, s.fingerprint()?))).collect()
    }
}
