//! Suffix arrays of a corpus's parts (libsais), merged in the order of
//! their first L symbols, and the groups of equal L-grams they make
//! adjacent.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, Write};
use std::ops::Range;
use std::path::Path;

use libsais::suffix_array::AlphabetSize;
use libsais::SuffixArrayConstruction;

use super::KeepSpan;
use crate::error::{Error, Result};

/// The separator after each document's bytes: no UTF-8 text holds 0xFF.
pub(crate) const BYTE_SEP: u8 = 0xFF;

/// A corpus symbol: a byte, or a token id (ids start at 1; 0 separates).
pub(crate) trait Symbol: Copy + Ord + Send + Sync + 'static {
    /// The separator after each document.
    const SEP: Self;
    /// The suffix array of `part` (positions within it).
    fn suffix_array(part: &[Self], alphabet: u32) -> Result<Vec<i32>>;
}

fn sa_error(e: libsais::LibsaisError) -> Error {
    Error::Config(format!("building a suffix array failed ({e:?})"))
}

impl Symbol for u8 {
    const SEP: u8 = BYTE_SEP;
    fn suffix_array(part: &[u8], _alphabet: u32) -> Result<Vec<i32>> {
        let sa = SuffixArrayConstruction::for_text(part).in_owned_buffer32().single_threaded().run();
        Ok(sa.map_err(sa_error)?.into_vec())
    }
}

impl Symbol for u32 {
    const SEP: u32 = 0;
    fn suffix_array(part: &[u32], alphabet: u32) -> Result<Vec<i32>> {
        let mut text: Vec<i32> = part.iter().map(|&s| s as i32).collect();
        let c = SuffixArrayConstruction::for_text_mut(&mut text).in_owned_buffer32().single_threaded();
        // SAFETY: every id is below the alphabet size (ids are dense, from
        // 0 to the vocabulary's size) and none is negative (ids < 2^31).
        let c = unsafe { c.with_alphabet_size(AlphabetSize::new(alphabet as i32)) };
        Ok(c.run().map_err(sa_error)?.into_vec())
    }
}

/// A mapped file of little-endian u32 token ids, as a slice.
pub(crate) fn as_u32(m: &memmap2::Mmap) -> &[u32] {
    const { assert!(cfg!(target_endian = "little"), "token ids are written little-endian") };
    let ptr = m.as_ptr();
    assert!(
        (ptr as usize).is_multiple_of(4) && m.len().is_multiple_of(4),
        "a map of u32s is page-aligned and whole"
    );
    // SAFETY: the map is aligned for u32 and its length a multiple of 4;
    // any bit pattern is a u32; the slice borrows the map.
    unsafe { std::slice::from_raw_parts(ptr.cast::<u32>(), m.len() / 4) }
}

/// A bit per corpus symbol.
#[derive(Debug, Clone)]
pub(crate) struct Bits {
    words: Vec<u64>,
}

impl Bits {
    fn new(n: u64) -> Bits {
        Bits { words: vec![0; n.div_ceil(64) as usize] }
    }

    fn set(&mut self, i: u64) {
        self.words[(i / 64) as usize] |= 1 << (i % 64);
    }

    fn get(&self, i: u64) -> bool {
        self.words[(i / 64) as usize] >> (i % 64) & 1 == 1
    }

    /// Sets bits `a..b`.
    fn set_range(&mut self, a: u64, b: u64) {
        let mut i = a;
        while i < b {
            if i.is_multiple_of(64) && b - i >= 64 {
                self.words[(i / 64) as usize] = u64::MAX;
                i += 64;
            } else {
                self.set(i);
                i += 1;
            }
        }
    }

    /// How many bits are set.
    pub(crate) fn count(&self) -> u64 {
        self.words.iter().map(|w| w.count_ones() as u64).sum()
    }

    /// The set bits in order.
    fn ones(&self) -> impl Iterator<Item = u64> + '_ {
        self.words.iter().enumerate().flat_map(|(wi, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                (w != 0).then(|| {
                    let b = w.trailing_zeros() as u64;
                    w &= w - 1;
                    wi as u64 * 64 + b
                })
            })
        })
    }

    /// The maximal runs of set bits within `start..end`.
    pub(crate) fn runs(&self, start: u64, end: u64) -> Vec<Range<u64>> {
        let mut out = Vec::new();
        let mut run: Option<u64> = None;
        let mut i = start;
        while i < end {
            let w = self.words[(i / 64) as usize];
            if i.is_multiple_of(64) && end - i >= 64 && (w == 0 || w == u64::MAX) {
                match (w == 0, run) {
                    (true, Some(s)) => {
                        out.push(s..i);
                        run = None;
                    }
                    (false, None) => run = Some(i),
                    _ => {}
                }
                i += 64;
                continue;
            }
            match (self.get(i), run) {
                (true, None) => run = Some(i),
                (false, Some(s)) => {
                    out.push(s..i);
                    run = None;
                }
                _ => {}
            }
            i += 1;
        }
        if let Some(s) = run {
            out.push(s..end);
        }
        out
    }
}

/// The starts of removed spans.
#[derive(Debug)]
pub(crate) struct Marks {
    starts: Bits,
    n: u64,
    /// How many suffix arrays were built.
    pub(crate) parts: usize,
}

impl Marks {
    /// The symbols covered by a span of `l` from a marked start.
    pub(crate) fn cover(&self, l: usize) -> Bits {
        let mut out = Bits::new(self.n);
        let mut covered = 0u64;
        for p in self.starts.ones() {
            let end = p + l as u64;
            out.set_range(p.max(covered), end);
            covered = covered.max(end);
        }
        out
    }
}

/// Finds the starts of removed spans of `l` symbols in `text`, whose
/// documents start at `starts` (and end with a separator), building suffix
/// arrays of at most `part` symbols (a longer document gets one of its own).
pub(crate) fn find<S: Symbol>(
    text: &[S],
    starts: &[u64],
    l: usize,
    keep: KeepSpan,
    part: u64,
    tmp: &Path,
    alphabet: u32,
) -> Result<Marks> {
    let n = text.len() as u64;
    let mut marks = Bits::new(n);
    // Parts: whole documents, each at most `part` symbols unless one
    // document is longer.
    let mut parts: Vec<Range<u64>> = Vec::new();
    let mut a = 0u64;
    for w in starts.windows(2) {
        if w[1] - w[0] > i32::MAX as u64 - 1 {
            return Err(Error::Config(format!(
                "a document of {} symbols: at most 2^31 - 2 in one suffix array; split it",
                w[1] - w[0]
            )));
        }
        if w[1] - a > part && w[0] > a {
            parts.push(a..w[0]);
            a = w[0];
        }
    }
    if a < n {
        parts.push(a..n);
    }
    let mut scan = Scan { text, l, keep, group: Vec::new(), marks: &mut marks };
    if parts.len() <= 1 {
        if let Some(p) = parts.first() {
            let sa = S::suffix_array(&text[p.start as usize..p.end as usize], alphabet)?;
            // Suffixes in order are text positions at random: fetch each
            // window some steps ahead, or every comparison waits on memory.
            const AHEAD: usize = 16;
            for (i, &s) in sa.iter().enumerate() {
                if let Some(&next) = sa.get(i + AHEAD) {
                    prefetch(text, p.start as usize + next as usize);
                }
                scan.push(p.start + s as u64);
            }
            scan.flush();
        }
        return Ok(Marks { starts: marks, n, parts: parts.len() });
    }
    // Each part's suffix array to a file, as global positions.
    let io = |e| Error::io(tmp, e);
    let mut files = Vec::with_capacity(parts.len());
    for p in &parts {
        let sa = S::suffix_array(&text[p.start as usize..p.end as usize], alphabet)?;
        let mut w = BufWriter::with_capacity(1 << 20, tempfile::tempfile_in(tmp).map_err(io)?);
        for &s in &sa {
            w.write_all(&(p.start + s as u64).to_le_bytes()).map_err(io)?;
        }
        let mut f = w.into_inner().map_err(|e| io(e.into_error()))?;
        f.rewind().map_err(io)?;
        files.push(BufReader::with_capacity(1 << 16, f));
    }
    // Merged by their first l symbols.
    let next = |r: &mut BufReader<File>| -> Result<Option<u64>> {
        let mut b = [0u8; 8];
        match r.read_exact(&mut b) {
            Ok(()) => Ok(Some(u64::from_le_bytes(b))),
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(None),
            Err(e) => Err(io(e)),
        }
    };
    let mut heap = BinaryHeap::with_capacity(files.len());
    for (src, f) in files.iter_mut().enumerate() {
        if let Some(pos) = next(f)? {
            heap.push(Head { pos, src, text, l });
        }
    }
    while let Some(Head { pos, src, .. }) = heap.pop() {
        scan.push(pos);
        if let Some(pos) = next(&mut files[src])? {
            heap.push(Head { pos, src, text, l });
        }
    }
    scan.flush();
    Ok(Marks { starts: marks, n, parts: parts.len() })
}

/// Asks the CPU to bring `text[at..]` into the cache.
#[inline]
fn prefetch<S>(text: &[S], at: usize) {
    if let Some(s) = text.get(at) {
        crate::simd::prefetch(s);
    }
}

/// The first `l` symbols at `p` (fewer at the end of the text).
fn window<S: Symbol>(text: &[S], p: u64, l: usize) -> &[S] {
    let p = p as usize;
    &text[p..(p + l).min(text.len())]
}

/// A part's next position in the merge: the least window first.
struct Head<'t, S: Symbol> {
    pos: u64,
    src: usize,
    text: &'t [S],
    l: usize,
}

impl<S: Symbol> Ord for Head<'_, S> {
    fn cmp(&self, o: &Self) -> Ordering {
        // Reversed: BinaryHeap pops the greatest.
        window(o.text, o.pos, o.l).cmp(window(self.text, self.pos, self.l)).then(o.src.cmp(&self.src))
    }
}

impl<S: Symbol> PartialOrd for Head<'_, S> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl<S: Symbol> PartialEq for Head<'_, S> {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}

impl<S: Symbol> Eq for Head<'_, S> {}

/// Positions in window order, grouped by equal whole windows (no
/// separator in them); each group of two or more marks its removed starts.
struct Scan<'a, 't, S: Symbol> {
    text: &'t [S],
    l: usize,
    keep: KeepSpan,
    group: Vec<u64>,
    marks: &'a mut Bits,
}

impl<S: Symbol> Scan<'_, '_, S> {
    fn push(&mut self, p: u64) {
        let w = window(self.text, p, self.l);
        if let Some(&first) = self.group.first() {
            if w == window(self.text, first, self.l) {
                self.group.push(p);
                return;
            }
            self.flush();
        }
        if w.len() == self.l && !w.contains(&S::SEP) {
            self.group.push(p);
        }
    }

    fn flush(&mut self) {
        if self.group.len() >= 2 {
            let first = *self.group.iter().min().expect("a group");
            for &p in &self.group {
                if self.keep == KeepSpan::None || p != first {
                    self.marks.set(p);
                }
            }
        }
        self.group.clear();
    }
}
