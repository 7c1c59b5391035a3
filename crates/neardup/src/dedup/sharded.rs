//! [`ShardedDedup`]: SimHash's dedup plan cut for a shuffle — the twin of
//! [`LshDedup::band_links`](super::LshDedup::band_links). A distributed job
//! (the Spark job in `bindings/python`) only moves rows; which rows a
//! fingerprint sends, how a shuffled group is verified and which pairs the
//! rule accepts are decided here, once.
//!
//! Each pass of the radius's [`Plan`] (pass 0 at the smallest k over every
//! distinct fingerprint, one more per larger k over the fingerprints short
//! enough for it) is a [`ShardedPairs`] join: a fingerprint sends one
//! [`KeyRows`] row per table of each pass it takes part in; rows with equal
//! `(pass, table, key)` meet in one group; [`ShardedDedup::links`] finds the
//! runs of a partition, verifies each with the pass's layout (long runs
//! split as on one machine) and keeps the pairs the plan accepts. The union
//! of the links over all partitions is exactly what [`Dedup::batch`](super::Dedup::batch)
//! links among the same distinct fingerprints.
//!
//! ```
//! use neardup::dedup::{KeyRows, ShardedDedup};
//! use neardup::Radius;
//!
//! let plan = ShardedDedup::new(&Radius::fixed(3), 3, None)?;
//! let (fingerprints, features) = ([0b1011u64, 0b1001, 0xffff_0000_ffff_0000], [50, 50, 50]);
//! let mut rows = KeyRows::default();
//! plan.keys(&fingerprints, &features, &mut rows);
//! // One machine stands for the shuffle here: every row in one partition.
//! assert_eq!(plan.links(&rows)?, [(0b1001, 0b1011, 1)]); // (smaller, larger, distance)
//! # Ok::<(), neardup::Error>(())
//! ```

use crate::error::{Error, Result};
use crate::fingerprint::Bits;
use crate::index::sharded::{ShardedPairs, MAX_GROUP_ROWS};
use crate::index::{LayoutSpec, Word};
use crate::radius::{Pass, Plan, Radius};

/// The rows a batch of distinct fingerprints sends into the shuffle, as
/// columns: one row per pass the fingerprint takes part in and table of
/// that pass.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeyRows<W = u64> {
    /// The pass of the plan.
    pub pass: Vec<u32>,
    /// The table of the pass's layout.
    pub table: Vec<u32>,
    /// The table's key of the fingerprint: rows with equal `(pass, table,
    /// key)` must meet in one partition.
    pub key: Vec<u64>,
    /// The fingerprint permuted for the table (a `u64` or a `u128`, the
    /// plan's width).
    pub permuted: Vec<W>,
    /// The fewest features of a document with this fingerprint.
    pub features: Vec<u32>,
}

impl<W: Word> KeyRows<W> {
    /// How many rows.
    pub fn len(&self) -> usize {
        self.pass.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.pass.is_empty()
    }

    fn push(&mut self, pass: usize, table: usize, key: u64, permuted: W, features: u32) {
        self.pass.push(pass as u32);
        self.table.push(table as u32);
        self.key.push(key);
        self.permuted.push(permuted);
        self.features.push(features);
    }

    fn check_lengths(&self) -> Result<()> {
        let n = self.pass.len();
        if [self.table.len(), self.key.len(), self.permuted.len(), self.features.len()]
            .iter()
            .any(|&l| l != n)
        {
            return Err(Error::Config("key rows: the columns differ in length".into()));
        }
        Ok(())
    }
}

/// The SimHash dedup plan of a radius, each pass cut into shuffle groups.
#[derive(Clone, Debug)]
pub struct ShardedDedup {
    plan: Plan,
    passes: Vec<(Pass, ShardedPairs)>,
    bits: Bits,
}

impl ShardedDedup {
    /// The plan of `radius` for `n` distinct 64-bit fingerprints. `blocks`
    /// (one per pass) fixes the layouts — how a plan is shipped to the
    /// machines that run it ([`blocks`](Self::blocks)) — else each pass
    /// takes the fewest tables whose key groups average at most 2^23 rows
    /// ([`ShardedPairs::for_shuffle`]).
    ///
    /// # Errors
    ///
    /// A radius that grows with document length (one row per distinct
    /// fingerprint, with its shortest document's features, stands for all
    /// its documents only when the radius shrinks as documents grow, as
    /// every preset's does), a k of 64 or more, a block count per pass that
    /// does not match the plan, or an impossible layout.
    pub fn new(radius: &Radius, n: usize, blocks: Option<&[u32]>) -> Result<ShardedDedup> {
        ShardedDedup::with_bits(radius, n, blocks, Bits::B64)
    }

    /// [`new`](Self::new) for fingerprints of `bits` (`u64` words for
    /// 64, `u128` for 128).
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new), with k below `bits`.
    pub fn with_bits(radius: &Radius, n: usize, blocks: Option<&[u32]>, bits: Bits) -> Result<ShardedDedup> {
        let width = bits.get();
        if !radius.shrinks_with_length() {
            return Err(Error::Config(
                "a sharded dedup needs a radius that does not grow with document length".into(),
            ));
        }
        let plan = Plan::new(radius);
        if let Some(b) = blocks {
            if b.len() != plan.passes().len() {
                return Err(Error::Config(format!(
                    "{} passes but {} block counts",
                    plan.passes().len(),
                    b.len()
                )));
            }
        }
        let mut passes = Vec::with_capacity(plan.passes().len());
        for (i, &pass) in plan.passes().iter().enumerate() {
            let k = pass.k;
            if k >= width {
                return Err(Error::Config(format!("k = {k} must be below the {width} bits")));
            }
            let sharded = match blocks {
                Some(b) => ShardedPairs::new(LayoutSpec { bits: width, k, blocks: b[i] })?,
                None => ShardedPairs::for_shuffle(width, k, n, MAX_GROUP_ROWS)?,
            };
            passes.push((pass, sharded));
        }
        Ok(ShardedDedup { plan, passes, bits })
    }

    /// The fingerprints' width.
    pub fn bits(&self) -> Bits {
        self.bits
    }

    /// The 64-bit name of a fingerprint in a job's graph: a 64-bit
    /// fingerprint itself; a 128-bit one's XXH3-64 (of its little-endian
    /// bytes), since near fingerprints often share either half. Two
    /// distinct fingerprints with one name (about n²/2^65) are the job's
    /// to refuse.
    pub fn vertex(fingerprint: u128, bits: Bits) -> u64 {
        match bits {
            Bits::B64 => fingerprint as u64,
            Bits::B128 => xxhash_rust::xxh3::xxh3_64(&fingerprint.to_le_bytes()),
        }
    }

    /// An error unless words of `W` are this plan's width.
    fn check_width<W: Word>(&self) -> Result<()> {
        if W::BITS != self.bits.get() {
            return Err(Error::Config(format!(
                "{}-bit words for a plan of {}-bit fingerprints",
                W::BITS,
                self.bits.get()
            )));
        }
        Ok(())
    }

    /// The dedup plan.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The block count of each pass's layout: with the radius, what
    /// [`new`](Self::new) needs to rebuild this plan elsewhere.
    pub fn blocks(&self) -> Vec<u32> {
        self.passes.iter().map(|(_, s)| s.spec().blocks).collect()
    }

    /// `(pass, layout, tables)` of each pass, pass 0 first.
    pub fn passes(&self) -> impl Iterator<Item = (Pass, LayoutSpec, usize)> + '_ {
        self.passes.iter().map(|(p, s)| (*p, s.spec(), s.tables()))
    }

    /// Appends to `out` the rows of distinct `fingerprints` whose shortest
    /// documents have `features` features: for each, one row per table of
    /// each pass it takes part in.
    ///
    /// # Panics
    ///
    /// If the two slices differ in length, or the words are not the
    /// plan's width.
    pub fn keys<W: Word>(&self, fingerprints: &[W], features: &[u32], out: &mut KeyRows<W>) {
        assert_eq!(fingerprints.len(), features.len(), "one feature count per fingerprint");
        assert_eq!(W::BITS, self.bits.get(), "words of the plan's width");
        for (&f, &n) in fingerprints.iter().zip(features) {
            for (pi, (pass, sharded)) in self.passes.iter().enumerate() {
                if !pass.includes(n as usize) {
                    continue;
                }
                for t in 0..sharded.tables() {
                    let w = sharded.permute(t, f);
                    out.push(pi, t, sharded.key(t, w), w, n);
                }
            }
        }
    }

    /// The near-duplicate pairs among rows that a shuffle put in one
    /// partition, in any order: runs of equal `(pass, table, key)` are
    /// verified together (repeats of a fingerprint keep the fewest
    /// features), and each pair the plan accepts is returned once over all
    /// partitions as `(a, b, distance)` with `a < b`.
    ///
    /// # Errors
    ///
    /// Columns of different lengths, a row whose pass or table is not
    /// in this plan (named by its position), or words not of the plan's
    /// width.
    pub fn links<W: Word>(&self, rows: &KeyRows<W>) -> Result<Vec<(W, W, u32)>> {
        self.check_width::<W>()?;
        rows.check_lengths()?;
        for i in 0..rows.len() {
            let (pass, table) = (rows.pass[i], rows.table[i]);
            let Some((_, sharded)) = self.passes.get(pass as usize) else {
                return Err(Error::Config(format!("row {i}: pass {pass} is not in this plan")));
            };
            if table as usize >= sharded.tables() {
                return Err(Error::Config(format!("row {i}: table {table} is not in pass {pass}")));
            }
        }
        let run_of = |i: usize| (rows.pass[i], rows.table[i], rows.key[i]);
        let mut order: Vec<usize> = (0..rows.len()).collect();
        order.sort_unstable_by_key(|&i| (run_of(i), rows.permuted[i]));
        let mut out = Vec::new();
        for run in order.chunk_by(|&x, &y| run_of(x) == run_of(y)) {
            self.run_links(rows, run, &mut out);
        }
        Ok(out)
    }

    /// The accepted pairs of one run (rows sorted by their permuted word).
    fn run_links<W: Word>(&self, rows: &KeyRows<W>, run: &[usize], out: &mut Vec<(W, W, u32)>) {
        let head = run[0];
        let pass_no = rows.pass[head] as usize;
        let t = rows.table[head] as usize;
        let sharded = &self.passes[pass_no].1;
        // (permuted, features), sorted; a repeated word keeps its fewest features.
        let mut words: Vec<(W, u32)> = run.iter().map(|&i| (rows.permuted[i], rows.features[i])).collect();
        words.sort_unstable();
        words.dedup_by_key(|r| r.0);
        let features = |w: W| {
            let pw = sharded.permute(t, w);
            words[words.partition_point(|r| r.0 < pw)].1 as usize
        };
        for (a, b, d) in sharded.group_pairs(t, words.iter().map(|r| r.0).collect()) {
            // Pass 0 takes every pair it finds (no lookups needed).
            if pass_no == 0 || self.plan.accepts(pass_no, d, features(a), features(b)) {
                out.push((a, b, d));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dedup::{Dedup, Records};
    use crate::fingerprint::{Bits, Fingerprint};
    use neardup_testkit::Rng;

    /// Distinct fingerprints with clusters planted at small distances, and
    /// feature counts on both sides of the radius's steps.
    fn corpus(n: usize, seed: u64) -> (Vec<u64>, Vec<u32>) {
        let mut rng = Rng(seed);
        let mut fps = Vec::new();
        while fps.len() < n {
            let base = rng.next();
            fps.push(base);
            for _ in 0..rng.below(4) {
                let near = rng.near(base, 10);
                fps.push(near);
            }
        }
        fps.truncate(n);
        fps.sort_unstable();
        fps.dedup();
        let features = fps.iter().map(|_| [40, 300, 700, 5000][rng.below(4) as usize]).collect();
        (fps, features)
    }

    /// The rows cut into `partitions` by `(pass, table, key)`, as a
    /// shuffle would cut them.
    fn cut<W: Word>(rows: &KeyRows<W>, partitions: usize) -> Vec<KeyRows<W>> {
        let mut parts: Vec<KeyRows<W>> = vec![KeyRows::default(); partitions];
        for i in 0..rows.len() {
            let p =
                (rows.key[i] ^ u64::from(rows.table[i]) ^ u64::from(rows.pass[i]) << 7) as usize % partitions;
            let (pass, table) = (rows.pass[i] as usize, rows.table[i] as usize);
            parts[p].push(pass, table, rows.key[i], rows.permuted[i], rows.features[i]);
        }
        parts
    }

    /// Every accepted pair of a brute-force scan, by the radius's own rule.
    fn brute_force(radius: &Radius, fps: &[u64], features: &[u32]) -> Vec<(u64, u64, u32)> {
        let mut want = Vec::new();
        for i in 0..fps.len() {
            for j in i + 1..fps.len() {
                let d = (fps[i] ^ fps[j]).count_ones();
                if radius.accepts(d, features[i] as usize, features[j] as usize) {
                    want.push((fps[i].min(fps[j]), fps[i].max(fps[j]), d));
                }
            }
        }
        want.sort_unstable();
        want
    }

    /// Split into partitions any way (here: by key, as a shuffle would, and
    /// with a partition count that mixes groups), the links equal a
    /// brute-force scan and the one-machine batch's clusters.
    #[test]
    fn the_links_over_partitions_equal_a_linear_scan() {
        for (radius, blocks) in [
            (Radius::fixed(3), None),
            (Radius::by_length(&[(600, 8)], 4), None),
            (Radius::by_length(&[(100, 12), (600, 8)], 4), Some(&[6u32, 10, 13][..])),
        ] {
            let (fps, features) = corpus(3000, radius.max_k() as u64);
            let plan = ShardedDedup::new(&radius, fps.len(), blocks).unwrap();
            let rebuilt = ShardedDedup::new(&radius, 0, Some(&plan.blocks())).unwrap();
            let mut rows = KeyRows::default();
            plan.keys(&fps, &features, &mut rows);
            for partitions in [1usize, 7] {
                let parts = cut(&rows, partitions);
                let mut got: Vec<(u64, u64, u32)> =
                    parts.iter().flat_map(|p| rebuilt.links(p).unwrap()).collect();
                got.sort_unstable();
                let len = got.len();
                got.dedup();
                assert_eq!(got.len(), len, "{radius}: a pair reported twice");
                assert_eq!(got, brute_force(&radius, &fps, &features), "{radius}, {partitions} partitions");
            }
            // The one-machine batch links the same pairs.
            let mut records = Records::new(Bits::B64);
            for (&f, &n) in fps.iter().zip(&features) {
                records.push(Fingerprint::new(u128::from(f), Bits::B64), n as usize, 1);
            }
            let batch = Dedup::new(&radius).pairs(true).batch(&records).unwrap();
            let mut batch_pairs: Vec<(u64, u64, u32)> = batch
                .pairs
                .iter()
                .map(|p| {
                    let (a, b) = (fps[p.a as usize], fps[p.b as usize]);
                    (a.min(b), a.max(b), p.distance)
                })
                .collect();
            batch_pairs.sort_unstable();
            assert_eq!(batch_pairs, brute_force(&radius, &fps, &features), "{radius}: batch");
        }
    }

    /// 128-bit fingerprints (`ferd`'s width): the links over partitions
    /// equal a brute-force scan, and words of the wrong width are refused.
    #[test]
    fn the_links_of_128_bit_fingerprints_equal_a_linear_scan() {
        let mut rng = Rng(128);
        let mut fps: Vec<u128> = Vec::new();
        while fps.len() < 2000 {
            let base = u128::from(rng.next()) << 64 | u128::from(rng.next());
            fps.push(base);
            for _ in 0..rng.below(4) {
                let mut near = base;
                for _ in 0..rng.below(12) {
                    near ^= 1u128 << rng.below(128);
                }
                fps.push(near);
            }
        }
        fps.sort_unstable();
        fps.dedup();
        let features: Vec<u32> = fps.iter().map(|_| [40, 300, 5000][rng.below(3) as usize]).collect();
        for radius in [Radius::fixed(6), Radius::by_length(&[(600, 10)], 5)] {
            let plan = ShardedDedup::with_bits(&radius, fps.len(), None, Bits::B128).unwrap();
            let rebuilt = ShardedDedup::with_bits(&radius, 0, Some(&plan.blocks()), Bits::B128).unwrap();
            let mut rows = KeyRows::default();
            plan.keys(&fps, &features, &mut rows);
            let parts = cut(&rows, 5);
            let mut got: Vec<(u128, u128, u32)> =
                parts.iter().flat_map(|p| rebuilt.links(p).unwrap()).collect();
            got.sort_unstable();
            let mut want = Vec::new();
            for i in 0..fps.len() {
                for j in i + 1..fps.len() {
                    let d = (fps[i] ^ fps[j]).count_ones();
                    if radius.accepts(d, features[i] as usize, features[j] as usize) {
                        want.push((fps[i], fps[j], d));
                    }
                }
            }
            assert!(want.len() > 100, "{radius}: {} pairs", want.len());
            assert_eq!(got, want, "{radius}");
            let narrow = KeyRows::<u64> {
                pass: vec![0],
                table: vec![0],
                key: vec![0],
                permuted: vec![0],
                features: vec![9],
            };
            assert!(plan
                .links(&narrow)
                .unwrap_err()
                .to_string()
                .contains("64-bit words for a plan of 128-bit"));
        }
    }

    #[test]
    fn bad_plans_and_rows_are_refused_by_name() {
        let grows = Radius::by_length(&[(100, 2)], 5);
        assert!(ShardedDedup::new(&grows, 10, None).unwrap_err().to_string().contains("grow"));
        assert!(ShardedDedup::new(&Radius::fixed(64), 10, None).unwrap_err().to_string().contains("below"));
        let e = ShardedDedup::new(&Radius::fixed(3), 10, Some(&[5, 6])).unwrap_err().to_string();
        assert!(e.contains("1 passes but 2 block counts"), "{e}");
        let plan = ShardedDedup::new(&Radius::fixed(3), 10, None).unwrap();
        let mut rows = KeyRows::default();
        plan.keys(&[1u64, 3], &[10, 10], &mut rows);
        let mut bad = rows.clone();
        bad.pass[1] = 4;
        assert!(plan.links(&bad).unwrap_err().to_string().contains("row 1: pass 4"));
        let mut bad = rows.clone();
        bad.table[0] = 99;
        assert!(plan.links(&bad).unwrap_err().to_string().contains("row 0: table 99"));
        let mut bad = rows;
        bad.key.pop();
        assert!(plan.links(&bad).unwrap_err().to_string().contains("differ in length"));
    }
}
