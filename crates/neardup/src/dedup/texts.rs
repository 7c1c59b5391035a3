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

/// Texts by position, in memory or (past a budget) in a temporary file;
/// see the [module](self) documentation.
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
    /// Where each text ends, in bytes from the first text's start.
    ends: Vec<u64>,
    /// The texts after the file's part (every text while not spilled).
    held: String,
    /// The offset of `held`'s first byte (the file's length).
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
        self.held.push_str(text);
        self.ends.push(self.held_from + self.held.len() as u64);
        match &self.to {
            Some(to) if self.held.len() as u64 > to.limit => self.spill(),
            _ => Ok(()),
        }
    }

    /// Moves the held texts to the file.
    fn spill(&mut self) -> Result<()> {
        let to = self.to.as_ref().expect("a spilling column");
        if self.file.is_none() {
            self.file = Some(tempfile::tempfile_in(&to.dir).map_err(|e| spill_error(&to.dir, e, 0))?);
        }
        let file = self.file.as_ref().expect("opened");
        file.write_all_at(self.held.as_bytes(), self.held_from)
            .map_err(|e| spill_error(&to.dir, e, self.held_from))?;
        self.held_from += self.held.len() as u64;
        self.held.clear();
        self.held.shrink_to(1 << 20);
        Ok(())
    }

    /// How many texts.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
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

    fn text(&self, i: u32) -> Result<Cow<'_, str>> {
        let i = i as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        let end = self.ends[i];
        if start >= self.held_from {
            let at = (start - self.held_from) as usize;
            return Ok(Cow::Borrowed(&self.held[at..at + (end - start) as usize]));
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
                _ => format!("text {i} {}", "x".repeat(rng.below(300) as usize)),
            })
            .collect();
        let dir = tempfile::tempdir().unwrap();
        for limit in [0, 1000, u64::MAX] {
            let mut c = TextColumn::spilling(SpillTo { dir: dir.path().into(), limit });
            for t in &texts {
                c.push(t).unwrap();
            }
            assert_eq!(c.spilled_bytes() > 0, limit < u64::MAX);
            for (i, t) in texts.iter().enumerate() {
                assert_eq!(c.text(i as u32).unwrap(), t.as_str(), "{limit} {i}");
            }
        }
    }
}
