//! ferd/simhash's `simhash:hash/1` (Erlang, MD5 build, its default), bit
//! for bit, over any bytes:
//!
//! - the features are the 2-byte windows starting at bytes 1 to `len − 3`
//!   (its `shingles/4` counts down from `len − 3` while the position is
//!   above 0, so the first and the last window are never taken, and a
//!   binary of fewer than 4 bytes has none);
//! - a window met `c` times weighs `c` (`DUP_WEIGHT_ADD` = 1);
//! - each window's MD5 digest is 128 bits, most significant first; lane
//!   `j` sums `+w` where bit `j` is 1 and `−w` where it is 0;
//! - the result's bit `i` (most significant first) is 1 when lane
//!   `127 − i` is at least 0 (`reduce/2` lists the lanes from 127 down, and
//!   a sum of 0 gives 1), so no features gives 128 ones.

use md5::{Digest, Md5};

/// `simhash:hash(Bytes)` of ferd/simhash: the 16 bytes of the binary it
/// returns.
///
/// ```
/// // Fewer than 4 bytes: no window, every lane 0, every bit 1.
/// assert_eq!(neardup::compat::ferd::hash(b"abc"), [0xff; 16]);
/// ```
pub fn hash(bytes: &[u8]) -> [u8; 16] {
    let n = bytes.len();
    let mut windows: Vec<[u8; 2]> =
        if n >= 4 { (1..=n - 3).map(|p| [bytes[p], bytes[p + 1]]).collect() } else { Vec::new() };
    windows.sort_unstable();
    // lanes[j]: the sum for bit j of the digest, most significant first.
    let mut lanes = [0i64; 128];
    for group in windows.chunk_by(|a, b| a == b) {
        let w = group.len() as i64;
        let h = u128::from_be_bytes(Md5::digest(group[0]).into());
        for (j, lane) in lanes.iter_mut().enumerate() {
            if (h >> (127 - j)) & 1 == 1 {
                *lane += w;
            } else {
                *lane -= w;
            }
        }
    }
    let mut out = 0u128;
    for i in 0..128 {
        if lanes[127 - i] >= 0 {
            out |= 1 << (127 - i);
        }
    }
    out.to_be_bytes()
}

/// [`hash`] as ferd/simhash's `distance/2` compares them: the Hamming
/// distance of two results.
pub fn distance(a: &[u8; 16], b: &[u8; 16]) -> u32 {
    (u128::from_be_bytes(*a) ^ u128::from_be_bytes(*b)).count_ones()
}
