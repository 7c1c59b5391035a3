//! The layout of an IDF table in memory, shared by `build.rs` (which lays
//! out jieba's bundled table at compile time, so that loading it costs
//! nothing) and by [`super::IdfTable`] (which lays out a user's table the
//! same way when it loads one). One layout means one lookup for both.
//!
//! Four arrays (numbers little-endian):
//! - `words`: the words' UTF-8 bytes, one after the other;
//! - `values`: the distinct IDF values as f64 (jieba's 270,132 words have
//!   3,328), in order of first appearance;
//! - `ctrl`: one byte per slot of an open-addressed table, 0 when the
//!   slot is free, else [`tag`]`(hash)` (7 bits of the hash, plus one). A
//!   word's probe starts at slot `hash(word) & (home - 1)`, where `home`
//!   is a power of two at least 1.25 times the words, and goes forward
//!   without wrapping: slots past `home` take the overflow, and `ctrl`
//!   ends with [`GROUP`] more zeros, so reading a group of 8 from any slot
//!   stays inside it;
//! - `slots`: per slot, 16 bytes: the index in `values` (u32), the word's
//!   length in a byte, then the word itself when it has at most
//!   [`INLINE`] bytes (one to three CJK characters, most words), else
//!   [`LONG`] for the length and `(start in words, length)` as two u32
//!   ([`slot_word`] reads either). Only long words are in `words`.
//!
//! As in a SwissTable, a probe compares the tag against 8 `ctrl` bytes at
//! once and touches a slot only when a tag agrees: a word the table lacks
//! (a third of what `keywords` asks) costs one read of `ctrl`, a short
//! word it has one more (its slot holds its bytes: the table is megabytes,
//! and a second read far away, of the words, cost as much as the first),
//! and there is no branch per slot to mispredict.

use std::collections::HashMap;

/// The hash that places a word in `slots`: fixed here, because the table
/// compiled into the binary must agree with the lookup forever (a
/// multiply-rotate over 8-byte chunks, the last chunk read as two
/// overlapping loads as in wyhash, then a final avalanche).
pub(crate) fn hash(word: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let u32_at = |i: usize| u64::from(u32::from_le_bytes([word[i], word[i + 1], word[i + 2], word[i + 3]]));
    let n = word.len();
    let mut h = (n as u64).wrapping_mul(K);
    let mut i = 0;
    while i + 8 <= n {
        h = (h.rotate_left(5) ^ (u32_at(i) | u32_at(i + 4) << 32)).wrapping_mul(K);
        i += 8;
    }
    // The rest, 0 to 7 bytes: the reads overlap, and with the length
    // mixed in above they still determine every byte.
    let r = n - i;
    let last = match r {
        0 => None,
        1..=3 => Some(u64::from(word[i]) << 16 | u64::from(word[i + r / 2]) << 8 | u64::from(word[n - 1])),
        _ => Some(u32_at(i) | u32_at(n - 4) << 32),
    };
    if let Some(v) = last {
        h = (h.rotate_left(5) ^ v).wrapping_mul(K);
    }
    h ^= h >> 32;
    h = h.wrapping_mul(K);
    h ^ (h >> 29)
}

/// The `ctrl` byte of a word whose hash is `h`: never 0.
pub(crate) fn tag(h: u64) -> u8 {
    (h >> 57) as u8 + 1
}

/// How many `ctrl` bytes a probe compares at once.
pub(crate) const GROUP: usize = 8;

/// A laid-out table (see the module's documentation).
pub(crate) struct Layout {
    pub(crate) words: Vec<u8>,
    pub(crate) values: Vec<u8>,
    pub(crate) ctrl: Vec<u8>,
    pub(crate) slots: Vec<u8>,
    /// Where probes start: `hash & (home - 1)`.
    pub(crate) home: usize,
    /// How many words.
    pub(crate) len: usize,
    /// `sorted(values)[len // 2]` over the words, as `jieba.analyse`.
    pub(crate) median: f64,
}

/// Parses `word idf` lines (whitespace-separated; blank lines and lines
/// starting with `#` are skipped) straight into a layout, and returns it
/// with the mean IDF over the lines (as cppjieba). An error is `(line,
/// message)`, lines counted from 1 (0 for the table as a whole).
///
/// Nothing but the layout grows with the table: no list of the lines, no
/// map of the words (a word that repeats is found in the table being
/// laid out, and keeps its last value, as a map would).
pub(crate) fn parse(text: &str) -> Result<(Layout, f64), (usize, String)> {
    let mut table = Builder::new(line_count(text.as_bytes()) + 1);
    let mut sum = 0.0;
    let mut lines = 0usize;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let err = |message: String| (i + 1, message);
        let (word, value) = line.rsplit_once(|c: char| c.is_whitespace()).ok_or_else(|| {
            err(format!("expected `word idf`, found {:?}", line.chars().take(60).collect::<String>()))
        })?;
        let idf: f64 = value.trim().parse().map_err(|_| err(format!("{value:?} is not a number")))?;
        if !idf.is_finite() {
            return Err(err(format!("{value:?} is not a finite number")));
        }
        sum += idf;
        lines += 1;
        table.insert(word.trim(), idf).map_err(err)?;
    }
    if lines == 0 {
        return Err((0, "the table is empty".into()));
    }
    Ok((table.finish(), sum / lines as f64))
}

fn line_count(b: &[u8]) -> usize {
    b.iter().filter(|&&c| c == b'\n').count()
}

/// An empty table.
#[allow(dead_code)] // build.rs, which shares this file, needs none.
pub(crate) fn empty() -> Layout {
    Builder::new(0).finish()
}

/// Bytes of a slot.
pub(crate) const SLOT: usize = 16;
/// The longest word a slot holds itself.
const INLINE: usize = 11;
/// The length byte of a slot whose word is longer than [`INLINE`].
const LONG: u8 = 0xFF;

/// The u32 at byte `at` of `b`.
#[inline(always)]
pub(crate) fn u32_le(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("four bytes"))
}

/// The word a slot holds: its own bytes, or a range of `words`.
#[inline(always)]
pub(crate) fn slot_word<'a>(slot: &'a [u8], words: &'a [u8]) -> &'a [u8] {
    match slot[4] {
        LONG => {
            let start = u32_le(slot, 5) as usize;
            &words[start..start + u32_le(slot, 9) as usize]
        }
        n => &slot[5..5 + usize::from(n)],
    }
}

/// A layout being built, a word at a time. While it is, the first field of
/// a slot is the word's number in order of first appearance, and
/// `by_word` holds each word's latest value; [`Builder::finish`] turns
/// those into indices of distinct values, numbered in the order the words
/// first appeared (so the bundled table's layout does not depend on how
/// it was built).
struct Builder {
    bytes: Vec<u8>,
    ctrl: Vec<u8>,
    slots: Vec<u8>,
    home: usize,
    by_word: Vec<f64>,
}

impl Builder {
    /// A table for at most `words` distinct words (more still fit: the
    /// overflow past `home` grows).
    fn new(words: usize) -> Builder {
        let home = (words + words / 4).next_power_of_two();
        Builder {
            bytes: Vec::new(),
            ctrl: vec![0u8; home + GROUP],
            slots: vec![0u8; SLOT * home],
            home,
            by_word: Vec::new(),
        }
    }

    fn slot(&self, s: usize) -> &[u8] {
        &self.slots[SLOT * s..SLOT * (s + 1)]
    }

    /// Adds `word` with `value`, or gives a word already in the table its
    /// new value.
    fn insert(&mut self, word: &str, value: f64) -> Result<(), String> {
        let w = word.as_bytes();
        let h = hash(w);
        let t = tag(h);
        let mut s = h as usize & (self.home - 1);
        // The word is before the first free slot from its home, if anywhere.
        while self.ctrl[s] != 0 {
            if self.ctrl[s] == t && slot_word(self.slot(s), &self.bytes) == w {
                let n = u32_le(self.slot(s), 0) as usize;
                self.by_word[n] = value;
                return Ok(());
            }
            s += 1;
        }
        if self.bytes.len() + w.len() > u32::MAX as usize || self.by_word.len() >= u32::MAX as usize / 2 {
            return Err(format!(
                "more than {} words or 4 GiB of them: an IDF table holds at most that",
                u32::MAX / 2
            ));
        }
        if s == self.slots.len() / SLOT {
            // The overflow grows by one slot; `ctrl` keeps its zeros.
            self.ctrl.push(0);
            self.slots.extend_from_slice(&[0; SLOT]);
        }
        self.ctrl[s] = t;
        let number = self.by_word.len() as u32;
        let start = self.bytes.len() as u32;
        let slot = &mut self.slots[SLOT * s..SLOT * (s + 1)];
        slot[..4].copy_from_slice(&number.to_le_bytes());
        if w.len() <= INLINE {
            slot[4] = w.len() as u8;
            slot[5..5 + w.len()].copy_from_slice(w);
        } else {
            slot[4] = LONG;
            slot[5..9].copy_from_slice(&start.to_le_bytes());
            slot[9..13].copy_from_slice(&(w.len() as u32).to_le_bytes());
            self.bytes.extend_from_slice(w);
        }
        self.by_word.push(value);
        Ok(())
    }

    fn finish(mut self) -> Layout {
        // Distinct values, numbered in the order their words first appeared.
        let mut values = Vec::new();
        let mut value_index: HashMap<u64, u32> = HashMap::new();
        let numbers: Vec<u32> = self
            .by_word
            .iter()
            .map(|v| {
                let next = value_index.len() as u32;
                *value_index.entry(v.to_bits()).or_insert_with(|| {
                    values.extend_from_slice(&v.to_le_bytes());
                    next
                })
            })
            .collect();
        drop(value_index);
        for s in 0..self.slots.len() / SLOT {
            if self.ctrl[s] != 0 {
                let n = u32_le(self.slot(s), 0) as usize;
                self.slots[SLOT * s..SLOT * s + 4].copy_from_slice(&numbers[n].to_le_bytes());
            }
        }
        drop(numbers);
        let len = self.by_word.len();
        let median =
            if len == 0 { 0.0 } else { *self.by_word.select_nth_unstable_by(len / 2, f64::total_cmp).1 };
        self.bytes.shrink_to_fit();
        Layout { words: self.bytes, values, ctrl: self.ctrl, slots: self.slots, home: self.home, len, median }
    }
}
