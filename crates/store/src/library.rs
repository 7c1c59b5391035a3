//! A data directory's passage library, `DIR/passages/`: the documents
//! reports are checked against, kept on disk as the document index is.
//!
//! - `library.redb`: the documents (sequence number → id, id → sequence
//!   number) and their texts (zstd with a checksum), and the library's
//!   settings. It is the durable log: an add is acknowledged once its
//!   commit is on disk, and the keys of documents not yet in a segment are
//!   computed again from their texts on open.
//! - `seg-N.ndx`: postings segments ([`neardup::disk::postings`]): the
//!   documents holding each key, mapped and searched in place;
//! - `MANIFEST.json`: the segments and the first sequence number no
//!   segment holds, replaced atomically after each flush and merge (a
//!   segment file it does not name is removed on open).
//!
//! Added documents go to a memory part ([`MemPostings`]), written out as a
//! segment when it passes [`LibraryOptions::memory`]; when there are more
//! than [`LibraryOptions::max_segments`] segments, the smallest are merged
//! (removed documents dropped). A removed document is gone from the
//! database at once, so a report never names it. Reports align their
//! candidates with the stored texts ([`Report::against_library`]).

use std::path::{Path, PathBuf};
use std::sync::{Mutex, RwLock};

use neardup::disk::postings::{MemPostings, Postings};
use neardup::passage::{Aligner, Library, LibraryKeys, PassageConfig, KEYS_VERSION};
use neardup::report::{Against, Report};
use neardup::{Fingerprinter, PipelineConfig};
use rayon::prelude::*;
use redb::{
    Database, ReadOnlyDatabase, ReadableDatabase, ReadableTable, ReadableTableMetadata, TableDefinition,
};
use serde::{Deserialize, Serialize};

use crate::engine::disk::write_durably;
use crate::{Result, StoreError};

/// The library's folder in a data directory.
pub const LIBRARY_DIR: &str = "passages";
const DB_FILE: &str = "library.redb";
const MANIFEST: &str = "MANIFEST.json";
const MANIFEST_VERSION: u32 = 1;

const DOCS: TableDefinition<u64, &str> = TableDefinition::new("docs");
const IDS: TableDefinition<&str, u64> = TableDefinition::new("ids");
const TEXTS: TableDefinition<u64, &[u8]> = TableDefinition::new("texts");
const META: TableDefinition<&str, &str> = TableDefinition::new("meta");

/// The zstd level texts are kept at.
const LEVEL: i32 = 3;
/// The largest text given back (a damaged entry cannot make a reader
/// allocate more).
const MAX_TEXT: usize = 1 << 30;

/// What a library is made with (stored in it; fixed when it is made).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LibrarySettings {
    /// How documents are keyed.
    pub keys: LibraryKeys,
    /// The pipeline whose fingerprints give a span's distance.
    pub pipeline: PipelineConfig,
    /// How texts are cut into sentences.
    pub passages: PassageConfig,
}

/// The library's database: open to write (one process), or read only
/// (a server and `report` at once; the memory part is then never written
/// out).
enum Db {
    Write(Database),
    Read(ReadOnlyDatabase),
}

impl Db {
    fn begin_read(&self) -> std::result::Result<redb::ReadTransaction, redb::TransactionError> {
        match self {
            Db::Write(d) => d.begin_read(),
            Db::Read(d) => d.begin_read(),
        }
    }

    fn writer(&self, path: &Path) -> Result<&Database> {
        match self {
            Db::Write(d) => Ok(d),
            Db::Read(_) => {
                Err(StoreError::Invalid(format!("{}: the library is open read only", path.display())))
            }
        }
    }
}

/// How a library uses memory and disk (not stored).
#[derive(Clone, Copy, Debug)]
pub struct LibraryOptions {
    /// Bytes of postings held in memory before they are written as a
    /// segment (default 64 MiB).
    pub memory: usize,
    /// Segments kept before the smallest are merged (default 6).
    pub max_segments: usize,
    /// redb's page cache (default 32 MiB).
    pub cache: usize,
    /// Check every segment's checksum on open (reads them whole).
    pub verify: bool,
    /// Open to read only (reports), so that many processes read it at once.
    pub read_only: bool,
}

impl Default for LibraryOptions {
    fn default() -> LibraryOptions {
        LibraryOptions { memory: 64 << 20, max_segments: 6, cache: 32 << 20, verify: false, read_only: false }
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Manifest {
    version: u32,
    /// Segment files, oldest first.
    segments: Vec<String>,
    /// Every document of a lower sequence number is in a segment (or gone).
    covered: u64,
    /// The number the next segment file gets.
    next_file: u64,
}

struct State {
    manifest: Manifest,
    segments: Vec<Postings>,
    mem: MemPostings,
}

/// A data directory's passage library, open for reports and for adding
/// and removing documents (one writer at a time; reports meanwhile).
pub struct PassageLibrary {
    dir: PathBuf,
    db: Db,
    settings: LibrarySettings,
    aligner: Aligner,
    options: LibraryOptions,
    state: RwLock<State>,
    writer: Mutex<()>,
    name: String,
}

fn db_error(path: &Path, e: impl std::fmt::Display) -> StoreError {
    StoreError::Database { path: path.to_owned(), message: e.to_string() }
}

fn pack(text: &str) -> std::io::Result<Vec<u8>> {
    let mut c = zstd::bulk::Compressor::new(LEVEL)?;
    c.include_checksum(true)?;
    c.compress(text.as_bytes())
}

fn unpack(packed: &[u8]) -> std::result::Result<String, String> {
    let bytes = zstd::bulk::decompress(packed, MAX_TEXT).map_err(|e| e.to_string())?;
    String::from_utf8(bytes).map_err(|e| e.to_string())
}

impl PassageLibrary {
    /// Whether data directory `dir` has a passage library.
    pub fn exists(dir: &Path) -> bool {
        dir.join(LIBRARY_DIR).join(DB_FILE).exists()
    }

    /// Opens the library of data directory `dir`, making it with
    /// `settings` if there is none (`settings` `None`: there must be one).
    ///
    /// # Errors
    ///
    /// A library made with other keys than `settings`, a damaged or
    /// missing file (naming it), a database another process holds.
    pub fn open(
        dir: &Path,
        settings: Option<LibrarySettings>,
        options: LibraryOptions,
    ) -> Result<PassageLibrary> {
        let root = dir.join(LIBRARY_DIR);
        let db_path = root.join(DB_FILE);
        if settings.is_none() && !db_path.exists() {
            return Err(StoreError::Invalid(format!(
                "{} has no passage library; make one with `neardup index build --passages INPUTS -o {}`",
                dir.display(),
                dir.display()
            )));
        }
        let opened = if options.read_only {
            match builder(&options).open_read_only(&db_path) {
                // Left unclean (a writer killed): repaired by opening it to
                // write (which a reader cannot), then read.
                Err(redb::DatabaseError::RepairAborted) => builder(&options)
                    .create(&db_path)
                    .map(drop)
                    .and_then(|()| builder(&options).open_read_only(&db_path)),
                r => r,
            }
            .map(Db::Read)
        } else {
            std::fs::create_dir_all(&root).map_err(|e| db_error(&root, e))?;
            builder(&options).create(&db_path).map(Db::Write)
        };
        let db = opened.map_err(|e| match e {
            redb::DatabaseError::DatabaseAlreadyOpen => db_error(
                &db_path,
                "another process (a running `neardup serve`?) has the library open to write: ask it \
                 (POST /v1/report checks a text, POST /v1/passages adds documents), or stop it first",
            ),
            e => db_error(
                &db_path,
                format!("{e}; restore the data directory from a backup, or rebuild its passages"),
            ),
        })?;
        let settings = match &db {
            Db::Write(d) => stored_settings(d, &db_path, settings)?,
            Db::Read(d) => read_settings(d, &db_path)?,
        };
        let aligner =
            Aligner::new(Fingerprinter::new(settings.pipeline.clone())?).passages(settings.passages);
        let manifest = read_manifest(&root)?;
        let segments = open_segments(&root, &manifest, options.verify)?;
        let state = State { manifest, segments, mem: MemPostings::default() };
        let lib = PassageLibrary {
            name: dir.display().to_string(),
            dir: root,
            db,
            settings,
            aligner,
            options,
            state: RwLock::new(state),
            writer: Mutex::new(()),
        };
        lib.recover()?;
        Ok(lib)
    }

    /// This library, named `name` in reports (by default the data
    /// directory's path; a server names no paths).
    pub fn named(mut self, name: &str) -> PassageLibrary {
        self.name = name.to_owned();
        self
    }

    /// Its settings.
    pub fn settings(&self) -> &LibrarySettings {
        &self.settings
    }

    /// The aligner reports use (its settings by default).
    pub fn aligner(&self) -> &Aligner {
        &self.aligner
    }

    /// Why `text` cannot be found by its passages (`None`: it can): too
    /// short to give a key. Front ends refuse such documents, naming them.
    pub fn too_short(&self, text: &str) -> Option<String> {
        self.settings.keys.of(text).is_empty().then(|| {
            format!(
                "too short to find passages in (fewer than {} words, or {} CJK characters)",
                self.settings.keys.seed_words, self.settings.keys.seed_words
            )
        })
    }

    /// How many documents it holds.
    ///
    /// # Errors
    ///
    /// A damaged database.
    pub fn documents(&self) -> Result<u64> {
        let path = self.db_path();
        let txn = self.db.begin_read().map_err(|e| db_error(&path, e))?;
        let docs = txn.open_table(DOCS).map_err(|e| db_error(&path, e))?;
        docs.len().map_err(|e| db_error(&path, e))
    }

    /// Segments, documents in the memory part.
    pub fn parts(&self) -> (usize, usize) {
        let s = self.state.read().expect("the library's lock");
        (s.segments.len(), s.mem.len())
    }

    /// Reads the documents no segment holds back into the memory part, and
    /// removes files the manifest does not name (a crash's leftovers).
    fn recover(&self) -> Result<()> {
        let named: Vec<String> = self.state.read().expect("the library's lock").manifest.segments.clone();
        if let Ok(entries) = std::fs::read_dir(&self.dir) {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                let stray = (name.starts_with("seg-") && !named.contains(&name)) || name.starts_with(".tmp");
                if stray {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
        let covered = self.state.read().expect("the library's lock").manifest.covered;
        let path = self.db_path();
        let txn = self.db.begin_read().map_err(|e| db_error(&path, e))?;
        let docs = txn.open_table(DOCS).map_err(|e| db_error(&path, e))?;
        let texts = txn.open_table(TEXTS).map_err(|e| db_error(&path, e))?;
        let mut batch: Vec<(u64, String)> = Vec::new();
        for entry in docs.range(covered..).map_err(|e| db_error(&path, e))? {
            let (seq, _) = entry.map_err(|e| db_error(&path, e))?;
            let seq = seq.value();
            let packed = texts.get(seq).map_err(|e| db_error(&path, e))?;
            let text = packed
                .map(|p| unpack(p.value()))
                .transpose()
                .map_err(|e| db_error(&path, format!("the text of document {seq}: {e}")))?
                .unwrap_or_default();
            batch.push((seq, text));
            if batch.len() == 4096 {
                self.remember(std::mem::take(&mut batch))?;
            }
        }
        self.remember(batch)
    }

    /// Adds documents' keys to the memory part (in sequence order),
    /// writing it out when full.
    fn remember(&self, docs: Vec<(u64, String)>) -> Result<()> {
        let keys = self.settings.keys;
        let keyed: Vec<(u64, Vec<u64>)> = docs.into_par_iter().map(|(s, t)| (s, keys.of(&t))).collect();
        let full = {
            let mut s = self.state.write().expect("the library's lock");
            for (seq, k) in &keyed {
                s.mem.add(*seq, k);
            }
            s.mem.bytes() >= self.options.memory && !self.options.read_only
        };
        if full {
            // Called by add (the writer's lock held) and by open.
            self.flush_locked()?;
        }
        Ok(())
    }

    fn db_path(&self) -> PathBuf {
        self.dir.join(DB_FILE)
    }

    /// Adds (or replaces, by id) documents: acknowledged when this returns
    /// (the commit is on disk).
    ///
    /// # Errors
    ///
    /// An empty or too long id, a full disk.
    pub fn add(&self, docs: &[(String, String)]) -> Result<()> {
        let _writer = self.writer.lock().expect("the writer's lock");
        let path = self.db_path();
        let packed: Vec<Vec<u8>> = docs
            .par_iter()
            .map(|(_, t)| pack(t))
            .collect::<std::io::Result<_>>()
            .map_err(|e| db_error(&path, e))?;
        let txn = self.db.writer(&path)?.begin_write().map_err(|e| db_error(&path, e))?;
        let mut added = Vec::with_capacity(docs.len());
        {
            let mut meta = txn.open_table(META).map_err(|e| db_error(&path, e))?;
            let mut next: u64 = match meta.get("next_seq").map_err(|e| db_error(&path, e))? {
                Some(v) => v.value().parse().unwrap_or(0),
                None => 0,
            };
            let mut ids = txn.open_table(IDS).map_err(|e| db_error(&path, e))?;
            let mut seqs = txn.open_table(DOCS).map_err(|e| db_error(&path, e))?;
            let mut texts = txn.open_table(TEXTS).map_err(|e| db_error(&path, e))?;
            for ((id, text), packed) in docs.iter().zip(&packed) {
                if id.is_empty() || id.chars().count() > crate::MAX_ID_CHARS {
                    return Err(StoreError::Invalid(format!(
                        "document id {id:?}: ids are 1 to {} characters",
                        crate::MAX_ID_CHARS
                    )));
                }
                let old = ids.insert(id.as_str(), next).map_err(|e| db_error(&path, e))?.map(|v| v.value());
                if let Some(old) = old {
                    seqs.remove(old).map_err(|e| db_error(&path, e))?;
                    texts.remove(old).map_err(|e| db_error(&path, e))?;
                }
                seqs.insert(next, id.as_str()).map_err(|e| db_error(&path, e))?;
                texts.insert(next, packed.as_slice()).map_err(|e| db_error(&path, e))?;
                added.push((next, text.clone()));
                next += 1;
            }
            meta.insert("next_seq", next.to_string().as_str()).map_err(|e| db_error(&path, e))?;
        }
        txn.commit().map_err(|e| db_error(&path, e))?;
        self.remember(added)
    }

    /// Removes documents by id; how many there were.
    ///
    /// # Errors
    ///
    /// A full disk or damaged database.
    pub fn remove(&self, ids: &[String]) -> Result<usize> {
        let _writer = self.writer.lock().expect("the writer's lock");
        let path = self.db_path();
        let txn = self.db.writer(&path)?.begin_write().map_err(|e| db_error(&path, e))?;
        let mut n = 0;
        {
            let mut by_id = txn.open_table(IDS).map_err(|e| db_error(&path, e))?;
            let mut seqs = txn.open_table(DOCS).map_err(|e| db_error(&path, e))?;
            let mut texts = txn.open_table(TEXTS).map_err(|e| db_error(&path, e))?;
            for id in ids {
                if let Some(seq) =
                    by_id.remove(id.as_str()).map_err(|e| db_error(&path, e))?.map(|v| v.value())
                {
                    seqs.remove(seq).map_err(|e| db_error(&path, e))?;
                    texts.remove(seq).map_err(|e| db_error(&path, e))?;
                    n += 1;
                }
            }
        }
        txn.commit().map_err(|e| db_error(&path, e))?;
        Ok(n)
    }

    /// Writes the memory part out as a segment (nothing if empty), then
    /// merges segments if there are too many.
    ///
    /// # Errors
    ///
    /// The segment or manifest cannot be written.
    pub fn flush(&self) -> Result<()> {
        let _writer = self.writer.lock().expect("the writer's lock");
        self.flush_locked()
    }

    /// [`flush`](Self::flush), the writer's lock held.
    fn flush_locked(&self) -> Result<()> {
        let (file, manifest) = {
            let s = self.state.read().expect("the library's lock");
            let Some(last) = s.mem.last_seq() else { return Ok(()) };
            let mut m = s.manifest.clone();
            let file = format!("seg-{:08}.ndx", m.next_file);
            s.mem.write(&self.dir.join(&file))?;
            m.next_file += 1;
            m.covered = m.covered.max(last + 1);
            m.segments.push(file.clone());
            (file, m)
        };
        let seg = Postings::open(&self.dir.join(&file), false)?;
        write_manifest(&self.dir, &manifest)?;
        {
            let mut s = self.state.write().expect("the library's lock");
            s.manifest = manifest;
            s.segments.push(seg);
            s.mem = MemPostings::default();
        }
        self.merge_if_needed()
    }

    /// Merges the smallest segments while there are more than
    /// `max_segments`.
    fn merge_if_needed(&self) -> Result<()> {
        loop {
            let (pick, inputs, mut manifest) = {
                let s = self.state.read().expect("the library's lock");
                if s.segments.len() <= self.options.max_segments.max(2) {
                    return Ok(());
                }
                let mut order: Vec<usize> = (0..s.segments.len()).collect();
                order.sort_by_key(|&i| s.segments[i].entries());
                let pick: Vec<usize> = order.into_iter().take(4).collect();
                let inputs: Vec<Postings> = pick.iter().map(|&i| s.segments[i].clone()).collect();
                (pick, inputs, s.manifest.clone())
            };
            let file = format!("seg-{:08}.ndx", manifest.next_file);
            let path = self.db_path();
            let txn = self.db.begin_read().map_err(|e| db_error(&path, e))?;
            let docs = txn.open_table(DOCS).map_err(|e| db_error(&path, e))?;
            let alive = |seq: u64| docs.get(seq).ok().flatten().is_some();
            let alive = std::sync::Mutex::new(alive);
            let check = |seq: u64| (alive.lock().expect("one merge"))(seq);
            Postings::merge(&inputs, &check, &self.dir.join(&file))?;
            let seg = Postings::open(&self.dir.join(&file), false)?;
            let old: Vec<String> = pick.iter().map(|&i| manifest.segments[i].clone()).collect();
            manifest.segments.retain(|f| !old.contains(f));
            manifest.segments.push(file);
            manifest.next_file += 1;
            write_manifest(&self.dir, &manifest)?;
            {
                let mut s = self.state.write().expect("the library's lock");
                let mut keep: Vec<Postings> = Vec::new();
                for (i, p) in std::mem::take(&mut s.segments).into_iter().enumerate() {
                    if !pick.contains(&i) {
                        keep.push(p);
                    }
                }
                keep.push(seg);
                s.segments = keep;
                s.manifest = manifest;
            }
            for f in old {
                let _ = std::fs::remove_file(self.dir.join(f));
            }
        }
    }

    /// The report of `text` (named `name`) against this library.
    ///
    /// # Errors
    ///
    /// A damaged library.
    pub fn report(&self, name: &str, text: String, ask: &Against) -> Result<Report> {
        let aligner = self.aligner.clone().settings_from(ask.alignment);
        Ok(Report::against_library(&aligner, self, &self.name, (name, text), ask)?)
    }

    /// Checks every segment's checksum and every text's; the documents.
    ///
    /// # Errors
    ///
    /// The first damaged file or text, named.
    pub fn verify(&self) -> Result<u64> {
        let names = self.state.read().expect("the library's lock").manifest.segments.clone();
        for f in &names {
            Postings::open(&self.dir.join(f), true).map_err(|e| damaged(&self.dir.join(f), e))?;
        }
        let path = self.db_path();
        let txn = self.db.begin_read().map_err(|e| db_error(&path, e))?;
        let texts = txn.open_table(TEXTS).map_err(|e| db_error(&path, e))?;
        let mut n = 0;
        for entry in texts.iter().map_err(|e| db_error(&path, e))? {
            let (seq, packed) = entry.map_err(|e| db_error(&path, e))?;
            unpack(packed.value())
                .map_err(|e| damaged(&path, format!("the text of document {}: {e}", seq.value())))?;
            n += 1;
        }
        Ok(n)
    }

    /// The text of document `id`, if held.
    ///
    /// # Errors
    ///
    /// A damaged database.
    pub fn text_of(&self, id: &str) -> Result<Option<String>> {
        let path = self.db_path();
        let txn = self.db.begin_read().map_err(|e| db_error(&path, e))?;
        let ids = txn.open_table(IDS).map_err(|e| db_error(&path, e))?;
        let Some(seq) = ids.get(id).map_err(|e| db_error(&path, e))?.map(|v| v.value()) else {
            return Ok(None);
        };
        Ok(Library::text(self, seq)?)
    }
}

fn damaged(path: &Path, e: impl std::fmt::Display) -> StoreError {
    db_error(path, format!("{e}; rebuild the passages with `neardup index build --passages INPUTS -o DIR`"))
}

fn builder(options: &LibraryOptions) -> redb::Builder {
    let mut b = Database::builder();
    b.set_cache_size(options.cache);
    b
}

/// The settings of a library opened read only.
fn read_settings(db: &ReadOnlyDatabase, path: &Path) -> Result<LibrarySettings> {
    let txn = db.begin_read().map_err(|e| db_error(path, e))?;
    let meta = txn.open_table(META).map_err(|e| damaged(path, e))?;
    let json = meta
        .get("settings")
        .map_err(|e| damaged(path, e))?
        .ok_or_else(|| damaged(path, "it holds no settings"))?;
    let s: LibrarySettings =
        serde_json::from_str(json.value()).map_err(|e| damaged(path, format!("its settings: {e}")))?;
    check_version(&s, path)?;
    Ok(s)
}

fn check_version(s: &LibrarySettings, path: &Path) -> Result<()> {
    if s.keys.version != KEYS_VERSION {
        return Err(StoreError::Invalid(format!(
            "{}: a library of keys version {}, this neardup keys by version {KEYS_VERSION}: rebuild \
             it with `neardup index build --passages INPUTS -o DIR`",
            path.display(),
            s.keys.version
        )));
    }
    Ok(())
}

/// The settings stored in the library, or `given` stored in a new one.
fn stored_settings(db: &Database, path: &Path, given: Option<LibrarySettings>) -> Result<LibrarySettings> {
    let txn = db.begin_write().map_err(|e| db_error(path, e))?;
    let settings = {
        let mut meta = txn.open_table(META).map_err(|e| db_error(path, e))?;
        txn.open_table(DOCS).map_err(|e| db_error(path, e))?;
        txn.open_table(IDS).map_err(|e| db_error(path, e))?;
        txn.open_table(TEXTS).map_err(|e| db_error(path, e))?;
        let stored = meta.get("settings").map_err(|e| db_error(path, e))?.map(|v| v.value().to_owned());
        match (stored, given) {
            (Some(s), given) => {
                let s: LibrarySettings =
                    serde_json::from_str(&s).map_err(|e| damaged(path, format!("its settings: {e}")))?;
                check_version(&s, path)?;
                if let Some(g) = given.filter(|g| g.keys != s.keys) {
                    return Err(StoreError::Invalid(format!(
                        "{}: the library keys by seeds of {} words in windows of {}, not {} and {}",
                        path.display(),
                        s.keys.seed_words,
                        s.keys.window,
                        g.keys.seed_words,
                        g.keys.window
                    )));
                }
                s
            }
            (None, Some(g)) => {
                let json = serde_json::to_string(&g).expect("settings serialize");
                meta.insert("settings", json.as_str()).map_err(|e| db_error(path, e))?;
                g
            }
            (None, None) => return Err(damaged(path, "it holds no settings")),
        }
    };
    txn.commit().map_err(|e| db_error(path, e))?;
    Ok(settings)
}

fn read_manifest(root: &Path) -> Result<Manifest> {
    let path = root.join(MANIFEST);
    match std::fs::read(&path) {
        Ok(bytes) => {
            let m: Manifest = serde_json::from_slice(&bytes).map_err(|e| damaged(&path, e))?;
            if m.version != MANIFEST_VERSION {
                return Err(damaged(&path, format!("manifest version {}", m.version)));
            }
            Ok(m)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Ok(Manifest { version: MANIFEST_VERSION, ..Manifest::default() })
        }
        Err(e) => Err(db_error(&path, e)),
    }
}

fn write_manifest(root: &Path, m: &Manifest) -> Result<()> {
    write_durably(&root.join(MANIFEST), &serde_json::to_vec_pretty(m).expect("a manifest serializes"))
}

fn open_segments(root: &Path, m: &Manifest, verify: bool) -> Result<Vec<Postings>> {
    m.segments
        .iter()
        .map(|f| {
            let path = root.join(f);
            Postings::open(&path, verify).map_err(|e| damaged(&path, e))
        })
        .collect()
}

impl Library for PassageLibrary {
    fn keys(&self) -> LibraryKeys {
        self.settings.keys
    }

    fn lookup(&self, key: u64, cap: usize, out: &mut Vec<u64>) -> neardup::Result<()> {
        let s = self.state.read().expect("the library's lock");
        for seg in &s.segments {
            seg.lookup(key, cap, out);
        }
        s.mem.lookup(key, cap, out);
        Ok(())
    }

    fn id(&self, seq: u64) -> neardup::Result<Option<String>> {
        let txn = self.db.begin_read().map_err(|e| core(&self.db_path(), e))?;
        let docs = txn.open_table(DOCS).map_err(|e| core(&self.db_path(), e))?;
        Ok(docs.get(seq).map_err(|e| core(&self.db_path(), e))?.map(|v| v.value().to_owned()))
    }

    fn text(&self, seq: u64) -> neardup::Result<Option<String>> {
        let txn = self.db.begin_read().map_err(|e| core(&self.db_path(), e))?;
        let texts = txn.open_table(TEXTS).map_err(|e| core(&self.db_path(), e))?;
        let Some(p) = texts.get(seq).map_err(|e| core(&self.db_path(), e))? else { return Ok(None) };
        unpack(p.value())
            .map(Some)
            .map_err(|e| core(&self.db_path(), format!("the text of document {seq}: {e}")))
    }
}

fn core(path: &Path, e: impl std::fmt::Display) -> neardup::Error {
    neardup::Error::IndexFile { path: path.to_owned(), message: e.to_string() }
}
