//! The documents of a dedup run, as much of each as the outputs need (its
//! id, and its record for `kept.jsonl`): held in memory while they fit the
//! run's share of `--memory`, then moved to a temporary file in
//! `--tmp-dir` and read back once, in order, when the outputs are written.
//! Memory then stays the same whatever the corpus's size.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Seek, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde_json::Value;

/// Bytes a held document takes beyond its record and id text: the
/// vector's slot, the strings' and the value's headers.
const HELD_OVERHEAD: u64 = 80;

/// One document held in memory.
struct Doc {
    id: Value,
    raw: String,
}

/// The documents, in input order; see the [module](self) documentation.
pub struct DocStore {
    held: Vec<Doc>,
    held_bytes: u64,
    limit: u64,
    dir: PathBuf,
    spill: Option<BufWriter<File>>,
    spilled_bytes: u64,
    count: usize,
    /// The input's size, when known: about what the file will take.
    input_bytes: Option<u64>,
}

impl DocStore {
    /// No documents yet; past `limit` bytes they move to a file in `dir`.
    /// `input_bytes`, the input's size when known, goes into the message
    /// of a full disk.
    pub fn new(limit: u64, dir: &Path, input_bytes: Option<u64>) -> DocStore {
        DocStore {
            held: Vec::new(),
            held_bytes: 0,
            limit,
            dir: dir.to_owned(),
            spill: None,
            spilled_bytes: 0,
            count: 0,
            input_bytes,
        }
    }

    /// The documents a checkpoint kept in `path` ([`save`](Self::save)).
    ///
    /// # Errors
    ///
    /// The file cannot be opened.
    pub fn open_file(path: &Path, count: usize) -> Result<DocStore> {
        let file =
            File::open(path).with_context(|| format!("{}: cannot open the checkpoint", path.display()))?;
        let dir = path.parent().unwrap_or(Path::new(".")).to_owned();
        let mut store = DocStore::new(0, &dir, None);
        store.spill = Some(BufWriter::new(file));
        store.count = count;
        Ok(store)
    }

    /// Writes every document to `path` (a checkpoint's file), atomically.
    ///
    /// # Errors
    ///
    /// A file cannot be read or written.
    pub fn save(&mut self, path: &Path) -> Result<()> {
        let mut out = crate::output::Output::open(Some(path))?;
        self.for_each(|_, id, raw| {
            let id = match id {
                Id::Value(v) => v.to_string(),
                Id::Json(s) => s.to_owned(),
            };
            writeln!(out.writer(), "{id}\t{raw}")?;
            Ok(())
        })?;
        out.finish()
    }

    /// How many documents.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Bytes written to the temporary file.
    pub fn spilled_bytes(&self) -> u64 {
        self.spilled_bytes
    }

    /// Appends a document: its id and its record as one line of JSON.
    ///
    /// # Errors
    ///
    /// The temporary file cannot be made or written (a full disk names the
    /// folder).
    pub fn push(&mut self, id: Value, raw: String) -> Result<()> {
        self.count += 1;
        if self.spill.is_none() && self.input_bytes.is_some_and(|b| b > self.limit) {
            // Too big from the start: straight to the file, never held
            // (memory freed in many small pieces is not given back).
            self.start_spill()?;
        }
        if self.spill.is_some() {
            return self.write(&id, &raw);
        }
        self.held_bytes += raw.len() as u64 + HELD_OVERHEAD;
        self.held.push(Doc { id, raw });
        if self.held_bytes > self.limit {
            self.start_spill()?;
            for d in std::mem::take(&mut self.held) {
                self.write(&d.id, &d.raw)?;
            }
            self.held_bytes = 0;
        }
        Ok(())
    }

    /// Opens the temporary file.
    fn start_spill(&mut self) -> Result<()> {
        let file = tempfile::tempfile_in(&self.dir).map_err(|e| self.spill_error(e))?;
        self.spill = Some(BufWriter::with_capacity(1 << 20, file));
        Ok(())
    }

    /// Writes one document to the file: `ID<TAB>RECORD` (a JSON id has no
    /// raw tab or newline, and neither has a record of one line).
    fn write(&mut self, id: &Value, raw: &str) -> Result<()> {
        let line = format!("{id}\t{raw}\n");
        let w = self.spill.as_mut().expect("spilling");
        if let Err(e) = w.write_all(line.as_bytes()) {
            return Err(self.spill_error(e));
        }
        self.spilled_bytes += line.len() as u64;
        Ok(())
    }

    /// The error of a failed write to the temporary folder.
    fn spill_error(&self, e: std::io::Error) -> anyhow::Error {
        let free = neardup::dedup::free_bytes(&self.dir)
            .map_or(String::new(), |b| format!(" ({:.1} MB free)", b as f64 / 1e6));
        if e.kind() == std::io::ErrorKind::StorageFull || e.raw_os_error() == Some(28) {
            let need = self.input_bytes.map_or("about the corpus's size".into(), |b| {
                format!("about {:.1} MB, the corpus's size", b as f64 / 1e6)
            });
            anyhow::anyhow!(
                "{}: no space left in the temporary folder{free} after {:.1} MB of records; the \
                 records need {need}: free space there or choose another folder with --tmp-dir",
                self.dir.display(),
                self.spilled_bytes as f64 / 1e6
            )
        } else {
            anyhow::anyhow!("{}: cannot write a temporary file: {e}", self.dir.display())
        }
    }

    /// Hands every document to `f` in order: its position, its id and its
    /// record. Held documents are handed over as they are; spilled ones are
    /// read back from the file.
    ///
    /// # Errors
    ///
    /// The file cannot be read, or what `f` returns.
    pub fn for_each(&mut self, mut f: impl FnMut(usize, Id, &str) -> Result<()>) -> Result<()> {
        let Some(w) = self.spill.take() else {
            for (i, d) in self.held.iter().enumerate() {
                f(i, Id::Value(&d.id), &d.raw)?;
            }
            return Ok(());
        };
        let what = || format!("{}: the temporary file of records", self.dir.display());
        let mut file = w.into_inner().map_err(|e| self.spill_error(e.into_error()))?;
        file.flush().map_err(|e| self.spill_error(e))?;
        file.rewind().with_context(what)?;
        let mut r = BufReader::with_capacity(1 << 20, &file);
        let mut line = String::new();
        for i in 0..self.count {
            line.clear();
            r.read_line(&mut line).with_context(what)?;
            let (id, raw) = line
                .trim_end_matches('\n')
                .split_once('\t')
                .with_context(|| format!("{}: record {i} is damaged", what()))?;
            f(i, Id::Json(id), raw)?;
        }
        self.spill = Some(BufWriter::new(file));
        Ok(())
    }
}

/// A document's id as [`DocStore::for_each`] hands it over.
#[derive(Clone, Copy)]
pub enum Id<'a> {
    /// Held: the value.
    Value(&'a Value),
    /// Spilled: its JSON text.
    Json(&'a str),
}

impl Id<'_> {
    /// The id as a value.
    pub fn value(&self) -> Value {
        match self {
            Id::Value(v) => (*v).clone(),
            Id::Json(s) => serde_json::from_str(s).unwrap_or_else(|_| Value::String((*s).to_owned())),
        }
    }
}
