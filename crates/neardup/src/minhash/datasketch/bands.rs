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

use crate::simd::prefetch;

/// No entry: the end of a chain.
const NONE: u32 = u32::MAX;

/// Rows looked up together: their table slots are fetched from memory
/// before any is read, so the misses overlap.
const GROUP: usize = 16;

/// One band's table: a bucket's hash → its newest entry, by linear probing
/// from the hash's top bits, at most half full. A slot keeps the hash's top
/// 32 bits (enough for its home slot in tables of up to 2^32 slots), so
/// two buckets whose hashes agree there share a slot and a chain; the
/// chain's entries are told apart by their bytes, like any collision.
#[derive(Clone, Debug)]
struct Heads {
    /// (top 32 bits of the hash, head); head `NONE` marks an empty slot.
    slots: Vec<(u32, u32)>,
    /// 32 − log2(slots).
    shift: u32,
    len: usize,
}

impl Heads {
    fn new() -> Heads {
        Heads { slots: vec![(0, NONE); 16], shift: 28, len: 0 }
    }

    #[inline]
    fn tag(h: u64) -> u32 {
        (h >> 32) as u32
    }

    #[inline]
    fn home(&self, tag: u32) -> usize {
        (tag >> self.shift) as usize
    }

    /// The slot holding `tag`, or the empty slot where it would go.
    #[inline]
    fn find(&self, tag: u32) -> usize {
        let mask = self.slots.len() - 1;
        let mut i = self.home(tag);
        loop {
            let (t, head) = self.slots[i];
            if head == NONE || t == tag {
                return i;
            }
            i = (i + 1) & mask;
        }
    }

    #[inline]
    fn prefetch(&self, h: u64) {
        prefetch(&self.slots[self.home(Heads::tag(h))]);
    }

    /// The head of the chain of hash `h`, `NONE` if absent.
    #[inline]
    fn get(&self, h: u64) -> u32 {
        self.slots[self.find(Heads::tag(h))].1
    }

    /// Makes `id` the head of the chain of `h` (creating it); the head
    /// before, `NONE` if it was new.
    fn replace(&mut self, h: u64, id: u32) -> u32 {
        if (self.len + 1) * 2 > self.slots.len() {
            self.grow(self.slots.len() * 2);
        }
        let tag = Heads::tag(h);
        let i = self.find(tag);
        let old = self.slots[i].1;
        if old == NONE {
            self.len += 1;
        }
        self.slots[i] = (tag, id);
        old
    }

    /// Sets the head of the existing chain of `h`.
    fn set(&mut self, h: u64, id: u32) {
        let i = self.find(Heads::tag(h));
        debug_assert!(self.slots[i].1 != NONE);
        self.slots[i].1 = id;
    }

    /// Removes the chain of `h` (backward-shift deletion keeps every other
    /// chain reachable from its home slot).
    fn remove(&mut self, h: u64) {
        let mask = self.slots.len() - 1;
        let mut hole = self.find(Heads::tag(h));
        if self.slots[hole].1 == NONE {
            return;
        }
        self.len -= 1;
        let mut j = hole;
        loop {
            j = (j + 1) & mask;
            let (tag, head) = self.slots[j];
            if head == NONE {
                break;
            }
            let home = self.home(tag);
            // Slot j may move to the hole if its home is not in (hole, j].
            let between = if hole <= j { hole < home && home <= j } else { hole < home || home <= j };
            if !between {
                self.slots[hole] = self.slots[j];
                hole = j;
            }
        }
        self.slots[hole] = (0, NONE);
    }

    /// Room for `n` chains more without growing.
    fn reserve(&mut self, n: usize) {
        let want = ((self.len + n) * 2).next_power_of_two();
        if want > self.slots.len() {
            self.grow(want);
        }
    }

    fn grow(&mut self, size: usize) {
        assert!(size <= 1 << 32, "fewer than 2^31 buckets per band");
        let old = std::mem::replace(&mut self.slots, vec![(0, NONE); size]);
        self.shift = 32 - size.trailing_zeros();
        for (tag, head) in old {
            if head != NONE {
                let i = self.find(tag);
                self.slots[i] = (tag, head);
            }
        }
    }

    /// The head of every chain.
    fn heads(&self) -> impl Iterator<Item = u32> + '_ {
        self.slots.iter().map(|s| s.1).filter(|&h| h != NONE)
    }

    fn memory_bytes(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<(u32, u32)>()
    }
}

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
    heads: Vec<Heads>,
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
            heads: vec![Heads::new(); bands],
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
        let tables: usize = self.heads.iter().map(Heads::memory_bytes).sum();
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
        // Freed ids first, in the order `pop` would give them, then new ones.
        let reuse = n.min(self.free.len());
        let mut ids: Vec<u32> = self.free.drain(self.free.len() - reuse..).rev().collect();
        let start = self.present.len();
        let total = start + (n - reuse);
        assert!(total < NONE as usize, "fewer than 2^32 - 1 entries");
        ids.extend(start as u32..total as u32);
        let band_bytes = self.band_bytes;
        self.present.resize(total, false);
        for &id in &ids {
            self.present[id as usize] = true;
        }
        self.len += n;
        let link =
            |band: usize, heads: &mut Heads, keys: &mut Vec<u8>, next: &mut Vec<u32>, prev: &mut Vec<u32>| {
                keys.resize(total * band_bytes, 0);
                next.resize(total, NONE);
                prev.resize(total, NONE);
                heads.reserve(n);
                let mut hs = [0u64; GROUP];
                for (group, group_rows) in ids.chunks(GROUP).zip(rows.chunks(GROUP * stride)) {
                    for ((h, &id), row) in hs.iter_mut().zip(group).zip(group_rows.chunks_exact(stride)) {
                        let key = &row[band * band_bytes..(band + 1) * band_bytes];
                        let i = id as usize;
                        keys[i * band_bytes..(i + 1) * band_bytes].copy_from_slice(key);
                        *h = hash(key);
                        heads.prefetch(*h);
                    }
                    for (&id, &h) in group.iter().zip(&hs) {
                        let i = id as usize;
                        let old = heads.replace(h, id);
                        next[i] = old;
                        prev[i] = NONE;
                        if old != NONE {
                            prev[old as usize] = id;
                        }
                    }
                }
            };
        let tables = self
            .heads
            .iter_mut()
            .zip(self.keys.iter_mut())
            .zip(self.next.iter_mut().zip(self.prev.iter_mut()));
        if n * self.bands < 4096 {
            tables.enumerate().for_each(|(band, ((h, k), (nx, pv)))| link(band, h, k, nx, pv));
        } else {
            let tables: Vec<_> = tables.collect();
            tables
                .into_par_iter()
                .enumerate()
                .for_each(|(band, ((h, k), (nx, pv)))| link(band, h, k, nx, pv));
        }
        ids
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
                    self.heads[band].remove(h);
                } else {
                    self.heads[band].set(h, next);
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
        let mut at = self.heads[band].get(hash(key));
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
            let bb = self.band_bytes;
            for band in 0..bands {
                let heads = &self.heads[band];
                let keys = &self.keys[band];
                for (fs, group) in found.chunks_mut(GROUP).zip(rows.chunks(GROUP * stride)) {
                    // Three passes over the group: fetch the slots, then the
                    // heads' keys, then read them, so the misses overlap.
                    let mut hs = [0u64; GROUP];
                    for (h, row) in hs.iter_mut().zip(group.chunks_exact(stride)) {
                        *h = hash(self.band(row, band));
                        heads.prefetch(*h);
                    }
                    let mut first = [NONE; GROUP];
                    for (f, &h) in first.iter_mut().zip(&hs).take(fs.len()) {
                        *f = heads.get(h);
                        if *f != NONE {
                            prefetch(keys[*f as usize * bb..].as_ptr());
                        }
                    }
                    for ((f, row), &head) in fs.iter_mut().zip(group.chunks_exact(stride)).zip(&first) {
                        let key = self.band(row, band);
                        let mut at = head;
                        while at != NONE {
                            if self.key(band, at) == key {
                                f.push(at);
                            }
                            at = self.next[band][at as usize];
                        }
                    }
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
        for head in self.heads[band].heads() {
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
        fn heads_equal_a_hash_map(ops in proptest::collection::vec((0u8..3, 0u64..64, 0u32..1000), 1..400)) {
            // Hashes from 64 values whose top bits often agree (long probe
            // runs, wrapping past the end); the low bits tell them apart.
            let hash_of = |k: u64| (k % 4) << 62 | (k % 7) << 58 | k << 32;
            let mut heads = Heads::new();
            let mut model = std::collections::HashMap::new();
            for (op, k, id) in ops {
                let h = hash_of(k);
                match op {
                    0 => prop_assert_eq!(heads.replace(h, id), model.insert(h, id).unwrap_or(NONE)),
                    1 => {
                        heads.remove(h);
                        model.remove(&h);
                    }
                    _ => heads.reserve(usize::from(id as u8)),
                }
                prop_assert_eq!(heads.len, model.len());
                for k in 0..64 {
                    let h = hash_of(k);
                    prop_assert_eq!(heads.get(h), model.get(&h).copied().unwrap_or(NONE));
                }
            }
        }
    }

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
