//! Durable storage for neardup: documents' fingerprints in an embedded
//! database, and the [`Engine`] that keeps them searchable.
//!
//! A [`Store`] holds, per document id, its fingerprint, insertion time, an
//! optional content hash and optional metadata JSON, plus — once per store —
//! the [`PipelineConfig`](neardup::PipelineConfig) that made the
//! fingerprints and the fingerprint format version. [`RedbStore`] keeps them
//! in a [redb](https://docs.rs/redb) database (ACID, one writer, many
//! readers, crash safe: a write returns only after it is committed to disk);
//! [`MemoryStore`] keeps them in memory, for tests. One conformance suite
//! (`tests/conformance.rs`) runs against both.
//!
//! An [`Engine`] is a store plus the in-memory
//! [`TableIndex`](neardup::index::TableIndex), rebuilt on open; it answers
//! radius searches and does the crawler's check-and-insert atomically.
//!
//! ```
//! use neardup_store::{Engine, MemoryStore, Mode, NewDoc};
//! use neardup::Fingerprinter;
//!
//! let fingerprinter = Fingerprinter::preset("default")?;
//! let engine = Engine::open(MemoryStore::new(), fingerprinter.config().clone(), fingerprinter.radius().clone())?;
//! let a = NewDoc::new("a", fingerprinter.fingerprint("The quick brown fox jumps over the lazy dog near the river bank."));
//! let b = NewDoc::new("b", fingerprinter.fingerprint("The quick brown fox jumps over the lazy dog near the river bank!"));
//! assert!(engine.submit(a, Mode::InsertIfUnique, None)?.inserted);
//! let second = engine.submit(b, Mode::InsertIfUnique, None)?;
//! assert!(!second.inserted);
//! assert_eq!(second.matches[0].id, "a");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(missing_docs)]

mod engine;
mod error;
pub mod library;
mod memory;
pub mod passages;
mod pending;
mod record;
mod redb_store;

pub use engine::{
    DiskCounters, DiskOptions, DiskStats, Engine, EngineStats, Found, IndexSource, Mode, Near, NewDoc,
    Outcome,
};
pub use error::{Result, StoreError, WriteFailure};
pub use memory::MemoryStore;
pub use record::{DocRecord, SnapshotMark, StoreMeta, MAX_ID_CHARS};

use neardup::Sketch;
pub use redb_store::RedbStore;

/// What [`Store::for_each_after`] calls with each document's sequence
/// number and record.
pub type SeqVisitor<'a> = dyn FnMut(u64, DocRecord) -> Result<()> + 'a;

/// What [`Store::put`] did to one document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Written {
    /// Its sequence number.
    pub seq: u64,
    /// The sequence number of the document of the same id it replaced.
    pub replaced: Option<u64>,
}

/// What [`Store::for_each_sketch`] calls with each document's id, sketch
/// and feature count.
pub type SketchVisitor<'a> = dyn FnMut(&str, Sketch, Option<u32>) -> Result<()> + 'a;

/// Where documents live. Implementations are `Send + Sync`; writes are
/// durable when they return (for stores that persist at all), and a batch
/// is written all or nothing.
pub trait Store: Send + Sync {
    /// The pipeline and format version recorded when the store was first
    /// used, if any.
    fn meta(&self) -> Result<Option<StoreMeta>>;

    /// Records the pipeline and format version (once; a store that has one
    /// keeps it).
    fn set_meta(&self, meta: &StoreMeta) -> Result<()>;

    /// Writes documents (replacing any with the same id), all or nothing.
    ///
    /// Each written document gets the next *sequence number* (1, 2, …, in
    /// the order given, never reused), and the one it replaces, if any,
    /// becomes a tombstone ([`dead_seqs`](Self::dead_seqs)) in the same
    /// transaction: what an index kept outside the store needs to catch
    /// up with it after any crash.
    fn put(&self, docs: &[DocRecord]) -> Result<Vec<Written>>;

    /// The document with this id.
    fn get(&self, id: &str) -> Result<Option<DocRecord>>;

    /// Deletes a document; returns whether it existed.
    fn delete(&self, id: &str) -> Result<bool> {
        Ok(self.remove(id)?.is_some())
    }

    /// Deletes a document; returns its sequence number (now a tombstone)
    /// if it existed.
    fn remove(&self, id: &str) -> Result<Option<u64>>;

    /// The sketches of these documents (`None` for absent ones), read
    /// together: what an on-disk MinHash index confirms its candidates
    /// with.
    fn get_sketches(&self, ids: &[&str]) -> Result<Vec<Option<Sketch>>> {
        ids.iter().map(|id| Ok(self.get(id)?.map(|d| d.sketch))).collect()
    }

    /// The last sequence number given (0 before any write).
    fn last_seq(&self) -> Result<u64>;

    /// Every stored document whose sequence number is above `after`, in
    /// sequence order, with its number.
    fn for_each_after(&self, after: u64, f: &mut SeqVisitor<'_>) -> Result<()>;

    /// The tombstones: sequence numbers of replaced and deleted documents
    /// not yet forgotten.
    fn dead_seqs(&self) -> Result<Vec<u64>>;

    /// Forgets tombstones (an index that no longer holds them says so).
    fn forget_dead(&self, seqs: &[u64]) -> Result<()>;

    /// Every document, in id order.
    fn for_each(&self, f: &mut dyn FnMut(DocRecord) -> Result<()>) -> Result<()>;

    /// Every document's id, sketch and feature count, in id order (what
    /// rebuilding the index reads; stores may skip decoding the rest).
    fn for_each_sketch(&self, f: &mut SketchVisitor<'_>) -> Result<()> {
        self.for_each(&mut |d| f(&d.id, d.sketch, d.features))
    }

    /// How many document writes (puts and deletes) were ever committed: it
    /// changes with every change of the documents, and only then.
    fn generation(&self) -> Result<u64>;

    /// The mark of the last index snapshot, if one was recorded.
    fn snapshot_mark(&self) -> Result<Option<SnapshotMark>>;

    /// Records an index snapshot's mark (not a document write: the
    /// generation stays).
    fn set_snapshot_mark(&self, mark: &SnapshotMark) -> Result<()>;

    /// How many documents there are.
    fn len(&self) -> Result<u64>;

    /// True when there are no documents.
    fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }

    /// Gives the space that writes left free back to the file system (a
    /// store that has none to give does nothing). Blocks every other use
    /// of the store meanwhile.
    fn compact(&self) -> Result<()> {
        Ok(())
    }

    /// Bytes used on disk (0 for memory).
    fn disk_bytes(&self) -> u64;

    /// Why writes fail now, if they do: the last write failed at the disk
    /// and none has succeeded since. (Stores that cannot fail so: never.)
    fn write_failing(&self) -> Option<(WriteFailure, String)> {
        None
    }

    /// After writes failed at the disk, makes the store writable again if
    /// the disk takes writes (reopening it; see [`RedbStore`]); an error
    /// says why not yet. Writes do this themselves; health checks call it
    /// so that a store recovers while no write comes.
    fn recover(&self) -> Result<()> {
        Ok(())
    }
}

/// Stores behind a `Box` or an `Arc` are stores (the engine can own a
/// shared or type-erased one).
macro_rules! forward_store {
    ($($ptr:ty),*) => {$(
        impl<T: Store + ?Sized> Store for $ptr {
            fn meta(&self) -> Result<Option<StoreMeta>> { (**self).meta() }
            fn set_meta(&self, meta: &StoreMeta) -> Result<()> { (**self).set_meta(meta) }
            fn put(&self, docs: &[DocRecord]) -> Result<Vec<Written>> { (**self).put(docs) }
            fn get(&self, id: &str) -> Result<Option<DocRecord>> { (**self).get(id) }
            fn delete(&self, id: &str) -> Result<bool> { (**self).delete(id) }
            fn remove(&self, id: &str) -> Result<Option<u64>> { (**self).remove(id) }
            fn last_seq(&self) -> Result<u64> { (**self).last_seq() }
            fn get_sketches(&self, ids: &[&str]) -> Result<Vec<Option<Sketch>>> { (**self).get_sketches(ids) }
            fn for_each_after(&self, after: u64, f: &mut SeqVisitor<'_>) -> Result<()> {
                (**self).for_each_after(after, f)
            }
            fn dead_seqs(&self) -> Result<Vec<u64>> { (**self).dead_seqs() }
            fn forget_dead(&self, seqs: &[u64]) -> Result<()> { (**self).forget_dead(seqs) }
            fn for_each(&self, f: &mut dyn FnMut(DocRecord) -> Result<()>) -> Result<()> { (**self).for_each(f) }
            fn for_each_sketch(&self, f: &mut SketchVisitor<'_>) -> Result<()> {
                (**self).for_each_sketch(f)
            }
            fn generation(&self) -> Result<u64> { (**self).generation() }
            fn snapshot_mark(&self) -> Result<Option<SnapshotMark>> { (**self).snapshot_mark() }
            fn set_snapshot_mark(&self, mark: &SnapshotMark) -> Result<()> { (**self).set_snapshot_mark(mark) }
            fn len(&self) -> Result<u64> { (**self).len() }
            fn disk_bytes(&self) -> u64 { (**self).disk_bytes() }
            fn compact(&self) -> Result<()> { (**self).compact() }
            fn write_failing(&self) -> Option<(WriteFailure, String)> { (**self).write_failing() }
            fn recover(&self) -> Result<()> { (**self).recover() }
        }
    )*};
}
forward_store!(Box<T>, std::sync::Arc<T>);
