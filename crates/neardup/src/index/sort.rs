//! Sorting words fast: one parallel scatter pass by the top bits, then each
//! bucket sorted on its own thread.

use rayon::prelude::*;

use super::blob::huge_vec;
use super::word::Word;

/// Bits of the first (scatter) pass: `top` answers below `2^RADIX_BITS`.
pub(crate) const RADIX_BITS: u32 = 12;

/// Sorts `v` (words of `f` significant bits) ascending.
pub(crate) fn sort_words<W: Word>(v: &mut Vec<W>, f: u32) {
    let shift = f.saturating_sub(RADIX_BITS);
    sort_by_top(v, |w| w.shr(shift).low_usize());
}

/// Sorts `v` ascending, given `top(x)`: a monotone map into
/// `0..2^RADIX_BITS` (the top bits of the sort key). Memory-safe for any
/// `top`: the scatter checks every write against its region, and a `top`
/// that answers differently on its two passes makes it fall back to the
/// standard sort; a `top` that is consistent but not monotone leaves the
/// buckets out of order (never undefined behaviour).
pub(crate) fn sort_by_top<T: Copy + Ord + Send + Sync>(v: &mut Vec<T>, top: impl Fn(&T) -> usize + Sync) {
    let mut out = Vec::new();
    let bounds = scatter(v, |_, x| x, &mut out, top);
    buckets_mut(&mut out, &bounds).into_par_iter().for_each(<[T]>::sort_unstable);
    *v = out;
}

/// Sorts `bucket` stably by `digit` (below `2^bits`), through `copy`.
fn counting_sort<W: Copy>(bucket: &mut [W], copy: &mut Vec<W>, digit: impl Fn(&W) -> usize, bits: u32) {
    if bucket.len() < 64 {
        // Few words: an insertion-like stable sort beats clearing counters.
        return bucket.sort_by_key(|w| digit(w));
    }
    let mut counts = vec![0u32; (1 << bits) + 1];
    for w in bucket.iter() {
        counts[digit(w) + 1] += 1;
    }
    for i in 1..counts.len() {
        counts[i] += counts[i - 1];
    }
    copy.clear();
    copy.extend_from_slice(bucket);
    for w in copy.iter() {
        let d = digit(w);
        bucket[counts[d] as usize] = *w;
        counts[d] += 1;
    }
}

/// Sorts `bucket` whose items all share their top bits: counting-sorted by
/// `digit` (the next `bits` bits of the key, below `2^bits`), then each run
/// of one digit (a handful of items at random) sorted whole. Cheaper than a
/// comparison sort of the bucket, and done in cache.
pub(crate) fn sort_bucket<T: Copy + Ord>(
    bucket: &mut [T],
    copy: &mut Vec<T>,
    digit: impl Fn(&T) -> usize,
    bits: u32,
) {
    if bucket.len() < 256 {
        return bucket.sort_unstable();
    }
    counting_sort(bucket, copy, &digit, bits);
    let mut i = 0;
    while i < bucket.len() {
        let d = digit(&bucket[i]);
        let mut j = i + 1;
        while j < bucket.len() && digit(&bucket[j]) == d {
            j += 1;
        }
        if j - i > 1 {
            bucket[i..j].sort_unstable();
        }
        i = j;
    }
}

/// `v` cut at `bounds` (ascending, first 0, last `v.len()`), as mutable slices.
pub(crate) fn buckets_mut<'a, T>(v: &'a mut [T], bounds: &[usize]) -> Vec<&'a mut [T]> {
    let mut rest: &mut [T] = v;
    let mut parts = Vec::with_capacity(bounds.len().saturating_sub(1));
    for w in bounds.windows(2) {
        let (head, tail) = rest.split_at_mut(w[1] - w[0]);
        parts.push(head);
        rest = tail;
    }
    parts
}

/// Writes `map(i, src[i])` for every position `i` of `src` into `out`,
/// scattered by `top` into `2^RADIX_BITS` buckets in parallel (stably:
/// within a bucket, in input order), and returns the buckets' bounds.
/// Small inputs, and a `top` that answers differently on its two passes,
/// give one bucket, sorted.
pub(crate) fn scatter<S: Copy + Sync, T: Copy + Ord + Send + Sync>(
    src: &[S],
    map: impl Fn(usize, S) -> T + Sync,
    out: &mut Vec<T>,
    top: impl Fn(&T) -> usize + Sync,
) -> Vec<usize> {
    let fallback = |out: &mut Vec<T>| {
        out.clear();
        out.extend(src.iter().enumerate().map(|(i, &x)| map(i, x)));
        out.sort_unstable();
        vec![0, out.len()]
    };
    if src.len() < 1 << 16 {
        return fallback(out);
    }
    let buckets = 1usize << RADIX_BITS;
    let bucket = |w: &T| top(w).min(buckets - 1);
    let threads = rayon::current_num_threads().max(1);
    let chunk = src.len().div_ceil(threads);
    let hists = histograms(src, chunk, buckets, &map, &bucket);
    let (starts, bounds) = regions(&hists, buckets);
    out.clear();
    if out.capacity() < src.len() {
        *out = huge_vec(src.len());
    }
    let out_ptr = SendPtr(out.as_mut_ptr());
    let overflow = std::sync::atomic::AtomicBool::new(false);
    src.par_chunks(chunk).enumerate().zip(starts.into_par_iter()).zip(hists.par_iter()).for_each(
        |(((ci, c), st), h)| {
            let chunk = Chunk { words: c, first: ci * chunk, starts: st, counts: h };
            // SAFETY: the regions of `starts` and `hists` are disjoint across
            // chunks and buckets and lie within 0..src.len() <= out's capacity.
            if !unsafe { chunk.write_combined(out_ptr, buckets, &map, &bucket) } {
                // `top` answered otherwise than when counting.
                overflow.store(true, std::sync::atomic::Ordering::Relaxed);
            }
        },
    );
    if overflow.into_inner() {
        // `out` is still empty (T is Copy: nothing to drop).
        return fallback(out);
    }
    // SAFETY: no chunk overflowed a region, and each chunk wrote as many
    // words as its regions hold in all, so every region, hence every
    // position 0..src.len(), was written exactly once.
    unsafe { out.set_len(src.len()) };
    bounds
}

/// How many words of each chunk of `chunk` words fall in each bucket.
fn histograms<S: Copy + Sync, T>(
    src: &[S],
    chunk: usize,
    buckets: usize,
    map: &(impl Fn(usize, S) -> T + Sync),
    bucket: &(impl Fn(&T) -> usize + Sync),
) -> Vec<Vec<usize>> {
    src.par_chunks(chunk)
        .enumerate()
        .map(|(ci, c)| {
            let mut h = vec![0usize; buckets];
            for (o, &x) in c.iter().enumerate() {
                h[bucket(&map(ci * chunk + o, x))] += 1;
            }
            h
        })
        .collect()
}

/// Where each (chunk, bucket) region starts in the output (buckets in
/// order, chunks in order within a bucket), and the buckets' bounds.
fn regions(hists: &[Vec<usize>], buckets: usize) -> (Vec<Vec<usize>>, Vec<usize>) {
    let mut starts = vec![vec![0usize; buckets]; hists.len()];
    let mut bounds = vec![0usize; buckets + 1];
    let mut pos = 0;
    for b in 0..buckets {
        bounds[b] = pos;
        for (c, h) in hists.iter().enumerate() {
            starts[c][b] = pos;
            pos += h[b];
        }
    }
    bounds[buckets] = pos;
    (starts, bounds)
}

/// One chunk of the scatter: its words, the position of its first, and
/// where its region of each bucket starts and how many words it holds.
struct Chunk<'a, S> {
    words: &'a [S],
    first: usize,
    starts: Vec<usize>,
    counts: &'a [usize],
}

impl<S: Copy> Chunk<'_, S> {
    /// Writes the chunk's words to their regions of `out`. Each word goes
    /// first to its bucket's line-sized buffer (in cache); a full buffer is
    /// copied out whole, so the scatter writes whole cache lines to its
    /// 4,096 destinations instead of one word at a time to each (software
    /// write-combining). False if a bucket got more words than counted.
    ///
    /// # Safety
    ///
    /// The chunk's regions (`starts[b]..starts[b] + counts[b]`) lie within
    /// the allocation `out` points to and no other thread writes them.
    unsafe fn write_combined<T: Copy>(
        self,
        out: SendPtr<T>,
        buckets: usize,
        map: &impl Fn(usize, S) -> T,
        bucket: &impl Fn(&T) -> usize,
    ) -> bool {
        let per = (64 / std::mem::size_of::<T>().max(1)).max(1);
        let mut st = self.starts;
        // Where each region of this chunk ends.
        let end: Vec<usize> = st.iter().zip(self.counts).map(|(s, n)| s + n).collect();
        let mut lines: Vec<std::mem::MaybeUninit<T>> = vec![std::mem::MaybeUninit::uninit(); buckets * per];
        let mut fill = vec![0usize; buckets];
        // Copies bucket b's first n buffered words out; false if they do not fit.
        let flush = |b: usize, n: usize, st: &mut [usize], lines: &[std::mem::MaybeUninit<T>]| {
            if st[b] + n > end[b] {
                return false;
            }
            // SAFETY: lines[b·per..b·per + n] were written since bucket b was
            // last flushed (fill counts them), and st[b] + n <= end[b]: within
            // this chunk's region of bucket b, which the caller vouches for.
            unsafe {
                let (from, to) = (lines.as_ptr().add(b * per).cast::<T>(), out.0.add(st[b]));
                if n * std::mem::size_of::<T>() == 64 {
                    // A whole line: a copy of constant size, inlined (a
                    // call to memcpy for 64 bytes costs more than the copy).
                    std::ptr::copy_nonoverlapping(from.cast::<[u8; 64]>(), to.cast::<[u8; 64]>(), 1)
                } else {
                    std::ptr::copy_nonoverlapping(from, to, n)
                }
            };
            st[b] += n;
            true
        };
        for (o, &x) in self.words.iter().enumerate() {
            let w = map(self.first + o, x);
            let b = bucket(&w);
            lines[b * per + fill[b]] = std::mem::MaybeUninit::new(w);
            fill[b] += 1;
            if fill[b] == per {
                if !flush(b, per, &mut st, &lines) {
                    return false;
                }
                fill[b] = 0;
            }
        }
        fill.iter().enumerate().all(|(b, &n)| n == 0 || flush(b, n, &mut st, &lines))
    }
}

#[derive(Clone, Copy)]
struct SendPtr<W>(*mut W);
// SAFETY: used only for disjoint, bounds-checked writes from the scatter pass.
unsafe impl<W> Send for SendPtr<W> {}
// SAFETY: as for Send.
unsafe impl<W> Sync for SendPtr<W> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_like_std() {
        let mut rng = neardup_testkit::Rng(0x9e37_79b9_7f4a_7c15);
        let mut v: Vec<u64> = (0..200_000).map(|i| if i % 7 == 0 { 42 } else { rng.next() }).collect();
        let mut w = v.clone();
        w.sort_unstable();
        sort_words(&mut v, 64);
        assert_eq!(v, w);
        let mut v128: Vec<u128> = w.iter().rev().map(|&a| (a as u128) << 64 | a as u128).collect();
        let mut s = v128.clone();
        s.sort_unstable();
        sort_words(&mut v128, 128);
        assert_eq!(v128, s);
    }

    /// An inconsistent `top` (another answer on every call) cannot make
    /// the scatter write out of bounds: the words still come out sorted.
    #[test]
    fn an_inconsistent_top_is_safe() {
        let calls = std::sync::atomic::AtomicUsize::new(0);
        let mut v: Vec<u64> = (0..100_000u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
        let mut w = v.clone();
        w.sort_unstable();
        sort_by_top(&mut v, |_| calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % 4096);
        assert_eq!(v, w);
    }
}
