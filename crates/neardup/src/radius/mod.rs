//! [`Radius`]: how many bits two fingerprints may differ in and still be
//! near duplicates, as a function of the documents' lengths.
//!
//! One rule serves every job: `neardup compare`'s verdict, `dedup`'s
//! clusters, the index's and the service's answers, Python and Spark. A
//! pipeline carries its rule ([`PipelineConfig::radius`](crate::PipelineConfig::radius));
//! an explicit `k` replaces it with [`Radius::fixed`].

use serde::{Deserialize, Serialize};

use crate::fingerprint::Bits;

mod plan;

pub use plan::{Pass, Plan};

/// The feature count of a record whose count is not known (a fingerprint
/// read from a list): it is treated as longer than every step of a radius.
pub const UNKNOWN_FEATURES: usize = u32::MAX as usize;

/// The Hamming radius as a function of document length: near duplicates
/// of short documents differ in more bits, because fewer features vote.
///
/// A pair is a near duplicate when its distance is at most
/// [`k_for_pair`](Radius::k_for_pair) of the two documents' feature counts
/// (the counts [`Fingerprinter::fingerprint_counted`](crate::Fingerprinter::fingerprint_counted)
/// returns): a step's larger k applies when the shorter document is below
/// the step's count and the longer one below twice it (a document twice
/// as long as another is not its near duplicate beyond the long-document k,
/// and this keeps the expensive radius to a subset of the corpus).
///
/// In a configuration file (TOML) it reads:
///
/// ```toml
/// [radius]
/// k = 4                                  # documents of 600 features or more
/// steps = [{ below = 600, k = 8 }]       # shorter ones
/// ```
///
/// ```
/// use neardup::Radius;
///
/// let r = Radius::by_length(&[(600, 8)], 4);
/// assert_eq!((r.k_for(599), r.k_for(600), r.max_k(), r.min_k()), (8, 4, 8, 4));
/// assert_eq!((r.k_for_pair(100, 1199), r.k_for_pair(100, 1200)), (8, 4));
/// assert_eq!(r.to_string(), "k = 8 below 600 features, else 4");
/// assert_eq!(Radius::fixed(3).to_string(), "k = 3");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RadiusDef", into = "RadiusDef")]
pub struct Radius {
    /// (below this many features, k), by increasing feature count.
    steps: Vec<(usize, u32)>,
    /// k for documents with at least as many features as the last step.
    rest: u32,
}

/// The serialized form of a [`Radius`].
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RadiusDef {
    k: u32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    steps: Vec<StepDef>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StepDef {
    below: usize,
    k: u32,
}

impl TryFrom<RadiusDef> for Radius {
    type Error = String;

    fn try_from(d: RadiusDef) -> Result<Radius, String> {
        if let Some(s) = d.steps.iter().find(|s| s.below == 0) {
            return Err(format!("radius step {{ below = 0, k = {} }} applies to no document", s.k));
        }
        let steps: Vec<(usize, u32)> = d.steps.iter().map(|s| (s.below, s.k)).collect();
        Ok(Radius::by_length(&steps, d.k))
    }
}

impl From<Radius> for RadiusDef {
    fn from(r: Radius) -> RadiusDef {
        RadiusDef { k: r.rest, steps: r.steps.iter().map(|&(below, k)| StepDef { below, k }).collect() }
    }
}

impl Radius {
    /// The same k for every length.
    pub fn fixed(k: u32) -> Radius {
        Radius { steps: Vec::new(), rest: k }
    }

    /// The classic radius for `bits`-bit fingerprints: 3 for 64 bits (Manku
    /// et al.), scaled with the width (6 for 128). The rule of a pipeline
    /// that names none and is no preset's.
    pub fn classic(bits: Bits) -> Radius {
        Radius::fixed(3 * bits.get() / 64)
    }

    /// `steps[i] = (n, k)`: documents with fewer than `n` features (and at
    /// least the previous step's `n`) get `k`; longer ones get `rest`.
    pub fn by_length(steps: &[(usize, u32)], rest: u32) -> Radius {
        let mut steps = steps.to_vec();
        steps.sort_unstable();
        Radius { steps, rest }
    }

    /// The radius for a document of `features` features paired with one of
    /// the same length.
    pub fn k_for(&self, features: usize) -> u32 {
        self.k_for_pair(features, features)
    }

    /// The radius for a pair of documents of `a` and `b` features.
    pub fn k_for_pair(&self, a: usize, b: usize) -> u32 {
        let (lo, hi) = (a.min(b), a.max(b));
        self.steps.iter().find(|s| lo < s.0 && hi < 2 * s.0).map_or(self.rest, |s| s.1)
    }

    /// Whether two documents of `a` and `b` features whose fingerprints
    /// differ in `distance` bits are near duplicates: the rule every job
    /// applies.
    pub fn accepts(&self, distance: u32, a: usize, b: usize) -> bool {
        distance <= self.k_for_pair(a, b)
    }

    /// The largest radius of any length.
    pub fn max_k(&self) -> u32 {
        self.steps.iter().map(|s| s.1).fold(self.rest, u32::max)
    }

    /// The smallest radius of any length.
    pub fn min_k(&self) -> u32 {
        self.steps.iter().map(|s| s.1).fold(self.rest, u32::min)
    }

    /// Whether every length gets the same k.
    pub fn is_fixed(&self) -> bool {
        self.steps.iter().all(|s| s.1 == self.rest)
    }

    /// Whether the radius never grows with document length (every preset's
    /// does not). Then the pair of the shortest members of two groups of
    /// equal fingerprints gets the largest radius of any pair across them,
    /// so groups can stand for their documents (the Spark job relies on it).
    pub fn shrinks_with_length(&self) -> bool {
        let mut last = u32::MAX;
        for &(_, k) in &self.steps {
            if k > last || k < self.rest {
                return false;
            }
            last = k;
        }
        true
    }

    /// The steps: (below this many features, k), then the k beyond.
    pub fn steps(&self) -> (&[(usize, u32)], u32) {
        (&self.steps, self.rest)
    }

    /// The rule as reports write it: a number for a fixed k, else
    /// `{"below_features": [{"features", "k"}, …], "else": k}`.
    pub fn to_json(&self) -> serde_json::Value {
        if self.is_fixed() {
            return serde_json::json!(self.max_k());
        }
        let steps: Vec<serde_json::Value> = self
            .steps
            .iter()
            .map(|&(features, k)| serde_json::json!({"features": features, "k": k}))
            .collect();
        serde_json::json!({ "below_features": steps, "else": self.rest })
    }

    /// Checks the radius against the fingerprint width.
    ///
    /// # Errors
    ///
    /// A message naming the k that is not below the width.
    pub fn validate(&self, bits: Bits) -> Result<(), String> {
        match self.max_k() {
            k if k > bits.get() => Err(format!("k = {k} is more than the {bits} bits of a fingerprint")),
            _ => Ok(()),
        }
    }
}

impl std::fmt::Display for Radius {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_fixed() {
            return write!(f, "k = {}", self.rest);
        }
        f.write_str("k = ")?;
        for (n, k) in &self.steps {
            write!(f, "{k} below {n} features, ")?;
        }
        write!(f, "else {}", self.rest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serializes_as_k_and_steps() {
        let r = Radius::by_length(&[(600, 8)], 4);
        let json = serde_json::to_string(&r).unwrap();
        assert_eq!(json, r#"{"k":4,"steps":[{"below":600,"k":8}]}"#);
        assert_eq!(serde_json::from_str::<Radius>(&json).unwrap(), r);
        assert_eq!(serde_json::to_string(&Radius::fixed(3)).unwrap(), r#"{"k":3}"#);
        let e = serde_json::from_str::<Radius>(r#"{"k":3,"steps":[{"below":0,"k":5}]}"#).unwrap_err();
        assert!(e.to_string().contains("no document"), "{e}");
        assert!(serde_json::from_str::<Radius>(r#"{"k":3,"kk":1}"#).is_err());
    }

    #[test]
    fn shrinking_and_validation() {
        assert!(Radius::by_length(&[(100, 10), (600, 8)], 4).shrinks_with_length());
        assert!(!Radius::by_length(&[(100, 2)], 4).shrinks_with_length());
        assert!(!Radius::by_length(&[(100, 6), (600, 8)], 4).shrinks_with_length());
        assert!(Radius::fixed(65).validate(Bits::B64).is_err());
        assert!(Radius::fixed(64).validate(Bits::B64).is_ok());
        assert!(Radius::by_length(&[(10, 70)], 3).validate(Bits::B64).is_err());
    }
}
