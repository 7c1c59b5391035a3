//! SimHash of sparse weighted vectors, without random hyperplanes.
//!
//! Charikar's SimHash estimates the cosine similarity of two vectors from
//! the signs of their projections on random hyperplanes. Hashing each
//! dimension to `f` pseudo-random bits gives those hyperplanes implicitly,
//! so a vector of any dimensionality is fingerprinted in time linear in
//! its non-zero entries: `cos θ ≈ cos(π · d / f)`.

use super::vote::{Lanes, Vote};
use crate::error::{Error, Result};
use crate::fingerprint::{Bits, Fingerprint};
use crate::hash::HashConfig;

/// A dimension of a sparse vector: an integer id or a name.
pub trait Dimension {
    /// The bytes that are hashed for this dimension: the UTF-8 of a name,
    /// the 8 little-endian bytes of an id.
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R;
}

impl Dimension for u64 {
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(&self.to_le_bytes())
    }
}

impl Dimension for str {
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(self.as_bytes())
    }
}

impl Dimension for &str {
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(self.as_bytes())
    }
}

impl Dimension for String {
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(self.as_bytes())
    }
}

/// The SimHash of a sparse vector given as `(dimension, weight)` pairs.
/// Entries vote in the order given; a dimension given twice votes twice.
///
/// A pipeline's text fingerprint equals this function applied to the
/// features and weights [`Fingerprinter::features`](crate::Fingerprinter::features)
/// reports, with the pipeline's hash and width.
///
/// # Errors
///
/// A weight that is not finite, or a hash without a form of this width.
///
/// # Example
///
/// ```
/// use neardup::{sparse::simhash_sparse, Bits, HashConfig};
///
/// let a = simhash_sparse(HashConfig::Xxh3, Bits::B64, [(1u64, 0.5), (7, 2.0), (42, 1.0)])?;
/// let b = simhash_sparse(HashConfig::Xxh3, Bits::B64, [(1u64, 0.5), (7, 2.0), (43, 0.1)])?;
/// assert!(a.estimated_cosine(b) > 0.5);
/// # Ok::<(), neardup::Error>(())
/// ```
pub fn simhash_sparse<D: Dimension>(
    hash: HashConfig,
    bits: Bits,
    entries: impl IntoIterator<Item = (D, f64)>,
) -> Result<Fingerprint> {
    if !hash.supports(bits) {
        return Err(Error::Config(format!("hash {} has no {bits}-bit form", hash.name())));
    }
    let mut votes = Vec::new();
    for (d, w) in entries {
        if !w.is_finite() {
            return Err(Error::Config(format!("weight {w} is not a finite number")));
        }
        votes.push(Vote { hash: d.with_bytes(|b| hash.hash(bits, b)), weight: w });
    }
    let mut lanes = Lanes::new(bits);
    lanes.add(&votes);
    Ok(lanes.fingerprint())
}
