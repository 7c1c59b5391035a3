//! A library of documents with their texts, searched by key
//! ([`LibraryKeys`]): the documents a text may copy from
//! ([`find_in_library`]), to be aligned with it.

use std::collections::HashMap;
use std::ops::Range;

use super::keys::LibraryKeys;
use crate::error::Result;

/// A key held by more documents than this is a stock phrase, not evidence
/// of copying: it finds no candidate ([`find_in_library`]).
pub const MAX_KEY_DOCUMENTS: usize = 2000;

/// What a report needs of a library: its keys' settings, the documents
/// holding a key, and a document's id and text. The store's passage
/// library (segments on disk and a memory part) is one.
pub trait Library: Sync {
    /// How its documents were keyed.
    fn keys(&self) -> LibraryKeys;

    /// Adds to `out` the sequence numbers of the documents holding `key`,
    /// unless more than `cap` hold it.
    ///
    /// # Errors
    ///
    /// A damaged library.
    fn lookup(&self, key: u64, cap: usize, out: &mut Vec<u64>) -> Result<()>;

    /// Document `seq`'s id, or `None` if it was removed.
    ///
    /// # Errors
    ///
    /// A damaged library.
    fn id(&self, seq: u64) -> Result<Option<String>>;

    /// Document `seq`'s text, or `None` if it was removed.
    ///
    /// # Errors
    ///
    /// A damaged library.
    fn text(&self, seq: u64) -> Result<Option<String>>;
}

/// A library document some of a text's keys were found in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LibraryHit {
    /// Its sequence number.
    pub seq: u64,
    /// The bytes of the text its keys cover, merged, in order.
    pub a: Vec<Range<usize>>,
    /// Their total length.
    pub bytes: usize,
}

/// The library documents holding keys of `text`, by the bytes of `text`
/// their keys cover (most first; ties by sequence number).
///
/// # Errors
///
/// A damaged library.
pub fn find_in_library(library: &dyn Library, text: &str) -> Result<Vec<LibraryHit>> {
    let mut by_key: HashMap<u64, Vec<Range<usize>>> = HashMap::new();
    for q in library.keys().query(text) {
        by_key.entry(q.key).or_default().push(q.bytes);
    }
    let mut keys: Vec<(u64, Vec<Range<usize>>)> = by_key.into_iter().collect();
    keys.sort_unstable_by_key(|k| k.0);
    let mut ranges: HashMap<u64, Vec<Range<usize>>> = HashMap::new();
    let mut seqs = Vec::new();
    for (key, places) in &keys {
        seqs.clear();
        library.lookup(*key, MAX_KEY_DOCUMENTS, &mut seqs)?;
        seqs.sort_unstable();
        seqs.dedup();
        for &s in &seqs {
            ranges.entry(s).or_default().extend(places.iter().cloned());
        }
    }
    let mut hits: Vec<LibraryHit> = ranges
        .into_iter()
        .map(|(seq, mut a)| {
            a.sort_unstable_by_key(|r| r.start);
            let mut merged: Vec<Range<usize>> = Vec::with_capacity(a.len());
            for r in a {
                match merged.last_mut() {
                    Some(m) if r.start <= m.end => m.end = m.end.max(r.end),
                    _ => merged.push(r),
                }
            }
            let bytes = merged.iter().map(|r| r.end - r.start).sum();
            LibraryHit { seq, a: merged, bytes }
        })
        .collect();
    hits.sort_unstable_by(|x, y| y.bytes.cmp(&x.bytes).then(x.seq.cmp(&y.seq)));
    Ok(hits)
}
