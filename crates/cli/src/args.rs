//! Command-line arguments.

use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Parser, Subcommand, ValueEnum};
use neardup::detector::Detector;
use neardup::minhash::Method;
use neardup::Fingerprinter;

use crate::UsageError;

/// Find near-duplicate texts with MinHash LSH and SimHash: Chinese, English and mixed text.
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
    /// Remove near duplicates from a corpus: kept records, clusters, pairs, summary.
    Dedup(DedupArgs),
    /// Remove boilerplate: paragraphs, lines or sentence spans repeated across documents.
    Boilerplate(BoilerplateArgs),
    /// Remove every repeated substring of at least L bytes (suffix array), on token boundaries.
    Substrings(SubstringsArgs),
    /// Every pair of fingerprints within k bits, from a list of fingerprints.
    Pairs(PairsArgs),
    /// A persistent index on disk: build, add, query, stats.
    Index(IndexArgs),
    /// Measure detection quality on labelled pairs: precision, recall, F1 per k.
    Eval(EvalArgs),
    /// Which passages of a document are copied from another (or from an index of passages).
    Report(ReportArgs),
    /// Check a class of papers against each other and a passage library: a row per paper.
    Class(ClassArgs),
    /// Run the HTTP service over a durable store: check-and-insert, search, stats.
    Serve(ServeArgs),
}

/// What a report's ratios leave out (`report`, `class`).
#[derive(Args, Debug, Clone)]
pub struct ExclusionArgs {
    /// A source that is the author's own earlier paper (B's path, an
    /// indexed id, or a paper of the class): listed, and left out of the "without own" ratio;
    /// repeatable.
    #[arg(long, value_name = "ID")]
    pub own: Vec<String>,
    /// Ignore matches with fewer characters in A (whitespace not counted);
    /// 13 is CNKI's rule for Chinese.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub min_match_chars: usize,
    /// Count quoted text (“…”, "…", 「…」, 『…』, `>` lines) in the ratio
    /// without quotes and references.
    #[arg(long)]
    pub count_quotes: bool,
    /// Count the reference list (References, Bibliography, 参考文献, …) in
    /// the ratio without quotes and references.
    #[arg(long)]
    pub count_references: bool,
}

impl ExclusionArgs {
    /// The core's exclusions.
    pub fn exclusions(&self) -> neardup::report::Exclusions {
        neardup::report::Exclusions {
            quotes: !self.count_quotes,
            references: !self.count_references,
            min_match_chars: self.min_match_chars,
            own: self.own.clone(),
        }
    }
}

/// Output formats of `neardup class`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClassFormat {
    /// The papers, most copied first, with their top sources.
    Text,
    /// The summary table (one row per paper), for a spreadsheet.
    Csv,
    /// The summary and every paper's full report.
    Json,
}

/// `neardup class`.
#[derive(Args, Debug)]
#[command(after_help = "Each paper is checked against every other paper given (itself left out) \
    and, with --against DIR, against a passage library, as `neardup report PAPER --against DIR` \
    checks one: per paper its similarity (with and without quoted text, the reference list and \
    --own sources), its top sources (classmates marked [class]) and its matched passages (--format \
    json). Papers are read as they come (.docx, .pdf, .html, .md, text, or JSONL/CSV records); a \
    folder is a class.\n\n\
    Examples:\n  neardup class theses/ --against library\n  \
    neardup class theses/ --against library --format csv -o class.csv")]
pub struct ClassArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// A passage library (a data directory built with `neardup index
    /// build --passages`) to check the papers against too.
    #[arg(long, value_name = "DIR")]
    pub against: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ClassFormat::Text)]
    pub format: ClassFormat,
    /// Write here (atomically) instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// The most sources listed per paper.
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub max_sources: usize,
    /// Skip checking the library's checksums (read whole) on open.
    #[arg(long, requires = "against")]
    pub no_verify: bool,
    #[command(flatten)]
    pub exclusions: ExclusionArgs,
}

/// `neardup serve`.
#[derive(Args, Debug)]
#[command(after_help = "The store is DIR/store.redb (created on first use with the pipeline of \
    --preset/--config, else the preset of the method -k (SimHash) or --threshold (MinHash) implies, else \
    `minhash`, the default method's; later runs use the stored pipeline and refuse another). \
    Every acknowledged write is committed to disk. GET /openapi.json describes the API.\n\n\
    Examples:\n  neardup serve --data /var/lib/neardup\n  \
    neardup serve --data data/ --listen 0.0.0.0:8080 --token-file token.txt\n  \
    curl -s localhost:8080/v1/documents -H 'content-type: application/json' \\\n    \
    -d '{\"id\": \"doc-1\", \"text\": \"今天天气很好\", \"mode\": \"insert-if-unique\"}'")]
pub struct ServeArgs {
    /// The data directory (created if missing).
    #[arg(long, value_name = "DIR")]
    pub data: PathBuf,
    /// Address to listen on. Loopback by default: say 0.0.0.0:PORT to serve
    /// others (with --token-file, or --allow-unauthenticated).
    #[arg(long, default_value = "127.0.0.1:8080", value_name = "ADDR")]
    pub listen: std::net::SocketAddr,
    /// Serve an address other than loopback without a token: anyone who
    /// reaches it can insert and delete. Refused without this flag.
    #[arg(long)]
    pub allow_unauthenticated: bool,
    /// Seconds a connection may take to send a whole request head, from
    /// when it connects or got its last answer: closes half-sent headers
    /// and idle keep-alive connections alike.
    #[arg(long, default_value_t = 10, value_name = "SECONDS")]
    pub header_timeout: u64,
    /// The most connections served at once; more are answered 503 and
    /// closed (keep it below `ulimit -n`).
    #[arg(long, default_value_t = 2048, value_name = "N")]
    pub max_connections: usize,
    /// The radius when a request gives none (and the radius the index
    /// tables serve), for SimHash data directories. By default, the
    /// pipeline's radius rule by the documents' lengths (`neardup config
    /// show`), as `dedup` and `compare`.
    #[arg(short, long)]
    pub k: Option<u32>,
    /// The Jaccard threshold when a request gives none, for MinHash data
    /// directories. By default, the pipeline's.
    #[arg(long, conflicts_with = "k", value_name = "T")]
    pub threshold: Option<f64>,
    /// The largest radius a request may ask for.
    #[arg(long, default_value_t = 16, value_name = "K")]
    pub max_k: u32,
    /// A file holding the bearer token every route but /healthz and /livez
    /// requires (16 bytes or more; shorter ones are warned about).
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// The largest request body.
    #[arg(long, default_value = "10M", value_name = "BYTES")]
    pub max_body: ByteSize,
    /// The largest document uploaded on the page (/v1/extract: .docx,
    /// .pdf, .html, .md, text).
    #[arg(long, default_value = "32M", value_name = "BYTES")]
    pub max_upload: ByteSize,
    /// The request bodies held at once, all clients together (at least
    /// --max-upload and --max-body): over it, requests wait their turn.
    #[arg(long, default_value = "256M", value_name = "BYTES")]
    pub max_bodies: ByteSize,
    /// The longest reading one uploaded document may take, in seconds.
    #[arg(long, default_value_t = 10, value_name = "SECONDS")]
    pub parse_timeout: u64,
    /// Session cookies always get `Secure` (set it when a TLS proxy in
    /// front does not send `X-Forwarded-Proto: https`, which sets it too).
    #[arg(long)]
    pub secure_cookies: bool,
    /// A proxy in front whose X-Forwarded-For is believed (repeatable):
    /// requests from it are limited per the client it names, not as one
    /// client (wrong logins: 10 a minute per client).
    #[arg(long, value_name = "IP")]
    pub trusted_proxy: Vec<std::net::IpAddr>,
    /// Skip checking the passage files' checksums at start (they are read
    /// whole; for huge files checked before).
    #[arg(long)]
    pub no_verify: bool,
    /// The most documents in one /v1/documents:batch.
    #[arg(long, default_value_t = 1000, value_name = "N")]
    pub max_batch: usize,
    /// The longest a request may take, in seconds.
    #[arg(long, default_value_t = 30, value_name = "SECONDS")]
    pub timeout: u64,
    /// The memory the index may hold besides what the page cache maps:
    /// documents written since the last flush (a quarter of it, about
    /// 2 KiB each) and merges of segments (a merge that needs more is not
    /// made). The store's page cache is an eighth of it. Default: 64 bytes
    /// a stored document (from the store's size), at least 128M, at most a
    /// quarter of this machine's memory.
    #[arg(long, value_name = "SIZE")]
    pub memory: Option<ByteSize>,
    #[command(flatten)]
    pub pipeline: PipelineArgs,
}

/// Which pipeline makes the fingerprints.
#[derive(Args, Debug, Clone)]
pub struct PipelineArgs {
    /// A named preset: default, keywords, python-simhash, yanyiwu, yanyiwu-nodejieba, ferd
    /// (SimHash), minhash (MinHash).
    #[arg(long, value_name = "NAME", conflicts_with = "config")]
    pub preset: Option<String>,
    /// A pipeline configuration file (TOML, or JSON if it ends in .json);
    /// `neardup config show default` prints one to start from.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

impl PipelineArgs {
    /// No --preset, no --config: the default preset, or a store's own.
    pub fn none() -> PipelineArgs {
        PipelineArgs { preset: None, config: None }
    }

    /// The pipeline a dedup-like command runs (`dedup`, `compare`): the
    /// given --preset/--config, else the one --method, --k or --threshold
    /// implies, else the default method's (`neardup::presets::DEFAULT_METHOD`)
    /// — the core's `Detector::for_dedup`, as every front end resolves it.
    /// Errors are usage errors.
    pub fn detector(
        &self,
        method: Option<Method>,
        k: Option<u32>,
        threshold: Option<f64>,
    ) -> Result<Detector> {
        let given = match (&self.preset, &self.config) {
            (_, Some(path)) => Some(Detector::from_file(path)),
            (Some(name), None) => Some(Detector::preset(name)),
            (None, None) => None,
        };
        given
            .transpose()
            .and_then(|given| Detector::for_dedup(given, method, k, threshold))
            .map_err(|e| UsageError(e.to_string()).into())
    }

    /// Loads the pipeline of either method: the given --preset/--config,
    /// else the default method's preset (`neardup::presets::DEFAULT_METHOD`,
    /// as `dedup`'s); a bad preset or configuration is a usage error.
    pub fn load_detector(&self) -> Result<Detector> {
        self.load_for(None)
    }

    /// Loads the pipeline a new index or data directory gets: the given
    /// --preset/--config, else the preset of `implied` (the method the
    /// command's other flags imply: `--k` or a fingerprint list SimHash,
    /// `--threshold` MinHash), else the default method's.
    pub fn load_for(&self, implied: Option<Method>) -> Result<Detector> {
        self.load_or(neardup::presets::of_method(implied.unwrap_or(neardup::presets::DEFAULT_METHOD)))
    }

    /// Loads a SimHash pipeline for the commands that only make
    /// fingerprints (`fingerprint`, `idf`, `report`, index files): the
    /// given --preset/--config, else `default`; a bad preset or
    /// configuration, or a MinHash one, is a usage error.
    pub fn load(&self) -> Result<Fingerprinter> {
        match self.load_or("default")? {
            Detector::SimHash(f) => Ok(f),
            Detector::MinHash(_) => Err(UsageError(
                "this command makes SimHash fingerprints, but the pipeline given is a MinHash one (method = \"minhash\")"
                    .into(),
            )
            .into()),
        }
    }

    /// The given --preset/--config, else the preset `default_preset`.
    fn load_or(&self, default_preset: &str) -> Result<Detector> {
        let detector = match (&self.preset, &self.config) {
            (_, Some(path)) => Detector::from_file(path),
            (Some(name), None) => Detector::preset(name),
            (None, None) => Detector::preset(default_preset),
        };
        detector.map_err(|e| UsageError(e.to_string()).into())
    }
}

/// How input files are read (`neardup-io` decides, for every front end).
pub use neardup_io::InputFormat;

/// `--output-format`: how the kept records are written.
pub use neardup_io::kept::OutputFormat as OutputFormatArg;

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
    /// Files, directories (read recursively, in name order, skipping names
    /// that start with . or _ such as .crc and _SUCCESS) or `-` for stdin.
    /// With none, stdin is read.
    #[arg(value_name = "PATHS")]
    pub paths: Vec<PathBuf>,
    /// How to read the input.
    #[arg(long = "input-format", value_enum, default_value_t = InputFormat::Auto, value_name = "FORMAT")]
    pub input_format: InputFormat,
    /// The JSONL field or CSV column holding the text [default: text].
    #[arg(long, value_name = "NAME")]
    pub text_field: Option<String>,
    /// The JSONL field or CSV column holding the id [default: id, if
    /// present; otherwise FILE:LINE].
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
    /// The largest document read (and for .docx and .pdf, the largest text
    /// taken from one; 4× as much may be inflated); larger ones are bad
    /// records. A size: 64M, 1G, 1000000.
    #[arg(long, default_value = "64M", value_name = "BYTES")]
    pub max_doc_bytes: ByteSize,
    /// Keep each record's fields as JSON (set by commands, not a flag).
    #[arg(skip)]
    pub keep_raw: bool,
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
    /// How the two are compared, as `dedup` would: minhash (signatures, a
    /// Jaccard threshold) or simhash (fingerprints, a radius). By default,
    /// the method of --preset/--config, else the one --k or --threshold
    /// implies, else dedup's default (minhash).
    #[arg(long, value_name = "METHOD", value_parser = method_parser())]
    pub method: Option<Method>,
    /// SimHash: near duplicates differ in at most K bits. By default, the
    /// pipeline's radius for the two documents' lengths (the rule `dedup`
    /// clusters by; `neardup config show` prints it).
    #[arg(short, long)]
    pub k: Option<u32>,
    /// MinHash: near duplicates have an estimated Jaccard similarity of at
    /// least T (and share an LSH band, as `dedup` requires). By default,
    /// the pipeline's threshold.
    #[arg(long, value_name = "T", value_parser = parse_threshold, conflicts_with = "k")]
    pub threshold: Option<f64>,
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
    /// The largest document read (as for `dedup`). A size: 64M, 1G, 1000000.
    #[arg(long, default_value = "64M", value_name = "BYTES")]
    pub max_doc_bytes: ByteSize,
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

/// A byte size such as `8G`, `512M`, `1.5GiB` or `1000000`.
#[derive(Clone, Copy, Debug)]
pub struct ByteSize(pub u64);

impl std::str::FromStr for ByteSize {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let t = s.trim();
        let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
        let (num, unit) = t.split_at(split);
        let n: f64 =
            num.parse().map_err(|_| format!("{s:?} is not a size; write e.g. 8G, 512M or 1000000"))?;
        let mult: f64 = match unit.trim().to_ascii_lowercase().as_str() {
            "" | "b" => 1.0,
            "k" | "kb" | "kib" => 1024.0,
            "m" | "mb" | "mib" => 1024.0 * 1024.0,
            "g" | "gb" | "gib" => 1024.0 * 1024.0 * 1024.0,
            "t" | "tb" | "tib" => 1024.0f64.powi(4),
            u => return Err(format!("unknown unit {u:?} in {s:?}; use K, M, G or T")),
        };
        Ok(ByteSize((n * mult) as u64))
    }
}

/// The pigeonhole layout options shared by `pairs`, `dedup` and `index build`.
#[derive(Args, Debug, Clone)]
pub struct LayoutArgs {
    /// Number of blocks (m > k) of the pigeonhole layout, overriding the
    /// automatic choice; `index stats` shows what was chosen and why.
    #[arg(long, value_name = "M")]
    pub blocks: Option<u32>,
    /// Memory budget for the layout choice.
    #[arg(long, default_value = "8G", value_name = "SIZE")]
    pub memory: ByteSize,
}

/// `pairs` output formats.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum PairsFormat {
    /// `ID_A<TAB>ID_B<TAB>DISTANCE`.
    Tsv,
    /// `{"a": …, "b": …, "distance": …}`.
    Jsonl,
}

#[derive(Args, Debug)]
#[command(after_help = "Input: one fingerprint per line, as HEX, ID<TAB>HEX, or the JSONL of\n\
    `neardup fingerprint`. Ids default to line numbers. Identical fingerprints are pairs too.\n\n\
    Examples:\n  neardup fingerprint corpus.jsonl --format tsv > fps.tsv\n  neardup pairs fps.tsv --k 3 > pairs.tsv")]
pub struct PairsArgs {
    /// The fingerprint list, or `-` for stdin.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Largest Hamming distance of a pair.
    #[arg(short, long, default_value_t = 3)]
    pub k: u32,
    /// Output format.
    #[arg(long, value_enum, default_value_t = PairsFormat::Tsv)]
    pub format: PairsFormat,
    /// Write here (atomically) instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Number of blocks of the layout (default: chosen from n and k).
    #[arg(long, value_name = "M")]
    pub blocks: Option<u32>,
    /// Memory budget for the layout choice.
    #[arg(long, default_value = "4G", value_name = "SIZE")]
    pub memory: ByteSize,
    /// Print counts and the layout on stderr.
    #[arg(long)]
    pub stats: bool,
}

/// How `dedup` makes clusters of candidate pairs.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clusters {
    /// A document is removed only when it is near (verified, with
    /// --verify) the document kept for it: components are split in --keep
    /// order.
    Justified,
    /// Whole connected components, one document kept per component: a
    /// chain of neighbours can remove documents unlike the kept one.
    Components,
}

impl From<Clusters> for neardup::dedup::ClusterMode {
    fn from(c: Clusters) -> neardup::dedup::ClusterMode {
        match c {
            Clusters::Justified => neardup::dedup::ClusterMode::Justified,
            Clusters::Components => neardup::dedup::ClusterMode::Components,
        }
    }
}

/// Which member of a cluster is kept.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keep {
    /// The first in input order.
    First,
    /// The longest text (ties: the first).
    Longest,
    /// The shortest text (ties: the first).
    Shortest,
}

#[derive(Args, Debug)]
#[command(after_help = "Writes into OUT_DIR: kept.jsonl (the records that survive, all their fields;\n\
    kept.jsonl.zst, kept.jsonl.gz, kept.parquet … when the inputs are so, see --output-format),\n\
    clusters.jsonl (each cluster's members and their distance to the kept one), pairs.jsonl\n\
    (with --pairs) and summary.json (counts, cluster sizes, time per stage, peak memory),\n\
    written last: a run that stops early leaves no summary.json and no partial file.\n\n\
    Examples:\n  neardup dedup corpus.jsonl -o out/\n  \
    neardup dedup corpus.csv --text-field body --keep longest --verify jaccard:0.5 -o out/\n  \
    neardup dedup --online crawl.jsonl -o out/\n  \
    neardup dedup c4-train.json.gz fineweb.parquet --method exact -o out/\n  \
    neardup dedup new.jsonl --against corpus-index/ --save-index -o out/")]
pub struct DedupArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub pipeline: PipelineArgs,
    /// The output directory (created if missing).
    #[arg(short, long, value_name = "OUT_DIR")]
    pub output: PathBuf,
    /// How the kept records are written: by default as the inputs are
    /// (kept.parquet in their schema if all are Parquet; kept.jsonl.zst if
    /// all are zstd, kept.jsonl.gz if all gzip, …; else kept.jsonl).
    #[arg(long, value_enum, default_value_t = OutputFormatArg::Auto, value_name = "FORMAT")]
    pub output_format: OutputFormatArg,
    /// How duplicates are found: minhash (signatures, a Jaccard
    /// threshold), simhash (fingerprints, a radius k) or exact (identical
    /// texts only, by a 128-bit hash; see --exact). By default, the method
    /// of --preset/--config, else simhash with --k, minhash with
    /// --threshold, else minhash (docs/QUALITY.md measured it best).
    #[arg(long, value_name = "METHOD", value_enum)]
    pub method: Option<DedupMethod>,
    /// With --method exact: which text must be identical, the pipeline's
    /// normalized text (NFKC and lower case for the presets) or the raw
    /// text, byte for byte.
    #[arg(long, value_name = "TEXT", default_value = "normalized", value_parser = ["normalized", "raw"])]
    pub exact: String,
    /// Sign every document, even one whose text is identical to an
    /// earlier one's (by default such a copy takes the earlier one's
    /// signature or fingerprint, found by a hash of the text: the same
    /// result, without signing it again).
    #[arg(long)]
    pub no_exact_pass: bool,
    /// MinHash: documents whose estimated Jaccard similarity (of the
    /// pipeline's features) is at least T are near duplicates. By default,
    /// the pipeline's threshold (`neardup config show minhash`).
    #[arg(long, value_name = "T", value_parser = parse_threshold, conflicts_with = "k")]
    pub threshold: Option<f64>,
    /// SimHash: documents within k bits are near duplicates. By default, the
    /// pipeline's radius (`neardup config show` prints it): for `default`,
    /// 8 when the shorter document has fewer than 600 features (and the
    /// longer fewer than 1,200), else 4 (docs/QUALITY.md); for other
    /// presets their peer's k; a --config's own `radius`, else its
    /// preset's if its stages are one's, else 3; 3 for --fingerprints.
    #[arg(short, long)]
    pub k: Option<u32>,
    /// Which member of each cluster to keep.
    #[arg(long, value_enum, default_value_t = Keep::First)]
    pub keep: Keep,
    /// How clusters are made. justified: a document is removed only when
    /// it is near the document kept for it (candidate components are split
    /// greedily in --keep order, so a chain A ~ B ~ C never removes C for A);
    /// components: one document kept per connected component of near pairs.
    #[arg(long, value_enum, default_value_t = Clusters::Justified, value_name = "HOW")]
    pub clusters: Clusters,
    /// Re-check candidate pairs by the exact Jaccard similarity of their
    /// token 3-shingles (n-grams of the pipeline's tokens) and drop pairs
    /// below T, e.g. jaccard:0.35; none turns it off. SimHash verifies at
    /// jaccard:0.3 by default, MinHash not at all.
    #[arg(long, value_name = "jaccard:T|none")]
    pub verify: Option<Verify>,
    /// Also write pairs.jsonl: every near-duplicate pair found.
    #[arg(long)]
    pub pairs: bool,
    /// Streaming: keep each document unless it is within k of one kept
    /// before it (input order), instead of clustering the whole corpus.
    #[arg(long)]
    pub online: bool,
    /// How many clusters to show at the end (the kept document and the
    /// removed ones, by id and title); 0 shows none.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub show: usize,
    /// Read precomputed fingerprints (`HEX`, `ID<TAB>HEX` or fingerprint JSONL)
    /// instead of documents.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["paths", "preset", "config"])]
    pub fingerprints: Option<PathBuf>,
    /// Keep a checkpoint in --tmp-dir after reading and signing and after
    /// clustering, and start from the last one that an earlier run of the
    /// same command (same inputs, unchanged, and settings) left: a run
    /// that was stopped goes on where it was. A finished run removes it.
    #[arg(long)]
    pub resume: bool,
    /// Deduplicate the new documents against an existing corpus: an index
    /// file or data directory (`neardup index build`, or a run with
    /// --save-index). A new document near an indexed one is removed, and
    /// so is every new document clustered with it; the method and pipeline
    /// are the index's.
    #[arg(long, value_name = "INDEX", conflicts_with = "fingerprints")]
    pub against: Option<PathBuf>,
    /// With --against: add the kept new documents to the index, at once (a
    /// new index file renamed over the old, or one commit to a data
    /// directory).
    #[arg(long, requires = "against")]
    pub save_index: bool,
    /// Number of blocks (m > k) of SimHash's pigeonhole layout, overriding
    /// the automatic choice.
    #[arg(long, value_name = "M")]
    pub blocks: Option<u32>,
    /// The memory the run may use. Records beyond a quarter of it, and
    /// MinHash signatures beyond another quarter, move to --tmp-dir; the
    /// rest holds band keys, SimHash's tables and about 30 bytes a
    /// document. The default is half of this machine's memory (or of its
    /// control group's limit).
    #[arg(long, value_name = "SIZE", default_value = crate::machine::default_memory())]
    pub memory: ByteSize,
    /// Where records and signatures that do not fit --memory go (files
    /// with no name, gone when the run ends, even when it is killed).
    /// About the corpus's size plus 520 bytes a document for MinHash. By
    /// default, OUT_DIR.
    #[arg(long, value_name = "DIR")]
    pub tmp_dir: Option<PathBuf>,
}

#[derive(Args, Debug)]
#[command(after_help = "PAIRS are JSONL lines with text_a, text_b and label (1: near duplicate, 0: not;\n\
    -1 or null: undecided, skipped), and optionally edit (the kind of change; combo:... counts as\n\
    combo) and lang. Length buckets are by the characters of text_a.\n\n\
    Examples:\n  neardup eval pairs_en.jsonl pairs_zh.jsonl\n  \
    neardup eval pairs.jsonl --preset default,python-simhash --json quality.json --plot plots/\n  \
    neardup eval pairs.jsonl --config mine.toml --verify jaccard:0.4")]
pub struct EvalArgs {
    /// Labelled pairs (JSONL). Several files are pooled and also reported one by one.
    #[arg(required = true, value_name = "PAIRS")]
    pub pairs: Vec<PathBuf>,
    /// Presets to evaluate (repeat the flag or separate by commas). Without
    /// --preset and --config: default.
    #[arg(long = "preset", value_name = "NAME", value_delimiter = ',')]
    pub presets: Vec<String>,
    /// Pipeline configuration files to evaluate (repeatable).
    #[arg(long = "config", value_name = "FILE")]
    pub configs: Vec<PathBuf>,
    /// The largest k on the curve. By default, f/4 (16 for 64 bits).
    #[arg(long, value_name = "K")]
    pub max_k: Option<u32>,
    /// Report at this fixed k instead of each configuration's recommended radius.
    #[arg(short, long, value_name = "K")]
    pub k: Option<u32>,
    /// Evaluate pipelines of this method; without --preset and --config,
    /// `default` for simhash and `minhash` for minhash.
    #[arg(long, value_name = "METHOD", value_parser = method_parser())]
    pub method: Option<Method>,
    /// MinHash: report at this Jaccard threshold instead of each
    /// configuration's own (the curve covers 0.01 to 1 either way).
    #[arg(long, value_name = "T", value_parser = parse_threshold)]
    pub threshold: Option<f64>,
    /// Two-stage detection: a pair within k must also have a Jaccard
    /// similarity of its token 3-shingles of at least T, e.g. jaccard:0.35.
    #[arg(long, value_name = "jaccard:T")]
    pub verify: Option<Verify>,
    /// Write the results as JSON (one object per configuration) to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write every pair's outcome as JSONL to FILE (configuration, edit,
    /// label, distance, feature counts, verified), to study
    /// the misses.
    #[arg(long, value_name = "FILE")]
    pub dump: Option<PathBuf>,
    /// Write plots (PNG and SVG) into DIR: precision/recall against k, and
    /// the distance histograms of both labels.
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
}

/// What `boilerplate` and `substrings` share: inputs, outputs, memory.
#[derive(Args, Debug)]
pub struct CleanArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// The output directory (created if missing).
    #[arg(short, long, value_name = "OUT_DIR")]
    pub output: PathBuf,
    /// How the kept records are written (as for dedup: by default as the
    /// inputs are).
    #[arg(long, value_enum, default_value_t = OutputFormatArg::Auto, value_name = "FORMAT")]
    pub output_format: OutputFormatArg,
    /// A document that lost text and has fewer non-space characters than
    /// this left is dropped.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub min_chars: usize,
    /// The memory the run may use (counts or the suffix array's part
    /// beyond it go to --tmp-dir). By default, half of this machine's.
    #[arg(long, value_name = "SIZE", default_value = crate::machine::default_memory())]
    pub memory: ByteSize,
    /// Where what does not fit --memory goes. By default, OUT_DIR.
    #[arg(long, value_name = "DIR")]
    pub tmp_dir: Option<PathBuf>,
    /// How many of the most removed units to show at the end.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub show: usize,
}

/// `neardup boilerplate`.
#[derive(Args, Debug)]
#[command(after_help = "Reads the input twice (count, then clean): name files, not standard input.\n\
    Writes into OUT_DIR: kept.jsonl (every surviving record, all its fields, the cleaned text;\n\
    compressed or Parquet as the input is), removed.jsonl (each removed unit, most removed first:\n\
    text, documents or occurrences, removed) and summary.json (written last).\n\n\
    Examples:\n  neardup boilerplate crawl.jsonl.zst -o clean/\n  \
    neardup boilerplate corpus.jsonl --unit line --repeats -o clean/   # CCNet's rule\n  \
    neardup boilerplate corpus.parquet --unit sentences:3 --min-docs 3 -o clean/")]
pub struct BoilerplateArgs {
    #[command(flatten)]
    pub clean: CleanArgs,
    /// What is counted: paragraph (between blank lines), line, or
    /// sentences:N (every span of N consecutive sentences, as datatrove's
    /// SentenceDedup; Chinese 。！？ end sentences too). Units are compared
    /// in lower case with whitespace runs as one space.
    #[arg(long, default_value = "paragraph", value_name = "UNIT", value_parser = parse_unit)]
    pub unit: neardup::clean::Unit,
    /// A unit found in at least N documents is removed from all of them.
    #[arg(long, default_value_t = 2, value_name = "N", conflicts_with = "repeats")]
    pub min_docs: u32,
    /// Instead of --min-docs: keep the first occurrence of each unit in
    /// the corpus and remove every later one (CCNet's rule).
    #[arg(long)]
    pub repeats: bool,
    /// Only units of at least N words are counted and removed (runs of
    /// letters and digits; each Chinese, Japanese or Korean character is a
    /// word): a heading, name or page number many documents share
    /// ("Note", "SYNOPSIS", "跋", "63") is not boilerplate. 1 counts every
    /// unit.
    #[arg(long, value_name = "N", default_value_t = neardup::clean::MIN_UNIT_WORDS)]
    pub min_words: usize,
}

/// `neardup substrings`.
#[derive(Args, Debug)]
#[command(after_help = "Reads the input twice (find, then cut): name files, not standard input.\n\
    Writes into OUT_DIR: kept.jsonl (as boilerplate's), removed.jsonl (each removed span: the\n\
    record, its byte range in the text, the text) and summary.json (written last).\n\n\
    Examples:\n  neardup substrings corpus.jsonl -o clean/ --min-bytes 100\n  \
    neardup substrings corpus.jsonl.zst -o clean/ --min-tokens 50 --keep none")]
pub struct SubstringsArgs {
    #[command(flatten)]
    pub clean: CleanArgs,
    /// The shortest repeated span removed, in bytes of UTF-8 text.
    #[arg(long, value_name = "L", conflicts_with = "min_tokens")]
    pub min_bytes: Option<usize>,
    /// The shortest repeated span removed, in tokens (words; a Chinese
    /// character counts as one).
    #[arg(long, value_name = "T")]
    pub min_tokens: Option<usize>,
    /// first: the first occurrence of each repeated span stays (the
    /// default); none: every occurrence is removed.
    #[arg(long, default_value = "first", value_parser = ["first", "none"], value_name = "WHICH")]
    pub keep: String,
}

/// Parses a boilerplate unit.
pub fn parse_unit(s: &str) -> std::result::Result<neardup::clean::Unit, String> {
    s.parse().map_err(|e: neardup::Error| e.to_string())
}

/// `dedup --method`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum DedupMethod {
    /// MinHash signatures and LSH bands, a Jaccard threshold.
    Minhash,
    /// SimHash fingerprints and pigeonhole tables, a radius.
    Simhash,
    /// Identical texts only.
    Exact,
}

impl DedupMethod {
    /// The near-duplicate method, if it is one.
    pub fn near(self) -> Option<Method> {
        match self {
            DedupMethod::Minhash => Some(Method::Minhash),
            DedupMethod::Simhash => Some(Method::Simhash),
            DedupMethod::Exact => None,
        }
    }
}

/// Parses `simhash` or `minhash`.
pub fn method_parser() -> impl clap::builder::TypedValueParser<Value = Method> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(["simhash", "minhash"])
        .map(|s| s.parse::<Method>().expect("one of the listed methods"))
}

/// Parses a Jaccard threshold in (0, 1].
pub fn parse_threshold(s: &str) -> std::result::Result<f64, String> {
    match s.parse::<f64>() {
        Ok(t) if t > 0.0 && t <= 1.0 => Ok(t),
        _ => Err(format!("{s:?}: a Jaccard threshold is a number above 0 and at most 1, e.g. 0.5")),
    }
}

/// `--verify jaccard:T`, or `--verify none`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Verify {
    /// Verify at this threshold.
    Jaccard(neardup::dedup::Threshold),
    /// Do not verify (dedup verifies SimHash by default).
    Off,
}

impl Verify {
    /// The threshold, if verifying.
    pub fn threshold(self) -> Option<neardup::dedup::Threshold> {
        match self {
            Verify::Jaccard(t) => Some(t),
            Verify::Off => None,
        }
    }
}

impl std::str::FromStr for Verify {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        if s == "none" {
            return Ok(Verify::Off);
        }
        let t = s.strip_prefix("jaccard:").ok_or_else(|| {
            format!("{s:?}: write jaccard:T with T between 0 and 1, e.g. jaccard:0.5, or none")
        })?;
        match t.parse::<f64>().map(neardup::dedup::Threshold::new) {
            Ok(Ok(threshold)) => Ok(Verify::Jaccard(threshold)),
            _ => Err(format!("{t:?}: the Jaccard threshold must be a number above 0 and at most 1")),
        }
    }
}

/// How documents are cut into passages (`report`, `index build --passages`).
#[derive(Args, Debug, Clone, Copy)]
pub struct PassageArgs {
    /// Sentences per passage window.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub window: Option<u64>,
    /// A window shorter than this many characters takes in more sentences.
    #[arg(long, value_name = "N")]
    pub min_chars: Option<usize>,
}

impl PassageArgs {
    /// The configuration: the flags given over `base`.
    pub fn over(&self, base: neardup::passage::PassageConfig) -> neardup::passage::PassageConfig {
        neardup::passage::PassageConfig {
            window: self.window.map_or(base.window, |w| w as usize),
            min_chars: self.min_chars.unwrap_or(base.min_chars),
            ..base
        }
    }

    /// Whether any flag was given.
    pub fn given(&self) -> bool {
        self.window.is_some() || self.min_chars.is_some()
    }
}

/// The format of a report.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportFormat {
    /// A summary and the matched passages, for a terminal.
    Text,
    /// One JSON object.
    Json,
    /// One self-contained page: both texts side by side, matches highlighted and linked.
    Html,
}

/// `neardup report`.
#[derive(Args, Debug)]
#[command(after_help = "A and B are aligned on their words (Chinese, Japanese and Korean \
    characters one by one): the runs of --seed-words words they share are joined across gaps of \
    up to --max-gap words, in both texts at once, into one span per copied passage, so a changed \
    word, dropped punctuation, new line breaks or reordered sentences do not split it. Offsets are \
    byte offsets into each document's text. Similarity is the share of A's characters (in \
    sentences) found in B.\n\n\
    Against a passage library (a data directory built with `neardup index build --passages`), \
    every document that shares a run of words with A is aligned with A the same way. Against a \
    0.x window index file (*.ndx), spans are found to the precision of a window.\n\n\
    Examples:\n  neardup report essay.txt source.txt\n  \
    neardup report essay.txt source.txt --format html -o report.html\n  \
    neardup index build --passages corpus.jsonl -o library\n  \
    neardup report essay.txt --against library --format json")]
pub struct ReportArgs {
    /// The document to check (`-` for stdin).
    #[arg(value_name = "A")]
    pub a: PathBuf,
    /// The document it may copy from.
    #[arg(value_name = "B", required_unless_present = "against", conflicts_with = "against")]
    pub b: Option<PathBuf>,
    /// An index of passages (`neardup index build --passages`) to check A against.
    #[arg(long, value_name = "INDEX")]
    pub against: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub format: ReportFormat,
    /// Write here (atomically) instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// With --against: windows of A within K bits of an indexed window are
    /// found (default 3 on 64 bits).
    #[arg(short, long)]
    pub k: Option<u32>,
    /// Report only spans with at least N words in shared runs (two CJK
    /// characters count as a word).
    #[arg(long, default_value_t = 6, value_name = "N")]
    pub min_words: usize,
    /// Runs of N shared words are what A and a source are aligned by.
    #[arg(long, default_value_t = 4, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=64))]
    pub seed_words: u32,
    /// The most words between two shared runs of one span.
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub max_gap: u32,
    #[command(flatten)]
    pub exclusions: ExclusionArgs,
    /// With --against a library that keeps its texts: align A with at most
    /// N candidate documents (for each part of A, the 4 found there that
    /// hold most of A; then the others that hold most of A).
    #[arg(long, default_value_t = 200, value_name = "N", requires = "against")]
    pub max_candidates: usize,
    #[command(flatten)]
    pub passage: PassageArgs,
    /// The largest document read (as for `dedup`). A size: 64M, 1G, 1000000.
    #[arg(long, default_value = "64M", value_name = "BYTES")]
    pub max_doc_bytes: ByteSize,
    /// With --against: list at most N source documents (by the share of A
    /// they hold); the similarity counts all of them.
    #[arg(long, default_value_t = 20, value_name = "N", requires = "against")]
    pub max_sources: usize,
    /// With --against: leave out this indexed document (e.g. A itself, when
    /// the index holds it); repeatable.
    #[arg(long, value_name = "ID", requires = "against")]
    pub exclude: Vec<String>,
    /// With --against: report only spans made of at least N matched windows
    /// (a single short window can match by chance).
    #[arg(long, default_value_t = 1, value_name = "N", requires = "against")]
    pub min_windows: usize,
    /// With --against: skip the index's checksum check.
    #[arg(long, requires = "against")]
    pub no_verify: bool,
    #[command(flatten)]
    pub pipeline: PipelineArgs,
}

#[derive(Args, Debug)]
pub struct IndexArgs {
    #[command(subcommand)]
    pub command: IndexCommand,
}

#[derive(Subcommand, Debug)]
pub enum IndexCommand {
    /// Build an index from documents or a fingerprint list: with the default
    /// method (MinHash), a new data directory; with a SimHash pipeline
    /// (--preset default, …, or --k, --passages, --fingerprints), an index file.
    #[command(
        after_help = "Examples:\n  neardup index build corpus.jsonl -o corpus/             # MinHash: a data directory\n  \
        neardup index build --preset default corpus.jsonl -o corpus.ndx   # SimHash: an index file\n  \
        neardup index build --fingerprints fps.tsv -o fps.ndx --k 4"
    )]
    Build(IndexBuildArgs),
    /// Add documents (or fingerprints) to an index file, in place (atomically),
    /// or to a `neardup serve` data directory (while the server is stopped).
    #[command(after_help = "Examples:\n  neardup index add corpus.ndx new.jsonl\n  \
        mkdir data && neardup index add data corpus.jsonl   # fill a data directory for `neardup serve --data data`\n\n\
        An empty directory becomes a data directory of the pipeline given, else of the default method\n\
        (MinHash; SimHash with --fingerprints).")]
    Add(IndexAddArgs),
    /// Find the near duplicates of texts, fingerprints or documents.
    #[command(after_help = "Output: one JSON line per query: {\"query\": …, \"fingerprint\": …,\n\
        \"matches\": [{\"id\": …, \"distance\": …}, …]}.\n\n\
        Without --k, matches are the near duplicates by the pipeline's radius rule (as `dedup`\n\
        and `compare` decide), by the lengths of the query and of each entry: a --fingerprint\n\
        or --fingerprints query has no length and counts as a long document.\n\n\
        Examples:\n  neardup index query corpus.ndx --text \"今天天气很好\"\n  \
        neardup index query corpus.ndx --fingerprint 0123456789abcdef --k 5\n  \
        neardup index query corpus.ndx new-docs.jsonl")]
    Query(IndexQueryArgs),
    /// The layout, why it was chosen, sizes, key-run percentiles and warnings.
    Stats(IndexStatsArgs),
    /// Give a data directory's store back the space its writes left free
    /// (redb keeps freed pages for reuse: a third of the file after a bulk
    /// load), and merge its index into as few segments as --memory allows.
    /// Needs the directory to itself (stop the server first).
    Compact(IndexCompactArgs),
}

/// `neardup index compact`.
#[derive(Args, Debug)]
pub struct IndexCompactArgs {
    /// The `neardup serve` data directory.
    #[arg(value_name = "DIR")]
    pub index: PathBuf,
}

/// `neardup index build`.
#[derive(Args, Debug)]
pub struct IndexBuildArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub pipeline: PipelineArgs,
    /// A fingerprint list (`HEX`, `ID<TAB>HEX` or fingerprint JSONL) instead of documents.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["paths", "preset", "config"])]
    pub fingerprints: Option<PathBuf>,
    /// The index file to write (atomically); for a MinHash pipeline, the
    /// new (or empty) data directory to fill.
    #[arg(short, long, value_name = "PATH")]
    pub output: PathBuf,
    /// The largest radius answered through the tables (larger radii are
    /// answered exactly but by reading everything). Default: the smallest k
    /// of the pipeline's radius rule (the larger ones are built when the
    /// index is queried), 3 for --fingerprints, or with --passages the
    /// radius passages are found with (also 3 on 64 bits).
    #[arg(short, long)]
    pub k: Option<u32>,
    #[command(flatten)]
    pub layout: LayoutArgs,
    /// A passage library for `neardup report DOC --against DIR` and
    /// `neardup serve --data DIR` (`POST /v1/report`, the page), instead
    /// of an index of whole documents: `-o DIR` (a data directory, made if
    /// new) gets DIR/passages/, the documents and their texts on disk,
    /// keyed by the runs of words they share; `index add DIR --passages`
    /// adds to it. A new `-o FILE.ndx` still gets a 0.x window index file
    /// (entries ID#START-END, byte offsets; found to a window's precision).
    #[arg(long, conflicts_with = "fingerprints")]
    pub passages: bool,
    /// Accepted for scripts of neardup 0.x: a passage library always
    /// keeps its documents' texts.
    #[arg(long, requires = "passages")]
    pub keep_texts: bool,
    #[command(flatten)]
    pub passage: PassageArgs,
}

/// `neardup index add`.
#[derive(Args, Debug)]
pub struct IndexAddArgs {
    /// The index file, or a data directory (any directory; an empty one
    /// becomes a new data directory).
    #[arg(value_name = "INDEX")]
    pub index: PathBuf,
    #[command(flatten)]
    pub input: InputArgs,
    /// A fingerprint list instead of documents.
    #[arg(long, value_name = "FILE", conflicts_with = "paths")]
    pub fingerprints: Option<PathBuf>,
    /// Add the documents to the data directory's passage library
    /// (DIR/passages/, what `neardup report --against DIR` and `neardup
    /// serve`'s `/v1/report` check against), made if it has none.
    #[arg(long, conflicts_with = "fingerprints")]
    pub passages: bool,
    /// With --passages: how a new library cuts texts into sentences.
    #[command(flatten)]
    pub passage: PassageArgs,
    /// Checked against the index's own pipeline, which is what is used.
    #[command(flatten)]
    pub pipeline: PipelineArgs,
}

/// `neardup index query`.
#[derive(Args, Debug)]
pub struct IndexQueryArgs {
    /// The index file, or a `neardup serve` data directory (a directory).
    #[arg(value_name = "INDEX")]
    pub index: PathBuf,
    #[command(flatten)]
    pub input: InputArgs,
    /// Query by text (repeatable).
    #[arg(long, value_name = "TEXT")]
    pub text: Vec<String>,
    /// Query by fingerprint (repeatable); for a MinHash data directory, by
    /// signature (8 hex digits per value).
    #[arg(long, value_name = "HEX")]
    pub fingerprint: Vec<String>,
    /// Query by a fingerprint list.
    #[arg(long, value_name = "FILE")]
    pub fingerprints: Option<PathBuf>,
    /// Largest Hamming distance of a match (SimHash). By default, the
    /// pipeline's radius rule (`neardup config show`), as `dedup` and
    /// `compare`; 3 for an index built from fingerprints.
    #[arg(short, long)]
    pub k: Option<u32>,
    /// Smallest estimated Jaccard similarity of a match (MinHash data
    /// directories), among the documents sharing a band. By default, the
    /// pipeline's threshold.
    #[arg(long, conflicts_with = "k", value_name = "T")]
    pub threshold: Option<f64>,
    /// Write here (atomically) instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Skip the checksum check when opening (huge files checked before).
    #[arg(long)]
    pub no_verify: bool,
    /// Checked against the index's own pipeline, which is what is used.
    #[command(flatten)]
    pub pipeline: PipelineArgs,
}

/// `neardup index stats`.
#[derive(Args, Debug)]
pub struct IndexStatsArgs {
    /// The index file, or a `neardup serve` data directory (a directory).
    #[arg(value_name = "INDEX")]
    pub index: PathBuf,
    /// JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn arguments_are_consistent() {
        super::Cli::command().debug_assert();
    }
}
