//! What a caller asks "near" to mean: a radius `k` (SimHash), a Jaccard
//! threshold (MinHash), or neither (the pipeline's own rule). One home for
//! the rule every front end states — a k means SimHash, a threshold
//! MinHash, never both — so the CLI, the server and the store say the
//! same thing.

use crate::config::lsh::Threshold;
use crate::config::Method;
use crate::error::{Error, Result};

/// What counts as near for a query or a run.
///
/// ```
/// use neardup::minhash::Method;
/// use neardup::near::Near;
///
/// assert_eq!(Near::of(Some(3), None)?, Near::Within(3));
/// assert_eq!(Near::of(None, Some(0.7))?.method(), Some(Method::Minhash));
/// assert_eq!(Near::of(None, None)?, Near::Rule);
/// assert!(Near::of(Some(3), Some(0.7)).is_err());
/// assert!(Near::Within(3).check(Method::Minhash).is_err());
/// assert!(Near::AtLeast(1.5).check(Method::Minhash).is_err());
/// # Ok::<(), neardup::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Near {
    /// The pipeline's rule: its radius (SimHash), or its Jaccard threshold
    /// (MinHash).
    #[default]
    Rule,
    /// Within `k` bits (SimHash only).
    Within(u32),
    /// An estimated Jaccard similarity of at least this, among documents
    /// sharing a band (MinHash only).
    AtLeast(f64),
}

/// `None` is the rule, `Some(k)` within k bits (what SimHash callers pass).
impl From<Option<u32>> for Near {
    fn from(k: Option<u32>) -> Near {
        k.map_or(Near::Rule, Near::Within)
    }
}

impl Near {
    /// From a k and a threshold, as flags and requests give them.
    ///
    /// # Errors
    ///
    /// Both given ([`Error::Config`]).
    pub fn of(k: Option<u32>, threshold: Option<f64>) -> Result<Near> {
        match (k, threshold) {
            (Some(_), Some(_)) => Err(Error::Config(
                "give a radius k (SimHash) or a Jaccard threshold (MinHash), not both".into(),
            )),
            (Some(k), None) => Ok(Near::Within(k)),
            (None, Some(t)) => Ok(Near::AtLeast(t)),
            (None, None) => Ok(Near::Rule),
        }
    }

    /// The method it implies: SimHash for a k, MinHash for a threshold.
    pub fn method(self) -> Option<Method> {
        match self {
            Near::Rule => None,
            Near::Within(_) => Some(Method::Simhash),
            Near::AtLeast(_) => Some(Method::Minhash),
        }
    }

    /// The k of [`Near::Within`].
    pub fn k(self) -> Option<u32> {
        match self {
            Near::Within(k) => Some(k),
            _ => None,
        }
    }

    /// The threshold of [`Near::AtLeast`].
    pub fn threshold(self) -> Option<f64> {
        match self {
            Near::AtLeast(t) => Some(t),
            _ => None,
        }
    }

    /// Checks that it fits a pipeline of `method`.
    ///
    /// # Errors
    ///
    /// A k for MinHash, a threshold for SimHash, a threshold outside
    /// (0, 1] ([`Error::Config`]).
    pub fn check(self, method: Method) -> Result<()> {
        match (self, method) {
            (Near::Within(_), Method::Minhash) => Err(Error::Config(
                "a radius k is a SimHash setting; a MinHash pipeline takes a Jaccard threshold".into(),
            )),
            (Near::AtLeast(_), Method::Simhash) => Err(Error::Config(
                "a Jaccard threshold is a MinHash setting; a SimHash pipeline takes a radius k".into(),
            )),
            (Near::AtLeast(t), _) => Threshold::check(t).map(|_| ()).map_err(Error::Config),
            _ => Ok(()),
        }
    }
}
