//! The command line's inputs, read by `neardup-io` (the reader every front
//! end shares): [`InputArgs`] become [`ReadOptions`](neardup_io::ReadOptions) here, and nothing else.

use std::path::Path;

use anyhow::Result;
pub use neardup_io::{BadRecord, Item, Record};

use crate::args::InputArgs;

impl InputArgs {
    /// The reader's options for these flags.
    pub fn options(&self) -> neardup_io::ReadOptions {
        neardup_io::ReadOptions {
            paths: self.paths.clone(),
            format: self.input_format,
            text_field: self.text_field.clone(),
            id_field: self.id_field.clone(),
            allow_empty: self.allow_empty,
            max_doc_bytes: self.max_doc_bytes.0,
            keep_raw: self.keep_raw,
        }
    }
}

/// A reader's error as the command line reports it: a usage error exits
/// with 2.
pub fn cli_error(e: neardup_io::Error) -> anyhow::Error {
    match e {
        neardup_io::Error::Usage(m) => crate::UsageError(m).into(),
        e => e.into(),
    }
}

/// Total bytes of the named files, for a progress bar (None with stdin).
pub fn total_bytes(args: &InputArgs) -> Option<u64> {
    neardup_io::total_bytes(&args.options())
}

/// Checks that every input path names something, before any output is
/// made.
///
/// # Errors
///
/// The first path that does not exist (exit 1, as an unreadable input).
pub fn check_paths(args: &InputArgs) -> Result<()> {
    Ok(neardup_io::check_paths(&args.options())?)
}

/// Reads every record of every input, in order, handing each to `sink`.
///
/// # Errors
///
/// A path that names nothing, or whatever `sink` returns.
pub fn read_all(args: &InputArgs, sink: impl FnMut(Item) -> Result<()>) -> Result<()> {
    neardup_io::read_all(&args.options(), sink)
}

/// Reads one whole document from a file or `-` (stdin), with the same
/// checks as `fingerprint` (UTF-8, not binary, size, not blank).
pub fn read_document(path: &Path, max: u64, allow_empty: bool) -> Item {
    neardup_io::read_document(path, max, allow_empty)
}
