//! Per-document columns a dedup run keeps for verification, held in
//! memory up to a budget and then moved to an unnamed temporary file, read
//! back one entry at a time (one positioned read): [`TextColumn`] (texts)
//! and [`ShingleColumn`] (the shingle hashes signing made). Memory beyond
//! the budget is 12 bytes an entry.

use std::borrow::Cow;
use std::fs::File;
use std::os::unix::fs::FileExt;

use super::spill::{spill_error, SpillTo};
use super::verify::Texts;
use crate::error::{Error, Result};

/// The size of a block of held bytes.
const BLOCK: usize = 8 << 20;

/// Byte strings by position, held in blocks up to a budget, then moved to
/// a temporary file: what both columns store.
#[derive(Debug, Default)]
struct ByteColumn {
    /// Where each entry starts, in bytes from the first entry's start (an
    /// entry pushed as the same as an earlier one shares its bytes).
    starts: Vec<u64>,
    /// Each entry's length in bytes.
    lens: Vec<u32>,
    /// The bytes after the file's part (everything while not spilled), in
    /// blocks that are never grown (nothing is copied as they fill).
    held: Vec<Vec<u8>>,
    /// The offset of each held block's first byte.
    block_starts: Vec<u64>,
    /// Bytes held.
    held_bytes: u64,
    /// The offset of the first held byte (the file's length).
    held_from: u64,
    to: Option<SpillTo>,
    file: Option<File>,
}

impl ByteColumn {
    fn spilling(to: SpillTo) -> ByteColumn {
        ByteColumn { to: Some(to), ..ByteColumn::default() }
    }

    /// Appends an entry; `what` names it in errors.
    fn push(&mut self, bytes: &[u8], what: &str) -> Result<()> {
        let len = u32::try_from(bytes.len())
            .map_err(|_| Error::Config(format!("{what} {} is over 4 GiB", self.starts.len())))?;
        let end = self.held_from + self.held_bytes;
        match self.held.last_mut() {
            Some(b) if b.capacity() - b.len() >= bytes.len() => b.extend_from_slice(bytes),
            _ => {
                let mut block = Vec::with_capacity(BLOCK.max(bytes.len()));
                block.extend_from_slice(bytes);
                self.held.push(block);
                self.block_starts.push(end);
            }
        }
        self.starts.push(end);
        self.lens.push(len);
        self.held_bytes += bytes.len() as u64;
        match &self.to {
            Some(to) if self.held_bytes > to.limit => self.spill(),
            _ => Ok(()),
        }
    }

    /// Appends an entry that shares entry `earlier`'s bytes.
    fn push_same(&mut self, earlier: u32) {
        let e = earlier as usize;
        self.starts.push(self.starts[e]);
        self.lens.push(self.lens[e]);
    }

    /// Moves the held bytes to the file.
    fn spill(&mut self) -> Result<()> {
        let to = self.to.as_ref().expect("a spilling column");
        if self.file.is_none() {
            self.file = Some(tempfile::tempfile_in(&to.dir).map_err(|e| spill_error(&to.dir, e, 0))?);
        }
        let file = self.file.as_ref().expect("opened");
        for (block, &at) in self.held.iter().zip(&self.block_starts) {
            file.write_all_at(block, at).map_err(|e| spill_error(&to.dir, e, at))?;
        }
        self.held_from += self.held_bytes;
        self.held_bytes = 0;
        // The last block goes on filling from where it was.
        let last = self.held.pop().filter(|b| b.capacity() <= BLOCK).map(|mut b| {
            b.clear();
            b
        });
        self.held.clear();
        self.block_starts.clear();
        if let Some(b) = last {
            self.held.push(b);
            self.block_starts.push(self.held_from);
        }
        Ok(())
    }

    /// Entry `i`: borrowed when held, read from the file when spilled.
    fn get(&self, i: u32) -> Result<Cow<'_, [u8]>> {
        let i = i as usize;
        let start = self.starts[i];
        let end = start + u64::from(self.lens[i]);
        if start == end {
            return Ok(Cow::Borrowed(&[]));
        }
        if start >= self.held_from {
            let b = self.block_starts.partition_point(|&s| s <= start) - 1;
            let at = (start - self.block_starts[b]) as usize;
            return Ok(Cow::Borrowed(&self.held[b][at..at + (end - start) as usize]));
        }
        let (file, to) = (self.file.as_ref().expect("spilled"), self.to.as_ref().expect("spilling"));
        let mut bytes = vec![0u8; (end - start) as usize];
        file.read_exact_at(&mut bytes, start).map_err(|e| Error::io(&to.dir, e))?;
        Ok(Cow::Owned(bytes))
    }

    /// Whether entries `a` and `b` were pushed as the same.
    fn same(&self, a: u32, b: u32) -> bool {
        let (a, b) = (a as usize, b as usize);
        (self.starts[a], self.lens[a]) == (self.starts[b], self.lens[b])
    }

    /// A damaged entry of the temporary file.
    fn damaged(&self, message: String) -> Error {
        let dir = self.to.as_ref().map(|t| t.dir.clone()).unwrap_or_default();
        Error::Spill { dir, message }
    }
}

/// A per-document column of what verification reads, of one kind
/// ([`Text`] or [`Shingles`]): [`TextColumn`] or [`ShingleColumn`].
#[derive(Debug)]
pub struct Column<K> {
    bytes: ByteColumn,
    kind: std::marker::PhantomData<K>,
}

/// What a [`TextColumn`] holds: texts.
#[derive(Debug)]
pub enum Text {}

/// What a [`ShingleColumn`] holds: each document's shingle hashes.
#[derive(Debug)]
pub enum Shingles {}

impl<K> Default for Column<K> {
    fn default() -> Self {
        Column { bytes: ByteColumn::default(), kind: std::marker::PhantomData }
    }
}

impl<K> Column<K> {
    /// An empty column, always in memory.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty column whose entries move to a temporary file in `to.dir`
    /// once they take more than `to.limit` bytes.
    pub fn spilling(to: SpillTo) -> Self {
        Column { bytes: ByteColumn::spilling(to), kind: std::marker::PhantomData }
    }

    /// Appends a document known to have the same text as document
    /// `earlier` (an exact copy): it shares that entry's bytes, and
    /// [`Texts::same_text`] says so, which spares its verification.
    ///
    /// # Panics
    ///
    /// If `earlier` is not an index pushed before.
    pub fn push_same(&mut self, earlier: u32) {
        self.bytes.push_same(earlier);
    }

    /// How many documents.
    pub fn len(&self) -> usize {
        self.bytes.starts.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.bytes.starts.is_empty()
    }

    /// Bytes written to the temporary file (0 in memory).
    pub fn spilled_bytes(&self) -> u64 {
        self.bytes.held_from
    }
}

/// Texts by position (what verification reads), held in memory up to a
/// budget and then moved to an unnamed temporary file, read back one text
/// at a time by a positioned read. Memory beyond the budget is 12 bytes a
/// text; an exact copy pushed as such ([`push_same`](Self::push_same))
/// takes no more.
///
/// ```
/// use neardup::dedup::{SpillTo, TextColumn, Texts};
///
/// let dir = tempfile::tempdir()?;
/// let mut texts = TextColumn::spilling(SpillTo { dir: dir.path().into(), limit: 8 });
/// for t in ["first text", "第二", ""] {
///     texts.push(t)?;
/// }
/// assert!(texts.spilled_bytes() > 0);
/// assert_eq!((texts.text(0)?, texts.text(1)?, texts.text(2)?), ("first text".into(), "第二".into(), "".into()));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub type TextColumn = Column<Text>;

impl Column<Text> {
    /// Appends a text.
    ///
    /// # Errors
    ///
    /// The temporary file cannot be made or written.
    pub fn push(&mut self, text: &str) -> Result<()> {
        self.bytes.push(text.as_bytes(), "text")
    }
}

impl Texts for TextColumn {
    fn count(&self) -> usize {
        self.len()
    }

    fn same_text(&self, a: u32, b: u32) -> bool {
        self.bytes.same(a, b)
    }

    fn text(&self, i: u32) -> Result<Cow<'_, str>> {
        let damaged = || self.bytes.damaged(format!("text {i} in the temporary file is damaged (not UTF-8)"));
        match self.bytes.get(i)? {
            Cow::Borrowed(b) => std::str::from_utf8(b).map(Cow::Borrowed).map_err(|_| damaged()),
            Cow::Owned(b) => String::from_utf8(b).map(Cow::Owned).map_err(|_| damaged()),
        }
    }
}

/// Each document's verification shingles as signing made them
/// ([`Detector::sign_keeping_shingles`](crate::detector::Detector::sign_keeping_shingles)),
/// in place of its text: verification then makes each set from these
/// hashes instead of tokenizing the text again ([`Texts::shingles`]). Held
/// and spilled as [`TextColumn`] holds texts (8 bytes a shingle); it keeps
/// no text, so [`Texts::text`] is an error.
///
/// ```
/// use neardup::dedup::{ShingleColumn, ShingleJaccard, Texts, Verifier};
/// use neardup::detector::Detector;
///
/// let d = Detector::preset("default")?;
/// let texts = ["the quick brown fox jumps over the lazy dog", "the quick brown fox jumped over the lazy dog"];
/// let mut column = ShingleColumn::new();
/// for t in texts {
///     let mut hashes = Vec::new();
///     d.sign_keeping_shingles(t, false, &mut hashes)?;
///     column.push(&hashes)?;
/// }
/// let stored = ShingleJaccard::new(d.stages(), &column, 0.3);
/// let from_texts = ShingleJaccard::new(d.stages(), &texts, 0.3);
/// assert_eq!(stored.set(1)?, from_texts.set(1)?);
/// assert!(column.text(0).is_err());
/// # Ok::<(), neardup::Error>(())
/// ```
pub type ShingleColumn = Column<Shingles>;

impl Column<Shingles> {
    /// Appends a document's shingle hashes.
    ///
    /// # Errors
    ///
    /// The temporary file cannot be made or written.
    pub fn push(&mut self, hashes: &[u64]) -> Result<()> {
        let bytes: Vec<u8> = hashes.iter().flat_map(|h| h.to_le_bytes()).collect();
        self.bytes.push(&bytes, "shingle list")
    }

    /// Document `i`'s shingle hashes, as pushed.
    ///
    /// # Errors
    ///
    /// Hashes that spilled to a file cannot be read back.
    pub fn get(&self, i: u32) -> Result<Vec<u64>> {
        let bytes = self.bytes.get(i)?;
        if bytes.len() % 8 != 0 {
            return Err(self.bytes.damaged(format!("shingle list {i} in the temporary file is damaged")));
        }
        Ok(bytes.chunks_exact(8).map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes"))).collect())
    }
}

impl Texts for ShingleColumn {
    fn count(&self) -> usize {
        self.len()
    }

    fn text(&self, i: u32) -> Result<Cow<'_, str>> {
        Err(Error::Config(format!("document {i}: a ShingleColumn keeps shingle hashes, not texts")))
    }

    fn same_text(&self, a: u32, b: u32) -> bool {
        self.bytes.same(a, b)
    }

    fn shingles(&self, i: u32) -> Option<Result<Vec<u64>>> {
        Some(self.get(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every text reads back as pushed, whatever the budget (never, at
    /// once, every few texts), with empty and multi-byte texts among them.
    #[test]
    fn texts_read_back_as_pushed() {
        let mut rng = neardup_testkit::Rng(3);
        let texts: Vec<String> = (0..500)
            .map(|i| match i % 7 {
                0 => String::new(),
                1 => "近似重复".repeat(rng.below(20) as usize),
                // Longer than a block.
                2 if i == 9 => "b".repeat(BLOCK + 10),
                _ => format!("text {i} {}", "x".repeat(rng.below(300) as usize)),
            })
            .collect();
        let dir = tempfile::tempdir().unwrap();
        for limit in [0, 1000, u64::MAX] {
            let mut c = TextColumn::spilling(SpillTo { dir: dir.path().into(), limit });
            for t in &texts {
                c.push(t).unwrap();
            }
            c.push_same(3);
            assert_eq!(c.spilled_bytes() > 0, limit < u64::MAX);
            for (i, t) in texts.iter().chain([&texts[3]]).enumerate() {
                assert_eq!(c.text(i as u32).unwrap(), t.as_str(), "{limit} {i}");
            }
            assert!(c.same_text(3, texts.len() as u32) && !c.same_text(3, 4));
        }
    }

    /// Shingle lists read back as pushed, held or spilled, empty ones and
    /// shared ones among them.
    #[test]
    fn shingles_read_back_as_pushed() {
        let mut rng = neardup_testkit::Rng(5);
        let lists: Vec<Vec<u64>> =
            (0..400u64).map(|i| (0..(i % 9) * rng.below(40)).map(|_| rng.next()).collect()).collect();
        let dir = tempfile::tempdir().unwrap();
        for limit in [0, 500, u64::MAX] {
            let mut c = ShingleColumn::spilling(SpillTo { dir: dir.path().into(), limit });
            for l in &lists {
                c.push(l).unwrap();
            }
            c.push_same(7);
            assert_eq!(c.spilled_bytes() > 0, limit < u64::MAX);
            for (i, l) in lists.iter().chain([&lists[7]]).enumerate() {
                assert_eq!(&c.get(i as u32).unwrap(), l, "{limit} {i}");
                assert_eq!(c.shingles(i as u32).unwrap().unwrap(), *l);
            }
            assert!(c.same_text(7, lists.len() as u32) && !c.same_text(7, 8));
            assert!(c.text(0).is_err());
        }
    }
}
