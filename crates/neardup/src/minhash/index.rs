//! An LSH index of signatures: one hash table per band, from the band's
//! key to the entries that have it; a query gathers the entries sharing a
//! band with it and keeps those whose estimated Jaccard similarity reaches
//! the threshold.

use rustc_hash::FxHashMap;

use super::{estimate, Banding};

/// A match: the entry and its estimated Jaccard similarity.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SignatureMatch {
    /// The entry's id.
    pub id: u32,
    /// The estimated Jaccard similarity (share of equal values).
    pub similarity: f64,
}

/// Signatures of `permutations` values by id (dense `u32` ids), banded for
/// lookup. Removing an entry clears its slot.
#[derive(Clone, Debug)]
pub struct LshIndex {
    banding: Banding,
    permutations: usize,
    /// Values of entry `id` at `id · permutations` (all zero when absent).
    values: Vec<u32>,
    present: Vec<bool>,
    tables: Vec<FxHashMap<u64, Vec<u32>>>,
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
            tables: vec![FxHashMap::default(); banding.bands],
            len: 0,
        }
    }

    /// The banding.
    pub fn banding(&self) -> Banding {
        self.banding
    }

    /// How many entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
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
    /// If the signature's length is not the index's.
    pub fn insert(&mut self, id: u32, signature: &[u32]) {
        assert_eq!(signature.len(), self.permutations, "a signature of the index's length");
        self.remove(id);
        let i = id as usize;
        if self.present.len() <= i {
            self.present.resize(i + 1, false);
            self.values.resize((i + 1) * self.permutations, 0);
        }
        self.values[i * self.permutations..(i + 1) * self.permutations].copy_from_slice(signature);
        self.present[i] = true;
        for (band, table) in self.tables.iter_mut().enumerate() {
            table.entry(self.banding.key(signature, band)).or_default().push(id);
        }
        self.len += 1;
    }

    /// Removes entry `id`; whether it was present.
    pub fn remove(&mut self, id: u32) -> bool {
        let Some(sig) = self.get(id).map(<[u32]>::to_vec) else { return false };
        for (band, table) in self.tables.iter_mut().enumerate() {
            let key = self.banding.key(&sig, band);
            if let Some(ids) = table.get_mut(&key) {
                ids.retain(|&x| x != id);
                if ids.is_empty() {
                    table.remove(&key);
                }
            }
        }
        self.present[id as usize] = false;
        self.len -= 1;
        true
    }

    /// The entries sharing a band with `signature` whose estimated
    /// similarity is at least `threshold`, most similar first (ties: lower
    /// id first).
    ///
    /// # Panics
    ///
    /// If the signature's length is not the index's.
    pub fn query(&self, signature: &[u32], threshold: f64) -> Vec<SignatureMatch> {
        assert_eq!(signature.len(), self.permutations, "a signature of the index's length");
        let mut seen: Vec<u32> = Vec::new();
        for (band, table) in self.tables.iter().enumerate() {
            if let Some(ids) = table.get(&self.banding.key(signature, band)) {
                seen.extend_from_slice(ids);
            }
        }
        seen.sort_unstable();
        seen.dedup();
        let mut out: Vec<SignatureMatch> = seen
            .into_iter()
            .filter_map(|id| {
                let similarity = estimate(signature, self.get(id).expect("indexed ids are present"));
                (similarity >= threshold).then_some(SignatureMatch { id, similarity })
            })
            .collect();
        out.sort_by(|a, b| b.similarity.total_cmp(&a.similarity).then(a.id.cmp(&b.id)));
        out
    }
}
