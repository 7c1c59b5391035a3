//! Every pair of fingerprints within `k` bits, in a batch.
//!
//! 1. Identical fingerprints are collapsed first: they are duplicates of
//!    each other (distance 0), reported as groups, never dropped.
//! 2. For each table of a pigeonhole [layout](super::LayoutSpec), the
//!    distinct fingerprints are permuted and sorted; entries with equal keys
//!    form runs, and the pairs inside a run are verified with popcount. A
//!    pair is reported only by the first table whose key blocks it agrees
//!    on, so each pair appears once.
//! 3. Over-long runs (skewed data: thousands of near-identical
//!    fingerprints) are split recursively by a finer layout over the bits
//!    outside the key, instead of comparing all their pairs.

use rayon::prelude::*;

use super::blob::huge_vec;
use super::layout::{self, Layout, LayoutSpec, TablePlan};
use super::sort::{for_each_key_group, sort_by_top};
use super::word::Word;
use crate::error::{Error, Result};

/// Runs longer than this are split by a finer layout.
const LONG_RUN: usize = 512;

/// The result of [`all_pairs`]: groups of identical fingerprints and the
/// pairs of groups within `k`.
#[derive(Clone, Debug, Default)]
pub struct AllPairs {
    /// Input positions, grouped by fingerprint (groups in ascending
    /// fingerprint order, positions ascending within a group).
    pub members: Vec<u32>,
    /// `groups + 1` offsets into `members`.
    pub group_starts: Vec<u32>,
    /// `(group a, group b, distance)` with `a < b`, sorted; distance >= 1.
    pub pairs: Vec<(u32, u32, u32)>,
    /// The layout used.
    pub layout: Option<LayoutSpec>,
}

impl AllPairs {
    /// Number of distinct fingerprints.
    pub fn groups(&self) -> usize {
        self.group_starts.len().saturating_sub(1)
    }

    /// The input positions holding group `g`'s fingerprint.
    pub fn group(&self, g: u32) -> &[u32] {
        &self.members[self.group_starts[g as usize] as usize..self.group_starts[g as usize + 1] as usize]
    }

    /// Number of input pairs (identical ones included) this stands for.
    pub fn pair_count(&self) -> u64 {
        let within: u64 = (0..self.groups() as u32)
            .map(|g| {
                let n = self.group(g).len() as u64;
                n * (n - 1) / 2
            })
            .sum();
        let across: u64 =
            self.pairs.iter().map(|&(a, b, _)| self.group(a).len() as u64 * self.group(b).len() as u64).sum();
        within + across
    }

    /// Calls `each(i, j, distance)` with `i < j` for every pair of input
    /// positions within `k`: identical fingerprints first, then the rest.
    pub fn for_each_pair(&self, mut each: impl FnMut(u32, u32, u32)) {
        for g in 0..self.groups() as u32 {
            let m = self.group(g);
            for (x, &i) in m.iter().enumerate() {
                for &j in &m[x + 1..] {
                    each(i, j, 0);
                }
            }
        }
        for &(a, b, d) in &self.pairs {
            for &i in self.group(a) {
                for &j in self.group(b) {
                    if i < j {
                        each(i, j, d)
                    } else {
                        each(j, i, d)
                    }
                }
            }
        }
    }
}

/// Options of [`all_pairs`]; the defaults choose the layout automatically.
#[derive(Clone, Copy, Debug)]
pub struct PairsOptions {
    /// Number of blocks, or `None` to choose (see [`layout::choose`]).
    pub blocks: Option<u32>,
    /// Memory budget for the layout choice, bytes. Default 4 GiB.
    pub memory: u64,
}

impl Default for PairsOptions {
    fn default() -> Self {
        PairsOptions { blocks: None, memory: 4 << 30 }
    }
}

/// Every pair of `words` (fingerprints of `bits` bits) within `k` bits.
///
/// # Errors
/// More than `u32::MAX` inputs, or an impossible layout.
pub fn all_pairs<W: Word>(words: &[W], bits: u32, k: u32, opts: PairsOptions) -> Result<AllPairs> {
    if words.len() >= u32::MAX as usize {
        return Err(Error::Config(format!("at most 2^32 - 1 fingerprints at once, not {}", words.len())));
    }
    // 1. Collapse identical fingerprints.
    let mut tagged: Vec<(W, u32)> = huge_vec(words.len());
    words.par_iter().enumerate().map(|(i, &w)| (w, i as u32)).collect_into_vec(&mut tagged);
    let shift = bits.saturating_sub(12);
    sort_by_top(&mut tagged, |(w, _)| w.shr(shift).low_usize());
    let mut distinct: Vec<W> = Vec::new();
    let mut group_starts: Vec<u32> = Vec::new();
    let mut members: Vec<u32> = Vec::with_capacity(tagged.len());
    for (i, &(w, pos)) in tagged.iter().enumerate() {
        if distinct.last() != Some(&w) {
            distinct.push(w);
            group_starts.push(i as u32);
        }
        members.push(pos);
    }
    group_starts.push(tagged.len() as u32);
    drop(tagged);

    // 2. Pairs of distinct fingerprints. At radii no layout can split
    // (k >= bits), every pair is compared.
    if k >= bits && opts.blocks.is_none() {
        let mut pairs = Vec::new();
        for (a, &x) in distinct.iter().enumerate() {
            for (b, &y) in distinct.iter().enumerate().skip(a + 1) {
                pairs.push((a as u32, b as u32, x.dist(y)));
            }
        }
        return Ok(AllPairs { members, group_starts, pairs, layout: None });
    }
    let spec = batch_layout(bits, k, distinct.len(), opts)?;
    let layout = Layout::new(spec)?;
    let found = distinct_pairs(&distinct, &layout, k, 0);
    // Map words back to group numbers.
    let mut pairs: Vec<(u32, u32, u32)> = found
        .par_iter()
        .map(|&(a, b, d)| {
            let ga = distinct.binary_search(&a).expect("word from the input") as u32;
            let gb = distinct.binary_search(&b).expect("word from the input") as u32;
            (ga.min(gb), ga.max(gb), d)
        })
        .collect();
    pairs.par_sort_unstable();
    Ok(AllPairs { members, group_starts, pairs, layout: Some(spec) })
}

/// The layout an all-pairs join of `n` distinct fingerprints uses:
/// `opts.blocks` when given, else the cheapest for a batch (every table is
/// sorted once, so fewer tables are favoured unless runs would be long).
///
/// # Errors
/// An impossible layout (e.g. `k >= bits` or more blocks than bits).
pub fn batch_layout(bits: u32, k: u32, n: usize, opts: PairsOptions) -> Result<LayoutSpec> {
    if let Some(m) = opts.blocks {
        let spec = LayoutSpec { bits, k, blocks: m };
        spec.validate()?;
        return Ok(spec);
    }
    let mut best = layout::choose(bits, k, n, opts.memory)?.spec;
    let n = n.max(1) as f64;
    let cost =
        |s: &LayoutSpec| s.tables() as f64 * (n * 30.0 + n * n / 2f64.powi(s.min_key_bits() as i32) / 2.0);
    for m in (k + 1)..=bits.min(k + 12) {
        let s = LayoutSpec { bits, k, blocks: m };
        if s.validate().is_ok() && cost(&s) < cost(&best) {
            best = s;
        }
    }
    Ok(best)
}

/// Pairs `(a, b, d)` of distinct sorted `words` within `k`, each once.
fn distinct_pairs<W: Word>(words: &[W], layout: &Layout, k: u32, depth: u32) -> Vec<(W, W, u32)> {
    let f = layout.spec.bits;
    let mut out = Vec::new();
    // The permuted table, its allocation reused table after table (a fresh
    // one would be faulted in and zeroed every time).
    let mut permuted: Vec<W> = Vec::new();
    for (t, plan) in layout.tables.iter().enumerate() {
        let shift = f - plan.key_bits;
        let scan = |chunk: &[W]| {
            let mut found = Vec::new();
            let mut i = 0;
            while i < chunk.len() {
                let key = chunk[i].shr(shift);
                let mut j = i + 1;
                while j < chunk.len() && chunk[j].shr(shift) == key {
                    j += 1;
                }
                if j - i > 1 {
                    run_pairs(&chunk[i..j], layout, t, k, depth, &mut found);
                }
                i = j;
            }
            found
        };
        let parts: Vec<Vec<(W, W, u32)>> = if t == 0 {
            // The words themselves, sorted: cut between key runs.
            if depth == 0 && words.len() > 1 << 16 {
                let cuts = run_aligned_cuts(words, shift, rayon::current_num_threads() * 16);
                cuts.par_windows(2).map(|c| scan(&words[c[0]..c[1]])).collect()
            } else {
                vec![scan(words)]
            }
        } else {
            // Runs need equal keys together, not sorted words: permuted on
            // the fly while scattered by key, each bucket scanned in cache.
            let lut = ByteLut::new(plan, f);
            for_each_key_group(words, |w| lut.permute(plan, w), &mut permuted, f, plan.key_bits, scan)
        };
        for part in parts {
            out.extend(part);
        }
    }
    out
}

/// A table's permutation of 64-bit words as eight byte lookups: a bit
/// permutation maps OR to OR, so `permute(w)` is the OR over the bytes of
/// `w` of the permuted byte, read from 8 × 256 words (16 KiB, in L1) —
/// fewer instructions than moving each block with shifts and masks.
/// Wider words are permuted by the plan itself.
struct ByteLut(Option<Box<[[u64; 256]; 8]>>);

impl ByteLut {
    fn new(plan: &TablePlan, f: u32) -> ByteLut {
        if f != 64 {
            return ByteLut(None);
        }
        let mut t = Box::new([[0u64; 256]; 8]);
        for (i, row) in t.iter_mut().enumerate() {
            for (b, v) in row.iter_mut().enumerate() {
                *v = plan.permute((b as u64) << (8 * i));
            }
        }
        ByteLut(Some(t))
    }

    #[inline(always)]
    fn permute<W: Word>(&self, plan: &TablePlan, w: W) -> W {
        match &self.0 {
            Some(t) => {
                let x = w.to_u128() as u64;
                let p = (0..8).fold(0u64, |acc, i| acc | t[i][((x >> (8 * i)) & 0xff) as usize]);
                W::from_u128(u128::from(p))
            }
            None => plan.permute(w),
        }
    }
}

/// Positions cutting `p` into about `parts` pieces, never inside a key run.
fn run_aligned_cuts<W: Word>(p: &[W], shift: u32, parts: usize) -> Vec<usize> {
    let mut cuts = vec![0];
    let step = p.len().div_ceil(parts.max(1));
    let mut c = step;
    while c < p.len() {
        let key = p[c - 1].shr(shift);
        while c < p.len() && p[c].shr(shift) == key {
            c += 1;
        }
        if c < p.len() {
            cuts.push(c);
        }
        c += step;
    }
    cuts.push(p.len());
    cuts
}

/// Pairs inside one key run of table `t` (distinct permuted words sharing
/// the key), unpermuted, each reported only if `t` owns it.
pub(crate) fn run_pairs<W: Word>(
    run: &[W],
    layout: &Layout,
    t: usize,
    k: u32,
    depth: u32,
    out: &mut Vec<(W, W, u32)>,
) {
    let plan = &layout.tables[t];
    let f = layout.spec.bits;
    let rest = f - plan.key_bits;
    let mut emit = |a: W, b: W, d: u32| {
        let (x, y) = (plan.unpermute(a), plan.unpermute(b));
        if layout.owner(x, y) == t {
            out.push((x, y, d));
        }
    };
    if run.len() > LONG_RUN && depth < 6 && rest > 2 * (k + 1) {
        // Split by a finer layout over the bits outside the key.
        let sub_spec = layout::choose(rest, k, run.len(), u64::MAX).map(|c| c.spec);
        if let Ok(sub) = sub_spec.and_then(Layout::new) {
            let mask = W::low_mask(rest);
            let key = run[0].and(mask.xor(W::low_mask(f)));
            // The finer layout's first table is `low` itself: sorted.
            let mut low: Vec<W> = run.iter().map(|&w| w.and(mask)).collect();
            low.sort_unstable();
            for (a, b, d) in distinct_pairs(&low, &sub, k, depth + 1) {
                emit(key.or(a), key.or(b), d);
            }
            return;
        }
    }
    for (i, &a) in run.iter().enumerate() {
        for &b in &run[i + 1..] {
            let d = a.dist(b);
            if d <= k {
                emit(a, b, d);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brute(words: &[u64], k: u32) -> Vec<(u32, u32, u32)> {
        let mut v = Vec::new();
        for i in 0..words.len() {
            for j in i + 1..words.len() {
                let d = (words[i] ^ words[j]).count_ones();
                if d <= k {
                    v.push((i as u32, j as u32, d));
                }
            }
        }
        v
    }

    #[test]
    fn long_runs_are_split_exactly() {
        // 2,000 fingerprints within 3 bits of one centre, in the low bits:
        // every table's key run holds most of them.
        let centre = 0xfedc_ba98_7654_3210u64;
        let mut x = 7u64;
        let mut words = vec![centre, centre];
        for _ in 0..2000 {
            let mut w = centre;
            for _ in 0..3 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                w ^= 1 << (x >> 58);
            }
            words.push(w);
        }
        let ap = all_pairs(&words, 64, 3, PairsOptions::default()).unwrap();
        let mut got = Vec::new();
        ap.for_each_pair(|i, j, d| got.push((i, j, d)));
        got.sort_unstable();
        assert_eq!(got, brute(&words, 3));
    }
}
