//! Locality-sensitive hashing of signatures: `b` bands of `r` rows. Two
//! documents are candidates when all `r` values of some band agree, which
//! happens with probability `1 − (1 − s^r)^b` for Jaccard similarity `s`
//! (the S-curve); the banding is chosen from the threshold and the number
//! of values so that the area the curve wrongly admits below the threshold
//! plus the area it wrongly misses above it is smallest (as datasketch's
//! `_optimal_param`).
//!
//! Data and arithmetic only: the band keys a signature index hashes are
//! the method's ([`Banding::key`], in `minhash/lsh.rs`).

use serde::{Deserialize, Serialize};

/// The default Jaccard threshold of a MinHash pipeline.
pub const DEFAULT_THRESHOLD: f64 = 0.5;

/// A validated Jaccard threshold, in (0, 1] — the one check every front
/// end's `--threshold`, `--verify jaccard:T` and `threshold=` goes through.
///
/// ```
/// use neardup::config::lsh::Threshold;
///
/// assert_eq!(Threshold::new(0.7)?.get(), 0.7);
/// assert!(Threshold::new(0.0).is_err() && Threshold::new(1.5).is_err() && Threshold::new(f64::NAN).is_err());
/// assert!(Threshold::new(2.0).unwrap_err().to_string().ends_with("the threshold must be in (0, 1], not 2"));
/// # Ok::<(), neardup::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd, Serialize)]
#[serde(transparent)]
pub struct Threshold(f64);

impl Threshold {
    /// `t`, if it lies in (0, 1].
    ///
    /// # Errors
    ///
    /// [`Error::Config`](crate::Error::Config) naming the value, for anything else (NaN included).
    pub fn new(t: f64) -> crate::error::Result<Threshold> {
        Threshold::check(t).map_err(crate::error::Error::Config)
    }

    /// `t`, if it lies in (0, 1]; else the message every front end shows
    /// (`the threshold must be in (0, 1], not T`).
    ///
    /// # Errors
    ///
    /// The message, for anything else (NaN included).
    pub fn check(t: f64) -> std::result::Result<Threshold, String> {
        if t > 0.0 && t <= 1.0 {
            Ok(Threshold(t))
        } else {
            Err(format!("the threshold must be in (0, 1], not {t}"))
        }
    }

    /// The value.
    pub fn get(self) -> f64 {
        self.0
    }
}

impl std::fmt::Display for Threshold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// `bands` bands of `rows` signature values each (`bands · rows` at most
/// the signature's length; values past the last band are not banded).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Banding {
    /// How many bands.
    pub bands: usize,
    /// Values per band.
    pub rows: usize,
}

impl Banding {
    /// The probability that two documents of Jaccard similarity `s` share
    /// a band: `1 − (1 − s^rows)^bands`.
    pub fn probability(&self, s: f64) -> f64 {
        1.0 - (1.0 - s.powi(self.rows as i32)).powi(self.bands as i32)
    }

    /// The expected share of pairs below `threshold` that become candidates
    /// (the area under the S-curve from 0 to the threshold).
    pub fn false_positive_mass(&self, threshold: f64) -> f64 {
        integrate(|s| self.probability(s), 0.0, threshold)
    }

    /// The expected share of pairs above `threshold` that are missed (the
    /// area above the S-curve from the threshold to 1).
    pub fn false_negative_mass(&self, threshold: f64) -> f64 {
        integrate(|s| 1.0 - self.probability(s), threshold, 1.0)
    }

    /// The banding of at most `permutations` values that minimises
    /// `fp_weight · false positives + fn_weight · false negatives` at
    /// `threshold` (ties: fewer bands).
    pub fn optimal(threshold: f64, permutations: usize, fp_weight: f64, fn_weight: f64) -> Banding {
        let mut best = (f64::INFINITY, Banding { bands: 1, rows: permutations.max(1) });
        for bands in 1..=permutations {
            for rows in 1..=permutations / bands {
                let b = Banding { bands, rows };
                let cost = fp_weight * b.false_positive_mass(threshold)
                    + fn_weight * b.false_negative_mass(threshold);
                if cost < best.0 - 1e-12 {
                    best = (cost, b);
                }
            }
        }
        best.1
    }

    /// The S-curve at `s = 0, 0.1, …, 1`: what `neardup config show` prints.
    pub fn s_curve(&self) -> Vec<(f64, f64)> {
        (0..=10).map(|i| f64::from(i) / 10.0).map(|s| (s, self.probability(s))).collect()
    }

    /// The similarity at which the S-curve is steepest, about
    /// `(1/bands)^(1/rows)`: where candidates start.
    pub fn knee(&self) -> f64 {
        (1.0 / self.bands as f64).powf(1.0 / self.rows as f64)
    }
    /// The near-duplicate rule of this banding at `threshold` over
    /// signatures of `permutations` values, in words, as every front end
    /// prints it: `Jaccard ≥ 0.5 (32 bands × 4 rows of 128 values)`.
    pub fn rule(&self, threshold: f64, permutations: usize) -> String {
        format!("Jaccard ≥ {threshold} ({self} of {permutations} values)")
    }

    /// Whether this banding fits signatures of `permutations` values.
    ///
    /// # Errors
    ///
    /// A message naming the problem and what fits.
    pub fn validate(&self, permutations: usize) -> Result<(), String> {
        if self.bands == 0 || self.rows == 0 || self.bands.saturating_mul(self.rows) > permutations {
            return Err(format!(
                "{} bands of {} rows do not fit signatures of {permutations} values: bands · rows must be \
                 between 1 and {permutations}",
                self.bands, self.rows
            ));
        }
        Ok(())
    }
}

impl std::fmt::Display for Banding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} bands × {} rows", self.bands, self.rows)
    }
}

/// The near-duplicate rule of a MinHash pipeline: the Jaccard threshold
/// and, optionally, a banding chosen by hand (else the optimal one for the
/// threshold, false positives and negatives weighed by
/// `false_negative_weight`: equally unless it is set).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LshConfig {
    /// Documents whose estimated Jaccard similarity is at least this are
    /// near duplicates. By default, this is 0.5.
    #[serde(default = "default_threshold")]
    pub threshold: f64,
    /// Bands; with `rows`, fixes the banding. By default, unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bands: Option<usize>,
    /// Values per band. By default, unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<usize>,
    /// When the banding is chosen from the threshold: how much a missed
    /// pair (a false negative of the bands) weighs against a needless
    /// candidate (a false positive), which weighs `1 −` this. By default,
    /// unset: 0.5, both alike, as datasketch's `MinHashLSH` chooses. Every
    /// candidate is confirmed by its estimated similarity, so a needless
    /// candidate costs a comparison and a missed pair a near duplicate:
    /// the `minhash` preset weighs misses 0.9 (32 bands × 4 rows at 0.5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub false_negative_weight: Option<f64>,
}

fn default_threshold() -> f64 {
    DEFAULT_THRESHOLD
}

impl Default for LshConfig {
    fn default() -> Self {
        LshConfig { threshold: DEFAULT_THRESHOLD, bands: None, rows: None, false_negative_weight: None }
    }
}

impl LshConfig {
    /// The rule at `threshold` with the optimal banding.
    pub fn at(threshold: f64) -> LshConfig {
        LshConfig { threshold, ..LshConfig::default() }
    }

    /// The banding for signatures of `permutations` values.
    ///
    /// # Errors
    ///
    /// As [`validate`](Self::validate).
    pub fn banding(&self, permutations: usize) -> Result<Banding, String> {
        self.validate(permutations)?;
        Ok(match (self.bands, self.rows) {
            (Some(bands), Some(rows)) => Banding { bands, rows },
            _ => {
                let w = self.false_negative_weight.unwrap_or(0.5);
                Banding::optimal(self.threshold, permutations, 1.0 - w, w)
            }
        })
    }

    /// Whether the rule fits signatures of `permutations` values.
    ///
    /// # Errors
    ///
    /// A threshold outside (0, 1], only one of bands and rows, a banding
    /// that does not fit, or a false-negative weight outside (0, 1).
    pub fn validate(&self, permutations: usize) -> Result<(), String> {
        Threshold::check(self.threshold)
            .map_err(|e| format!("the MinHash {}", e.trim_start_matches("the ")))?;
        if let Some(w) = self.false_negative_weight {
            if !(w > 0.0 && w < 1.0) {
                return Err(format!(
                    "lsh.false_negative_weight must be between 0 and 1 (0.5 weighs missed pairs and needless \
                     candidates alike), not {w}"
                ));
            }
        }
        match (self.bands, self.rows) {
            (Some(bands), Some(rows)) => Banding { bands, rows }.validate(permutations),
            (None, None) => Ok(()),
            _ => {
                Err("give both lsh.bands and lsh.rows, or neither (then they are chosen from the threshold)"
                    .into())
            }
        }
    }
}

/// Composite Simpson's rule with 256 intervals (the integrands here are
/// smooth polynomials of modest degree).
fn integrate(f: impl Fn(f64) -> f64, a: f64, b: f64) -> f64 {
    const N: usize = 256;
    if b <= a {
        return 0.0;
    }
    let h = (b - a) / N as f64;
    let mut sum = f(a) + f(b);
    for i in 1..N {
        let w = if i % 2 == 1 { 4.0 } else { 2.0 };
        sum += w * f(a + i as f64 * h);
    }
    sum * h / 3.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_s_curve_rises_from_zero_to_one() {
        let b = Banding { bands: 20, rows: 5 };
        assert_eq!(b.probability(0.0), 0.0);
        assert_eq!(b.probability(1.0), 1.0);
        let c = b.s_curve();
        assert!(c.windows(2).all(|w| w[0].1 <= w[1].1));
        assert!((b.knee() - 0.549).abs() < 0.001);
    }

    #[test]
    fn integration_is_exact_for_polynomials() {
        // ∫0^1 s^5 ds = 1/6; the false negatives of one band of one row
        // above t are ∫t^1 (1 − s) ds.
        assert!((integrate(|s| s.powi(5), 0.0, 1.0) - 1.0 / 6.0).abs() < 1e-9);
        let one = Banding { bands: 1, rows: 1 };
        assert!((one.false_negative_mass(0.5) - 0.125).abs() < 1e-9);
        assert!((one.false_positive_mass(0.5) - 0.125).abs() < 1e-9);
    }

    #[test]
    fn the_optimal_banding_puts_the_knee_near_the_threshold() {
        // datasketch 2.0.0's `lsh._optimal_param(t, K, 0.5, 0.5)`, run here.
        for (t, k, bands, rows) in [
            (0.3, 128, 37, 3),
            (0.5, 128, 25, 5),
            (0.7, 128, 14, 9),
            (0.8, 128, 9, 13),
            (0.9, 128, 5, 25),
            (0.7, 256, 25, 10),
        ] {
            assert_eq!(Banding::optimal(t, k, 0.5, 0.5), Banding { bands, rows }, "threshold {t}, K = {k}");
        }
        for t in [0.3, 0.5, 0.7, 0.9] {
            let b = Banding::optimal(t, 128, 0.5, 0.5);
            assert!(b.bands * b.rows <= 128);
            assert!((b.knee() - t).abs() < 0.12, "{t}: {b} knee {}", b.knee());
        }
    }

    #[test]
    fn weighing_misses_more_lowers_the_knee() {
        let at = |w: Option<f64>| {
            LshConfig { false_negative_weight: w, ..LshConfig::at(0.5) }.banding(128).unwrap()
        };
        assert_eq!(at(None), Banding { bands: 25, rows: 5 });
        assert_eq!(at(Some(0.5)), at(None));
        let recall = at(Some(0.9));
        assert_eq!(recall, Banding { bands: 32, rows: 4 });
        assert!(recall.knee() < at(None).knee() && recall.probability(0.5) > 0.85);
        for w in [0.0, 1.0, -0.5, f64::NAN] {
            let err = LshConfig { false_negative_weight: Some(w), ..LshConfig::at(0.5) }.validate(128);
            assert!(err.unwrap_err().contains("false_negative_weight"), "{w}");
        }
    }

    #[test]
    fn a_banding_must_fit() {
        assert!(Banding { bands: 20, rows: 7 }.validate(128).is_err());
        assert!(Banding { bands: 0, rows: 7 }.validate(128).is_err());
        assert!(LshConfig { bands: Some(4), ..LshConfig::default() }.validate(128).is_err());
        assert!(LshConfig::at(0.0).validate(128).is_err());
        assert!(LshConfig::at(f64::NAN).validate(128).is_err());
        assert_eq!(
            LshConfig { bands: Some(16), rows: Some(8), ..LshConfig::default() }.banding(128),
            Ok(Banding { bands: 16, rows: 8 })
        );
    }
}
