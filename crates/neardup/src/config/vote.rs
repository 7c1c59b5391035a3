//! How the SimHash vote's lane sums become bits ([`VoteConfig`]): which
//! way a tied lane falls and in which order the bits are written. The
//! defaults are the classic rule (a lane above zero gives 1, bit `j` is
//! lane `j`); other SimHash implementations differ in both, and a
//! compatibility preset must say so to be identical (ferd/simhash: a lane
//! at zero gives 1 and the bits come out reversed).

use serde::{Deserialize, Serialize};

use crate::fingerprint::Bits;

/// The vote's rule for turning lane sums into bits. By default, ties give
/// 0 and bit `j` is lane `j`; configurations leave the default out.
///
/// ```toml
/// vote = { ties = "one", order = "reversed" }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VoteConfig {
    /// The bit of a lane whose sum is exactly zero. By default, `zero`.
    #[serde(default)]
    pub ties: Ties,
    /// Which lane each bit of the fingerprint takes. By default, `natural`.
    #[serde(default)]
    pub order: BitOrder,
}

/// The bit of a lane whose sum is exactly zero (see [`VoteConfig`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Ties {
    /// 0: a bit is 1 only when its lane is above zero (the classic rule;
    /// the PyPI `simhash` package, yanyiwu/simhash).
    #[default]
    Zero,
    /// 1: a bit is 1 when its lane is zero or above (ferd/simhash; a text
    /// with no features then gives all ones).
    One,
}

/// Which lane each fingerprint bit takes (see [`VoteConfig`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BitOrder {
    /// Bit `j` (least significant first) is lane `j`, which sums bit `j` of
    /// the feature hashes.
    #[default]
    Natural,
    /// Bit `j` is lane `bits − 1 − j`: the fingerprint's bits reversed
    /// (ferd/simhash lists its lanes from the last). Distances do not
    /// change; the written value does.
    Reversed,
}

impl VoteConfig {
    /// The rule of ferd/simhash: ties give 1, bits reversed.
    pub const FERD: VoteConfig = VoteConfig { ties: Ties::One, order: BitOrder::Reversed };

    /// Whether this is the classic rule (configurations leave it out).
    pub fn is_default(&self) -> bool {
        *self == VoteConfig::default()
    }

    /// The fingerprint value from the lanes above zero and the lanes at
    /// zero (one bit each, lane `j` at bit `j`, `bits` wide).
    pub fn bits(&self, above: u128, zero: u128, bits: Bits) -> u128 {
        let v = match self.ties {
            Ties::Zero => above,
            Ties::One => above | zero,
        };
        match (self.order, bits) {
            (BitOrder::Natural, _) => v,
            (BitOrder::Reversed, Bits::B64) => u128::from((v as u64).reverse_bits()),
            (BitOrder::Reversed, Bits::B128) => v.reverse_bits(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_is_the_classic_rule_and_ferd_differs_in_both() {
        let d = VoteConfig::default();
        assert!(d.is_default());
        assert_eq!(d.bits(0b0101, 0b0010, Bits::B64), 0b0101);
        let ferd = VoteConfig::FERD;
        assert!(!ferd.is_default());
        assert_eq!(ferd.bits(0b0101, 0b0010, Bits::B64), 0b0111u128 << 61);
        assert_eq!(ferd.bits(1, 0, Bits::B128), 1 << 127);
        let ties = VoteConfig { ties: Ties::One, order: BitOrder::Natural };
        assert_eq!(ties.bits(0b0101, 0b0010, Bits::B64), 0b0111);
    }

    #[test]
    fn reads_from_toml_with_defaults_for_missing_keys() {
        #[derive(Deserialize)]
        struct T {
            vote: VoteConfig,
        }
        let t: T = toml::from_str("vote = { ties = \"one\" }").unwrap();
        assert_eq!(t.vote, VoteConfig { ties: Ties::One, order: BitOrder::Natural });
        let t: T = toml::from_str("vote = { ties = \"one\", order = \"reversed\" }").unwrap();
        assert_eq!(t.vote, VoteConfig::FERD);
        assert!(toml::from_str::<T>("vote = { ties = \"half\" }").is_err());
    }
}
