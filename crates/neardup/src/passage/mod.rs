//! Passage-level near duplicates: which parts of one document are copied
//! from another.
//!
//! Two texts at hand are aligned on their tokens ([`Aligner::align`]):
//! words, and Han, kana and Hangul characters one by one. The runs of
//! tokens they share (seeds) are clustered in both texts at once, across
//! small gaps, into one [`Span`] per copied passage: a changed word,
//! dropped punctuation, new line breaks or reordered sentences inside a
//! passage do not split it, and its boundaries fall on its first and last
//! copied word.
//!
//! Against a library, where only an index is at hand, each document is cut
//! into sentences ([`sentences`]) and the sentences into overlapping
//! windows ([`passages`]: one starting at each sentence, `window`
//! sentences long and at least `min_chars` characters), fingerprinted with
//! the pipeline. [`PassageIndex::find`] looks up each window of a text and
//! [`merge_window_matches`] joins consecutive matched windows into spans;
//! their boundaries are window-precise, and the documents they name are
//! the candidates a report aligns the text with when the library keeps
//! its texts. Entries are named `ID#START-END` ([`entry_name`]).
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
//!
//! // A changed word and new line breaks inside the copy: still one span.
//! let edited = copied.replace("short", "small").replace(". ", ".\n");
//! let found = aligner.align(&format!("Intro text here. {edited} Bye."), &b);
//! assert_eq!(found.spans.len(), 1);
//! # Ok::<(), neardup::Error>(())
//! ```

pub use crate::config::passage::PassageConfig;

mod align;
mod cluster;
mod indexed;
mod keys;
mod library;
mod memory;
mod seeds;
mod sentences;
#[cfg(test)]
mod tests;
mod tokens;
mod windows;

pub use align::{index_radius, AlignSettings, Aligner, Alignment, Prepared, Span};
pub use indexed::{
    covered_chars, entry_name, merge_window_matches, parse_entry_name, Copied, IndexedSpan, PassageEntry,
    PassageIndex, WindowMatch,
};
pub use keys::{LibraryKeys, QueryKey, KEYS_VERSION};
pub use library::{find_in_library, Library, LibraryHit, MAX_KEY_DOCUMENTS};
pub use memory::{Joined, MemLibrary};
pub use sentences::sentences;
pub use windows::{passages, FingerprintedPassage, Passage, PassageDoc};
