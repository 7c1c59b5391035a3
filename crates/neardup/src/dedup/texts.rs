//! [`TextColumn`]: the texts of a dedup run for verification, held in
//! memory up to a budget and then moved to an unnamed temporary file,
//! read back one text at a time (one positioned read). Memory beyond the
//! budget is 8 bytes a text (where it ends).

use std::borrow::Cow;
use std::fs::File;
use std::os::unix::fs::FileExt;

use super::spill::{spill_error, SpillTo};
use super::verify::Texts;
use crate::error::{Error, Result};

/// The size of a block of held texts, in bytes.
const BLOCK: usize = 8 << 20;

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
#[derive(Debug, Default)]
pub struct TextColumn {
    /// Where each text starts, in bytes from the first text's start (a
    /// text pushed as the same as an earlier one shares its bytes).
    starts: Vec<u64>,
    /// Each text's length in bytes.
    lens: Vec<u32>,
    /// The texts after the file's part (every text while not spilled), in
    /// blocks that are never grown (no text is copied as they fill).
    held: Vec<String>,
    /// The offset of each held block's first byte.
    block_starts: Vec<u64>,
    /// Bytes held.
    held_bytes: u64,
    /// The offset of the first held byte (the file's length).
    held_from: u64,
    to: Option<SpillTo>,
    file: Option<File>,
}

impl TextColumn {
    /// An empty column, always in memory.
    pub fn new() -> TextColumn {
        TextColumn::default()
    }

    /// An empty column whose texts move to a temporary file in `to.dir`
    /// once they take more than `to.limit` bytes.
    pub fn spilling(to: SpillTo) -> TextColumn {
        TextColumn { to: Some(to), ..TextColumn::default() }
    }

    /// Appends a text.
    ///
    /// # Errors
    ///
    /// The temporary file cannot be made or written.
    pub fn push(&mut self, text: &str) -> Result<()> {
        let len = u32::try_from(text.len())
            .map_err(|_| Error::Config(format!("text {} is over 4 GiB", self.starts.len())))?;
        let end = self.held_from + self.held_bytes;
        match self.held.last_mut() {
            Some(b) if b.capacity() - b.len() >= text.len() => b.push_str(text),
            _ => {
                let mut block = String::with_capacity(BLOCK.max(text.len()));
                block.push_str(text);
                self.held.push(block);
                self.block_starts.push(end);
            }
        }
        self.starts.push(end);
        self.lens.push(len);
        self.held_bytes += text.len() as u64;
        match &self.to {
            Some(to) if self.held_bytes > to.limit => self.spill(),
            _ => Ok(()),
        }
    }

    /// Appends a text known to be the same as text `earlier` (an exact
    /// copy): it shares that text's bytes, and [`Texts::same_text`] says
    /// so, which spares its verification.
    ///
    /// # Panics
    ///
    /// If `earlier` is not an index of a text pushed before.
    pub fn push_same(&mut self, earlier: u32) {
        let e = earlier as usize;
        self.starts.push(self.starts[e]);
        self.lens.push(self.lens[e]);
    }

    /// Moves the held texts to the file.
    fn spill(&mut self) -> Result<()> {
        let to = self.to.as_ref().expect("a spilling column");
        if self.file.is_none() {
            self.file = Some(tempfile::tempfile_in(&to.dir).map_err(|e| spill_error(&to.dir, e, 0))?);
        }
        let file = self.file.as_ref().expect("opened");
        for (block, &at) in self.held.iter().zip(&self.block_starts) {
            file.write_all_at(block.as_bytes(), at).map_err(|e| spill_error(&to.dir, e, at))?;
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

    /// How many texts.
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// Bytes of texts written to the temporary file (0 in memory).
    pub fn spilled_bytes(&self) -> u64 {
        self.held_from
    }
}

impl Texts for TextColumn {
    fn count(&self) -> usize {
        self.len()
    }

    fn same_text(&self, a: u32, b: u32) -> bool {
        let (a, b) = (a as usize, b as usize);
        (self.starts[a], self.lens[a]) == (self.starts[b], self.lens[b])
    }

    fn text(&self, i: u32) -> Result<Cow<'_, str>> {
        let i = i as usize;
        let start = self.starts[i];
        let end = start + u64::from(self.lens[i]);
        if start == end {
            return Ok(Cow::Borrowed(""));
        }
        if start >= self.held_from {
            let b = self.block_starts.partition_point(|&s| s <= start) - 1;
            let at = (start - self.block_starts[b]) as usize;
            return Ok(Cow::Borrowed(&self.held[b][at..at + (end - start) as usize]));
        }
        let (file, to) = (self.file.as_ref().expect("spilled"), self.to.as_ref().expect("spilling"));
        let mut bytes = vec![0u8; (end - start) as usize];
        file.read_exact_at(&mut bytes, start).map_err(|e| Error::io(&to.dir, e))?;
        String::from_utf8(bytes).map(Cow::Owned).map_err(|_| Error::Spill {
            dir: to.dir.clone(),
            message: format!("text {i} in the temporary file is damaged (not UTF-8)"),
        })
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
}
