//! The machine words fingerprints are stored in: `u64` for 64-bit
//! fingerprints, `u128` for 128-bit ones. Bits are numbered from the most
//! significant (bit 0) so that "leading bits" and sort order agree.

use std::fmt::Debug;
use std::hash::Hash;

/// An unsigned word that holds one fingerprint (or a projection of one).
///
/// Only `u64` and `u128` implement it; the index is generic over it so that
/// 64-bit fingerprints cost 8 bytes, not 16.
pub trait Word: Copy + Ord + Eq + Hash + Default + Debug + Send + Sync + 'static {
    /// Bits in the word.
    const BITS: u32;
    /// Bytes in the word.
    const BYTES: usize;
    /// The low `bits` of `v`.
    fn from_u128(v: u128) -> Self;
    /// Widens to `u128`.
    fn to_u128(self) -> u128;
    /// Hamming distance.
    fn dist(self, other: Self) -> u32;
    /// `self >> n`, zero when `n >= BITS`.
    fn shr(self, n: u32) -> Self;
    /// `self << n`, zero when `n >= BITS`.
    fn shl(self, n: u32) -> Self;
    /// Bitwise and.
    fn and(self, other: Self) -> Self;
    /// Bitwise or.
    fn or(self, other: Self) -> Self;
    /// Bitwise xor.
    fn xor(self, other: Self) -> Self;
    /// True when the word is zero.
    fn is_zero(self) -> bool;
    /// The low `n` bits set (all bits when `n >= BITS`).
    fn low_mask(n: u32) -> Self;
    /// Reads `Self::BYTES` little-endian bytes; `bytes` must hold that many.
    fn read_le(bytes: &[u8]) -> Self;
    /// Appends the low `n` bytes, little-endian.
    fn write_le(self, out: &mut Vec<u8>, n: usize);
    /// The value as `usize`, truncated (callers only use it on values of at most 32 bits).
    fn low_usize(self) -> usize;
}

macro_rules! impl_word {
    ($t:ty) => {
        impl Word for $t {
            const BITS: u32 = <$t>::BITS;
            const BYTES: usize = std::mem::size_of::<$t>();
            #[inline(always)]
            fn from_u128(v: u128) -> Self {
                v as $t
            }
            #[inline(always)]
            fn to_u128(self) -> u128 {
                self as u128
            }
            #[inline(always)]
            fn dist(self, other: Self) -> u32 {
                (self ^ other).count_ones()
            }
            #[inline(always)]
            fn shr(self, n: u32) -> Self {
                self.checked_shr(n).unwrap_or(0)
            }
            #[inline(always)]
            fn shl(self, n: u32) -> Self {
                self.checked_shl(n).unwrap_or(0)
            }
            #[inline(always)]
            fn and(self, other: Self) -> Self {
                self & other
            }
            #[inline(always)]
            fn or(self, other: Self) -> Self {
                self | other
            }
            #[inline(always)]
            fn xor(self, other: Self) -> Self {
                self ^ other
            }
            #[inline(always)]
            fn is_zero(self) -> bool {
                self == 0
            }
            #[inline(always)]
            fn low_mask(n: u32) -> Self {
                if n >= <$t>::BITS {
                    <$t>::MAX
                } else {
                    ((1 as $t) << n) - 1
                }
            }
            #[inline(always)]
            fn read_le(bytes: &[u8]) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(&bytes[..std::mem::size_of::<$t>()]);
                <$t>::from_le_bytes(a)
            }
            #[inline(always)]
            fn write_le(self, out: &mut Vec<u8>, n: usize) {
                out.extend_from_slice(&self.to_le_bytes()[..n]);
            }
            #[inline(always)]
            fn low_usize(self) -> usize {
                self as usize
            }
        }
    };
}

impl_word!(u64);
impl_word!(u128);
