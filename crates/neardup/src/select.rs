//! Stage 5, select: optionally keep only the heaviest features.

use serde::{Deserialize, Serialize};

/// Which features take part in the vote, as it appears in a configuration:
/// `select = { type = "top-n", n = 20 }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
#[non_exhaustive]
pub enum SelectConfig {
    /// Every feature votes, in order of first occurrence.
    All,
    /// The `n` heaviest features vote, heaviest first.
    TopN {
        /// How many features.
        n: usize,
        /// How ties are ordered. By default, this is `first-occurrence`.
        #[serde(default)]
        ties: TieBreak,
    },
    /// `clamp(ceil(ratio × distinct features), min, max)` heaviest features
    /// vote, heaviest first, so long documents keep more of their content.
    Adaptive {
        /// The share of distinct features kept.
        ratio: f64,
        /// The fewest kept.
        min: usize,
        /// The most kept.
        max: usize,
    },
}

/// How features of equal weight are ordered when selecting the top N.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TieBreak {
    /// The feature that occurs first in the document comes first (a stable
    /// sort, as `jieba.analyse`).
    #[default]
    FirstOccurrence,
    /// cppjieba's order: features sorted by their UTF-8 bytes, then
    /// libstdc++'s `std::partial_sort` by descending weight (yanyiwu/simhash).
    Cppjieba,
}

impl SelectConfig {
    pub(crate) fn validate(&self) -> Result<(), String> {
        match self {
            SelectConfig::TopN { n: 0, .. } => Err("top-n needs n ≥ 1".into()),
            SelectConfig::Adaptive { ratio, min, max } => {
                if !(ratio.is_finite() && *ratio > 0.0) {
                    Err(format!("adaptive needs a ratio above 0, not {ratio}"))
                } else if min > max || *max == 0 {
                    Err(format!("adaptive needs 1 ≤ min ≤ max, not min = {min}, max = {max}"))
                } else {
                    Ok(())
                }
            }
            _ => Ok(()),
        }
    }

    /// Whether every feature votes.
    pub fn is_all(&self) -> bool {
        matches!(self, SelectConfig::All)
    }

    /// The indices of the features that vote, in voting order.
    pub(crate) fn select(&self, features: &[&str], weights: &[f64]) -> Vec<u32> {
        let all = || (0..features.len() as u32).collect::<Vec<u32>>();
        let (n, ties) = match self {
            SelectConfig::All => return all(),
            SelectConfig::TopN { n, ties } => (*n, *ties),
            SelectConfig::Adaptive { ratio, min, max } => {
                let n = (ratio * features.len() as f64).ceil() as usize;
                (n.clamp(*min, *max), TieBreak::FirstOccurrence)
            }
        };
        let mut idx = all();
        match ties {
            TieBreak::FirstOccurrence => {
                // Heaviest first, equal weights in first-occurrence order: a
                // total order, so the n first are found by selection and
                // only they are sorted (the same as a stable sort of all).
                let order =
                    |a: &u32, b: &u32| weights[*b as usize].total_cmp(&weights[*a as usize]).then(a.cmp(b));
                if n < idx.len() {
                    idx.select_nth_unstable_by(n, order);
                    idx.truncate(n);
                }
                idx.sort_unstable_by(order);
            }
            TieBreak::Cppjieba => {
                idx.sort_by(|&a, &b| features[a as usize].as_bytes().cmp(features[b as usize].as_bytes()));
                crate::compat::cppjieba::partial_sort_desc(&mut idx, n, |&i| weights[i as usize]);
            }
        }
        idx
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_n_is_stable_on_ties() {
        let f = ["a", "b", "c", "d"];
        let w = [1.0, 3.0, 3.0, 2.0];
        let s = SelectConfig::TopN { n: 3, ties: TieBreak::FirstOccurrence };
        assert_eq!(s.select(&f, &w), [1, 2, 3]);
        assert_eq!(SelectConfig::All.select(&f, &w), [0, 1, 2, 3]);
        let a = SelectConfig::Adaptive { ratio: 0.5, min: 1, max: 10 };
        assert_eq!(a.select(&f, &w), [1, 2]);
    }

    proptest::proptest! {
        /// Top-n by selection equals the first n of a stable sort by weight.
        #[test]
        fn top_n_equals_a_stable_sort(
            weights in proptest::collection::vec(0u8..6, 0..60),
            n in 0usize..70,
        ) {
            let w: Vec<f64> = weights.iter().map(|&x| f64::from(x) / 2.0).collect();
            let f: Vec<&str> = w.iter().map(|_| "x").collect();
            let mut want: Vec<u32> = (0..w.len() as u32).collect();
            want.sort_by(|&a, &b| w[b as usize].total_cmp(&w[a as usize]));
            want.truncate(n);
            let got = SelectConfig::TopN { n, ties: TieBreak::FirstOccurrence }.select(&f, &w);
            proptest::prop_assert_eq!(got, want);
        }
    }
}
