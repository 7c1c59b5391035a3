//! datasketch 2.0.0's MinHash arithmetic, bit for bit: what the Python
//! drop-in `neardup.datasketch` computes with.
//!
//! datasketch keeps `num_perm` values per set. Each feature is hashed (by
//! default SHA-1: the digest's first 4 bytes, or 8 for `affine64`, read
//! little-endian) and every value becomes the minimum of itself and the
//! feature's image under one permutation. The [`Scheme`] says which
//! permutations:
//!
//! | scheme | values | image of hash `h` under `(a, b)` |
//! |---|---|---|
//! | `affine32` (datasketch's default) | `u32` | `a · fmix32(h) + b` mod 2^32 |
//! | `affine64` | `u64` | `a · fmix64(h) + b` mod 2^64 |
//! | `legacy` (before 2.0.0) | `u64` | `((a · h + b` mod 2^64`) mod (2^61 − 1)) & (2^32 − 1)` |
//!
//! `fmix` is MurmurHash3's finalizer. The legacy product wraps at 2^64
//! before the modulus, as numpy's `uint64` arithmetic does. The
//! parameters come from numpy's legacy `RandomState(seed)` exactly as
//! datasketch draws them ([`Permutations::draw`]).
//!
//! The work per feature after hashing is `num_perm` multiply–add–min
//! steps; the `affine32` kernels run them 8 or 16 lanes at a time
//! (AVX2, AVX-512) as [`crate::simd::level`] says, and SHA-1 of short
//! features runs 16 at a time ([`sha1_batch`]). Every level is tested
//! equal to the portable one.
//!
//! ```
//! use neardup::minhash::datasketch::{Permutations, Scheme};
//!
//! let perms = Permutations::draw(Scheme::Affine32, 1, 128);
//! let mut values = perms.empty32();
//! perms.update_bytes32(&[b"neardup".as_slice(), b"datasketch".as_slice()], &mut values);
//! assert!(values.iter().all(|&v| v < u32::MAX));
//! ```

mod bands;
mod kernels;
mod random;
mod sha1x;

pub use bands::BandIndex;
pub use sha1x::{sha1_batch, sha1_prefix};

use random::Mt19937;

/// How datasketch permutes hash values (its `scheme` argument).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scheme {
    /// `a · fmix32(h) + b` mod 2^32 over 32-bit hashes: datasketch 2.0.0's
    /// default. Values are `u32`.
    Affine32,
    /// `a · fmix64(h) + b` mod 2^64 over 64-bit hashes. Values are `u64`.
    Affine64,
    /// `(a · h + b) mod (2^61 − 1)` truncated to 32 bits, the product
    /// wrapping at 2^64: every datasketch before 2.0.0. Values are `u64`
    /// below 2^32.
    Legacy,
}

impl Scheme {
    /// Every scheme.
    pub const ALL: [Scheme; 3] = [Scheme::Affine32, Scheme::Affine64, Scheme::Legacy];

    /// datasketch's name for it.
    pub fn name(self) -> &'static str {
        match self {
            Scheme::Affine32 => "affine32",
            Scheme::Affine64 => "affine64",
            Scheme::Legacy => "legacy",
        }
    }

    /// The scheme of a datasketch name.
    pub fn from_name(name: &str) -> Option<Scheme> {
        Scheme::ALL.into_iter().find(|s| s.name() == name)
    }

    /// Bytes per stored value: 4 for `affine32`, else 8.
    pub fn value_bytes(self) -> usize {
        match self {
            Scheme::Affine32 => 4,
            Scheme::Affine64 | Scheme::Legacy => 8,
        }
    }

    /// Bits of the input hash: 64 for `affine64`, else 32.
    pub fn hash_bits(self) -> u32 {
        match self {
            Scheme::Affine64 => 64,
            Scheme::Affine32 | Scheme::Legacy => 32,
        }
    }

    /// The value of an empty sketch (and the largest value).
    pub fn max_value(self) -> u64 {
        match self {
            Scheme::Affine64 => u64::MAX,
            Scheme::Affine32 | Scheme::Legacy => u64::from(u32::MAX),
        }
    }
}

/// The Mersenne prime 2^61 − 1 of the legacy scheme.
pub const MERSENNE_61: u64 = (1 << 61) - 1;

/// MurmurHash3's 32-bit finalizer.
#[inline]
pub fn fmix32(mut h: u32) -> u32 {
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// MurmurHash3's 64-bit finalizer.
#[inline]
pub fn fmix64(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// The legacy image of hash `h` under `(a, b)`.
#[inline]
pub fn legacy_image(a: u64, b: u64, h: u64) -> u64 {
    (a.wrapping_mul(h).wrapping_add(b) % MERSENNE_61) & u64::from(u32::MAX)
}

/// Parameters that do not make a datasketch permutation.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PermutationError {
    /// `a` and `b` differ in length, or are empty.
    #[error("numbers of `a` and `b` permutation parameters differ ({a} and {b}) or are zero")]
    Lengths {
        /// How many `a`.
        a: usize,
        /// How many `b`.
        b: usize,
    },
    /// An even `a` under an affine scheme (not a bijection).
    #[error("all `a` permutation parameters must be odd for scheme {0:?}")]
    EvenA(&'static str),
    /// A parameter above the scheme's width.
    #[error("permutation parameters out of range for scheme {0:?}")]
    Range(&'static str),
}

/// The `num_perm` permutations of one scheme and seed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Permutations {
    scheme: Scheme,
    a: Vec<u64>,
    b: Vec<u64>,
    /// `a` and `b` as `u32`, for `affine32`'s kernels.
    a32: Vec<u32>,
    b32: Vec<u32>,
}

impl Permutations {
    /// The permutations datasketch's `MinHash(num_perm, seed, scheme=…)`
    /// draws from `np.random.RandomState(seed)`.
    pub fn draw(scheme: Scheme, seed: u32, num_perm: usize) -> Permutations {
        let mut rng = Mt19937::new(seed);
        let (a, b) = match scheme {
            Scheme::Legacy => {
                let p = u128::from(MERSENNE_61);
                (0..num_perm).map(|_| (rng.randint_u64(1, p), rng.randint_u64(0, p))).unzip()
            }
            Scheme::Affine32 => {
                let a = (0..num_perm).map(|_| u64::from(rng.randint_u32(0, 1 << 31)) * 2 + 1).collect();
                let b = (0..num_perm).map(|_| u64::from(rng.randint_u32(0, 1 << 32))).collect();
                (a, b)
            }
            Scheme::Affine64 => {
                let a = (0..num_perm)
                    .map(|_| rng.randint_u64(0, 1 << 63).wrapping_mul(2).wrapping_add(1))
                    .collect();
                let b = (0..num_perm).map(|_| rng.randint_u64(0, 1 << 64)).collect();
                (a, b)
            }
        };
        Permutations::build(scheme, a, b)
    }

    /// Permutations from their parameters (datasketch's `permutations`
    /// argument, as `u64`).
    ///
    /// # Errors
    ///
    /// Unequal or zero lengths; for the affine schemes an even `a`, and
    /// for `affine32` a parameter of more than 32 bits.
    pub fn from_parts(scheme: Scheme, a: Vec<u64>, b: Vec<u64>) -> Result<Permutations, PermutationError> {
        if a.len() != b.len() || a.is_empty() {
            return Err(PermutationError::Lengths { a: a.len(), b: b.len() });
        }
        if scheme == Scheme::Affine32 && a.iter().chain(&b).any(|&v| v > u64::from(u32::MAX)) {
            return Err(PermutationError::Range(scheme.name()));
        }
        if scheme != Scheme::Legacy && a.iter().any(|&v| v & 1 == 0) {
            return Err(PermutationError::EvenA(scheme.name()));
        }
        Ok(Permutations::build(scheme, a, b))
    }

    fn build(scheme: Scheme, a: Vec<u64>, b: Vec<u64>) -> Permutations {
        let (a32, b32) = if scheme == Scheme::Affine32 {
            (a.iter().map(|&v| v as u32).collect(), b.iter().map(|&v| v as u32).collect())
        } else {
            (Vec::new(), Vec::new())
        };
        Permutations { scheme, a, b, a32, b32 }
    }

    /// The scheme.
    pub fn scheme(&self) -> Scheme {
        self.scheme
    }

    /// How many permutations (`num_perm`).
    pub fn len(&self) -> usize {
        self.a.len()
    }

    /// True for none (never: construction refuses it).
    pub fn is_empty(&self) -> bool {
        self.a.is_empty()
    }

    /// The multipliers `a`.
    pub fn a(&self) -> &[u64] {
        &self.a
    }

    /// The offsets `b`.
    pub fn b(&self) -> &[u64] {
        &self.b
    }

    /// The values of an empty `affine32` sketch.
    pub fn empty32(&self) -> Vec<u32> {
        vec![u32::MAX; self.len()]
    }

    /// The values of an empty `affine64` or `legacy` sketch.
    pub fn empty64(&self) -> Vec<u64> {
        vec![self.scheme.max_value(); self.len()]
    }

    /// Lowers `values` (an `affine32` sketch) by features' 32-bit hashes.
    ///
    /// # Panics
    ///
    /// If the scheme is not `affine32` or `values` is not `num_perm` long.
    pub fn update32(&self, hashes: &[u32], values: &mut [u32]) {
        assert_eq!(self.scheme, Scheme::Affine32, "update32 is for affine32");
        assert_eq!(values.len(), self.len(), "num_perm values");
        let mixed: Vec<u32> = hashes.iter().map(|&h| fmix32(h)).collect();
        kernels::affine32(&self.a32, &self.b32, &mixed, values);
    }

    /// Lowers `values` (an `affine64` or `legacy` sketch) by features'
    /// hashes (for `legacy`, as numpy's `uint64` holds them: any 64 bits).
    ///
    /// # Panics
    ///
    /// If the scheme is `affine32` or `values` is not `num_perm` long.
    pub fn update64(&self, hashes: &[u64], values: &mut [u64]) {
        assert_ne!(self.scheme, Scheme::Affine32, "update64 is for affine64 and legacy");
        assert_eq!(values.len(), self.len(), "num_perm values");
        match self.scheme {
            Scheme::Affine64 => {
                let mixed: Vec<u64> = hashes.iter().map(|&h| fmix64(h)).collect();
                kernels::affine64(&self.a, &self.b, &mixed, values);
            }
            _ => kernels::legacy(&self.a, &self.b, hashes, values),
        }
    }

    /// Lowers an `affine32` sketch by features hashed with datasketch's
    /// default `sha1_hash32`.
    ///
    /// # Panics
    ///
    /// As [`update32`](Self::update32).
    pub fn update_bytes32(&self, features: &[&[u8]], values: &mut [u32]) {
        assert_eq!(self.scheme, Scheme::Affine32, "update_bytes32 is for affine32");
        assert_eq!(values.len(), self.len(), "num_perm values");
        let mut hashes = Vec::with_capacity(features.len());
        sha1_batch(features, &mut hashes);
        let mixed: Vec<u32> = hashes.iter().map(|&h| fmix32(h as u32)).collect();
        kernels::affine32(&self.a32, &self.b32, &mixed, values);
    }

    /// Lowers an `affine64` or `legacy` sketch by features hashed with
    /// datasketch's default (`sha1_hash64` for `affine64`, `sha1_hash32`
    /// for `legacy`).
    ///
    /// # Panics
    ///
    /// As [`update64`](Self::update64).
    pub fn update_bytes64(&self, features: &[&[u8]], values: &mut [u64]) {
        let mut hashes = Vec::with_capacity(features.len());
        sha1_batch(features, &mut hashes);
        if self.scheme == Scheme::Legacy {
            hashes.iter_mut().for_each(|h| *h &= u64::from(u32::MAX));
        }
        self.update64(&hashes, values);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finalizers_match_murmur3() {
        // MurmurHash3's fmix of known inputs.
        assert_eq!(fmix32(0), 0);
        assert_eq!(fmix32(1), 0x514e_28b7);
        assert_eq!(fmix64(0), 0);
        assert_eq!(fmix64(1), 0xb456_bcfc_34c2_cb2c);
    }

    #[test]
    fn affine_draws_are_odd_and_in_range() {
        for scheme in [Scheme::Affine32, Scheme::Affine64] {
            let p = Permutations::draw(scheme, 7, 300);
            assert!(p.a().iter().all(|a| a & 1 == 1));
            assert_eq!(Permutations::from_parts(scheme, p.a().to_vec(), p.b().to_vec()), Ok(p.clone()));
        }
        let p = Permutations::draw(Scheme::Legacy, 7, 300);
        assert!(p.a().iter().all(|&a| (1..MERSENNE_61).contains(&a)));
        assert!(p.b().iter().all(|&b| b < MERSENNE_61));
    }

    #[test]
    fn parts_are_checked() {
        let e = Permutations::from_parts(Scheme::Affine32, vec![2], vec![0]).unwrap_err();
        assert_eq!(e, PermutationError::EvenA("affine32"));
        let e = Permutations::from_parts(Scheme::Affine32, vec![1 << 33 | 1], vec![0]).unwrap_err();
        assert_eq!(e, PermutationError::Range("affine32"));
        assert!(Permutations::from_parts(Scheme::Legacy, vec![2], vec![0, 1]).is_err());
        assert!(Permutations::from_parts(Scheme::Legacy, vec![2], vec![0]).is_ok());
    }

    #[test]
    fn updates_take_the_minimum_image() {
        let features: Vec<Vec<u8>> = (0..50).map(|i| format!("feature {i}").into_bytes()).collect();
        let refs: Vec<&[u8]> = features.iter().map(Vec::as_slice).collect();
        let digests: Vec<[u8; 20]> = refs.iter().map(|f| sha1_reference(f)).collect();
        let h32 = |d: &[u8; 20]| u32::from_le_bytes(d[..4].try_into().unwrap());
        let h64 = |d: &[u8; 20]| u64::from_le_bytes(d[..8].try_into().unwrap());
        for scheme in Scheme::ALL {
            let p = Permutations::draw(scheme, 3, 64);
            let want: Vec<u64> = (0..64)
                .map(|k| {
                    let (a, b) = (p.a()[k], p.b()[k]);
                    digests
                        .iter()
                        .map(|d| match scheme {
                            Scheme::Affine32 => {
                                u64::from((a as u32).wrapping_mul(fmix32(h32(d))).wrapping_add(b as u32))
                            }
                            Scheme::Affine64 => a.wrapping_mul(fmix64(h64(d))).wrapping_add(b),
                            Scheme::Legacy => legacy_image(a, b, u64::from(h32(d))),
                        })
                        .min()
                        .unwrap()
                })
                .collect();
            let got: Vec<u64> = if scheme == Scheme::Affine32 {
                let mut v = p.empty32();
                p.update_bytes32(&refs, &mut v);
                v.into_iter().map(u64::from).collect()
            } else {
                let mut v = p.empty64();
                p.update_bytes64(&refs, &mut v);
                v
            };
            assert_eq!(got, want, "{scheme:?}");
        }
    }

    fn sha1_reference(m: &[u8]) -> [u8; 20] {
        use sha1::Digest;
        sha1::Sha1::digest(m).into()
    }
}
