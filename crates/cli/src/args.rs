//! Command-line arguments.

use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Parser, Subcommand, ValueEnum};
use neardup::Fingerprinter;

use crate::UsageError;

/// Find near-duplicate texts with SimHash: Chinese, English and mixed text.
///
/// Fingerprints from different presets or configurations must never be
/// compared: they are different functions of the text.
#[derive(Parser, Debug)]
#[command(name = "neardup", version, max_term_width = 100)]
pub struct Cli {
    /// Worker threads (by default, one per core).
    #[arg(short = 'j', long = "threads", global = true, value_name = "N")]
    pub threads: Option<usize>,
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Fingerprint documents: files, directories, JSONL or stdin → id and hex fingerprint.
    Fingerprint(FingerprintArgs),
    /// Compare two documents: distance, similarity, verdict, and why (--explain).
    Compare(CompareArgs),
    /// Show a preset's configuration, or check a configuration file.
    Config(ConfigArgs),
    /// Build an IDF table from a corpus, for the tfidf weighter.
    Idf(IdfArgs),
}

/// Which pipeline makes the fingerprints.
#[derive(Args, Debug, Clone)]
pub struct PipelineArgs {
    /// A named preset: default, keywords, python-simhash, yanyiwu.
    #[arg(long, value_name = "NAME", conflicts_with = "config")]
    pub preset: Option<String>,
    /// A pipeline configuration file (TOML, or JSON if it ends in .json);
    /// `neardup config show default` prints one to start from.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

impl PipelineArgs {
    /// Loads the pipeline; a bad preset or configuration is a usage error.
    pub fn load(&self) -> Result<Fingerprinter> {
        let fp = match (&self.preset, &self.config) {
            (_, Some(path)) => Fingerprinter::from_file(path),
            (Some(name), None) => Fingerprinter::preset(name),
            (None, None) => Fingerprinter::preset("default"),
        };
        fp.map_err(|e| UsageError(e.to_string()).into())
    }
}

/// How input files are read.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputFormat {
    /// JSONL for names ending in .jsonl or .ndjson (or when --text-field
    /// or --id-field is given), otherwise plain text.
    Auto,
    /// Each file (or stdin) is one document.
    Text,
    /// Each line is one document.
    Lines,
    /// Each line is a JSON object holding the text.
    Jsonl,
}

/// What to do with a record that cannot be read or fingerprinted.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnError {
    /// Stop at the first bad record (exit code 1).
    Fail,
    /// Skip bad records, say why on stderr, and count them at the end.
    Skip,
}

/// Where documents come from.
#[derive(Args, Debug, Clone)]
pub struct InputArgs {
    /// Files, directories (read recursively, in name order) or `-` for
    /// stdin. With none, stdin is read.
    #[arg(value_name = "PATHS")]
    pub paths: Vec<PathBuf>,
    /// How to read the input.
    #[arg(long = "input-format", value_enum, default_value_t = InputFormat::Auto, value_name = "FORMAT")]
    pub input_format: InputFormat,
    /// The JSONL field holding the text [default: text].
    #[arg(long, value_name = "NAME")]
    pub text_field: Option<String>,
    /// The JSONL field holding the id [default: id, if present; otherwise
    /// FILE:LINE].
    #[arg(long, value_name = "NAME")]
    pub id_field: Option<String>,
    /// What to do with a bad record (invalid UTF-8, empty, malformed JSON,
    /// missing field, unreadable file).
    #[arg(long, value_enum, default_value_t = OnError::Fail, value_name = "POLICY")]
    pub on_error: OnError,
    /// Fingerprint empty documents and documents with no features instead
    /// of treating them as bad records (their fingerprints say nothing, and
    /// all of them are near duplicates of each other).
    #[arg(long)]
    pub allow_empty: bool,
    /// The largest document read, in bytes; larger ones are bad records.
    #[arg(long, default_value_t = 64 << 20, value_name = "BYTES")]
    pub max_doc_bytes: u64,
}

/// Output formats.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    /// One JSON object per line: `{"id": …, "fingerprint": "HEX"}`.
    Jsonl,
    /// id, a tab, the hex fingerprint.
    Tsv,
}

/// `neardup fingerprint`.
#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  neardup fingerprint docs/\n  \
    neardup fingerprint corpus.jsonl --text-field body --id-field url -o fps.jsonl\n  \
    cat page.txt | neardup fingerprint --preset python-simhash --format tsv")]
pub struct FingerprintArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub pipeline: PipelineArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Jsonl)]
    pub format: OutputFormat,
    /// Write to FILE (atomically: complete or not at all) instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Add the features that voted, with their weights, in voting order
    /// (`"features": [[feature, weight], …]`; JSONL only).
    #[arg(long)]
    pub features: bool,
}

/// `neardup compare`.
#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  neardup compare a.txt b.txt\n  \
    neardup compare --text \"今天天气很好\" --text \"今天天气真好\" --explain")]
pub struct CompareArgs {
    /// Two files (`-` for stdin, once).
    #[arg(value_name = "FILE", num_args = 0..=2)]
    pub files: Vec<PathBuf>,
    /// A text to compare instead of a file (give it twice, or once with one file).
    #[arg(long, value_name = "TEXT")]
    pub text: Vec<String>,
    /// Near duplicates differ in at most K bits.
    #[arg(short, long, default_value_t = 3)]
    pub k: u32,
    /// Show the top features with weights and hashes, and the bits closest to flipping.
    #[arg(long)]
    pub explain: bool,
    /// How many features and bits --explain shows.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub top: usize,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Compare documents that have no features (empty, blank, or all
    /// filtered out) instead of refusing.
    #[arg(long)]
    pub allow_empty: bool,
    /// The largest document read, in bytes.
    #[arg(long, default_value_t = 64 << 20, value_name = "BYTES")]
    pub max_doc_bytes: u64,
    #[command(flatten)]
    pub pipeline: PipelineArgs,
}

/// `neardup config`.
#[derive(Args, Debug)]
pub struct ConfigArgs {
    #[command(subcommand)]
    pub command: ConfigCommand,
}

/// `neardup config` subcommands.
#[derive(Subcommand, Debug)]
pub enum ConfigCommand {
    /// Print a preset's full configuration (TOML, or --json).
    Show {
        /// The preset.
        #[arg(default_value = "default")]
        preset: String,
        /// Print JSON instead of TOML.
        #[arg(long)]
        json: bool,
    },
    /// Check a configuration file: parse it and load everything it names.
    Check {
        /// The file.
        file: PathBuf,
    },
    /// List the presets.
    List,
}

/// `neardup idf`.
#[derive(Args, Debug)]
pub struct IdfArgs {
    #[command(subcommand)]
    pub command: IdfCommand,
}

/// `neardup idf` subcommands.
#[derive(Subcommand, Debug)]
pub enum IdfCommand {
    /// Learn an IDF table (`word idf` lines, idf = ln(N / df)) from a corpus,
    /// tokenized as the pipeline tokenizes (normalize, tokenize, filter).
    Build {
        #[command(flatten)]
        input: InputArgs,
        #[command(flatten)]
        pipeline: PipelineArgs,
        /// Where to write the table (atomically).
        #[arg(short, long, value_name = "FILE")]
        output: PathBuf,
        /// Leave out tokens found in fewer than N documents.
        #[arg(long, default_value_t = 2, value_name = "N")]
        min_df: u64,
    },
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn arguments_are_consistent() {
        super::Cli::command().debug_assert();
    }
}
