//! Pigeonhole layouts: how an `f`-bit fingerprint is cut into `m` blocks and
//! which permuted tables are built, and how a layout is chosen.
//!
//! Two fingerprints within distance `k` differ in at most `k` of the `m > k`
//! blocks, so they agree exactly on at least `m - k` blocks. One table per
//! choice of `m - k` blocks, sorted with those blocks leading, therefore
//! finds every such pair among the entries sharing the query's leading
//! (key) bits. More blocks mean longer keys (fewer candidates per probe) but
//! `C(m, k)` tables (more memory and more probes).

use std::fmt;

use serde::{Deserialize, Serialize};

use super::word::Word;
use crate::error::{Error, Result};

/// The largest number of tables a layout may have.
pub const MAX_TABLES: usize = 1024;

/// The shape of an index: fingerprint width, the largest exact radius and the
/// number of blocks. Everything else follows from these three numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LayoutSpec {
    /// Fingerprint width in bits.
    pub bits: u32,
    /// The largest radius the tables answer exactly.
    pub k: u32,
    /// Number of blocks, `m > k`.
    pub blocks: u32,
}

impl LayoutSpec {
    /// Checks `k < blocks <= bits` and that the table count is reasonable.
    pub fn validate(&self) -> Result<()> {
        if self.bits == 0 || self.bits > 128 {
            return Err(Error::Config(format!("layout width must be 1..=128 bits, not {}", self.bits)));
        }
        if self.blocks <= self.k || self.blocks > self.bits {
            return Err(Error::Config(format!(
                "a layout for k = {} needs more than {} blocks and at most {} (the bits); got {}",
                self.k, self.k, self.bits, self.blocks
            )));
        }
        let tables = binomial(self.blocks, self.k);
        if tables > MAX_TABLES as u64 {
            return Err(Error::Config(format!(
                "{} blocks at k = {} would need {tables} tables (at most {MAX_TABLES}); use fewer blocks",
                self.blocks, self.k
            )));
        }
        Ok(())
    }

    /// The number of tables, `C(blocks, k)`.
    pub fn tables(&self) -> usize {
        binomial(self.blocks, self.k) as usize
    }

    /// Block lengths, the first `bits % blocks` one bit longer.
    pub fn block_lengths(&self) -> Vec<u32> {
        let (q, r) = (self.bits / self.blocks, self.bits % self.blocks);
        (0..self.blocks).map(|b| q + u32::from(b < r)).collect()
    }

    /// The shortest key over all tables: the sum of the `blocks - k` shortest blocks.
    pub fn min_key_bits(&self) -> u32 {
        let mut l = self.block_lengths();
        l.sort_unstable();
        l[..(self.blocks - self.k) as usize].iter().sum()
    }
}

impl fmt::Display for LayoutSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} blocks of {:?} bits, {} tables, keys of {}+ bits, exact up to k = {}",
            self.blocks,
            self.block_lengths(),
            self.tables(),
            self.min_key_bits(),
            self.k
        )
    }
}

/// `C(n, r)`, saturating.
pub fn binomial(n: u32, r: u32) -> u64 {
    if r > n {
        return 0;
    }
    let r = r.min(n - r) as u64;
    let mut c: u64 = 1;
    for i in 0..r {
        c = c.saturating_mul(n as u64 - i) / (i + 1);
    }
    c
}

/// One permuted table: which blocks lead, and how to move bits there and back.
#[derive(Clone, Debug)]
pub(crate) struct TablePlan {
    /// The leading blocks, ascending.
    pub lead: Vec<u32>,
    /// Bits in the key (the leading blocks' total length).
    pub key_bits: u32,
    /// Per block: (shift of the block in the original word, shift in the permuted word, length).
    moves: Vec<(u32, u32, u32)>,
    /// Bit mask (over block numbers) of the leading blocks.
    pub lead_mask: u32,
}

impl TablePlan {
    /// Moves the blocks so that the leading ones come first.
    #[inline]
    pub fn permute<W: Word>(&self, w: W) -> W {
        move_blocks(&self.moves, w)
    }

    /// The top `n` bits of [`permute`](Self::permute)`(w)` for words of `f`
    /// bits, computed from `w` by the few block moves that reach them.
    pub fn top_of_permuted(&self, f: u32, n: u32) -> TopBits {
        let lo = f - n;
        let moves = self.moves.iter().copied().filter(|&(_, dst, len)| len > 0 && dst + len > lo).collect();
        TopBits { moves, lo }
    }

    /// The inverse of [`permute`](Self::permute).
    #[inline]
    pub fn unpermute<W: Word>(&self, p: W) -> W {
        let mut out = W::default();
        for &(src, dst, len) in &self.moves {
            out = out.or(p.shr(dst).and(W::low_mask(len)).shl(src));
        }
        out
    }
}

/// `w`'s blocks moved: each `(source shift, destination shift, length)`.
#[inline(always)]
fn move_blocks<W: Word>(moves: &[(u32, u32, u32)], w: W) -> W {
    let mut out = W::default();
    for &(src, dst, len) in moves {
        out = out.or(w.shr(src).and(W::low_mask(len)).shl(dst));
    }
    out
}

/// The top bits of a table's permuted word, from the unpermuted word (see
/// [`TablePlan::top_of_permuted`]).
pub(crate) struct TopBits {
    /// The block moves landing in the top bits: (source shift, destination shift, length).
    moves: Vec<(u32, u32, u32)>,
    /// The lowest bit position kept.
    lo: u32,
}

impl TopBits {
    /// The top bits of the permuted `w`.
    #[inline]
    pub fn get_word<W: Word>(&self, w: W) -> W {
        move_blocks(&self.moves, w).shr(self.lo)
    }
}

/// A [`LayoutSpec`] expanded into its tables.
#[derive(Clone, Debug)]
pub(crate) struct Layout {
    pub spec: LayoutSpec,
    /// (shift, length) of each block in the original word.
    pub blocks: Vec<(u32, u32)>,
    pub tables: Vec<TablePlan>,
    /// For each set of blocks on which two fingerprints agree (a bit mask
    /// over blocks), the first table whose leading blocks are all in it;
    /// `u16::MAX` when none is. A pair is reported only by that table.
    first_table: Vec<u16>,
}

impl Layout {
    pub fn new(spec: LayoutSpec) -> Result<Layout> {
        spec.validate()?;
        let f = spec.bits;
        let lengths = spec.block_lengths();
        let mut blocks = Vec::with_capacity(lengths.len());
        let mut start = 0;
        for &len in &lengths {
            blocks.push((f - start - len, len));
            start += len;
        }
        let m = spec.blocks;
        let lead_count = m - spec.k;
        let mut tables = Vec::new();
        for lead in combinations(m, lead_count) {
            let mut order: Vec<u32> = lead.clone();
            order.extend((0..m).filter(|b| !lead.contains(b)));
            let mut pos = f;
            let mut moves = Vec::with_capacity(order.len());
            for &b in &order {
                let (src, len) = blocks[b as usize];
                pos -= len;
                moves.push((src, pos, len));
            }
            let key_bits = lead.iter().map(|&b| lengths[b as usize]).sum();
            let lead_mask = lead.iter().fold(0u32, |a, &b| a | 1 << b);
            tables.push(TablePlan { lead, key_bits, moves, lead_mask });
        }
        let first_table = if m <= 20 {
            (0..1u32 << m)
                .map(|agree| {
                    tables.iter().position(|t| t.lead_mask & !agree == 0).map_or(u16::MAX, |i| i as u16)
                })
                .collect()
        } else {
            Vec::new()
        };
        Ok(Layout { spec, blocks, tables, first_table })
    }

    /// The mask of blocks on which `a` and `b` agree.
    #[inline]
    pub fn agree_mask<W: Word>(&self, a: W, b: W) -> u32 {
        let x = a.xor(b);
        let mut mask = 0;
        for (i, &(shift, len)) in self.blocks.iter().enumerate() {
            if x.shr(shift).and(W::low_mask(len)).is_zero() {
                mask |= 1 << i;
            }
        }
        mask
    }

    /// The table that owns the pair `(a, b)` (original, unpermuted words).
    #[inline]
    pub fn owner<W: Word>(&self, a: W, b: W) -> usize {
        let agree = self.agree_mask(a, b);
        if self.first_table.is_empty() {
            self.tables.iter().position(|t| t.lead_mask & !agree == 0).unwrap_or(usize::MAX)
        } else {
            match self.first_table[agree as usize] {
                u16::MAX => usize::MAX,
                t => t as usize,
            }
        }
    }
}

/// All `r`-subsets of `0..n`, in lexicographic order.
fn combinations(n: u32, r: u32) -> Vec<Vec<u32>> {
    fn go(start: u32, n: u32, r: u32, cur: &mut Vec<u32>, out: &mut Vec<Vec<u32>>) {
        if cur.len() as u32 == r {
            out.push(cur.clone());
            return;
        }
        for i in start..n {
            if n - i < r - cur.len() as u32 {
                break;
            }
            cur.push(i);
            go(i + 1, n, r, cur, out);
            cur.pop();
        }
    }
    let mut out = Vec::new();
    go(0, n, r, &mut Vec::new(), &mut out);
    out
}

/// Directory bits for a table of `rows` entries and `key_bits` key bits:
/// about a quarter of `log2(rows)`… precisely `floor(log2 rows) - 2`, so
/// the directory costs at most one byte per entry and a directory bucket
/// holds about four entries; never more than the key.
pub(crate) fn dir_bits(rows: usize, key_bits: u32) -> u32 {
    let lg = usize::BITS - 1 - rows.max(1).leading_zeros();
    lg.saturating_sub(2).min(key_bits).min(30)
}

/// Bytes per stored entry of a table of `f`-bit words with `dir` directory bits.
pub(crate) fn entry_bytes(f: u32, dir: u32) -> usize {
    (f - dir).div_ceil(8).max(1) as usize
}

/// One layout the chooser considered, with its estimates.
#[derive(Clone, Debug, Serialize)]
pub struct Candidate {
    /// The layout.
    pub spec: LayoutSpec,
    /// Estimated index bytes for `n` fingerprints.
    pub bytes: u64,
    /// Estimated entries examined per query (over all tables).
    pub candidates_per_query: f64,
    /// Estimated nanoseconds per query (a model, not a measurement).
    pub cost_ns: f64,
    /// Whether it fits the memory budget.
    pub fits: bool,
}

/// The layout chosen for `n` fingerprints, with the reasons.
#[derive(Clone, Debug, Serialize)]
pub struct LayoutChoice {
    /// The chosen layout.
    pub spec: LayoutSpec,
    /// Why it was chosen, in a sentence.
    pub reason: String,
    /// Every layout considered.
    pub considered: Vec<Candidate>,
}

/// Estimated bytes of an index over `n` distinct fingerprints.
pub fn estimate_bytes(spec: &LayoutSpec, n: usize) -> u64 {
    let Ok(layout) = Layout::new(*spec) else { return u64::MAX };
    let mut bytes = n as u64 * 8; // ids
    for t in &layout.tables {
        let d = dir_bits(n, t.key_bits);
        bytes += n as u64 * entry_bytes(spec.bits, d) as u64 + ((1u64 << d) + 1) * 4;
    }
    bytes
}

/// Nanoseconds a query spends per table probed (a cache miss or two).
pub const PROBE_NS: f64 = 150.0;

/// Nanoseconds a query spends per candidate compared. Calibrated on
/// `index query --fingerprints` over 10^7 random fingerprints at k = 3
/// (bench/index_query.sh, 2 vCPUs of a Xeon): 4 tables with 610
/// candidates a query took 5.8 µs of CPU a query, 10 tables with 3
/// candidates 3.0 µs; with 150 ns a probe and about 1.5 µs of parsing and
/// output, that is 6 ns a candidate. The model used to count 1 ns, and so
/// chose the slower layout.
pub const CANDIDATE_NS: f64 = 5.0;

/// Chooses the layout for `n` fingerprints of `bits` bits at radius `k`
/// within `memory` bytes: the fastest by a cost model ([`PROBE_NS`] per
/// table probed, [`CANDIDATE_NS`] per candidate compared) among those that
/// fit, else the smallest.
pub fn choose(bits: u32, k: u32, n: usize, memory: u64) -> Result<LayoutChoice> {
    let mut considered = Vec::new();
    for m in (k + 1)..=bits.min(k + 12) {
        let spec = LayoutSpec { bits, k, blocks: m };
        if spec.validate().is_err() {
            continue;
        }
        let layout = Layout::new(spec)?;
        let per_query: f64 =
            layout.tables.iter().map(|t| n as f64 / 2f64.powi(t.key_bits.min(1000) as i32)).sum();
        let tables = layout.tables.len() as f64;
        let cost_ns = tables * PROBE_NS + per_query * CANDIDATE_NS;
        let bytes = estimate_bytes(&spec, n);
        considered.push(Candidate {
            spec,
            bytes,
            candidates_per_query: per_query,
            cost_ns,
            fits: bytes <= memory,
        });
    }
    if considered.is_empty() {
        return Err(Error::Config(format!("no layout exists for {bits}-bit fingerprints at k = {k}")));
    }
    let best_fit = considered
        .iter()
        .filter(|c| c.fits)
        .min_by(|a, b| a.cost_ns.total_cmp(&b.cost_ns).then(a.bytes.cmp(&b.bytes)));
    let (spec, reason) = match best_fit {
        Some(c) => (
            c.spec,
            format!(
                "fastest estimated layout within the {} budget: about {:.1} candidates and {} table probes per query, {} for {n} fingerprints",
                human_bytes(memory),
                c.candidates_per_query,
                c.spec.tables(),
                human_bytes(c.bytes)
            ),
        ),
        None => {
            let c = considered.iter().min_by_key(|c| c.bytes).expect("non-empty");
            (
                c.spec,
                format!(
                    "no layout fits the {} budget; using the smallest ({}), which needs more memory",
                    human_bytes(memory),
                    human_bytes(c.bytes)
                ),
            )
        }
    };
    Ok(LayoutChoice { spec, reason, considered })
}

/// `1536` → `"1.5 KiB"`.
pub fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutation_round_trips_and_leads_with_the_key() {
        let layout = Layout::new(LayoutSpec { bits: 64, k: 3, blocks: 5 }).unwrap();
        assert_eq!(layout.tables.len(), 10);
        let w: u64 = 0x0123_4567_89ab_cdef;
        for t in &layout.tables {
            let p = t.permute(w);
            assert_eq!(t.unpermute(p), w);
            assert_eq!(p.count_ones(), w.count_ones());
        }
        // Table 0 leads with blocks 0 and 1: the identity.
        assert_eq!(layout.tables[0].permute(w), w);
        // Table for blocks {3, 4} leads with the low 25 bits (13 + 12).
        let t = layout.tables.iter().find(|t| t.lead == [3, 4]).unwrap();
        assert_eq!(t.permute(w) >> 39, w & ((1 << 25) - 1));
    }

    #[test]
    fn chooser_prefers_longer_keys_as_n_grows() {
        let small = choose(64, 3, 1000, 1 << 33).unwrap();
        let big = choose(64, 3, 100_000_000, 8 << 30).unwrap();
        assert!(big.spec.blocks >= small.spec.blocks, "{small:?} {big:?}");
        assert_eq!(big.spec.blocks, 5, "{}", big.reason);
        let tight = choose(64, 3, 100_000_000, 1 << 30).unwrap();
        assert!(tight.reason.contains("no layout fits"));
    }

    #[test]
    fn binomials() {
        assert_eq!(binomial(5, 3), 10);
        assert_eq!(binomial(12, 4), 495);
        assert_eq!(binomial(3, 5), 0);
    }
}
