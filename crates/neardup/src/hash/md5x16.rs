//! MD5 of up to 16 short messages at once (RFC 1321).
//!
//! The `python-simhash` preset hashes every 4-character gram with MD5; a
//! gram fits in one 64-byte MD5 block, so grams are hashed sixteen at a
//! time: in the sixteen 32-bit lanes of AVX-512 registers (one round
//! function per `vpternlogd`), in two halves of eight AVX2 lanes, or one
//! after another by the portable kernel, as [`crate::simd::level`] says.
//! A per-thread cache of 4-byte grams' hashes serves every level. Tests
//! check every length and every level the CPU has against the `md-5` crate.

use super::gram_cache::{Cache, Value};
use crate::simd::level;
#[cfg(target_arch = "x86_64")]
use crate::simd::Level;

/// The longest message that fits in one MD5 block (64 − 1 − 8 bytes).
pub(crate) const MAX_LEN: usize = 55;

/// Per-step left-rotation amounts.
const S: [u32; 64] = [
    7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5,
    9, 14, 20, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 6, 10, 15, 21, 6, 10, 15, 21, 6,
    10, 15, 21, 6, 10, 15, 21,
];

/// `floor(2^32 · |sin(i + 1)|)`.
const K: [u32; 64] = [
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
    0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
    0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
    0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
    0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
];

/// The hash value of lane `l` of an MD5 state: the digest (a, b, c, d as
/// little-endian bytes) read big-endian, so each word is byte-swapped.
#[inline]
fn digest_value(state: &[[u32; 16]; 4], l: usize) -> u128 {
    let [a, b, c, d] = state;
    let hi = (u64::from(a[l].swap_bytes()) << 32) | u64::from(b[l].swap_bytes());
    let lo = (u64::from(c[l].swap_bytes()) << 32) | u64::from(d[l].swap_bytes());
    (u128::from(hi) << 64) | u128::from(lo)
}

/// The MD5 hashes of `features` (as [`hash16`] computes them), using the
/// per-thread cache for 4-byte features and batches of sixteen for the rest.
pub(crate) fn hash_cached(features: &[&str], wide: bool, out: &mut Vec<u128>) {
    if wide {
        cached::<u128>(features, out);
    } else {
        cached::<u64>(features, out);
    }
}

/// [`hash_cached`] at one width.
fn cached<V: Value>(features: &[&str], out: &mut Vec<u128>) {
    V::with_cache(|cache| {
        let base = out.len();
        out.resize(base + features.len(), 0);
        // Misses wait in a batch of sixteen: (output index, feature).
        let mut pending: Vec<(usize, &str)> = Vec::with_capacity(16);
        let mut hashes = Vec::with_capacity(16);
        let mut flush = |pending: &mut Vec<(usize, &str)>, out: &mut Vec<u128>, cache: &mut Cache<V>| {
            if pending.is_empty() {
                return;
            }
            let msgs: Vec<&str> = pending.iter().map(|p| p.1).collect();
            hashes.clear();
            hash16(&msgs, true, &mut hashes);
            for (&(i, f), &h) in pending.iter().zip(&hashes) {
                if let Some(gram) = gram_of(f) {
                    cache.insert(gram, h);
                }
                out[i] = V::cut(h).widen();
            }
            pending.clear();
        };
        for (j, f) in features.iter().enumerate() {
            if let Some(v) = gram_of(f).and_then(|g| cache.get(g)) {
                out[base + j] = v.widen();
                continue;
            }
            if f.len() > MAX_LEN {
                use md5::Digest;
                let h = u128::from_be_bytes(md5::Md5::digest(f.as_bytes()).into());
                out[base + j] = V::cut(h).widen();
                continue;
            }
            pending.push((base + j, f));
            if pending.len() == 16 {
                flush(&mut pending, out, cache);
            }
        }
        flush(&mut pending, out, cache);
    });
}

/// Windows looked up in the cache per round: their hits and misses fit in
/// the nearest cache.
const ROUND: usize = 256;

/// The MD5 hashes of every 4-character window of `text` (any UTF-8), handed
/// to `f` a slice at a time in an unspecified order (a round's cache hits,
/// then its misses sixteen at a time), without materializing the windows.
///
/// Windows of four ASCII characters are 4-byte words looked up in the
/// per-thread cache; the few that hold a wider character (up to 16 bytes)
/// are hashed sixteen at a time. The text is taken as runs of ASCII bytes
/// between stretches of wider characters: a run's windows are its byte
/// windows, and only the windows that touch a stretch walk characters.
pub(super) fn hash_4grams<W: Value>(text: &str, mut f: impl FnMut(&[W])) {
    let bytes = text.as_bytes();
    W::with_cache(|cache| {
        let mut round = Round::new();
        let mut wider: Vec<&str> = Vec::with_capacity(16);
        let mut hashed = Vec::with_capacity(16);
        let mut cut = Vec::with_capacity(16);
        let mut flush_wider = |wider: &mut Vec<&str>, f: &mut dyn FnMut(&[W])| {
            hashed.clear();
            hash16(wider, W::WIDE, &mut hashed);
            cut.clear();
            cut.extend(hashed.iter().map(|&h| W::cut(h)));
            f(&cut);
            wider.clear();
        };
        // `run` starts an ASCII run (or the text's end); it is a character
        // boundary, as is every ASCII byte.
        let mut run = 0;
        loop {
            let stretch = run + ascii_len(&bytes[run..]);
            round.ascii_windows(cache, &bytes[run..stretch], &mut f);
            if stretch == bytes.len() {
                break;
            }
            let next =
                stretch + bytes[stretch..].iter().position(u8::is_ascii).unwrap_or(bytes.len() - stretch);
            // Windows touching the stretch start at one of the run's last
            // three characters or inside the stretch; the ones starting
            // earlier were counted with the stretch before.
            let from = stretch.saturating_sub(3).max(run);
            for (off, _) in text[from..next].char_indices() {
                let start = from + off;
                let Some(end) = end_of_window(text, start) else { break };
                wider.push(&text[start..end]);
                if wider.len() == 16 {
                    flush_wider(&mut wider, &mut f);
                }
            }
            run = next;
        }
        round.finish(cache, &mut f);
        if !wider.is_empty() {
            flush_wider(&mut wider, &mut f);
        }
    });
}

/// How many bytes `bytes` starts with that are ASCII, eight at a time.
fn ascii_len(bytes: &[u8]) -> usize {
    let mut words = bytes.chunks_exact(8);
    let mut n = 0;
    for w in &mut words {
        let high = u64::from_le_bytes(w.try_into().expect("8 bytes")) & 0x8080_8080_8080_8080;
        if high != 0 {
            return n + high.trailing_zeros() as usize / 8;
        }
        n += 8;
    }
    n + words.remainder().iter().position(|b| !b.is_ascii()).unwrap_or(words.remainder().len())
}

/// The end of the 4-character window starting at byte `start` of `text`,
/// if there are four characters left.
fn end_of_window(text: &str, start: usize) -> Option<usize> {
    let mut chars = text[start..].char_indices();
    match chars.nth(4) {
        Some((end, _)) => Some(start + end),
        None => (text[start..].chars().count() == 4).then_some(text.len()),
    }
}

/// The buffers of the rounds of cache lookups of one text, for hashes
/// handed on as `W`.
struct Round<W> {
    hits: [W; ROUND],
    /// Grams that missed, waiting to be hashed sixteen at a time (also
    /// across rounds, so that no batch runs part empty but the last).
    pending: [u32; 2 * ROUND],
    waiting: usize,
    hashed: Vec<W>,
}

/// How many windows ahead a window's set is prefetched.
const AHEAD: usize = 32;

impl<W: Value> Round<W> {
    fn new() -> Round<W> {
        Round {
            hits: [W::default(); ROUND],
            pending: [0; 2 * ROUND],
            waiting: 0,
            hashed: Vec::with_capacity(16),
        }
    }

    /// Looks up every 4-byte window of the ASCII bytes `run` in rounds of
    /// [`ROUND`]: hands each round's hits to `f`, and hashes the misses
    /// (caching them and handing them to `f`) once sixteen are waiting.
    ///
    /// Lookups are branch-free: every window's value is written to the hit
    /// list and its gram to the miss list, and only the right list's
    /// length advances, so a miss costs no mispredicted branch. Each
    /// window's set is prefetched [`AHEAD`] windows before it is read.
    fn ascii_windows(&mut self, cache: &mut Cache<W>, run: &[u8], f: &mut impl FnMut(&[W])) {
        let Some(windows) = run.len().checked_sub(3) else { return };
        let gram = |i: usize| u32::from_le_bytes(run[i..i + 4].try_into().expect("4 bytes"));
        for i in 0..AHEAD.min(windows) {
            cache.prefetch(gram(i));
        }
        for start in (0..windows).step_by(ROUND) {
            let (mut nh, mut nm) = (0, self.waiting);
            for i in start..(start + ROUND).min(windows) {
                if i + AHEAD < windows {
                    cache.prefetch(gram(i + AHEAD));
                }
                let g = gram(i);
                let (hit, value) = cache.lookup(g);
                // `nh` < ROUND and `nm` < 16 + ROUND: the masks only spare
                // bounds checks.
                self.hits[nh % ROUND] = value;
                self.pending[nm % (2 * ROUND)] = g;
                nh += usize::from(hit);
                nm += usize::from(!hit);
            }
            if nh > 0 {
                f(&self.hits[..nh]);
            }
            self.waiting = nm;
            self.hash_waiting(cache, f, 16);
        }
    }

    /// Hashes the misses still waiting.
    fn finish(&mut self, cache: &mut Cache<W>, f: &mut impl FnMut(&[W])) {
        self.hash_waiting(cache, f, 1);
    }

    /// Hashes waiting misses sixteen at a time (the last batch may be
    /// smaller, down to `least`), caches them and hands them to `f`.
    fn hash_waiting(&mut self, cache: &mut Cache<W>, f: &mut impl FnMut(&[W]), least: usize) {
        let mut done = 0;
        while self.waiting - done >= least.max(1) {
            let batch = &self.pending[done..self.waiting.min(done + 16)];
            let state = compress4(batch);
            self.hashed.clear();
            for (l, &gram) in batch.iter().enumerate() {
                let h = digest_value(&state, l);
                cache.insert(gram, h);
                self.hashed.push(W::cut(h));
            }
            f(&self.hashed);
            done += batch.len();
        }
        self.pending.copy_within(done..self.waiting, 0);
        self.waiting -= done;
    }
}

/// MD5 of up to sixteen 4-byte messages given as little-endian words, on
/// this thread's SIMD level.
fn compress4(grams: &[u32]) -> [[u32; 16]; 4] {
    let mut w0 = [0u32; 16];
    w0[..grams.len()].copy_from_slice(grams);
    match level() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `level()` is at most what the CPU supports.
        Level::Avx512 => unsafe { avx512::compress4(&w0) },
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => {
            let mut out = [[0u32; 16]; 4];
            for half in 0..grams.len().div_ceil(8) {
                let w: [u32; 8] = w0[8 * half..8 * half + 8].try_into().expect("8 words");
                // SAFETY: `level()` is at most what the CPU supports.
                let st = unsafe { avx2::compress4(&w) };
                for (o, s) in out.iter_mut().zip(&st) {
                    o[8 * half..8 * half + 8].copy_from_slice(s);
                }
            }
            out
        }
        _ => {
            // Word 0 is the gram, word 1 the 0x80 pad, word 14 the length in
            // bits; the rest of the padded block is zero.
            let mut m = [[0u32; 16]; 16];
            m[0] = w0;
            m[1] = [0x80; 16];
            m[14] = [32; 16];
            portable::compress(&m)
        }
    }
}

/// MD5 of up to sixteen padded blocks (lane `l` at bytes `64·l..64·l + 64`),
/// `lanes` of them in use, on this thread's SIMD level.
fn compress(blocks: &[u8; 1024], lanes: usize) -> [[u32; 16]; 4] {
    // Word g of lane l.
    let word = |l: usize, g: usize| {
        u32::from_le_bytes(blocks[64 * l + 4 * g..64 * l + 4 * g + 4].try_into().expect("4 bytes"))
    };
    match level() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `level()` is at most what the CPU supports.
        Level::Avx512 => unsafe { avx512::compress(blocks) },
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => {
            let mut out = [[0u32; 16]; 4];
            for half in 0..lanes.div_ceil(8) {
                // Word g of the eight lanes of this half, transposed.
                let m: [[u32; 8]; 16] =
                    std::array::from_fn(|g| std::array::from_fn(|l| word(8 * half + l, g)));
                // SAFETY: `level()` is at most what the CPU supports.
                let st = unsafe { avx2::compress(&m) };
                for (o, s) in out.iter_mut().zip(&st) {
                    o[8 * half..8 * half + 8].copy_from_slice(s);
                }
            }
            out
        }
        _ => portable_lanes(lanes, word),
    }
}

/// The portable kernel on the blocks of `lanes` lanes, word `g` of lane
/// `l` given by `word(l, g)`.
fn portable_lanes(lanes: usize, word: impl Fn(usize, usize) -> u32) -> [[u32; 16]; 4] {
    let m: [[u32; 16]; 16] =
        std::array::from_fn(|g| std::array::from_fn(|l| if l < lanes { word(l, g) } else { 0 }));
    portable::compress(&m)
}

/// The 4-byte feature as a little-endian word.
#[inline]
fn gram_of(f: &str) -> Option<u32> {
    let b: [u8; 4] = f.as_bytes().try_into().ok()?;
    Some(u32::from_le_bytes(b))
}

/// The 64-bit hashes (`md5[8..16]` read big-endian) or 128-bit hashes
/// (the digest read big-endian) of up to 16 messages of at most
/// [`MAX_LEN`] bytes, appended to `out`, on this thread's SIMD level.
///
/// # Panics
///
/// If more than 16 messages or a longer message is given.
pub(crate) fn hash16(msgs: &[&str], wide: bool, out: &mut Vec<u128>) {
    assert!(msgs.len() <= 16 && msgs.iter().all(|m| m.len() <= MAX_LEN));
    let state = if msgs.iter().all(|m| m.len() == 4) {
        // Four-byte messages (ASCII 4-grams, the common case): only the
        // first word of the block differs between lanes.
        let mut grams = [0u32; 16];
        for (g, m) in grams.iter_mut().zip(msgs) {
            *g = gram_of(m).expect("4 bytes");
        }
        compress4(&grams[..msgs.len()])
    } else {
        // Lane l's padded block at bytes 64·l..64·l + 64.
        let mut blocks = [0u8; 1024];
        for (lane, m) in msgs.iter().enumerate() {
            let b = &mut blocks[64 * lane..64 * lane + 64];
            b[..m.len()].copy_from_slice(m.as_bytes());
            b[m.len()] = 0x80;
            b[56..].copy_from_slice(&((m.len() as u64) * 8).to_le_bytes());
        }
        compress(&blocks, msgs.len())
    };
    out.extend((0..msgs.len()).map(|l| {
        let h = digest_value(&state, l);
        if wide {
            h
        } else {
            u128::from(h as u64)
        }
    }));
}

/// The MD5 initial state (a, b, c, d).
const INIT: [u32; 4] = [0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476];

/// Message word used by step `i`.
#[inline(always)]
const fn word_index(i: usize) -> usize {
    match i / 16 {
        0 => i,
        1 => (5 * i + 1) % 16,
        2 => (3 * i + 5) % 16,
        _ => (7 * i) % 16,
    }
}

/// Runs `$step!(i)` for every step `i` of MD5, unrolled, so each step's
/// constant, shift and message word are known when compiled.
#[cfg(target_arch = "x86_64")]
macro_rules! unroll64 {
    ($step:ident) => {
        unroll64!(@ $step; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30
            31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63)
    };
    (@ $step:ident; $($i:literal)*) => { $( $step!($i); )* };
}

mod portable {
    use super::{word_index, INIT, K, S};

    /// Sixteen 32-bit lanes as plain arrays: the loops below are written
    /// lane by lane so that the compiler may vectorize them for whatever
    /// the target has (SSE2 on any x86-64, NEON on aarch64) without a
    /// single intrinsic.
    type Lanes = [u32; 16];

    #[inline(always)]
    fn map3(b: &Lanes, c: &Lanes, d: &Lanes, f: impl Fn(u32, u32, u32) -> u32) -> Lanes {
        std::array::from_fn(|l| f(b[l], c[l], d[l]))
    }

    /// One MD5 compression of sixteen blocks from the initial state, word
    /// `g` of lane `l` at `m[g][l]`: the reference the SIMD kernels are
    /// tested against.
    pub(super) fn compress(m: &[Lanes; 16]) -> [Lanes; 4] {
        let [mut a, mut b, mut c, mut d] = INIT.map(|v| [v; 16]);
        for i in 0..64 {
            let f = match i / 16 {
                0 => map3(&b, &c, &d, |b, c, d| d ^ (b & (c ^ d))),
                1 => map3(&b, &c, &d, |b, c, d| c ^ (d & (b ^ c))),
                2 => map3(&b, &c, &d, |b, c, d| b ^ c ^ d),
                _ => map3(&b, &c, &d, |b, c, d| c ^ (b | !d)),
            };
            let w = &m[word_index(i)];
            let nb: Lanes = std::array::from_fn(|l| {
                let sum = a[l].wrapping_add(f[l]).wrapping_add(K[i]).wrapping_add(w[l]);
                b[l].wrapping_add(sum.rotate_left(S[i]))
            });
            (a, b, c, d) = (d, nb, b, c);
        }
        let state = [a, b, c, d];
        std::array::from_fn(|j| state[j].map(|v| v.wrapping_add(INIT[j])))
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{word_index, INIT, K, S};
    use std::arch::x86_64::*;

    /// One MD5 compression of eight blocks, given as `m[g][lane]`.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn compress(m: &[[u32; 8]; 16]) -> [[u32; 8]; 4] {
        // SAFETY: each `m[g]` is 8 u32s, the 32 bytes an unaligned load reads.
        let m: [__m256i; 16] = std::array::from_fn(|g| unsafe { _mm256_loadu_si256(m[g].as_ptr().cast()) });
        rounds(&m)
    }

    /// One MD5 compression of eight 4-byte messages, given as their first
    /// block words; the rest of each block is the fixed padding.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn compress4(w0: &[u32; 8]) -> [[u32; 8]; 4] {
        let mut m = [_mm256_setzero_si256(); 16];
        // SAFETY: `w0` is 8 u32s, the 32 bytes an unaligned load reads.
        m[0] = unsafe { _mm256_loadu_si256(w0.as_ptr().cast()) };
        m[1] = _mm256_set1_epi32(0x80);
        m[14] = _mm256_set1_epi32(32);
        rounds(&m)
    }

    #[target_feature(enable = "avx2")]
    fn rounds(m: &[__m256i; 16]) -> [[u32; 8]; 4] {
        let [mut a, mut b, mut c, mut d] = INIT.map(|v| _mm256_set1_epi32(v as i32));
        let ones = _mm256_set1_epi32(-1);
        macro_rules! step {
            ($i:literal) => {{
                let i: usize = $i;
                let f = match i / 16 {
                    0 => _mm256_xor_si256(d, _mm256_and_si256(b, _mm256_xor_si256(c, d))),
                    1 => _mm256_xor_si256(c, _mm256_and_si256(d, _mm256_xor_si256(b, c))),
                    2 => _mm256_xor_si256(_mm256_xor_si256(b, c), d),
                    _ => _mm256_xor_si256(c, _mm256_or_si256(b, _mm256_xor_si256(d, ones))),
                };
                let sum = _mm256_add_epi32(
                    _mm256_add_epi32(a, f),
                    _mm256_add_epi32(_mm256_set1_epi32(K[i] as i32), m[word_index(i)]),
                );
                // Shifts by a count known when compiled (the unrolled step).
                let rot = _mm256_or_si256(
                    _mm256_sll_epi32(sum, _mm_cvtsi32_si128(S[i] as i32)),
                    _mm256_srl_epi32(sum, _mm_cvtsi32_si128(32 - S[i] as i32)),
                );
                (a, b, c, d) = (d, _mm256_add_epi32(b, rot), b, c);
            }};
        }
        unroll64!(step);
        let mut out = [[0u32; 8]; 4];
        for (j, v) in [a, b, c, d].into_iter().enumerate() {
            let v = _mm256_add_epi32(v, _mm256_set1_epi32(INIT[j] as i32));
            // SAFETY: `out[j]` is 8 u32s, the 32 bytes an unaligned store writes.
            unsafe { _mm256_storeu_si256(out[j].as_mut_ptr().cast(), v) };
        }
        out
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::{word_index, INIT, K, S};
    use std::arch::x86_64::*;

    /// One MD5 compression of sixteen blocks from the initial state.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn compress(blocks: &[u8; 1024]) -> [[u32; 16]; 4] {
        // Word g of every lane: a gather at byte offsets 64·lane + 4·g.
        let lanes = _mm512_setr_epi32(0, 16, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240);
        let m: [__m512i; 16] = std::array::from_fn(|g| {
            let idx = _mm512_add_epi32(lanes, _mm512_set1_epi32(g as i32));
            // SAFETY: the offsets 64·lane + 4·g (lane < 16, g < 16) scaled by 1
            // stay within the 1,024 bytes of `blocks`.
            unsafe { _mm512_i32gather_epi32::<4>(idx, blocks.as_ptr().cast()) }
        });
        rounds(&m)
    }

    /// One MD5 compression of sixteen 4-byte messages, given as their first
    /// block words; the rest of each block is the fixed padding.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn compress4(w0: &[u32; 16]) -> [[u32; 16]; 4] {
        let mut m = [_mm512_setzero_si512(); 16];
        // SAFETY: `w0` is 16 u32s, the 64 bytes an unaligned load reads.
        m[0] = unsafe { _mm512_loadu_si512(w0.as_ptr().cast()) };
        m[1] = _mm512_set1_epi32(0x80);
        m[14] = _mm512_set1_epi32(32);
        rounds(&m)
    }

    #[target_feature(enable = "avx512f")]
    fn rounds(m: &[__m512i; 16]) -> [[u32; 16]; 4] {
        let [mut a, mut b, mut c, mut d] = INIT.map(|v| _mm512_set1_epi32(v as i32));
        macro_rules! step {
            ($i:literal) => {{
                let i: usize = $i;
                // The four round functions, each one ternary-logic instruction.
                let f = match i / 16 {
                    0 => _mm512_ternarylogic_epi32::<0xCA>(b, c, d),
                    1 => _mm512_ternarylogic_epi32::<0xE4>(b, c, d),
                    2 => _mm512_ternarylogic_epi32::<0x96>(b, c, d),
                    _ => _mm512_ternarylogic_epi32::<0x39>(b, c, d),
                };
                let sum = _mm512_add_epi32(
                    _mm512_add_epi32(a, f),
                    _mm512_add_epi32(_mm512_set1_epi32(K[i] as i32), m[word_index(i)]),
                );
                let rot = _mm512_rolv_epi32(sum, _mm512_set1_epi32(S[i] as i32));
                (a, b, c, d) = (d, _mm512_add_epi32(b, rot), b, c);
            }};
        }
        unroll64!(step);
        let mut out = [[0u32; 16]; 4];
        for (j, v) in [a, b, c, d].into_iter().enumerate() {
            let v = _mm512_add_epi32(v, _mm512_set1_epi32(INIT[j] as i32));
            // SAFETY: `out[j]` is 16 u32s, the 64 bytes an unaligned store writes.
            unsafe { _mm512_storeu_si512(out[j].as_mut_ptr().cast(), v) };
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simd;
    use md5::Digest;
    use proptest::prelude::*;

    fn want(m: &[u8], wide: bool) -> u128 {
        let d: [u8; 16] = md5::Md5::digest(m).into();
        if wide {
            u128::from_be_bytes(d)
        } else {
            u128::from(u64::from_be_bytes(d[8..].try_into().unwrap()))
        }
    }

    #[test]
    fn every_level_equals_md5_for_every_length_and_lane_count() {
        let data: String = ('a'..='z').chain('0'..='9').cycle().take(1000).collect();
        for level in simd::supported() {
            simd::scoped(level, || {
                for len in 0..=MAX_LEN {
                    for count in [1, 7, 8, 9, 16] {
                        let msgs: Vec<&str> = (0..count).map(|i| &data[i * 7..i * 7 + len]).collect();
                        for wide in [false, true] {
                            let mut got = Vec::new();
                            hash16(&msgs, wide, &mut got);
                            for (i, m) in msgs.iter().enumerate() {
                                assert_eq!(got[i], want(m.as_bytes(), wide), "{level}: len {len} lane {i}");
                            }
                        }
                    }
                }
            });
        }
    }

    #[test]
    fn every_level_hashes_ascii_windows_like_md5() {
        let text = "The quick brown fox jumps over the lazy dog; 0123456789 _ the end.".repeat(3);
        let mut expected: Vec<u128> = text.as_bytes().windows(4).map(|w| want(w, false)).collect();
        expected.sort_unstable();
        for level in simd::supported() {
            // Twice: the second pass is served by the cache the first filled.
            for _ in 0..2 {
                let mut got = Vec::new();
                simd::scoped(level, || {
                    hash_4grams::<u64>(&text, |h| got.extend(h.iter().map(|&x| u128::from(x))))
                });
                got.sort_unstable();
                assert_eq!(got, expected, "{level}");
            }
        }
    }

    proptest! {
        /// Any mix of ASCII runs and wider characters, at every level.
        #[test]
        fn character_windows_hash_like_md5(text in "([a-z0-9]{0,6}|\\PC{0,3}){0,12}") {
            let chars: Vec<char> = text.chars().collect();
            let mut expected: Vec<u128> = chars
                .windows(4)
                .map(|w| want(w.iter().collect::<String>().as_bytes(), false))
                .collect();
            expected.sort_unstable();
            for level in simd::supported() {
                let mut got = Vec::new();
                simd::scoped(level, || hash_4grams::<u64>(&text, |h| got.extend(h.iter().map(|&x| u128::from(x)))));
                got.sort_unstable();
                prop_assert_eq!(&got, &expected, "{}", level);
            }
        }

        #[test]
        fn levels_agree_bit_for_bit(msgs in proptest::collection::vec(".{0,18}", 1..=16)) {
            let msgs: Vec<&str> = msgs.iter().map(String::as_str).filter(|m| m.len() <= MAX_LEN).collect();
            let mut reference = Vec::new();
            simd::scoped(simd::Level::Portable, || hash16(&msgs, true, &mut reference));
            for level in simd::supported() {
                let mut got = Vec::new();
                simd::scoped(level, || hash16(&msgs, true, &mut got));
                prop_assert_eq!(&got, &reference, "{}", level);
            }
            for (m, h) in msgs.iter().zip(&reference) {
                prop_assert_eq!(*h, want(m.as_bytes(), true));
            }
        }
    }
}
