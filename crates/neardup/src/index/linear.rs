//! The brute-force reference index.

use super::{check_width, HammingIndex, Id, Match};
use crate::error::Result;
use crate::fingerprint::{Bits, Fingerprint};

/// Compares the query with every entry. Exact by construction: the oracle
/// every other index is tested against, and the right choice below a few
/// thousand entries.
#[derive(Clone, Debug, Default)]
pub struct LinearScan {
    bits: Bits,
    entries: Vec<(Id, u128)>,
}

impl LinearScan {
    /// An empty index of `bits`-wide fingerprints.
    pub fn new(bits: Bits) -> LinearScan {
        LinearScan { bits, entries: Vec::new() }
    }

    /// The entries, in insertion order.
    pub fn entries(&self) -> impl Iterator<Item = (Id, Fingerprint)> + '_ {
        self.entries.iter().map(|&(id, v)| (id, Fingerprint::new(v, self.bits)))
    }
}

impl HammingIndex for LinearScan {
    fn bits(&self) -> Bits {
        self.bits
    }

    fn len(&self) -> usize {
        self.entries.len()
    }

    fn insert(&mut self, id: Id, fp: Fingerprint) -> Result<()> {
        check_width(self.bits, fp)?;
        self.entries.push((id, fp.value()));
        Ok(())
    }

    fn remove(&mut self, id: Id) -> usize {
        let before = self.entries.len();
        self.entries.retain(|e| e.0 != id);
        before - self.entries.len()
    }

    fn query(&self, fp: Fingerprint, k: u32) -> Result<Vec<Match>> {
        check_width(self.bits, fp)?;
        let q = fp.value();
        let mut out: Vec<Match> = self
            .entries
            .iter()
            .filter_map(|&(id, v)| {
                let distance = (v ^ q).count_ones();
                (distance <= k).then_some(Match { distance, id })
            })
            .collect();
        out.sort_unstable();
        Ok(out)
    }
}
