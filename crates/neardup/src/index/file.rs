//! Index files: a [`TableIndex`] with optional entry names, feature counts
//! and the caller's metadata, opened through mmap and used in place.
//!
//! The file knows nothing of the text layer: what made the fingerprints
//! (the CLI and the service store their pipeline and passage settings, see
//! [`crate::meta::IndexMeta`]) is the caller's metadata, an opaque JSON
//! value that the caller versions. Files written before there was a
//! metadata section (with typed `config` and `passages` header fields)
//! open with those fields as the metadata `{"pipeline": …, "passages": …}`.
//!
//! Layout (all integers little-endian):
//!
//! | bytes | content |
//! |---|---|
//! | 8 | magic `NDUPIDX\0` |
//! | 4 | file format version ([`FILE_VERSION`]) |
//! | 4 | header length `H` |
//! | `H` | header: JSON with the fingerprint format version, the caller's metadata, the layout, counts and the section table |
//! | … | sections, each aligned to 64 bytes: ids, id offsets, per table a directory and packed entries, names, feature counts |
//! | 8 | XXH3-64 of everything before it |
//! | 8 | end magic `NDUPEND\0` |
//!
//! Files are written to a temporary file in the same directory, synced,
//! and renamed into place: a crash leaves the old file or the new one,
//! never half of one. Opening checks the magic, versions, checksum and
//! every section's size and order, so a truncated or damaged file is an
//! error, never a panic or a wrong answer.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::blob::{read_u32, read_u64, Blob};
use super::layout::{Layout, LayoutSpec};
use super::segment::{Segment, TableData};
use super::table_index::TableIndex;
use crate::error::{Error, Result};
use crate::fingerprint::FORMAT_VERSION;

/// The version of the index file layout this neardup writes when a file
/// holds tables of later passes ([`IndexFile::later`]); files without them
/// are written as version 1, which every neardup since 0.1 reads.
pub const FILE_VERSION: u32 = 2;
const MAGIC: &[u8; 8] = b"NDUPIDX\0";
const END_MAGIC: &[u8; 8] = b"NDUPEND\0";
const ALIGN: usize = 64;

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Header {
    fingerprint_format_version: u32,
    /// Files before the metadata section: the pipeline (read, never written).
    #[serde(default, skip_serializing)]
    config: Option<serde_json::Value>,
    layout: LayoutSpec,
    reason: String,
    rows: usize,
    entries: usize,
    tables: Vec<TableHeader>,
    ids: Section,
    offsets: Option<Section>,
    names: Option<NamesHeader>,
    /// Files before the metadata section: passage settings (read, never
    /// written).
    #[serde(default, skip_serializing)]
    passages: Option<serde_json::Value>,
    /// The caller's metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    meta: Option<serde_json::Value>,
    /// Feature counts per entry id (u32, little-endian), when stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    features: Option<Section>,
    /// The tables of the later passes of the metadata's rule (version 2).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    later: Vec<TableSetHeader>,
    /// The caller's named columns (version 2).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    columns: Vec<(String, Section)>,
    created_by: String,
}

/// One more table index in the file: its layout and sections.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TableSetHeader {
    layout: LayoutSpec,
    reason: String,
    rows: usize,
    entries: usize,
    tables: Vec<TableHeader>,
    ids: Section,
    offsets: Option<Section>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TableHeader {
    dir_bits: u32,
    entry_bytes: usize,
    dir: Section,
    entries: Section,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct NamesHeader {
    offsets: Section,
    bytes: Section,
}

#[derive(Clone, Copy, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Section {
    offset: usize,
    len: usize,
}

/// Names of entries: the name of id `i` is the `i`-th string. Used by the
/// CLI, whose ids are row numbers.
#[derive(Clone, Debug)]
pub struct Names {
    offsets: Blob,
    bytes: Blob,
}

impl Names {
    /// Number of names.
    pub fn len(&self) -> usize {
        self.offsets.len() / 8 - 1
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The name of id `id`, if there is one.
    pub fn get(&self, id: u64) -> Option<&str> {
        let i = usize::try_from(id).ok().filter(|&i| i < self.len())?;
        let o = self.offsets.bytes();
        let (a, b) = (read_u64(o, i) as usize, read_u64(o, i + 1) as usize);
        // Checked: a file opened without its checksum has its names checked
        // only as they are read.
        std::str::from_utf8(self.bytes.bytes().get(a..b)?).ok()
    }

    /// Names from strings.
    pub fn from_strings<S: AsRef<str>>(names: &[S]) -> Names {
        let mut offsets = Vec::with_capacity((names.len() + 1) * 8);
        let mut bytes = Vec::new();
        offsets.extend_from_slice(&0u64.to_le_bytes());
        for n in names {
            bytes.extend_from_slice(n.as_ref().as_bytes());
            offsets.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        }
        Names { offsets: Blob::from_vec(offsets), bytes: Blob::from_vec(bytes) }
    }

    /// `earlier` names (if any) followed by `more`: the names of a file
    /// after entries were added to it (ids continue where they ended).
    pub fn followed_by<S: AsRef<str>>(earlier: Option<&Names>, more: &[S]) -> Names {
        let mut names: Vec<&str> = earlier.map(|n| n.iter().collect()).unwrap_or_default();
        names.extend(more.iter().map(AsRef::as_ref));
        Names::from_strings(&names)
    }

    /// All names in id order.
    pub fn iter(&self) -> impl Iterator<Item = &str> + '_ {
        (0..self.len() as u64).map(|i| self.get(i).unwrap_or(""))
    }

    fn check(&self) -> std::result::Result<(), String> {
        if self.offsets.len() < 8 || !self.offsets.len().is_multiple_of(8) {
            return Err("the name offsets have the wrong size".into());
        }
        let o = self.offsets.bytes();
        let mut prev = 0u64;
        for i in 0..self.offsets.len() / 8 {
            let v = read_u64(o, i);
            if v < prev || (i == 0 && v != 0) || v as usize > self.bytes.len() {
                return Err("the name offsets are not increasing".into());
            }
            prev = v;
        }
        if prev as usize != self.bytes.len() {
            return Err("the names do not end where their bytes do".into());
        }
        std::str::from_utf8(self.bytes.bytes()).map_err(|_| "the names are not UTF-8".to_string())?;
        Ok(())
    }
}

/// Feature counts by entry id, stored as little-endian `u32`s and read
/// in place (a mapped file's counts are never copied to the heap).
#[derive(Clone, Debug)]
pub struct Features(Blob);

impl Features {
    /// Counts from a vector.
    pub fn from_vec(v: Vec<u32>) -> Features {
        Features(Blob::from_vec(v.iter().flat_map(|c| c.to_le_bytes()).collect()))
    }

    /// How many counts.
    pub fn len(&self) -> usize {
        self.0.len() / 4
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The count of id `id`, if stored.
    pub fn get(&self, id: u64) -> Option<u32> {
        let i = usize::try_from(id).ok().filter(|&i| i < self.len())?;
        Some(read_u32(self.0.bytes(), i))
    }

    /// Every count, in id order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.0.bytes().chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
    }

    /// The counts as a vector.
    pub fn to_vec(&self) -> Vec<u32> {
        self.iter().collect()
    }
}

impl From<Vec<u32>> for Features {
    fn from(v: Vec<u32>) -> Features {
        Features::from_vec(v)
    }
}

/// A caller's column in an index file: bytes the file stores, checks and
/// maps but does not interpret (the on-disk index's sequence numbers and
/// band tables, see [`crate::disk`]).
#[derive(Clone, Debug)]
pub struct Column(Blob);

impl Column {
    /// A column of these bytes.
    pub fn from_vec(v: Vec<u8>) -> Column {
        Column(Blob::from_vec(v))
    }

    /// A column of little-endian `u64`s.
    pub fn of_u64s(v: &[u64]) -> Column {
        Column::from_vec(v.iter().flat_map(|x| x.to_le_bytes()).collect())
    }

    /// A column of these `u64`s, stored little-endian, without a copy.
    pub fn from_u64_vec(mut v: Vec<u64>) -> Column {
        for x in &mut v {
            *x = x.to_le();
        }
        let len = v.len() * 8;
        Column(Blob::slice_of(std::sync::Arc::new(U64Bytes(v)), 0, len))
    }

    /// A column of little-endian `u32`s.
    pub fn of_u32s(v: &[u32]) -> Column {
        Column::from_vec(v.iter().flat_map(|x| x.to_le_bytes()).collect())
    }

    /// The bytes.
    pub fn bytes(&self) -> &[u8] {
        self.0.bytes()
    }

    /// Its length in bytes.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.0.len() == 0
    }

    /// `len` bytes from `start`, if the column holds them.
    pub fn slice(&self, start: usize, len: usize) -> Option<Column> {
        let end = start.checked_add(len)?;
        (end <= self.len()).then(|| Column(self.0.sub(start, len)))
    }

    /// The `i`-th little-endian `u64`, if the column holds it.
    #[inline]
    pub fn u64_at(&self, i: usize) -> Option<u64> {
        let b = self.0.bytes().get(i.checked_mul(8)?..i.checked_mul(8)? + 8)?;
        Some(u64::from_le_bytes(b.try_into().expect("8 bytes")))
    }

    /// The `i`-th little-endian `u32`, if the column holds it.
    #[inline]
    pub fn u32_at(&self, i: usize) -> Option<u32> {
        let b = self.0.bytes().get(i.checked_mul(4)?..i.checked_mul(4)? + 4)?;
        Some(u32::from_le_bytes(b.try_into().expect("4 bytes")))
    }
}

/// What writes a [`Deferred`] column's bytes.
pub type ColumnWriter = dyn Fn(&mut dyn Write) -> std::io::Result<()> + Send + Sync;

/// A column made while the file is written, so that it need not be held
/// in memory beside the others (a merge writes one band table at a time):
/// its exact length, and what writes its bytes. Opened again, it is an
/// ordinary [`Column`].
#[derive(Clone)]
pub struct Deferred {
    /// Bytes it writes.
    pub len: usize,
    /// Writes them (exactly `len`; another count fails the write).
    pub write: Arc<ColumnWriter>,
}

impl std::fmt::Debug for Deferred {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Deferred({} bytes)", self.len)
    }
}

/// A vector of (little-endian) `u64`s seen as its bytes.
struct U64Bytes(Vec<u64>);

impl AsRef<[u8]> for U64Bytes {
    fn as_ref(&self) -> &[u8] {
        // SAFETY: any initialised u64s are valid bytes; u8 needs no
        // alignment; the length covers exactly the vector's elements.
        unsafe { std::slice::from_raw_parts(self.0.as_ptr().cast::<u8>(), self.0.len() * 8) }
    }
}

/// An opened (or about to be written) index file.
#[derive(Clone, Debug)]
pub struct IndexFile {
    /// The index (pass 0 of the metadata's rule: every entry).
    pub index: TableIndex,
    /// The tables of the later passes of the rule the metadata names (see
    /// [`RuleTables`](super::RuleTables)), each over the entries short
    /// enough for it, ids as in `index`; empty when the rule has one pass
    /// or the file was written without them (they are then built from the
    /// feature counts when a query needs them).
    pub later: Vec<TableIndex>,
    /// Entry names, when stored.
    pub names: Option<Names>,
    /// Feature counts by entry id (the documents' lengths as a
    /// length-dependent radius sees them), when stored.
    pub features: Option<Features>,
    /// The caller's metadata, versioned by the caller (see
    /// [`crate::meta::IndexMeta`] for what neardup's tools store).
    pub meta: Option<serde_json::Value>,
    /// The caller's named columns (empty for the CLI's index files).
    pub columns: Vec<(String, Column)>,
    /// Columns made while the file is written, after `columns` (opened,
    /// they are among `columns`).
    pub deferred: Vec<(String, Deferred)>,
}

/// The parts of one compacted table index that a file stores.
struct SetParts {
    spec: LayoutSpec,
    reason: String,
    rows: usize,
    entries: usize,
    ids: Blob,
    offsets: Option<Blob>,
    tables: Vec<TableData>,
}

impl SetParts {
    /// The parts of `index`, compacted first if needed (an empty index is
    /// stored as an empty segment).
    fn of(index: &TableIndex) -> Result<SetParts> {
        let mut compacted;
        let index = if index.is_compact() {
            index
        } else {
            compacted = index.clone();
            compacted.compact()?;
            &compacted
        };
        fn parts<W: super::word::Word>(
            layout: &Arc<Layout>,
            seg: Option<&Segment<W>>,
            reason: String,
        ) -> SetParts {
            let empty;
            let seg = match seg {
                Some(s) => s,
                None => {
                    empty = Segment::<W>::from_sorted_unique(layout.clone(), Vec::new(), Vec::new(), vec![0])
                        .expect("an empty segment");
                    &empty
                }
            };
            SetParts {
                spec: seg.layout.spec,
                reason,
                rows: seg.rows,
                entries: seg.entries(),
                ids: seg.ids.clone(),
                offsets: seg.offsets.clone(),
                tables: seg.tables.clone(),
            }
        }
        let reason = index.layout_reason().to_string();
        Ok(match index.segments_u64() {
            Some((layout, segs)) => parts(layout, segs.first().map(|s| &**s), reason),
            None => {
                let (layout, segs) = index.segments_u128().expect("64 or 128 bits");
                parts(layout, segs.first().map(|s| &**s), reason)
            }
        })
    }

    /// The blobs in the order the header's sections name them.
    fn blobs(&self) -> impl Iterator<Item = &Blob> {
        std::iter::once(&self.ids)
            .chain(self.offsets.as_ref())
            .chain(self.tables.iter().flat_map(|t| [&t.dir, &t.entries]))
    }

    /// The header of this set, its sections placed by `next`.
    fn header(&self, next: &mut dyn FnMut(usize) -> Section) -> TableSetHeader {
        let ids = next(self.ids.len());
        let offsets = self.offsets.as_ref().map(|o| next(o.len()));
        let tables = self
            .tables
            .iter()
            .map(|t| TableHeader {
                dir_bits: t.dir_bits,
                entry_bytes: t.entry_bytes,
                dir: next(t.dir.len()),
                entries: next(t.entries.len()),
            })
            .collect();
        TableSetHeader {
            layout: self.spec,
            reason: self.reason.clone(),
            rows: self.rows,
            entries: self.entries,
            tables,
            ids,
            offsets,
        }
    }
}

impl IndexFile {
    /// A file of `index` with nothing else.
    pub fn new(index: TableIndex) -> IndexFile {
        IndexFile {
            index,
            later: Vec::new(),
            names: None,
            features: None,
            meta: None,
            columns: Vec::new(),
            deferred: Vec::new(),
        }
    }

    /// Writes the file atomically (temporary file, fsync, rename). Each
    /// index is compacted into one segment in the file; `self` is
    /// unchanged.
    pub fn write(&self, path: &Path) -> Result<()> {
        let sets: Vec<SetParts> =
            std::iter::once(&self.index).chain(&self.later).map(SetParts::of).collect::<Result<_>>()?;
        if sets.iter().any(|s| s.spec.bits != sets[0].spec.bits) {
            return Err(Error::Config(
                "the later passes' tables must hold fingerprints of the index's width".into(),
            ));
        }
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let mut builder = tempfile::Builder::new();
        builder.prefix(".neardup-index-");
        // A plain new file's permissions (0666 less the umask), not
        // tempfile's private 0600.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(std::fs::Permissions::from_mode(0o666));
        }
        let mut tmp = builder.tempfile_in(&dir).map_err(|e| Error::io(&dir, e))?;
        let io = |e| Error::io(path, e);
        {
            let mut w = HashingWriter {
                inner: std::io::BufWriter::with_capacity(1 << 20, tmp.as_file_mut()),
                hasher: xxhash_rust::xxh3::Xxh3::new(),
                written: 0,
            };
            encode(&mut w, &sets, self).map_err(io)?;
            let sum = w.hasher.digest();
            w.inner.write_all(&sum.to_le_bytes()).map_err(io)?;
            w.inner.write_all(END_MAGIC).map_err(io)?;
            w.inner.flush().map_err(io)?;
        }
        tmp.as_file().sync_all().map_err(io)?;
        tmp.persist(path).map_err(|e| Error::io(path, e.error))?;
        Ok(())
    }

    /// The checksum recorded at the end of an index file (XXH3-64 of
    /// everything before it), read without opening the rest: what a
    /// snapshot's owner records to recognise the file later. [`open`](Self::open)
    /// checks that the body matches it.
    pub fn stored_checksum(path: &Path) -> Result<u64> {
        use std::io::{Read, Seek, SeekFrom};
        let mut f = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        let mut tail = [0u8; 16];
        f.seek(SeekFrom::End(-16)).and_then(|_| f.read_exact(&mut tail)).map_err(|e| Error::io(path, e))?;
        if &tail[8..] != END_MAGIC {
            return Err(Error::IndexFile {
                path: path.to_path_buf(),
                message: "the file is truncated (no end marker): rebuild or restore it".into(),
            });
        }
        Ok(u64::from_le_bytes(tail[..8].try_into().expect("8 bytes")))
    }

    /// Opens a file through mmap, verifying its checksum (which reads the
    /// whole file once, without copying it to the heap).
    pub fn open(path: &Path) -> Result<IndexFile> {
        Self::open_with(path, true)
    }

    /// Opens a file, checking its structure but not its checksum: for huge
    /// files whose integrity was checked before. A damaged body can then give
    /// wrong answers, but never a crash.
    pub fn open_unverified(path: &Path) -> Result<IndexFile> {
        Self::open_with(path, false)
    }

    fn open_with(path: &Path, verify: bool) -> Result<IndexFile> {
        let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        let len = file.metadata().map_err(|e| Error::io(path, e))?.len() as usize;
        let bad = |message: String| Error::IndexFile { path: path.to_path_buf(), message };
        if len < 32 {
            return Err(bad(format!(
                "{len} bytes is too short for a neardup index (truncated or not an index)"
            )));
        }
        // SAFETY: the map is read-only; the index is treated as corrupt input
        // and checked before use. Another process truncating the file while it
        // is mapped is outside what we can defend against (as with any mmap).
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| Error::io(path, e))?;
        Self::decode(Arc::new(map), path, verify)
    }

    /// Decodes an index file held in memory (checksum verified), with the
    /// checks of [`open`](Self::open): damaged bytes are an error, never a
    /// panic (what the `index_file` fuzz target exercises).
    ///
    /// # Errors
    ///
    /// [`Error::IndexFile`] saying what is wrong with the bytes.
    pub fn from_bytes(bytes: Vec<u8>) -> Result<IndexFile> {
        if bytes.len() < 32 {
            return Err(Error::IndexFile {
                path: PathBuf::from("<memory>"),
                message: format!("{} bytes is too short for a neardup index", bytes.len()),
            });
        }
        Self::decode(Arc::new(bytes), Path::new("<memory>"), true)
    }

    /// The checks and decoding behind [`open`](Self::open) and
    /// [`from_bytes`](Self::from_bytes), over at least 32 bytes.
    fn decode(owner: Arc<dyn AsRef<[u8]> + Send + Sync>, path: &Path, verify: bool) -> Result<IndexFile> {
        let bad = |message: String| Error::IndexFile { path: path.to_path_buf(), message };
        let bytes: &[u8] = (*owner).as_ref();
        let (mut header, hlen) = read_header(bytes, verify).map_err(bad)?;
        let body = 16 + hlen..bytes.len() - 16;
        let blob = |s: Section| -> Result<Blob> {
            match s.offset.checked_add(s.len) {
                Some(end) if s.offset >= body.start && end <= body.end => {
                    Ok(Blob::slice_of(owner.clone(), s.offset, s.len))
                }
                _ => Err(bad("a section lies outside the file (truncated or damaged)".into())),
            }
        };
        let rename = |e: Error| match e {
            Error::IndexFile { message, .. } => bad(message),
            e => e,
        };
        let first = TableSetHeader {
            layout: header.layout,
            reason: header.reason.clone(),
            rows: header.rows,
            entries: header.entries,
            tables: std::mem::take(&mut header.tables),
            ids: header.ids,
            offsets: header.offsets,
        };
        let index = decode_index(&first, &blob).map_err(rename)?;
        let later = header
            .later
            .iter()
            .map(|set| {
                if set.layout.bits != first.layout.bits {
                    return Err(bad("a later pass's tables have another width: the file is damaged".into()));
                }
                decode_index(set, &blob).map_err(rename)
            })
            .collect::<Result<Vec<_>>>()?;
        let names = match header.names {
            Some(n) => {
                let names = Names { offsets: blob(n.offsets)?, bytes: blob(n.bytes)? };
                // Every offset and byte is read by the check: only with the
                // checksum (an unverified open reads nothing proportional to
                // the entries; `get` checks what it reads).
                if verify {
                    names.check().map_err(|m| bad(format!("{m}: the file is damaged")))?;
                } else if names.offsets.len() < 8 || !names.offsets.len().is_multiple_of(8) {
                    return Err(bad("the name offsets have the wrong size: the file is damaged".into()));
                }
                Some(names)
            }
            None => None,
        };
        let features = match header.features {
            Some(f) if f.len % 4 == 0 => Some(Features(blob(f)?)),
            Some(_) => return Err(bad("the feature counts have the wrong size: the file is damaged".into())),
            None => None,
        };
        let meta = match (header.meta, header.config, header.passages) {
            (Some(m), _, _) => Some(m),
            (None, None, None) => None,
            (None, config, passages) => Some(serde_json::json!({ "pipeline": config, "passages": passages })),
        };
        let columns = header
            .columns
            .iter()
            .map(|(name, section)| Ok((name.clone(), Column(blob(*section)?))))
            .collect::<Result<Vec<_>>>()?;
        Ok(IndexFile { index, later, names, features, meta, columns, deferred: Vec::new() })
    }
}

/// The frame checks (magic bytes, file version, end marker, checksum when
/// `verify`) and the JSON header with its length, over at least 32 bytes.
fn read_header(bytes: &[u8], verify: bool) -> std::result::Result<(Header, usize), String> {
    let len = bytes.len();
    if &bytes[..8] != MAGIC {
        return Err("not a neardup index file (wrong magic bytes)".into());
    }
    let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
    if !(1..=FILE_VERSION).contains(&version) {
        return Err(format!(
            "index file version {version}, this neardup reads versions 1 to {FILE_VERSION}: it was written by a \
             newer neardup; upgrade neardup, or rebuild the index with this version"
        ));
    }
    if &bytes[len - 8..] != END_MAGIC {
        return Err("the file is truncated (no end marker): rebuild or restore it".into());
    }
    if verify {
        let stored = u64::from_le_bytes(bytes[len - 16..len - 8].try_into().expect("8 bytes"));
        if xxhash_rust::xxh3::xxh3_64(&bytes[..len - 16]) != stored {
            return Err("checksum mismatch: the file is damaged; rebuild or restore it".into());
        }
    }
    let hlen = u32::from_le_bytes(bytes[12..16].try_into().expect("4 bytes")) as usize;
    if 16 + hlen > len - 16 {
        return Err("the header runs past the end of the file (truncated?)".into());
    }
    let header: Header = serde_json::from_slice(&bytes[16..16 + hlen])
        .map_err(|e| format!("unreadable header ({e}): the file is damaged"))?;
    if header.fingerprint_format_version != FORMAT_VERSION {
        return Err(format!(
            "fingerprints of format version {}, this neardup makes version {FORMAT_VERSION}: rebuild the index",
            header.fingerprint_format_version
        ));
    }
    Ok((header, hlen))
}

/// The table index the header describes, its sections taken by `blob`
/// (which checks that they lie inside the file), checked entry by entry.
fn decode_index(header: &TableSetHeader, blob: &dyn Fn(Section) -> Result<Blob>) -> Result<TableIndex> {
    let bad = |message: String| Error::IndexFile { path: PathBuf::new(), message };
    let layout = Arc::new(Layout::new(header.layout).map_err(|e| bad(e.to_string()))?);
    let mut tables = Vec::with_capacity(header.tables.len());
    for t in &header.tables {
        tables.push(TableData {
            dir_bits: t.dir_bits,
            entry_bytes: t.entry_bytes,
            dir: blob(t.dir)?,
            entries: blob(t.entries)?,
        });
    }
    let ids = blob(header.ids)?;
    let offsets = header.offsets.map(blob).transpose()?;
    // A segment whose tables and id count check out.
    fn checked<W: super::word::Word>(
        seg: Segment<W>,
        header: &TableSetHeader,
    ) -> std::result::Result<Segment<W>, String> {
        seg.check().map_err(|m| format!("{m}: the file is damaged; rebuild or restore it"))?;
        if seg.entries() != header.entries {
            return Err("the id count disagrees with the header: the file is damaged".into());
        }
        Ok(seg)
    }
    let reason = header.reason.clone();
    match header.layout.bits {
        64 => {
            let seg = Segment::<u64>::from_parts(layout, header.rows, ids, offsets, tables);
            Ok(TableIndex::from_segment_u64(checked(seg, header).map_err(bad)?, reason, 1024))
        }
        128 => {
            let seg = Segment::<u128>::from_parts(layout, header.rows, ids, offsets, tables);
            Ok(TableIndex::from_segment_u128(checked(seg, header).map_err(bad)?, reason, 1024))
        }
        b => Err(bad(format!("{b}-bit fingerprints are not supported"))),
    }
}

/// Writes through, hashing everything written.
struct HashingWriter<W: Write> {
    inner: W,
    hasher: xxhash_rust::xxh3::Xxh3,
    written: usize,
}

impl<W: Write> HashingWriter<W> {
    fn put(&mut self, b: &[u8]) -> std::io::Result<()> {
        self.hasher.update(b);
        self.written += b.len();
        self.inner.write_all(b)
    }

    fn pad_to(&mut self, pos: usize) -> std::io::Result<()> {
        const ZEROS: [u8; ALIGN] = [0; ALIGN];
        while self.written < pos {
            let n = (pos - self.written).min(ALIGN);
            self.put(&ZEROS[..n])?;
        }
        Ok(())
    }
}

fn encode<O: Write>(out: &mut HashingWriter<O>, sets: &[SetParts], file: &IndexFile) -> std::io::Result<()> {
    let features = file.features.as_ref().map(|f| &f.0);
    let mut blobs: Vec<&Blob> = sets.iter().flat_map(SetParts::blobs).collect();
    if let Some(n) = &file.names {
        blobs.extend([&n.offsets, &n.bytes]);
    }
    blobs.extend(features);
    blobs.extend(file.columns.iter().map(|(_, c)| &c.0));
    // The header's size depends on the offsets; the offsets on the header's
    // size. Reserve generously, then pad.
    let mut start = ALIGN;
    let json = loop {
        let json = serde_json::to_vec(&header_at(start, sets, file)).expect("a header always serializes");
        if 16 + json.len() <= start {
            break json;
        }
        start = (16 + json.len()).next_multiple_of(ALIGN);
    };
    // Files without later passes stay readable by neardup 0.1.
    let version: u32 = if sets.len() > 1 || !file.columns.is_empty() || !file.deferred.is_empty() {
        FILE_VERSION
    } else {
        1
    };
    out.put(MAGIC)?;
    out.put(&version.to_le_bytes())?;
    out.put(&(json.len() as u32).to_le_bytes())?;
    out.put(&json)?;
    out.pad_to(start)?;
    for b in blobs {
        out.put(b.bytes())?;
        out.pad_to(out.written.next_multiple_of(ALIGN))?;
    }
    for (name, d) in &file.deferred {
        let start = out.written;
        (d.write)(&mut PutWriter(out))?;
        if out.written - start != d.len {
            return Err(std::io::Error::other(format!(
                "column {name} wrote {} bytes, not the {} it announced",
                out.written - start,
                d.len
            )));
        }
        out.pad_to(out.written.next_multiple_of(ALIGN))?;
    }
    Ok(())
}

/// `Write` into a hashing writer (what a deferred column writes through).
struct PutWriter<'a, W: Write>(&'a mut HashingWriter<W>);

impl<W: Write> Write for PutWriter<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.put(buf)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The header of a file whose sections start at byte `start`, in the order
/// [`encode`] writes them.
fn header_at(start: usize, sets: &[SetParts], file: &IndexFile) -> Header {
    let mut pos = start;
    let mut next = |len: usize| {
        let s = Section { offset: pos, len };
        pos = (pos + len).next_multiple_of(ALIGN);
        s
    };
    let mut placed: Vec<TableSetHeader> = sets.iter().map(|s| s.header(&mut next)).collect();
    let first = placed.remove(0);
    let names = file
        .names
        .as_ref()
        .map(|n| NamesHeader { offsets: next(n.offsets.len()), bytes: next(n.bytes.len()) });
    let features = file.features.as_ref().map(|f| next(f.0.len()));
    let lens: Vec<(String, usize)> = file
        .columns
        .iter()
        .map(|(name, c)| (name.clone(), c.len()))
        .chain(file.deferred.iter().map(|(name, d)| (name.clone(), d.len)))
        .collect();
    let columns = lens.into_iter().map(|(name, len)| (name, next(len))).collect();
    Header {
        fingerprint_format_version: FORMAT_VERSION,
        config: None,
        layout: first.layout,
        reason: first.reason,
        rows: first.rows,
        entries: first.entries,
        tables: first.tables,
        ids: first.ids,
        offsets: first.offsets,
        names,
        passages: None,
        meta: file.meta.clone(),
        features,
        later: placed,
        columns,
        created_by: format!("neardup {}", env!("CARGO_PKG_VERSION")),
    }
}
