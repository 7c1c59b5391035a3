//! Data directories: what `neardup serve --data DIR` and the `neardup index`
//! commands share. `DIR/store.redb` holds the documents (the truth);
//! `DIR/index/` their on-disk index (segment files under a manifest, see
//! `neardup_store::Engine::open_dir`), opened in place: nothing
//! proportional to the store is read on open. (`DIR/index.ndx`, the
//! snapshot earlier versions wrote, is removed on first open.)

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Result};
use neardup::minhash::Method;
use neardup_store::{DiskOptions, Engine, IndexSource, RedbStore, Store, StoreError};

use crate::args::PipelineArgs;
use crate::UsageError;

/// The database file in a data directory.
pub const STORE_FILE: &str = "store.redb";
/// The index snapshot earlier versions wrote in a data directory.
pub const SNAPSHOT_FILE: &str = "index.ndx";
/// The on-disk index's directory in a data directory.
pub const INDEX_DIR: &str = "index";

/// Whether an `INDEX` argument names a data directory rather than an index file.
pub fn is_data_dir(path: &Path) -> bool {
    path.is_dir()
}

/// The store file's size and modification time as a clean close left
/// them (`DIR/store.clean`): while they still match, the next open skips
/// redb's page-by-page check, which reads the whole file (minutes at the
/// seeds' scale). A crash, a copy or a change by anything else leaves no
/// mark or a stale one, and the next open checks.
struct CleanMark;

const CLEAN_FILE: &str = "store.clean";

impl CleanMark {
    fn of(path: &Path) -> Option<String> {
        let m = std::fs::metadata(path).ok()?;
        let mtime = m.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?;
        Some(format!("{} {}\n", m.len(), mtime.as_nanos()))
    }

    fn matches(dir: &Path, path: &Path) -> bool {
        let mark = std::fs::read_to_string(dir.join(CLEAN_FILE)).ok();
        mark.is_some() && mark == Self::of(path)
    }

    fn clear(dir: &Path) {
        let _ = std::fs::remove_file(dir.join(CLEAN_FILE));
    }

    fn write(dir: &Path, path: &Path) {
        if let Some(mark) = Self::of(path) {
            let _ = std::fs::write(dir.join(CLEAN_FILE), mark);
        }
    }
}

/// The index's memory when `--memory` is not given: 64 bytes a document
/// (estimated from the store's size, about a kilobyte a MinHash document),
/// at least 128 MiB, at most a quarter of what this process may use — so
/// resident memory grows at 64 B a document at most, and large stores get
/// merges large enough to keep their segments few.
pub fn auto_memory(store: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let bytes = std::fs::metadata(store).map_or(0, |m| m.blocks() * 512);
    let cap = crate::machine::available_memory().map_or(2 << 30, |a| a / 4).max(128 << 20);
    (bytes / 1024 * 64).clamp(128 << 20, cap)
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
        Self::open_with(dir, pipeline, k, true, implied, None)
    }

    /// [`open`](Self::open) with the index's memory (`serve --memory`;
    /// `None`: [`auto_memory`]).
    pub fn open_within(
        dir: &Path,
        pipeline: &PipelineArgs,
        k: Option<u32>,
        implied: Option<Method>,
        memory: Option<u64>,
    ) -> Result<DataDir> {
        Self::open_with(dir, pipeline, k, true, implied, memory)
    }

    /// Opens an existing data directory (for commands that only read): a
    /// directory without a store is an error, not a new store.
    pub fn open_existing(dir: &Path, pipeline: &PipelineArgs) -> Result<DataDir> {
        Self::open_with(dir, pipeline, None, false, None, None)
    }

    fn open_with(
        dir: &Path,
        pipeline: &PipelineArgs,
        k: Option<u32>,
        create: bool,
        implied: Option<Method>,
        memory: Option<u64>,
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
        let options = DiskOptions::for_memory(memory.unwrap_or_else(|| auto_memory(&path)));
        // The store is checked page by page on open (which reads it whole)
        // unless it is exactly as the last clean close left it.
        let cache = usize::try_from(options.memory / 8).unwrap_or(usize::MAX).max(16 << 20);
        let verify = !CleanMark::matches(dir, &path);
        let store = RedbStore::open_with_cache(&path, verify, cache);
        CleanMark::clear(dir);
        let store = store.map_err(|e| anyhow!("{e}"))?;
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
        let (engine, source) = Engine::open_dir(store, config, radius, &dir.join(INDEX_DIR), options)
            .map_err(|e| match e {
                // The wrong --preset/--config for this store: usage (2);
                // a store of another format or damaged: input (1).
                e @ (StoreError::ConfigMismatch { .. } | StoreError::MethodMismatch { .. }) => {
                    UsageError(format!("{}: {e}", path.display())).into()
                }
                e => anyhow!("{}: {e}", path.display()),
            })?;
        let _ = std::fs::remove_file(dir.join(SNAPSHOT_FILE));
        Ok(DataDir { engine: Arc::new(engine), dir: dir.to_path_buf(), source, opened_in: started.elapsed() })
    }

    /// Compacts the store: (bytes before, bytes after, time taken).
    pub fn compact(&self) -> Result<(u64, u64, Duration)> {
        let started = Instant::now();
        let before = self.engine.store().disk_bytes();
        self.engine.compact().map_err(|e| anyhow!("{}: cannot compact: {e}", self.dir.display()))?;
        Ok((before, self.engine.store().disk_bytes(), started.elapsed()))
    }

    /// Closes the store (once nothing else holds the engine) and marks it
    /// clean, so that the next open skips the page-by-page check.
    pub fn close(self) {
        let DataDir { engine, dir, .. } = self;
        if let Ok(engine) = Arc::try_unwrap(engine) {
            drop(engine);
            CleanMark::write(&dir, &dir.join(STORE_FILE));
        }
    }
}
