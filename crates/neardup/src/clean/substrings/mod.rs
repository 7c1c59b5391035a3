//! Exact substring dedup: every span of at least L bytes (or T tokens)
//! that occurs more than once in the corpus is removed — every occurrence
//! after the first in corpus order ([`KeepSpan::First`]), or all of them
//! ([`KeepSpan::None`]) — as google-research's `deduplicate-text-datasets`
//! does, but never cutting a word or a UTF-8 character.
//!
//! The corpus is written once as a sequence of symbols (the bytes of each
//! text, or the ids of its [`tokens`]), each document followed by a
//! separator no text contains, so no span crosses documents. Repeats are
//! found with suffix arrays (libsais): the sequence is cut into parts that
//! fit the memory budget, each part's suffix array is built, and when
//! there are several their positions are merged in the order of their
//! first L symbols (google-research's `merge` step). Positions whose first
//! L symbols are equal are then adjacent: each such group but its earliest
//! member (or every member) starts a removed span of L symbols. Finally a
//! removed span is shrunk to token boundaries ([`tokens::snap`]).
//!
//! ```
//! use neardup::clean::substrings::{KeepSpan, Measure, Substrings};
//!
//! let job = Substrings::new(Measure::Bytes(20)).keep(KeepSpan::First);
//! let docs = ["Intro one! Subscribe to our newsletter today! Bye.", "Other text. Subscribe to our newsletter today!"];
//! let mut corpus = job.corpus(&std::env::temp_dir())?;
//! for d in &docs {
//!     corpus.push(d)?;
//! }
//! let corpus = corpus.finish()?;
//! let removal = job.find(&corpus, 1 << 30, &std::env::temp_dir())?;
//! let spans = removal.spans(&corpus, 1, docs[1])?;
//! assert_eq!(spans.iter().map(|r| &docs[1][r.clone()]).collect::<Vec<_>>(), ["Subscribe to our newsletter today!"]);
//! assert!(removal.spans(&corpus, 0, docs[0])?.is_empty(), "the first occurrence stays");
//! # Ok::<(), neardup::Error>(())
//! ```

mod sa;
pub mod tokens;

use std::fs::File;
use std::io::{BufWriter, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};

use hashbrown::HashMap;

use crate::error::{Error, Result};

/// How long a repeated span must be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measure {
    /// At least this many bytes of UTF-8 text.
    Bytes(usize),
    /// At least this many [`tokens`] (a word, or one Chinese character).
    Tokens(usize),
}

impl Measure {
    /// The measure when the caller names none: 100 bytes.
    pub const DEFAULT: Measure = Measure::Bytes(100);

    /// The measure a front end's two options give: at least `min_bytes`
    /// bytes or `min_tokens` tokens, [`DEFAULT`](Self::DEFAULT) for
    /// neither.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] when both are given.
    pub fn of(min_bytes: Option<usize>, min_tokens: Option<usize>) -> Result<Measure> {
        match (min_bytes, min_tokens) {
            (Some(_), Some(_)) => Err(Error::Config("give min_bytes or min_tokens, not both".into())),
            (None, Some(t)) => Ok(Measure::Tokens(t)),
            (Some(b), None) => Ok(Measure::Bytes(b)),
            (None, None) => Ok(Measure::DEFAULT),
        }
    }

    fn len(self) -> usize {
        match self {
            Measure::Bytes(n) | Measure::Tokens(n) => n,
        }
    }
}

/// Which occurrences of a repeated span are removed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum KeepSpan {
    /// Every occurrence but the first in corpus order (the default).
    #[default]
    First,
    /// Every occurrence.
    None,
}

impl std::str::FromStr for KeepSpan {
    type Err = Error;

    /// `first` or `none`.
    fn from_str(s: &str) -> Result<KeepSpan> {
        match s {
            "first" => Ok(KeepSpan::First),
            "none" => Ok(KeepSpan::None),
            k => Err(Error::Config(format!("keep is \"first\" or \"none\", not {k:?}"))),
        }
    }
}

/// The substring job's settings.
#[derive(Clone, Copy, Debug)]
pub struct Substrings {
    measure: Measure,
    keep: KeepSpan,
}

impl Substrings {
    /// Removing repeated spans of at least `measure`, keeping the first.
    pub fn new(measure: Measure) -> Substrings {
        Substrings { measure, keep: KeepSpan::First }
    }

    /// Sets which occurrences are removed.
    pub fn keep(mut self, keep: KeepSpan) -> Self {
        self.keep = keep;
        self
    }

    /// The minimum length.
    pub fn measure(&self) -> Measure {
        self.measure
    }

    /// Checks the settings.
    ///
    /// # Errors
    ///
    /// A length of 0.
    pub fn validate(&self) -> Result<()> {
        if self.measure.len() == 0 {
            return Err(Error::Config("the shortest repeated span must be at least 1 long".into()));
        }
        Ok(())
    }

    /// Starts the corpus, written to an unnamed temporary file in `dir`.
    ///
    /// # Errors
    ///
    /// The file cannot be created.
    pub fn corpus(&self, dir: &Path) -> Result<CorpusBuilder> {
        self.validate()?;
        let file = tempfile::tempfile_in(dir).map_err(|e| Error::io(dir, e))?;
        Ok(CorpusBuilder {
            tokens: matches!(self.measure, Measure::Tokens(_)),
            out: BufWriter::with_capacity(1 << 20, file),
            starts: Vec::new(),
            n: 0,
            vocab: HashMap::new(),
            dir: dir.to_owned(),
        })
    }

    /// Finds what to remove from `corpus`, holding about `memory` bytes of
    /// suffix arrays at once (parts beyond it go to files in `tmp`).
    ///
    /// # Errors
    ///
    /// A temporary file cannot be written or read; a document too long
    /// for one suffix array (2^31 symbols).
    pub fn find(&self, corpus: &Corpus, memory: u64, tmp: &Path) -> Result<Removal> {
        let l = self.measure.len();
        let per_symbol = if corpus.tokens { 12 } else { 5 };
        let part = (memory / per_symbol).clamp(1 << 12, i32::MAX as u64 - 1);
        let marks = match &corpus.symbols {
            Symbols::Bytes(m) => sa::find(&m[..], &corpus.starts, l, self.keep, part, tmp, corpus.alphabet)?,
            Symbols::Tokens(m) => {
                sa::find(sa::as_u32(m), &corpus.starts, l, self.keep, part, tmp, corpus.alphabet)?
            }
            Symbols::Empty => sa::find::<u8>(&[], &corpus.starts, l, self.keep, part, tmp, corpus.alphabet)?,
        };
        Ok(Removal { removed: marks.cover(l), parts: marks.parts })
    }
}

/// Writes a corpus's symbols, a document at a time.
#[derive(Debug)]
pub struct CorpusBuilder {
    tokens: bool,
    out: BufWriter<File>,
    starts: Vec<u64>,
    n: u64,
    vocab: HashMap<Box<str>, u32>,
    dir: PathBuf,
}

impl CorpusBuilder {
    /// Adds the next document.
    ///
    /// # Errors
    ///
    /// The file cannot be written.
    pub fn push(&mut self, text: &str) -> Result<()> {
        let io = |e| Error::io(&self.dir, e);
        self.starts.push(self.n);
        if self.tokens {
            for t in tokens::tokens(text) {
                let next = self.vocab.len() as u32 + 1;
                let id = *self.vocab.entry_ref(&text[t]).or_insert(next);
                self.out.write_all(&id.to_le_bytes()).map_err(io)?;
                self.n += 1;
            }
            self.out.write_all(&0u32.to_le_bytes()).map_err(io)?;
        } else {
            self.out.write_all(text.as_bytes()).map_err(io)?;
            self.out.write_all(&[sa::BYTE_SEP]).map_err(io)?;
            self.n += text.len() as u64;
        }
        self.n += 1;
        Ok(())
    }

    /// Ends the corpus.
    ///
    /// # Errors
    ///
    /// The file cannot be written or mapped.
    pub fn finish(self) -> Result<Corpus> {
        let dir = self.dir;
        let file = self.out.into_inner().map_err(|e| Error::io(&dir, e.into_error()))?;
        let alphabet = if self.tokens { self.vocab.len() as u32 + 1 } else { 256 };
        let map = if self.n == 0 {
            None
        } else {
            // SAFETY: the file is ours alone (unnamed, just written) and
            // not changed while mapped.
            Some(unsafe { memmap2::Mmap::map(&file) }.map_err(|e| Error::io(&dir, e))?)
        };
        let symbols = match map {
            Some(m) if self.tokens => Symbols::Tokens(m),
            Some(m) => Symbols::Bytes(m),
            None => Symbols::Empty,
        };
        let mut starts = self.starts;
        starts.push(self.n);
        Ok(Corpus { symbols, starts, tokens: self.tokens, alphabet })
    }
}

#[derive(Debug)]
enum Symbols {
    Empty,
    Bytes(memmap2::Mmap),
    Tokens(memmap2::Mmap),
}

/// A corpus's symbols, mapped from their file.
#[derive(Debug)]
pub struct Corpus {
    symbols: Symbols,
    /// Where each document starts, and the end (one more entry).
    starts: Vec<u64>,
    tokens: bool,
    alphabet: u32,
}

impl Corpus {
    /// How many documents.
    pub fn documents(&self) -> usize {
        self.starts.len() - 1
    }

    /// How many symbols (bytes or tokens, with one separator a document).
    pub fn symbols(&self) -> u64 {
        *self.starts.last().expect("an end")
    }
}

/// What to remove: the symbols covered by a removed span.
#[derive(Debug)]
pub struct Removal {
    removed: sa::Bits,
    parts: usize,
}

impl Removal {
    /// How many suffix arrays were built (1 when the corpus fit the budget).
    pub fn parts(&self) -> usize {
        self.parts
    }

    /// Symbols removed, before shrinking spans to token boundaries.
    pub fn removed_symbols(&self) -> u64 {
        self.removed.count()
    }

    /// The byte spans to cut from document `doc`, whose text is `text` (as
    /// it was pushed), in order, on token boundaries.
    ///
    /// # Errors
    ///
    /// `text` is not the document pushed (its length differs): the input
    /// changed between the passes.
    pub fn spans(&self, corpus: &Corpus, doc: usize, text: &str) -> Result<Vec<Range<usize>>> {
        let start = corpus.starts[doc];
        let len = (corpus.starts[doc + 1] - start - 1) as usize;
        let toks = tokens::tokens(text);
        let want = if corpus.tokens { toks.len() } else { text.len() };
        if want != len {
            return Err(Error::Config(format!(
                "document {} is not the one read first ({want} {} instead of {len}): the input changed \
                 while it was read",
                doc + 1,
                if corpus.tokens { "tokens" } else { "bytes" }
            )));
        }
        let mut out: Vec<Range<usize>> = Vec::new();
        for run in self.removed.runs(start, start + len as u64) {
            let (a, b) = ((run.start - start) as usize, (run.end - start) as usize);
            let span = if corpus.tokens {
                Some(toks[a].start..toks[b - 1].end)
            } else {
                tokens::snap(text, &toks, a..b)
            };
            if let Some(s) = span {
                match out.last_mut() {
                    Some(last) if last.end >= s.start => last.end = last.end.max(s.end),
                    _ => out.push(s),
                }
            }
        }
        Ok(out)
    }
}

/// `text` with `spans` (ascending, disjoint) cut out.
pub fn cut(text: &str, spans: &[Range<usize>]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for s in spans {
        out.push_str(&text[at..s.start]);
        at = s.end;
    }
    out.push_str(&text[at..]);
    out
}

#[cfg(test)]
mod tests;
