//! The band tables of datasketch's `MinHashLSH`, exact and compact.
//!
//! datasketch keys band `i` of a sketch by the bytes of its values
//! `i·r..(i+1)·r`, each big-endian (`bytes(hs.byteswap().data)`), and keeps
//! per band a `dict` from those bytes to a `set` of keys: several hundred
//! bytes of Python objects per entry and band. A [`BandIndex`] keeps each
//! entry's band bytes once, in one array, and per band a table from a
//! 64-bit hash of the bytes to the newest entry with them, with a doubly
//! linked chain through the others. Entries on one chain are compared by
//! their bytes, so a hash collision never joins two buckets: the buckets
//! are exactly datasketch's.

use hashbrown::HashMap;
use rustc_hash::FxBuildHasher;

/// No entry: the end of a chain.
const NONE: u32 = u32::MAX;

/// The bytes one band of one entry is keyed by.
pub type BandKey<'a> = &'a [u8];

/// Entries by `u32` id, each given by its bands' bytes (`bands` bands of
/// `band_bytes` bytes each, concatenated).
#[derive(Clone, Debug)]
pub struct BandIndex {
    bands: usize,
    band_bytes: usize,
    /// Entry `id`'s bands at `id · bands · band_bytes`.
    keys: Vec<u8>,
    present: Vec<bool>,
    /// Ids of removed entries, for reuse.
    free: Vec<u32>,
    /// Per band: hash of the bytes → the newest entry with them.
    heads: Vec<HashMap<u64, u32, FxBuildHasher>>,
    /// Per band, per entry: the next older and newer entry on its chain.
    next: Vec<Vec<u32>>,
    prev: Vec<Vec<u32>>,
    len: usize,
}

fn hash(bytes: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(bytes)
}

impl BandIndex {
    /// An empty index of `bands` bands of `band_bytes` bytes each.
    ///
    /// # Panics
    ///
    /// If either is zero.
    pub fn new(bands: usize, band_bytes: usize) -> BandIndex {
        assert!(bands > 0 && band_bytes > 0, "bands and bytes per band");
        BandIndex {
            bands,
            band_bytes,
            keys: Vec::new(),
            present: Vec::new(),
            free: Vec::new(),
            heads: vec![HashMap::default(); bands],
            next: vec![Vec::new(); bands],
            prev: vec![Vec::new(); bands],
            len: 0,
        }
    }

    /// How many bands.
    pub fn bands(&self) -> usize {
        self.bands
    }

    /// Bytes per band key.
    pub fn band_bytes(&self) -> usize {
        self.band_bytes
    }

    /// How many entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True for none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes held, about.
    pub fn memory_bytes(&self) -> usize {
        let tables: usize = self.heads.iter().map(|t| t.capacity() * 13).sum();
        let chains: usize = self.next.iter().chain(&self.prev).map(|c| c.capacity() * 4).sum();
        self.keys.capacity() + self.present.capacity() + self.free.capacity() * 4 + tables + chains
    }

    fn stride(&self) -> usize {
        self.bands * self.band_bytes
    }

    fn band<'a>(&self, keys: &'a [u8], band: usize) -> &'a [u8] {
        &keys[band * self.band_bytes..(band + 1) * self.band_bytes]
    }

    /// Entry `id`'s band bytes, if present.
    pub fn get(&self, id: u32) -> Option<&[u8]> {
        let i = id as usize;
        (self.present.get(i) == Some(&true)).then(|| &self.keys[i * self.stride()..(i + 1) * self.stride()])
    }

    /// Adds an entry and returns its id (the lowest free one, else the
    /// next new one).
    ///
    /// # Panics
    ///
    /// If `keys` is not `bands · band_bytes` long, or past 2^32 − 1 entries.
    pub fn insert(&mut self, keys: &[u8]) -> u32 {
        assert_eq!(keys.len(), self.stride(), "one key per band");
        let id = match self.free.pop() {
            Some(id) => id,
            None => {
                let id = u32::try_from(self.present.len())
                    .ok()
                    .filter(|&i| i != NONE)
                    .expect("fewer than 2^32 - 1 entries");
                self.present.push(false);
                self.keys.resize(self.keys.len() + self.stride(), 0);
                for c in self.next.iter_mut().chain(&mut self.prev) {
                    c.push(NONE);
                }
                id
            }
        };
        let i = id as usize;
        let stride = self.stride();
        self.keys[i * stride..(i + 1) * stride].copy_from_slice(keys);
        self.present[i] = true;
        for band in 0..self.bands {
            let h = hash(self.band(keys, band));
            let head = self.heads[band].entry(h).or_insert(NONE);
            let old = std::mem::replace(head, id);
            self.next[band][i] = old;
            self.prev[band][i] = NONE;
            if old != NONE {
                self.prev[band][old as usize] = id;
            }
        }
        self.len += 1;
        id
    }

    /// Removes entry `id`; false if absent.
    pub fn remove(&mut self, id: u32) -> bool {
        let Some(keys) = self.get(id).map(<[u8]>::to_vec) else {
            return false;
        };
        let i = id as usize;
        for band in 0..self.bands {
            let (next, prev) = (self.next[band][i], self.prev[band][i]);
            if prev == NONE {
                let h = hash(self.band(&keys, band));
                if next == NONE {
                    self.heads[band].remove(&h);
                } else {
                    self.heads[band].insert(h, next);
                }
            } else {
                self.next[band][prev as usize] = next;
            }
            if next != NONE {
                self.prev[band][next as usize] = prev;
            }
            self.next[band][i] = NONE;
            self.prev[band][i] = NONE;
        }
        self.present[i] = false;
        self.free.push(id);
        self.len -= 1;
        true
    }

    /// The entries with band `band`'s bytes equal to `key`, newest first.
    pub fn bucket(&self, band: usize, key: &[u8]) -> impl Iterator<Item = u32> + '_ {
        let key = key.to_vec();
        let mut at = self.heads[band].get(&hash(&key)).copied().unwrap_or(NONE);
        std::iter::from_fn(move || {
            while at != NONE {
                let id = at;
                at = self.next[band][id as usize];
                if self.band(self.get(id).expect("chained entries are present"), band) == key.as_slice() {
                    return Some(id);
                }
            }
            None
        })
    }

    /// The entries sharing at least one of the first `bands` bands with
    /// `keys` (all bands' bytes), each once, in no set order.
    ///
    /// # Panics
    ///
    /// If `keys` is not `bands · band_bytes` long or `bands` is more than
    /// the index has.
    pub fn query(&self, keys: &[u8], bands: usize) -> Vec<u32> {
        assert_eq!(keys.len(), self.stride(), "one key per band");
        assert!(bands <= self.bands, "at most the index's bands");
        let mut found: Vec<u32> =
            (0..bands).flat_map(|band| self.bucket(band, self.band(keys, band))).collect();
        found.sort_unstable();
        found.dedup();
        found
    }

    /// Every bucket of band `band`: its bytes and entries (newest first).
    pub fn buckets(&self, band: usize) -> Vec<(&[u8], Vec<u32>)> {
        let mut out = Vec::new();
        for &head in self.heads[band].values() {
            // One chain may hold several buckets whose hashes collide.
            let mut at = head;
            let mut seen: Vec<&[u8]> = Vec::new();
            while at != NONE {
                let key = self.band(self.get(at).expect("present"), band);
                if !seen.contains(&key) {
                    seen.push(key);
                    out.push((key, self.bucket(band, key).collect()));
                }
                at = self.next[band][at as usize];
            }
        }
        out
    }

    /// The ids of the entries present, in id order.
    pub fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.present.iter().enumerate().filter(|(_, &p)| p).map(|(i, _)| i as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::{BTreeMap, BTreeSet};

    /// datasketch's storage: per band, bytes → set of ids.
    type Model = Vec<BTreeMap<Vec<u8>, BTreeSet<u32>>>;

    proptest! {
        #[test]
        fn buckets_and_queries_equal_a_dict_of_sets(
            ops in proptest::collection::vec((any::<bool>(), proptest::collection::vec(0u8..3, 6), any::<u8>()), 1..120),
        ) {
            // 3 bands of 2 bytes; few distinct values, so buckets are shared.
            let mut index = BandIndex::new(3, 2);
            let mut model: Model = vec![BTreeMap::new(); 3];
            let mut live: Vec<(u32, Vec<u8>)> = Vec::new();
            for (insert, keys, pick) in ops {
                if insert || live.is_empty() {
                    let id = index.insert(&keys);
                    prop_assert!(live.iter().all(|(i, _)| *i != id));
                    for (band, m) in model.iter_mut().enumerate() {
                        m.entry(keys[2 * band..2 * band + 2].to_vec()).or_default().insert(id);
                    }
                    live.push((id, keys));
                } else {
                    let (id, keys) = live.remove(pick as usize % live.len());
                    prop_assert!(index.remove(id));
                    prop_assert!(!index.remove(id));
                    for (band, m) in model.iter_mut().enumerate() {
                        let k = keys[2 * band..2 * band + 2].to_vec();
                        let set = m.get_mut(&k).unwrap();
                        set.remove(&id);
                        if set.is_empty() {
                            m.remove(&k);
                        }
                    }
                }
                prop_assert_eq!(index.len(), live.len());
                for (band, m) in model.iter().enumerate() {
                    let got: BTreeMap<Vec<u8>, BTreeSet<u32>> = index
                        .buckets(band)
                        .into_iter()
                        .map(|(k, ids)| (k.to_vec(), ids.into_iter().collect()))
                        .collect();
                    prop_assert_eq!(&got, m);
                }
                for (_, keys) in &live {
                    for bands in 1..=3 {
                        let want: BTreeSet<u32> = (0..bands)
                            .flat_map(|b| model[b][&keys[2 * b..2 * b + 2]].iter().copied())
                            .collect();
                        let got = index.query(keys, bands);
                        prop_assert_eq!(got.iter().copied().collect::<BTreeSet<u32>>(), want);
                        prop_assert!(got.windows(2).all(|w| w[0] < w[1]));
                    }
                }
            }
        }
    }
}
