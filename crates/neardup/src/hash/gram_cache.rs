//! Each thread's cache of the MD5 hashes of 4-byte grams.
//!
//! Character 4-grams follow Zipf's law, so most of a corpus's grams were
//! hashed before. The cache is 4-way set associative: a set is one 64-byte
//! cache line holding four keys and their values, so a lookup reads one
//! line, compares four keys at once and picks the value without a branch.
//! A new gram enters at the front of its set and the oldest leaves. A
//! free way holds the key `0xFFFF_FFFF`, which no gram of UTF-8 text can
//! be (the byte 0xFF never occurs in UTF-8). 64-bit and 128-bit
//! hashes have a cache each, so the common 64-bit one stays small.

use std::cell::RefCell;

use super::HashWord;

/// The key of a free way: four 0xFF bytes, never UTF-8.
const FREE: u32 = u32::MAX;

/// Grams per set.
const WAYS: usize = 4;

/// Sets per cache: 2^14 × 4 ways = 65,536 grams, in 1 MiB for 64-bit
/// values (2 MiB for 128-bit ones). Whole processes on 3 MB of English ran
/// about 7% faster than with 2^13 sets (half the MD5s; the lookups are
/// prefetched, so the larger table costs little).
const SET_BITS: u32 = 14;
const SETS: usize = 1 << SET_BITS;

/// A hash as the cache keeps it, with this thread's cache for its width.
pub(super) trait Value: HashWord {
    /// Runs `f` with this thread's cache for this width.
    fn with_cache<R>(f: impl FnOnce(&mut Cache<Self>) -> R) -> R;
}

thread_local! {
    static NARROW: RefCell<Option<Cache<u64>>> = const { RefCell::new(None) };
    static WIDE: RefCell<Option<Cache<u128>>> = const { RefCell::new(None) };
}

impl Value for u64 {
    fn with_cache<R>(f: impl FnOnce(&mut Cache<u64>) -> R) -> R {
        NARROW.with(|c| f(c.borrow_mut().get_or_insert_with(Cache::new)))
    }
}

impl Value for u128 {
    fn with_cache<R>(f: impl FnOnce(&mut Cache<u128>) -> R) -> R {
        WIDE.with(|c| f(c.borrow_mut().get_or_insert_with(Cache::new)))
    }
}

/// One set: four grams and their hashes, in one cache line (two for
/// 128-bit values), newest first.
#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct Set<V> {
    keys: [u32; WAYS],
    values: [V; WAYS],
}

impl<V: Value> Default for Set<V> {
    fn default() -> Self {
        Set { keys: [FREE; WAYS], values: [V::default(); WAYS] }
    }
}

/// The cache of one thread for one width.
pub(super) struct Cache<V> {
    sets: Box<[Set<V>; SETS]>,
}

impl<V: Value> Cache<V> {
    fn new() -> Cache<V> {
        let sets = vec![Set::default(); SETS].into_boxed_slice();
        Cache { sets: sets.try_into().unwrap_or_else(|_| unreachable!("SETS sets")) }
    }

    #[inline(always)]
    fn set_of(gram: u32) -> usize {
        (gram.wrapping_mul(0x9E37_79B1) >> (32 - SET_BITS)) as usize
    }

    /// Whether `gram` is cached, and its value if it is (some other value
    /// if not): no branch on the outcome.
    #[inline(always)]
    pub(super) fn lookup(&self, gram: u32) -> (bool, V) {
        let set = &self.sets[Self::set_of(gram) % SETS];
        let mut found = 0u32;
        for (w, &k) in set.keys.iter().enumerate() {
            found |= u32::from(k == gram) << w;
        }
        // Grams come from `str`s, so none is FREE and free ways never match.
        debug_assert_ne!(gram, FREE);
        (found != 0, set.values[found.trailing_zeros() as usize % WAYS])
    }

    /// Asks the CPU to bring `gram`'s set into the nearest cache.
    #[inline(always)]
    pub(super) fn prefetch(&self, gram: u32) {
        crate::simd::prefetch(&self.sets[Self::set_of(gram) % SETS]);
    }

    /// The value of `gram`, if cached.
    #[inline]
    pub(super) fn get(&self, gram: u32) -> Option<V> {
        let (hit, v) = self.lookup(gram);
        hit.then_some(v)
    }

    /// Caches `gram`'s full hash `h` at the front of its set (unless it is
    /// cached already), dropping the set's oldest gram.
    #[inline]
    pub(super) fn insert(&mut self, gram: u32, h: u128) {
        let set = &mut self.sets[Self::set_of(gram) % SETS];
        if gram == FREE || set.keys.contains(&gram) {
            return;
        }
        set.keys.copy_within(..WAYS - 1, 1);
        set.values.copy_within(..WAYS - 1, 1);
        set.keys[0] = gram;
        set.values[0] = V::cut(h);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_four_newest_grams_of_a_set() {
        let mut c = Cache::<u64>::new();
        // Five distinct grams of one set.
        let same_set: Vec<u32> =
            (1u32..).filter(|&g| Cache::<u64>::set_of(g) == Cache::<u64>::set_of(1)).take(5).collect();
        for (i, &g) in same_set.iter().enumerate() {
            c.insert(g, i as u128 + 100);
        }
        assert_eq!(c.get(same_set[0]), None, "the oldest left");
        for (i, &g) in same_set.iter().enumerate().skip(1) {
            assert_eq!(c.get(g), Some(i as u64 + 100));
        }
        // Inserting a cached gram again changes nothing.
        c.insert(same_set[4], 7);
        assert_eq!(c.get(same_set[1]), Some(101));
        assert_eq!(c.get(same_set[4]), Some(104));
        assert_eq!(c.get(0), None);
        c.insert(0, 1);
        assert_eq!(c.get(0), Some(1), "four NUL bytes are a gram like any other");
        c.insert(FREE, 1);
        // The four of the full set, and the gram 0.
        let cached = c.sets.iter().flat_map(|set| set.keys).filter(|&k| k != FREE).count();
        assert_eq!(cached, 5, "FREE is never cached");
    }
}
