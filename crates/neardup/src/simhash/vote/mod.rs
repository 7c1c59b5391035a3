//! The SimHash vote: every feature adds `+w` to lane `j` if bit `j` of its
//! hash is 1 and `−w` otherwise; bit `j` of the fingerprint is 1 iff lane
//! `j` ends above zero (a tie gives 0). A configuration's
//! [`VoteConfig`] can let a tie give 1 and reverse the bits, as other
//! implementations do.
//!
//! Lanes are `f64` sums, added in the order the features are given. Integer
//! weights (counts) are therefore exact and order-independent up to 2^53;
//! real weights are summed in the pipeline's documented order, so a
//! fingerprint is reproducible bit for bit. The AVX-512 and AVX2 paths,
//! chosen at run time ([`crate::simd`]), add lane by lane in that same
//! order and give the same bits as the portable one.

use crate::config::VoteConfig;
use crate::fingerprint::{Bits, Fingerprint};
use crate::simd;

mod unit;
pub use unit::UnitVotes;

/// One feature's contribution: its hash and its weight.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Vote {
    /// The feature hash (64-bit hashes use the low half).
    pub hash: u128,
    /// The weight.
    pub weight: f64,
}

/// The per-lane sums of a vote, kept for explanations.
#[derive(Clone, Debug)]
pub struct Lanes {
    sums: [f64; 128],
    bits: Bits,
}

impl Lanes {
    /// Empty lanes for fingerprints of `bits` bits.
    pub fn new(bits: Bits) -> Lanes {
        Lanes { sums: [0.0; 128], bits }
    }

    /// Adds the votes, in order.
    pub fn add(&mut self, votes: &[Vote]) {
        let (lo, hi) = self.sums.split_at_mut(64);
        accumulate(lo.try_into().expect("64 lanes"), votes, 0);
        if self.bits == Bits::B128 {
            accumulate(hi.try_into().expect("64 lanes"), votes, 64);
        }
    }

    /// Adds one vote of weight 1 for each hash: the same lanes as [`add`](Self::add)
    /// with unit weights (partial sums are small integers, exact in `f64`),
    /// counted by [`UnitVotes`] instead of 64 additions per hash.
    pub fn add_unit(&mut self, hashes: &[u128]) {
        let mut unit = UnitVotes::new(self.bits);
        unit.add(hashes);
        self.add_counted(&unit);
    }

    /// Adds the votes counted by `unit`.
    pub fn add_counted(&mut self, unit: &UnitVotes) {
        let n = unit.len() as f64;
        for (lane, ones) in self.sums.iter_mut().zip(unit.ones()) {
            *lane += 2.0 * ones as f64 - n;
        }
    }

    /// The lane sums, one per bit.
    pub fn sums(&self) -> &[f64] {
        &self.sums[..self.bits.get() as usize]
    }

    /// The fingerprint by the classic rule: bit `j` set iff lane `j` is
    /// above zero.
    pub fn fingerprint(&self) -> Fingerprint {
        self.fingerprint_by(VoteConfig::default())
    }

    /// The fingerprint by `rule` (ties, bit order).
    pub fn fingerprint_by(&self, rule: VoteConfig) -> Fingerprint {
        let (mut above, mut zero) = (0u128, 0u128);
        for (j, &s) in self.sums().iter().enumerate() {
            above |= u128::from(s > 0.0) << j;
            zero |= u128::from(s == 0.0) << j;
        }
        Fingerprint::new(rule.bits(above, zero, self.bits), self.bits)
    }
}

/// Adds each vote to 64 lanes, taking bits `shift..shift + 64` of its hash.
fn accumulate(lanes: &mut [f64; 64], votes: &[Vote], shift: u32) {
    match simd::level() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `simd::level()` is at most what the CPU supports.
        simd::Level::Avx512 => unsafe { avx512::accumulate(lanes, votes, shift) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as above.
        simd::Level::Avx2 => unsafe { avx2::accumulate(lanes, votes, shift) },
        _ => accumulate_portable(lanes, votes, shift),
    }
}

fn accumulate_portable(lanes: &mut [f64; 64], votes: &[Vote], shift: u32) {
    for v in votes {
        let h = (v.hash >> shift) as u64;
        for (j, lane) in lanes.iter_mut().enumerate() {
            *lane += if (h >> j) & 1 == 1 { v.weight } else { -v.weight };
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::Vote;
    use std::arch::x86_64::*;

    /// `SIGNS[n]` flips the sign of lane `i` of four when bit `i` of `n` is 0,
    /// so `w XOR SIGNS[n]` is `±w` exactly as the portable loop computes it.
    static SIGNS: [[f64; 4]; 16] = {
        let mut t = [[0.0f64; 4]; 16];
        let mut n = 0;
        while n < 16 {
            let mut i = 0;
            while i < 4 {
                t[n][i] = if (n >> i) & 1 == 1 { 0.0 } else { -0.0 };
                i += 1;
            }
            n += 1;
        }
        t
    };

    /// Keeps 32 lanes in eight registers at a time and streams the votes
    /// through them twice, rather than loading and storing all 64 lanes
    /// per vote.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn accumulate(lanes: &mut [f64; 64], votes: &[Vote], shift: u32) {
        for half in 0..2 {
            let base = half * 32;
            // SAFETY: (this and the loads and stores below) `lanes` holds 64
            // f64s; base + 4·g + 4 ≤ 32 + 28 + 4 = 64, so every 4-lane access
            // is inside it.
            let p = unsafe { lanes.as_mut_ptr().add(base) };
            let mut acc = [_mm256_setzero_pd(); 8];
            for (g, a) in acc.iter_mut().enumerate() {
                // SAFETY: see above.
                *a = unsafe { _mm256_loadu_pd(p.add(4 * g)) };
            }
            for v in votes {
                let h = ((v.hash >> shift) as u64) >> base;
                let w = _mm256_set1_pd(v.weight);
                for (g, a) in acc.iter_mut().enumerate() {
                    let nib = ((h >> (4 * g)) & 0xf) as usize;
                    // SAFETY: SIGNS[nib] is four f64s, what the load reads.
                    let s = unsafe { _mm256_loadu_pd(SIGNS[nib].as_ptr()) };
                    *a = _mm256_add_pd(*a, _mm256_xor_pd(w, s));
                }
            }
            for (g, a) in acc.iter().enumerate() {
                // SAFETY: see above.
                unsafe { _mm256_storeu_pd(p.add(4 * g), *a) };
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::Vote;
    use std::arch::x86_64::*;

    /// All 64 lanes live in eight 8-lane registers; each vote picks `+w` or
    /// `−w` per lane with the hash byte as a blend mask, then adds.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn accumulate(lanes: &mut [f64; 64], votes: &[Vote], shift: u32) {
        let p = lanes.as_mut_ptr();
        let mut acc = [_mm512_setzero_pd(); 8];
        for (g, a) in acc.iter_mut().enumerate() {
            // SAFETY: `lanes` holds 64 f64s; lanes 8·g..8·g + 8 (g < 8) are inside it.
            *a = unsafe { _mm512_loadu_pd(p.add(8 * g)) };
        }
        for v in votes {
            let h = (v.hash >> shift) as u64;
            let plus = _mm512_set1_pd(v.weight);
            let minus = _mm512_set1_pd(-v.weight);
            for (g, a) in acc.iter_mut().enumerate() {
                let k = (h >> (8 * g)) as u8;
                *a = _mm512_add_pd(*a, _mm512_mask_blend_pd(k, minus, plus));
            }
        }
        for (g, a) in acc.iter().enumerate() {
            // SAFETY: as for the loads above.
            unsafe { _mm512_storeu_pd(p.add(8 * g), *a) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn votes() -> Vec<Vote> {
        let mut x: u128 = 0x1234_5678_9abc_def0_0fed_cba9_8765_4321;
        (0..1000)
            .map(|i| {
                x = x
                    .wrapping_mul(0x2545_f491_4f6c_dd1d_2545_f491_4f6c_dd1d)
                    .wrapping_add(1442695040888963407);
                Vote { hash: x, weight: (i % 7) as f64 * 0.37 + 0.01 }
            })
            .collect()
    }

    #[test]
    fn simd_and_portable_agree_bit_for_bit() {
        let vs = votes();
        for shift in [0, 64] {
            let mut want = [0.0; 64];
            accumulate_portable(&mut want, &vs, shift);
            for level in simd::supported() {
                let mut a = [0.0; 64];
                simd::scoped(level, || accumulate(&mut a, &vs, shift));
                assert_eq!(a.map(f64::to_bits), want.map(f64::to_bits), "{level}");
            }
        }
    }

    #[test]
    fn unit_votes_equal_weighted_votes() {
        for n in [0, 1, 2, 3, 100, 70_000] {
            let vs: Vec<Vote> =
                votes().into_iter().cycle().take(n).map(|v| Vote { weight: 1.0, ..v }).collect();
            for (bits, level) in [Bits::B64, Bits::B128]
                .into_iter()
                .flat_map(|b| simd::supported().into_iter().map(move |l| (b, l)))
            {
                let mut a = Lanes::new(bits);
                a.add(&vs);
                let mut b = Lanes::new(bits);
                simd::scoped(level, || b.add_unit(&vs.iter().map(|v| v.hash).collect::<Vec<_>>()));
                assert_eq!(a.sums(), b.sums(), "n = {n}, {level}");
                let mut u = UnitVotes::new(bits);
                simd::scoped(level, || u.add(&vs.iter().map(|v| v.hash).collect::<Vec<_>>()));
                assert_eq!(u.fingerprint(), a.fingerprint(), "n = {n}, {level}");
            }
        }
    }

    #[test]
    fn ties_give_zero_and_majority_wins() {
        let mut l = Lanes::new(Bits::B64);
        l.add(&[Vote { hash: 0b01, weight: 1.0 }, Vote { hash: 0b11, weight: 1.0 }]);
        assert_eq!(l.fingerprint().as_u64(), Some(0b01));
        let mut l = Lanes::new(Bits::B64);
        l.add(&[Vote { hash: 0b01, weight: 1.0 }, Vote { hash: 0b10, weight: 1.0 }]);
        assert_eq!(l.fingerprint().as_u64(), Some(0));
    }

    #[test]
    fn single_feature_gives_its_hash() {
        let h = 0xfedc_ba98_7654_3210_0123_4567_89ab_cdef_u128;
        let mut l = Lanes::new(Bits::B128);
        l.add(&[Vote { hash: h, weight: 2.5 }]);
        assert_eq!(l.fingerprint().value(), h);
    }
}
