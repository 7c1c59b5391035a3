//! Feature hashing: each feature's UTF-8 bytes to 64 or 128 bits.
//!
//! Every function here is pinned: its exact definition is part of the
//! fingerprint format, and golden tests fail if it drifts. Never
//! `std::hash::DefaultHasher`, whose algorithm is unspecified.

mod gram_cache;
mod md5x16;

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::fingerprint::Bits;

/// A function from a feature's bytes to 64 or 128 bits.
///
/// Implement it to plug in another hash; the built-ins are listed in
/// [`HashConfig`].
pub trait FeatureHasher: Send + Sync + fmt::Debug {
    /// The 64-bit hash of `feature`.
    fn hash64(&self, feature: &[u8]) -> u64;

    /// The 128-bit hash of `feature`, or `None` if this function has no
    /// 128-bit form.
    fn hash128(&self, feature: &[u8]) -> Option<u128>;

    /// Whether hashing costs much more than counting: a pipeline then
    /// hashes each distinct feature once rather than every occurrence.
    /// The fingerprint is the same either way.
    fn is_expensive(&self) -> bool {
        false
    }
}

/// The built-in feature hashes, selected by name in a configuration
/// (`hash = "xxh3"`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum HashConfig {
    /// XXH3 (xxHash 3) with seed 0: `xxh3_64` for 64 bits, `xxh3_128` for 128.
    /// Fast and well distributed; the default.
    #[default]
    Xxh3,
    /// FNV-1a: 64-bit (offset basis `0xcbf29ce484222325`, prime `0x100000001b3`)
    /// or 128-bit (offset basis `0x6c62272e07bb014262b821756295c58d`,
    /// prime `2^88 + 0x13b`).
    Fnv1a,
    /// MD5, as the PyPI `simhash` package: the last 8 bytes of the digest
    /// read big-endian for 64 bits, the whole digest big-endian for 128.
    Md5,
    /// SipHash-1-3 with the fixed keys `k0 = 0x0706050403020100`,
    /// `k1 = 0x0f0e0d0c0b0a0908` (the reference test keys); 128 bits is
    /// SipHash-1-3-128 read as `h1 | h2 << 64`.
    Siphash,
    /// Bob Jenkins' lookup3 `hashlittle2` with both seeds 0, returning
    /// `(c << 32) | b`, as yanyiwu/simhash. 64 bits only.
    Lookup3,
}

impl HashConfig {
    /// All built-ins, for documentation and tests.
    pub const ALL: [HashConfig; 5] =
        [HashConfig::Xxh3, HashConfig::Fnv1a, HashConfig::Md5, HashConfig::Siphash, HashConfig::Lookup3];

    /// The name used in configurations.
    pub fn name(self) -> &'static str {
        match self {
            HashConfig::Xxh3 => "xxh3",
            HashConfig::Fnv1a => "fnv1a",
            HashConfig::Md5 => "md5",
            HashConfig::Siphash => "siphash",
            HashConfig::Lookup3 => "lookup3",
        }
    }

    /// Whether this function can make fingerprints of this width.
    pub fn supports(self, bits: Bits) -> bool {
        !(self == HashConfig::Lookup3 && bits == Bits::B128)
    }

    /// Hash `feature` to `bits` bits (zero-extended to `u128`).
    ///
    /// A width the function does not support (see [`supports`](Self::supports))
    /// gives its 64-bit hash; pipelines refuse such configurations when built.
    #[inline]
    pub fn hash(self, bits: Bits, feature: &[u8]) -> u128 {
        match bits {
            Bits::B64 => self.hash64(feature) as u128,
            Bits::B128 => self.hash128(feature).unwrap_or_else(|| self.hash64(feature) as u128),
        }
    }
}

impl HashConfig {
    /// Hashes every feature to `bits` bits, appending to `out`: the same
    /// values as [`hash`](Self::hash); MD5 sixteen at a time with the SIMD
    /// kernels of [`crate::simd::level`] and a per-thread cache of 4-byte
    /// features.
    pub fn hash_batch(self, bits: Bits, features: &[&str], out: &mut Vec<u128>) {
        out.reserve(features.len());
        if self == HashConfig::Md5 {
            md5x16::hash_cached(features, bits == Bits::B128, out);
            return;
        }
        out.extend(features.iter().map(|f| self.hash(bits, f.as_bytes())));
    }
}

/// A hash value as the batch kernels hand it on: `u64` for 64-bit
/// fingerprints (half the memory traffic), `u128` for 128-bit ones.
pub(crate) trait HashWord: Copy + Default + std::fmt::Debug + 'static {
    /// The fingerprint width this word serves.
    const BITS: Bits;
    /// Whether the word holds the full 128-bit hash.
    const WIDE: bool;
    /// The word for the hash `h` (as [`HashConfig::hash`] gives it).
    fn cut(h: u128) -> Self;
    /// The word as a hash (zero-extended).
    fn widen(self) -> u128;
    /// The MD5 hashes of the character 4-grams of `text` at this width
    /// (`md5x16::hash_4grams`).
    fn md5_4grams(text: &str, f: impl FnMut(&[Self]));
}

impl HashWord for u64 {
    const BITS: Bits = Bits::B64;
    const WIDE: bool = false;
    #[inline(always)]
    fn cut(h: u128) -> u64 {
        h as u64
    }
    #[inline(always)]
    fn widen(self) -> u128 {
        u128::from(self)
    }
    fn md5_4grams(text: &str, f: impl FnMut(&[u64])) {
        md5x16::hash_4grams(text, f);
    }
}

impl HashWord for u128 {
    const BITS: Bits = Bits::B128;
    const WIDE: bool = true;
    #[inline(always)]
    fn cut(h: u128) -> u128 {
        h
    }
    #[inline(always)]
    fn widen(self) -> u128 {
        self
    }
    fn md5_4grams(text: &str, f: impl FnMut(&[u128])) {
        md5x16::hash_4grams(text, f);
    }
}

impl HashConfig {
    /// Hashes every `n`-byte window of the ASCII text `text` (its character
    /// `n`-grams) and hands the hashes to `f` a slice at a time, in an
    /// unspecified order: for callers that only count (unit votes). MD5 of
    /// 4-grams uses a per-thread cache and the SIMD kernels of
    /// [`crate::simd::level`].
    pub fn hash_ascii_windows(self, bits: Bits, text: &str, n: usize, f: impl FnMut(&[u128])) {
        debug_assert!(text.is_ascii());
        self.hash_char_windows(bits, text, n, f);
    }

    /// Hashes every window of `n` characters of `text` (its character
    /// `n`-grams; any UTF-8) and hands the hashes to `f` a slice at a time,
    /// in an unspecified order: for callers that only count (unit votes).
    /// ASCII text is hashed as byte windows; MD5 of 4-grams looks up the
    /// windows of four ASCII characters in a per-thread cache and hashes
    /// with the SIMD kernels of [`crate::simd::level`].
    pub fn hash_char_windows(self, bits: Bits, text: &str, n: usize, mut f: impl FnMut(&[u128])) {
        match bits {
            Bits::B128 => self.char_windows::<u128>(text, n, f),
            Bits::B64 => {
                let mut wide = Vec::new();
                self.char_windows::<u64>(text, n, |h| {
                    wide.clear();
                    wide.extend(h.iter().map(|&x| u128::from(x)));
                    f(&wide);
                });
            }
        }
    }

    /// [`hash_char_windows`](Self::hash_char_windows) at the width of `W`,
    /// without widening 64-bit hashes.
    pub(crate) fn char_windows<W: HashWord>(self, text: &str, n: usize, mut f: impl FnMut(&[W])) {
        if n == 0 {
            return;
        }
        if self == HashConfig::Md5 && n == 4 {
            return W::md5_4grams(text, f);
        }
        let mut buf: Vec<W> = Vec::with_capacity(256);
        let mut push = |w: &[u8]| {
            buf.push(W::cut(self.hash(W::BITS, w)));
            if buf.len() == 256 {
                f(&buf);
                buf.clear();
            }
        };
        if text.is_ascii() {
            text.as_bytes().windows(n).for_each(&mut push);
        } else {
            crate::tokenize::for_each_char_window(text, n, |w| push(w.as_bytes()));
        }
        f(&buf);
    }
}

impl FeatureHasher for HashConfig {
    #[inline]
    fn hash64(&self, feature: &[u8]) -> u64 {
        match self {
            HashConfig::Xxh3 => xxhash_rust::xxh3::xxh3_64(feature),
            HashConfig::Fnv1a => fnv1a64(feature),
            HashConfig::Md5 => {
                let d = md5(feature);
                u64::from_be_bytes(d[8..16].try_into().expect("8 bytes"))
            }
            HashConfig::Siphash => siphasher::sip::SipHasher13::new_with_keys(SIP_K0, SIP_K1).hash(feature),
            HashConfig::Lookup3 => {
                let (c, b) = hashlittle2(feature, 0, 0);
                (u64::from(c) << 32) | u64::from(b)
            }
        }
    }

    #[inline]
    fn hash128(&self, feature: &[u8]) -> Option<u128> {
        Some(match self {
            HashConfig::Xxh3 => xxhash_rust::xxh3::xxh3_128(feature),
            HashConfig::Fnv1a => fnv1a128(feature),
            HashConfig::Md5 => u128::from_be_bytes(md5(feature)),
            HashConfig::Siphash => {
                siphasher::sip128::SipHasher13::new_with_keys(SIP_K0, SIP_K1).hash(feature).as_u128()
            }
            HashConfig::Lookup3 => return None,
        })
    }
}

/// SipHash key, first half (documented in [`HashConfig::Siphash`]).
const SIP_K0: u64 = 0x0706_0504_0302_0100;
/// SipHash key, second half.
const SIP_K1: u64 = 0x0f0e_0d0c_0b0a_0908;

fn md5(bytes: &[u8]) -> [u8; 16] {
    use md5::Digest;
    md5::Md5::digest(bytes).into()
}

/// 64-bit FNV-1a.
#[inline]
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// 128-bit FNV-1a.
pub fn fnv1a128(bytes: &[u8]) -> u128 {
    let mut h: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    const PRIME: u128 = (1 << 88) + 0x13b;
    for &b in bytes {
        h ^= u128::from(b);
        h = h.wrapping_mul(PRIME);
    }
    h
}

/// Bob Jenkins' lookup3 `hashlittle2`: hashes `key` with the two seeds
/// `pc` and `pb` and returns the two results `(c, b)`.
///
/// This is the portable byte-at-a-time path of `lookup3.c`, which gives the
/// same values as its word-at-a-time paths on little-endian machines.
pub fn hashlittle2(key: &[u8], pc: u32, pb: u32) -> (u32, u32) {
    #[inline(always)]
    fn mix(a: &mut u32, b: &mut u32, c: &mut u32) {
        *a = a.wrapping_sub(*c);
        *a ^= c.rotate_left(4);
        *c = c.wrapping_add(*b);
        *b = b.wrapping_sub(*a);
        *b ^= a.rotate_left(6);
        *a = a.wrapping_add(*c);
        *c = c.wrapping_sub(*b);
        *c ^= b.rotate_left(8);
        *b = b.wrapping_add(*a);
        *a = a.wrapping_sub(*c);
        *a ^= c.rotate_left(16);
        *c = c.wrapping_add(*b);
        *b = b.wrapping_sub(*a);
        *b ^= a.rotate_left(19);
        *a = a.wrapping_add(*c);
        *c = c.wrapping_sub(*b);
        *c ^= b.rotate_left(4);
        *b = b.wrapping_add(*a);
    }
    #[inline(always)]
    fn fin(a: &mut u32, b: &mut u32, c: &mut u32) {
        *c ^= *b;
        *c = c.wrapping_sub(b.rotate_left(14));
        *a ^= *c;
        *a = a.wrapping_sub(c.rotate_left(11));
        *b ^= *a;
        *b = b.wrapping_sub(a.rotate_left(25));
        *c ^= *b;
        *c = c.wrapping_sub(b.rotate_left(16));
        *a ^= *c;
        *a = a.wrapping_sub(c.rotate_left(4));
        *b ^= *a;
        *b = b.wrapping_sub(a.rotate_left(14));
        *c ^= *b;
        *c = c.wrapping_sub(b.rotate_left(24));
    }
    // lookup3 folds the length in as a uint32_t; longer keys wrap, as in C.
    let init = 0xdead_beef_u32.wrapping_add(key.len() as u32).wrapping_add(pc);
    let (mut a, mut b, mut c) = (init, init, init.wrapping_add(pb));
    let mut k = key;
    while k.len() > 12 {
        a = a.wrapping_add(u32::from_le_bytes([k[0], k[1], k[2], k[3]]));
        b = b.wrapping_add(u32::from_le_bytes([k[4], k[5], k[6], k[7]]));
        c = c.wrapping_add(u32::from_le_bytes([k[8], k[9], k[10], k[11]]));
        mix(&mut a, &mut b, &mut c);
        k = &k[12..];
    }
    if k.is_empty() {
        return (c, b);
    }
    // The tail, zero-padded, is what the C switch's fall-through adds.
    let mut tail = [0u8; 12];
    tail[..k.len()].copy_from_slice(k);
    a = a.wrapping_add(u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]));
    b = b.wrapping_add(u32::from_le_bytes([tail[4], tail[5], tail[6], tail[7]]));
    c = c.wrapping_add(u32::from_le_bytes([tail[8], tail[9], tail[10], tail[11]]));
    fin(&mut a, &mut b, &mut c);
    (c, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup3_reference_vectors() {
        // From the self-test (driver5) of Bob Jenkins' lookup3.c.
        assert_eq!(hashlittle2(b"", 0, 0), (0xdeadbeef, 0xdeadbeef));
        assert_eq!(hashlittle2(b"", 0, 0xdeadbeef), (0xbd5b7dde, 0xdeadbeef));
        assert_eq!(hashlittle2(b"", 0xdeadbeef, 0xdeadbeef), (0x9c093ccd, 0xbd5b7dde));
        let s = b"Four score and seven years ago";
        assert_eq!(hashlittle2(s, 0, 0), (0x17770551, 0xce7226e6));
        assert_eq!(hashlittle2(s, 0, 1), (0xe3607cae, 0xbd371de4));
        assert_eq!(hashlittle2(s, 1, 0), (0xcd628161, 0x6cbea4b3));
    }

    #[test]
    fn yanyiwu_jenkins_of_empty_string() {
        assert_eq!(HashConfig::Lookup3.hash64(b""), 16045690984833335023);
    }

    #[test]
    fn fnv_reference_vectors() {
        // From the FNV reference test suite.
        assert_eq!(fnv1a64(b""), 0xcbf29ce484222325);
        assert_eq!(fnv1a64(b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x85944171f73967e8);
        assert_eq!(fnv1a128(b""), 0x6c62272e07bb014262b821756295c58d);
        assert_eq!(fnv1a128(b"a"), 0xd228cb696f1a8caf78912b704e4a8964);
    }

    #[test]
    fn md5_matches_the_python_package_layout() {
        // md5(b"") = d41d8cd98f00b204e9800998ecf8427e
        assert_eq!(HashConfig::Md5.hash64(b""), 0xe9800998ecf8427e);
        assert_eq!(HashConfig::Md5.hash128(b""), Some(0xd41d8cd98f00b204e9800998ecf8427e));
    }

    #[test]
    fn siphash13_reference_vector() {
        // SipHash-1-3 of the empty message with the reference keys.
        assert_eq!(HashConfig::Siphash.hash64(b""), 0xabac0158050fc4dc);
    }

    #[test]
    fn batch_equals_one_by_one() {
        let long = "x".repeat(100);
        let feats: Vec<&str> = [
            "",
            "a",
            "abcd",
            "\0\0\0\0",
            "中文测试",
            &long,
            "0123456789abcdef0123456789abcdef0123456789abcdef012345",
        ]
        .into_iter()
        .cycle()
        .take(37)
        .collect();
        for h in HashConfig::ALL {
            for bits in [Bits::B64, Bits::B128] {
                let mut got = Vec::new();
                h.hash_batch(bits, &feats, &mut got);
                let want: Vec<u128> = feats.iter().map(|f| h.hash(bits, f.as_bytes())).collect();
                assert_eq!(got, want, "{h:?} {bits}");
            }
        }
    }

    #[test]
    fn ascii_windows_equal_one_by_one() {
        let text =
            "the quick brown fox jumps over the lazy dog the quick brown fox\0\0\0\0\0 again".repeat(5);
        for h in HashConfig::ALL {
            for bits in [Bits::B64, Bits::B128] {
                for (n, level) in [1, 3, 4, 5]
                    .into_iter()
                    .flat_map(|n| crate::simd::supported().into_iter().map(move |l| (n, l)))
                {
                    let mut got = Vec::new();
                    crate::simd::scoped(level, || {
                        h.hash_ascii_windows(bits, &text, n, |x| got.extend_from_slice(x))
                    });
                    let mut want: Vec<u128> =
                        (0..=text.len() - n).map(|i| h.hash(bits, &text.as_bytes()[i..i + n])).collect();
                    got.sort_unstable();
                    want.sort_unstable();
                    assert_eq!(got, want, "{h:?} {bits} n = {n} {level}");
                }
            }
        }
    }

    #[test]
    fn char_windows_equal_one_by_one() {
        // Mostly ASCII with a few wider characters, and runs of CJK, so the
        // MD5 path sees cached ASCII windows and uncached wide ones.
        let text = "naïve café “quoted” 東京タワー ok_ascii_run_here² ΣΑΣ end".repeat(7);
        let chars: Vec<char> = text.chars().collect();
        for h in HashConfig::ALL {
            for bits in [Bits::B64, Bits::B128] {
                for (n, level) in [1, 3, 4, 5]
                    .into_iter()
                    .flat_map(|n| crate::simd::supported().into_iter().map(move |l| (n, l)))
                {
                    // Twice: the second pass is served by the cache the first filled.
                    for _ in 0..2 {
                        let mut got = Vec::new();
                        crate::simd::scoped(level, || {
                            h.hash_char_windows(bits, &text, n, |x| got.extend_from_slice(x))
                        });
                        let mut want: Vec<u128> = chars
                            .windows(n)
                            .map(|w| h.hash(bits, w.iter().collect::<String>().as_bytes()))
                            .collect();
                        got.sort_unstable();
                        want.sort_unstable();
                        assert_eq!(got, want, "{h:?} {bits} n = {n} {level}");
                    }
                }
            }
        }
    }

    #[test]
    fn lookup3_has_no_128_bit_form() {
        assert!(!HashConfig::Lookup3.supports(Bits::B128));
        assert!(HashConfig::Xxh3.supports(Bits::B128));
    }
}
