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
//! - `slots`: per slot, `(start in words, length, index in values)` as
//!   three u32.
//!
//! As in a SwissTable, a probe compares the tag against 8 `ctrl` bytes at
//! once and touches a slot and the word's bytes only when a tag agrees:
//! a word the table lacks (a third of what `keywords` asks) costs one
//! read of `ctrl`, a word it has about three, and there is no branch per
//! slot to mispredict.

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

/// A parsed table: its `(word, idf)` lines in order, and the mean IDF over
/// them (as cppjieba).
pub(crate) type Parsed<'a> = (Vec<(&'a str, f64)>, f64);

/// Parses `word idf` lines (whitespace-separated; blank lines and lines
/// starting with `#` are skipped). An error is `(line, message)`, lines
/// counted from 1.
pub(crate) fn parse(text: &str) -> Result<Parsed<'_>, (usize, String)> {
    let mut words = Vec::with_capacity(line_count(text.as_bytes()) + 1);
    let mut sum = 0.0;
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
        words.push((word.trim(), idf));
    }
    if words.is_empty() {
        return Err((0, "the table is empty".into()));
    }
    let mean = sum / words.len() as f64;
    Ok((words, mean))
}

fn line_count(b: &[u8]) -> usize {
    b.iter().filter(|&&c| c == b'\n').count()
}

/// Lays out `words` (a word that repeats keeps its last value, as a map
/// would). Fails when the words overflow the u32 offsets.
pub(crate) fn lay_out(words: &[(&str, f64)]) -> Result<Layout, String> {
    let mut index: HashMap<&str, usize> = HashMap::with_capacity(words.len());
    let mut distinct: Vec<(&str, f64)> = Vec::with_capacity(words.len());
    for &(w, v) in words {
        match index.get(w) {
            Some(&i) => distinct[i].1 = v,
            None => {
                index.insert(w, distinct.len());
                distinct.push((w, v));
            }
        }
    }
    let total: usize = distinct.iter().map(|(w, _)| w.len()).sum();
    if total > u32::MAX as usize || distinct.len() >= u32::MAX as usize / 2 {
        return Err(format!(
            "{} words of {total} bytes: an IDF table holds at most 4 GiB of words",
            distinct.len()
        ));
    }
    let mut bytes = Vec::with_capacity(total);
    let mut values = Vec::new();
    let mut value_index: HashMap<u64, u32> = HashMap::new();
    let home = (distinct.len() + distinct.len() / 4).next_power_of_two();
    let mut ctrl = vec![0u8; home + GROUP];
    const SLOT: usize = 12;
    let mut slots = vec![0u8; SLOT * home];
    for &(w, v) in &distinct {
        let next = value_index.len() as u32;
        let vi = *value_index.entry(v.to_bits()).or_insert_with(|| {
            values.extend_from_slice(&v.to_le_bytes());
            next
        });
        let h = hash(w.as_bytes());
        let mut s = h as usize & (home - 1);
        while ctrl[s] != 0 {
            s += 1;
        }
        if s == slots.len() / SLOT {
            // The overflow grows by one slot; `ctrl` keeps its zeros.
            ctrl.push(0);
            slots.extend_from_slice(&[0; SLOT]);
        }
        ctrl[s] = tag(h);
        for (k, v) in [bytes.len() as u32, w.len() as u32, vi].into_iter().enumerate() {
            slots[SLOT * s + 4 * k..SLOT * s + 4 * k + 4].copy_from_slice(&v.to_le_bytes());
        }
        bytes.extend_from_slice(w.as_bytes());
    }
    let mut sorted: Vec<f64> = distinct.iter().map(|&(_, v)| v).collect();
    let median = if sorted.is_empty() {
        0.0
    } else {
        let mid = sorted.len() / 2;
        *sorted.select_nth_unstable_by(mid, f64::total_cmp).1
    };
    Ok(Layout { words: bytes, values, ctrl, slots, home, len: distinct.len(), median })
}
