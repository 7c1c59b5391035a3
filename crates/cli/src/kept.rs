//! `--output-format` resolved against the inputs; the writing itself is
//! `neardup-io`'s ([`KeptWriter`]).

use anyhow::Result;
pub use neardup_io::kept::{KeptFormat, KeptWriter};

use crate::args::{InputArgs, OutputFormatArg};

/// What `--output-format` and the inputs call for.
///
/// # Errors
///
/// Parquet output without Parquet inputs, or with inputs of different
/// schemas (usage errors).
pub fn choose(arg: OutputFormatArg, input: &InputArgs) -> Result<KeptFormat> {
    KeptFormat::choose(arg, &input.options()).map_err(crate::input::cli_error)
}
