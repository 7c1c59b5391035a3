//! Passages in a data directory, for reports of copied text
//! ([`neardup::report`]): `DIR/passages.ndx`, a passage index (`neardup
//! index build --passages INPUTS -o DIR`), and optionally
//! `DIR/passages.texts.redb`, the indexed documents' texts (zstd, keyed
//! by id; `--keep-texts`), so that a report shows both sides of every
//! copied passage. [`Passages`] opens them for `neardup serve`'s
//! `POST /v1/report` and page, and for `neardup report --against DIR`.
//!
//! Damage is found, not served: the index file's checksums are checked on
//! open; the index's metadata says whether texts were kept, so a missing
//! texts file is an error; every text carries a checksum (a zstd frame
//! checksum), checked on open (reading them all) and whenever it is read.
//! Every such error names the file and the command that rebuilds it.

use std::path::{Path, PathBuf};

use neardup::index::file::IndexFile;
use neardup::meta::IndexMeta;
use neardup::passage::PassageIndex;
use neardup::report::{Against, Report};
use redb::{Database, ReadOnlyDatabase, ReadableDatabase, ReadableTable, TableDefinition};

use crate::library::{LibraryOptions, PassageLibrary};
use crate::{Result, StoreError};

/// The passage index in a data directory.
pub const PASSAGES_FILE: &str = "passages.ndx";
/// The indexed documents' texts in a data directory.
pub const TEXTS_FILE: &str = "passages.texts.redb";

/// id → the document's text, zstd-compressed.
const TEXTS: TableDefinition<&str, &[u8]> = TableDefinition::new("texts");

/// The zstd level texts are kept at (fast to write, about 3× smaller).
const LEVEL: i32 = 3;

/// The largest text kept or given back (a damaged entry cannot make a
/// reader allocate more).
const MAX_TEXT: usize = 1 << 30;

fn db_error(path: &Path, e: impl std::fmt::Display) -> StoreError {
    StoreError::Database { path: path.to_owned(), message: e.to_string() }
}

/// What rebuilds a data directory's passages.
pub const REBUILD: &str =
    "rebuild the passages with `neardup index build --passages INPUTS -o DIR --keep-texts`";

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

/// A text, compressed with a checksum of its bytes.
fn pack(text: &str) -> std::io::Result<Vec<u8>> {
    let mut c = zstd::bulk::Compressor::new(LEVEL)?;
    c.include_checksum(true)?;
    c.compress(text.as_bytes())
}

/// Writes the texts of a passage index, atomically: into a temporary file
/// beside `DIR/passages.texts.redb`, renamed over it by [`finish`](Self::finish);
/// dropped unfinished, it leaves nothing behind.
pub struct TextsWriter {
    db: Option<Database>,
    tmp: tempfile::TempPath,
    path: PathBuf,
}

impl TextsWriter {
    /// Starts the texts of the data directory `dir`.
    ///
    /// # Errors
    ///
    /// The temporary file cannot be made.
    pub fn create(dir: &Path) -> Result<TextsWriter> {
        TextsWriter::start(dir, false)
    }

    /// Goes on with the texts of `dir` (`index add` to its passage
    /// index): a copy of them, which takes the new texts and replaces them
    /// by [`finish`](Self::finish), so that a reader (a running server)
    /// keeps the texts it opened and an add that is stopped changes
    /// nothing.
    ///
    /// # Errors
    ///
    /// The texts cannot be copied, or are not a texts database.
    pub fn extend(dir: &Path) -> Result<TextsWriter> {
        TextsWriter::start(dir, true)
    }

    fn start(dir: &Path, copy: bool) -> Result<TextsWriter> {
        let path = dir.join(TEXTS_FILE);
        let tmp = tempfile::Builder::new()
            .prefix(".passages.texts.")
            .tempfile_in(dir)
            .map_err(|e| db_error(&path, format!("cannot create a temporary file beside it: {e}")))?
            .into_temp_path();
        let db = if copy {
            std::fs::copy(&path, &tmp).map_err(|e| damaged(&path, format!("cannot be copied ({e})")))?;
            Database::open(&tmp).map_err(|e| unreadable(&path, e))?
        } else {
            Database::create(&tmp).map_err(|e| db_error(&path, e))?
        };
        Ok(TextsWriter { db: Some(db), tmp, path })
    }

    /// Keeps a batch of `(id, text)` (one commit). A later text of the same
    /// id replaces the earlier one.
    ///
    /// # Errors
    ///
    /// The database cannot be written (a full disk).
    pub fn insert(&mut self, docs: &[(String, &str)]) -> Result<()> {
        let path = &self.path;
        let db = self.db.as_ref().expect("open until finished");
        let txn = db.begin_write().map_err(|e| db_error(path, e))?;
        {
            let mut table = txn.open_table(TEXTS).map_err(|e| db_error(path, e))?;
            for (id, text) in docs {
                let packed = pack(text).map_err(|e| db_error(path, e))?;
                table.insert(id.as_str(), packed.as_slice()).map_err(|e| db_error(path, e))?;
            }
        }
        txn.commit().map_err(|e| db_error(path, e))
    }

    /// Makes the texts the data directory's: on disk (synced) and renamed
    /// into place. Call it before the passage index is written, so that
    /// the index never names texts that are not there.
    ///
    /// # Errors
    ///
    /// The file cannot be synced or renamed into place.
    pub fn finish(mut self) -> Result<()> {
        let db = self.db.take().expect("open until finished");
        // An empty index still has its (empty) table.
        let txn = db.begin_write().map_err(|e| db_error(&self.path, e))?;
        txn.open_table(TEXTS).map_err(|e| db_error(&self.path, e))?;
        txn.commit().map_err(|e| db_error(&self.path, e))?;
        drop(db);
        std::fs::File::open(&self.tmp).and_then(|f| f.sync_all()).map_err(|e| db_error(&self.path, e))?;
        // Readable as the index beside it is (a temporary file is 0600).
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&self.tmp, std::fs::Permissions::from_mode(0o644))
                .map_err(|e| db_error(&self.path, e))?;
        }
        let path = self.path.clone();
        self.tmp.persist(&path).map_err(|e| db_error(&path, e))?;
        // The rename itself survives a crash once the directory is synced.
        if let Some(dir) = path.parent() {
            let _ = std::fs::File::open(dir).and_then(|d| d.sync_all());
        }
        Ok(())
    }
}

/// The texts kept beside a passage index, opened read only: a server and
/// `neardup report --against DIR` read them at the same time.
pub struct Texts {
    db: ReadOnlyDatabase,
    path: PathBuf,
}

impl Texts {
    /// Opens `path`, read only.
    ///
    /// # Errors
    ///
    /// A file that is not a texts database, or damaged.
    pub fn open(path: &Path) -> Result<Texts> {
        let db = ReadOnlyDatabase::open(path).map_err(|e| unreadable(path, e))?;
        let texts = Texts { db, path: path.to_owned() };
        // Its table, or a file that is none of ours.
        let txn = texts.db.begin_read().map_err(|e| unreadable(path, e))?;
        match txn.open_table(TEXTS) {
            Ok(_) | Err(redb::TableError::TableDoesNotExist(_)) => {}
            Err(e) => return Err(damaged(path, e)),
        }
        Ok(texts)
    }

    /// Checks every text against its checksum (reading them all); the
    /// number of texts.
    ///
    /// # Errors
    ///
    /// The first damaged text, naming the file.
    pub fn verify(&self) -> Result<u64> {
        let path = &self.path;
        let txn = self.db.begin_read().map_err(|e| damaged(path, e))?;
        let table = match txn.open_table(TEXTS) {
            Ok(t) => t,
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok(0),
            Err(e) => return Err(damaged(path, e)),
        };
        let mut n = 0;
        for entry in table.iter().map_err(|e| damaged(path, e))? {
            let (id, packed) = entry.map_err(|e| damaged(path, e))?;
            unpack(packed.value())
                .map_err(|e| damaged(path, format!("the text of {:?}: {e}", id.value())))?;
            n += 1;
        }
        Ok(n)
    }

    /// The text of document `id`, if kept.
    ///
    /// # Errors
    ///
    /// A damaged database or entry.
    pub fn get(&self, id: &str) -> Result<Option<String>> {
        let err = |e: &dyn std::fmt::Display| damaged(&self.path, format!("the text of {id:?}: {e}"));
        let txn = self.db.begin_read().map_err(|e| err(&e))?;
        let table = match txn.open_table(TEXTS) {
            Ok(t) => t,
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok(None),
            Err(e) => return Err(err(&e)),
        };
        let Some(packed) = table.get(id).map_err(|e| err(&e))? else { return Ok(None) };
        unpack(packed.value()).map(Some).map_err(|e| err(&e))
    }
}

/// A text as [`pack`] packed it (older texts have no checksum: they are
/// read as they are).
fn unpack(packed: &[u8]) -> std::result::Result<String, String> {
    let bytes = zstd::bulk::decompress(packed, MAX_TEXT).map_err(|e| e.to_string())?;
    String::from_utf8(bytes).map_err(|e| e.to_string())
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
