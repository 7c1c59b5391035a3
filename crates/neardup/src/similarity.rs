//! Exact set similarity of documents: the second stage of two-stage
//! detection (SimHash finds candidates, shingle Jaccard confirms them).

use crate::stages::Stages;

/// The shingle length verification compares ([`ShingleJaccard`](crate::dedup::ShingleJaccard),
/// [`MinHasher::shingle_jaccard`](crate::minhash::MinHasher::shingle_jaccard)).
pub const SHINGLE: usize = 3;

/// The longest shingle hashed from a buffer on the stack (longer ones are
/// hashed in a stream).
const MAX_SHINGLE: usize = 8;

/// `x` rounded to 4 decimal places: how similarities, precision and
/// recall are printed and written everywhere (the CLI, Spark, Python).
///
/// ```
/// assert_eq!(neardup::similarity::round4(0.687_549), 0.6875);
/// ```
pub fn round4(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

/// The distinct features of a document that vote in its fingerprint, as
/// sorted 64-bit XXH3 hashes (for word shingles: the shingles).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FeatureSet(Vec<u64>);

impl FeatureSet {
    /// The distinct `n`-shingles (overlapping runs of `n` tokens) of the
    /// pipeline's tokens of `text`, after normalization and filtering: word
    /// n-grams, with jieba words for Chinese. A text of fewer than `n`
    /// tokens gives one shingle of all of them. This is what two-stage
    /// detection verifies with: it does not depend on the pipeline's
    /// weighting or selection.
    /// `stages` is a [`Stages`] or what holds one (a `Fingerprinter`, a
    /// `MinHasher`).
    pub fn shingles(stages: &impl AsRef<Stages>, text: &str, n: usize) -> FeatureSet {
        let mut v = Vec::new();
        shingle_hashes(stages.as_ref(), text, n, &mut v);
        FeatureSet::from_hashes(v)
    }

    /// The set of shingle hashes as [`shingle_hashes`] appends them (in any
    /// order, repeats allowed): what a job that kept them while signing
    /// verifies by, without tokenizing again.
    pub fn from_hashes(mut v: Vec<u64>) -> FeatureSet {
        v.sort_unstable();
        v.dedup();
        FeatureSet(v)
    }

    /// The set of the given features.
    pub fn from_features<'a>(features: impl IntoIterator<Item = &'a str>) -> FeatureSet {
        let mut v: Vec<u64> =
            features.into_iter().map(|f| xxhash_rust::xxh3::xxh3_64(f.as_bytes())).collect();
        v.sort_unstable();
        v.dedup();
        FeatureSet(v)
    }

    /// The number of distinct features.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// |A ∩ B|.
    pub fn intersection(&self, other: &FeatureSet) -> usize {
        let (a, b) = (&self.0, &other.0);
        let (mut i, mut j, mut n) = (0, 0, 0);
        while i < a.len() && j < b.len() {
            match a[i].cmp(&b[j]) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    n += 1;
                    i += 1;
                    j += 1;
                }
            }
        }
        n
    }

    /// Jaccard resemblance |A ∩ B| / |A ∪ B|; 1 for two empty sets.
    pub fn jaccard(&self, other: &FeatureSet) -> f64 {
        if self.is_empty() && other.is_empty() {
            return 1.0;
        }
        let inter = self.intersection(other);
        inter as f64 / (self.len() + other.len() - inter) as f64
    }

    /// Containment |A ∩ B| / min(|A|, |B|): how much of the smaller
    /// document the larger one holds; 1 for two empty sets, 0 when only one
    /// is empty.
    pub fn containment(&self, other: &FeatureSet) -> f64 {
        let min = self.len().min(other.len());
        if min == 0 {
            return if self.len() == other.len() { 1.0 } else { 0.0 };
        }
        self.intersection(other) as f64 / min as f64
    }
}

/// Appends to `out` the hashes of the `n`-shingles of `text`'s tokens
/// under `stages` (after normalization and filtering; bytes tokenizers
/// their tokens as they are), in text order with repeats: what
/// [`FeatureSet::shingles`] makes a set of. A text of fewer than `n`
/// tokens is one shingle of all of them.
pub fn shingle_hashes(stages: &Stages, text: &str, n: usize, out: &mut Vec<u64>) {
    if stages.tokenizer().is_bytes() {
        let tokens = stages.tokens(text);
        shingle_hashes_of_tokens(tokens.iter().map(String::as_str), n, out);
    } else {
        let norm = stages.normalize(text);
        shingle_hashes_of_tokens(stages.filtered_tokens(&norm).iter().copied(), n, out);
    }
}

/// The shingle hashes of a pipeline's tokens (see [`shingle_hashes`]), for
/// a job that has the tokens already. Each token is hashed once, and a
/// shingle is the hash of its tokens' hashes: no string per token or per
/// shingle.
pub(crate) fn shingle_hashes_of_tokens<'a>(
    tokens: impl Iterator<Item = &'a str>,
    n: usize,
    out: &mut Vec<u64>,
) {
    let hashes: Vec<u64> = tokens.map(|t| xxhash_rust::xxh3::xxh3_64(t.as_bytes())).collect();
    let n = n.max(1).min(hashes.len().max(1));
    out.extend(hashes.windows(n).map(|w| {
        let mut bytes = [0u8; 8 * MAX_SHINGLE];
        if w.len() > MAX_SHINGLE {
            let mut h = xxhash_rust::xxh3::Xxh3::new();
            w.iter().for_each(|x| h.update(&x.to_le_bytes()));
            return h.digest();
        }
        for (b, x) in bytes.chunks_exact_mut(8).zip(w) {
            b.copy_from_slice(&x.to_le_bytes());
        }
        xxhash_rust::xxh3::xxh3_64(&bytes[..8 * w.len()])
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jaccard_and_containment() {
        let a = FeatureSet::from_features(["a", "b", "c", "d", "a"]);
        let b = FeatureSet::from_features(["c", "d", "e"]);
        assert_eq!(a.len(), 4);
        assert_eq!(a.intersection(&b), 2);
        assert_eq!(a.jaccard(&b), 2.0 / 5.0);
        assert_eq!(a.containment(&b), 2.0 / 3.0);
        let e = FeatureSet::default();
        assert_eq!(e.jaccard(&e), 1.0);
        assert_eq!(e.containment(&a), 0.0);
        assert_eq!(a.jaccard(&a), 1.0);
    }
}
