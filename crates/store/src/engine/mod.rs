//! [`Engine`]: a [`Store`] plus the in-memory index over its fingerprints.
//!
//! `types.rs` (requests and answers), `state.rs` (the keyed index),
//! `commit.rs` (group commit, loads, deletes), `merger.rs` (background
//! merges), `snapshot.rs` (open from a snapshot or rebuild; write one).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex, RwLock};
use std::time::{SystemTime, UNIX_EPOCH};

use std::path::Path;

use neardup::dedup::{Plan, UNKNOWN_FEATURES};
use neardup::index::file::{IndexFile, Names as FileNames};
use neardup::index::{KeyedIndex, TableIndex, TableIndexBuilder};
use neardup::meta::IndexMeta;
use neardup::{Bits, Fingerprint, PipelineConfig, Radius, FORMAT_VERSION};
use serde::Serialize;

use crate::error::StoreError;
use crate::pending::Pending;
use crate::record::{check_id, DocRecord, SnapshotMark, StoreMeta};
use crate::{Result, Store};

mod commit;
mod merger;
mod snapshot;
mod state;
mod types;

#[allow(unused_imports)]
use commit::*;
#[allow(unused_imports)]
use merger::*;
#[allow(unused_imports)]
use snapshot::*;
#[allow(unused_imports)]
use state::*;
pub use types::*;

/// A store and the index over it. Reads (search, check, get) run
/// concurrently; writes are serialized, and a write returns only after the
/// store committed it.
pub struct Engine<S: Store> {
    store: S,
    config: PipelineConfig,
    /// The rule requests without a k get.
    radius: Radius,
    state: Arc<RwLock<State>>,
    /// Held by the writer applying a group of queued jobs.
    writer: Mutex<()>,
    /// Writes waiting for the next group commit.
    queue: Mutex<Vec<(Job, Arc<Slot>)>>,
    /// Commits of documents so far.
    commits: AtomicU64,
    /// Wakes the thread that merges index segments.
    merger: Merger,
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
        Some(m) if !m.config.same_fingerprints(config) => Err(StoreError::ConfigMismatch {
            stored: format!("{:016x}", m.config.id()),
            wanted: format!("{:016x}", config.id()),
        }),
        Some(_) => Ok(()),
        None => store.set_meta(&StoreMeta { format_version: FORMAT_VERSION, config: config.clone() }),
    }
}

impl<S: Store> Engine<S> {
    /// Opens an engine over `store` for fingerprints of `config`, answering
    /// requests without a k by `radius` (usually `config.radius()`, the
    /// pipeline's rule; [`Radius::fixed`] for one k), with index tables for
    /// each pass of its plan (other radii are answered exactly, larger ones
    /// by a scan). A new store records `config`; a store made with another
    /// pipeline or fingerprint format is refused.
    pub fn open(store: S, config: PipelineConfig, radius: Radius) -> Result<Engine<S>> {
        check_meta(&store, &config)?;
        let state = rebuild(&store, &config, &radius)?;
        Ok(Engine::with_state(store, config, radius, state))
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
        let (state, radius, source) = match load_snapshot(&store, &config, radius.as_ref(), snapshot)? {
            Ok((state, radius)) => (state, radius, IndexSource::Snapshot),
            Err(why) => {
                let radius = radius.unwrap_or_else(|| config.radius());
                (rebuild(&store, &config, &radius)?, radius, IndexSource::Rebuilt { why })
            }
        };
        Ok((Engine::with_state(store, config, radius, state), source))
    }

    fn with_state(store: S, config: PipelineConfig, radius: Radius, mut state: State) -> Engine<S> {
        for i in 0.. {
            match state.docs.index_mut(i) {
                Some(t) => t.set_deferred_merges(true),
                None => break,
            }
        }
        let state = Arc::new(RwLock::new(state));
        Engine {
            store,
            config,
            radius,
            merger: Merger::start(state.clone()),
            state,
            writer: Mutex::new(()),
            queue: Mutex::default(),
            commits: AtomicU64::new(0),
        }
    }

    /// The pipeline its fingerprints come from.
    pub fn config(&self) -> &PipelineConfig {
        &self.config
    }

    /// The rule requests without a k get.
    pub fn radius(&self) -> &Radius {
        &self.radius
    }

    /// The store.
    pub fn store(&self) -> &S {
        &self.store
    }

    fn bits(&self) -> Bits {
        self.config.bits
    }

    fn check(&self, fp: Fingerprint, k: Option<u32>) -> Result<()> {
        if fp.bits() != self.bits() {
            return Err(StoreError::Invalid(format!(
                "a {}-bit fingerprint, but this store holds {}-bit ones",
                fp.bits(),
                self.bits()
            )));
        }
        let k = k.unwrap_or(0);
        if k > self.bits().get() {
            return Err(StoreError::Invalid(format!("k = {k} is more than the {} bits", self.bits())));
        }
        Ok(())
    }

    /// The stored documents near `fp`, nearest first, at most `limit`:
    /// within `k`, or (`k` = `None`) by the engine's [rule](Self::radius)
    /// for a document of `features` features (unknown: a long document).
    pub fn search(
        &self,
        fp: Fingerprint,
        k: Option<u32>,
        features: Option<u32>,
        limit: usize,
    ) -> Result<Vec<Found>> {
        self.check(fp, k)?;
        let state = self.state.read().expect("lock");
        let mut found = state.near(fp, k, features, &self.radius)?;
        found.truncate(limit);
        Ok(found)
    }

    /// The stored document with this id.
    pub fn get(&self, id: &str) -> Result<Option<DocRecord>> {
        self.store.get(id)
    }

    /// How many documents are stored.
    pub fn len(&self) -> usize {
        self.state.read().expect("lock").docs.len()
    }

    /// True when nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Sizes and settings.
    pub fn stats(&self) -> EngineStats {
        let state = self.state.read().expect("lock");
        EngineStats {
            documents: state.docs.len() as u64,
            bits: self.bits().get(),
            table_k: state.docs.index().layout().k,
            radius: self.radius.to_string(),
            index_bytes: state.docs.memory_bytes() as u64,
            disk_bytes: self.store.disk_bytes(),
            pipeline: format!("{:016x}", self.config.id()),
            commits: self.commits.load(Ordering::Relaxed),
            segments: state.docs.indexes().map(|t| t.stats().segments as u64).sum(),
        }
    }

    /// Every stored (id, fingerprint), for checks against a linear scan.
    pub fn fingerprints(&self) -> Vec<(String, Fingerprint)> {
        let state = self.state.read().expect("lock");
        let mut v: Vec<(String, Fingerprint)> = state
            .docs
            .index()
            .entries()
            .into_iter()
            .filter_map(|(i, fp)| Some((state.docs.key(i)?.to_string(), fp)))
            .collect();
        v.sort();
        v
    }
}
