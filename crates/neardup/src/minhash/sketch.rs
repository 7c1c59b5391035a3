//! Computing signatures: one-permutation hashing with optimal
//! densification (Shrivastava, ICML 2017), and the classic K-hash MinHash
//! it is measured against.
//!
//! One permutation: each feature's 64-bit hash picks a bin from its high
//! half (`(h >> 32) · K >> 32`) and competes for that bin's minimum with
//! its low half, so a document costs O(features + K) instead of
//! O(features × K). Bins no feature fell into borrow the value of a
//! non-empty bin chosen by a sequence of hashes of (bin, attempt) that is
//! the same for every document ("optimal densification"): two documents
//! borrow from the same place exactly when that place holds for both, which
//! keeps the estimator unbiased.

/// Hash of a feature for the signatures made with `seed`.
#[inline]
pub(crate) fn feature_hash(feature: &str, seed: u64) -> u64 {
    xxhash_rust::xxh3::xxh3_64_with_seed(feature.as_bytes(), seed)
}

/// SplitMix64's finalizer: a bijective mix of 64 bits.
#[inline]
pub(crate) fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The bin of `h` among `k` (from the high 32 bits).
#[inline]
fn bin(h: u64, k: usize) -> usize {
    (((h >> 32) * k as u64) >> 32) as usize
}

/// Fills `out` (K values) with the one-permutation signature of the
/// feature hashes; returns false (and leaves `out` undefined) when there
/// are none.
pub(crate) fn one_permutation(hashes: impl IntoIterator<Item = u64>, seed: u64, out: &mut [u32]) -> bool {
    let mut bins = Bins::new(out.len());
    for h in hashes {
        bins.add(h);
    }
    bins.finish(seed, out)
}

/// The bins of a one-permutation signature being filled, one feature hash
/// at a time ([`one_permutation`] as the hashes come). Up to
/// [`INLINE_BINS`] bins live in the value itself: a short document (most
/// of a Chinese corpus) then costs no allocation.
pub(crate) struct Bins {
    /// u64 slots, so that "empty" (u64::MAX) is not a value.
    inline: [u64; INLINE_BINS],
    heap: Vec<u64>,
    k: usize,
    any: bool,
}

/// The most bins [`Bins`] holds without allocating.
const INLINE_BINS: usize = 256;

impl Bins {
    /// `k` empty bins.
    pub(crate) fn new(k: usize) -> Bins {
        let heap = if k > INLINE_BINS { vec![u64::MAX; k] } else { Vec::new() };
        Bins { inline: [u64::MAX; INLINE_BINS], heap, k, any: false }
    }

    #[inline(always)]
    fn mins(&self) -> &[u64] {
        if self.k <= INLINE_BINS {
            &self.inline[..self.k]
        } else {
            &self.heap
        }
    }

    /// Adds one feature hash.
    #[inline(always)]
    pub(crate) fn add(&mut self, h: u64) {
        let b = bin(h, self.k);
        let v = u64::from(h as u32);
        let mins = if self.k <= INLINE_BINS { &mut self.inline[..self.k] } else { &mut self.heap[..] };
        if v < mins[b] {
            mins[b] = v;
        }
        self.any = true;
    }

    /// Fills `out` (K values) with the signature; false (and `out`
    /// undefined) when no hash was added.
    pub(crate) fn finish(self, seed: u64, out: &mut [u32]) -> bool {
        if !self.any {
            return false;
        }
        densify(self.mins(), seed, out);
        true
    }
}

/// Optimal densification: every empty bin takes the value of the first
/// non-empty bin in its own fixed pseudo-random sequence of bins
/// ([`borrowed_bin`]).
///
/// The sequences are the same for every document, so their first
/// [`TABLED`] steps are computed once per `(seed, K)` and kept
/// ([`Candidates`]); an empty bin then tests its candidates against a
/// bitmap of the non-empty bins without a branch, and only when all of
/// them are empty too (for a document that fills two thirds of the bins,
/// one empty bin in 6,500; a third, one in 26) walks on as
/// [`densify_reference`] does. Short documents
/// leave many bins empty, where the walk's one unpredictable branch per
/// step cost a tenth of the `minhash` pipeline on Chinese.
fn densify(mins: &[u64], seed: u64, out: &mut [u32]) {
    let k = mins.len();
    // Which bins are filled, a bit each (on the stack up to K = 1,024).
    let mut stack = [0u64; 16];
    let mut heap = Vec::new();
    let filled: &mut [u64] = if k <= 64 * stack.len() {
        &mut stack[..k.div_ceil(64)]
    } else {
        heap.resize(k.div_ceil(64), 0);
        &mut heap
    };
    for ((bits, m), o) in filled.iter_mut().zip(mins.chunks(64)).zip(out.chunks_mut(64)) {
        for (b, (&m, o)) in m.iter().zip(o.iter_mut()).enumerate() {
            *o = m as u32;
            *bits |= u64::from(m != u64::MAX) << b;
        }
    }
    let filled = &*filled;
    let has = |j: usize| filled[j / 64] >> (j % 64) & 1 != 0;
    CANDIDATES.with(|c| {
        let mut c = c.borrow_mut();
        let table = c.for_seed(seed, k);
        for (w, &bits) in filled.iter().enumerate() {
            // The empty bins of this word (none past K).
            let live = if (w + 1) * 64 <= k { u64::MAX } else { (1u64 << (k % 64)) - 1 };
            let mut empty = !bits & live;
            while empty != 0 {
                let i = w * 64 + empty.trailing_zeros() as usize;
                empty &= empty - 1;
                let from = match table {
                    Some(t) => {
                        let cand = &t[i * TABLED..(i + 1) * TABLED];
                        let mut found = 0u32;
                        for (a, &j) in cand.iter().enumerate() {
                            found |= u32::from(has(usize::from(j))) << a;
                        }
                        if found != 0 {
                            usize::from(cand[found.trailing_zeros() as usize])
                        } else {
                            walk(has, seed, i, TABLED as u64 + 1, k)
                        }
                    }
                    None => walk(has, seed, i, 1, k),
                };
                out[i] = mins[from] as u32;
            }
        }
    });
}

/// The bin an empty bin `i` of `k` looks at on its `attempt`-th step (from 1).
#[inline]
fn borrowed_bin(seed: u64, i: usize, attempt: u64, k: usize) -> usize {
    let base = mix64(seed ^ 0x6d69_6e68_6173_6821).wrapping_add((i as u64) << 32);
    bin(mix64(base.wrapping_add(attempt)), k)
}

/// The first non-empty bin of `i`'s sequence from step `attempt` on.
fn walk(has: impl Fn(usize) -> bool + Copy, seed: u64, i: usize, attempt: u64, k: usize) -> usize {
    (attempt..).map(|a| borrowed_bin(seed, i, a, k)).find(|&j| has(j)).expect("a non-empty bin exists")
}

/// How many steps of each bin's sequence [`Candidates`] keeps.
const TABLED: usize = 8;

/// The first [`TABLED`] steps of every bin's sequence for one `(seed, K)`,
/// `TABLED` per bin (kept for K ≤ 65,536, which u16 bins cover).
#[derive(Default)]
struct Candidates {
    key: Option<(u64, usize)>,
    bins: Vec<u16>,
}

impl Candidates {
    /// The table for `(seed, k)`, computed on first use (a thread keeps
    /// the last one: a process uses one configuration, or a few).
    fn for_seed(&mut self, seed: u64, k: usize) -> Option<&[u16]> {
        if k > 1 << 16 {
            return None;
        }
        if self.key != Some((seed, k)) {
            self.bins.clear();
            for i in 0..k {
                for a in 1..=TABLED as u64 {
                    self.bins.push(borrowed_bin(seed, i, a, k) as u16);
                }
            }
            self.key = Some((seed, k));
        }
        Some(&self.bins)
    }
}

thread_local! {
    static CANDIDATES: std::cell::RefCell<Candidates> = std::cell::RefCell::default();
}

/// Densification one step at a time, as first written: the reference the
/// tabled [`densify`] is tested against.
#[cfg(test)]
fn densify_reference(mins: &[u64], seed: u64, out: &mut [u32]) {
    let k = mins.len();
    for (i, o) in out.iter_mut().enumerate() {
        if mins[i] != u64::MAX {
            *o = mins[i] as u32;
            continue;
        }
        let base = mix64(seed ^ 0x6d69_6e68_6173_6821).wrapping_add((i as u64) << 32);
        let mut attempt = 1u64;
        loop {
            let j = bin(mix64(base.wrapping_add(attempt)), k);
            if mins[j] != u64::MAX {
                *o = mins[j] as u32;
                break;
            }
            attempt += 1;
        }
    }
}

/// The classic MinHash: value `i` is the minimum over the features of an
/// independent hash `i`. O(features × K): the reference the one-permutation
/// signatures are measured against, not what neardup uses.
pub fn classic(features: &[&str], seed: u64, k: usize) -> Option<Vec<u32>> {
    if features.is_empty() {
        return None;
    }
    let hashes: Vec<u64> = features.iter().map(|f| feature_hash(f, seed)).collect();
    Some(
        (0..k as u64)
            .map(|i| {
                let salt = mix64(seed.wrapping_add(i.wrapping_mul(0x9e37_79b9_7f4a_7c15)));
                hashes.iter().map(|&h| mix64(h ^ salt) as u32).min().expect("non-empty")
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bin_is_filled_and_the_same_set_gives_the_same_signature() {
        let (x, y) = (0x1234_5678_0000_0042u64, 0xabcd_0000_0000_0099u64);
        let mut a = vec![0u32; 128];
        assert!(one_permutation([x, y], 3, &mut a));
        let mut b = vec![0u32; 128];
        assert!(one_permutation([y, x, x], 3, &mut b));
        assert_eq!(a, b);
        // Two features in two bins: every slot holds one of their values.
        assert!(a.iter().all(|&v| v == 0x42 || v == 0x99));
        assert!(a.contains(&0x42) && a.contains(&0x99));
        assert!(!one_permutation([], 3, &mut a));
    }

    proptest::proptest! {
        /// The tabled densification equals the step-by-step one: any K
        /// (past 64 and not a multiple of it), from one filled bin to all,
        /// and seeds that change between calls on one thread.
        #[test]
        fn densify_equals_the_reference(
            k in 1usize..300,
            filled in proptest::collection::vec(proptest::bits::u64::ANY, 5),
            sparse in 0u32..4,
            seeds in proptest::collection::vec(proptest::num::u64::ANY, 1..3),
        ) {
            let mut mins: Vec<u64> = (0..k)
                .map(|i| {
                    let bit = filled[i / 64] >> (i % 64) & 1 != 0;
                    // `sparse` empties more bins, so long walks past the table occur.
                    let keep = bit && (sparse == 0 || mix64(i as u64).is_multiple_of(1 << sparse));
                    if keep { mix64(i as u64 ^ 7) & 0xffff_ffff } else { u64::MAX }
                })
                .collect();
            if mins.iter().all(|&m| m == u64::MAX) {
                mins[k / 2] = 5;
            }
            for seed in seeds {
                let mut fast = vec![0u32; k];
                let mut slow = vec![1u32; k];
                densify(&mins, seed, &mut fast);
                densify_reference(&mins, seed, &mut slow);
                proptest::prop_assert_eq!(fast, slow);
            }
        }
    }

    #[test]
    fn a_single_filled_bin_fills_every_bin() {
        // Nearly every empty bin walks past the table here.
        let mut mins = vec![u64::MAX; 128];
        mins[77] = 9;
        let mut out = vec![0u32; 128];
        densify(&mins, 42, &mut out);
        assert!(out.iter().all(|&v| v == 9));
    }
}

#[cfg(test)]
mod estimator {
    use super::*;

    /// Two sets of `n` features sharing `shared`, drawn from `salt`.
    fn pair(n: usize, shared: usize, salt: u64) -> (Vec<String>, Vec<String>) {
        let f = |tag: &str, i: usize| format!("{tag}{salt}-{i}");
        let a = (0..n).map(|i| if i < shared { f("s", i) } else { f("a", i) }).collect();
        let b = (0..n).map(|i| if i < shared { f("s", i) } else { f("b", i) }).collect();
        (a, b)
    }

    fn oph(set: &[String], seed: u64, k: usize) -> Vec<u32> {
        let mut out = vec![0; k];
        assert!(one_permutation(set.iter().map(|s| feature_hash(s, seed)), seed, &mut out));
        out
    }

    /// Mean and variance of the estimates over `trials` random pairs.
    fn moments(n: usize, shared: usize, k: usize, classic_too: bool) -> ((f64, f64), Option<(f64, f64)>) {
        let trials = 300;
        let mut one = Vec::new();
        let mut cl = Vec::new();
        for t in 0..trials {
            let (a, b) = pair(n, shared, t);
            let seed = mix64(t ^ 0xabc);
            one.push(crate::minhash::estimate(&oph(&a, seed, k), &oph(&b, seed, k)));
            if classic_too {
                let r = |s: &Vec<String>| {
                    classic(&s.iter().map(String::as_str).collect::<Vec<_>>(), seed, k).unwrap()
                };
                cl.push(crate::minhash::estimate(&r(&a), &r(&b)));
            }
        }
        let m = |v: &[f64]| {
            let mean = v.iter().sum::<f64>() / v.len() as f64;
            (mean, v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (v.len() - 1) as f64)
        };
        (m(&one), classic_too.then(|| m(&cl)))
    }

    #[test]
    fn one_permutation_is_unbiased_with_the_variance_of_classic_minhash() {
        // Sets from 10 features (most bins densified) to 2,000 (every bin
        // filled); Jaccard = shared / (2n − shared).
        for (n, shared) in [(10, 5), (60, 40), (300, 100), (2000, 1500)] {
            let j = shared as f64 / (2 * n - shared) as f64;
            let ((mean, var), classic) = moments(n, shared, 128, n <= 300);
            // The standard error of the mean of 300 estimates is below
            // 0.0035 here; a bias of 0.015 would be over 4 of them.
            assert!((mean - j).abs() < 0.015, "n = {n}, J = {j:.3}: mean estimate {mean:.4}");
            // Binomial variance J(1 − J)/K, within sampling error (and
            // below it for small sets, as OPH samples without replacement).
            let binomial = j * (1.0 - j) / 128.0;
            assert!(var < 1.5 * binomial, "n = {n}: variance {var:.5} vs J(1 − J)/K = {binomial:.5}");
            if let Some((cmean, cvar)) = classic {
                assert!((cmean - j).abs() < 0.015, "classic n = {n}: {cmean:.4}");
                assert!(var < 1.5 * cvar, "n = {n}: OPH variance {var:.5} vs classic {cvar:.5}");
            }
        }
    }
}
