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
    /// Per band: entry `id`'s key bytes at `id · band_bytes` (a band's
    /// keys together, so a lookup band by band reads one small array).
    keys: Vec<Vec<u8>>,
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

/// A band key's table hash: its 8-byte words, each folded in with a
/// multiply–xorshift mix (band keys are hash values already, so this only
/// has to spread structured ones; collisions are resolved by the bytes).
#[inline]
fn hash(bytes: &[u8]) -> u64 {
    #[inline(always)]
    fn mix(h: u64) -> u64 {
        let h = (h ^ (h >> 32)).wrapping_mul(0xd6e8_feb8_6659_fd93);
        h ^ (h >> 32)
    }
    let mut h = 0x9e37_79b9_7f4a_7c15 ^ bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        h = mix(h ^ u64::from_le_bytes(c.try_into().expect("8 bytes")));
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut last = [0u8; 8];
        last[..rest.len()].copy_from_slice(rest);
        h = mix(h ^ u64::from_le_bytes(last) ^ (1 << 63));
    }
    h
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
            keys: vec![Vec::new(); bands],
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
        self.keys.iter().map(Vec::capacity).sum::<usize>()
            + self.present.capacity()
            + self.free.capacity() * 4
            + tables
            + chains
    }

    fn stride(&self) -> usize {
        self.bands * self.band_bytes
    }

    fn band<'a>(&self, keys: &'a [u8], band: usize) -> &'a [u8] {
        &keys[band * self.band_bytes..(band + 1) * self.band_bytes]
    }

    /// Entry `id`'s band bytes (all bands'), if present.
    pub fn get(&self, id: u32) -> Option<Vec<u8>> {
        let i = id as usize;
        (self.present.get(i) == Some(&true))
            .then(|| (0..self.bands).flat_map(|b| self.key(b, id)).copied().collect())
    }

    /// Band `band`'s key bytes of entry `id` (present or not).
    #[inline]
    fn key(&self, band: usize, id: u32) -> &[u8] {
        let i = id as usize;
        &self.keys[band][i * self.band_bytes..(i + 1) * self.band_bytes]
    }

    /// Adds an entry and returns its id (the lowest free one, else the
    /// next new one).
    ///
    /// # Panics
    ///
    /// If `keys` is not `bands · band_bytes` long, or past 2^32 − 1 entries.
    pub fn insert(&mut self, keys: &[u8]) -> u32 {
        self.insert_batch(keys)[0]
    }

    /// Adds one entry per `bands · band_bytes` bytes of `rows`, as
    /// [`insert`](Self::insert) one after another; their ids. The bands'
    /// tables are filled in parallel, each table by one thread from start
    /// to end (so it stays in that core's cache).
    ///
    /// # Panics
    ///
    /// If `rows` is not a whole number of rows, or past 2^32 − 1 entries.
    pub fn insert_batch(&mut self, rows: &[u8]) -> Vec<u32> {
        use rayon::prelude::*;
        let stride = self.stride();
        assert!(rows.len().is_multiple_of(stride), "one key per band");
        let n = rows.len() / stride;
        let ids: Vec<u32> = (0..n).map(|_| self.new_id()).collect();
        let band_bytes = self.band_bytes;
        for (&id, row) in ids.iter().zip(rows.chunks_exact(stride)) {
            let i = id as usize;
            for (band, keys) in self.keys.iter_mut().enumerate() {
                keys[i * band_bytes..(i + 1) * band_bytes]
                    .copy_from_slice(&row[band * band_bytes..(band + 1) * band_bytes]);
            }
            self.present[i] = true;
        }
        self.len += n;
        let link =
            |band: usize, head: &mut HashMap<u64, u32, FxBuildHasher>, next: &mut [u32], prev: &mut [u32]| {
                head.reserve(n);
                for (&id, row) in ids.iter().zip(rows.chunks_exact(stride)) {
                    let i = id as usize;
                    let h = hash(&row[band * band_bytes..(band + 1) * band_bytes]);
                    let slot = head.entry(h).or_insert(NONE);
                    let old = std::mem::replace(slot, id);
                    next[i] = old;
                    prev[i] = NONE;
                    if old != NONE {
                        prev[old as usize] = id;
                    }
                }
            };
        let tables = self.heads.iter_mut().zip(self.next.iter_mut().zip(self.prev.iter_mut()));
        if n * self.bands < 4096 {
            tables.enumerate().for_each(|(band, (h, (nx, pv)))| link(band, h, nx, pv));
        } else {
            let tables: Vec<_> = tables.collect();
            tables.into_par_iter().enumerate().for_each(|(band, (h, (nx, pv)))| link(band, h, nx, pv));
        }
        ids
    }

    /// A free id: a removed entry's, else a new one (its slots made).
    fn new_id(&mut self) -> u32 {
        match self.free.pop() {
            Some(id) => id,
            None => {
                let id = u32::try_from(self.present.len())
                    .ok()
                    .filter(|&i| i != NONE)
                    .expect("fewer than 2^32 - 1 entries");
                self.present.push(false);
                for keys in &mut self.keys {
                    keys.resize(keys.len() + self.band_bytes, 0);
                }
                for c in self.next.iter_mut().chain(&mut self.prev) {
                    c.push(NONE);
                }
                id
            }
        }
    }

    /// Removes entry `id`; false if absent.
    pub fn remove(&mut self, id: u32) -> bool {
        let Some(keys) = self.get(id) else {
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
    pub fn bucket<'a>(&'a self, band: usize, key: &'a [u8]) -> impl Iterator<Item = u32> + 'a {
        let mut at = self.heads[band].get(&hash(key)).copied().unwrap_or(NONE);
        std::iter::from_fn(move || {
            while at != NONE {
                let id = at;
                at = self.next[band][id as usize];
                if self.key(band, id) == key {
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
        let mut found: Vec<u32> = Vec::new();
        for band in 0..bands {
            found.extend(self.bucket(band, self.band(keys, band)));
        }
        if found.len() > 1 {
            found.sort_unstable();
            found.dedup();
        }
        found
    }

    /// [`query`](Self::query) of every row of `rows`, band by band (each
    /// band's table stays in cache while the rows pass), in parallel.
    ///
    /// # Panics
    ///
    /// As [`query`](Self::query).
    pub fn query_batch(&self, rows: &[u8], bands: usize) -> Vec<Vec<u32>> {
        use rayon::prelude::*;
        let stride = self.stride();
        assert!(rows.len().is_multiple_of(stride), "one key per band");
        assert!(bands <= self.bands, "at most the index's bands");
        let run = |rows: &[u8]| -> Vec<Vec<u32>> {
            let mut found: Vec<Vec<u32>> = vec![Vec::new(); rows.len() / stride];
            for band in 0..bands {
                for (f, row) in found.iter_mut().zip(rows.chunks_exact(stride)) {
                    f.extend(self.bucket(band, self.band(row, band)));
                }
            }
            for f in &mut found {
                if f.len() > 1 {
                    f.sort_unstable();
                    f.dedup();
                }
            }
            found
        };
        let per = 1024 * stride;
        if rows.len() <= per {
            return run(rows);
        }
        rows.par_chunks(per).map(run).flatten().collect()
    }

    /// Every bucket of band `band`: its bytes and entries (newest first).
    pub fn buckets(&self, band: usize) -> Vec<(&[u8], Vec<u32>)> {
        let mut out = Vec::new();
        for &head in self.heads[band].values() {
            // One chain may hold several buckets whose hashes collide.
            let mut at = head;
            let mut seen: Vec<&[u8]> = Vec::new();
            while at != NONE {
                let key = self.key(band, at);
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
        // Few cases: each inserts thousands of rows (the parallel paths).
        #![proptest_config(ProptestConfig::with_cases(24))]
        #[test]
        fn batches_equal_one_by_one(
            rows in proptest::collection::vec(proptest::collection::vec(0u8..3, 6), 1..3000),
            removed in proptest::collection::vec(any::<u16>(), 0..20),
        ) {
            // Large enough batches take the parallel paths.
            let flat: Vec<u8> = rows.concat();
            let mut one = BandIndex::new(3, 2);
            let mut batch = BandIndex::new(3, 2);
            let mut ids_one: Vec<u32> = rows.iter().map(|r| one.insert(r)).collect();
            let half = flat.len() / 12 * 6;
            let mut ids = batch.insert_batch(&flat[..half]);
            ids.extend(batch.insert_batch(&flat[half..]));
            prop_assert_eq!(&ids, &ids_one);
            for &r in &removed {
                let id = u32::from(r) % rows.len() as u32;
                prop_assert_eq!(one.remove(id), batch.remove(id));
            }
            // Freed ids are reused in the same order.
            let again: Vec<u8> = rows.iter().take(5).flatten().copied().collect();
            ids_one = rows.iter().take(5).map(|r| one.insert(r)).collect();
            prop_assert_eq!(batch.insert_batch(&again), ids_one);
            prop_assert_eq!(one.len(), batch.len());
            for band in 0..3 {
                let sets = |ix: &BandIndex| -> BTreeMap<Vec<u8>, BTreeSet<u32>> {
                    ix.buckets(band).into_iter().map(|(k, v)| (k.to_vec(), v.into_iter().collect())).collect()
                };
                prop_assert_eq!(sets(&one), sets(&batch));
            }
            let answers = batch.query_batch(&flat, 3);
            for (row, got) in rows.iter().zip(&answers) {
                prop_assert_eq!(&one.query(row, 3), got);
            }
        }
    }

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
