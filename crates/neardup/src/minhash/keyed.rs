//! [`KeyedLsh`]: an [`LshIndex`] whose entries are named by the caller's
//! keys (document ids, Python objects), with insert, replace and remove
//! by key.

use std::borrow::Borrow;
use std::hash::Hash;

use super::index::{LshIndex, SignatureMatch};
use super::Banding;
use crate::index::Slots;

/// Signatures by key over an [`LshIndex`]. Each key gets a slot (an
/// entry id of the index); a removed key's slot is reused by the next new
/// key. Keys are hashed with foldhash under a per-process random seed, so
/// clients cannot choose keys that collide.
///
/// ```
/// use neardup::minhash::{Banding, KeyedLsh};
///
/// let mut index: KeyedLsh<String> = KeyedLsh::new(Banding { bands: 2, rows: 2 }, 4);
/// index.insert("a".to_owned(), &[1, 2, 3, 4]);
/// index.insert("b".to_owned(), &[1, 2, 9, 9]);
/// let near: Vec<(&str, f64)> =
///     index.query(&[1, 2, 3, 5], 0.5).into_iter().map(|(k, m)| (k.as_str(), m.similarity)).collect();
/// assert_eq!(near, [("a", 0.75), ("b", 0.5)]);
/// assert!(index.remove("a") && !index.contains("a"));
/// assert_eq!(index.len(), 1);
/// ```
#[derive(Clone)]
pub struct KeyedLsh<K> {
    index: LshIndex,
    /// The caller's keys by slot; a removed key's slot is released at
    /// once (the index drops its entry) and reused.
    slots: Slots<K>,
}

impl<K> std::fmt::Debug for KeyedLsh<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyedLsh")
            .field("len", &self.index.len())
            .field("slots", &self.slots.slots())
            .finish()
    }
}

impl<K: Hash + Eq> KeyedLsh<K> {
    /// An empty index of signatures of `permutations` values.
    ///
    /// # Panics
    ///
    /// If the banding does not fit `permutations` (see
    /// [`Banding::validate`]).
    pub fn new(banding: Banding, permutations: usize) -> KeyedLsh<K> {
        KeyedLsh { index: LshIndex::new(banding, permutations), slots: Slots::new() }
    }

    /// The index by slot.
    pub fn index(&self) -> &LshIndex {
        &self.index
    }

    /// The banding.
    pub fn banding(&self) -> Banding {
        self.index.banding()
    }

    /// Values per signature (K).
    pub fn permutations(&self) -> usize {
        self.index.permutations()
    }

    /// How many keys.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Bytes held, about (the index, the keys' table; not what the keys
    /// themselves point to).
    pub fn memory_bytes(&self) -> usize {
        self.index.memory_bytes() + self.slots.memory_bytes()
    }

    /// Room for `n` keys without growing.
    pub fn reserve(&mut self, n: usize) {
        self.index.reserve(n);
        self.slots.reserve(n);
    }

    /// Whether `key` is present.
    pub fn contains<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.slots.contains(key)
    }

    /// The signature of `key`.
    pub fn get<Q>(&self, key: &Q) -> Option<&[u32]>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.slots.slot(key).and_then(|s| self.index.get(slot32(s)))
    }

    /// The key of a slot (as a match names it).
    pub fn key(&self, slot: u32) -> Option<&K> {
        self.slots.key(u64::from(slot))
    }

    /// Adds `key` with `signature`, replacing its signature if present.
    ///
    /// # Panics
    ///
    /// If the signature's length is not the index's, or past `u32::MAX − 1`
    /// slots.
    pub fn insert(&mut self, key: K, signature: &[u32]) {
        let slot = self.slot_for(key);
        self.index.insert(slot, signature);
    }

    /// Adds (or replaces) many keys, the bands filled in parallel; as
    /// [`insert`](Self::insert) one by one (of equal keys, the last wins).
    ///
    /// # Panics
    ///
    /// As [`insert`](Self::insert).
    pub fn insert_batch<'a>(&mut self, items: impl IntoIterator<Item = (K, &'a [u32])>) {
        let slotted: Vec<(u32, &[u32])> =
            items.into_iter().map(|(key, sig)| (self.slot_for(key), sig)).collect();
        self.index.insert_batch(&slotted);
    }

    /// The slot of `key`, given one if new.
    fn slot_for(&mut self, key: K) -> u32 {
        match self.slots.slot(&key) {
            Some(s) => slot32(s),
            None => slot32(self.slots.assign(key)),
        }
    }

    /// Removes `key`; whether it was present.
    pub fn remove<Q>(&mut self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let Some(slot) = self.slots.remove(key) else { return false };
        self.index.remove(slot32(slot));
        self.slots.release(slot);
        true
    }

    /// The keys sharing a band with `signature` whose estimated similarity
    /// is at least `threshold`, most similar first (ties: the key inserted
    /// into the lower slot first).
    ///
    /// # Panics
    ///
    /// If the signature's length is not the index's.
    pub fn query(&self, signature: &[u32], threshold: f64) -> Vec<(&K, SignatureMatch)> {
        self.index
            .query(signature, threshold)
            .into_iter()
            .map(|m| (self.key(m.id).expect("an indexed slot has a key"), m))
            .collect()
    }

    /// Every key and its signature, in slot order.
    pub fn entries(&self) -> impl Iterator<Item = (&K, &[u32])> {
        self.slots.iter().map(|(s, k)| (k, self.index.get(slot32(s)).expect("a keyed slot is indexed")))
    }
}

/// A slot as the signature index numbers its entries.
fn slot32(slot: u64) -> u32 {
    u32::try_from(slot).expect("fewer than 2^32 slots")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_reused_and_replacement_rebands() {
        let mut index: KeyedLsh<u64> = KeyedLsh::new(Banding { bands: 4, rows: 1 }, 4);
        index.insert(1, &[1, 2, 3, 4]);
        index.insert(2, &[1, 2, 3, 4]);
        index.insert(3, &[1, 2, 3, 4]);
        assert_eq!(index.query(&[1, 2, 3, 4], 1.0).len(), 3);
        // The middle of a chain, then its head.
        assert!(index.remove(&2) && !index.remove(&2));
        index.insert(3, &[9, 9, 9, 9]);
        let near: Vec<u64> = index.query(&[1, 2, 3, 4], 0.1).into_iter().map(|(k, _)| *k).collect();
        assert_eq!(near, [1]);
        index.insert(4, &[9, 9, 9, 8]);
        assert_eq!(index.key(1), Some(&4), "the freed slot is reused");
        let m = index.query(&[9, 9, 9, 9], 0.7);
        assert_eq!(m.len(), 2);
        assert_eq!((*m[0].0, m[0].1.differing), (3, 0));
        assert_eq!((*m[1].0, m[1].1.differing, m[1].1.similarity), (4, 1, 0.75));
        assert_eq!(index.entries().count(), 3);
        assert_eq!(index.get(&4), Some(&[9, 9, 9, 8][..]));
    }
}
