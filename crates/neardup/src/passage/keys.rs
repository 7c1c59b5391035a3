//! A library's keys: the seeds by which a passage library finds the
//! documents a text may copy from, without reading them.
//!
//! A document is indexed under its *winnowed* seeds (Schleimer, Wilkerson
//! and Aiken, "Winnowing: local algorithms for document fingerprinting",
//! SIGMOD 2003): of every [`LibraryKeys::window`] consecutive seeds, the one
//! of least hash (the rightmost of equals), each kept once. A text looks up
//! every one of its seeds, so any run of tokens it shares with an indexed
//! document that holds `window` seeds (with 4-word seeds and a window of 6:
//! 9 words, or 13 CJK characters) finds that document, whatever surrounds
//! the run. Keys are hashes of the aligner's own seeds
//! ([`Aligner`](super::Aligner)), so the documents found are the ones the
//! alignment then finds passages in.
//!
//! Keys are stored on disk: their hash is a file format
//! ([`KEYS_VERSION`]; a golden test pins it).

use std::ops::Range;

use serde::{Deserialize, Serialize};

use super::seeds::{seeds, Seed};
use super::tokens::{Tokens, WORD};

/// The version of the keys' definition (tokens, their folding and hash,
/// seeds, winnowing). A library records it; a library of another version
/// is rebuilt, not read.
pub const KEYS_VERSION: u32 = 1;

/// How a library keys its documents (stored with the library).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LibraryKeys {
    /// Words in a seed (two CJK characters count as a word).
    pub seed_words: u32,
    /// Seeds per winnowing window.
    pub window: u32,
    /// [`KEYS_VERSION`] when the library was made.
    pub version: u32,
}

impl Default for LibraryKeys {
    /// Seeds of 4 words (the aligner's default), windows of 6 seeds.
    fn default() -> LibraryKeys {
        LibraryKeys { seed_words: 4, window: 6, version: KEYS_VERSION }
    }
}

/// One seed of a text to look up: its key and the bytes it covers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueryKey {
    /// The key.
    pub key: u64,
    /// Its bytes in the text.
    pub bytes: Range<usize>,
}

impl LibraryKeys {
    /// The keys a document is indexed under: its winnowed seeds' hashes,
    /// sorted, each once (none for a text shorter than a seed).
    ///
    /// ```
    /// use neardup::passage::LibraryKeys;
    ///
    /// let keys = LibraryKeys::default();
    /// let doc = "the quick brown fox jumps over the lazy dog while the cat sleeps on the warm mat";
    /// let indexed = keys.of(doc);
    /// assert!(!indexed.is_empty() && indexed.windows(2).all(|w| w[0] < w[1]));
    /// // A text sharing nine words with it looks one of them up.
    /// let text = "yesterday fox jumps over the lazy dog while the cat slept";
    /// let looked_up: Vec<u64> = keys.query(text).into_iter().map(|q| q.key).collect();
    /// assert!(looked_up.iter().any(|k| indexed.binary_search(k).is_ok()));
    /// ```
    pub fn of(&self, text: &str) -> Vec<u64> {
        let seeds = seeds(&Tokens::of(text), self.seed_words.max(1) * WORD);
        let mut keys: Vec<u64> = winnow(&seeds, self.window.max(1) as usize).map(|i| seeds[i].hash).collect();
        keys.sort_unstable();
        keys.dedup();
        keys
    }

    /// Every seed of `text`, with its bytes, in order: what a report looks
    /// up.
    pub fn query(&self, text: &str) -> Vec<QueryKey> {
        let tokens = Tokens::of(text);
        seeds(&tokens, self.seed_words.max(1) * WORD)
            .into_iter()
            .map(|s| QueryKey { key: s.hash, bytes: tokens.bytes(s.start..s.end) })
            .collect()
    }
}

/// The seeds winnowing keeps: in every window of `w` consecutive seeds the
/// rightmost of least hash, each index once, in order (all of them when
/// fewer than `w`).
fn winnow(seeds: &[Seed], w: usize) -> impl Iterator<Item = usize> + '_ {
    let n = seeds.len();
    let windows = if n == 0 { 0 } else { n.saturating_sub(w) + 1 };
    let w = w.min(n.max(1));
    // A monotone deque of indices: hashes increasing from front to back.
    let mut deque: std::collections::VecDeque<usize> = std::collections::VecDeque::new();
    let mut next = 0;
    let mut last = None;
    (0..windows).filter_map(move |start| {
        while next < start + w {
            while deque.back().is_some_and(|&j| seeds[j].hash >= seeds[next].hash) {
                deque.pop_back();
            }
            deque.push_back(next);
            next += 1;
        }
        while deque.front().is_some_and(|&j| j < start) {
            deque.pop_front();
        }
        let min = *deque.front().expect("a window holds a seed");
        (last != Some(min)).then(|| {
            last = Some(min);
            min
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seeds_of(hashes: &[u64]) -> Vec<Seed> {
        hashes.iter().enumerate().map(|(i, &hash)| Seed { start: i, end: i + 1, hash }).collect()
    }

    proptest::proptest! {
        /// Against brute force: each window's rightmost least hash, kept
        /// once per run of windows choosing it.
        #[test]
        fn winnow_is_the_brute_force(hashes in proptest::collection::vec(0u64..8, 0..50), w in 1usize..8) {
            let s = seeds_of(&hashes);
            let mut want: Vec<usize> = Vec::new();
            let n = s.len();
            let windows = if n == 0 { 0 } else { n.saturating_sub(w) + 1 };
            for start in 0..windows {
                let end = (start + w).min(n);
                let min = (start..end).rev().min_by_key(|&j| s[j].hash).unwrap();
                if want.last() != Some(&min) {
                    want.push(min);
                }
            }
            proptest::prop_assert_eq!(winnow(&s, w).collect::<Vec<_>>(), want);
        }

        /// The guarantee: a text sharing a run of `window` seeds' tokens
        /// with a document looks up one of its keys.
        #[test]
        fn a_shared_run_is_found(pre in proptest::collection::vec(0usize..40, 0..30), run in proptest::collection::vec(0usize..40, 9..20), post in proptest::collection::vec(0usize..40, 0..30)) {
            let words: Vec<String> = (0..40).map(|i| format!("w{i}")).collect();
            let text = |v: &[usize]| v.iter().map(|&i| words[i].as_str()).collect::<Vec<_>>().join(" ");
            let keys = LibraryKeys::default();
            let doc = format!("{} {} {}", text(&pre), text(&run), text(&post));
            let indexed = keys.of(&doc);
            let found = keys.query(&format!("other words {} here", text(&run)));
            proptest::prop_assert!(found.iter().any(|q| indexed.binary_search(&q.key).is_ok()));
        }
    }

    /// The keys are a file format: these must not change without a new
    /// [`KEYS_VERSION`].
    #[test]
    fn golden_keys() {
        let keys = LibraryKeys::default();
        let en = keys.of("Near-duplicate detection finds documents that are almost the same, \
                          even when a few words were changed.");
        let zh = keys.of("近似重复检测可以找到几乎相同的文档，即使其中少数词语被改动。");
        assert_eq!((en.len(), zh.len()), (GOLDEN_EN.len(), GOLDEN_ZH.len()), "{en:x?} {zh:x?}");
        assert_eq!((en.as_slice(), zh.as_slice()), (GOLDEN_EN, GOLDEN_ZH), "{en:x?} {zh:x?}");
    }

    const GOLDEN_EN: &[u64] =
        &[0x2e48fe10266f9041, 0x2fe35d36ee62e6e9, 0x496167880497d568, 0x7e24962ad5b20900];
    const GOLDEN_ZH: &[u64] = &[
        0x218c990eea532cc5,
        0x219e6a13ab1c7ca1,
        0x2535ef788fcf8a15,
        0x2f8b978b3bf0f75d,
        0x3407ca04c905bdce,
        0x756619302390119d,
    ];
}
