//! Cleaning a corpus below the document: repeated units (boilerplate)
//! and repeated substrings cut out of the documents that carry them.
//!
//! - [`units`]: paragraphs, lines and sentences (Chinese and English) as
//!   byte spans, and the key of a unit's normalized text;
//! - [`counter`]: counting 128-bit keys in bounded memory (sorted runs on
//!   disk, merged);
//! - [`boilerplate`]: the two-pass job that removes units repeated across
//!   documents (`neardup boilerplate`, Python `neardup.boilerplate`);
//! - [`substrings`]: every repeated span of at least L bytes, found with a
//!   suffix array and snapped to token boundaries (`neardup substrings`).

pub mod boilerplate;
pub mod counter;
pub mod substrings;
pub mod units;

pub use boilerplate::{Boilerplate, Cleaned, Cleaner, Counting, DocUnits, RemovedUnit, Rule};
pub use counter::KeyCounter;
pub use units::{unit_key, words_up_to, Unit, MIN_UNIT_WORDS};
