//! [`Pending`]: the documents a group commit is about to store, searchable
//! by the group's later documents before anything is committed — the
//! core's [`TableIndex`] over the group, entries named by their position.

use neardup::index::{HammingIndex, TableIndex};
use neardup::{Bits, Fingerprint};

/// The group's fingerprints in a [`TableIndex`] whose ids are positions.
/// A group is small (its documents wait for one disk commit), so the
/// index's buffer, which queries scan, holds most of it; a query beyond the
/// tables' radius is answered exactly by reading them all.
pub(crate) struct Pending {
    index: TableIndex,
    next: u64,
}

/// The radius the tables serve: a group rarely outgrows the buffer, so a
/// small k with the fewest tables (k + 1 blocks, given rather than chosen:
/// the chooser's cost model takes about 30 ms, a fixed layout 2 µs) keeps
/// a group's index cheap to make.
const TABLE_K: u32 = 3;

impl Pending {
    /// Empty, for queries within at most `max_k` of `bits`-bit fingerprints.
    pub(crate) fn new(bits: Bits, max_k: u32) -> Pending {
        let k = max_k.min(TABLE_K);
        let index = TableIndex::builder()
            .bits(bits)
            .k(k)
            .blocks(k + 1)
            .build()
            .expect("a layout for k of 3 or less always exists");
        Pending { index, next: 0 }
    }

    /// Adds a fingerprint; it gets the next position (0, 1, …).
    ///
    /// # Panics
    ///
    /// If its width is not the group's (the engine checks every sketch's
    /// width before it joins a group).
    pub(crate) fn push(&mut self, fp: Fingerprint) {
        self.index.insert(self.next, fp).expect("a fingerprint of the group's width");
        self.next += 1;
    }

    /// (position, distance) of every added fingerprint within `k` of `fp`,
    /// in position order.
    pub(crate) fn query(&self, fp: Fingerprint, k: u32) -> Vec<(usize, u32)> {
        let mut found: Vec<(usize, u32)> = match self.index.query(fp, k) {
            Ok(m) => m.into_iter().map(|m| (m.id as usize, m.distance)).collect(),
            // Only a fingerprint of another width fails; none is pushed.
            Err(_) => Vec::new(),
        };
        found.sort_unstable();
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn wide_fingerprints_and_k_zero() {
        for (bits, k) in [(128, 0), (128, 5), (64, 0), (64, 20), (128, 40)] {
            let width = Bits::try_from(bits).unwrap();
            let fp = |v: u128| Fingerprint::new(v, width);
            let mut p = Pending::new(width, k);
            let a = fp(u128::MAX - 3);
            p.push(a);
            p.push(fp(7));
            assert_eq!(p.query(a, 0), vec![(0, 0)], "{bits} {k}");
            assert_eq!(p.query(fp(u128::MAX), k.min(2)).len(), usize::from(k >= 2));
        }
    }

    proptest! {
        /// The probe finds exactly what a scan finds, at every k it serves,
        /// for fingerprints clustered so that near ones exist.
        #[test]
        fn probe_equals_scan(
            base in any::<u64>(),
            flips in proptest::collection::vec(proptest::collection::vec(0u32..64, 0..8), 1..60),
            max_k in 0u32..20,
            query_flips in proptest::collection::vec(0u32..64, 0..6),
        ) {
            let fps: Vec<Fingerprint> = flips
                .iter()
                .map(|f| Fingerprint::from_u64(f.iter().fold(base, |v, b| v ^ (1 << b))))
                .collect();
            let mut p = Pending::new(Bits::B64, max_k);
            for &fp in &fps {
                p.push(fp);
            }
            let q = Fingerprint::from_u64(query_flips.iter().fold(base, |v, b| v ^ (1 << b)));
            for k in 0..=max_k {
                let want: Vec<(usize, u32)> = fps
                    .iter()
                    .enumerate()
                    .map(|(i, f)| (i, (f.value() ^ q.value()).count_ones()))
                    .filter(|&(_, d)| d <= k)
                    .collect();
                prop_assert_eq!(p.query(q, k), want);
            }
        }
    }
}
