//! jieba's dictionary as a double-array trie over dense character codes,
//! built by `build.rs`; loading it is a copy and one logarithm per word.

/// The blob `build.rs` writes (see its doc for the layout).
static DICT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/jieba_dict.bin"));

/// `lp` of a slot that ends no word.
const NOT_WORD: f64 = f64::INFINITY;

/// One trie slot: its parent, its children's base, and the log probability
/// of the word that ends here (or [`NOT_WORD`]).
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub(crate) struct Slot {
    check: u32,
    base: u32,
    lp: f64,
}

/// Which dictionary and which weights.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Weights {
    /// dict.txt; `ln(freq) − ln(total)`, as jieba-rs and Python jieba.
    Jieba,
    /// cppjieba's jieba.dict.utf8; `ln(freq / total)`, as its `DictTrie`.
    Cppjieba,
}

/// A loaded dictionary.
pub(crate) struct Dict {
    code: Vec<u16>,
    slots: Vec<Slot>,
    /// jieba: the log probability of a character the route does not know
    /// (`ln 1 − ln total`); cppjieba: the smallest word weight (`min_weight_`).
    pub(crate) unknown: f64,
}

fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes(b[i..i + 4].try_into().expect("four bytes"))
}

impl Dict {
    /// Loads the dictionary with `weights`.
    pub(crate) fn load(weights: Weights) -> Dict {
        assert_eq!(&DICT[..4], b"NDJD", "jieba_dict.bin is built by build.rs");
        let slots_len = u32_at(DICT, 8) as usize;
        let mut at = 16;
        let code: Vec<u16> =
            DICT[at..at + 131072].chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
        at += 131072;
        let trie = &DICT[at..at + 8 * slots_len];
        at += 8 * slots_len;
        let freqs = match weights {
            Weights::Jieba => &DICT[at..at + 4 * slots_len],
            Weights::Cppjieba => &DICT[at + 4 * slots_len..at + 8 * slots_len],
        };
        let freq = |i: usize| u32_at(freqs, 4 * i);
        // Both sums are exact: integers far below 2^53.
        let total: u64 = (0..slots_len).map(|i| u64::from(freq(i))).sum();
        let mut slots: Vec<Slot> = trie
            .chunks_exact(8)
            .map(|s| Slot { check: u32_at(s, 0), base: u32_at(s, 4), lp: NOT_WORD })
            .collect();
        let unknown = match weights {
            Weights::Jieba => {
                let log_total = (total as f64).ln();
                for (i, s) in slots.iter_mut().enumerate() {
                    let f = freq(i);
                    if f > 0 {
                        s.lp = f64::from(f).ln() - log_total;
                    }
                }
                0.0 - log_total
            }
            Weights::Cppjieba => {
                let sum = total as f64;
                let mut min = f64::INFINITY;
                for (i, s) in slots.iter_mut().enumerate() {
                    let f = freq(i);
                    if f > 0 {
                        s.lp = (f64::from(f) / sum).ln();
                        min = min.min(s.lp);
                    }
                }
                min
            }
        };
        Dict { code, slots, unknown }
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
        let t = self.slots[slot as usize].base.wrapping_add(u32::from(code));
        // Slot `base + 0` never has `slot` as its parent, so code 0 fails here.
        match self.slots.get(t as usize) {
            Some(s) if s.check == slot => Some(t),
            _ => None,
        }
    }

    /// The log probability of the word ending at `slot`, if one does.
    #[inline(always)]
    pub(crate) fn word(&self, slot: u32) -> Option<f64> {
        let lp = self.slots[slot as usize].lp;
        (lp != NOT_WORD).then_some(lp)
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
