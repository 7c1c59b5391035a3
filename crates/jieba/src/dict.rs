//! jieba's dictionary as a double-array trie over dense character codes,
//! built by `build.rs`; loading it is a copy and one logarithm per word.

use std::collections::HashMap;

use crate::huge::HugeSlice;
use crate::Flavor;

/// The blob `build.rs` writes (see its doc for the layout).
static DICT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/jieba_dict.bin"));

/// One trie slot in a u64: its parent (`check`, [`IDX_BITS`] bits), its
/// children's base (the next [`IDX_BITS`]), and the index in
/// [`Dict::lp`] of the log probability of the word ending at it (the top
/// bits; 0 for none). A walk reads the word's probability from the slot
/// it already holds: jieba's 349,045 words have only 5,087 distinct
/// frequencies, so the table of probabilities stays in cache, where a
/// probability per slot (5.6 MB more, read at random) cost a cache miss
/// per word the walk met.
type Slot = u64;

/// Bits of a slot index (`check` and `base`).
const IDX_BITS: u32 = 21;
const IDX_MASK: u64 = (1 << IDX_BITS) - 1;

#[inline(always)]
fn check(s: Slot) -> u32 {
    (s & IDX_MASK) as u32
}

#[inline(always)]
fn base(s: Slot) -> u32 {
    ((s >> IDX_BITS) & IDX_MASK) as u32
}

#[inline(always)]
fn lp_index(s: Slot) -> usize {
    (s >> (2 * IDX_BITS)) as usize
}

/// A loaded dictionary.
pub(crate) struct Dict {
    code: Vec<u16>,
    slots: HugeSlice,
    /// The distinct log probabilities of words; 0 is no word.
    lp: Vec<f64>,
    /// jieba: the log probability of a character the route does not know
    /// (`ln 1 − ln total`); cppjieba: the smallest word weight (`min_weight_`).
    pub(crate) unknown: f64,
}

fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes(b[i..i + 4].try_into().expect("four bytes"))
}

impl Dict {
    /// Loads the flavour's dictionary and weights: for jieba, dict.txt
    /// with `ln(freq) − ln(total)` (jieba-rs, Python jieba); for cppjieba,
    /// its jieba.dict.utf8 with `ln(freq / total)` (its `DictTrie`).
    pub(crate) fn load(flavor: Flavor) -> Dict {
        assert_eq!(&DICT[..4], b"NDJD", "jieba_dict.bin is built by build.rs");
        let slots_len = u32_at(DICT, 8) as usize;
        let mut at = 16;
        let code: Vec<u16> =
            DICT[at..at + 131072].chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
        at += 131072;
        let trie = &DICT[at..at + 8 * slots_len];
        at += 8 * slots_len;
        let freqs = match flavor {
            Flavor::Jieba => &DICT[at..at + 4 * slots_len],
            Flavor::Cppjieba => &DICT[at + 4 * slots_len..at + 8 * slots_len],
        };
        let freq = |i: usize| u32_at(freqs, 4 * i);
        // Both sums are exact: integers far below 2^53.
        let total: u64 = (0..slots_len).map(|i| u64::from(freq(i))).sum();
        let weight: fn(u32, u64) -> f64 = match flavor {
            Flavor::Jieba => |f, total| f64::from(f).ln() - (total as f64).ln(),
            Flavor::Cppjieba => |f, total| (f64::from(f) / total as f64).ln(),
        };
        assert!(slots_len < IDX_MASK as usize, "the trie outgrew {IDX_BITS}-bit slot indices");
        let mut lp = vec![0.0];
        let mut index: HashMap<u32, u64> = HashMap::new();
        let slots: Vec<Slot> = trie
            .chunks_exact(8)
            .enumerate()
            .map(|(i, s)| {
                // A free slot's parent is u32::MAX: IDX_MASK, no slot's index.
                let check = u64::from(u32_at(s, 0)).min(IDX_MASK);
                let f = freq(i);
                let word = if f == 0 {
                    0
                } else {
                    *index.entry(f).or_insert_with(|| {
                        lp.push(weight(f, total));
                        lp.len() as u64 - 1
                    })
                };
                check | u64::from(u32_at(s, 4)) << IDX_BITS | word << (2 * IDX_BITS)
            })
            .collect();
        let unknown = match flavor {
            Flavor::Jieba => 0.0 - (total as f64).ln(),
            Flavor::Cppjieba => lp[1..].iter().copied().fold(f64::INFINITY, f64::min),
        };
        Dict { code, slots: HugeSlice::copy_of(&slots), lp, unknown }
    }

    /// The dense code of `c` (0 for a character in no word).
    #[inline(always)]
    pub(crate) fn code(&self, c: u32) -> u16 {
        if c < 0x10000 {
            self.code[c as usize]
        } else {
            0
        }
    }

    /// The child of `slot` by `code`, if the trie has it. Slot 0 is the root.
    #[inline(always)]
    pub(crate) fn step(&self, slot: u32, code: u16) -> Option<u32> {
        let t = base(self.slots[slot as usize]) + u32::from(code);
        // Slot `base + 0` never has `slot` as its parent, so code 0 fails here.
        match self.slots.get(t as usize) {
            Some(&s) if check(s) == slot => Some(t),
            _ => None,
        }
    }

    /// The root slot's value.
    #[inline(always)]
    pub(crate) fn root(&self) -> Slot {
        self.slots[0]
    }

    /// [`step`](Self::step) from a slot whose value the walk already holds:
    /// the child's index and value. The walk's loads then form one chain,
    /// a load a step, with no second read of the slot it stands on.
    #[inline(always)]
    pub(crate) fn step_from(&self, slot: u32, value: Slot, code: u16) -> Option<(u32, Slot)> {
        let t = base(value) + u32::from(code);
        match self.slots.get(t as usize) {
            Some(&v) if check(v) == slot => Some((t, v)),
            _ => None,
        }
    }

    /// The log probability of the word ending at the slot whose value is
    /// `value`, if one does.
    #[inline(always)]
    pub(crate) fn word_of(&self, value: Slot) -> Option<f64> {
        match lp_index(value) {
            0 => None,
            i => Some(self.lp[i]),
        }
    }

    /// The log probability of the word ending at `slot`, if one does.
    #[inline(always)]
    pub(crate) fn word(&self, slot: u32) -> Option<f64> {
        match lp_index(self.slots[slot as usize]) {
            0 => None,
            i => Some(self.lp[i]),
        }
    }

    /// Asks the processor to fetch the slot a walk from the root would
    /// reach by `c1` then `c2`, so that it is in cache when the walk comes.
    #[inline(always)]
    pub(crate) fn prefetch(&self, c1: u16, c2: u16) {
        #[cfg(target_arch = "x86_64")]
        if let Some(s) = self.step(0, c1) {
            let t = base(self.slots[s as usize]) as usize + usize::from(c2);
            if let Some(slot) = self.slots.get(t) {
                // SAFETY: a prefetch is only a hint; the pointer is to a live element.
                unsafe {
                    std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                        (slot as *const Slot).cast::<i8>(),
                    )
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (c1, c2);
    }

    /// Which pairs of ASCII characters begin a word of the dictionary: bit
    /// `b` of row `a` when `a` then `b` are a word's first two characters.
    /// A run of ASCII without any of these pairs holds no word of two
    /// characters or more.
    pub(crate) fn ascii_pairs(&self) -> Box<[u128; 128]> {
        let mut rows = Box::new([0u128; 128]);
        for a in 0..128u8 {
            let Some(s) = self.step(0, self.code(u32::from(a))) else { continue };
            for b in 0..128u8 {
                if self.step(s, self.code(u32::from(b))).is_some() {
                    rows[usize::from(a)] |= 1 << b;
                }
            }
        }
        rows
    }

    /// Whether the characters with `codes` form a word.
    pub(crate) fn is_word(&self, codes: &[u16]) -> bool {
        let mut s = 0;
        for &c in codes {
            match self.step(s, c) {
                Some(t) => s = t,
                None => return false,
            }
        }
        !codes.is_empty() && self.word(s).is_some()
    }
}
