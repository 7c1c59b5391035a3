//! The [`Fingerprint`] type: a 64- or 128-bit SimHash value.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::{Error, Result};

/// The version of the fingerprint format: the meaning of every field of
/// [`PipelineConfig`](crate::PipelineConfig) and of every built-in stage.
/// It changes whenever the same configuration would give a different
/// fingerprint; see CHANGELOG.md. It lives beside [`Fingerprint`] (below
/// the configuration) so that index files, which hold fingerprints but know
/// nothing of pipelines, can check it too.
pub const FORMAT_VERSION: u32 = 1;

/// The width of a fingerprint in bits: 64 (the default) or 128.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "u32", into = "u32")]
pub enum Bits {
    /// 64-bit fingerprints (16 hex digits).
    #[default]
    B64,
    /// 128-bit fingerprints (32 hex digits).
    B128,
}

impl Bits {
    /// The number of bits, 64 or 128.
    pub const fn get(self) -> u32 {
        match self {
            Bits::B64 => 64,
            Bits::B128 => 128,
        }
    }

    /// The mask of the valid bits of a value of this width.
    pub const fn mask(self) -> u128 {
        match self {
            Bits::B64 => u64::MAX as u128,
            Bits::B128 => u128::MAX,
        }
    }
}

impl TryFrom<u32> for Bits {
    type Error = String;
    fn try_from(n: u32) -> std::result::Result<Bits, String> {
        match n {
            64 => Ok(Bits::B64),
            128 => Ok(Bits::B128),
            _ => Err(format!("bits must be 64 or 128, not {n}")),
        }
    }
}

impl From<Bits> for u32 {
    fn from(b: Bits) -> u32 {
        b.get()
    }
}

impl fmt::Display for Bits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.get())
    }
}

/// A SimHash fingerprint of 64 or 128 bits.
///
/// Two documents are near duplicates when the [Hamming
/// distance](Fingerprint::distance) between their fingerprints is small
/// (3 of 64 bits, classically). Fingerprints are comparable only when the
/// same pipeline made them: a fingerprint does not know its pipeline, so
/// keep the [`PipelineConfig`](crate::PipelineConfig) beside stored ones.
///
/// The text form is lower-case hex, zero-padded to 16 or 32 digits; that is
/// also how serde writes it, because JavaScript cannot hold a `u64`.
///
/// # Example
///
/// ```
/// use neardup::Fingerprint;
///
/// let a: Fingerprint = "00000000000000ff".parse()?;
/// let b = Fingerprint::from_u64(0x0f);
/// assert_eq!(a.distance(b), 4);
/// assert_eq!(a.similarity(b), 1.0 - 4.0 / 64.0);
/// assert_eq!(b.to_string(), "000000000000000f");
/// # Ok::<(), neardup::Error>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Fingerprint {
    value: u128,
    bits: Bits,
}

impl Fingerprint {
    /// A 64-bit fingerprint with this value.
    pub const fn from_u64(value: u64) -> Fingerprint {
        Fingerprint { value: value as u128, bits: Bits::B64 }
    }

    /// A 128-bit fingerprint with this value.
    pub const fn from_u128(value: u128) -> Fingerprint {
        Fingerprint { value, bits: Bits::B128 }
    }

    /// A fingerprint of the given width; bits above the width are dropped.
    pub const fn new(value: u128, bits: Bits) -> Fingerprint {
        Fingerprint { value: value & bits.mask(), bits }
    }

    /// The width of this fingerprint.
    pub const fn bits(self) -> Bits {
        self.bits
    }

    /// The value, zero-extended to 128 bits.
    pub const fn value(self) -> u128 {
        self.value
    }

    /// The value of a 64-bit fingerprint, or `None` for a 128-bit one.
    pub const fn as_u64(self) -> Option<u64> {
        match self.bits {
            Bits::B64 => Some(self.value as u64),
            Bits::B128 => None,
        }
    }

    /// The Hamming distance: how many bits differ.
    ///
    /// # Panics
    ///
    /// Panics if the widths differ; [`try_distance`](Self::try_distance)
    /// returns an error instead.
    pub fn distance(self, other: Fingerprint) -> u32 {
        match self.try_distance(other) {
            Ok(d) => d,
            Err(e) => panic!("{e}"),
        }
    }

    /// The Hamming distance, or an error if the widths differ.
    ///
    /// # Errors
    ///
    /// [`Error::WidthMismatch`] when one fingerprint has 64 bits and the
    /// other 128.
    pub fn try_distance(self, other: Fingerprint) -> Result<u32> {
        if self.bits != other.bits {
            return Err(Error::WidthMismatch { left: self.bits.get(), right: other.bits.get() });
        }
        Ok((self.value ^ other.value).count_ones())
    }

    /// Whether the two fingerprints differ in at most `k` bits.
    ///
    /// # Panics
    ///
    /// Panics if the widths differ.
    pub fn within(self, other: Fingerprint, k: u32) -> bool {
        self.distance(other) <= k
    }

    /// Similarity `1 − d/f` in `[0, 1]`, where `d` is the distance and `f` the width.
    ///
    /// # Panics
    ///
    /// Panics if the widths differ.
    pub fn similarity(self, other: Fingerprint) -> f64 {
        1.0 - self.distance(other) as f64 / self.bits.get() as f64
    }

    /// The cosine similarity of the two weighted feature vectors that
    /// SimHash estimates: `cos(π · d / f)` (Charikar 2002).
    ///
    /// # Panics
    ///
    /// Panics if the widths differ.
    pub fn estimated_cosine(self, other: Fingerprint) -> f64 {
        (std::f64::consts::PI * self.distance(other) as f64 / self.bits.get() as f64).cos()
    }

    /// Bit `i` (0 = least significant).
    pub fn bit(self, i: u32) -> bool {
        i < self.bits.get() && (self.value >> i) & 1 == 1
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.bits {
            Bits::B64 => write!(f, "{:016x}", self.value as u64),
            Bits::B128 => write!(f, "{:032x}", self.value),
        }
    }
}

impl fmt::Debug for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Fingerprint({self})")
    }
}

impl fmt::LowerHex for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl FromStr for Fingerprint {
    type Err = Error;

    /// Parses 16 hex digits as a 64-bit fingerprint and 32 as a 128-bit
    /// one, with an optional `0x` prefix, in either case.
    fn from_str(s: &str) -> Result<Fingerprint> {
        let err = |reason| Error::ParseFingerprint { input: s.chars().take(80).collect(), reason };
        let t = s.trim();
        let t = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")).unwrap_or(t);
        if !t.bytes().all(|b| b.is_ascii_hexdigit()) || t.is_empty() {
            return Err(err("expected hexadecimal digits only"));
        }
        let bits = match t.len() {
            16 => Bits::B64,
            32 => Bits::B128,
            _ => return Err(err("expected 16 hex digits (64 bits) or 32 (128 bits)")),
        };
        let value = u128::from_str_radix(t, 16).map_err(|_| err("not a hexadecimal number"))?;
        Ok(Fingerprint { value, bits })
    }
}

impl Serialize for Fingerprint {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Fingerprint {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Fingerprint, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trip_both_widths() {
        let a = Fingerprint::from_u64(0xdead_beef);
        assert_eq!(a.to_string(), "00000000deadbeef");
        assert_eq!("00000000DEADBEEF".parse::<Fingerprint>().unwrap(), a);
        assert_eq!("0x00000000deadbeef".parse::<Fingerprint>().unwrap(), a);
        let b = Fingerprint::from_u128(u128::MAX - 1);
        assert_eq!(b.to_string().len(), 32);
        assert_eq!(b.to_string().parse::<Fingerprint>().unwrap(), b);
    }

    #[test]
    fn parse_errors_say_why() {
        for bad in ["", "xyz", "123", "00000000deadbeeg", "+0000000deadbeef"] {
            let e = bad.parse::<Fingerprint>().unwrap_err().to_string();
            assert!(e.contains("invalid fingerprint"), "{e}");
        }
    }

    #[test]
    fn serde_is_a_hex_string() {
        let a = Fingerprint::from_u64(1);
        assert_eq!(serde_json::to_string(&a).unwrap(), "\"0000000000000001\"");
        assert_eq!(serde_json::from_str::<Fingerprint>("\"0000000000000001\"").unwrap(), a);
        assert!(serde_json::from_str::<Fingerprint>("1").is_err());
    }

    #[test]
    fn measures() {
        let a = Fingerprint::from_u64(0);
        let b = Fingerprint::from_u64(u64::MAX);
        assert_eq!(a.distance(b), 64);
        assert_eq!(a.similarity(b), 0.0);
        assert!((a.estimated_cosine(b) + 1.0).abs() < 1e-12);
        assert!((a.estimated_cosine(a) - 1.0).abs() < 1e-12);
        assert!(a.try_distance(Fingerprint::from_u128(0)).is_err());
    }
}
