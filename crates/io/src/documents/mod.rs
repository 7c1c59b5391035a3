//! Documents as people write them: `.docx`, `.pdf`, `.html` and `.md`,
//! each one document, turned into the plain text every pipeline reads.
//!
//! These readers read hostile files (uploads to `neardup serve`, folders
//! of papers from strangers), so each is bounded: the text it gives is at
//! most [`Limits::max_text_bytes`] (a zip bomb stops there), it stops at
//! [`Limits::deadline`], and a reader that panics on a malformed file
//! (the PDF reader's parser has assertions of its own) is caught and
//! reported as a damaged file. Every failure is an [`Unreadable`] that
//! says what the file is and what to do.
//!
//! The crates, and why:
//! - `.docx`: [`zip`] (the reference Rust zip reader, streaming, with
//!   deflate only: what Word writes) and [`quick_xml`] (a pull parser,
//!   no tree: `word/document.xml` is read as it inflates);
//! - `.pdf`: [`pdf_extract`] (the text layer, with fonts' ToUnicode maps
//!   and CJK encodings, on `lopdf`);
//! - `.html`: [`html5ever`]'s tokenizer (the HTML standard's, so
//!   malformed pages read as a browser reads them; linear in the page);
//! - `.md`: [`pulldown_cmark`] (CommonMark, as rustdoc reads it).
//!
//! Without the `documents` feature, the kinds are still found (by name
//! and first bytes) and [`extract`] says the readers are missing.
//!
//! ```
//! # #[cfg(feature = "documents")] {
//! use neardup_io::documents::{extract, DocumentKind, Limits};
//!
//! let html = b"<html><head><style>p{}</style></head><body><h1>Title</h1><p>One &amp; two.</p></body></html>";
//! let text = extract(DocumentKind::Html, html, &Limits::default())?;
//! assert_eq!(text, "Title\n\nOne & two.");
//! # }
//! # Ok::<(), neardup_io::documents::Unreadable>(())
//! ```

// The helpers below serve the readers, which need the feature.
#![cfg_attr(not(feature = "documents"), allow(dead_code))]

#[cfg(feature = "documents")]
mod docx;
#[cfg(feature = "documents")]
mod html;
pub mod isolation;
#[cfg(feature = "documents")]
mod markdown;
#[cfg(feature = "documents")]
mod pdf;
#[cfg(feature = "documents")]
mod pdf_tidy;
#[cfg(feature = "documents")]
mod quiet;

use std::borrow::Cow;
use std::path::Path;
use std::time::{Duration, Instant};

/// A kind of document this module reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DocumentKind {
    /// Word's `.docx` (Office Open XML): the text of `word/document.xml`.
    Docx,
    /// A PDF's text layer.
    Pdf,
    /// An HTML page: its text as a browser shows it, without scripts and
    /// styles.
    Html,
    /// Markdown (CommonMark): its text without the markup.
    Markdown,
}

impl DocumentKind {
    /// What a person calls it: `a .docx`, …
    pub fn title(self) -> &'static str {
        match self {
            DocumentKind::Docx => "a Word document (.docx)",
            DocumentKind::Pdf => "a PDF",
            DocumentKind::Html => "an HTML page",
            DocumentKind::Markdown => "a Markdown file",
        }
    }

    /// The file-name extensions [`DocumentKind::of_name`] knows: files
    /// called otherwise are read as plain text (unless their first bytes
    /// say they are a PDF or a `.docx`).
    pub const EXTENSIONS: [&'static str; 7] = ["docx", "pdf", "html", "htm", "xhtml", "md", "markdown"];

    /// The kind a file name says (`.docx`, `.pdf`, `.html`/`.htm`/`.xhtml`,
    /// `.md`/`.markdown`), if any.
    pub fn of_name(name: &Path) -> Option<DocumentKind> {
        let ext = name.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "docx" => DocumentKind::Docx,
            "pdf" => DocumentKind::Pdf,
            "html" | "htm" | "xhtml" => DocumentKind::Html,
            "md" | "markdown" => DocumentKind::Markdown,
            _ => return None,
        })
    }

    /// The kind a file's first bytes show, whatever it is called: `%PDF-`,
    /// or a zip archive (which is read as a `.docx`, and refused with a
    /// clear message when it is not one).
    pub fn of_magic(head: &[u8]) -> Option<DocumentKind> {
        if head.starts_with(b"%PDF-") {
            Some(DocumentKind::Pdf)
        } else if head.starts_with(b"PK\x03\x04") {
            Some(DocumentKind::Docx)
        } else {
            None
        }
    }
}

/// Bounds on reading one document.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// The most text (and, for a `.docx`, inflated XML) read, in bytes.
    /// Default: 64 MiB, the readers' `max_doc_bytes`.
    pub max_text_bytes: u64,
    /// When to give up. Default: none (the CLI reads its own files);
    /// `neardup serve` sets one per upload.
    pub deadline: Option<Instant>,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { max_text_bytes: crate::MAX_DOC_BYTES, deadline: None }
    }
}

impl Limits {
    /// These limits, with a deadline `time` from now.
    pub fn within(self, time: Duration) -> Limits {
        Limits { deadline: Some(Instant::now() + time), ..self }
    }

    /// The most inflated bytes a document may hold: [`INFLATION`] times
    /// the text limit.
    pub fn inflation(&self) -> u64 {
        self.max_text_bytes.saturating_mul(INFLATION)
    }

    /// [`Unreadable::TimedOut`] once the deadline has passed.
    fn check_time(&self) -> Result<(), Unreadable> {
        match self.deadline {
            Some(d) if Instant::now() >= d => Err(Unreadable::TimedOut),
            _ => Ok(()),
        }
    }
}

/// Why a document gave no text.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unreadable {
    /// The bytes are not the kind of document they were read as (a
    /// renamed file).
    #[error("not {expected}: {found}; check the file, or give its text as .txt")]
    NotA {
        /// What it was read as.
        expected: Cow<'static, str>,
        /// What it looks like instead.
        found: String,
    },
    /// The file is that kind of document but damaged or unsupported.
    #[error("{0}")]
    Damaged(String),
    /// A PDF whose pages have no text layer (a scan).
    #[error(
        "a PDF without a text layer ({pages} page(s), no text): probably scanned images; \
         run OCR on it first (for example `ocrmypdf in.pdf out.pdf`) or give its text as .txt"
    )]
    NoTextLayer {
        /// Its pages.
        pages: usize,
    },
    /// The text is over the limit.
    #[error(
        "{what} is over the limit of {} (a very large document); if it is genuine, raise the limit \
         (neardup: --max-doc-bytes; neardup serve: --max-body) or split it",
        crate::units(*limit)
    )]
    TooLarge {
        /// What grew too large.
        what: Cow<'static, str>,
        /// The limit, in bytes.
        limit: u64,
    },
    /// A compressed part (a PDF stream, a `.docx`'s zip entry) inflates
    /// past the limit derived from the text limit: a decompression bomb.
    #[error(
        "{what} inflates past the limit of {} (a decompression bomb, or a very large document); \
         if it is genuine, raise the limit (neardup: --max-doc-bytes; neardup serve: --max-body), \
         which allows {INFLATION}× as much inflated data, or give its text as .txt",
        crate::units(*limit)
    )]
    Bomb {
        /// What inflated too far.
        what: Cow<'static, str>,
        /// The limit on inflated bytes.
        limit: u64,
    },
    /// This build has no reader for it (built without the `documents`
    /// feature).
    #[error("{0}, and this neardup was built without the `documents` feature; rebuild with it (the default) or give its text as .txt")]
    Unsupported(Cow<'static, str>),
    /// Reading took longer than allowed.
    #[error("reading it took too long (a damaged or hostile file?); give its text as .txt")]
    TimedOut,
    /// The reader's process died on it: out of its memory limit, or
    /// crashed (see [`isolation`]).
    #[error(
        "reading it {how} (a decompression bomb, or a damaged or hostile file); \
         if it is genuine, raise the limit (neardup: --max-doc-bytes; neardup serve: --max-body) or give its text as .txt"
    )]
    ReaderDied {
        /// What happened, in words: "needed more than the reader's
        /// memory limit of 512 MiB", "crashed the reader (signal 11)".
        how: String,
    },
}

/// How many inflated bytes a document may hold per byte of its text
/// limit: a PDF's content streams and fonts, a `.docx`'s XML.
pub const INFLATION: u64 = 4;

/// The text of one document of `kind`, read from its bytes within `limits`.
///
/// When the program has chosen to read documents in child processes
/// ([`isolation::install`], as the `neardup` binary does), the reading
/// happens there, under memory, CPU and output limits, and is killed at
/// the deadline; otherwise here, with a reader's panic caught (and kept
/// off stderr) and reported as a damaged file.
///
/// # Errors
///
/// [`Unreadable`] saying why there is no text.
pub fn extract(kind: DocumentKind, bytes: &[u8], limits: &Limits) -> Result<String, Unreadable> {
    match isolation::installed() {
        Some(pool) => pool.extract(kind, bytes, limits),
        None => extract_here(kind, bytes, limits),
    }
}

/// [`extract`] in this process, whatever is installed: what the child
/// reader runs.
///
/// # Errors
///
/// [`Unreadable`] saying why there is no text.
pub fn extract_here(kind: DocumentKind, bytes: &[u8], limits: &Limits) -> Result<String, Unreadable> {
    // A reader that panics on a malformed file is a damaged file, not a
    // crash of the service reading it, and its panic message is not
    // printed.
    #[cfg(not(feature = "documents"))]
    let read: Result<Result<String, Unreadable>, String> = {
        let _ = (bytes, limits);
        Ok(Err(Unreadable::Unsupported(kind.title().into())))
    };
    #[cfg(feature = "documents")]
    let read = quiet::catch(|| match kind {
        DocumentKind::Docx => docx::text(bytes, limits),
        DocumentKind::Pdf => pdf::text(bytes, limits),
        DocumentKind::Html => html::text(bytes, limits),
        DocumentKind::Markdown => markdown::text(bytes, limits),
    });
    match read {
        Ok(r) => r,
        Err(why) => Err(Unreadable::Damaged(format!(
            "{} that cannot be read: its structure is damaged ({why}); open and save it again, or give its text as .txt",
            kind.title()
        ))),
    }
}

/// The text of a file as it comes (an upload, a file of a folder): a
/// document by its first bytes or its name (`.docx`, `.pdf`, `.html`,
/// `.md`), otherwise UTF-8 text; with the kind it was read as (`None`:
/// plain text).
///
/// # Errors
///
/// [`Unreadable`] saying why there is no text: a binary file that is no
/// document, text that is not UTF-8, a document that cannot be read.
pub fn text_of_file(
    name: &str,
    bytes: &[u8],
    limits: &Limits,
) -> Result<(Option<DocumentKind>, String), Unreadable> {
    match kind_of_file(name, bytes) {
        Some(kind) => extract(kind, bytes, limits).map(|t| (Some(kind), t)),
        None => plain_text(bytes, limits).map(|t| (None, t)),
    }
}

/// The largest file of `kind` (`None`: plain text) that can be read,
/// given the most bytes a file may have (`max_file`, an upload limit) and
/// the text limit: plain text is its own text, so it is held to both;
/// documents shrink to their text as they are read, so only to the first.
/// Every front end asks this before it takes a file, so that a file it
/// accepts is one that can be read.
pub fn file_limit(kind: Option<DocumentKind>, max_file: u64, max_text: u64) -> u64 {
    match kind {
        None => max_file.min(max_text),
        Some(_) => max_file,
    }
}

/// The kind [`text_of_file`] reads a file as: its first bytes, else its
/// name (`None`: plain text).
pub fn kind_of_file(name: &str, head: &[u8]) -> Option<DocumentKind> {
    DocumentKind::of_magic(head).or_else(|| DocumentKind::of_name(Path::new(name)))
}

/// `bytes` as UTF-8 text, refused when binary.
fn plain_text(bytes: &[u8], limits: &Limits) -> Result<String, Unreadable> {
    if bytes.len() as u64 > limits.max_text_bytes {
        return Err(Unreadable::TooLarge { what: "the text".into(), limit: limits.max_text_bytes });
    }
    if bytes.iter().take(8192).any(|&b| b == 0) {
        return Err(Unreadable::NotA {
            expected: "a text, .docx, .pdf, .html or .md file".into(),
            found: looks_like(bytes).replace("it is plain text", "it is some binary file"),
        });
    }
    match std::str::from_utf8(bytes) {
        Ok(t) => Ok(t.to_owned()),
        Err(e) => Err(Unreadable::Damaged(format!(
            "text that is not UTF-8 (invalid byte at {}); save it as UTF-8 (for example `iconv -f GB18030 -t UTF-8`)",
            e.valid_up_to()
        ))),
    }
}

/// What a file that is not `expected` looks like instead, by its first bytes.
fn looks_like(bytes: &[u8]) -> String {
    let head = &bytes[..bytes.len().min(8)];
    let what = if bytes.is_empty() {
        "the file is empty"
    } else if head.starts_with(b"%PDF") {
        "it is a PDF"
    } else if head.starts_with(b"PK\x03\x04") {
        "it is a zip archive"
    } else if head.starts_with(b"MZ") || head.starts_with(b"\x7fELF") {
        "it is a program"
    } else if head.starts_with(b"\xd0\xcf\x11\xe0") {
        "it is an old Office file (.doc); save it as .docx"
    } else if head.starts_with(b"\x89PNG") || head.starts_with(b"\xff\xd8\xff") || head.starts_with(b"GIF8") {
        "it is an image"
    } else if std::str::from_utf8(&bytes[..bytes.len().min(4096)]).is_ok() {
        "it is plain text"
    } else {
        "it is some other binary file"
    };
    what.to_owned()
}

/// Text pushed within the byte limit.
struct Bounded<'a> {
    text: String,
    limits: &'a Limits,
    what: &'static str,
}

impl<'a> Bounded<'a> {
    fn new(limits: &'a Limits, what: &'static str) -> Bounded<'a> {
        Bounded { text: String::new(), limits, what }
    }

    fn push(&mut self, s: &str) -> Result<(), Unreadable> {
        if (self.text.len() + s.len()) as u64 > self.limits.max_text_bytes {
            return Err(Unreadable::TooLarge { what: self.what.into(), limit: self.limits.max_text_bytes });
        }
        self.text.push_str(s);
        Ok(())
    }

    /// Ends the current block: one blank line between blocks, none at the
    /// start, trailing spaces of the block dropped.
    fn end_block(&mut self) {
        let kept = self.text.trim_end_matches([' ', '\t']).len();
        self.text.truncate(kept);
        if !self.text.is_empty() && !self.text.ends_with("\n\n") {
            self.text.push_str(if self.text.ends_with('\n') { "\n" } else { "\n\n" });
        }
    }

    /// The text, without the blank lines at its end.
    fn finish(mut self) -> String {
        let kept = self.text.trim_end().len();
        self.text.truncate(kept);
        self.text
    }
}

#[cfg(all(test, feature = "documents"))]
mod tests;
