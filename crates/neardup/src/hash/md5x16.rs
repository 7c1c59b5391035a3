//! MD5 of up to 16 short messages at once with AVX-512 (RFC 1321).
//!
//! The `python-simhash` preset hashes every 4-character gram with MD5; a
//! gram fits in one 64-byte MD5 block, so sixteen grams are hashed in the
//! sixteen 32-bit lanes of AVX-512 registers, one round function per
//! `vpternlogd`. A test checks every length against the `md-5` crate.

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

/// Whether the AVX-512 path can run here.
pub(crate) fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The padded single MD5 block of `msg` (at most [`MAX_LEN`] bytes), as
/// sixteen little-endian words.
fn block(msg: &[u8]) -> [u32; 16] {
    let mut bytes = [0u8; 64];
    bytes[..msg.len()].copy_from_slice(msg);
    bytes[msg.len()] = 0x80;
    bytes[56..].copy_from_slice(&((msg.len() as u64) * 8).to_le_bytes());
    let mut w = [0u32; 16];
    for (i, word) in w.iter_mut().enumerate() {
        *word = u32::from_le_bytes([bytes[4 * i], bytes[4 * i + 1], bytes[4 * i + 2], bytes[4 * i + 3]]);
    }
    w
}

/// The MD5 digests of up to 16 messages of at most [`MAX_LEN`] bytes.
///
/// # Panics
///
/// If more than 16 messages or a longer message is given, or (in debug
/// builds) if the CPU lacks AVX-512F: call [`available`] first.
pub(crate) fn digest16(msgs: &[&[u8]]) -> [[u8; 16]; 16] {
    assert!(msgs.len() <= 16 && msgs.iter().all(|m| m.len() <= MAX_LEN));
    // words[g][lane]: word g of each lane's block.
    let mut words = [[0u32; 16]; 16];
    for (lane, m) in msgs.iter().enumerate() {
        for (g, w) in block(m).into_iter().enumerate() {
            words[g][lane] = w;
        }
    }
    #[cfg(target_arch = "x86_64")]
    {
        assert!(available(), "md5x16 needs AVX-512F");
        // SAFETY: AVX-512F is present, asserted above.
        let state = unsafe { avx512::compress(&words) };
        let mut out = [[0u8; 16]; 16];
        for (lane, d) in out.iter_mut().enumerate() {
            for (j, s) in state.iter().enumerate() {
                d[4 * j..4 * j + 4].copy_from_slice(&s[lane].to_le_bytes());
            }
        }
        out
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = words;
        unreachable!("md5x16 needs AVX-512F")
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::{K, S};
    use std::arch::x86_64::*;

    /// One MD5 compression of sixteen blocks from the initial state.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn compress(words: &[[u32; 16]; 16]) -> [[u32; 16]; 4] {
        let m: [__m512i; 16] = std::array::from_fn(|g| _mm512_loadu_si512(words[g].as_ptr().cast()));
        let init = [0x67452301u32, 0xefcdab89, 0x98badcfe, 0x10325476];
        let (mut a, mut b, mut c, mut d) = (
            _mm512_set1_epi32(init[0] as i32),
            _mm512_set1_epi32(init[1] as i32),
            _mm512_set1_epi32(init[2] as i32),
            _mm512_set1_epi32(init[3] as i32),
        );
        for i in 0..64 {
            // The four round functions, each one ternary-logic instruction.
            let (f, g) = match i / 16 {
                0 => (_mm512_ternarylogic_epi32::<0xCA>(b, c, d), i),
                1 => (_mm512_ternarylogic_epi32::<0xE4>(b, c, d), (5 * i + 1) % 16),
                2 => (_mm512_ternarylogic_epi32::<0x96>(b, c, d), (3 * i + 5) % 16),
                _ => (_mm512_ternarylogic_epi32::<0x39>(b, c, d), (7 * i) % 16),
            };
            let sum = _mm512_add_epi32(
                _mm512_add_epi32(a, f),
                _mm512_add_epi32(_mm512_set1_epi32(K[i] as i32), m[g]),
            );
            let rot = _mm512_rolv_epi32(sum, _mm512_set1_epi32(S[i] as i32));
            let nb = _mm512_add_epi32(b, rot);
            (a, b, c, d) = (d, nb, b, c);
        }
        let mut out = [[0u32; 16]; 4];
        for (j, v) in [a, b, c, d].into_iter().enumerate() {
            let v = _mm512_add_epi32(v, _mm512_set1_epi32(init[j] as i32));
            _mm512_storeu_si512(out[j].as_mut_ptr().cast(), v);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use md5::Digest;

    #[test]
    fn equals_md5_for_every_length() {
        if !available() {
            return;
        }
        let data: Vec<u8> = (0..=255u8).cycle().take(1000).map(|b| b.wrapping_mul(37)).collect();
        for len in 0..=MAX_LEN {
            let msgs: Vec<&[u8]> = (0..16).map(|i| &data[i * 7..i * 7 + len]).collect();
            let got = digest16(&msgs);
            for (i, m) in msgs.iter().enumerate() {
                let want: [u8; 16] = md5::Md5::digest(m).into();
                assert_eq!(got[i], want, "len {len} lane {i}");
            }
        }
        let short = digest16(&[b"abc"]);
        assert_eq!(short[0], <[u8; 16]>::from(md5::Md5::digest(b"abc")));
    }
}
