//! Passages in a data directory, for reports of copied text
//! ([`neardup::report`]): its passage library (`DIR/passages/`,
//! [`PassageLibrary`]: the documents, their texts and their keys, made by
//! `neardup index build --passages INPUTS -o DIR`), or a window index of
//! neardup 0.x (`DIR/passages.ndx`, reported to a window's precision,
//! read only). [`Passages`] opens them for `neardup serve`'s `POST
//! /v1/report`, `/v1/passages` and page, and for `neardup report
//! --against DIR`.
//!
//! Damage is found, not served: segment and index files carry checksums,
//! checked on open (unless told not to); every text carries a zstd frame
//! checksum, checked whenever it is read. Every such error names the file
//! and the command that rebuilds it.

use std::path::{Path, PathBuf};

use neardup::index::file::IndexFile;
use neardup::meta::IndexMeta;
use neardup::passage::PassageIndex;
use neardup::report::{Against, Report};

use crate::library::{LibraryOptions, PassageLibrary};
use crate::{Result, StoreError};

/// The passage index in a data directory.
pub const PASSAGES_FILE: &str = "passages.ndx";
/// The texts neardup 0.x kept beside its window index (no longer read:
/// a library holds its texts; removed when one is built).
pub const TEXTS_FILE: &str = "passages.texts.redb";

fn db_error(path: &Path, e: impl std::fmt::Display) -> StoreError {
    StoreError::Database { path: path.to_owned(), message: e.to_string() }
}

/// What rebuilds a data directory's passages.
pub const REBUILD: &str = "rebuild the passages with `neardup index build --passages INPUTS -o DIR`";

/// A passage file that is damaged or missing: its path, what is wrong,
/// and the command that rebuilds it.
fn damaged(path: &Path, e: impl std::fmt::Display) -> StoreError {
    db_error(path, format!("{}; {REBUILD}", e.to_string().trim_end_matches('.')))
}

/// A passage file that cannot be opened or read.
fn unreadable(path: &Path, e: impl std::fmt::Display) -> StoreError {
    let e = e.to_string();
    let e = e.strip_prefix(&format!("{}: ", path.display())).unwrap_or(&e);
    damaged(path, format!("cannot be read, damaged or cut short ({})", e.trim_end_matches('.')))
}

/// A data directory's passages: its passage library (`DIR/passages/`,
/// [`PassageLibrary`]), or an index of passage windows made by neardup
/// 0.x before libraries (`DIR/passages.ndx`, reported to window
/// precision).
pub struct Passages {
    kind: Kind,
    name: String,
}

enum Kind {
    Library(Box<PassageLibrary>),
    Windows(Box<PassageIndex>),
}

impl Passages {
    /// The passages of data directory `dir`, if it keeps any (`None`
    /// without a library or `DIR/passages.ndx`). `verify` checks the
    /// files' checksums (reading them whole).
    ///
    /// # Errors
    ///
    /// A damaged or foreign file: the error names it and the command that
    /// rebuilds it.
    pub fn open(dir: &Path, verify: bool) -> Result<Option<Passages>> {
        Passages::open_with(dir, verify, true)
    }

    /// [`open`](Self::open), a library opened to write (one process at a
    /// time: a server, which [`add`](Self::add)s and
    /// [`remove`](Self::remove)s while it reports).
    ///
    /// # Errors
    ///
    /// As `open`; a library another process holds.
    pub fn open_writable(dir: &Path, verify: bool) -> Result<Option<Passages>> {
        Passages::open_with(dir, verify, false)
    }

    fn open_with(dir: &Path, verify: bool, read_only: bool) -> Result<Option<Passages>> {
        let name = dir.display().to_string();
        if PassageLibrary::exists(dir) {
            let lib = PassageLibrary::open(
                dir,
                None,
                LibraryOptions { verify, read_only, ..LibraryOptions::default() },
            )?;
            if verify {
                lib.verify()?;
            }
            return Ok(Some(Passages { kind: Kind::Library(Box::new(lib)), name }));
        }
        let path = dir.join(PASSAGES_FILE);
        if !path.exists() {
            return Ok(None);
        }
        let file = if verify { IndexFile::open(&path) } else { IndexFile::open_unverified(&path) };
        let file = file.map_err(|e| unreadable(&path, e))?;
        IndexMeta::of(&file).map_err(|e| damaged(&path, e))?;
        let index = PassageIndex::open(file).map_err(|e| damaged(&path, e))?;
        Ok(Some(Passages { kind: Kind::Windows(Box::new(index)), name }))
    }

    /// These passages, named `name` in reports (by default the data
    /// directory's path; a server names no paths).
    pub fn named(mut self, name: &str) -> Passages {
        self.name = name.to_owned();
        if let Kind::Library(l) = self.kind {
            self.kind = Kind::Library(Box::new(l.named(name)));
        }
        self
    }

    /// The window index (passages made before libraries), if that is what
    /// the directory holds.
    pub fn index(&self) -> Option<&PassageIndex> {
        match &self.kind {
            Kind::Windows(i) => Some(i),
            Kind::Library(_) => None,
        }
    }

    /// The library, if the directory holds one.
    pub fn library(&self) -> Option<&PassageLibrary> {
        match &self.kind {
            Kind::Library(l) => Some(l),
            Kind::Windows(_) => None,
        }
    }

    /// The pipeline of the spans' fingerprints.
    pub fn pipeline(&self) -> &neardup::PipelineConfig {
        match &self.kind {
            Kind::Library(l) => &l.settings().pipeline,
            Kind::Windows(i) => i.fingerprinter().config(),
        }
    }

    /// Whether the documents' texts are kept (reports show both sides):
    /// always in a library.
    pub fn keeps_texts(&self) -> bool {
        matches!(self.kind, Kind::Library(_))
    }

    /// The library, or why these passages take no changes (a 0.x window
    /// index is read only).
    fn writable(&self) -> Result<&PassageLibrary> {
        match &self.kind {
            Kind::Library(l) => Ok(l),
            Kind::Windows(_) => Err(StoreError::Invalid(format!(
                "{PASSAGES_FILE} is a window index of neardup 0.x, which takes no changes: rebuild it as a \
                 passage library with `neardup index build --passages INPUTS -o DIR`"
            ))),
        }
    }

    /// Adds (or replaces, by id) documents with their texts; refuses the
    /// whole batch, naming the first, if one is too short to find
    /// passages in.
    ///
    /// # Errors
    ///
    /// A 0.x window index, a document too short, a bad id, a full disk.
    pub fn add(&self, docs: &[(String, String)]) -> Result<()> {
        let lib = self.writable()?;
        if let Some((id, why)) = docs.iter().find_map(|(id, t)| lib.too_short(t).map(|w| (id, w))) {
            return Err(StoreError::Invalid(format!("document {id:?}: {why}; nothing was added")));
        }
        lib.add(docs)
    }

    /// Removes documents by id; how many there were.
    ///
    /// # Errors
    ///
    /// A 0.x window index, a damaged database, a full disk.
    pub fn remove(&self, ids: &[String]) -> Result<usize> {
        self.writable()?.remove(ids)
    }

    /// Writes what is held in memory out (a server's clean stop; what is
    /// not is rebuilt from the database on the next open).
    ///
    /// # Errors
    ///
    /// A full disk.
    pub fn flush(&self) -> Result<()> {
        match &self.kind {
            Kind::Library(l) => l.flush(),
            Kind::Windows(_) => Ok(()),
        }
    }

    /// The text of document `id` (`None`: not held, or no texts kept).
    ///
    /// # Errors
    ///
    /// A damaged database.
    pub fn text_of(&self, id: &str) -> Result<Option<String>> {
        match &self.kind {
            Kind::Library(l) => l.text_of(id),
            Kind::Windows(_) => Ok(None),
        }
    }

    /// How many documents a library holds (`None` for a window index,
    /// which counts windows).
    ///
    /// # Errors
    ///
    /// A damaged database.
    pub fn documents(&self) -> Result<Option<u64>> {
        match &self.kind {
            Kind::Library(l) => l.documents().map(Some),
            Kind::Windows(_) => Ok(None),
        }
    }

    /// The report of `text` (named `name`) against these passages: the
    /// library's documents aligned with it ([`Report::against_library`]);
    /// or the windows' spans.
    ///
    /// # Errors
    ///
    /// A damaged library or index.
    pub fn report(&self, name: &str, text: String, ask: &Against) -> Result<Report> {
        match &self.kind {
            Kind::Library(l) => l.report(name, text, ask),
            Kind::Windows(index) => Report::against(index, &self.name, name, text, ask)
                .map_err(|e| db_error(&PathBuf::from(PASSAGES_FILE), e)),
        }
    }
}
