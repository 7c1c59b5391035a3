//! Chinese word segmentation over jieba's dictionary and HMM, in two
//! flavours that give the same words as the libraries they are named for:
//!
//! - [`Segmenter::jieba`]: jieba-rs 0.11's `Jieba::cut` (which follows
//!   Python jieba): blocks of CJK, ASCII letters and digits and `+#&._%-`;
//!   the maximum-probability route over the dictionary's DAG; without the
//!   HMM, runs of single ASCII letters and digits joined; with it, runs of
//!   single characters that are not a dictionary word cut by Viterbi.
//! - [`Segmenter::cppjieba`]: cppjieba's `MixSegment::Cut` (nodejieba
//!   3.5.8's cppjieba, which yanyiwu/simhash's keyword extractor runs):
//!   ranges between the separators ` \t\n，。`; its own route weights
//!   (`ln(freq / total)`, unknown characters at the smallest weight); every
//!   run of single characters through its HMM, with its ASCII rules.
//!
//! The dictionary is jieba's `dict.txt` (cppjieba's lacks 65 of its words and
//! has 2 more: `data/cppjieba.txt`), compiled by `build.rs` into a double-array trie
//! over dense character codes; the route is computed in the same backward
//! pass that walks the trie, so no DAG is stored. Loading is a copy of the
//! built arrays and one logarithm per word (a few milliseconds), once per
//! process and flavour.
//!
//! ```
//! use neardup_jieba::Segmenter;
//!
//! let mut words = Vec::new();
//! Segmenter::jieba().cut("我们中出了一个叛徒", false, &mut words);
//! assert_eq!(words, ["我们", "中", "出", "了", "一个", "叛徒"]);
//! ```

#![deny(missing_docs)]

mod cppjieba;
mod dict;
mod hmm;
mod huge;
mod jieba;

use std::cell::RefCell;
use std::fmt;
use std::sync::OnceLock;

use dict::Dict;
use hmm::Hmm;

/// Which library's words a [`Segmenter`] gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Flavor {
    /// jieba-rs 0.11's `cut` (Python jieba's rules).
    Jieba,
    /// cppjieba's `MixSegment` (with the HMM) or `MPSegment` (without).
    Cppjieba,
}

/// Which cppjieba the [`Flavor::Cppjieba`] segmenter follows. They differ
/// only in how the HMM's runs cut ASCII (`HMMSegment`'s letter and number
/// rules); the dictionaries, the route and the Viterbi are the same.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CppjiebaRules {
    /// cppjieba v5.6.7, which yanyiwu/simhash pins: a letter or a digit
    /// and the letters and digits after it, then at most one decimal
    /// suffix (`5G3.14`, `abc1.2` and `3.14` are one word each).
    #[default]
    V5_6_7,
    /// The older cppjieba bundled in the npm package nodejieba 3.5.8: a
    /// letter and the letters and digits after it; a digit and the
    /// digits and dots after it (`5G` is two words, `3.14.15` one).
    Nodejieba3_5_8,
}

/// A loaded segmenter; the two flavours are loaded once per process and
/// shared ([`Segmenter::jieba`], [`Segmenter::cppjieba`]).
pub struct Segmenter {
    flavor: Flavor,
    dict: Dict,
    hmm: &'static Hmm,
    /// [`Dict::ascii_pairs`].
    ascii_pairs: Box<[u128; 128]>,
}

impl fmt::Debug for Segmenter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Segmenter").field("flavor", &self.flavor).finish_non_exhaustive()
    }
}

/// Per-thread buffers, reused from call to call.
#[derive(Default)]
struct Scratch {
    /// The current block's characters, their byte offsets in it and their codes.
    chars: Vec<u32>,
    offs: Vec<u32>,
    codes: Vec<u16>,
    /// The best route from each character: (log probability, end).
    route: Vec<(f64, u32)>,
    prev: Vec<[u8; 4]>,
    path: Vec<u8>,
}

impl Scratch {
    fn clear(&mut self) {
        self.chars.clear();
        self.offs.clear();
        self.codes.clear();
    }

    /// Takes the characters of `b` from `start` while `keep` holds (the
    /// first must), with their offsets from `start` and their codes;
    /// returns where the run ends.
    #[inline(always)]
    fn fill(&mut self, dict: &Dict, b: &[u8], start: usize, keep: impl Fn(u32) -> bool) -> usize {
        self.clear();
        let mut i = start;
        while i < b.len() {
            let (c, l) = decode(b, i);
            if i > start && !keep(c) {
                break;
            }
            self.chars.push(c);
            self.offs.push((i - start) as u32);
            self.codes.push(dict.code(c));
            i += l;
        }
        i
    }

    /// The byte offset of character `i` of a block `len` bytes long.
    #[inline(always)]
    fn off(&self, i: usize, len: usize) -> usize {
        self.offs.get(i).map_or(len, |&o| o as usize)
    }

    /// Drops buffers a huge input grew, so a thread does not keep them.
    fn trim(&mut self) {
        const KEEP: usize = 1 << 20;
        if self.chars.capacity() > KEEP {
            *self = Scratch::default();
        }
    }
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// The character at byte `i` of valid UTF-8 and its length.
#[inline(always)]
fn decode(b: &[u8], i: usize) -> (u32, usize) {
    let x = u32::from(b[i]);
    let cont = |k: usize| u32::from(b[i + k]) & 0x3F;
    if x < 0x80 {
        (x, 1)
    } else if x < 0xE0 {
        (((x & 0x1F) << 6) | cont(1), 2)
    } else if x < 0xF0 {
        (((x & 0x0F) << 12) | (cont(1) << 6) | cont(2), 3)
    } else {
        (((x & 0x07) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3), 4)
    }
}

impl Segmenter {
    /// The jieba-rs flavour, loaded on first use.
    pub fn jieba() -> &'static Segmenter {
        static LOADED: OnceLock<Segmenter> = OnceLock::new();
        LOADED.get_or_init(|| Segmenter::load(Flavor::Jieba))
    }

    /// The cppjieba flavour, loaded on first use.
    pub fn cppjieba() -> &'static Segmenter {
        static LOADED: OnceLock<Segmenter> = OnceLock::new();
        LOADED.get_or_init(|| Segmenter::load(Flavor::Cppjieba))
    }

    fn load(flavor: Flavor) -> Segmenter {
        let dict = Dict::load(flavor);
        let ascii_pairs = dict.ascii_pairs();
        Segmenter { flavor, dict, hmm: Hmm::shared(), ascii_pairs }
    }

    /// The shared segmenter of `flavor`.
    pub fn of(flavor: Flavor) -> &'static Segmenter {
        match flavor {
            Flavor::Jieba => Segmenter::jieba(),
            Flavor::Cppjieba => Segmenter::cppjieba(),
        }
    }

    /// Which library's words this segmenter gives.
    pub fn flavor(&self) -> Flavor {
        self.flavor
    }

    /// Appends the words of `text` to `out`, in order, as the flavour's
    /// library cuts them: every character of `text` is in exactly one word
    /// (whitespace and punctuation included), and the words are slices of
    /// `text`. `hmm` lets the HMM join characters the dictionary does not.
    ///
    /// The cppjieba flavour cuts as cppjieba v5.6.7 does
    /// ([`CppjiebaRules::V5_6_7`]; [`cut_with_rules`](Self::cut_with_rules)
    /// chooses).
    pub fn cut<'t>(&self, text: &'t str, hmm: bool, out: &mut Vec<&'t str>) {
        self.cut_with_rules(text, hmm, CppjiebaRules::default(), out);
    }

    /// [`cut`](Self::cut), the cppjieba flavour following `rules` (the
    /// jieba flavour has one set of rules and ignores it).
    pub fn cut_with_rules<'t>(&self, text: &'t str, hmm: bool, rules: CppjiebaRules, out: &mut Vec<&'t str>) {
        SCRATCH.with(|scratch| {
            let mut scratch = scratch.borrow_mut();
            match self.flavor {
                Flavor::Jieba => jieba::cut(self, text, hmm, out, &mut scratch),
                Flavor::Cppjieba => cppjieba::cut(self, text, hmm.then_some(rules), out, &mut scratch),
            }
            scratch.trim();
        });
    }

    /// Whether `c` belongs to the blocks the jieba flavour segments (CJK
    /// ideographs, ASCII letters and digits, `+#&._%-`); every other
    /// character is a word of its own, so a text cut between two
    /// characters that are not both in blocks gives the same words as the
    /// whole text.
    #[inline]
    pub fn in_jieba_block(c: char) -> bool {
        jieba::in_block(c as u32)
    }

    /// Whether `word` is in this flavour's dictionary.
    pub fn contains(&self, word: &str) -> bool {
        let codes: Vec<u16> = word.chars().map(|c| self.dict.code(c as u32)).collect();
        self.dict.is_word(&codes)
    }
}

#[cfg(test)]
mod tests;
