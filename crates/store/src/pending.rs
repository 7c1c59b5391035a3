//! [`Pending`]: the documents a group commit is about to store, searchable
//! by the group's later documents before anything is committed.

use std::collections::HashMap;

use neardup::Fingerprint;

/// Fingerprints cut into `k + 1` blocks, one hash map per block: two
/// fingerprints within `k` bits agree exactly on at least one block
/// (pigeonhole), so a query looks up its own blocks and checks the
/// candidates. Blocks narrower than 4 bits would match nearly everything;
/// then it scans.
pub(crate) struct Pending {
    fps: Vec<Fingerprint>,
    /// (shift, mask) of each block, empty when scanning.
    blocks: Vec<(u32, u128)>,
    maps: Vec<HashMap<u128, Vec<u32>>>,
}

impl Pending {
    /// Empty, for queries within at most `max_k` of `bits`-bit fingerprints.
    pub(crate) fn new(bits: u32, max_k: u32) -> Pending {
        let n = max_k + 1;
        let blocks: Vec<(u32, u128)> = if bits / n >= 4 {
            (0..n)
                .map(|i| {
                    let (start, end) = (i * bits / n, (i + 1) * bits / n);
                    (start, u128::MAX >> (128 - (end - start)))
                })
                .collect()
        } else {
            Vec::new()
        };
        let maps = blocks.iter().map(|_| HashMap::new()).collect();
        Pending { fps: Vec::new(), blocks, maps }
    }

    /// Adds a fingerprint; it gets the next position (0, 1, …).
    pub(crate) fn push(&mut self, fp: Fingerprint) {
        let pos = self.fps.len() as u32;
        for (&(shift, mask), map) in self.blocks.iter().zip(&mut self.maps) {
            map.entry((fp.value() >> shift) & mask).or_insert_with(Vec::new).push(pos);
        }
        self.fps.push(fp);
    }

    /// (position, distance) of every added fingerprint within `k` of `fp`
    /// (`k` at most the `max_k` it was made for), in position order.
    pub(crate) fn query(&self, fp: Fingerprint, k: u32) -> Vec<(usize, u32)> {
        let within = |i: usize| {
            let d = (self.fps[i].value() ^ fp.value()).count_ones();
            (d <= k).then_some((i, d))
        };
        if self.blocks.is_empty() {
            return (0..self.fps.len()).filter_map(within).collect();
        }
        let mut found: Vec<usize> = Vec::new();
        for (&(shift, mask), map) in self.blocks.iter().zip(&self.maps) {
            if let Some(v) = map.get(&((fp.value() >> shift) & mask)) {
                found.extend(v.iter().map(|&p| p as usize));
            }
        }
        found.sort_unstable();
        found.dedup();
        found.into_iter().filter_map(within).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn wide_fingerprints_and_k_zero() {
        for (bits, k) in [(128, 0), (128, 5), (64, 0), (128, 40)] {
            let mut p = Pending::new(bits, k);
            let a = Fingerprint::from_u128(u128::MAX - 3);
            p.push(a);
            p.push(Fingerprint::from_u128(7));
            assert_eq!(p.query(a, 0), vec![(0, 0)], "{bits} {k}");
            assert_eq!(p.query(Fingerprint::from_u128(u128::MAX), k.min(2)).len(), usize::from(k >= 2));
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
            let mut p = Pending::new(64, max_k);
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
