//! Data directories: what `neardup serve --data DIR` and the `neardup index`
//! commands share. `DIR/store.redb` holds the documents (the truth);
//! `DIR/index.ndx` is the index snapshot written at a clean stop, used on
//! the next open only while it matches the store exactly.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Result};
use neardup::minhash::Method;
use neardup_store::{Engine, IndexSource, RedbStore, Store, StoreError};

use crate::args::PipelineArgs;
use crate::UsageError;

/// The database file in a data directory.
pub const STORE_FILE: &str = "store.redb";
/// The index snapshot in a data directory.
pub const SNAPSHOT_FILE: &str = "index.ndx";

/// Whether an `INDEX` argument names a data directory rather than an index file.
pub fn is_data_dir(path: &Path) -> bool {
    path.is_dir()
}

/// An opened data directory.
pub struct DataDir {
    pub engine: Arc<Engine<RedbStore>>,
    pub dir: PathBuf,
    /// Where the index came from.
    pub source: IndexSource,
    /// How long opening took (the store, and loading or rebuilding the index).
    pub opened_in: Duration,
}

impl DataDir {
    /// Opens (or creates) the data directory `dir`. Its stored pipeline is
    /// used; `--preset`/`--config`, when given, must name that pipeline (or
    /// start a new store with it); a new store without them gets the preset
    /// of `implied` (the method the command's flags imply), else of the
    /// default method. `k` fixes the radius requests without one get (and
    /// the index tables serve); `None`: the pipeline's rule.
    pub fn open(
        dir: &Path,
        pipeline: &PipelineArgs,
        k: Option<u32>,
        implied: Option<Method>,
    ) -> Result<DataDir> {
        Self::open_with(dir, pipeline, k, true, implied)
    }

    /// Opens an existing data directory (for commands that only read): a
    /// directory without a store is an error, not a new store.
    pub fn open_existing(dir: &Path, pipeline: &PipelineArgs) -> Result<DataDir> {
        Self::open_with(dir, pipeline, None, false, None)
    }

    fn open_with(
        dir: &Path,
        pipeline: &PipelineArgs,
        k: Option<u32>,
        create: bool,
        implied: Option<Method>,
    ) -> Result<DataDir> {
        let started = Instant::now();
        let path = dir.join(STORE_FILE);
        if dir.exists() && !dir.is_dir() {
            return Err(UsageError(format!(
                "{} is a file, not a data directory: --data takes a directory (an empty or new one becomes \
                 a data directory)",
                dir.display()
            ))
            .into());
        }
        if !create && !path.exists() {
            return Err(UsageError(format!(
                "{} is a directory without {STORE_FILE}, not a neardup data directory \
                 (make one with `neardup index add {} FILE…` or `neardup serve --data {}`)",
                dir.display(),
                dir.display(),
                dir.display()
            ))
            .into());
        }
        let store = RedbStore::open(&path).map_err(|e| anyhow!("{e}"))?;
        let given = pipeline.preset.is_some() || pipeline.config.is_some();
        let config = match store.meta().map_err(|e| anyhow!("{e}"))? {
            Some(m) if !given => m.config,
            _ => pipeline.load_for(implied)?.config().clone(),
        };
        // Serving takes its rule (the pipeline's, or -k); tools that only
        // read or load take the snapshot's.
        let radius = match (k, create) {
            (Some(k), _) => Some(neardup::Radius::fixed(k)),
            (None, true) => Some(config.radius()),
            (None, false) => None,
        };
        let (engine, source) = Engine::open_with_snapshot(store, config, radius, &dir.join(SNAPSHOT_FILE))
            .map_err(|e| match e {
                // The wrong --preset/--config for this store: usage (2);
                // a store of another format or damaged: input (1).
                e @ (StoreError::ConfigMismatch { .. } | StoreError::MethodMismatch { .. }) => {
                    UsageError(format!("{}: {e}", path.display())).into()
                }
                e => anyhow!("{}: {e}", path.display()),
            })?;
        Ok(DataDir { engine: Arc::new(engine), dir: dir.to_path_buf(), source, opened_in: started.elapsed() })
    }

    /// Writes the index snapshot, so that the next open skips the rebuild;
    /// `None` for a MinHash data directory (its index is rebuilt on open).
    pub fn save_snapshot(&self) -> Result<Option<Duration>> {
        let started = Instant::now();
        let path = self.dir.join(SNAPSHOT_FILE);
        let written = self
            .engine
            .write_snapshot(&path)
            .map_err(|e| anyhow!("{}: cannot write the index snapshot: {e}", path.display()))?;
        Ok(written.map(|_| started.elapsed()))
    }
}
