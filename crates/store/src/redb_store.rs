//! [`RedbStore`]: documents in an embedded redb database.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, RwLock};

use redb::{Database, ReadableDatabase, ReadableTable, ReadableTableMetadata, TableDefinition, TableHandle};

use crate::error::{StoreError, WriteFailure};
use crate::record::{check_id, DocRecord, SnapshotMark, StoreMeta};
use crate::{Result, SeqVisitor, Store, Written};

/// id → encoded [`DocRecord`].
const DOCS: TableDefinition<&str, &[u8]> = TableDefinition::new("docs");
/// "meta" → JSON of [`StoreMeta`]; "generation" → u64 (little-endian)
/// bumped by every document write; "snapshot" → JSON of [`SnapshotMark`];
/// "last_seq" → u64, the last sequence number given.
const META: TableDefinition<&str, &[u8]> = TableDefinition::new("meta");
/// id → its sequence number: what stores written before record version
/// 4 kept beside each record (a second copy of every id). Read once, to
/// move the numbers into the records ([`RedbStore::migrate`]), then
/// dropped.
const SEQS: TableDefinition<&str, u64> = TableDefinition::new("seqs");
/// sequence number → id, for every stored document: what an on-disk index
/// reads to find the documents written after its last flush.
const BY_SEQ: TableDefinition<u64, &str> = TableDefinition::new("by_seq");
/// Sequence numbers of documents replaced or deleted (tombstones), until
/// their owner forgets them ([`Store::forget_dead`]).
const DEAD: TableDefinition<u64, ()> = TableDefinition::new("dead");
const LAST_SEQ: &str = "last_seq";

/// A redb database file. Every write is one transaction committed with
/// immediate durability (fsync) before it returns; readers never block the
/// writer. redb locks the file, so a second process opening it fails
/// cleanly instead of corrupting it.
///
/// A write that fails at the disk (full, or another I/O error) stores
/// nothing and leaves redb refusing every later write until the database
/// is closed and reopened (its documented recovery). The store does that
/// itself: reads go on from the open database meanwhile, and the next
/// write (or [`Store::recover`]) first probes the disk with a small file
/// beside the database and, when the probe is written and synced,
/// reopens the database (redb repairs it on open if needed) and goes on.
pub struct RedbStore {
    /// `None` only after a reopen failed (reads then retry the reopen).
    db: RwLock<Option<Database>>,
    path: PathBuf,
    /// A write failed at the disk: reopen before the next one.
    broken: AtomicBool,
    /// The last write failure, until a write succeeds.
    failing: Mutex<Option<(WriteFailure, String)>>,
    /// Reopens after failures so far.
    reopens: AtomicU64,
    /// The page cache's size, when not redb's default.
    cache: Option<usize>,
}

impl std::fmt::Debug for RedbStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedbStore").field("path", &self.path).finish()
    }
}

/// Bytes the disk probe writes (and syncs, then removes) before a reopen.
const PROBE_BYTES: usize = 256 << 10;

impl RedbStore {
    /// Opens the database at `path`, creating it (and its directory) if
    /// missing, and verifies it: the checksum of every page is checked
    /// (redb's integrity check, which reads the whole file), so that a
    /// damaged file is refused with [`StoreError::Database`] saying so,
    /// where trusting it could fail later or worse.
    pub fn open(path: &Path) -> Result<RedbStore> {
        RedbStore::open_with(path, true)
    }

    /// Opens the database at `path` like [`open`](Self::open) but without
    /// the integrity check (faster on large stores; a damaged file may then
    /// fail on first use instead).
    pub fn open_unverified(path: &Path) -> Result<RedbStore> {
        RedbStore::open_with(path, false)
    }

    /// Opens the database at `path` like [`open`](Self::open) (`verify`:
    /// with the integrity check) with a page cache of at most
    /// `cache_bytes` (redb's default is 1 GiB, resident once warm): what a
    /// data directory bounds by `--memory`.
    pub fn open_with_cache(path: &Path, verify: bool, cache_bytes: usize) -> Result<RedbStore> {
        RedbStore::open_inner(path, verify, Some(cache_bytes))
    }

    fn open_with(path: &Path, verify: bool) -> Result<RedbStore> {
        RedbStore::open_inner(path, verify, None)
    }

    fn open_inner(path: &Path, verify: bool, cache: Option<usize>) -> Result<RedbStore> {
        if path.is_dir() {
            return Err(StoreError::Database {
                path: path.to_path_buf(),
                message: "is a directory, not a database file".into(),
            });
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| StoreError::Database {
                path: dir.to_path_buf(),
                message: format!("cannot create the directory: {e}"),
            })?;
        }
        let db = builder(verify, cache).create(path).map_err(|e| db_error(path, e))?;
        let store = RedbStore {
            cache,
            db: RwLock::new(Some(db)),
            path: path.to_path_buf(),
            broken: AtomicBool::new(false),
            failing: Mutex::new(None),
            reopens: AtomicU64::new(0),
        };
        // Create the tables up front, so readers of a new store find them.
        store.write(|db| {
            let txn = db.begin_write()?;
            txn.open_table(DOCS)?;
            txn.open_table(META)?;
            txn.open_table(BY_SEQ)?;
            txn.open_table(DEAD)?;
            txn.commit()?;
            Ok(())
        })?;
        store.migrate()?;
        Ok(store)
    }

    /// Brings a store written by an older version to the current records,
    /// once: a store of records without sequence numbers in them (before
    /// record version 4) moves its table of id → sequence number into the
    /// records, 65,536 at a time (each batch one transaction, so a crash
    /// midway loses nothing and the next open goes on), then drops the
    /// table; a store from before sequence numbers gets them now, in id
    /// order. A current store is not read.
    fn migrate(&self) -> Result<()> {
        const BATCH: usize = 65_536;
        loop {
            let done = self.write(|db| {
                let txn = db.begin_write()?;
                let has_seqs = txn.list_tables()?.any(|t| t.name() == SEQS.name());
                let done = {
                    let mut docs = txn.open_table(DOCS)?;
                    let mut by_seq = txn.open_table(BY_SEQ)?;
                    let upgrade = |docs: &mut redb::Table<&str, &[u8]>, id: &str, seq: u64| {
                        let new = docs.get(id)?.and_then(|v| DocRecord::upgrade(v.value(), seq));
                        if let Some(new) = new {
                            docs.insert(id, new.as_slice())?;
                        }
                        Ok::<_, redb::Error>(())
                    };
                    if has_seqs {
                        let mut seqs = txn.open_table(SEQS)?;
                        let batch = seqs
                            .iter()?
                            .take(BATCH)
                            .map(|item| item.map(|(k, v)| (k.value().to_owned(), v.value())))
                            .collect::<Result<Vec<_>, _>>()?;
                        for (id, seq) in &batch {
                            upgrade(&mut docs, id, *seq)?;
                            seqs.remove(id.as_str())?;
                        }
                        batch.is_empty()
                    } else if by_seq.is_empty()? && !docs.is_empty()? {
                        let ids = docs
                            .iter()?
                            .map(|item| item.map(|(k, _)| k.value().to_owned()))
                            .collect::<Result<Vec<_>, _>>()?;
                        for (seq, id) in (1u64..).zip(&ids) {
                            upgrade(&mut docs, id, seq)?;
                            by_seq.insert(seq, id.as_str())?;
                        }
                        let last = ids.len() as u64;
                        txn.open_table(META)?.insert(LAST_SEQ, last.to_le_bytes().as_slice())?;
                        true
                    } else {
                        true
                    }
                };
                if done && has_seqs {
                    txn.delete_table(SEQS)?;
                }
                txn.commit()?;
                Ok(done)
            })?;
            if done {
                return Ok(());
            }
        }
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How many times the store reopened itself after a failed write.
    pub fn reopens(&self) -> u64 {
        self.reopens.load(Ordering::Relaxed)
    }

    fn err(&self, e: impl Into<redb::Error>) -> StoreError {
        db_error(&self.path, e)
    }

    /// Runs a read on the open database (reopening it first if a reopen
    /// failed before).
    fn read<T>(&self, f: impl FnOnce(&Database) -> Result<T>) -> Result<T> {
        {
            let db = self.db.read().expect("lock");
            if let Some(db) = db.as_ref() {
                return f(db);
            }
        }
        self.reopen()?;
        match self.db.read().expect("lock").as_ref() {
            Some(db) => f(db),
            None => Err(self.write_error(WriteFailure::Io, "the database is closed".into())),
        }
    }

    /// Runs a write transaction's work: reopens first after a failure, and
    /// classifies a failure at the disk (which makes the next write reopen).
    fn write<T>(&self, f: impl FnOnce(&Database) -> Result<T, redb::Error>) -> Result<T> {
        if self.broken.load(Ordering::Acquire) {
            self.reopen()?;
        }
        let r = self.read(|db| Ok(f(db)))?;
        match r {
            Ok(v) => {
                *self.failing.lock().expect("lock") = None;
                Ok(v)
            }
            Err(e) => Err(self.failed(e)),
        }
    }

    /// A write's error: failures at the disk mark the store for a reopen.
    fn failed(&self, e: redb::Error) -> StoreError {
        let kind = match &e {
            redb::Error::Io(io) => WriteFailure::of(io),
            redb::Error::PreviousIo => WriteFailure::Io,
            _ => return self.err(e),
        };
        self.broken.store(true, Ordering::Release);
        let message = match e {
            redb::Error::Io(io) => io.to_string(),
            e => e.to_string(),
        };
        self.write_error(kind, message)
    }

    fn write_error(&self, kind: WriteFailure, message: String) -> StoreError {
        *self.failing.lock().expect("lock") = Some((kind, message.clone()));
        StoreError::Write { kind, message }
    }

    /// Writes, syncs and removes a small file beside the database: whether
    /// the disk takes writes again.
    fn probe(&self) -> std::io::Result<()> {
        use std::io::Write;
        let probe = self.path.with_extension("probe");
        let r = (|| {
            let mut f = std::fs::File::create(&probe)?;
            f.write_all(&[0u8; PROBE_BYTES])?;
            f.sync_all()
        })();
        let _ = std::fs::remove_file(&probe);
        r
    }

    /// Closes and reopens the database after a failed write, once the disk
    /// takes writes (else says why not, keeping the open one for reads).
    fn reopen(&self) -> Result<()> {
        let mut db = self.db.write().expect("lock");
        if !self.broken.load(Ordering::Acquire) && db.is_some() {
            return Ok(()); // another thread reopened it meanwhile
        }
        self.probe().map_err(|e| self.write_error(WriteFailure::of(&e), e.to_string()))?;
        if let Some(old) = db.take() {
            // Its error is the one that broke it; the reopen below decides.
            let _ = old.close();
        }
        let fresh = builder(false, self.cache).create(&self.path).map_err(|e| match e.into() {
            redb::Error::Io(io) => self.write_error(WriteFailure::of(&io), io.to_string()),
            e => self.err(e),
        })?;
        *db = Some(fresh);
        self.broken.store(false, Ordering::Release);
        self.reopens.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    fn meta_json<T: serde::de::DeserializeOwned>(&self, key: &str) -> Result<Option<T>> {
        self.read(|db| {
            let txn = db.begin_read().map_err(|e| self.err(e))?;
            let table = txn.open_table(META).map_err(|e| self.err(e))?;
            let Some(v) = table.get(key).map_err(|e| self.err(e))? else { return Ok(None) };
            serde_json::from_slice(v.value())
                .map(Some)
                .map_err(|e| StoreError::Corrupt { id: format!("(store {key})"), message: e.to_string() })
        })
    }
}

/// Bumps the generation inside a write transaction.
fn bump_generation(txn: &redb::WriteTransaction) -> Result<(), redb::Error> {
    let mut table = txn.open_table(META)?;
    let current = table.get(GENERATION)?.map(|v| read_u64(v.value()));
    let next = current.unwrap_or(0) + 1;
    table.insert(GENERATION, next.to_le_bytes().as_slice())?;
    Ok(())
}

const GENERATION: &str = "generation";

fn read_u64(v: &[u8]) -> u64 {
    v.try_into().map_or(0, u64::from_le_bytes)
}

/// redb's builder; `verify` checks every page's checksum on open;
/// `cache` bounds the page cache.
fn builder(verify: bool, cache: Option<usize>) -> redb::Builder {
    let mut b = Database::builder();
    b.set_check_integrity_on_open(verify);
    if let Some(bytes) = cache {
        b.set_cache_size(bytes);
    }
    b
}

fn db_error(path: &Path, e: impl Into<redb::Error>) -> StoreError {
    let e: redb::Error = e.into();
    let hint = match &e {
        redb::Error::DatabaseAlreadyOpen => {
            "; another process (a running `neardup serve`?) has it open: stop it first"
        }
        redb::Error::Corrupted(_) => {
            "; the database file is damaged: restore the data directory from a backup, or rebuild it \
             from the documents"
        }
        redb::Error::Io(io) if io.kind() == std::io::ErrorKind::ReadOnlyFilesystem => {
            "; the data directory is on a read-only filesystem, and the store needs to write: mount it \
             read-write (or work on a copy)"
        }
        redb::Error::Io(io) if io.kind() == std::io::ErrorKind::PermissionDenied => {
            "; this user may not write the database file: fix its permissions or run as its owner"
        }
        redb::Error::Io(io) if io.to_string().contains("magic number") => {
            "; this is not a neardup store (or its header is damaged): point --data at a data directory, \
             or restore it from a backup"
        }
        _ => "",
    };
    StoreError::Database { path: path.to_path_buf(), message: format!("{e}{hint}") }
}

impl Store for RedbStore {
    fn meta(&self) -> Result<Option<StoreMeta>> {
        self.meta_json("meta")
    }

    fn set_meta(&self, meta: &StoreMeta) -> Result<()> {
        let json = serde_json::to_vec(meta).expect("metadata serializes");
        self.write(|db| {
            let txn = db.begin_write()?;
            {
                let mut table = txn.open_table(META)?;
                if table.get("meta")?.is_none() {
                    table.insert("meta", json.as_slice())?;
                }
            }
            txn.commit()?;
            Ok(())
        })
    }

    fn put(&self, docs: &[DocRecord]) -> Result<Vec<Written>> {
        for d in docs {
            check_id(&d.id)?;
        }
        self.write(|db| {
            let txn = db.begin_write()?;
            let mut written = Vec::with_capacity(docs.len());
            {
                let mut table = txn.open_table(DOCS)?;
                let mut by_seq = txn.open_table(BY_SEQ)?;
                let mut dead = txn.open_table(DEAD)?;
                let mut meta = txn.open_table(META)?;
                let mut seq = meta.get(LAST_SEQ)?.map_or(0, |v| read_u64(v.value()));
                for d in docs {
                    seq += 1;
                    let replaced = table
                        .insert(d.id.as_str(), d.encode(seq).as_slice())?
                        .and_then(|old| DocRecord::decode_seq(old.value()));
                    by_seq.insert(seq, d.id.as_str())?;
                    if let Some(old) = replaced {
                        by_seq.remove(old)?;
                        dead.insert(old, ())?;
                    }
                    written.push(Written { seq, replaced });
                }
                meta.insert(LAST_SEQ, seq.to_le_bytes().as_slice())?;
            }
            bump_generation(&txn)?;
            txn.commit()?;
            Ok(written)
        })
    }

    fn get(&self, id: &str) -> Result<Option<DocRecord>> {
        self.read(|db| {
            let txn = db.begin_read().map_err(|e| self.err(e))?;
            let table = txn.open_table(DOCS).map_err(|e| self.err(e))?;
            let v = table.get(id).map_err(|e| self.err(e))?;
            v.map(|v| DocRecord::decode(id, v.value())).transpose()
        })
    }

    fn remove(&self, id: &str) -> Result<Option<u64>> {
        self.write(|db| {
            let txn = db.begin_write()?;
            let removed = {
                let mut table = txn.open_table(DOCS)?;
                let old = table.remove(id)?;
                let existed = old.is_some();
                let seq = old.and_then(|v| DocRecord::decode_seq(v.value()));
                if let Some(seq) = seq {
                    txn.open_table(BY_SEQ)?.remove(seq)?;
                    txn.open_table(DEAD)?.insert(seq, ())?;
                }
                existed.then_some(seq.unwrap_or(0))
            };
            if removed.is_some() {
                bump_generation(&txn)?;
            }
            txn.commit()?;
            Ok(removed)
        })
    }

    fn get_sketches(&self, ids: &[&str]) -> Result<Vec<Option<neardup::Sketch>>> {
        self.read(|db| {
            let txn = db.begin_read().map_err(|e| self.err(e))?;
            let table = txn.open_table(DOCS).map_err(|e| self.err(e))?;
            ids.iter()
                .map(|&id| {
                    let v = table.get(id).map_err(|e| self.err(e))?;
                    v.map(|v| DocRecord::decode_sketch(id, v.value())).transpose()
                })
                .collect()
        })
    }

    fn last_seq(&self) -> Result<u64> {
        self.read(|db| {
            let txn = db.begin_read().map_err(|e| self.err(e))?;
            let table = txn.open_table(META).map_err(|e| self.err(e))?;
            let v = table.get(LAST_SEQ).map_err(|e| self.err(e))?;
            Ok(v.map_or(0, |v| read_u64(v.value())))
        })
    }

    fn for_each_after(&self, after: u64, f: &mut SeqVisitor<'_>) -> Result<()> {
        self.read(|db| {
            let txn = db.begin_read().map_err(|e| self.err(e))?;
            let by_seq = txn.open_table(BY_SEQ).map_err(|e| self.err(e))?;
            let docs = txn.open_table(DOCS).map_err(|e| self.err(e))?;
            for item in by_seq.range(after.saturating_add(1)..).map_err(|e| self.err(e))? {
                let (seq, id) = item.map_err(|e| self.err(e))?;
                let id = id.value();
                let Some(v) = docs.get(id).map_err(|e| self.err(e))? else {
                    return Err(StoreError::Corrupt {
                        id: id.to_owned(),
                        message: format!("sequence number {} names a missing document", seq.value()),
                    });
                };
                f(seq.value(), DocRecord::decode(id, v.value())?)?;
            }
            Ok(())
        })
    }

    fn dead_seqs(&self) -> Result<Vec<u64>> {
        self.read(|db| {
            let txn = db.begin_read().map_err(|e| self.err(e))?;
            let table = txn.open_table(DEAD).map_err(|e| self.err(e))?;
            let mut out = Vec::new();
            for item in table.iter().map_err(|e| self.err(e))? {
                out.push(item.map_err(|e| self.err(e))?.0.value());
            }
            Ok(out)
        })
    }

    fn forget_dead(&self, seqs: &[u64]) -> Result<()> {
        self.write(|db| {
            let txn = db.begin_write()?;
            {
                let mut table = txn.open_table(DEAD)?;
                for &s in seqs {
                    table.remove(s)?;
                }
            }
            txn.commit()?;
            Ok(())
        })
    }

    fn for_each(&self, f: &mut dyn FnMut(DocRecord) -> Result<()>) -> Result<()> {
        self.read(|db| {
            let txn = db.begin_read().map_err(|e| self.err(e))?;
            let table = txn.open_table(DOCS).map_err(|e| self.err(e))?;
            for item in table.iter().map_err(|e| self.err(e))? {
                let (k, v) = item.map_err(|e| self.err(e))?;
                f(DocRecord::decode(k.value(), v.value())?)?;
            }
            Ok(())
        })
    }

    fn for_each_sketch(&self, f: &mut crate::SketchVisitor<'_>) -> Result<()> {
        self.read(|db| {
            let txn = db.begin_read().map_err(|e| self.err(e))?;
            let table = txn.open_table(DOCS).map_err(|e| self.err(e))?;
            for item in table.iter().map_err(|e| self.err(e))? {
                let (k, v) = item.map_err(|e| self.err(e))?;
                let id = k.value();
                let sketch = DocRecord::decode_sketch(id, v.value())?;
                f(id, sketch, DocRecord::decode_features(v.value()))?;
            }
            Ok(())
        })
    }

    fn generation(&self) -> Result<u64> {
        self.read(|db| {
            let txn = db.begin_read().map_err(|e| self.err(e))?;
            let table = txn.open_table(META).map_err(|e| self.err(e))?;
            let v = table.get(GENERATION).map_err(|e| self.err(e))?;
            Ok(v.map_or(0, |v| read_u64(v.value())))
        })
    }

    fn snapshot_mark(&self) -> Result<Option<SnapshotMark>> {
        self.meta_json("snapshot")
    }

    fn set_snapshot_mark(&self, mark: &SnapshotMark) -> Result<()> {
        let json = serde_json::to_vec(mark).expect("a mark serializes");
        self.write(|db| {
            let txn = db.begin_write()?;
            {
                let mut table = txn.open_table(META)?;
                table.insert("snapshot", json.as_slice())?;
            }
            txn.commit()?;
            Ok(())
        })
    }

    fn len(&self) -> Result<u64> {
        self.read(|db| {
            let txn = db.begin_read().map_err(|e| self.err(e))?;
            let table = txn.open_table(DOCS).map_err(|e| self.err(e))?;
            table.len().map_err(|e| self.err(e))
        })
    }

    fn disk_bytes(&self) -> u64 {
        std::fs::metadata(&self.path).map(|m| m.len()).unwrap_or(0)
    }

    /// redb's compaction: pages freed by copy-on-write (a third of the
    /// file after a bulk load) are given back, rewriting the file in place
    /// (crash safe: redb commits the moves as transactions).
    fn compact(&self) -> Result<()> {
        let mut db = self.db.write().expect("lock");
        let Some(db) = db.as_mut() else {
            return Err(self.write_error(WriteFailure::Io, "the database is closed".into()));
        };
        db.compact().map_err(|e| self.err(e))?;
        Ok(())
    }

    fn write_failing(&self) -> Option<(WriteFailure, String)> {
        self.failing.lock().expect("lock").clone()
    }

    fn recover(&self) -> Result<()> {
        if self.broken.load(Ordering::Acquire) {
            self.reopen()?;
            *self.failing.lock().expect("lock") = None;
        }
        Ok(())
    }
}
