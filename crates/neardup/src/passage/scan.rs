//! Window pairs within k: a popcount scan (AVX2 popcnt path chosen at run time).

use rayon::prelude::*;

use super::windows::FingerprintedPassage;

/// Every pair of windows within `k` bits: (a window, b window, distance).
/// A brute-force scan (in parallel over A, with the CPU's popcount when it
/// has one): about a nanosecond per pair, 1.4·10⁹ pairs for two 1 MB
/// Chinese texts.
pub(super) fn close_pairs(
    a: &[FingerprintedPassage],
    b: &[FingerprintedPassage],
    k: u32,
) -> Vec<(usize, usize, u32)> {
    let bv: Vec<u128> = b.iter().map(|p| p.fingerprint.value()).collect();
    let wide = b.iter().chain(a).any(|p| p.fingerprint.as_u64().is_none());
    let b64: Vec<u64> = if wide { Vec::new() } else { bv.iter().map(|&v| v as u64).collect() };
    a.par_iter()
        .enumerate()
        .flat_map_iter(|(i, pa)| {
            let mut hits = Vec::new();
            let q = pa.fingerprint.value();
            if wide {
                for (j, &v) in bv.iter().enumerate() {
                    let d = (q ^ v).count_ones();
                    if d <= k {
                        hits.push((i, j, d));
                    }
                }
            } else {
                scan64(q as u64, &b64, k, |j, d| hits.push((i, j, d)));
            }
            if hits.len() > MAX_CANDIDATES {
                // Repetitive text (logs, tables, a refrain) makes every window
                // a candidate of every other: keep the closest ones, so the
                // work stays linear in the windows of A.
                // Among equals, the windows nearest A's position (scaled to B).
                let here = i * b.len() / a.len().max(1);
                hits.sort_unstable_by_key(|&(_, j, d)| (d, j.abs_diff(here), j));
                hits.truncate(MAX_CANDIDATES);
                hits.sort_unstable_by_key(|&(_, j, _)| j);
            }
            hits
        })
        .collect()
}

/// The most candidate windows of B kept for one window of A.
pub(super) const MAX_CANDIDATES: usize = 32;

/// Calls `hit(j, d)` for every `b[j]` within `k` bits of `q`.
pub(super) fn scan64(q: u64, b: &[u64], k: u32, hit: impl FnMut(usize, u32)) {
    // The portable level uses no x86 extension, popcnt included.
    #[cfg(target_arch = "x86_64")]
    if crate::simd::level() > crate::simd::Level::Portable && std::arch::is_x86_feature_detected!("popcnt") {
        // SAFETY: the CPU has popcnt, checked just above.
        return unsafe { scan64_popcnt(q, b, k, hit) };
    }
    scan64_portable(q, b, k, hit)
}

#[inline(always)]
pub(super) fn scan64_portable(q: u64, b: &[u64], k: u32, mut hit: impl FnMut(usize, u32)) {
    for (j, &v) in b.iter().enumerate() {
        let d = (q ^ v).count_ones();
        if d <= k {
            hit(j, d);
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
pub(super) unsafe fn scan64_popcnt(q: u64, b: &[u64], k: u32, hit: impl FnMut(usize, u32)) {
    scan64_portable(q, b, k, hit)
}
