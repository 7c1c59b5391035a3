//! Where the surviving records go: `kept.jsonl`, compressed as the input
//! was (`kept.jsonl.zst`, `kept.jsonl.gz`, …), or `kept.parquet` in the
//! input's schema; written to a temporary file renamed into place when
//! complete.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::compressed::Encoder;
use crate::{plan, Compression, Error, InputFormat, ReadOptions};

/// `Result` with this crate's error.
type Result<T> = std::result::Result<T, Error>;

/// The format asked for the kept records (`--output-format`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum OutputFormat {
    /// As the inputs are: Parquet if they all are, else JSONL compressed
    /// as they all are (plain if they differ or are not compressed).
    #[default]
    Auto,
    /// JSON lines.
    Jsonl,
    /// JSON lines, gzip-compressed.
    #[cfg_attr(feature = "clap", value(name = "jsonl.gz"))]
    JsonlGz,
    /// JSON lines, zstd-compressed.
    #[cfg_attr(feature = "clap", value(name = "jsonl.zst"))]
    JsonlZst,
    /// JSON lines, bzip2-compressed.
    #[cfg_attr(feature = "clap", value(name = "jsonl.bz2"))]
    JsonlBz2,
    /// JSON lines, xz-compressed.
    #[cfg_attr(feature = "clap", value(name = "jsonl.xz"))]
    JsonlXz,
    /// Parquet in the schema of the (Parquet) inputs.
    Parquet,
}

/// The format of the kept records, resolved.
#[derive(Clone, Debug)]
pub enum KeptFormat {
    /// JSON lines, compressed or not.
    Jsonl(Compression),
    /// Parquet in this schema.
    #[cfg(feature = "parquet")]
    Parquet(arrow_schema::SchemaRef),
}

/// A temporary file in `dir` (named `.neardup-*SUFFIX`, so that readers of
/// the folder skip it), readable as the umask allows once renamed.
///
/// # Errors
///
/// The file cannot be created.
pub fn temp_file_in(dir: &Path, suffix: &str) -> Result<tempfile::NamedTempFile> {
    let mut b = tempfile::Builder::new();
    b.prefix(".neardup-").suffix(suffix);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        b.permissions(std::fs::Permissions::from_mode(0o666));
    }
    b.tempfile_in(dir)
        .map_err(Error::io(format_args!("{}: cannot create a file in this folder", dir.display())))
}

impl KeptFormat {
    /// What `--output-format` and the inputs call for.
    ///
    /// # Errors
    ///
    /// Parquet output without Parquet inputs (or with inputs of different
    /// schemas).
    pub fn choose(asked: OutputFormat, input: &ReadOptions) -> Result<KeptFormat> {
        Ok(match asked {
            OutputFormat::Jsonl => KeptFormat::Jsonl(Compression::None),
            OutputFormat::JsonlGz => KeptFormat::Jsonl(Compression::Gzip),
            OutputFormat::JsonlZst => KeptFormat::Jsonl(Compression::Zstd),
            OutputFormat::JsonlBz2 => KeptFormat::Jsonl(Compression::Bzip2),
            OutputFormat::JsonlXz => KeptFormat::Jsonl(Compression::Xz),
            OutputFormat::Parquet => Self::parquet(&Self::inputs(input)?, true)?,
            OutputFormat::Auto => {
                let inputs = Self::inputs(input)?;
                let stdin = inputs.iter().any(|i| i.path.is_none());
                if !stdin && !inputs.is_empty() && inputs.iter().all(|i| i.format == InputFormat::Parquet) {
                    Self::parquet(&inputs, false)?
                } else {
                    match inputs.first() {
                        Some(first)
                            if !stdin && inputs.iter().all(|i| i.compression == first.compression) =>
                        {
                            KeptFormat::Jsonl(first.compression)
                        }
                        _ => KeptFormat::Jsonl(Compression::None),
                    }
                }
            }
        })
    }

    /// The inputs that can be read (an unlistable entry is not one).
    fn inputs(input: &ReadOptions) -> Result<Vec<plan::Input>> {
        Ok(plan::plan(input)?.into_iter().flatten().collect())
    }

    #[cfg(feature = "parquet")]
    fn parquet(inputs: &[plan::Input], asked: bool) -> Result<KeptFormat> {
        match crate::parquet::common_schema(inputs)? {
            Some(schema) => Ok(KeptFormat::Parquet(schema)),
            None if asked => Err(Error::Usage(
                "--output-format parquet writes the kept rows in the schema of Parquet inputs, and no \
                 input is Parquet; choose jsonl (or jsonl.zst, jsonl.gz)"
                    .into(),
            )),
            None => Ok(KeptFormat::Jsonl(Compression::None)),
        }
    }

    #[cfg(not(feature = "parquet"))]
    fn parquet(_inputs: &[plan::Input], asked: bool) -> Result<KeptFormat> {
        if asked {
            return Err(Error::Usage(
                "this neardup was built without the `parquet` feature; choose --output-format jsonl".into(),
            ));
        }
        Ok(KeptFormat::Jsonl(Compression::None))
    }

    /// The file name for `stem` (`kept` → `kept.jsonl.zst`, `kept.parquet`).
    pub fn file_name(&self, stem: &str) -> String {
        match self {
            KeptFormat::Jsonl(c) => format!("{stem}.jsonl{}", c.extension()),
            #[cfg(feature = "parquet")]
            KeptFormat::Parquet(_) => format!("{stem}.parquet"),
        }
    }

    /// Every name `stem` may have been written under: an earlier run's
    /// file in another format must not stand beside this run's.
    pub fn all_names(stem: &str) -> Vec<String> {
        let mut v: Vec<String> =
            [Compression::None, Compression::Gzip, Compression::Zstd, Compression::Bzip2, Compression::Xz]
                .iter()
                .map(|c| format!("{stem}.jsonl{}", c.extension()))
                .collect();
        v.push(format!("{stem}.parquet"));
        v
    }
}

enum Sink {
    Jsonl(Box<Encoder<BufWriter<File>>>),
    #[cfg(feature = "parquet")]
    Parquet(Box<crate::parquet::ParquetWriter>),
}

/// Writes records (JSON objects, one string each) in a [`KeptFormat`].
pub struct KeptWriter {
    sink: Sink,
    tmp: tempfile::NamedTempFile,
    path: PathBuf,
}

impl KeptWriter {
    /// Starts `dir/{stem}.{format's extension}`; removes the file the stem
    /// had in the other formats.
    ///
    /// # Errors
    ///
    /// The temporary file cannot be created.
    pub fn open(dir: &Path, stem: &str, format: &KeptFormat) -> Result<KeptWriter> {
        let path = dir.join(format.file_name(stem));
        for other in KeptFormat::all_names(stem) {
            let p = dir.join(other);
            if p != path {
                match std::fs::remove_file(&p) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                        return Err(Error::io(format_args!(
                            "{}: cannot remove the earlier run's file",
                            p.display()
                        ))(e))
                    }
                    _ => {}
                }
            }
        }
        let tmp = temp_file_in(dir, ".tmp")?;
        let file = tmp.reopen().map_err(Error::io(tmp.path().display()))?;
        let sink = match format {
            KeptFormat::Jsonl(c) => Sink::Jsonl(Box::new(
                c.encoder(BufWriter::with_capacity(1 << 16, file)).map_err(Error::io(path.display()))?,
            )),
            #[cfg(feature = "parquet")]
            KeptFormat::Parquet(schema) => Sink::Parquet(Box::new(crate::parquet::ParquetWriter::new(
                file,
                std::sync::Arc::clone(schema),
            )?)),
        };
        Ok(KeptWriter { sink, tmp, path })
    }

    /// Adds one record.
    ///
    /// # Errors
    ///
    /// Writing fails (or, for Parquet, the record does not fit the schema).
    pub fn push(&mut self, json: &str) -> Result<()> {
        let at = || Error::io(self.path.display());
        match &mut self.sink {
            Sink::Jsonl(w) => {
                w.write_all(json.as_bytes()).map_err(at())?;
                w.write_all(b"\n").map_err(at())?;
            }
            #[cfg(feature = "parquet")]
            Sink::Parquet(w) => {
                w.push(json).map_err(|e| Error::Parquet(format!("{}: {e}", self.path.display())))?
            }
        }
        Ok(())
    }

    /// Ends the stream, syncs and renames the file into place.
    ///
    /// # Errors
    ///
    /// Writing or renaming fails.
    pub fn finish(self) -> Result<PathBuf> {
        let at = self.path.display().to_string();
        let file = match self.sink {
            Sink::Jsonl(w) => {
                let buf = (*w).finish().map_err(Error::io(&at))?;
                buf.into_inner().map_err(|e| e.into_error()).map_err(Error::io(&at))?
            }
            #[cfg(feature = "parquet")]
            Sink::Parquet(w) => w.finish()?,
        };
        file.sync_all().map_err(Error::io(&at))?;
        self.tmp
            .persist(&self.path)
            .map_err(|e| Error::io(format_args!("{at}: cannot rename into place"))(e.error))?;
        Ok(self.path)
    }
}
