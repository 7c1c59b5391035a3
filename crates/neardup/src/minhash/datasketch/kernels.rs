//! The min-update kernels: `values[k] = min(values[k], image_k(h))` for
//! every feature hash `h` and permutation `k`.
//!
//! `affine32` has AVX-512 (16 lanes) and AVX2 (8 lanes) forms beside the
//! portable one, chosen by [`crate::simd::level`]: each holds a vector of
//! permutations and its running minima in registers while the features
//! stream past. The 64-bit schemes are portable (the legacy modulus has no
//! vector form worth having; `affine64` would need AVX-512 DQ). Tests check
//! every level against the portable kernel.

#[cfg(target_arch = "x86_64")]
use crate::simd::{level, Level};

/// Features per pass over the permutations: the hashes a pass rereads stay
/// in the L1 cache.
const BLOCK: usize = 4096;

/// `affine32`: hashes already mixed by `fmix32`.
pub(super) fn affine32(a: &[u32], b: &[u32], mixed: &[u32], values: &mut [u32]) {
    debug_assert!(a.len() == values.len() && b.len() == values.len());
    for block in mixed.chunks(BLOCK) {
        #[cfg(target_arch = "x86_64")]
        match level() {
            // SAFETY: the level is capped at what the CPU supports.
            Level::Avx512 => unsafe { x86::affine32_avx512(a, b, block, values) },
            // SAFETY: as above.
            Level::Avx2 => unsafe { x86::affine32_avx2(a, b, block, values) },
            Level::Portable => affine32_portable(a, b, block, values),
        }
        #[cfg(not(target_arch = "x86_64"))]
        affine32_portable(a, b, block, values);
    }
}

/// The portable `affine32` kernel (the reference).
pub(super) fn affine32_portable(a: &[u32], b: &[u32], mixed: &[u32], values: &mut [u32]) {
    for ((v, &a), &b) in values.iter_mut().zip(a).zip(b) {
        *v = mixed.iter().fold(*v, |m, &h| m.min(a.wrapping_mul(h).wrapping_add(b)));
    }
}

/// `affine64`: hashes already mixed by `fmix64`.
pub(super) fn affine64(a: &[u64], b: &[u64], mixed: &[u64], values: &mut [u64]) {
    for ((v, &a), &b) in values.iter_mut().zip(a).zip(b) {
        *v = mixed.iter().fold(*v, |m, &h| m.min(a.wrapping_mul(h).wrapping_add(b)));
    }
}

/// `legacy`: raw hashes.
pub(super) fn legacy(a: &[u64], b: &[u64], hashes: &[u64], values: &mut [u64]) {
    for ((v, &a), &b) in values.iter_mut().zip(a).zip(b) {
        *v = hashes.iter().fold(*v, |m, &h| m.min(super::legacy_image(a, b, h)));
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// 16 permutations at a time; the tail (num_perm mod 16) portably.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn affine32_avx512(a: &[u32], b: &[u32], mixed: &[u32], values: &mut [u32]) {
        let full = values.len() / 16 * 16;
        // Two vectors of permutations per pass share each broadcast.
        let mut c = 0;
        while c + 32 <= full {
            // SAFETY: c + 32 ≤ len of a, b and values: each load and store
            // covers 16 u32s inside them.
            unsafe {
                let (a0, a1) = (
                    _mm512_loadu_si512(a[c..].as_ptr().cast()),
                    _mm512_loadu_si512(a[c + 16..].as_ptr().cast()),
                );
                let (b0, b1) = (
                    _mm512_loadu_si512(b[c..].as_ptr().cast()),
                    _mm512_loadu_si512(b[c + 16..].as_ptr().cast()),
                );
                let mut m0 = _mm512_loadu_si512(values[c..].as_ptr().cast());
                let mut m1 = _mm512_loadu_si512(values[c + 16..].as_ptr().cast());
                for &h in mixed {
                    let h = _mm512_set1_epi32(h as i32);
                    m0 = _mm512_min_epu32(m0, _mm512_add_epi32(_mm512_mullo_epi32(a0, h), b0));
                    m1 = _mm512_min_epu32(m1, _mm512_add_epi32(_mm512_mullo_epi32(a1, h), b1));
                }
                _mm512_storeu_si512(values[c..].as_mut_ptr().cast(), m0);
                _mm512_storeu_si512(values[c + 16..].as_mut_ptr().cast(), m1);
            }
            c += 32;
        }
        if c < full {
            // SAFETY: c + 16 ≤ len, as above.
            unsafe {
                let a0 = _mm512_loadu_si512(a[c..].as_ptr().cast());
                let b0 = _mm512_loadu_si512(b[c..].as_ptr().cast());
                let mut m0 = _mm512_loadu_si512(values[c..].as_ptr().cast());
                for &h in mixed {
                    let h = _mm512_set1_epi32(h as i32);
                    m0 = _mm512_min_epu32(m0, _mm512_add_epi32(_mm512_mullo_epi32(a0, h), b0));
                }
                _mm512_storeu_si512(values[c..].as_mut_ptr().cast(), m0);
            }
        }
        super::affine32_portable(&a[full..], &b[full..], mixed, &mut values[full..]);
    }

    /// 8 permutations at a time; the tail (num_perm mod 8) portably.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn affine32_avx2(a: &[u32], b: &[u32], mixed: &[u32], values: &mut [u32]) {
        let full = values.len() / 8 * 8;
        let mut c = 0;
        while c + 16 <= full {
            // SAFETY: c + 16 ≤ len of a, b and values: each load and store
            // covers 8 u32s inside them.
            unsafe {
                let (a0, a1) = (
                    _mm256_loadu_si256(a[c..].as_ptr().cast()),
                    _mm256_loadu_si256(a[c + 8..].as_ptr().cast()),
                );
                let (b0, b1) = (
                    _mm256_loadu_si256(b[c..].as_ptr().cast()),
                    _mm256_loadu_si256(b[c + 8..].as_ptr().cast()),
                );
                let mut m0 = _mm256_loadu_si256(values[c..].as_ptr().cast());
                let mut m1 = _mm256_loadu_si256(values[c + 8..].as_ptr().cast());
                for &h in mixed {
                    let h = _mm256_set1_epi32(h as i32);
                    m0 = _mm256_min_epu32(m0, _mm256_add_epi32(_mm256_mullo_epi32(a0, h), b0));
                    m1 = _mm256_min_epu32(m1, _mm256_add_epi32(_mm256_mullo_epi32(a1, h), b1));
                }
                _mm256_storeu_si256(values[c..].as_mut_ptr().cast(), m0);
                _mm256_storeu_si256(values[c + 8..].as_mut_ptr().cast(), m1);
            }
            c += 16;
        }
        if c < full {
            // SAFETY: c + 8 ≤ len, as above.
            unsafe {
                let a0 = _mm256_loadu_si256(a[c..].as_ptr().cast());
                let b0 = _mm256_loadu_si256(b[c..].as_ptr().cast());
                let mut m0 = _mm256_loadu_si256(values[c..].as_ptr().cast());
                for &h in mixed {
                    let h = _mm256_set1_epi32(h as i32);
                    m0 = _mm256_min_epu32(m0, _mm256_add_epi32(_mm256_mullo_epi32(a0, h), b0));
                }
                _mm256_storeu_si256(values[c..].as_mut_ptr().cast(), m0);
            }
        }
        super::affine32_portable(&a[full..], &b[full..], mixed, &mut values[full..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simd::{scoped, supported};
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn every_level_equals_the_portable_kernel(
            k in 1usize..80,
            seed in any::<u32>(),
            hashes in proptest::collection::vec(any::<u32>(), 0..300),
        ) {
            let p = super::super::Permutations::draw(super::super::Scheme::Affine32, seed, k);
            let start: Vec<u32> = (0..k as u32).map(|i| u32::MAX - i * 977).collect();
            let mut want = start.clone();
            affine32_portable(&p.a32, &p.b32, &hashes, &mut want);
            for level in supported() {
                let mut got = start.clone();
                scoped(level, || affine32(&p.a32, &p.b32, &hashes, &mut got));
                prop_assert_eq!(&got, &want, "{}", level);
            }
        }
    }
}
