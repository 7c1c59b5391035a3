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
