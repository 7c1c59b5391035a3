//! SHA-1 of many short features at once: datasketch's default hash is the
//! first 4 or 8 bytes of each feature's SHA-1 digest, read little-endian.
//!
//! A feature of up to 55 bytes fits in one padded 64-byte block, so such
//! features are hashed sixteen at a time in the 32-bit lanes of AVX-512
//! registers (each round function one `vpternlogd`, each rotation one
//! `vprold`) or eight at a time with AVX2, as [`crate::simd::level`] says;
//! the portable kernel hashes them one by one. Longer features go through
//! the `sha1` crate, which uses the CPU's SHA extensions where it has
//! them. Tests check every level and length against the `sha1` crate.

#[cfg(target_arch = "x86_64")]
use crate::simd::{level, Level};

/// The longest feature one block holds (64 − 1 − 8 bytes).
const MAX_LEN: usize = 55;

const INIT: [u32; 5] = [0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476, 0xc3d2_e1f0];
const K: [u32; 4] = [0x5a82_7999, 0x6ed9_eba1, 0x8f1b_bcdc, 0xca62_c1d6];

/// The first 8 bytes of `feature`'s SHA-1 digest as a little-endian
/// `u64` (its low 32 bits are datasketch's `sha1_hash32`, the whole is
/// `sha1_hash64`).
pub fn sha1_prefix(feature: &[u8]) -> u64 {
    if feature.len() <= MAX_LEN {
        let w = block_words(feature);
        let [h0, h1, ..] = compress_portable(&w);
        prefix(h0, h1)
    } else {
        use sha1::Digest;
        let d = sha1::Sha1::digest(feature);
        u64::from_le_bytes(d[..8].try_into().expect("20 bytes"))
    }
}

/// [`sha1_prefix`] of every feature, appended to `out` in order.
pub fn sha1_batch(features: &[&[u8]], out: &mut Vec<u64>) {
    let base = out.len();
    out.resize(base + features.len(), 0);
    let out = &mut out[base..];
    #[cfg(target_arch = "x86_64")]
    if level() != Level::Portable {
        x86_batch(features, out, level());
        return;
    }
    for (o, f) in out.iter_mut().zip(features) {
        *o = sha1_prefix(f);
    }
}

/// [`sha1_batch`] at a SIMD level: short features wait for a full set of
/// lanes (16 for AVX-512, 8 for AVX2), longer ones are hashed at once.
#[cfg(target_arch = "x86_64")]
fn x86_batch(features: &[&[u8]], out: &mut [u64], level: Level) {
    let lanes = if level == Level::Avx512 { 16 } else { 8 };
    let mut pending: Vec<usize> = Vec::with_capacity(16);
    for (i, f) in features.iter().enumerate() {
        if f.len() > MAX_LEN {
            out[i] = sha1_prefix(f);
            continue;
        }
        pending.push(i);
        if pending.len() == lanes {
            hash_lanes(features, &pending, out, level);
            pending.clear();
        }
    }
    if !pending.is_empty() {
        hash_lanes(features, &pending, out, level);
    }
}

/// Hashes the features at `idx` (at most the level's lanes, each one
/// block) into `out`.
#[cfg(target_arch = "x86_64")]
fn hash_lanes(features: &[&[u8]], idx: &[usize], out: &mut [u64], level: Level) {
    let state = if level == Level::Avx512 {
        let mut msgs: [&[u8]; 16] = [&[]; 16];
        for (m, &i) in msgs.iter_mut().zip(idx) {
            *m = features[i];
        }
        // SAFETY: the level is capped at what the CPU supports; every
        // message is at most MAX_LEN bytes.
        unsafe { x86::hash16(&msgs[..idx.len()]) }
    } else {
        // Word g of lane l at [g][l], big-endian as SHA-1 reads it.
        let mut words = [[0u32; 16]; 16];
        for (lane, &i) in idx.iter().enumerate() {
            for (g, &v) in block_words(features[i]).iter().enumerate() {
                words[g][lane] = v;
            }
        }
        // SAFETY: the level (AVX2 here) is capped at what the CPU supports;
        // at most 8 lanes are filled.
        unsafe { x86::compress8(&words) }
    };
    for (lane, &i) in idx.iter().enumerate() {
        out[i] = prefix(state[0][lane], state[1][lane]);
    }
}

/// The digest's first two words as datasketch reads the first 8 bytes.
#[inline]
fn prefix(h0: u32, h1: u32) -> u64 {
    u64::from(h0.swap_bytes()) | (u64::from(h1.swap_bytes()) << 32)
}

/// The padded block of a feature of at most 55 bytes, as 16 big-endian
/// words: the feature's whole words, then its last 0–3 bytes and the 0x80
/// marker, zeros, and the length in bits (which fits the last word).
fn block_words(feature: &[u8]) -> [u32; 16] {
    debug_assert!(feature.len() <= MAX_LEN);
    let mut w = [0u32; 16];
    let chunks = feature.chunks_exact(4);
    let rest = chunks.remainder();
    let whole = feature.len() / 4;
    for (word, c) in w.iter_mut().zip(chunks) {
        *word = u32::from_be_bytes([c[0], c[1], c[2], c[3]]);
    }
    let mut tail = 0x80u32 << (24 - 8 * rest.len());
    for (i, &b) in rest.iter().enumerate() {
        tail |= u32::from(b) << (24 - 8 * i);
    }
    w[whole] = tail;
    w[15] = (feature.len() * 8) as u32;
    w
}

/// One SHA-1 compression of one block from the initial state.
fn compress_portable(block: &[u32; 16]) -> [u32; 5] {
    let mut w = [0u32; 80];
    w[..16].copy_from_slice(block);
    for t in 16..80 {
        w[t] = (w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16]).rotate_left(1);
    }
    let [mut a, mut b, mut c, mut d, mut e] = INIT;
    for (t, &wt) in w.iter().enumerate() {
        let f = match t / 20 {
            0 => (b & c) | (!b & d),
            2 => (b & c) | (b & d) | (c & d),
            _ => b ^ c ^ d,
        };
        let temp = a.rotate_left(5).wrapping_add(f).wrapping_add(e).wrapping_add(K[t / 20]).wrapping_add(wt);
        e = d;
        d = c;
        c = b.rotate_left(30);
        b = a;
        a = temp;
    }
    [a, b, c, d, e].map({
        let mut i = 0;
        move |v: u32| {
            let r = v.wrapping_add(INIT[i]);
            i += 1;
            r
        }
    })
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{INIT, K};
    use std::arch::x86_64::*;

    /// SHA-1 of up to 16 messages of at most 55 bytes, padded in
    /// registers: each message is one masked load, its padding three masked
    /// moves and its big-endian words one byte shuffle; a 16 × 16 transpose
    /// then turns messages into lanes.
    #[target_feature(enable = "avx512f,avx512bw")]
    pub(super) unsafe fn hash16(msgs: &[&[u8]]) -> [[u32; 16]; 2] {
        debug_assert!(msgs.len() <= 16 && msgs.iter().all(|m| m.len() <= super::MAX_LEN));
        // Message l's padded block, as big-endian words, in rows[l].
        let mut rows = [_mm512_setzero_si512(); 16];
        // Reverses the bytes of each 32-bit word.
        let swap = _mm512_set4_epi32(0x0c0d_0e0f, 0x0809_0a0b, 0x0405_0607, 0x0001_0203);
        let marker = _mm512_set1_epi8(0x80u8 as i8);
        for (row, m) in rows.iter_mut().zip(msgs) {
            let len = m.len();
            let bits = (len * 8) as u16;
            // SAFETY: the mask selects the message's `len` bytes only; masked-out
            // bytes are not read (AVX-512 masked loads suppress their faults).
            let mut v = unsafe { _mm512_maskz_loadu_epi8((1u64 << len) - 1, m.as_ptr().cast()) };
            v = _mm512_mask_mov_epi8(v, 1u64 << len, marker);
            v = _mm512_mask_mov_epi8(v, 1u64 << 62, _mm512_set1_epi8((bits >> 8) as i8));
            v = _mm512_mask_mov_epi8(v, 1u64 << 63, _mm512_set1_epi8(bits as u8 as i8));
            *row = _mm512_shuffle_epi8(v, swap);
        }
        let w = transpose16(rows);
        rounds16(w)
    }

    /// Rows of 16 words → row g holds word g of every input row: four
    /// rounds of 16 unpacks or 128-bit shuffles.
    #[target_feature(enable = "avx512f")]
    pub(super) fn transpose16(r: [__m512i; 16]) -> [__m512i; 16] {
        let mut t = [_mm512_setzero_si512(); 16];
        for i in (0..16).step_by(2) {
            t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
            t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
        }
        let mut u = [_mm512_setzero_si512(); 16];
        for i in (0..16).step_by(4) {
            u[i] = _mm512_unpacklo_epi64(t[i], t[i + 2]);
            u[i + 1] = _mm512_unpackhi_epi64(t[i], t[i + 2]);
            u[i + 2] = _mm512_unpacklo_epi64(t[i + 1], t[i + 3]);
            u[i + 3] = _mm512_unpackhi_epi64(t[i + 1], t[i + 3]);
        }
        // Then 128-bit lanes move between registers, twice (the test
        // `the_transpose_moves_every_word` pins where every word lands).
        let mut v = [_mm512_setzero_si512(); 16];
        for h in 0..2 {
            for c in 0..4 {
                let (a, b) = (u[8 * h + c], u[8 * h + 4 + c]);
                v[8 * h + c] = _mm512_shuffle_i32x4::<0x88>(a, b);
                v[8 * h + 4 + c] = _mm512_shuffle_i32x4::<0xdd>(a, b);
            }
        }
        let mut out = [_mm512_setzero_si512(); 16];
        for c in 0..8 {
            out[c] = _mm512_shuffle_i32x4::<0x88>(v[c], v[8 + c]);
            out[8 + c] = _mm512_shuffle_i32x4::<0xdd>(v[c], v[8 + c]);
        }
        out
    }

    /// The 80 rounds of SHA-1 over 16 lanes from the initial state: the
    /// first two state words per lane.
    #[target_feature(enable = "avx512f")]
    fn rounds16(mut w: [__m512i; 16]) -> [[u32; 16]; 2] {
        let [mut a, mut b, mut c, mut d, mut e] = INIT.map(|v| _mm512_set1_epi32(v as i32));
        macro_rules! round {
            ($t:expr) => {{
                let t: usize = $t;
                if t >= 16 {
                    let x =
                        _mm512_ternarylogic_epi32::<0x96>(w[(t - 3) % 16], w[(t - 8) % 16], w[(t - 14) % 16]);
                    w[t % 16] = _mm512_rol_epi32::<1>(_mm512_xor_si512(x, w[t % 16]));
                }
                let f = match t / 20 {
                    0 => _mm512_ternarylogic_epi32::<0xCA>(b, c, d),
                    2 => _mm512_ternarylogic_epi32::<0xE8>(b, c, d),
                    _ => _mm512_ternarylogic_epi32::<0x96>(b, c, d),
                };
                let kw = _mm512_add_epi32(_mm512_set1_epi32(K[t / 20] as i32), w[t % 16]);
                let temp =
                    _mm512_add_epi32(_mm512_add_epi32(_mm512_rol_epi32::<5>(a), f), _mm512_add_epi32(e, kw));
                e = d;
                d = c;
                c = _mm512_rol_epi32::<30>(b);
                b = a;
                a = temp;
            }};
        }
        for t in 0..80 {
            round!(t);
        }
        let mut out = [[0u32; 16]; 2];
        // SAFETY: each output row is 16 u32s, the 64 bytes a store writes.
        unsafe {
            _mm512_storeu_si512(
                out[0].as_mut_ptr().cast(),
                _mm512_add_epi32(a, _mm512_set1_epi32(INIT[0] as i32)),
            );
            _mm512_storeu_si512(
                out[1].as_mut_ptr().cast(),
                _mm512_add_epi32(b, _mm512_set1_epi32(INIT[1] as i32)),
            );
        }
        out
    }

    /// SHA-1 of 8 one-block messages (lanes 0..8 of `words`).
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn compress8(words: &[[u32; 16]; 16]) -> [[u32; 16]; 2] {
        // SAFETY: each row holds at least 8 u32s, the 32 bytes a load reads.
        let mut w: [__m256i; 16] =
            std::array::from_fn(|g| unsafe { _mm256_loadu_si256(words[g].as_ptr().cast()) });
        let [mut a, mut b, mut c, mut d, mut e] = INIT.map(|v| _mm256_set1_epi32(v as i32));
        macro_rules! rol {
            ($x:expr, $n:literal) => {
                _mm256_or_si256(_mm256_slli_epi32::<$n>($x), _mm256_srli_epi32::<{ 32 - $n }>($x))
            };
        }
        for t in 0..80 {
            if t >= 16 {
                let x = _mm256_xor_si256(
                    _mm256_xor_si256(w[(t - 3) % 16], w[(t - 8) % 16]),
                    _mm256_xor_si256(w[(t - 14) % 16], w[t % 16]),
                );
                w[t % 16] = rol!(x, 1);
            }
            let f = match t / 20 {
                0 => _mm256_or_si256(_mm256_and_si256(b, c), _mm256_andnot_si256(b, d)),
                2 => _mm256_or_si256(_mm256_and_si256(b, c), _mm256_and_si256(d, _mm256_or_si256(b, c))),
                _ => _mm256_xor_si256(_mm256_xor_si256(b, c), d),
            };
            let kw = _mm256_add_epi32(_mm256_set1_epi32(K[t / 20] as i32), w[t % 16]);
            let temp = _mm256_add_epi32(_mm256_add_epi32(rol!(a, 5), f), _mm256_add_epi32(e, kw));
            e = d;
            d = c;
            c = rol!(b, 30);
            b = a;
            a = temp;
        }
        let mut out = [[0u32; 16]; 2];
        // SAFETY: each output row holds 16 u32s; a store writes the first 8.
        unsafe {
            _mm256_storeu_si256(
                out[0].as_mut_ptr().cast(),
                _mm256_add_epi32(a, _mm256_set1_epi32(INIT[0] as i32)),
            );
            _mm256_storeu_si256(
                out[1].as_mut_ptr().cast(),
                _mm256_add_epi32(b, _mm256_set1_epi32(INIT[1] as i32)),
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simd::{scoped, supported};
    use proptest::prelude::*;

    fn want(m: &[u8]) -> u64 {
        use sha1::Digest;
        u64::from_le_bytes(sha1::Sha1::digest(m)[..8].try_into().unwrap())
    }

    #[test]
    fn every_level_equals_sha1_for_every_length_and_lane_count() {
        let msgs: Vec<Vec<u8>> = (0..=130).map(|n| (0..n).map(|i| (i * 7 + n) as u8).collect()).collect();
        let refs: Vec<&[u8]> = msgs.iter().map(Vec::as_slice).collect();
        let expect: Vec<u64> = refs.iter().map(|m| want(m)).collect();
        for level in supported() {
            for n in [1, 7, 8, 9, 15, 16, 17, 40, refs.len()] {
                let mut got = vec![42];
                scoped(level, || sha1_batch(&refs[..n], &mut got));
                assert_eq!(got[0], 42, "appends");
                assert_eq!(&got[1..], &expect[..n], "{level} n={n}");
            }
        }
        // sha1(b"hello") = aaf4c61d…: sha1_hash32 reads its first 4 bytes LE.
        assert_eq!(sha1_prefix(b"hello") as u32, u32::from_le_bytes([0xaa, 0xf4, 0xc6, 0x1d]));
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_transpose_moves_every_word() {
        if !crate::simd::Level::Avx512.is_supported() {
            return;
        }
        let rows: [[u32; 16]; 16] = std::array::from_fn(|r| std::array::from_fn(|c| (r * 16 + c) as u32));
        // SAFETY: AVX-512 F is supported (checked above); loads and stores
        // cover 16 u32s each.
        let out = unsafe {
            use std::arch::x86_64::*;
            let regs = rows.map(|r| _mm512_loadu_si512(r.as_ptr().cast()));
            x86::transpose16(regs).map(|v| {
                let mut a = [0u32; 16];
                _mm512_storeu_si512(a.as_mut_ptr().cast(), v);
                a
            })
        };
        for (g, row) in out.iter().enumerate() {
            for (l, &v) in row.iter().enumerate() {
                assert_eq!(v, (l * 16 + g) as u32, "word {g} of row {l}");
            }
        }
    }

    proptest! {
        #[test]
        fn levels_agree_bit_for_bit(msgs in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..70), 0..40)) {
            let refs: Vec<&[u8]> = msgs.iter().map(Vec::as_slice).collect();
            let expect: Vec<u64> = refs.iter().map(|m| want(m)).collect();
            for level in supported() {
                let mut got = Vec::new();
                scoped(level, || sha1_batch(&refs, &mut got));
                prop_assert_eq!(&got, &expect, "{}", level);
            }
        }
    }
}
