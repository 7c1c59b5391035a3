//! [`Slots`]: the caller's keys (document ids, URLs, Python objects) ↔
//! dense slot numbers, the entry ids an index works with. Both keyed
//! indexes sit on it — [`KeyedIndex`](super::KeyedIndex) (SimHash) and
//! `minhash::KeyedLsh` — and so do their files and snapshots, whose names
//! are the keys by slot ([`Slots::names`], [`keys_from_names`]).
//!
//! One rule for reuse: a slot a key was removed from is reused only once
//! its owner [`release`](Slots::release)s it, that is, once the owner's
//! index holds nothing under it any more. `KeyedLsh` releases at once (its
//! index drops an entry on removal); `KeyedIndex` never does, since a
//! removed entry stays in its segment, marked dead, until a merge.
//!
//! ```
//! use neardup::index::Slots;
//!
//! let mut slots: Slots<String> = Slots::new();
//! let a = slots.assign("a".to_owned());
//! let b = slots.assign("b".to_owned());
//! assert_eq!((a, b, slots.slot("b")), (0, 1, Some(1)));
//! assert_eq!(slots.remove("a"), Some(0));
//! assert_eq!(slots.assign("c".to_owned()), 2, "not reused before it is released");
//! slots.release(0);
//! assert_eq!(slots.assign("d".to_owned()), 0);
//! assert_eq!(slots.len(), 3);
//! assert_eq!(slots.keys().map(|k| k.map(String::as_str)).collect::<Vec<_>>(), [Some("d"), Some("b"), Some("c")]);
//! ```

use std::borrow::{Borrow, Cow};
use std::hash::{BuildHasher, Hash};

use hashbrown::HashTable;

use super::file::Names;

/// Keys by slot, each stored once, with a table of slots hashed by their
/// keys for lookups.
#[derive(Clone)]
pub struct Slots<K> {
    keys: Vec<Option<K>>,
    /// Live slots, hashed by their keys.
    lookup: HashTable<u64>,
    /// Released slots, reused last-released first.
    free: Vec<u64>,
    hasher: foldhash::fast::RandomState,
}

impl<K> std::fmt::Debug for Slots<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Slots").field("len", &self.lookup.len()).field("slots", &self.keys.len()).finish()
    }
}

impl<K: Hash + Eq> Default for Slots<K> {
    fn default() -> Self {
        Slots::new()
    }
}

impl<K: Hash + Eq> Slots<K> {
    /// No keys.
    pub fn new() -> Slots<K> {
        Slots { keys: Vec::new(), lookup: HashTable::new(), free: Vec::new(), hasher: Default::default() }
    }

    /// Slots from keys by slot (`None`: an empty slot), as a file or
    /// snapshot stores them. A key held by several slots keeps the last;
    /// the earlier ones are emptied and returned (ascending), for the owner
    /// to drop from its index. Empty slots are not released.
    pub fn from_keys(keys: Vec<Option<K>>) -> (Slots<K>, Vec<u64>) {
        let mut slots = Slots { keys, ..Slots::new() };
        let live = slots.keys.iter().filter(|k| k.is_some()).count();
        slots.lookup.reserve(live, |_| 0);
        let mut superseded = Vec::new();
        for slot in 0..slots.keys.len() as u64 {
            let Some(key) = &slots.keys[slot as usize] else { continue };
            let h = slots.hasher.hash_one(key);
            let keys = &slots.keys;
            let earlier = slots.lookup.find_entry(h, |&s| keys[s as usize].as_ref() == Some(key));
            if let Ok(entry) = earlier {
                let (old, _) = entry.remove();
                slots.keys[old as usize] = None;
                superseded.push(old);
            }
            let (keys, hasher) = (&slots.keys, &slots.hasher);
            slots.lookup.insert_unique(h, slot, |&s| hash_slot(hasher, keys, s));
        }
        superseded.sort_unstable();
        (slots, superseded)
    }

    /// The slot of `key`, if it has one.
    pub fn slot<Q>(&self, key: &Q) -> Option<u64>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let h = self.hasher.hash_one(key);
        self.lookup.find(h, |&s| self.keys[s as usize].as_ref().map(Borrow::borrow) == Some(key)).copied()
    }

    /// Whether `key` has a slot.
    pub fn contains<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.slot(key).is_some()
    }

    /// A slot for `key`, which has none: the last released one, else a new
    /// one past the end.
    ///
    /// # Panics
    ///
    /// If `key` already has a slot (remove it first).
    pub fn assign(&mut self, key: K) -> u64 {
        let h = self.hasher.hash_one(&key);
        assert!(
            self.lookup.find(h, |&s| self.keys[s as usize].as_ref() == Some(&key)).is_none(),
            "a key is assigned one slot"
        );
        let slot = match self.free.pop() {
            Some(s) => {
                self.keys[s as usize] = Some(key);
                s
            }
            None => {
                self.keys.push(Some(key));
                self.keys.len() as u64 - 1
            }
        };
        let (keys, hasher) = (&self.keys, &self.hasher);
        self.lookup.insert_unique(h, slot, |&s| hash_slot(hasher, keys, s));
        slot
    }

    /// Removes `key`; returns the slot it had, now empty (and reused only
    /// after [`release`](Self::release)).
    pub fn remove<Q>(&mut self, key: &Q) -> Option<u64>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let h = self.hasher.hash_one(key);
        let keys = &self.keys;
        let entry = self
            .lookup
            .find_entry(h, |&s| keys[s as usize].as_ref().map(Borrow::borrow) == Some(key))
            .ok()?;
        let (slot, _) = entry.remove();
        self.keys[slot as usize] = None;
        Some(slot)
    }

    /// Lets an empty slot be reused: the owner holds nothing under it any
    /// more.
    ///
    /// # Panics
    ///
    /// If the slot holds a key or does not exist.
    pub fn release(&mut self, slot: u64) {
        assert!(self.keys.get(slot as usize).is_some_and(Option::is_none), "only an empty slot is released");
        self.free.push(slot);
    }

    /// Room for `n` keys in all.
    pub fn reserve(&mut self, n: usize) {
        let more = n.saturating_sub(self.lookup.len());
        self.keys.reserve(n.saturating_sub(self.keys.len()));
        let (keys, hasher) = (&self.keys, &self.hasher);
        self.lookup.reserve(more, |&s| hash_slot(hasher, keys, s));
    }
}

impl<K> Slots<K> {
    /// The key in `slot`, if any.
    pub fn key(&self, slot: u64) -> Option<&K> {
        self.keys.get(usize::try_from(slot).ok()?)?.as_ref()
    }

    /// How many keys.
    pub fn len(&self) -> usize {
        self.lookup.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.lookup.is_empty()
    }

    /// How many slots, empty ones included: every slot is below this.
    pub fn slots(&self) -> usize {
        self.keys.len()
    }

    /// The key of every slot, in slot order (`None`: empty).
    pub fn keys(&self) -> impl Iterator<Item = Option<&K>> {
        self.keys.iter().map(Option::as_ref)
    }

    /// `(slot, key)` of every key, in slot order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, &K)> {
        self.keys.iter().enumerate().filter_map(|(s, k)| Some((s as u64, k.as_ref()?)))
    }

    /// Bytes held beyond the keys' own heap data.
    pub fn memory_bytes(&self) -> usize {
        self.keys.capacity() * std::mem::size_of::<Option<K>>()
            + self.lookup.capacity() * (std::mem::size_of::<u64>() + 1)
            + self.free.capacity() * std::mem::size_of::<u64>()
    }

    /// The slots as an index file's names: `name` of each key, `""` for an
    /// empty slot (so that slot `i` stays name `i`).
    pub fn names<'k>(&'k self, name: impl Fn(&'k K) -> Cow<'k, str>) -> Names {
        let names: Vec<Cow<str>> =
            self.keys.iter().map(|k| k.as_ref().map_or(Cow::Borrowed(""), &name)).collect();
        Names::from_strings(&names)
    }
}

/// Keys by slot from an index file's names (see [`Slots::names`]): `""` is
/// an empty slot, any other name becomes a key through `key`.
pub fn keys_from_names<K>(names: &Names, mut key: impl FnMut(&str) -> K) -> Vec<Option<K>> {
    names.iter().map(|n| (!n.is_empty()).then(|| key(n))).collect()
}

fn hash_slot<K: Hash>(hasher: &foldhash::fast::RandomState, keys: &[Option<K>], slot: u64) -> u64 {
    // Only live slots are in the lookup table.
    match &keys[slot as usize] {
        Some(k) => hasher.hash_one(k),
        None => 0,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use neardup_testkit::Rng;

    use super::*;

    /// Random assigns, removes and releases against a plain map of slot →
    /// key: the same slots, keys and lookups at every step.
    #[test]
    fn slots_equal_a_plain_map() {
        let mut rng = Rng(11);
        let mut slots: Slots<u32> = Slots::new();
        let mut model: HashMap<u64, u32> = HashMap::new();
        let mut empty: Vec<u64> = Vec::new();
        let mut free: Vec<u64> = Vec::new();
        let mut next = 0u64;
        for _ in 0..20_000 {
            let key = rng.below(300) as u32;
            match rng.below(3) {
                0 | 1 => {
                    if let Some(old) = slots.remove(&key) {
                        assert_eq!(model.remove(&old), Some(key));
                        empty.push(old);
                    }
                    let want = free.pop().unwrap_or_else(|| {
                        next += 1;
                        next - 1
                    });
                    assert_eq!(slots.assign(key), want);
                    model.insert(want, key);
                }
                _ => {
                    if let Some(old) = slots.remove(&key) {
                        assert_eq!(model.remove(&old), Some(key));
                        empty.push(old);
                    }
                    if !empty.is_empty() && rng.below(2) == 0 {
                        let s = empty.swap_remove(rng.below(empty.len() as u64) as usize);
                        slots.release(s);
                        free.push(s);
                    }
                }
            }
            assert_eq!(slots.len(), model.len());
        }
        for (&s, &k) in &model {
            assert_eq!((slots.slot(&k), slots.key(s)), (Some(s), Some(&k)));
        }
        assert_eq!(slots.iter().count(), model.len());
        // Through names and back.
        let names = slots.names(|k| Cow::Owned(k.to_string()));
        let (again, superseded) = Slots::from_keys(keys_from_names(&names, |n| n.parse::<u32>().unwrap()));
        assert!(superseded.is_empty());
        assert_eq!(again.keys().collect::<Vec<_>>(), slots.keys().collect::<Vec<_>>());
        assert!(model.iter().all(|(&s, k)| again.slot(k) == Some(s)));
    }

    #[test]
    fn a_repeated_key_keeps_its_last_slot() {
        let keys = vec![Some("a"), Some("b"), None, Some("a"), Some("c"), Some("a")];
        let (slots, superseded) = Slots::from_keys(keys);
        assert_eq!(superseded, [0, 3]);
        assert_eq!((slots.slot("a"), slots.slot("b"), slots.slot("c")), (Some(5), Some(1), Some(4)));
        assert_eq!(slots.keys().collect::<Vec<_>>(), [None, Some(&"b"), None, None, Some(&"c"), Some(&"a")]);
        assert_eq!(slots.len(), 3);
    }
}
