//! The all-pairs join split for a cluster: every fingerprint is sent to
//! each table of a pigeonhole layout under that table's key, the rows are
//! shuffled so that equal keys meet, and each group of rows is verified on
//! its own. Nothing is shared between groups, so they can sit on different
//! machines (the Spark job in `bindings/python` does exactly this).
//!
//! The pairs found over all groups are exactly those of
//! [`all_pairs`](super::pairs::all_pairs) on the same distinct fingerprints:
//! two fingerprints within `k` bits agree on the leading blocks of at least
//! one table (pigeonhole), so they share that table's key; a pair is kept
//! only by the first such table (its owner), so it is reported once; and
//! over-long runs are split by a finer layout as on one machine.
//!
//! ```
//! use neardup::index::sharded::ShardedPairs;
//! use neardup::index::pairs::PairsOptions;
//!
//! let words = [0b1011u64, 0b1001, 0xffff_0000_ffff_0000];
//! let plan = ShardedPairs::for_batch(64, 3, words.len(), PairsOptions::default())?;
//! // The "shuffle": rows grouped by (table, key).
//! let mut groups = std::collections::BTreeMap::new();
//! for &w in &words {
//!     for t in 0..plan.tables() {
//!         let p = plan.permute(t, w);
//!         groups.entry((t, plan.key(t, p))).or_insert_with(Vec::new).push(p);
//!     }
//! }
//! let mut pairs = Vec::new();
//! for ((t, _), rows) in groups {
//!     pairs.extend(plan.group_pairs(t, rows));
//! }
//! assert_eq!(pairs, vec![(0b1001, 0b1011, 1)]); // (smaller, larger, distance)
//! # Ok::<(), neardup::Error>(())
//! ```

use super::layout::{Layout, LayoutSpec};
use super::pairs::{batch_layout, run_pairs, PairsOptions};
use super::word::Word;
use crate::error::Result;

/// The most rows one key group of [`ShardedPairs::for_shuffle`] should
/// hold on average: 2^23 (about 0.4 GB of working memory when verified).
pub const MAX_GROUP_ROWS: usize = 1 << 23;

/// A pigeonhole layout for a distributed all-pairs join at radius `k`.
#[derive(Clone, Debug)]
pub struct ShardedPairs {
    layout: Layout,
}

impl ShardedPairs {
    /// The layout [`all_pairs`](super::pairs::all_pairs) would use for `n`
    /// distinct fingerprints of `bits` bits at radius `k`.
    ///
    /// # Errors
    /// An impossible layout (`k >= bits`, more blocks than bits, …).
    pub fn for_batch(bits: u32, k: u32, n: usize, opts: PairsOptions) -> Result<ShardedPairs> {
        ShardedPairs::new(batch_layout(bits, k, n, opts)?)
    }

    /// The layout for a shuffle: the fewest tables (every table is a row
    /// per fingerprint to move across the network) whose key groups hold at
    /// most `max_group` of `n` fingerprints on average. Longer runs inside
    /// a group are split by a finer layout where they are verified, which
    /// costs no shuffle. On one machine [`for_batch`](Self::for_batch)
    /// prices sorting instead and picks more tables.
    ///
    /// # Errors
    /// `k >= bits`.
    pub fn for_shuffle(bits: u32, k: u32, n: usize, max_group: usize) -> Result<ShardedPairs> {
        let mut last = None;
        for m in (k + 1)..=bits {
            let spec = LayoutSpec { bits, k, blocks: m };
            if spec.validate().is_err() {
                continue;
            }
            let groups = 2f64.powi(spec.min_key_bits().min(1000) as i32);
            if n as f64 / groups <= max_group.max(1) as f64 {
                return ShardedPairs::new(spec);
            }
            last = Some(spec);
        }
        match last {
            Some(spec) => ShardedPairs::new(spec),
            None => ShardedPairs::new(LayoutSpec { bits, k, blocks: k + 1 }),
        }
    }

    /// An explicit layout.
    ///
    /// # Errors
    /// An invalid layout.
    pub fn new(spec: LayoutSpec) -> Result<ShardedPairs> {
        Ok(ShardedPairs { layout: Layout::new(spec)? })
    }

    /// The layout.
    pub fn spec(&self) -> LayoutSpec {
        self.layout.spec
    }

    /// The number of tables: rows per fingerprint.
    pub fn tables(&self) -> usize {
        self.layout.tables.len()
    }

    /// `w` with table `t`'s leading blocks moved to the top.
    ///
    /// # Panics
    /// If `t >= self.tables()`.
    pub fn permute<W: Word>(&self, t: usize, w: W) -> W {
        self.layout.tables[t].permute(w)
    }

    /// The original word of a permuted one.
    ///
    /// # Panics
    /// If `t >= self.tables()`.
    pub fn unpermute<W: Word>(&self, t: usize, p: W) -> W {
        self.layout.tables[t].unpermute(p)
    }

    /// Bits of table `t`'s key.
    ///
    /// # Panics
    /// If `t >= self.tables()`.
    pub fn key_bits(&self, t: usize) -> u32 {
        self.layout.tables[t].key_bits
    }

    /// Table `t`'s key of a permuted word: its leading blocks, as a number
    /// below `2^key_bits` (at most 64 bits for the layouts a batch uses).
    ///
    /// # Panics
    /// If `t >= self.tables()`.
    pub fn key<W: Word>(&self, t: usize, permuted: W) -> u64 {
        let plan = &self.layout.tables[t];
        permuted.shr(self.layout.spec.bits - plan.key_bits).to_u128() as u64
    }

    /// Every pair within `k` among `rows`, permuted words of table `t` that
    /// share one key (a shuffled group); repeats are ignored. Pairs come
    /// back unpermuted as `(a, b, distance)` with `a < b`, sorted, and only
    /// if table `t` owns them, so that over all tables each pair appears
    /// once.
    ///
    /// # Panics
    /// If `t >= self.tables()`.
    pub fn group_pairs<W: Word>(&self, t: usize, mut rows: Vec<W>) -> Vec<(W, W, u32)> {
        rows.sort_unstable();
        rows.dedup();
        let mut out = Vec::new();
        if rows.len() > 1 {
            run_pairs(&rows, &self.layout, t, self.layout.spec.k, 0, &mut out);
        }
        for p in &mut out {
            if p.1 < p.0 {
                std::mem::swap(&mut p.0, &mut p.1);
            }
        }
        out.sort_unstable();
        out
    }

    /// [`group_pairs`](Self::group_pairs) of a group already sorted and
    /// without repeats, appended to `out` unsorted (each pair `(a, b,
    /// distance)` with `a < b`): what an out-of-core join calls on every key
    /// run of a sorted partition, without a copy per run.
    ///
    /// # Panics
    /// If `t >= self.tables()`.
    pub fn sorted_group_pairs<W: Word>(&self, t: usize, rows: &[W], out: &mut Vec<(W, W, u32)>) {
        let start = out.len();
        if rows.len() > 1 {
            run_pairs(rows, &self.layout, t, self.layout.spec.k, 0, out);
        }
        for p in &mut out[start..] {
            if p.1 < p.0 {
                std::mem::swap(&mut p.0, &mut p.1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use super::*;
    use crate::index::pairs::all_pairs;

    fn words(n: usize, seed: u64, centres: usize, spread: u32) -> Vec<u64> {
        let mut x = seed;
        let mut next = || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            x
        };
        let cs: Vec<u64> = (0..centres).map(|_| next()).collect();
        (0..n)
            .map(|_| {
                let mut w = cs[(next() >> 33) as usize % cs.len()];
                for _ in 0..(next() >> 60) as u32 % (spread + 1) {
                    w ^= 1 << (next() >> 58);
                }
                w
            })
            .collect()
    }

    /// Spreads the rows over `machines` by a hash of (table, key), as a
    /// shuffle does, and verifies each machine's groups on their own.
    fn sharded(plan: &ShardedPairs, words: &[u64], machines: u64) -> BTreeSet<(u64, u64, u32)> {
        let mut parts: Vec<BTreeMap<(usize, u64), Vec<u64>>> = vec![BTreeMap::new(); machines as usize];
        for &w in words {
            for t in 0..plan.tables() {
                let p = plan.permute(t, w);
                let key = plan.key(t, p);
                let m = (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ t as u64) % machines;
                parts[m as usize].entry((t, key)).or_default().push(p);
            }
        }
        let mut out = BTreeSet::new();
        for part in parts {
            for ((t, _), rows) in part {
                for p in plan.group_pairs(t, rows) {
                    assert!(out.insert(p), "pair {p:?} reported twice");
                }
            }
        }
        out
    }

    fn single(words: &[u64], k: u32, opts: PairsOptions) -> BTreeSet<(u64, u64, u32)> {
        let ap = all_pairs(words, 64, k, opts).unwrap();
        let mut distinct: Vec<u64> = words.to_vec();
        distinct.sort_unstable();
        distinct.dedup();
        ap.pairs.iter().map(|&(a, b, d)| (distinct[a as usize], distinct[b as usize], d)).collect()
    }

    #[test]
    fn equals_the_single_machine_join() {
        let ws = words(3000, 11, 40, 6);
        for k in [0, 1, 3, 4, 8] {
            let plan = ShardedPairs::for_batch(64, k, ws.len(), PairsOptions::default()).unwrap();
            let want = single(&ws, k, PairsOptions::default());
            assert!(!want.is_empty() || k == 0);
            for machines in [1, 7] {
                assert_eq!(sharded(&plan, &ws, machines), want, "k = {k}, {machines} machines");
            }
        }
        // An explicit layout too.
        let opts = PairsOptions { blocks: Some(7), ..PairsOptions::default() };
        let plan = ShardedPairs::for_batch(64, 3, ws.len(), opts).unwrap();
        assert_eq!(plan.spec().blocks, 7);
        assert_eq!(sharded(&plan, &ws, 5), single(&ws, 3, opts));
    }

    #[test]
    fn shuffle_layouts_take_the_fewest_tables_and_stay_exact() {
        let ws = words(3000, 13, 60, 8);
        for k in [0, 3, 4, 8] {
            let plan = ShardedPairs::for_shuffle(64, k, ws.len(), 100).unwrap();
            let spec = plan.spec();
            assert!(ws.len() as f64 / 2f64.powi(spec.min_key_bits() as i32) <= 100.0);
            if spec.blocks > k + 1 {
                let fewer = LayoutSpec { bits: 64, k, blocks: spec.blocks - 1 };
                assert!(
                    fewer.validate().is_err()
                        || ws.len() as f64 / 2f64.powi(fewer.min_key_bits() as i32) > 100.0
                );
            }
            assert_eq!(sharded(&plan, &ws, 4), single(&ws, k, PairsOptions::default()), "k = {k}");
        }
        // A generous bound gives the fewest tables there are: k + 1 blocks.
        let plan = ShardedPairs::for_shuffle(64, 8, 1000, MAX_GROUP_ROWS).unwrap();
        assert_eq!((plan.spec().blocks, plan.tables()), (9, 9));
        // 10^9 fingerprints at k = 8 still fit 9 tables (7.8M rows a key); 2·10^9 need a longer key.
        assert_eq!(ShardedPairs::for_shuffle(64, 8, 1_000_000_000, MAX_GROUP_ROWS).unwrap().spec().blocks, 9);
        assert!(ShardedPairs::for_shuffle(64, 8, 2_000_000_000, MAX_GROUP_ROWS).unwrap().spec().blocks > 9);
    }

    #[test]
    fn a_skewed_key_is_split_exactly() {
        // 3,000 words within 3 bits of one centre: every table's key run
        // holds most of them, and the run is split by a finer layout.
        let ws = words(3000, 5, 1, 3);
        let plan = ShardedPairs::for_batch(64, 3, ws.len(), PairsOptions::default()).unwrap();
        let got = sharded(&plan, &ws, 3);
        assert!(got.len() > 10_000);
        assert_eq!(got, single(&ws, 3, PairsOptions::default()));
    }

    #[test]
    fn permute_round_trips_and_keys_fit() {
        let plan = ShardedPairs::for_batch(64, 3, 1000, PairsOptions::default()).unwrap();
        for w in words(100, 3, 100, 0) {
            for t in 0..plan.tables() {
                let p = plan.permute(t, w);
                assert_eq!(plan.unpermute(t, p), w);
                assert!(plan.key(t, p) >> plan.layout.tables[t].key_bits == 0);
            }
        }
    }
}
