//! Exact dedup: records whose text (the pipeline's normalized text, or the
//! raw text) is identical, found by a 128-bit hash of it (XXH3-128: a
//! false match among 10^12 records has a chance of about 10^-15).
//!
//! ```
//! use neardup::dedup::{exact_key, ExactRecords, Keep};
//!
//! let mut records = ExactRecords::new();
//! for text in ["Same words.", "Other words.", "Same words."] {
//!     records.push(exact_key(text), text.chars().count());
//! }
//! let found = records.dedup(Keep::First, false);
//! assert_eq!(found.kept_mask(3), [true, true, false]);
//! assert_eq!(found.clusters[0].members, [0, 2]);
//! ```

use std::borrow::Cow;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::{kept_of, Cluster, DedupResult, Keep, Pair};
use crate::error::Error;
use crate::stages::Stages;

/// Which text the exact key hashes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExactText {
    /// The text after the pipeline's normalizers (Unicode NFKC and lower
    /// case for the presets): texts that differ only in case or in
    /// full-width forms are the same (the default).
    #[default]
    Normalized,
    /// The text as it was read, byte for byte.
    Raw,
}

impl std::str::FromStr for ExactText {
    type Err = Error;
    fn from_str(s: &str) -> Result<ExactText, Error> {
        match s {
            "normalized" => Ok(ExactText::Normalized),
            "raw" => Ok(ExactText::Raw),
            _ => Err(Error::Config(format!("{s:?}: the exact text is normalized or raw"))),
        }
    }
}

impl ExactText {
    /// The text this mode hashes: `text` itself, or `stages`' normalized text.
    pub fn text<'t>(self, stages: &Stages, text: &'t str) -> Cow<'t, str> {
        match self {
            ExactText::Raw => Cow::Borrowed(text),
            ExactText::Normalized => stages.normalize(text),
        }
    }
}

/// The exact key of a text: its XXH3-128 hash.
pub fn exact_key(text: &str) -> u128 {
    xxhash_rust::xxh3::xxh3_128(text.as_bytes())
}

/// Whether a record of a batch repeats an earlier text ([`ExactPass`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Repeat {
    /// No: it is signed.
    No,
    /// The text of the record at this index, read before the batch.
    Earlier(u32),
    /// The text of the record at this position of the same batch.
    InBatch(usize),
}

/// The exact pass of a dedup: records whose text is exactly one seen
/// before take its sketch instead of being signed again (the same
/// sketch, found by a hash of the text), within a memory limit
/// ([`SeenTexts`]: past it, copies of new texts are signed again, which
/// changes the speed, never the answer).
///
/// ```
/// use neardup::dedup::{ExactPass, Repeat};
///
/// let mut pass = ExactPass::with_memory(1 << 20);
/// let (repeats, keys) = pass.repeats(&["a", "b", "a"]);
/// assert_eq!(repeats, [Repeat::No, Repeat::No, Repeat::InBatch(0)]);
/// for (at, (r, key)) in repeats.iter().zip(&keys).enumerate() {
///     pass.record(*key, at as u32, *r != Repeat::No);
/// }
/// assert_eq!(pass.repeats(&["b"]).0, [Repeat::Earlier(1)]);
/// assert_eq!(pass.copies(), 1);
/// ```
#[derive(Clone, Debug, Default)]
pub struct ExactPass {
    seen: SeenTexts,
    copies: u64,
}

impl ExactPass {
    /// A pass that remembers as many texts as fit in `bytes`.
    pub fn with_memory(bytes: u64) -> ExactPass {
        ExactPass { seen: SeenTexts::with_memory(bytes), copies: 0 }
    }

    /// Which of `texts` (a batch, in order) repeat a text recorded before
    /// or earlier in the batch, and the exact key of each.
    pub fn repeats(&self, texts: &[&str]) -> (Vec<Repeat>, Vec<u128>) {
        let keys: Vec<u128> = texts.par_iter().map(|t| exact_key(t)).collect();
        let mut first: rustc_hash::FxHashMap<u128, usize> = Default::default();
        let repeats = keys
            .iter()
            .enumerate()
            .map(|(i, k)| match self.seen.get(*k) {
                Some(at) => Repeat::Earlier(at),
                None => match first.entry(*k) {
                    std::collections::hash_map::Entry::Occupied(e) => Repeat::InBatch(*e.get()),
                    std::collections::hash_map::Entry::Vacant(e) => {
                        e.insert(i);
                        Repeat::No
                    }
                },
            })
            .collect();
        (repeats, keys)
    }

    /// Notes that the text of `key` is record `at`: a copy (counted), or
    /// a new text (remembered).
    pub fn record(&mut self, key: u128, at: u32, copy: bool) {
        if copy {
            self.copies += 1;
        } else {
            self.seen.insert(key, at);
        }
    }

    /// How many records took an earlier record's sketch.
    pub fn copies(&self) -> u64 {
        self.copies
    }
}

/// The texts seen so far, by exact key, each with the first record that
/// has it, within a memory limit: what a reader consults to give a text
/// it has seen the sketch of its first copy instead of signing it again
/// (equal texts have equal sketches, whatever the pipeline). Once the
/// limit is reached, new texts are no longer remembered: their copies
/// are signed like any text, which gives the same sketches, so the limit
/// changes the speed, never the answer. The table never outgrows its
/// limit, rehashing included, so a corpus of any size keeps it bounded.
///
/// ```
/// use neardup::dedup::{exact_key, SeenTexts};
///
/// let mut seen = SeenTexts::with_memory(1 << 20);
/// assert!(seen.insert(exact_key("a text"), 0));
/// assert_eq!(seen.get(exact_key("a text")), Some(0));
/// assert_eq!(seen.get(exact_key("another")), None);
/// assert!(seen.capacity() > 10_000);
/// ```
#[derive(Clone, Debug, Default)]
pub struct SeenTexts {
    map: hashbrown::HashMap<u128, u32, rustc_hash::FxBuildHasher>,
    capacity: usize,
}

impl SeenTexts {
    /// Bytes a bucket of the table takes: a key and a record (32 bytes
    /// with the key's alignment) and a control byte.
    const BUCKET: usize = std::mem::size_of::<(u128, u32)>() + 1;

    /// A table that remembers as many texts as fit in `bytes`, counting
    /// the moment it grows, when its old and new arrays are both held.
    pub fn with_memory(bytes: u64) -> SeenTexts {
        // A hash table of 2^b buckets holds up to 7/8 of them and grows
        // from 2^(b-1): its peak is 1.5 × 2^b buckets.
        let most = usize::try_from(bytes).unwrap_or(usize::MAX) / Self::BUCKET * 2 / 3;
        let buckets = if most < 8 { 0 } else { 1 << most.ilog2() };
        SeenTexts { map: Default::default(), capacity: buckets / 8 * 7 }
    }

    /// The first record with the text of `key`, if it is remembered.
    pub fn get(&self, key: u128) -> Option<u32> {
        self.map.get(&key).copied()
    }

    /// Remembers that record `at` has the text of `key`, unless a record
    /// before it does; false when the table is full and a new text is not
    /// remembered.
    pub fn insert(&mut self, key: u128, at: u32) -> bool {
        if self.map.len() >= self.capacity && !self.map.contains_key(&key) {
            return false;
        }
        self.map.entry(key).or_insert(at);
        true
    }

    /// How many texts are remembered.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// How many texts the table may remember.
    pub fn capacity(&self) -> usize {
        self.capacity
    }
}

/// A column of exact keys and lengths, in input order (a record's id is
/// its position): 24 bytes a record.
#[derive(Clone, Debug, Default)]
pub struct ExactRecords {
    keys: Vec<u128>,
    lengths: Vec<u64>,
}

impl ExactRecords {
    /// No records.
    pub fn new() -> ExactRecords {
        ExactRecords::default()
    }

    /// Appends a record: its key ([`exact_key`]) and length in characters.
    pub fn push(&mut self, key: u128, chars: usize) {
        self.keys.push(key);
        self.lengths.push(chars as u64);
    }

    /// How many records.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Record `i`'s key.
    pub fn key(&self, i: u32) -> u128 {
        self.keys[i as usize]
    }

    /// Record `i`'s length in characters.
    pub fn length(&self, i: u32) -> u64 {
        self.lengths[i as usize]
    }

    /// The clusters of records with equal keys (two or more), ordered by
    /// their first member, the kept one chosen by `keep`; with `pairs`,
    /// each removed member paired with the kept one (distance 0).
    pub fn dedup(&self, keep: Keep, pairs: bool) -> DedupResult {
        let t = std::time::Instant::now();
        let mut order: Vec<(u128, u32)> = self.keys.iter().enumerate().map(|(i, &k)| (k, i as u32)).collect();
        order.par_sort_unstable();
        let mut clusters: Vec<Cluster> = order
            .chunk_by(|a, b| a.0 == b.0)
            .filter(|g| g.len() > 1)
            .map(|g| {
                let members: Vec<u32> = g.iter().map(|&(_, i)| i).collect();
                Cluster { kept: kept_of(&members, keep, |i| self.length(i)), members }
            })
            .collect();
        clusters.par_sort_unstable_by_key(|c| c.members[0]);
        let pairs = if pairs {
            let mut v: Vec<Pair> = clusters
                .iter()
                .flat_map(|c| {
                    c.members.iter().filter(move |&&m| m != c.kept).map(move |&m| Pair {
                        a: m.min(c.kept),
                        b: m.max(c.kept),
                        distance: 0,
                        score: None,
                    })
                })
                .collect();
            v.sort_unstable_by_key(|p| (p.a, p.b));
            v
        } else {
            Vec::new()
        };
        DedupResult {
            clusters,
            pairs,
            layout: "exact: XXH3-128 of the text".into(),
            timings: vec![("group equal texts", t.elapsed().as_secs_f64())],
            indexed: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Whatever the limit, a remembered text names its first record
        /// (as a map of every text would), and a full table forgets no text
        /// it had.
        #[test]
        fn seen_texts_name_first_records(texts in proptest::collection::vec(0u16..300, 0..600), kb in 0u64..24) {
            let mut seen = SeenTexts::with_memory(kb << 10);
            let mut first = std::collections::HashMap::new();
            for (at, t) in texts.iter().enumerate() {
                let key = exact_key(&t.to_string());
                let had = seen.get(key);
                if let Some(f) = had {
                    prop_assert_eq!(Some(&f), first.get(&key));
                }
                let room = seen.len() < seen.capacity();
                let remembered = seen.insert(key, at as u32);
                prop_assert_eq!(remembered, seen.get(key).is_some());
                prop_assert!(remembered || !room);
                if had.is_none() && remembered {
                    prop_assert_eq!(seen.get(key), Some(at as u32));
                }
                first.entry(key).or_insert(at as u32);
                prop_assert!(seen.len() <= seen.capacity());
            }
        }
    }

    #[test]
    fn seen_texts_stay_within_their_memory() {
        for bytes in [0u64, 100, 4 << 10, 1 << 20, 3 << 20] {
            let mut seen = SeenTexts::with_memory(bytes);
            for i in 0..(seen.capacity() as u128 + 1000) {
                seen.insert(exact_key(&i.to_string()), i as u32);
            }
            assert_eq!(seen.len(), seen.capacity());
            // The table's arrays, and the moment it grew into them from
            // half as many.
            assert!(seen.map.allocation_size() * 3 / 2 <= bytes as usize + 64, "{bytes}");
            if bytes >= 1 << 20 {
                assert!(seen.map.allocation_size() * 3 > bytes as usize, "{bytes}: a third is wasted");
            }
        }
    }

    proptest! {
        /// The clusters are the groups of equal texts of a brute-force scan.
        #[test]
        fn clusters_are_the_groups_of_equal_texts(texts in proptest::collection::vec(0u8..6, 0..80), keep in 0..3usize) {
            let keep = [Keep::First, Keep::Longest, Keep::Shortest][keep];
            let texts: Vec<String> = texts.iter().map(|&t| "ab".repeat(t as usize)).collect();
            let mut r = ExactRecords::new();
            for t in &texts {
                r.push(exact_key(t), t.len());
            }
            let found = r.dedup(keep, true);
            let mut want: Vec<Vec<u32>> = Vec::new();
            for (i, t) in texts.iter().enumerate() {
                let first = texts.iter().position(|u| u == t).unwrap();
                if first == i {
                    let members: Vec<u32> = (0..texts.len()).filter(|&j| texts[j] == *t).map(|j| j as u32).collect();
                    if members.len() > 1 {
                        want.push(members);
                    }
                }
            }
            let got: Vec<Vec<u32>> = found.clusters.iter().map(|c| c.members.clone()).collect();
            prop_assert_eq!(got, want);
            // Equal texts have equal lengths: every policy keeps the first.
            for c in &found.clusters {
                prop_assert_eq!(c.kept, c.members[0]);
            }
            prop_assert_eq!(found.pairs.len(), found.removed());
        }
    }

    /// (The preset's tokenizer needs jieba, which the core builds without.)
    #[cfg(feature = "jieba")]
    #[test]
    fn normalized_text_folds_case_and_width() {
        let stages = Stages::load(crate::presets::config("minhash").unwrap()).unwrap();
        let key = |mode: ExactText, t: &str| exact_key(&mode.text(&stages, t));
        assert_eq!(key(ExactText::Normalized, "Ｈｅｌｌｏ World"), key(ExactText::Normalized, "hello world"));
        assert_ne!(key(ExactText::Raw, "Ｈｅｌｌｏ World"), key(ExactText::Raw, "hello world"));
    }
}
