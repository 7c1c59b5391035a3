//! Reading corpora and writing kept records, once for every neardup front
//! end: the CLI, the Python package (`neardup.read`) and the Spark job's
//! file planning all read through this crate, so one folder gives the same
//! records, in the same order, whichever of them reads it.
//!
//! - [`plan`]: which files the inputs name, in which order, and how each is
//!   read ([`Input`]: its format and compression). Directories are walked
//!   in name order; inside them, names starting with `.` or `_` are
//!   skipped (`.crc` checksums, `_SUCCESS` markers), as Hadoop skips them.
//!   A file named on the command line is always read.
//! - [`read_all`]: every record of every input, as [`Item`]s: a
//!   [`Record`] with its id, text and origin (`FILE:LINE`, `FILE:row N`),
//!   or a [`BadRecord`] that names where it is and what to do.
//! - [`kept`]: `kept.jsonl` (compressed as the inputs were) or
//!   `kept.parquet` in the inputs' schema, written atomically.
//!
//! ```
//! use neardup_io::{read_all, ReadOptions};
//!
//! let dir = tempfile::tempdir()?;
//! std::fs::write(dir.path().join("a.jsonl"), "{\"id\": 7, \"text\": \"hello\"}\n")?;
//! std::fs::write(dir.path().join("b.txt"), "a whole document")?;
//! std::fs::write(dir.path().join("_SUCCESS"), "")?;
//! let opts = ReadOptions { paths: vec![dir.path().to_owned()], ..ReadOptions::default() };
//! let mut texts = Vec::new();
//! read_all(&opts, |item| -> Result<(), neardup_io::Error> {
//!     texts.push(item.expect("a good record").text);
//!     Ok(())
//! })?;
//! assert_eq!(texts, ["hello", "a whole document"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(missing_docs)]

pub mod compressed;
pub mod documents;
pub mod kept;
#[cfg(feature = "parquet")]
pub mod parquet;
mod plan;
mod read;

use std::path::PathBuf;

pub use compressed::Compression;
pub use plan::{check_paths, is_parquet, plan, total_bytes, Input};
pub use read::{read_all, read_document, read_from, read_input, BadRecord, Item, Record, EMPTY};

/// How records are told apart in an input.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum InputFormat {
    /// JSONL for names ending in .jsonl, .ndjson or .json (or when
    /// --text-field or --id-field is given), CSV for .csv, Parquet for
    /// .parquet or Parquet's first bytes; a document (.docx, .pdf, .html,
    /// .md, or a PDF's or zip's first bytes) read whole; otherwise plain text; compressed
    /// files (.gz, .zst, .bz2, .xz, found by their first bytes) by the name
    /// inside (c4.json.gz is JSONL). The CLI, Python's neardup.read and the
    /// Spark job decide the same way.
    #[default]
    Auto,
    /// Each file (or stdin) is one document.
    Text,
    /// Each line is one document.
    Lines,
    /// Each line is a JSON object holding the text.
    Jsonl,
    /// CSV with a header row; --text-field names the text column.
    Csv,
    /// Parquet files (also chosen for names ending in .parquet, or files
    /// starting with Parquet's magic bytes); --text-field names the text
    /// column, row groups are read one at a time.
    Parquet,
    /// Word documents (also chosen for names ending in .docx, or zip
    /// archives): each file one document, the text of its paragraphs.
    Docx,
    /// PDFs (also chosen for names ending in .pdf, or files starting with
    /// `%PDF-`): each file one document, its text layer.
    Pdf,
    /// HTML pages (also chosen for .html, .htm, .xhtml): each file one
    /// document, its text as a browser shows it.
    Html,
    /// Markdown (also chosen for .md, .markdown): each file one document,
    /// its text without the markup.
    Markdown,
}

impl InputFormat {
    /// The format that reads documents of `kind`.
    pub fn of_document(kind: documents::DocumentKind) -> InputFormat {
        match kind {
            documents::DocumentKind::Docx => InputFormat::Docx,
            documents::DocumentKind::Pdf => InputFormat::Pdf,
            documents::DocumentKind::Html => InputFormat::Html,
            documents::DocumentKind::Markdown => InputFormat::Markdown,
        }
    }

    /// The document kind this format reads, if it reads one.
    pub fn document(self) -> Option<documents::DocumentKind> {
        Some(match self {
            InputFormat::Docx => documents::DocumentKind::Docx,
            InputFormat::Pdf => documents::DocumentKind::Pdf,
            InputFormat::Html => documents::DocumentKind::Html,
            InputFormat::Markdown => documents::DocumentKind::Markdown,
            _ => return None,
        })
    }

    /// Whether each file of this format is one document read whole.
    pub fn is_document(self) -> bool {
        self.document().is_some()
    }

    /// The name used on command lines and in Python: `auto`, `text`, …
    pub fn name(self) -> &'static str {
        match self {
            InputFormat::Auto => "auto",
            InputFormat::Text => "text",
            InputFormat::Lines => "lines",
            InputFormat::Jsonl => "jsonl",
            InputFormat::Csv => "csv",
            InputFormat::Parquet => "parquet",
            InputFormat::Docx => "docx",
            InputFormat::Pdf => "pdf",
            InputFormat::Html => "html",
            InputFormat::Markdown => "markdown",
        }
    }
}

impl std::str::FromStr for InputFormat {
    type Err = Error;

    fn from_str(s: &str) -> Result<InputFormat, Error> {
        Ok(match s {
            "auto" => InputFormat::Auto,
            "text" => InputFormat::Text,
            "lines" => InputFormat::Lines,
            "jsonl" | "ndjson" => InputFormat::Jsonl,
            "csv" => InputFormat::Csv,
            "parquet" => InputFormat::Parquet,
            "docx" => InputFormat::Docx,
            "pdf" => InputFormat::Pdf,
            "html" | "htm" => InputFormat::Html,
            "markdown" | "md" => InputFormat::Markdown,
            _ => {
                return Err(Error::Usage(format!(
                    "input format {s:?}: choose auto, text, lines, jsonl, csv, parquet, docx, pdf, html or markdown"
                )))
            }
        })
    }
}

/// What to read and how. The defaults are the CLI's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadOptions {
    /// Files, directories, or `-` for standard input; none reads standard
    /// input. Default: none.
    pub paths: Vec<PathBuf>,
    /// How records are told apart. Default: [`InputFormat::Auto`].
    pub format: InputFormat,
    /// The JSONL field, CSV or Parquet column holding the text. Default:
    /// `text`.
    pub text_field: Option<String>,
    /// The field or column holding the id. Default: `id` where there is
    /// one, otherwise the record's origin.
    pub id_field: Option<String>,
    /// Keep empty documents instead of reporting them. Default: false.
    pub allow_empty: bool,
    /// The largest document read, in bytes; larger ones are bad records.
    /// Default: 64 MiB.
    pub max_doc_bytes: u64,
    /// Keep each record's fields as one JSON object ([`Record::raw`]), for
    /// writing kept records back. Default: false.
    pub keep_raw: bool,
}

/// How long the CLI reads one document (.docx, .pdf, .html, .md) before
/// it is a bad record: 60 s. `neardup serve` has its own, shorter
/// `--parse-timeout`.
pub const PARSE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// A size in the largest binary unit it fills: `67108864` → `"64 MiB"`,
/// `1536` → `"1.5 KiB"`, `100` → `"100 bytes"`.
pub fn units(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if bytes < 1024 {
        return format!("{bytes} bytes");
    }
    let mut v = bytes as f64 / 1024.0;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    let text = format!("{v:.1}");
    format!("{} {}", text.strip_suffix(".0").unwrap_or(&text), UNITS[u])
}

/// The largest document read by default: 64 MiB.
pub const MAX_DOC_BYTES: u64 = 64 << 20;

impl Default for ReadOptions {
    fn default() -> ReadOptions {
        ReadOptions {
            paths: Vec::new(),
            format: InputFormat::Auto,
            text_field: None,
            id_field: None,
            allow_empty: false,
            max_doc_bytes: MAX_DOC_BYTES,
            keep_raw: false,
        }
    }
}

impl ReadOptions {
    /// The text field's name (`text` unless named).
    pub fn text_field(&self) -> &str {
        self.text_field.as_deref().unwrap_or("text")
    }
}

/// What stops reading or writing as a whole (a record that cannot be read
/// is a [`BadRecord`], not an error).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The caller asked for something that cannot be done (a path that
    /// names nothing, Parquet output without Parquet inputs): exit 2 in
    /// the CLI, `ValueError` in Python.
    #[error("{0}")]
    Usage(String),
    /// Reading or writing failed.
    #[error("{what}: {source}")]
    Io {
        /// The file, and what was being done.
        what: String,
        /// The cause.
        source: std::io::Error,
    },
    /// Parquet or Arrow refused a file or a record.
    #[error("{0}")]
    Parquet(String),
}

impl Error {
    pub(crate) fn io(what: impl std::fmt::Display) -> impl FnOnce(std::io::Error) -> Error {
        let what = what.to_string();
        move |source| Error::Io { what, source }
    }
}
