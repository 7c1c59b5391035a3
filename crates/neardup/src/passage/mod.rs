//! Passage-level near duplicates: which parts of one document are copied
//! from another.
//!
//! A document is split into sentences ([`sentences`]: Chinese and English
//! rules), and the sentences are grouped into overlapping windows
//! ([`passages`]: one window starting at each sentence, `window` sentences
//! long and at least `min_chars` characters). Each window is fingerprinted
//! with the pipeline. Windows of A and B within the radius are candidates;
//! inside each candidate pair, sentences are matched by word Jaccard, which
//! puts the boundaries of a copied span on its own sentences rather than on
//! the windows around it ([`Aligner::align`]). Matched sentences that follow
//! each other in both documents form a [`Span`].
//!
//! Against an index of window fingerprints (where the other text is not at
//! hand), [`PassageIndex::find`] looks up each window and
//! [`merge_window_matches`] joins consecutive matched windows into spans;
//! their boundaries are then window-precise. Entries are named
//! `ID#START-END` ([`entry_name`]).
//!
//! ```
//! use neardup::passage::Aligner;
//! use neardup::Fingerprinter;
//!
//! let copied = "SimHash maps each document to a short fingerprint. Similar documents get \
//!               fingerprints that differ in few bits. An index over permuted tables finds \
//!               them without a full scan. This makes deduplication of web crawls cheap.";
//! let a = format!("Our report starts here. It talks about the weather today. {copied} The end.");
//! let b = format!("Cooking rice takes twenty minutes. {copied} Add salt to taste.");
//! let aligner = Aligner::new(Fingerprinter::preset("default")?);
//! let found = aligner.align(&a, &b);
//! assert_eq!(found.spans.len(), 1);
//! assert_eq!(&a[found.spans[0].a.clone()], copied);
//! assert_eq!(&b[found.spans[0].b.clone()], copied);
//! assert!(found.similarity() > 0.7 && found.similarity() < 0.9);
//! # Ok::<(), neardup::Error>(())
//! ```

pub use crate::config::passage::PassageConfig;

mod align;
mod indexed;
mod scan;
mod sentences;
#[cfg(test)]
mod tests;
mod windows;

pub use align::{index_radius, pair_radius, Aligner, Alignment, Span};
pub use indexed::{
    covered_chars, entry_name, merge_window_matches, parse_entry_name, Copied, IndexedSpan, PassageEntry,
    PassageIndex, WindowMatch,
};
pub use sentences::sentences;
pub use windows::{passages, FingerprintedPassage, Passage, PassageDoc};
