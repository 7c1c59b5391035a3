//! An LSH index of signatures: per band, a hash table from the band's key
//! to the newest entry that has it, and a chain through the older ones; a
//! query gathers the entries sharing a band with it and keeps those whose
//! estimated Jaccard similarity reaches the threshold.
//!
//! Memory per entry: its K values (4 B each) plus, per band, one table slot
//! (a 64-bit key and a 32-bit entry) and one 32-bit chain link — about
//! 0.5 KiB + 25 × 20 B ≈ 1 KiB at K = 128 and 25 bands. (A table of `Vec`s,
//! one per key, costs 60–70 B per band and entry instead.)

use hashbrown::HashMap;
use rustc_hash::FxBuildHasher;

use super::{equal_values, Banding};

/// A match: the entry and its estimated Jaccard similarity.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SignatureMatch {
    /// The entry's id.
    pub id: u32,
    /// The estimated Jaccard similarity (share of equal values).
    pub similarity: f64,
    /// How many values differ (K × (1 − similarity)): the distance the
    /// similarity is computed from.
    pub differing: u32,
}

/// A band's table: key → the newest entry with it.
type Table = HashMap<u64, u32, FxBuildHasher>;

/// No entry: the end of a chain.
const NONE: u32 = u32::MAX;

/// Signatures of `permutations` values by id (dense `u32` ids below
/// `u32::MAX`), banded for lookup. Removing an entry clears its slot.
#[derive(Clone, Debug)]
pub struct LshIndex {
    banding: Banding,
    permutations: usize,
    /// Values of entry `id` at `id · permutations` (all zero when absent).
    values: Vec<u32>,
    present: Vec<bool>,
    /// Per band: band key → the newest entry with it.
    heads: Vec<Table>,
    /// Per band: entry → the next older entry with the same key, or `NONE`.
    next: Vec<Vec<u32>>,
    len: usize,
}

impl LshIndex {
    /// An empty index.
    ///
    /// # Panics
    ///
    /// If the banding does not fit `permutations` (see
    /// [`Banding::validate`]).
    pub fn new(banding: Banding, permutations: usize) -> LshIndex {
        banding.validate(permutations).expect("a banding that fits");
        LshIndex {
            banding,
            permutations,
            values: Vec::new(),
            present: Vec::new(),
            heads: vec![HashMap::default(); banding.bands],
            next: vec![Vec::new(); banding.bands],
            len: 0,
        }
    }

    /// The banding.
    pub fn banding(&self) -> Banding {
        self.banding
    }

    /// Values per signature (K).
    pub fn permutations(&self) -> usize {
        self.permutations
    }

    /// How many entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes held, about (the values, the tables and the chains).
    pub fn memory_bytes(&self) -> usize {
        let tables: usize = self.heads.iter().map(|t| t.capacity() * 13).sum();
        let chains: usize = self.next.iter().map(|c| c.capacity() * 4).sum();
        self.values.capacity() * 4 + self.present.capacity() + tables + chains
    }

    /// Room for entries with ids below `ids` without growing.
    pub fn reserve(&mut self, ids: usize) {
        let more = ids.saturating_sub(self.present.len());
        self.present.reserve(more);
        self.values.reserve(more * self.permutations);
        for (t, c) in self.heads.iter_mut().zip(&mut self.next) {
            t.reserve(ids.saturating_sub(t.len()));
            c.reserve(more);
        }
    }

    /// The signature of entry `id`, if present.
    pub fn get(&self, id: u32) -> Option<&[u32]> {
        let i = id as usize;
        (self.present.get(i) == Some(&true))
            .then(|| &self.values[i * self.permutations..(i + 1) * self.permutations])
    }

    /// Adds (or replaces) entry `id`.
    ///
    /// # Panics
    ///
    /// If the signature's length is not the index's, or `id` is
    /// `u32::MAX`.
    pub fn insert(&mut self, id: u32, signature: &[u32]) {
        assert_eq!(signature.len(), self.permutations, "a signature of the index's length");
        assert_ne!(id, NONE, "entry ids are below u32::MAX");
        self.remove(id);
        let i = id as usize;
        if self.present.len() <= i {
            self.present.resize(i + 1, false);
            self.values.resize((i + 1) * self.permutations, 0);
            for c in &mut self.next {
                c.resize(i + 1, NONE);
            }
        }
        self.values[i * self.permutations..(i + 1) * self.permutations].copy_from_slice(signature);
        self.present[i] = true;
        for band in 0..self.banding.bands {
            let key = self.banding.key(signature, band);
            let head = self.heads[band].entry(key).or_insert(NONE);
            self.next[band][i] = std::mem::replace(head, id);
        }
        self.len += 1;
    }

    /// Adds (or replaces) many entries, the bands filled in parallel (one
    /// thread per band at most); as [`insert`](Self::insert) one by one
    /// (of equal ids, the last wins).
    ///
    /// # Panics
    ///
    /// As [`insert`](Self::insert).
    pub fn insert_batch(&mut self, items: &[(u32, &[u32])]) {
        use rayon::prelude::*;
        let k = self.permutations;
        // The last of equal ids wins: earlier ones are skipped.
        let mut last = rustc_hash::FxHashMap::default();
        for (pos, &(id, sig)) in items.iter().enumerate() {
            assert_eq!(sig.len(), k, "a signature of the index's length");
            assert_ne!(id, NONE, "entry ids are below u32::MAX");
            last.insert(id, pos);
        }
        let items: Vec<(u32, &[u32])> =
            items.iter().enumerate().filter(|(pos, (id, _))| last[id] == *pos).map(|(_, &it)| it).collect();
        for &(id, _) in &items {
            self.remove(id);
        }
        let top = items.iter().map(|&(id, _)| id as usize + 1).max().unwrap_or(0);
        if self.present.len() < top {
            self.present.resize(top, false);
            self.values.resize(top * k, 0);
            for c in &mut self.next {
                c.resize(top, NONE);
            }
        }
        for &(id, sig) in &items {
            let i = id as usize;
            self.values[i * k..(i + 1) * k].copy_from_slice(sig);
            self.present[i] = true;
        }
        let banding = self.banding;
        let fill = |(band, (heads, next)): (usize, (&mut Table, &mut Vec<u32>))| {
            heads.reserve(items.len());
            for &(id, sig) in &items {
                let head = heads.entry(banding.key(sig, band)).or_insert(NONE);
                next[id as usize] = std::mem::replace(head, id);
            }
        };
        // Threads pay off past a few dozen entries.
        if items.len() >= 64 {
            self.heads.par_iter_mut().zip(self.next.par_iter_mut()).enumerate().for_each(fill);
        } else {
            self.heads.iter_mut().zip(self.next.iter_mut()).enumerate().for_each(fill);
        }
        self.len += items.len();
    }

    /// Removes entry `id`; whether it was present.
    pub fn remove(&mut self, id: u32) -> bool {
        if self.get(id).is_none() {
            return false;
        }
        let i = id as usize;
        for band in 0..self.banding.bands {
            let key =
                self.banding.key(&self.values[i * self.permutations..(i + 1) * self.permutations], band);
            let after = std::mem::replace(&mut self.next[band][i], NONE);
            let head = self.heads[band].get_mut(&key).expect("a present entry's key is in its band");
            if *head == id {
                if after == NONE {
                    self.heads[band].remove(&key);
                } else {
                    *head = after;
                }
                continue;
            }
            let mut at = *head;
            while self.next[band][at as usize] != id {
                at = self.next[band][at as usize];
                debug_assert_ne!(at, NONE, "a present entry is on its chain");
            }
            self.next[band][at as usize] = after;
        }
        self.present[i] = false;
        self.len -= 1;
        true
    }

    /// The entries sharing a band with `signature`, each once, in no
    /// particular order.
    pub fn candidates(&self, signature: &[u32]) -> Vec<u32> {
        assert_eq!(signature.len(), self.permutations, "a signature of the index's length");
        let mut seen: Vec<u32> = Vec::new();
        for (band, table) in self.heads.iter().enumerate() {
            let mut at = table.get(&self.banding.key(signature, band)).copied().unwrap_or(NONE);
            while at != NONE {
                seen.push(at);
                at = self.next[band][at as usize];
            }
        }
        seen.sort_unstable();
        seen.dedup();
        seen
    }

    /// The entries sharing a band with `signature` whose estimated
    /// similarity is at least `threshold`, most similar first (ties: lower
    /// id first).
    ///
    /// # Panics
    ///
    /// If the signature's length is not the index's.
    pub fn query(&self, signature: &[u32], threshold: f64) -> Vec<SignatureMatch> {
        let k = self.permutations;
        let mut out: Vec<SignatureMatch> = self
            .candidates(signature)
            .into_iter()
            .filter_map(|id| {
                let other = self.get(id).expect("indexed ids are present");
                let equal = equal_values(signature, other);
                let similarity = equal as f64 / k as f64;
                (similarity >= threshold).then_some(SignatureMatch {
                    id,
                    similarity,
                    differing: (k - equal) as u32,
                })
            })
            .collect();
        out.sort_by(|a, b| b.similarity.total_cmp(&a.similarity).then(a.id.cmp(&b.id)));
        out
    }
}
