//! Every pair of fingerprints within `k` bits, in a batch.
//!
//! 1. Identical fingerprints are collapsed first: they are duplicates of
//!    each other (distance 0), reported as groups, never dropped.
//! 2. For each table of a pigeonhole [layout](super::LayoutSpec), the
//!    distinct fingerprints with equal keys are found together (runs), and
//!    the pairs inside a run are verified with popcount. A pair is reported
//!    only by the first table whose key blocks it agrees on, so each pair
//!    appears once. Tables sharing their first key block share one
//!    bucketing of the words, and each bucket is scanned in cache.
//! 3. Over-long runs (skewed data: thousands of near-identical
//!    fingerprints) are split recursively by a finer layout over the bits
//!    outside the key, instead of comparing all their pairs.

use rayon::prelude::*;

use super::blob::huge_vec;
use super::layout::{self, Layout, LayoutSpec, TablePlan, TopBits};
use super::sort::{buckets_mut, scatter, sort_bucket};
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
    let Collapsed { distinct, group_starts, members, spare } = collapse(words, bits);

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
    let found = distinct_pairs(&distinct, &layout, k, 0, spare);
    // Map words back to group numbers.
    let mut pairs = group_numbers(&distinct, &found);
    pairs.par_sort_unstable();
    Ok(AllPairs { members, group_starts, pairs, layout: Some(spec) })
}

/// A condition a pair within `k` must also meet to be a link of
/// [`linked`]: `accepts(distance, a, b)` on the `length`s of the two input
/// positions (a document's feature count, for a radius that depends on
/// length). A group of identical words is judged by its shortest member,
/// so `accepts` must never take a pair of longer inputs that it refuses
/// for shorter ones at the same distance (true of every radius that
/// shrinks with length).
pub struct LinkRule<'a> {
    /// Each input position's length.
    pub length: &'a (dyn Fn(u32) -> u32 + Sync),
    /// Whether two inputs of these lengths at this distance are linked.
    pub accepts: &'a (dyn Fn(u32, u32, u32) -> bool + Sync),
    /// Distances up to this are linked whatever the lengths (`accepts`
    /// must agree): no length is looked up for them.
    pub always: u32,
}

/// Whether a pair of distinct words at a distance (at most `k`) is a link:
/// with a rule, `accepts(distance, length(a), length(b))` (a run looks each
/// word's length up once, not once a comparison); without, every pair.
struct Edge<'a, W> {
    rule: Option<(WordLength<'a, W>, Accepts<'a>)>,
    /// Distances up to this are links without a look at the lengths.
    always: u32,
}

/// A word's length, for [`Edge`].
type WordLength<'a, W> = &'a (dyn Fn(W) -> u32 + Sync);
/// `accepts(distance, length a, length b)`, for [`Edge`].
type Accepts<'a> = &'a (dyn Fn(u32, u32, u32) -> bool + Sync);

/// What [`all_pairs`] finds, as links for a union-find instead of a list:
/// `link(i, j)` for input positions `i`, `j` joined by identical words or
/// by a pair within `k` (that `rule` accepts, when given). The links give
/// the components of all those pairs, but are not the pairs themselves:
/// inside each run of words with equal keys, only the components of the
/// run are found (a word is compared with each component's members until
/// one is near, and no further), and each member is linked to its
/// component's first. A dense cloud of near-identical fingerprints (tens
/// of thousands on near-duplicate-heavy data) thus costs about one
/// comparison per word and table, not one per pair. A long run that holds
/// many components is split by a finer layout over the bits that vary in
/// it, or compared directly up to 16,384 words.
/// Nothing is held beyond a few buckets' links at a time, so memory stays
/// that of the words. Returns the layout used.
///
/// # Errors
/// As [`all_pairs`].
pub fn linked<W: Word>(
    words: &[W],
    bits: u32,
    k: u32,
    opts: PairsOptions,
    rule: Option<&LinkRule<'_>>,
    link: &mut dyn FnMut(u32, u32),
) -> Result<Option<LayoutSpec>> {
    if words.len() >= u32::MAX as usize {
        return Err(Error::Config(format!("at most 2^32 - 1 fingerprints at once, not {}", words.len())));
    }
    let Collapsed { distinct, group_starts, members, spare } = collapse(words, bits);
    let first = |g: u32| members[group_starts[g as usize] as usize];
    for g in 0..distinct.len() {
        let m = &members[group_starts[g] as usize..group_starts[g + 1] as usize];
        for &i in &m[1..] {
            link(m[0], i);
        }
    }
    // Each group's shortest member's length, for the rule.
    let shortest: Vec<u32> = match rule {
        Some(r) => (0..distinct.len())
            .into_par_iter()
            .map(|g| {
                let m = &members[group_starts[g] as usize..group_starts[g + 1] as usize];
                m.iter().map(|&i| (r.length)(i)).min().unwrap_or(0)
            })
            .collect(),
        None => Vec::new(),
    };
    let length_of = |w: W| shortest[distinct.partition_point(|&x| x < w)];
    let ruled = Edge {
        rule: rule.map(|r| (&length_of as WordLength<'_, W>, r.accepts)),
        always: rule.map_or(k, |r| r.always),
    };
    if k >= bits && opts.blocks.is_none() {
        for (a, &x) in distinct.iter().enumerate() {
            for (b, &y) in distinct.iter().enumerate().skip(a + 1) {
                let d = x.dist(y);
                if d <= k && rule.is_none_or(|r| (r.accepts)(d, length_of(x), length_of(y))) {
                    link(first(a as u32), first(b as u32));
                }
            }
        }
        return Ok(None);
    }
    let spec = batch_layout(bits, k, distinct.len(), opts)?;
    let layout = Layout::new(spec)?;
    distinct_pairs_into(&distinct, &layout, k, 0, spare, Some(&ruled), &mut |part| {
        for (a, b, _) in group_numbers(&distinct, &part) {
            link(first(a), first(b));
        }
    });
    Ok(Some(spec))
}

/// Groups of identical `words`: the distinct words ascending, the start of
/// each group in `members`, and the input positions grouped by word
/// (ascending within a group).
///
/// The (word, position) pairs are scattered by the top 12 bits of the word
/// (positions attached on the fly), then each bucket is sorted in cache by
/// a counting sort on the next 12 bits and its groups read off, all buckets
/// in parallel: a few passes over memory instead of a comparison sort of
/// every pair.
fn collapse<W: Word>(words: &[W], bits: u32) -> Collapsed<W> {
    let top = bits.min(12);
    let next = (bits - top).min(12);
    let shift = bits - top;
    let mut tagged: Vec<(W, u32)> = Vec::new();
    let bounds = scatter(
        words,
        |i, w| (w, i as u32),
        &mut tagged,
        |(w, _)| {
            if top == 0 {
                0
            } else {
                w.shr(shift).low_usize()
            }
        },
    );
    let sorted = bounds.len() == 2;
    let digit = |(w, _): &(W, u32)| w.shr(shift - next).and(W::low_mask(next)).low_usize();
    // Sort each bucket and count its distinct words.
    let counts: Vec<usize> = buckets_mut(&mut tagged, &bounds)
        .into_par_iter()
        .map_init(Vec::new, |copy, bucket| {
            if !sorted {
                sort_bucket(bucket, copy, digit, next);
            }
            1 + bucket.windows(2).filter(|p| p[0].0 != p[1].0).count() - usize::from(bucket.is_empty())
        })
        .collect();
    // Then write every bucket's groups into its own stretch of the outputs.
    let groups: usize = counts.iter().sum();
    let mut distinct: Vec<W> = huge_vec(groups);
    let mut group_starts: Vec<u32> = huge_vec(groups + 1);
    let mut members: Vec<u32> = huge_vec(words.len());
    let mut group_bounds = vec![0usize];
    for &c in &counts {
        group_bounds.push(group_bounds.last().copied().unwrap_or(0) + c);
    }
    // Written in parallel straight into the spare capacity: the pages are
    // first touched by the threads that fill them, not zeroed beforehand.
    buckets_mut(&mut tagged, &bounds)
        .into_par_iter()
        .zip(buckets_mut(&mut distinct.spare_capacity_mut()[..groups], &group_bounds))
        .zip(buckets_mut(&mut group_starts.spare_capacity_mut()[..groups], &group_bounds))
        .zip(buckets_mut(&mut members.spare_capacity_mut()[..words.len()], &bounds))
        .zip(bounds.par_windows(2))
        .for_each(|((((bucket, d), s), m), b)| {
            let mut g = 0;
            for (i, &(w, pos)) in bucket.iter().enumerate() {
                if i == 0 || bucket[i - 1].0 != w {
                    d[g].write(w);
                    s[g].write((b[0] + i) as u32);
                    g += 1;
                }
                m[i].write(pos);
            }
            assert_eq!(g, d.len(), "a bucket's group count changed");
        });
    // SAFETY: the buckets of `tagged` cover 0..words.len() and their group
    // stretches cover 0..groups (prefix sums of the counts, each bucket
    // writing exactly its count, asserted), so every element below these
    // lengths was written above.
    unsafe {
        distinct.set_len(groups);
        group_starts.set_len(groups);
        members.set_len(words.len());
    }
    group_starts.push(words.len() as u32);
    Collapsed { distinct, group_starts, members, spare: reuse_as_words(tagged) }
}

/// What [`collapse`] gives: the distinct words ascending, the start of each
/// group in `members`, the input positions grouped by word, and the
/// allocation of the (word, position) pairs for reuse.
struct Collapsed<W> {
    distinct: Vec<W>,
    group_starts: Vec<u32>,
    members: Vec<u32>,
    spare: Vec<W>,
}

/// The allocation of `v`, emptied, as a vector of words (twice the
/// capacity) when the two layouts agree, so that the next large buffer
/// needs no fresh memory (fresh pages are faulted in and zeroed, which on
/// a virtual machine can cost more than the pass that writes them).
fn reuse_as_words<W: Word>(v: Vec<(W, u32)>) -> Vec<W> {
    use std::mem::{align_of, size_of};
    if size_of::<(W, u32)>() != 2 * size_of::<W>() || align_of::<(W, u32)>() != align_of::<W>() {
        return Vec::new();
    }
    let mut v = std::mem::ManuallyDrop::new(v);
    let (ptr, cap) = (v.as_mut_ptr(), v.capacity());
    // SAFETY: the allocation came from the global allocator with the
    // layout of `cap` pairs: size `cap · size_of::<(W, u32)>()` = `2 · cap ·
    // size_of::<W>()` and the same alignment as `W` (both checked above),
    // so it is the layout of `2 · cap` words; the length is 0, so no
    // element (nor any padding byte of the pairs) is ever read as a word.
    unsafe { Vec::from_raw_parts(ptr.cast::<W>(), 0, 2 * cap) }
}

/// `(group a, group b, distance)` with `a < b` for pairs of words found
/// among `distinct` (sorted, holding every word of `found`). The words are
/// looked up sorted, each search starting where the one before ended (a
/// short gallop through nearby memory instead of a binary search from the
/// top of a large array for each).
fn group_numbers<W: Word>(distinct: &[W], found: &[(W, W, u32)]) -> Vec<(u32, u32, u32)> {
    let mut keys: Vec<(W, u32)> = found
        .iter()
        .enumerate()
        .flat_map(|(i, &(a, b, _))| [(a, 2 * i as u32), (b, 2 * i as u32 + 1)])
        .collect();
    keys.par_sort_unstable();
    let chunk = keys.len().div_ceil(rayon::current_num_threads() * 4).max(1);
    let located: Vec<Vec<(u32, u32)>> = keys
        .par_chunks(chunk)
        .map(|c| {
            let mut at = distinct.partition_point(|&w| w < c[0].0);
            c.iter()
                .map(|&(w, slot)| {
                    // Gallop from `at` to a range holding w, then bisect it.
                    let mut step = 1;
                    while at + step < distinct.len() && distinct[at + step] < w {
                        step *= 2;
                    }
                    let end = (at + step + 1).min(distinct.len());
                    at += distinct[at..end].partition_point(|&x| x < w);
                    debug_assert_eq!(distinct.get(at), Some(&w), "a word from the input");
                    (slot, at as u32)
                })
                .collect()
        })
        .collect();
    let mut group = vec![0u32; keys.len()];
    for (slot, g) in located.into_iter().flatten() {
        group[slot as usize] = g;
    }
    found
        .iter()
        .enumerate()
        .map(|(i, &(_, _, d))| {
            let (ga, gb) = (group[2 * i], group[2 * i + 1]);
            (ga.min(gb), ga.max(gb), d)
        })
        .collect()
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
///
/// The tables are taken in groups sharing their first leading block (with
/// five blocks at k = 3: four tables lead with block 0, three with block 1,
/// two with block 2, one with block 3). Each group buckets the words once by
/// the top bits of that block — the sorted words already are, for block 0;
/// the others are scattered — and inside each bucket, while it is in cache,
/// every table of the group finds its runs of equal keys (see [`KeyRuns`])
/// and compares the words inside each run. So ten tables cost three scatters and four
/// passes over the words, not ten of each, and no word is permuted except
/// in over-long runs (a pair's distance and its owning table do not depend
/// on the permutation).
fn distinct_pairs<W: Word>(
    words: &[W],
    layout: &Layout,
    k: u32,
    depth: u32,
    scattered: Vec<W>,
) -> Vec<(W, W, u32)> {
    let mut out = Vec::new();
    distinct_pairs_into(words, layout, k, depth, scattered, None, &mut |part| out.extend(part));
    out
}

/// Buckets whose pairs are found at once by [`distinct_pairs_into`]: what
/// bounds the pairs held at a time when they go to a sink.
const BUCKETS_AT_ONCE: usize = 256;

/// [`distinct_pairs`], handing the pairs to `sink` a few buckets at a time
/// instead of collecting them all; with an `edge` rule, links instead of
/// pairs (see [`linked`]): the components of each run of equal keys under
/// the pairs within `k` that `edge` accepts, as (first, member) pairs.
fn distinct_pairs_into<W: Word>(
    words: &[W],
    layout: &Layout,
    k: u32,
    depth: u32,
    mut scattered: Vec<W>,
    edge: Option<&Edge<'_, W>>,
    sink: &mut dyn FnMut(Vec<(W, W, u32)>),
) {
    let f = layout.spec.bits;
    // `scattered`: the scattered words, an allocation reused group after
    // group (a fresh one would be faulted in and zeroed every time).
    let bucketed = words.len() >= 1 << 16;
    let mut t = 0;
    while t < layout.tables.len() {
        let first = layout.tables[t].lead[0];
        let end = t + layout.tables[t..].iter().take_while(|p| p.lead[0] == first).count();
        let (shift, len) = layout.blocks[first as usize];
        let top = len.min(12);
        let top_shift = shift + len - top;
        let bucket_of = |w: &W| w.shr(top_shift).and(W::low_mask(top)).low_usize();
        let (source, bounds, fixed): (&[W], Vec<usize>, u32) = if !bucketed {
            (words, vec![0, words.len()], 0)
        } else if top_shift + top == f {
            // The leading block is the top of the word: sorted words are
            // bucketed already.
            let mut bounds: Vec<usize> =
                (0..1usize << top).map(|b| words.partition_point(|w| bucket_of(w) < b)).collect();
            bounds.push(words.len());
            (words, bounds, top)
        } else {
            let bounds = scatter(words, |_, w| w, &mut scattered, bucket_of);
            let fixed = if bounds.len() == 2 { 0 } else { top };
            (&scattered[..], bounds, fixed)
        };
        let buckets: Vec<&[W]> =
            bounds.windows(2).filter(|b| b[1] - b[0] > 1).map(|b| &source[b[0]..b[1]]).collect();
        let keys: Vec<TopBits> =
            layout.tables[t..end].iter().map(|p| p.top_of_permuted(f, p.key_bits)).collect();
        for some in buckets.chunks(BUCKETS_AT_ONCE) {
            let parts: Vec<Vec<(W, W, u32)>> = some
                .par_iter()
                .map_init(KeyRuns::default, |runs, bucket| {
                    let group = Group { layout, keys: &keys, t, first, fixed, k, depth, edge };
                    group.bucket_pairs(runs, bucket)
                })
                .collect();
            for part in parts.into_iter().filter(|p| !p.is_empty()) {
                sink(part);
            }
        }
        t = end;
    }
}

/// The tables of one group of [`distinct_pairs`], for its buckets.
struct Group<'a, W: Word> {
    layout: &'a Layout,
    /// Each table's key extractor.
    keys: &'a [TopBits],
    /// The group's first table.
    t: usize,
    /// The first leading block of its tables.
    first: u32,
    /// Top bits of the keys shared by every word of a bucket.
    fixed: u32,
    k: u32,
    depth: u32,
    /// Links instead of pairs, under this rule (see [`linked`]).
    edge: Option<&'a Edge<'a, W>>,
}

impl<W: Word> Group<'_, W> {
    /// The pairs of one bucket under every table of the group. Distances
    /// are popcounts: with the CPU's POPCNT instruction where it has one
    /// and the [SIMD level](crate::simd) is not `portable` (chosen at run
    /// time; the portable build counts bits with a dozen instructions
    /// instead of one).
    fn bucket_pairs(&self, runs: &mut KeyRuns, bucket: &[W]) -> Vec<(W, W, u32)> {
        #[cfg(target_arch = "x86_64")]
        if crate::simd::level() != crate::simd::Level::Portable
            && std::arch::is_x86_feature_detected!("popcnt")
        {
            // SAFETY: the CPU has POPCNT (checked just above).
            return unsafe { self.bucket_pairs_popcnt(runs, bucket) };
        }
        self.bucket_pairs_inline(runs, bucket)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt")]
    unsafe fn bucket_pairs_popcnt(&self, runs: &mut KeyRuns, bucket: &[W]) -> Vec<(W, W, u32)> {
        self.bucket_pairs_inline(runs, bucket)
    }

    #[inline(always)]
    fn bucket_pairs_inline(&self, runs: &mut KeyRuns, bucket: &[W]) -> Vec<(W, W, u32)> {
        let mut found = Vec::new();
        for (i, key) in self.keys.iter().enumerate() {
            let t = self.t + i;
            let plan = &self.layout.tables[t];
            if source_is_key_sorted(plan, self.first) {
                scan_sorted_runs(bucket, key, self.layout, t, self.k, self.depth, self.edge, &mut found);
            } else {
                let bits = plan.key_bits - self.fixed;
                runs.pairs(bucket, key, bits, self.layout, t, self.k, self.depth, self.edge, &mut found);
            }
        }
        found
    }
}

/// Whether sorted words are in `plan`'s key order: its leading blocks are
/// the first blocks, in order (the first table of the first group).
fn source_is_key_sorted(plan: &TablePlan, first: u32) -> bool {
    first == 0 && plan.lead.iter().enumerate().all(|(i, &b)| b == i as u32)
}

/// The pairs inside each run of equal keys of table `t` in `words`
/// (unpermuted, sorted by that key), each reported only if `t` owns it
/// (or the run's links, with an `edge` rule).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn scan_sorted_runs<W: Word>(
    words: &[W],
    key: &TopBits,
    layout: &Layout,
    t: usize,
    k: u32,
    depth: u32,
    edge: Option<&Edge<'_, W>>,
    found: &mut Vec<(W, W, u32)>,
) {
    let mut i = 0;
    while i < words.len() {
        let kv = key.get_word(words[i]);
        let mut j = i + 1;
        while j < words.len() && key.get_word(words[j]) == kv {
            j += 1;
        }
        if j - i > 1 {
            run_pairs_unpermuted(&words[i..j], layout, t, k, depth, edge, found);
        }
        i = j;
    }
}

/// The pairs of one run of equal keys of table `t` (unpermuted words),
/// each reported only if `t` owns it; an over-long run is permuted and
/// split by [`run_pairs`]. With an `edge` rule, the run's links (see
/// [`run_links`]); a long run whose components take too many comparisons
/// (many small ones) is split by [`split_links`].
#[inline(always)]
fn run_pairs_unpermuted<W: Word>(
    run: &[W],
    layout: &Layout,
    t: usize,
    k: u32,
    depth: u32,
    edge: Option<&Edge<'_, W>>,
    found: &mut Vec<(W, W, u32)>,
) {
    if let Some(edge) = edge {
        if run.len() <= LONG_RUN {
            run_links(run, k, edge, usize::MAX, found);
            return;
        }
        if !run_links(run, k, edge, LINK_BUDGET * run.len(), found) {
            split_links(run, k, depth, edge, found);
        }
        return;
    }
    if run.len() > LONG_RUN {
        let plan = &layout.tables[t];
        let permuted: Vec<W> = run.iter().map(|&w| plan.permute(w)).collect();
        return run_pairs(&permuted, layout, t, k, depth, found);
    }
    for (x, &a) in run.iter().enumerate() {
        for &b in &run[x + 1..] {
            let d = a.dist(b);
            if d <= k && layout.owner(a, b) == t {
                found.push((a, b, d));
            }
        }
    }
}

/// Comparisons per word that a long run may spend on its components
/// before it is split by a finer layout instead (a run of one dense cloud
/// spends about one per word).
const LINK_BUDGET: usize = 64;

/// The components of `run` (distinct words) under the pairs within `k`
/// that `edge` accepts, pushed to `found` as (first, member, 0) for each
/// other member. Each word is compared with each component found so far:
/// first with its centre (its first member) — a word more than `k` plus
/// the component's radius from the centre is near none of its members —
/// then with its members, latest first (the run is in key order, so
/// neighbours are alike), until one is near: it joins that component, and
/// any other component it is near is merged in. Exact: a word near any
/// member of a component finds one. Returns false, pushing nothing, if
/// that takes more than `budget` comparisons. Inlined, so that its
/// distances are counted with the POPCNT instruction where the caller was
/// compiled for it.
#[inline(always)]
fn run_links<W: Word>(
    run: &[W],
    k: u32,
    edge: &Edge<'_, W>,
    budget: usize,
    found: &mut Vec<(W, W, u32)>,
) -> bool {
    // Lengths are looked up when a distance beyond `always` needs them,
    // each once: a look-up searches the corpus's distinct words.
    let mut lengths: Vec<u32> = if edge.rule.is_some() { vec![u32::MAX; run.len()] } else { Vec::new() };
    let mut length = |i: usize| {
        if lengths[i] == u32::MAX {
            lengths[i] = edge.rule.map_or(0, |(length, _)| length(run[i]));
        }
        lengths[i]
    };
    // Each component: its members (the first is its centre) and its
    // radius, the largest distance of a member from the centre. A word
    // farther than k + radius from the centre is near no member (triangle
    // inequality), so a component of another family costs one comparison
    // instead of one per member.
    let mut comps: Vec<(Vec<u32>, u32)> = Vec::new();
    let mut spent = 0usize;
    for (i, &w) in run.iter().enumerate() {
        let mut home: Option<usize> = None;
        let mut c = 0;
        while c < comps.len() {
            let (members, radius) = &comps[c];
            spent += 1;
            let from_centre = run[members[0] as usize].dist(w);
            let mut near = false;
            if from_centre <= k + radius {
                for &m in members.iter().rev() {
                    spent += 1;
                    let v = run[m as usize];
                    let d = v.dist(w);
                    if d <= k
                        && (d <= edge.always
                            || edge.rule.is_none_or(|(_, accepts)| accepts(d, length(m as usize), length(i))))
                    {
                        near = true;
                        break;
                    }
                }
            }
            if spent > budget {
                return false;
            }
            match (near, home) {
                (false, _) => c += 1,
                (true, None) => {
                    let (members, radius) = &mut comps[c];
                    members.push(i as u32);
                    *radius = (*radius).max(from_centre);
                    home = Some(c);
                    c += 1;
                }
                (true, Some(h)) => {
                    // Merge component c into h; the last component moves to c.
                    let (moved, _) = comps.swap_remove(c);
                    let h = if h == comps.len() { c } else { h };
                    let (members, radius) = &mut comps[h];
                    let centre = run[members[0] as usize];
                    for &m in &moved {
                        *radius = (*radius).max(centre.dist(run[m as usize]));
                    }
                    members.extend(moved);
                    home = Some(h);
                }
            }
        }
        if home.is_none() {
            comps.push((vec![i as u32], 0));
        }
    }
    for (comp, _) in &comps {
        for &m in &comp[1..] {
            found.push((run[comp[0] as usize], run[m as usize], 0));
        }
    }
    true
}

/// Finds the runs of equal keys in a bucket without sorting it: the keys
/// of a bucket agree above their low `bits` bits, so those bits (the
/// digit) tell the runs apart. One pass counts the words per digit; a
/// second chains each word to the last word of its digit and compares it
/// with the words before it on the chain. No word moves; the counters and
/// chain heads are reused from bucket to bucket.
#[derive(Default)]
struct KeyRuns {
    /// Each word's digit.
    digits: Vec<u32>,
    /// Words per digit.
    count: Vec<u32>,
    /// Per digit, the latest word on its chain (`u32::MAX`: none yet).
    head: Vec<u32>,
    /// Per word, the word before it on its digit's chain.
    next: Vec<u32>,
}

impl KeyRuns {
    /// The pairs of `bucket` (unpermuted words whose keys of table `t`
    /// agree above their low `bits` bits) within `k`, each reported only if
    /// `t` owns it.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn pairs<W: Word>(
        &mut self,
        bucket: &[W],
        key: &TopBits,
        bits: u32,
        layout: &Layout,
        t: usize,
        k: u32,
        depth: u32,
        edge: Option<&Edge<'_, W>>,
        found: &mut Vec<(W, W, u32)>,
    ) {
        if bits > 20 || bucket.len() < 64 {
            // Too many digits to count (or too few words to bother): sort.
            let mut v = bucket.to_vec();
            v.sort_unstable_by_key(|&w| key.get_word(w));
            return scan_sorted_runs(&v, key, layout, t, k, depth, edge, found);
        }
        let mask = W::low_mask(bits);
        self.digits.clear();
        self.digits.extend(bucket.iter().map(|&w| key.get_word(w).and(mask).low_usize() as u32));
        self.count.clear();
        self.count.resize(1 << bits, 0);
        for &d in &self.digits {
            self.count[d as usize] += 1;
        }
        self.head.clear();
        self.head.resize(1 << bits, u32::MAX);
        self.next.clear();
        self.next.resize(bucket.len(), u32::MAX);
        let mut long: Vec<(u32, W)> = Vec::new();
        let mut run: Vec<W> = Vec::new();
        for (i, (&d, &w)) in self.digits.iter().zip(bucket).enumerate() {
            let c = self.count[d as usize];
            if c < 2 {
                continue;
            }
            if c as usize > LONG_RUN {
                long.push((d, w));
                continue;
            }
            if edge.is_some() {
                // Links: chain the runs now, take each whole below.
                self.next[i] = self.head[d as usize];
                self.head[d as usize] = i as u32;
                continue;
            }
            let mut j = self.head[d as usize];
            while j != u32::MAX {
                let v = bucket[j as usize];
                let dist = v.dist(w);
                if dist <= k && layout.owner(v, w) == t {
                    found.push((v, w, dist));
                }
                j = self.next[j as usize];
            }
            self.next[i] = self.head[d as usize];
            self.head[d as usize] = i as u32;
        }
        if let Some(edge) = edge {
            // Each chained run from its head (its last word), in bucket order.
            for (i, &d) in self.digits.iter().enumerate() {
                if self.head[d as usize] != i as u32 {
                    continue;
                }
                run.clear();
                let mut j = i as u32;
                while j != u32::MAX {
                    run.push(bucket[j as usize]);
                    j = self.next[j as usize];
                }
                run.reverse();
                run_links(&run, k, edge, usize::MAX, found);
            }
        }
        if !long.is_empty() {
            long.sort_unstable();
            for run in long.chunk_by(|a, b| a.0 == b.0) {
                let words: Vec<W> = run.iter().map(|&(_, w)| w).collect();
                run_pairs_unpermuted(&words, layout, t, k, depth, edge, found);
            }
        }
    }
}

/// The finer layout that splits a long run of `n` words over `rest` bits
/// at radius `k`: chosen for `n` rounded up to a power of two, and made
/// once per (rest, k, rounded n) for the process. Choosing and making a
/// layout costs milliseconds (a table per block combination, and a map of
/// 2^m agreement masks), which near-duplicate-heavy data, with a long run
/// in every table, once paid per run: 72 % of a 10^7-document SimHash
/// dedup. Any layout finds every pair, so the rounding changes no answer.
fn sub_layout(rest: u32, k: u32, n: usize) -> Option<std::sync::Arc<Layout>> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, OnceLock};
    type Cache = Mutex<HashMap<(u32, u32, u32), Option<Arc<Layout>>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let rounded = n.next_power_of_two();
    let key = (rest, k, rounded.trailing_zeros());
    let cache = CACHE.get_or_init(Cache::default);
    if let Some(found) = cache.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(&key) {
        return found.clone();
    }
    let made =
        layout::choose(rest, k, rounded, u64::MAX).and_then(|c| Layout::new(c.spec)).ok().map(Arc::new);
    cache.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(key, made.clone());
    made
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
        if let Some(sub) = sub_layout(rest, k, run.len()) {
            let mask = W::low_mask(rest);
            let key = run[0].and(mask.xor(W::low_mask(f)));
            // The finer layout's first table is `low` itself: sorted.
            let mut low: Vec<W> = run.iter().map(|&w| w.and(mask)).collect();
            low.sort_unstable();
            for (a, b, d) in distinct_pairs(&low, &sub, k, depth + 1, Vec::new()) {
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

/// Runs up to this long are linked by comparing words directly (at most
/// about 134 million comparisons, a tenth of a second), never split: a
/// finer layout over skewed words (most of their bits alike) keeps long
/// runs in most of its tables, and recursing table by table costs far
/// more than the comparisons it saves.
const DIRECT_RUN: usize = 16_384;

/// The links of a long run of distinct words (unpermuted) of many
/// components (see [`run_links`]). The bits that vary across the run are
/// packed into the low bits of each word (the others add nothing to any
/// distance), and the packed words are linked by a finer layout over just
/// those bits, recursively: so a run of words that agree on most of their
/// bits is split by the bits that tell them apart (a layout over all the
/// bits would keep it whole in most tables, and recurse table by table).
/// Short runs, few varying bits or deep recursion: linked directly.
fn split_links<W: Word>(run: &[W], k: u32, depth: u32, edge: &Edge<'_, W>, found: &mut Vec<(W, W, u32)>) {
    let varying = run.iter().fold(W::default(), |m, &w| m.or(w.xor(run[0])));
    let v = varying.dist(W::default());
    let sub = if run.len() > DIRECT_RUN && depth < 6 && v > 2 * (k + 1) {
        sub_layout(v, k, run.len())
    } else {
        None
    };
    let Some(sub) = sub else {
        run_links(run, k, edge, usize::MAX, found);
        return;
    };
    let positions: Vec<u32> =
        (0..W::BITS).filter(|&b| varying.shr(b).and(W::low_mask(1)) != W::default()).collect();
    let pack = |w: W| {
        positions
            .iter()
            .enumerate()
            .fold(W::default(), |p, (j, &b)| p.or(w.shr(b).and(W::low_mask(1)).shl(j as u32)))
    };
    let mut packed: Vec<(W, W)> = run.iter().map(|&w| (pack(w), w)).collect();
    packed.sort_unstable();
    let low: Vec<W> = packed.iter().map(|p| p.0).collect();
    let full = |x: W| packed[low.partition_point(|&y| y < x)].1;
    let sub_length = |x: W| edge.rule.map_or(0, |(length, _)| length(full(x)));
    let sub_edge = Edge {
        rule: edge.rule.map(|(_, accepts)| (&sub_length as WordLength<'_, W>, accepts)),
        always: edge.always,
    };
    distinct_pairs_into(&low, &sub, k, depth + 1, Vec::new(), Some(&sub_edge), &mut |part| {
        found.extend(part.into_iter().map(|(a, b, d)| (full(a), full(b), d)));
    });
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

    /// Components of `n` positions linked by `pairs`, as sorted lists.
    fn components(n: usize, pairs: impl IntoIterator<Item = (u32, u32)>) -> Vec<Vec<u32>> {
        let mut uf = crate::index::cluster::UnionFind::new(n);
        for (a, b) in pairs {
            uf.union(a, b);
        }
        uf.clusters()
    }

    /// `linked` joins what `all_pairs` pairs: the same components as brute
    /// force, on words with identical copies, a dense centre (long runs,
    /// split by a finer layout) and random ones, at several k, with
    /// layouts chosen and forced, for 64 bits.
    #[test]
    fn linked_gives_the_components_of_all_pairs() {
        let mut x = 35u64;
        let mut next = || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            x
        };
        let centre = 0x0123_4567_89ab_cdefu64;
        let mut words: Vec<u64> = Vec::new();
        for i in 0..4000 {
            let w = match i % 4 {
                0 => next(),
                1 => {
                    let mut w = centre;
                    for _ in 0..(next() % 4) {
                        w ^= 1 << (next() >> 58);
                    }
                    w
                }
                _ => {
                    words[(next() % (words.len() as u64 + 1)) as usize % words.len().max(1)]
                        ^ (1 << (next() >> 58))
                }
            };
            words.push(if i == 0 { centre } else { w });
        }
        words.extend_from_within(..50);
        for (k, blocks) in [(0, None), (2, None), (3, None), (3, Some(5)), (4, None)] {
            let opts = PairsOptions { blocks, ..PairsOptions::default() };
            let mut links = Vec::new();
            linked(&words, 64, k, opts, None, &mut |a, b| links.push((a, b))).unwrap();
            let want = components(words.len(), brute(&words, k).into_iter().map(|(a, b, _)| (a, b)));
            assert!(
                k < 3 || want.iter().any(|c| c.len() > LONG_RUN),
                "a run long enough to split at k = {k}"
            );
            assert_eq!(components(words.len(), links), want, "k = {k}, blocks {blocks:?}");
        }
    }

    /// `linked` with a rule on lengths joins what brute force joins: dense
    /// clouds (one component per long run), skewed words that share their
    /// top bits but are not near (long runs of many components, split by
    /// finer layouts in links mode), identical copies of unequal lengths,
    /// at the radii of a length-dependent rule, 64 and 128 bits.
    #[test]
    fn linked_with_a_rule_gives_the_components_of_brute_force() {
        let mut rng = neardup_testkit::Rng(0x1bad_5eed_0035_0036);
        let mut next = || rng.next();
        let mut words: Vec<u64> = Vec::new();
        for i in 0..6000u64 {
            let w = match i % 5 {
                0 => next(),
                // Skewed: the top 40 bits shared, the rest random.
                1 | 2 => 0x5a5a_5a5a_5a00_0000 | (next() & 0xff_ffff),
                // A dense cloud around one centre.
                3 => {
                    let mut w = 0x0123_4567_89ab_cdefu64;
                    for _ in 0..(next() % 5) {
                        w ^= 1 << (next() % 64);
                    }
                    w
                }
                _ => words[(next() as usize) % words.len()] ^ (1 << (next() % 64)) ^ (1 << (next() % 64)),
            };
            words.push(w);
        }
        words.extend_from_within(100..160);
        let lengths: Vec<u32> = (0..words.len()).map(|_| (next() % 2000) as u32).collect();
        // Shrinking with length: 8 bits for pairs of short documents, 4 else.
        let radius = |a: u32, b: u32| if a.min(b) < 600 && a.max(b) < 1200 { 8 } else { 4 };
        let accepts = |d: u32, a: u32, b: u32| d <= radius(a, b);
        let length = |i: u32| lengths[i as usize];
        for (k, always) in [(4, 0), (8, 0), (8, 4)] {
            let rule = LinkRule { length: &length, accepts: &accepts, always };
            let mut want_pairs = Vec::new();
            for i in 0..words.len() {
                for j in i + 1..words.len() {
                    let d = words[i].dist(words[j]);
                    if d == 0 || (d <= k && accepts(d, lengths[i], lengths[j])) {
                        want_pairs.push((i as u32, j as u32));
                    }
                }
            }
            let want = components(words.len(), want_pairs);
            assert!(want.iter().any(|c| c.len() > LONG_RUN), "a dense cloud at k = {k}");
            let mut links = Vec::new();
            linked(&words, 64, k, PairsOptions::default(), Some(&rule), &mut |a, b| links.push((a, b)))
                .unwrap();
            assert_eq!(components(words.len(), links), want, "64 bits, k = {k}");
            // The same words in the top half of 128-bit words.
            let wide: Vec<u128> = words.iter().map(|&w| (w as u128) << 64 | 0x77).collect();
            let mut links = Vec::new();
            linked(&wide, 128, k, PairsOptions::default(), Some(&rule), &mut |a, b| links.push((a, b)))
                .unwrap();
            assert_eq!(components(words.len(), links), want, "128 bits, k = {k}");
        }
    }

    /// A run's links give its components whatever the budget allows: all
    /// at once, or nothing (false) when the budget is too small.
    #[test]
    fn run_links_are_the_components_or_nothing() {
        let run: Vec<u64> = vec![0b0, 0b1, 0b1_0000_0000, 0b11, 0b1_0000_0001, 0xff00, 0xff01];
        let mut found = Vec::new();
        let zero = |_: u64| 0u32;
        let all = Edge { rule: None, always: 1 };
        let none = Edge { rule: Some((&zero as WordLength<'_, u64>, &|_, _, _| false)), always: 0 };
        assert!(run_links(&run, 1, &all, usize::MAX, &mut found));
        let pos = |w: u64| run.iter().position(|&x| x == w).unwrap() as u32;
        let got = components(run.len(), found.iter().map(|&(a, b, _)| (pos(a), pos(b))));
        assert_eq!(got, vec![vec![0, 1, 2, 3, 4], vec![5, 6]]);
        let mut found = Vec::new();
        assert!(!run_links(&run, 1, &all, 3, &mut found));
        assert!(found.is_empty());
        // A rule that refuses everything leaves every word alone.
        let mut found = Vec::new();
        assert!(run_links(&run, 1, &none, usize::MAX, &mut found));
        assert!(found.is_empty());
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

    /// The POPCNT path and the portable one find the same pairs on the
    /// bucketed path (over 2^16 words), the planted ones among them.
    #[test]
    fn every_simd_level_finds_the_same_pairs() {
        let mut rng = neardup_testkit::Rng(0x853c_49e6_748f_ea9b);
        let mut next = || rng.next();
        let mut words: Vec<u64> = (0..70_000).map(|_| next()).collect();
        for i in 0..500 {
            let w = words[i * 100] ^ (1 << (next() % 64)) ^ (1 << (next() % 64));
            words.push(w);
            words.push(words[i * 37]);
        }
        let run = |level| {
            crate::simd::scoped(level, || {
                let ap = all_pairs(&words, 64, 3, PairsOptions::default()).unwrap();
                let mut got = Vec::new();
                ap.for_each_pair(|i, j, d| got.push((i, j, d)));
                got.sort_unstable();
                got
            })
        };
        let portable = run(crate::simd::Level::Portable);
        assert!(portable.len() >= 1000, "the planted pairs: {}", portable.len());
        for level in crate::simd::supported() {
            assert_eq!(run(level), portable, "{level:?}");
        }
        for i in 0..500u32 {
            let (near, copy) = (70_000 + 2 * i, 70_001 + 2 * i);
            let d = words[(i * 100) as usize].dist(words[near as usize]);
            assert!(portable.contains(&(i * 100, near, d)), "planted pair {i}");
            assert!(portable.iter().any(|&(a, b, d)| (a, b, d) == (i * 37, copy, 0)), "copy {i}");
        }
    }
}
