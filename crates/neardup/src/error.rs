//! The library's error type.

use std::path::PathBuf;

/// A convenient alias for results whose error is [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in this crate.
///
/// Fingerprinting itself never fails: errors come from loading data
/// (configurations, IDF tables, stop-word files), from parsing fingerprints,
/// and from documents that have nothing to fingerprint. Every message says
/// what to do about it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A pipeline configuration is invalid.
    #[error("invalid pipeline configuration: {0}")]
    Config(String),
    /// Bytes that are not UTF-8 given to a pipeline that reads text.
    #[error(
        "the bytes are not UTF-8 (the first invalid byte is at offset {offset}), and this pipeline \
         reads text: decode them first, or use a byte-grams pipeline without normalizers (the ferd preset)"
    )]
    NotUtf8 {
        /// The offset of the first byte that is not part of a UTF-8 character.
        offset: usize,
    },
    /// A configuration file could not be parsed.
    #[error("{path}: {message}")]
    ConfigSyntax {
        /// The file.
        path: PathBuf,
        /// What the parser said, with line and column where it knows them.
        message: String,
    },
    /// No preset has this name.
    #[error("unknown preset {name:?}; the presets are: {known}")]
    UnknownPreset {
        /// The name asked for.
        name: String,
        /// The names that exist, comma-separated.
        known: String,
    },
    /// A data file (IDF table, stop-word list, configuration) could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A line of an IDF table is malformed.
    #[error("{path}:{line}: {message}; an IDF table has one `word idf` pair per line")]
    IdfTable {
        /// The file.
        path: PathBuf,
        /// The 1-based line number.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
    /// A string is not a fingerprint.
    #[error("invalid fingerprint {input:?}: {reason}")]
    ParseFingerprint {
        /// The text that failed to parse (cut to 80 characters).
        input: String,
        /// Why.
        reason: &'static str,
    },
    /// A string is not a MinHash signature.
    #[error("invalid signature {input:?}: {reason}")]
    ParseSignature {
        /// The text that failed to parse (cut to 24 characters).
        input: String,
        /// Why.
        reason: &'static str,
    },
    /// Two fingerprints of different widths were compared.
    #[error(
        "cannot compare a {left}-bit fingerprint with a {right}-bit one; \
         fingerprints are comparable only when made by the same pipeline"
    )]
    WidthMismatch {
        /// Width of the left operand.
        left: u32,
        /// Width of the right operand.
        right: u32,
    },
    /// A document produced no features: it is empty, or everything in it was
    /// filtered out.
    #[error(
        "document has no features after normalization and filtering (it is empty, \
         blank, or only punctuation/stop words); its fingerprint would say nothing"
    )]
    EmptyDocument,
    /// An index file is not one, is damaged, or is of another version.
    #[error("{path}: {message}")]
    IndexFile {
        /// The file.
        path: PathBuf,
        /// What is wrong and what to do.
        message: String,
    },
    /// An index was built by another pipeline than the one in use.
    #[error(
        "the index was built with pipeline {stored} but {wanted} is in use; fingerprints of \
         different pipelines cannot be compared: use the index's own configuration (omit \
         --preset/--config) or rebuild the index"
    )]
    ConfigMismatch {
        /// The stored pipeline's id.
        stored: String,
        /// The pipeline in use.
        wanted: String,
    },
    /// Input that cannot be used as given (what is wrong and what to do).
    #[error("{0}")]
    Input(String),
    /// A temporary file of an out-of-core job could not be written.
    #[error("{dir}: {message}")]
    Spill {
        /// The temporary folder.
        dir: PathBuf,
        /// What went wrong and what to do.
        message: String,
    },
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io { path: path.into(), source }
    }
}

/// The empty-document rule every front end applies (the CLI, the server,
/// Python, Spark): a document without features is
/// [`Error::EmptyDocument`] unless empty documents are allowed
/// (`--allow-empty`, `allow_empty=True`).
///
/// ```
/// use neardup::error::require_features;
///
/// assert!(require_features(0, false).is_err());
/// assert!(require_features(0, true).is_ok() && require_features(3, false).is_ok());
/// ```
///
/// # Errors
///
/// [`Error::EmptyDocument`], as above.
pub fn require_features(features: usize, allow_empty: bool) -> Result<()> {
    if features == 0 && !allow_empty {
        Err(Error::EmptyDocument)
    } else {
        Ok(())
    }
}
