//! Store errors.

use std::path::PathBuf;

/// A store error. Messages say what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The database failed (I/O, corruption, locking).
    #[error("{path}: {message}")]
    Database {
        /// The database file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The store was made with another pipeline.
    #[error(
        "this store holds fingerprints of pipeline {stored}, not {wanted}: open it with the \
         configuration it was made with (or use a new data directory)"
    )]
    ConfigMismatch {
        /// The stored pipeline's id.
        stored: String,
        /// The requested pipeline's id.
        wanted: String,
    },
    /// The store holds sketches of the other method (SimHash fingerprints
    /// or MinHash signatures): one data directory holds one method.
    #[error(
        "this store holds {}, not {} (one data directory holds one method): open it with its own \
         pipeline (leave out --preset/--config), or use a new data directory for {wanted}",
        sketches(*stored),
        sketches(*wanted)
    )]
    MethodMismatch {
        /// The stored pipeline's method.
        stored: neardup::minhash::Method,
        /// The requested pipeline's method.
        wanted: neardup::minhash::Method,
    },
    /// The store was written by a neardup of another fingerprint format.
    #[error(
        "this store holds fingerprints of format version {stored}, this neardup makes version \
         {current}: rebuild it from the documents"
    )]
    FormatVersion {
        /// The stored version.
        stored: u32,
        /// This build's version.
        current: u32,
    },
    /// A stored record cannot be read.
    #[error("record {id:?} is damaged ({message}): restore the data directory from a backup")]
    Corrupt {
        /// The record's id.
        id: String,
        /// What is wrong with it.
        message: String,
    },
    /// A bad argument: empty id, wrong fingerprint width, k too large.
    #[error("{0}")]
    Invalid(String),
    /// The group commit this write joined failed (the message says why);
    /// nothing of the group was stored.
    #[error("the commit failed, nothing was stored: {0}")]
    GroupCommit(String),
    /// An error from the neardup core (index, pipeline).
    #[error(transparent)]
    Core(#[from] neardup::Error),
}

/// What sketches of a method are called.
fn sketches(m: neardup::minhash::Method) -> &'static str {
    match m {
        neardup::minhash::Method::Simhash => "SimHash fingerprints",
        neardup::minhash::Method::Minhash => "MinHash signatures",
    }
}

/// `Result` with [`StoreError`].
pub type Result<T, E = StoreError> = std::result::Result<T, E>;
