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
    /// A write failed for want of disk space or by an I/O error; nothing
    /// of it was stored. Reads go on working; the store reopens itself
    /// before the next write, which succeeds once the disk takes writes
    /// again (no restart needed).
    #[error("{}", write_message(*kind, message))]
    Write {
        /// Why: the disk is full, or another I/O error.
        kind: WriteFailure,
        /// The operating system's words (no paths).
        message: String,
    },
    /// The group commit this write joined failed (the message says why);
    /// nothing of the group was stored.
    #[error("the commit failed, nothing was stored: {message}")]
    GroupCommit {
        /// Why the group's commit failed.
        message: String,
        /// Set when it failed as a [`Write`](StoreError::Write) failure.
        kind: Option<WriteFailure>,
    },
    /// An error from the neardup core (index, pipeline).
    #[error(transparent)]
    Core(#[from] neardup::Error),
}

/// Why a write failed at the disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WriteFailure {
    /// No space left on the device (or the quota or the file size limit
    /// reached).
    DiskFull,
    /// Another I/O error.
    Io,
}

impl WriteFailure {
    /// Classifies an I/O error.
    pub fn of(e: &std::io::Error) -> WriteFailure {
        use std::io::ErrorKind::{FileTooLarge, QuotaExceeded, StorageFull};
        match e.kind() {
            StorageFull | QuotaExceeded | FileTooLarge => WriteFailure::DiskFull,
            _ => WriteFailure::Io,
        }
    }

    /// A stable name: `disk_full` or `io`.
    pub fn name(self) -> &'static str {
        match self {
            WriteFailure::DiskFull => "disk_full",
            WriteFailure::Io => "io",
        }
    }
}

fn write_message(kind: WriteFailure, message: &str) -> String {
    match kind {
        WriteFailure::DiskFull => format!(
            "the disk is full ({message}); nothing of this write was stored: free space on the data \
             directory's disk, then retry (reads go on working; no restart is needed)"
        ),
        WriteFailure::Io => format!(
            "the write failed at the disk ({message}); nothing of it was stored: retry (the store \
             reopens itself before the next write)"
        ),
    }
}

impl StoreError {
    /// Why a write failed at the disk, if that is what this error is.
    pub fn write_failure(&self) -> Option<WriteFailure> {
        match self {
            StoreError::Write { kind, .. } => Some(*kind),
            StoreError::GroupCommit { kind, .. } => *kind,
            _ => None,
        }
    }
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
