//! Finding every stored fingerprint within `k` bits of a query.
//!
//! - [`HammingIndex`]: the interface — insert, remove, query, batch query.
//! - [`LinearScan`]: compares against everything; the reference the other
//!   indexes are tested against.
//! - [`TableIndex`]: the generalized pigeonhole index over permuted sorted
//!   tables (Manku, Jain & Das Sarma 2007, §3), exact for every radius, fast
//!   up to the radius its [layout](LayoutSpec) was built for.
//! - [`KeyedIndex`]: a [`TableIndex`] named by the caller's keys (document
//!   ids), with insert, replace and remove by key.
//! - [`pairs`]: every pair within `k` in a batch, and [`cluster`]ing.
//! - [`file`](mod@file): index files, opened through mmap.
//!
//! ```
//! use neardup::index::{HammingIndex, TableIndex};
//! use neardup::Fingerprint;
//!
//! let mut index = TableIndex::builder().k(3).build()?;
//! index.insert(1, Fingerprint::from_u64(0xdead_beef_0000_0000))?;
//! index.insert(2, Fingerprint::from_u64(0xdead_beef_0000_0007))?; // 3 bits away
//! index.insert(3, Fingerprint::from_u64(0x0123_4567_89ab_cdef))?;
//! let hits = index.query(Fingerprint::from_u64(0xdead_beef_0000_0000), 3)?;
//! assert_eq!(hits.iter().map(|m| (m.id, m.distance)).collect::<Vec<_>>(), [(1, 0), (2, 3)]);
//! # Ok::<(), neardup::Error>(())
//! ```

mod blob;
pub mod cluster;
pub mod file;
mod keyed;
pub mod layout;
mod linear;
pub mod pairs;
mod segment;
pub mod sharded;
mod slots;
pub(crate) mod sort;
mod table_index;
mod word;
mod words;

use rayon::prelude::*;
use serde::Serialize;

pub use keyed::{KeyedIndex, RuleTables};
pub use layout::{choose, LayoutChoice, LayoutSpec};
pub use linear::LinearScan;
pub use slots::{keys_from_names, Slots};
pub use table_index::{IndexStats, MergePlan, Merged, TableIndex, TableIndexBuilder, TableStats};
pub use word::Word;
pub use words::Words;

use crate::error::{Error, Result};
use crate::fingerprint::{Bits, Fingerprint};

/// The id stored with a fingerprint. Ids are the caller's: a row number, a
/// hash of a URL, a database key.
pub type Id = u64;

/// One stored entry within the query radius.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Match {
    /// Hamming distance to the query. Results are sorted by distance, then id.
    pub distance: u32,
    /// The entry's id.
    pub id: Id,
}

/// An index of `(id, fingerprint)` entries answering radius queries.
///
/// Every implementation returns exactly what [`LinearScan`] returns: all
/// entries within `k`, each once, sorted by distance then id.
pub trait HammingIndex: Send + Sync {
    /// The fingerprint width the index holds.
    fn bits(&self) -> Bits;

    /// Number of live entries.
    fn len(&self) -> usize;

    /// True when the index holds no entries.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Adds an entry. Ids are not required to be unique: an id inserted
    /// twice is stored twice (and [`remove`](Self::remove) removes both).
    ///
    /// # Errors
    /// [`Error::WidthMismatch`] when `fp` is not [`bits`](Self::bits) wide.
    fn insert(&mut self, id: Id, fp: Fingerprint) -> Result<()>;

    /// Removes every entry with this id; returns how many there were.
    fn remove(&mut self, id: Id) -> usize;

    /// Every entry within `k` bits of `fp`.
    ///
    /// # Errors
    /// [`Error::WidthMismatch`] when `fp` is not [`bits`](Self::bits) wide.
    fn query(&self, fp: Fingerprint, k: u32) -> Result<Vec<Match>>;

    /// [`query`](Self::query) for each fingerprint, in parallel (rayon).
    fn query_batch(&self, fps: &[Fingerprint], k: u32) -> Result<Vec<Vec<Match>>> {
        fps.par_iter().map(|&fp| self.query(fp, k)).collect()
    }
}

pub(crate) fn check_width(index: Bits, fp: Fingerprint) -> Result<()> {
    if fp.bits() == index {
        Ok(())
    } else {
        Err(Error::WidthMismatch { left: index.get(), right: fp.bits().get() })
    }
}
