//! neardup finds near-duplicate texts with SimHash (Charikar 2002; Manku,
//! Jain & Das Sarma 2007), in Chinese, English and mixed text.
//!
//! A document becomes a 64- or 128-bit [`Fingerprint`] through a pipeline
//! of stages, each a trait with serde-tagged built-ins:
//!
//! 1. **normalize** ([`normalize`]): NFKC, lower case, punctuation stripping;
//! 2. **tokenize** ([`tokenize`]): words (UAX #29, jieba for Chinese,
//!    bigrams for kana and Hangul), character n-grams, word shingles;
//! 3. **filter** ([`filter`]): stop words, punctuation, short tokens;
//! 4. **weight** ([`weight`]): uniform, tf, tf-idf, TextRank;
//! 5. **select** ([`select`]): optionally only the top N features;
//! 6. **hash** ([`hash`]): XXH3, FNV-1a, MD5, SipHash, lookup3;
//! 7. **vote** ([`vote`]): lane `j` sums `±w`; bit `j` is 1 iff the sum is positive.
//!
//! Documents whose fingerprints differ in at most `k` bits are near
//! duplicates. A [`PipelineConfig`] is data that fully determines the
//! fingerprints; [`presets`] names the common ones.
//!
//! ```
//! use neardup::Fingerprinter;
//!
//! let fingerprinter = Fingerprinter::preset("default")?;
//! let a = fingerprinter.fingerprint("SimHash maps similar documents to similar fingerprints, \
//!                         so near duplicates differ in only a few bits.");
//! let b = fingerprinter.fingerprint("SimHash maps similar documents to similar fingerprints, \
//!                         so near-duplicates differ in only a few bits!");
//! let c = fingerprinter.fingerprint("Completely unrelated text about cooking rice and beans.");
//! assert!(a.distance(b) < a.distance(c));
//!
//! // Python users' fingerprints, bit for bit (PyPI `simhash` 2.1.2):
//! let py = Fingerprinter::preset("python-simhash")?;
//! assert_eq!(py.fingerprint("").to_string(), "e9800998ecf8427e");
//! # Ok::<(), neardup::Error>(())
//! ```

#![deny(missing_docs)]

// The modules form layers, bottom-up; each imports only those below it
// (`scripts/import_layers.py`, run by CI, fails on a circle). ARCHITECTURE.md
// draws the picture.
//
// 1. foundation: errors, SIMD levels, the fingerprint value and the
//    near-duplicate rule over Hamming distances; corpus cleaning, which
//    works on text alone (no pipeline);
pub mod clean;
pub mod compat;
pub mod error;
pub mod fingerprint;
pub mod radius;
mod scan;
pub mod simd;
// 2. the exact Hamming index (knows nothing of text) and the text stages;
pub mod filter;
pub mod hash;
pub mod index;
pub mod normalize;
pub mod select;
pub mod tokenize;
pub mod weight;
// 3. configuration as data (pipeline, presets, method, LSH, passages);
pub mod config;
// 4. the loaded text stages, shared by both methods, and exact similarity;
pub mod similarity;
pub mod stages;
// 5. the two methods side by side;
pub mod minhash;
pub mod simhash;
// 6. what a document is reduced to, by either method;
pub mod sketch;
// 7. the jobs over either method;
pub mod dedup;
pub mod meta;
pub mod passage;
pub mod quality;
pub mod report;
// 8. the front door.
pub mod detector;
pub mod disk;
pub mod near;

pub use config::presets;
pub use config::{PipelineConfig, FORMAT_VERSION};
pub use error::{Error, Result};
pub use filter::FilterConfig;
pub use fingerprint::{Bits, Fingerprint};
pub use hash::HashConfig;
pub use normalize::NormalizerConfig;
pub use radius::Radius;
pub use select::SelectConfig;
pub use simhash::{
    sparse, vote, Explanation, FeatureChange, FeatureVote, Fingerprinter, FingerprinterBuilder,
};
pub use sketch::Sketch;
pub use tokenize::{HanSplit, TokenizerConfig};
pub use weight::WeightConfig;

#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeDoctests;
