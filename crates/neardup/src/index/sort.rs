//! Sorting words fast: one parallel scatter pass by the top bits, then each
//! bucket sorted on its own thread.

use rayon::prelude::*;

use super::blob::huge_vec;
use super::word::Word;

/// Bits of the first (scatter) pass.
const RADIX_BITS: u32 = 12;

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
    scatter_then(v, &mut Vec::new(), top, <[T]>::sort_unstable);
}

/// Orders `v` (words of `f` significant bits) by their top `key_bits` bits
/// only: words with equal keys end up next to each other, in key order,
/// but in no particular order among themselves. Cheaper than a sort: after
/// the scatter by the top [`RADIX_BITS`], each bucket (in cache) is
/// counting-sorted by the rest of the key when that is at most 16 bits.
///
/// `scratch` is working space: kept from call to call, it saves allocating
/// (and the kernel zeroing) a buffer as large as `v` each time.
pub(crate) fn group_by_key<W: Word>(v: &mut Vec<W>, scratch: &mut Vec<W>, f: u32, key_bits: u32) {
    let shift = f.saturating_sub(RADIX_BITS);
    let key_bits = key_bits.min(f);
    let rest = key_bits.saturating_sub(RADIX_BITS);
    if rest > 16 {
        return sort_words(v, f);
    }
    let low = f - key_bits;
    scatter_then(
        v,
        scratch,
        |w| w.shr(shift).low_usize(),
        |bucket: &mut [W]| {
            if rest == 0 || bucket.len() < 2 {
                return;
            }
            if bucket.len() < 64 {
                return bucket.sort_unstable();
            }
            let digit = |w: &W| w.shr(low).and(W::low_mask(rest)).low_usize();
            let mut counts = vec![0u32; (1 << rest) + 1];
            for w in bucket.iter() {
                counts[digit(w) + 1] += 1;
            }
            for i in 1..counts.len() {
                counts[i] += counts[i - 1];
            }
            let copy = bucket.to_vec();
            for w in copy {
                let d = digit(&w);
                bucket[counts[d] as usize] = w;
                counts[d] += 1;
            }
        },
    );
}

/// Scatters `v` by `top` (into `2^RADIX_BITS` buckets, in parallel), then
/// runs `finish` on each bucket in parallel; small inputs get `finish` on
/// the whole. `finish` must leave each bucket in the order wanted.
fn scatter_then<T: Copy + Ord + Send + Sync>(
    v: &mut Vec<T>,
    scratch: &mut Vec<T>,
    top: impl Fn(&T) -> usize + Sync,
    finish: impl Fn(&mut [T]) + Sync,
) {
    if v.len() < 1 << 16 {
        v.sort_unstable();
        return;
    }
    let buckets = 1usize << RADIX_BITS;
    let bucket = |w: &T| top(w).min(buckets - 1);
    let threads = rayon::current_num_threads().max(1);
    let chunk = v.len().div_ceil(threads);
    // Per-chunk histograms.
    let hists: Vec<Vec<usize>> = v
        .par_chunks(chunk)
        .map(|c| {
            let mut h = vec![0usize; buckets];
            for w in c {
                h[bucket(w)] += 1;
            }
            h
        })
        .collect();
    // Start of each (bucket, chunk) region in the output.
    let mut starts = vec![vec![0usize; buckets]; hists.len()];
    let mut bucket_start = vec![0usize; buckets + 1];
    let mut pos = 0;
    for b in 0..buckets {
        bucket_start[b] = pos;
        for (c, h) in hists.iter().enumerate() {
            starts[c][b] = pos;
            pos += h[b];
        }
    }
    bucket_start[buckets] = pos;
    let mut out: Vec<T> = std::mem::take(scratch);
    out.clear();
    if out.capacity() < v.len() {
        out = huge_vec(v.len());
    }
    let out_ptr = SendPtr(out.as_mut_ptr());
    let overflow = std::sync::atomic::AtomicBool::new(false);
    v.par_chunks(chunk).zip(starts.into_par_iter()).zip(hists.par_iter()).for_each(|((c, mut st), h)| {
        let p = out_ptr;
        // Where each region of this chunk ends.
        let end: Vec<usize> = st.iter().zip(h).map(|(s, n)| s + n).collect();
        for &w in c {
            let b = bucket(&w);
            if st[b] >= end[b] {
                // `top` answered otherwise than when counting.
                overflow.store(true, std::sync::atomic::Ordering::Relaxed);
                return;
            }
            // SAFETY: st[b] < end[b], and the regions [starts[c][b], end[b])
            // are disjoint across chunks and buckets and lie within
            // 0..v.len() = the capacity of `out`.
            unsafe { p.0.add(st[b]).write(w) };
            st[b] += 1;
        }
    });
    if overflow.into_inner() {
        // `out` is left empty (T is Copy: nothing to drop).
        v.sort_unstable();
        return;
    }
    // SAFETY: no chunk overflowed a region, and each chunk wrote as many
    // words as its regions hold in all, so every region, hence every
    // position 0..v.len(), was written exactly once.
    unsafe { out.set_len(v.len()) };
    let mut rest: &mut [T] = &mut out;
    let mut parts = Vec::with_capacity(buckets);
    for b in 0..buckets {
        let (head, tail) = rest.split_at_mut(bucket_start[b + 1] - bucket_start[b]);
        parts.push(head);
        rest = tail;
    }
    parts.into_par_iter().for_each(&finish);
    *scratch = std::mem::replace(v, out);
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
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut v: Vec<u64> = (0..200_000)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                if i % 7 == 0 {
                    42
                } else {
                    x
                }
            })
            .collect();
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

    #[test]
    fn group_by_key_groups_equal_keys_in_key_order() {
        for (n, key_bits) in
            [(1000usize, 26u32), (300_000, 26), (300_000, 12), (300_000, 8), (300_000, 30), (200_000, 64)]
        {
            let mut x = 0x2545_f491_4f6c_dd1du64;
            let mut v: Vec<u64> = (0..n)
                .map(|i| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    if i % 5 == 0 {
                        x & !0xffff
                    } else {
                        x
                    }
                })
                .collect();
            let mut want = v.clone();
            want.sort_unstable();
            group_by_key(&mut v, &mut Vec::new(), 64, key_bits);
            let key = |w: &u64| if key_bits == 64 { *w } else { w >> (64 - key_bits) };
            assert!(v.windows(2).all(|p| key(&p[0]) <= key(&p[1])), "{n} {key_bits}: keys in order");
            let mut got = v.clone();
            got.sort_unstable();
            assert_eq!(got, want, "{n} {key_bits}: a permutation");
        }
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
