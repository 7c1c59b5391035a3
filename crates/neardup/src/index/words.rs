//! [`Words`]: a column of fingerprints in their machine width.

use crate::fingerprint::{Bits, Fingerprint};

/// Fingerprints of one width, as `u64` or `u128` values: the form the
/// batch jobs ([`all_pairs`](super::pairs::all_pairs), [`crate::dedup`])
/// work on, at 8 or 16 bytes a fingerprint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Words {
    /// 64-bit fingerprints.
    B64(Vec<u64>),
    /// 128-bit fingerprints.
    B128(Vec<u128>),
}

impl Words {
    /// No fingerprints yet, of width `bits`.
    pub fn new(bits: Bits) -> Words {
        Words::with_capacity(bits, 0)
    }

    /// No fingerprints yet, of width `bits`, with room for `n`.
    pub fn with_capacity(bits: Bits, n: usize) -> Words {
        match bits {
            Bits::B64 => Words::B64(Vec::with_capacity(n)),
            Bits::B128 => Words::B128(Vec::with_capacity(n)),
        }
    }

    /// Fingerprint values (of width `bits`) as words.
    pub fn from_values(bits: Bits, values: impl IntoIterator<Item = u128>) -> Words {
        match bits {
            Bits::B64 => Words::B64(values.into_iter().map(|v| v as u64).collect()),
            Bits::B128 => Words::B128(values.into_iter().collect()),
        }
    }

    /// Appends a fingerprint of this width.
    ///
    /// # Panics
    ///
    /// If the fingerprint has another width.
    pub fn push(&mut self, fp: Fingerprint) {
        assert_eq!(fp.bits(), self.bits(), "a fingerprint of another width");
        match self {
            Words::B64(v) => v.push(fp.value() as u64),
            Words::B128(v) => v.push(fp.value()),
        }
    }

    /// The fingerprints at `rows`, in that order.
    pub fn subset(&self, rows: &[u32]) -> Words {
        match self {
            Words::B64(v) => Words::B64(rows.iter().map(|&i| v[i as usize]).collect()),
            Words::B128(v) => Words::B128(rows.iter().map(|&i| v[i as usize]).collect()),
        }
    }

    /// How many fingerprints.
    pub fn len(&self) -> usize {
        match self {
            Words::B64(v) => v.len(),
            Words::B128(v) => v.len(),
        }
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Their width.
    pub fn bits(&self) -> Bits {
        match self {
            Words::B64(_) => Bits::B64,
            Words::B128(_) => Bits::B128,
        }
    }

    /// The fingerprint at `i`.
    pub fn get(&self, i: usize) -> Fingerprint {
        match self {
            Words::B64(v) => Fingerprint::from_u64(v[i]),
            Words::B128(v) => Fingerprint::from_u128(v[i]),
        }
    }

    /// Every pair within `k` bits (see [`all_pairs`](super::pairs::all_pairs)).
    ///
    /// # Errors
    ///
    /// As [`all_pairs`](super::pairs::all_pairs).
    pub fn all_pairs(
        &self,
        k: u32,
        opts: super::pairs::PairsOptions,
    ) -> crate::Result<super::pairs::AllPairs> {
        match self {
            Words::B64(v) => super::pairs::all_pairs(v, 64, k, opts),
            Words::B128(v) => super::pairs::all_pairs(v, 128, k, opts),
        }
    }

    /// The links of [`all_pairs`](Self::all_pairs) for a union-find,
    /// without holding the pairs, of the pairs `rule` accepts when given
    /// (see [`linked`](super::pairs::linked)).
    ///
    /// # Errors
    ///
    /// As [`all_pairs`](super::pairs::all_pairs).
    pub fn linked(
        &self,
        k: u32,
        opts: super::pairs::PairsOptions,
        rule: Option<&super::pairs::LinkRule<'_>>,
        link: &mut dyn FnMut(u32, u32),
    ) -> crate::Result<Option<super::layout::LayoutSpec>> {
        match self {
            Words::B64(v) => super::pairs::linked(v, 64, k, opts, rule, link),
            Words::B128(v) => super::pairs::linked(v, 128, k, opts, rule, link),
        }
    }
}
