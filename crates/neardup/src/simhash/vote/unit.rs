//! Unit votes (weight 1 per hash) counted per bit position with a
//! Harley–Seal carry-save adder tree.
//!
//! Sixteen words of four hashes each pass through fifteen carry-save
//! adders, which keep, bit for bit, how many of the hashes so far had
//! that bit set: the ones, twos, fours and eights digits of the count
//! stay in four words, and each block of 64 hashes yields one word of
//! sixteens. Only the sixteens are spread into per-bit byte counters (a
//! table lookup per byte), so a hash costs about two word operations
//! instead of 64 additions. The same code serves every level: compiled a
//! second time with AVX2 enabled, the four-hash words become one register.

use crate::config::VoteConfig;
use crate::fingerprint::{Bits, Fingerprint};

/// Hashes side by side in one word of the adder tree.
const LANES: usize = 4;

/// Hashes per block: sixteen words.
const BLOCK: usize = 16 * LANES;

/// Blocks between flushes of the sixteens' byte counters: each block adds
/// at most `LANES` to a byte, which must stay below 256.
const FLUSH_BLOCKS: u32 = 255 / LANES as u32;

/// Four hashes' worth of one bit position each.
type Word = [u64; LANES];

/// `SPREAD[b]` has byte `i` equal to bit `i` of `b`: eight one-bit counters.
static SPREAD: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut b = 0;
    while b < 256 {
        let mut i = 0;
        while i < 8 {
            t[b] |= (((b >> i) & 1) as u64) << (8 * i);
            i += 1;
        }
        b += 1;
    }
    t
};

/// Counts, for each of 64 bit positions, the words with that bit set.
#[derive(Clone, Debug)]
struct BitCounts {
    /// Words not yet in a block.
    tail: [u64; BLOCK],
    queued: usize,
    adder: Adder,
}

/// The adder tree's state.
#[derive(Clone, Debug)]
struct Adder {
    /// The ones, twos, fours and eights digits of the counts so far.
    digits: [Word; 4],
    /// Byte `i` of word `j`: sixteens counted at bit `8·j + i` since the last flush.
    sixteens: [u64; 8],
    blocks: u32,
    /// Flushed counts per bit.
    counts: [u64; 64],
}

impl BitCounts {
    fn new() -> BitCounts {
        BitCounts {
            tail: [0; BLOCK],
            queued: 0,
            adder: Adder { digits: [[0; LANES]; 4], sixteens: [0; 8], blocks: 0, counts: [0; 64] },
        }
    }

    /// Counts the low (or, if `HIGH`, the high) 64 bits of every hash.
    #[inline]
    fn add<const HIGH: bool>(&mut self, hashes: &[u128]) {
        let mut rest = hashes;
        while !rest.is_empty() {
            let take = (BLOCK - self.queued).min(rest.len());
            let (now, later) = rest.split_at(take);
            for (t, &h) in self.tail[self.queued..].iter_mut().zip(now) {
                *t = if HIGH { (h >> 64) as u64 } else { h as u64 };
            }
            rest = later;
            self.queued_more(take);
        }
    }

    /// Counts every word; whole blocks are read where they lie.
    #[inline]
    fn add64(&mut self, words: &[u64]) {
        let mut rest = words;
        while !rest.is_empty() {
            if self.queued == 0 && rest.len() >= BLOCK {
                let (block, later) = rest.split_at(BLOCK);
                self.adder.block(block.try_into().expect("a block"));
                rest = later;
                continue;
            }
            let take = (BLOCK - self.queued).min(rest.len());
            let (now, later) = rest.split_at(take);
            self.tail[self.queued..self.queued + take].copy_from_slice(now);
            rest = later;
            self.queued_more(take);
        }
    }

    /// Notes `n` more words in the tail, running it when full.
    #[inline]
    fn queued_more(&mut self, n: usize) {
        self.queued += n;
        if self.queued == BLOCK {
            self.adder.block(&self.tail);
            self.queued = 0;
        }
    }

    /// The count of every bit position.
    fn totals(&self) -> [u64; 64] {
        // Byte counters: byte k of `acc[j]` counts bit 8k + j. They never
        // carry: the digits add at most 15 per lane and the tail one per
        // word.
        const _: () = assert!(15 * LANES + BLOCK - 1 < 256);
        const ONES: u64 = 0x0101_0101_0101_0101;
        let mut adder = self.adder.clone();
        adder.flush_sixteens();
        let mut totals = adder.counts;
        let mut acc = [0u64; 8];
        let mut add = |word: u64, weight: u64| {
            for (j, a) in acc.iter_mut().enumerate() {
                *a += weight * ((word >> j) & ONES);
            }
        };
        for (weight, digit) in [1u64, 2, 4, 8].into_iter().zip(&adder.digits) {
            for &lane in digit {
                add(lane, weight);
            }
        }
        for &w in &self.tail[..self.queued] {
            add(w, 1);
        }
        for (j, a) in acc.iter().enumerate() {
            for k in 0..8 {
                totals[8 * k + j] += (a >> (8 * k)) & 0xFF;
            }
        }
        totals
    }
}

impl Adder {
    /// Runs a block of words through the adder tree.
    fn block(&mut self, words: &[u64; BLOCK]) {
        #[cfg(target_arch = "x86_64")]
        if crate::simd::level() >= crate::simd::Level::Avx2 {
            // SAFETY: the level is at most what the CPU supports.
            return unsafe { self.block_avx2(words) };
        }
        self.block_portable(words);
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn block_avx2(&mut self, words: &[u64; BLOCK]) {
        self.block_portable(words);
    }

    #[inline(always)]
    fn block_portable(&mut self, words: &[u64; BLOCK]) {
        let word = |k: usize| -> Word { std::array::from_fn(|l| words[LANES * k + l]) };
        let [mut ones, mut twos, mut fours, mut eights] = self.digits;
        // Pairs of words into ones, pairs of twos carries into twos, and
        // so on: fifteen adders for sixteen words.
        let mut eights_in = [[0; LANES]; 2];
        for (half, e) in eights_in.iter_mut().enumerate() {
            let mut fours_in = [[0; LANES]; 2];
            for (quarter, f) in fours_in.iter_mut().enumerate() {
                let k = 8 * half + 4 * quarter;
                let twos_a = add(&mut ones, word(k), word(k + 1));
                let twos_b = add(&mut ones, word(k + 2), word(k + 3));
                *f = add(&mut twos, twos_a, twos_b);
            }
            *e = add(&mut fours, fours_in[0], fours_in[1]);
        }
        let sixteens = add(&mut eights, eights_in[0], eights_in[1]);
        self.digits = [ones, twos, fours, eights];
        for lane in sixteens {
            for (j, s) in self.sixteens.iter_mut().enumerate() {
                *s += SPREAD[((lane >> (8 * j)) & 0xff) as usize];
            }
        }
        self.blocks += 1;
        if self.blocks == FLUSH_BLOCKS {
            self.flush_sixteens();
        }
    }

    /// Moves the sixteens' byte counters into `counts`.
    fn flush_sixteens(&mut self) {
        for (j, s) in self.sixteens.iter_mut().enumerate() {
            for i in 0..8 {
                self.counts[8 * j + i] += 16 * ((*s >> (8 * i)) & 0xff);
            }
            *s = 0;
        }
        self.blocks = 0;
    }
}

/// A carry-save adder on bit-sliced counters: adds `a` and `b` to the
/// digit bit by bit, keeps the sum digit and returns the carries.
#[inline(always)]
fn add(digit: &mut Word, a: Word, b: Word) -> Word {
    let mut carry = [0; LANES];
    for l in 0..LANES {
        let u = a[l] ^ b[l];
        carry[l] = (a[l] & b[l]) | (u & digit[l]);
        digit[l] ^= u;
    }
    carry
}

/// Votes of weight 1, one per hash, counted per bit: the fingerprint is
/// bit for bit what [`Lanes`](super::Lanes) gives for the same hashes with
/// weight 1 (bit `j` is 1 iff more than half of the hashes have it set).
#[derive(Clone, Debug)]
pub struct UnitVotes {
    bits: Bits,
    n: u64,
    lo: BitCounts,
    hi: Option<Box<BitCounts>>,
}

impl UnitVotes {
    /// No votes yet, for fingerprints of `bits` bits.
    pub fn new(bits: Bits) -> UnitVotes {
        let hi = (bits == Bits::B128).then(|| Box::new(BitCounts::new()));
        UnitVotes { bits, n: 0, lo: BitCounts::new(), hi }
    }

    /// Adds one vote of weight 1 for each hash (64-bit fingerprints use
    /// the low half).
    pub fn add(&mut self, hashes: &[u128]) {
        self.n += hashes.len() as u64;
        self.lo.add::<false>(hashes);
        if let Some(hi) = &mut self.hi {
            hi.add::<true>(hashes);
        }
    }

    /// Adds one vote of weight 1 for each 64-bit hash.
    ///
    /// # Panics
    ///
    /// For 128-bit fingerprints, which need the hashes' high halves.
    pub(crate) fn add64(&mut self, hashes: &[u64]) {
        assert!(self.hi.is_none(), "64-bit hashes cannot vote on 128-bit fingerprints");
        self.n += hashes.len() as u64;
        self.lo.add64(hashes);
    }

    /// How many votes were added.
    pub fn len(&self) -> u64 {
        self.n
    }

    /// Whether no vote was added.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// For each bit, how many hashes had it set (64 or 128 counts).
    pub fn ones(&self) -> Vec<u64> {
        let mut out = self.lo.totals().to_vec();
        if let Some(hi) = &self.hi {
            out.extend(hi.totals());
        }
        out
    }

    /// The fingerprint: bit `j` is 1 iff more hashes have it set than not.
    pub fn fingerprint(&self) -> Fingerprint {
        self.fingerprint_by(VoteConfig::default())
    }

    /// The fingerprint by `rule`: a bit set by exactly half the hashes is
    /// a tie.
    pub fn fingerprint_by(&self, rule: VoteConfig) -> Fingerprint {
        let (mut above, mut zero) = (0u128, 0u128);
        for (j, ones) in self.ones().into_iter().enumerate() {
            above |= u128::from(2 * ones > self.n) << j;
            zero |= u128::from(2 * ones == self.n) << j;
        }
        Fingerprint::new(rule.bits(above, zero, self.bits), self.bits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simd;

    fn hashes(n: usize) -> Vec<u128> {
        let mut x: u128 = 0x0123_4567_89ab_cdef_fedc_ba98_7654_3210;
        (0..n)
            .map(|i| {
                x = x
                    .wrapping_mul(0x2545_f491_4f6c_dd1d_2545_f491_4f6c_dd1d)
                    .wrapping_add(1442695040888963407);
                // Some runs of equal and of all-ones hashes, to fill every digit.
                match i % 97 {
                    0..=9 => u128::MAX,
                    10..=14 => 0,
                    _ => x,
                }
            })
            .collect()
    }

    #[test]
    fn the_byte_counters_of_totals_hold_the_most_they_can_get() {
        // Every digit full (15 per lane) and a full tail: 123 per bit.
        for n in [64 * 15 + 63, 64 * 16 - 1, 64 * 255 + 63] {
            let mut u = UnitVotes::new(Bits::B64);
            u.add64(&vec![u64::MAX; n]);
            assert_eq!(u.ones(), vec![n as u64; 64], "n = {n}");
        }
    }

    #[test]
    fn counts_equal_a_bit_by_bit_count_in_any_slicing() {
        for n in [0, 1, 63, 64, 65, 200, 64 * 63, 64 * 63 + 1, 64 * 200 + 17] {
            let hs = hashes(n);
            let want: Vec<u64> =
                (0..128).map(|b| hs.iter().filter(|&&h| (h >> b) & 1 == 1).count() as u64).collect();
            for level in simd::supported() {
                for piece in [1, 16, 100, 256, usize::MAX] {
                    let mut u = UnitVotes::new(Bits::B128);
                    simd::scoped(level, || {
                        for chunk in hs.chunks(piece.min(hs.len().max(1))) {
                            u.add(chunk);
                        }
                    });
                    assert_eq!(u.ones(), want, "n = {n}, {level}, pieces of {piece}");
                    assert_eq!(u.len(), n as u64);
                    let lows: Vec<u64> = hs.iter().map(|&h| h as u64).collect();
                    let mut u = UnitVotes::new(Bits::B64);
                    simd::scoped(level, || {
                        for chunk in lows.chunks(piece.min(lows.len().max(1))) {
                            u.add64(chunk);
                        }
                    });
                    assert_eq!(u.ones(), want[..64], "64-bit, n = {n}, {level}, pieces of {piece}");
                }
            }
        }
    }
}
