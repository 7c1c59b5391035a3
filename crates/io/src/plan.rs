//! Which files the inputs name, in which order, and how each is read.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use crate::compressed::{self, Compression};
use crate::{BadRecord, Error, InputFormat, ReadOptions};

/// One input to read: a file or standard input, with its format and
/// compression as [`plan`] found them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Input {
    /// The file; `None` is standard input.
    pub path: Option<PathBuf>,
    /// How its records are told apart. For standard input under
    /// [`InputFormat::Auto`] this stays `Auto` and is decided when the
    /// stream's first bytes are seen.
    pub format: InputFormat,
    /// How it is compressed (by its first bytes, whatever it is called);
    /// `None` for standard input, whose stream is looked at when read.
    pub compression: Compression,
}

impl Input {
    /// The name records of this input carry in their origins: the path as
    /// given (joined with the names found under a directory), or `-`.
    pub fn name(&self) -> String {
        match &self.path {
            Some(p) => p.display().to_string(),
            None => "-".into(),
        }
    }
}

/// Checks that every input path names something: a path that names
/// nothing is a mistake in the call, not a bad record to skip, so the
/// caller stops before reading anything (or writing any output).
///
/// # Errors
///
/// [`Error::Usage`] naming the first path that does not exist.
pub fn check_paths(opts: &ReadOptions) -> Result<(), Error> {
    for p in opts.paths.iter().filter(|p| p.as_os_str() != "-") {
        if let Err(e) = std::fs::metadata(p) {
            if e.kind() == io::ErrorKind::NotFound {
                return Err(Error::Usage(format!(
                    "{}: cannot open: no such file or directory (inputs are files, directories, \
                     or - for standard input)",
                    p.display()
                )));
            }
        }
    }
    Ok(())
}

/// Whether a name inside a directory is skipped: `.hidden` files and
/// folders, and `_SUCCESS`, `_metadata`, `_temporary/` as Spark and Hadoop
/// write them beside their outputs.
fn is_hidden(name: &std::ffi::OsStr) -> bool {
    name.as_encoded_bytes().first().is_some_and(|&b| b == b'.' || b == b'_')
}

/// The inputs `opts.paths` name, in the order they are read: the paths in
/// the order given (none: standard input), the files under a directory by
/// name, recursively, without `.`- and `_`-names. Each file's format and
/// compression are decided here, from its name and its first bytes. An
/// entry of a directory that cannot be listed is a [`BadRecord`] in its
/// place.
///
/// # Errors
///
/// A path that names nothing ([`check_paths`]).
pub fn plan(opts: &ReadOptions) -> Result<Vec<Result<Input, BadRecord>>, Error> {
    let found = discover(opts)?;
    Ok(found
        .into_iter()
        .map(|f| match f {
            Ok(Some(path)) => Ok(file(path, opts)),
            Ok(None) => Ok(stdin(opts)),
            Err(bad) => Err(bad),
        })
        .collect())
}

/// The files `opts.paths` name, in [`plan`]'s order (`None`: standard
/// input), without looking inside them.
fn discover(opts: &ReadOptions) -> Result<Vec<Result<Option<PathBuf>, BadRecord>>, Error> {
    check_paths(opts)?;
    let mut out = Vec::new();
    if opts.paths.is_empty() {
        out.push(Ok(None));
    }
    for p in &opts.paths {
        if p.as_os_str() == "-" {
            out.push(Ok(None));
        } else if p.is_dir() {
            let walker = walkdir::WalkDir::new(p)
                .sort_by_file_name()
                .follow_links(false)
                .into_iter()
                .filter_entry(|e| e.depth() == 0 || !is_hidden(e.file_name()));
            for entry in walker {
                match entry {
                    Ok(e) if e.file_type().is_file() => out.push(Ok(Some(e.into_path()))),
                    Ok(_) => {}
                    Err(e) => out.push(Err(BadRecord {
                        rest_lost: false,
                        origin: e.path().unwrap_or(p).display().to_string(),
                        message: format!("cannot read: {e}"),
                    })),
                }
            }
        } else {
            out.push(Ok(Some(p.clone())));
        }
    }
    Ok(out)
}

fn stdin(opts: &ReadOptions) -> Input {
    Input { path: None, format: opts.format, compression: Compression::None }
}

fn file(path: PathBuf, opts: &ReadOptions) -> Input {
    let mut head = [0u8; 6];
    let n = File::open(&path).and_then(|mut f| read_head(&mut f, &mut head)).unwrap_or(0);
    let head = &head[..n];
    let parquet = head.starts_with(b"PAR1") || has_extension(&path, "parquet");
    let (format, compression) = match opts.format {
        InputFormat::Auto | InputFormat::Parquet if parquet => (InputFormat::Parquet, Compression::None),
        InputFormat::Auto => {
            let compression = Compression::of_magic(head);
            let inner = if compression == Compression::None { &path } else { compressed::inner_name(&path) };
            match document_magic(head) {
                Some(format) if compression == Compression::None => (format, compression),
                _ => (auto_format(Some(inner), opts), compression),
            }
        }
        f => (f, Compression::of_magic(head)),
    };
    Input { path: Some(path), format, compression }
}

/// Reads up to `buf.len()` bytes (fewer only at the end of the file).
fn read_head(f: &mut File, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

fn has_extension(p: &Path, ext: &str) -> bool {
    p.extension().is_some_and(|e| e.eq_ignore_ascii_case(ext))
}

/// The format of an input named `name` (without its compression
/// extension; `None` for standard input) under [`InputFormat::Auto`].
pub(crate) fn auto_format(name: Option<&Path>, opts: &ReadOptions) -> InputFormat {
    let named = |ext: &[&str]| name.is_some_and(|p| ext.iter().any(|e| has_extension(p, e)));
    if let Some(format) = name.and_then(document_name) {
        return format;
    }
    if named(&["csv"]) {
        InputFormat::Csv
    } else if named(&["jsonl", "ndjson", "json"]) || opts.text_field.is_some() || opts.id_field.is_some() {
        InputFormat::Jsonl
    } else {
        InputFormat::Text
    }
}

/// The document format a name says (.docx, .pdf, .html, .md, …).
fn document_name(name: &Path) -> Option<InputFormat> {
    crate::documents::DocumentKind::of_name(name).map(InputFormat::of_document)
}

/// The document format a file's first bytes show (a PDF, a zip).
fn document_magic(head: &[u8]) -> Option<InputFormat> {
    crate::documents::DocumentKind::of_magic(head).map(InputFormat::of_document)
}

/// The document format of a file named `name` starting with `head`, if it
/// is a document: by its first bytes, then by its name.
pub(crate) fn document_format(name: &Path, head: &[u8]) -> Option<InputFormat> {
    document_magic(head).or_else(|| document_name(name))
}

/// Whether a file is Parquet: by its name, or by its first bytes.
pub fn is_parquet(p: &Path) -> bool {
    if has_extension(p, "parquet") {
        return true;
    }
    let mut head = [0u8; 4];
    File::open(p).and_then(|mut f| f.read_exact(&mut head)).is_ok() && &head == b"PAR1"
}

/// Total bytes of the named files, for a progress bar (`None` when
/// standard input is among them).
pub fn total_bytes(opts: &ReadOptions) -> Option<u64> {
    // Sizes only: no file is opened to see its format.
    let mut total = 0;
    for path in discover(opts).ok()?.into_iter().flatten() {
        total += std::fs::metadata(path?).map(|m| m.len()).unwrap_or(0);
    }
    Some(total)
}
