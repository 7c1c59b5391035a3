//! A MinHash segment's band filter: a blocked Bloom filter over every
//! `(band, upper half of the band key)` of its rows, stored as the column
//! `filter` (blocks of 512 bits; each key sets three bits of one block).
//!
//! A probe of a band table costs two dependent reads of a large mapped file
//! (directory slot, then bucket), each a page walk and a cache miss once
//! the tables outgrow the caches; a check of the filter costs one read of
//! a table six times smaller (six bits a key: 24 bytes a row at 32 bands),
//! and rules out ~94% of the probes that would find nothing — nearly every
//! probe of an insert of a new document. It is read in place, like the
//! tables: a copy in anonymous (huge-page) memory was tried and measured no
//! faster at 10^6 (searches 107–117k/s copied, 139k/s mapped), and its
//! allocation stalled searches while the page cache was full.

use crate::index::file::Column;

/// Bits of filter a key.
const BITS_PER_KEY: usize = 6;

/// Bytes of a block (one cache line).
const BLOCK_BYTES: usize = 64;

/// Blocks of a filter for `keys` keys: at least one (a key's block is
/// found by multiplying, so any number will do and none is wasted).
pub(super) fn blocks_for(keys: usize) -> usize {
    (keys * BITS_PER_KEY).div_ceil(BLOCK_BYTES * 8).max(1)
}

/// Bytes of the filter column for `rows` rows of `bands` bands.
pub(super) fn column_len(rows: usize, bands: usize) -> usize {
    blocks_for(rows * bands) * BLOCK_BYTES
}

/// The hash of a band's key half.
#[inline]
fn hash(band: usize, key_hi: u64) -> u64 {
    let mut x = key_hi ^ (band as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The block (of `blocks`: the hash's upper half scaled to them) and the
/// three bit positions in it (from its lower half).
#[inline]
fn place(h: u64, blocks: usize) -> (usize, [u32; 3]) {
    let block = (((h >> 32) * blocks as u64) >> 32) as usize;
    (block, [(h & 511) as u32, ((h >> 9) & 511) as u32, ((h >> 18) & 511) as u32])
}

/// A filter being made: `u64` words, eight a block.
pub(super) struct FilterBits {
    blocks: usize,
    words: Vec<u64>,
}

impl FilterBits {
    /// An empty filter for `rows` rows of `bands` bands.
    pub(super) fn new(rows: usize, bands: usize) -> FilterBits {
        let blocks = blocks_for(rows * bands);
        FilterBits { blocks, words: vec![0; blocks * BLOCK_BYTES / 8] }
    }

    /// Adds band `band`'s entries (`key_hi << 32 | row`).
    pub(super) fn add_entries(&mut self, band: usize, entries: impl Iterator<Item = u64>) {
        for e in entries {
            let (block, bits) = place(hash(band, e >> 32), self.blocks);
            for b in bits {
                self.words[block * 8 + (b / 64) as usize] |= 1 << (b % 64);
            }
        }
    }

    /// The column's bytes.
    pub(super) fn to_bytes(&self) -> Vec<u8> {
        self.words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }
}

/// A segment's filter, read in place.
#[derive(Clone, Debug)]
pub(super) struct BandFilter {
    blocks: usize,
    column: Column,
}

impl BandFilter {
    /// The filter stored as `column` for `rows` rows of `bands` bands;
    /// `None` if it is of the wrong size.
    pub(super) fn from_column(column: Column, rows: usize, bands: usize) -> Option<BandFilter> {
        (column.len() == column_len(rows, bands))
            .then(|| BandFilter { blocks: blocks_for(rows * bands), column })
    }

    /// The filter's bytes.
    pub(super) fn bytes(&self) -> &[u8] {
        self.column.bytes()
    }

    /// Where band `band`'s key `key` (a full band key; its upper half is
    /// what the tables hold) falls: the block's first byte and its bits.
    #[inline]
    pub(super) fn place(&self, band: usize, key: u64) -> (usize, [u32; 3]) {
        let (block, bits) = place(hash(band, key >> 32), self.blocks);
        (block * BLOCK_BYTES, bits)
    }
}

/// Whether the block at `at` of `bytes` has every one of `bits` set.
#[inline]
pub(super) fn has(bytes: &[u8], at: usize, bits: [u32; 3]) -> bool {
    bits.iter().all(|&b| {
        let byte = at + (b / 8) as usize;
        bytes.get(byte).is_some_and(|v| v >> (b % 8) & 1 == 1)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_added_are_found_and_most_others_are_not() {
        let rows = 20_000;
        let mut f = FilterBits::new(rows, 4);
        let key = |band: usize, i: u64| (hash(band + 100, i) & !0xffff_ffff) | i;
        for band in 0..4 {
            f.add_entries(band, (0..rows as u64).map(|i| key(band, i)));
        }
        let col = Column::from_vec(f.to_bytes());
        let filter = BandFilter::from_column(col, rows, 4).unwrap();
        let bytes = filter.bytes();
        for band in 0..4 {
            for i in 0..rows as u64 {
                let (at, bits) = filter.place(band, key(band, i));
                assert!(has(bytes, at, bits));
            }
        }
        let false_hits = (0..100_000u64)
            .filter(|&i| {
                let (at, bits) = filter.place(1, key(9, i + 1_000_000));
                has(bytes, at, bits)
            })
            .count();
        // Six bits a key, three set in a 512-bit block: ~6–8 % false hits.
        assert!(false_hits < 10_000, "{false_hits}");
        assert!(BandFilter::from_column(Column::from_vec(vec![0; 64]), rows, 4).is_none());
    }
}
