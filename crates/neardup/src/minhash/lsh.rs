//! Band keys: what the LSH index and the dedup plan hash a signature's
//! bands into. The banding itself (how many bands of how many rows, chosen
//! from the threshold) is configuration: [`crate::config::lsh`].

pub use crate::config::lsh::{Banding, LshConfig, DEFAULT_THRESHOLD};

use super::sketch::mix64;

impl Banding {
    /// The key of band `band` of `signature`: equal keys mean equal values
    /// (but for 64-bit collisions).
    ///
    /// # Panics
    ///
    /// If the band lies past the signature's end.
    #[inline]
    pub fn key(&self, signature: &[u32], band: usize) -> u64 {
        let rows = &signature[band * self.rows..(band + 1) * self.rows];
        let mut h = mix64(0x6c73_6862_616e_6421 ^ band as u64);
        for &v in rows {
            h = mix64(h ^ u64::from(v));
        }
        h
    }

    /// Whether two signatures share a band: whether banded search makes
    /// them candidates.
    pub fn shares_band(&self, a: &[u32], b: &[u32]) -> bool {
        (0..self.bands).any(|band| {
            let rows = band * self.rows..(band + 1) * self.rows;
            a[rows.clone()] == b[rows]
        })
    }
}
