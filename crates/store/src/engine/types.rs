//! What goes into and comes out of an [`Engine`](super::Engine).

use neardup::dedup::UNKNOWN_FEATURES;
use neardup::Sketch;
use serde::Serialize;

/// What [`Engine::submit`](super::Engine::submit) does with a document.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Store it (replacing a document with the same id) and report its near
    /// duplicates.
    Insert,
    /// Only report its near duplicates.
    Check,
    /// Store it only if it has no near duplicate, atomically: of many
    /// concurrent near-identical submissions exactly one is stored.
    InsertIfUnique,
}

/// What counts as near for a request: the core's rule of a k (SimHash)
/// or a threshold (MinHash), never both.
pub use neardup::near::Near;

/// A document to submit.
#[derive(Clone, Debug, PartialEq)]
pub struct NewDoc {
    /// Its id.
    pub id: String,
    /// Its fingerprint or signature (made with the engine's pipeline).
    pub sketch: Sketch,
    /// A hash of its text, if it came as text.
    pub content_hash: Option<u64>,
    /// The caller's metadata.
    pub metadata: Option<serde_json::Value>,
    /// How many features voted in its fingerprint
    /// ([`Fingerprinter::fingerprint_counted`](neardup::Fingerprinter::fingerprint_counted)),
    /// if known: the length the pipeline's radius rule needs. Unknown
    /// counts as a long document.
    pub features: Option<u32>,
}

impl NewDoc {
    /// A document with an id and a fingerprint or signature, no hash, no
    /// metadata, no feature count.
    pub fn new(id: impl Into<String>, sketch: impl Into<Sketch>) -> NewDoc {
        NewDoc { id: id.into(), sketch: sketch.into(), content_hash: None, metadata: None, features: None }
    }
}

/// A document's feature count as the index keeps it.
pub(crate) fn features_of(f: Option<u32>) -> usize {
    f.map_or(UNKNOWN_FEATURES, |n| n as usize)
}

/// A stored document near a query.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Found {
    /// Its id.
    pub id: String,
    /// The distance to the query: differing bits of the fingerprints
    /// (SimHash), differing values of the signatures (MinHash).
    pub distance: u32,
    /// The estimated Jaccard similarity (MinHash): equal values over all.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub similarity: Option<f64>,
}

/// What [`Engine::submit`](super::Engine::submit) did.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Outcome {
    /// Whether the document was stored.
    pub inserted: bool,
    /// The stored documents near it before it was stored (sorted by
    /// distance, then id); for a batch, earlier documents of the same batch
    /// that were stored count too.
    pub matches: Vec<Found>,
}

/// Sizes and settings, for `/v1/stats` and `neardup index stats`.
#[derive(Clone, Debug, Serialize)]
pub struct EngineStats {
    /// Stored documents.
    pub documents: u64,
    /// `simhash` or `minhash`.
    pub method: neardup::minhash::Method,
    /// The fingerprint width (SimHash).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bits: Option<u32>,
    /// The radius pass 0's index tables serve, larger ones scan (SimHash).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub table_k: Option<u32>,
    /// Values per signature (MinHash).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permutations: Option<usize>,
    /// The rule requests without a k or threshold get: the pipeline's
    /// radius unless the engine was opened with a fixed one, e.g. `k = 8
    /// below 600 features, else 4`; or its threshold and banding, e.g.
    /// `Jaccard ≥ 0.5 (32 bands × 4 rows of 128 values)`.
    pub radius: String,
    /// Bytes of the in-memory index.
    pub index_bytes: u64,
    /// Bytes of the database on disk (0 in memory).
    pub disk_bytes: u64,
    /// The pipeline's id (16 hex digits).
    pub pipeline: String,
    /// Segments of the index (merged in the background after commits; a
    /// persistently high count means the merger falls behind).
    pub segments: u64,
    /// Durable commits of documents since the engine opened (a group commit
    /// counts once, however many writes it carried).
    pub commits: u64,
}

/// Where an engine's index came from when it opened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IndexSource {
    /// Loaded from a snapshot file that matched the store.
    Snapshot,
    /// An on-disk index opened from its segments (and the documents
    /// written after its last flush, read back into memory).
    Segments {
        /// Segment files.
        segments: usize,
        /// Documents read back into memory.
        in_memory: u64,
    },
    /// Rebuilt from the store, for the reason given.
    Rebuilt {
        /// Why the snapshot (or the on-disk index) was not used.
        why: String,
    },
}

impl std::fmt::Display for IndexSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IndexSource::Snapshot => f.write_str("index loaded from its snapshot"),
            IndexSource::Rebuilt { why } => write!(f, "index rebuilt from the store ({why})"),
            IndexSource::Segments { segments, in_memory } => write!(
                f,
                "index opened from {segments} segment{} on disk ({in_memory} recent document{} read back)",
                if *segments == 1 { "" } else { "s" },
                if *in_memory == 1 { "" } else { "s" }
            ),
        }
    }
}
