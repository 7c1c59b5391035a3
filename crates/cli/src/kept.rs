//! Where the surviving records go: `kept.jsonl`, compressed as the input
//! was (`kept.jsonl.zst`, `kept.jsonl.gz`, …), or `kept.parquet` in the
//! input's schema; written to a temporary file renamed into place when
//! complete.

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::args::{InputArgs, OutputFormatArg};
use crate::input::compressed::Encoder;
use crate::input::{self, Compression};

/// The format of the kept records, resolved.
#[derive(Clone, Debug)]
pub enum KeptFormat {
    /// JSON lines, compressed or not.
    Jsonl(Compression),
    /// Parquet in this schema.
    #[cfg(feature = "parquet")]
    Parquet(arrow_schema::SchemaRef),
}

/// The input files named by `paths` (directories walked), without stdin.
fn files(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for p in paths.iter().filter(|p| p.as_os_str() != "-") {
        if p.is_dir() {
            let walk = walkdir::WalkDir::new(p).sort_by_file_name().into_iter().filter_map(|e| e.ok());
            out.extend(walk.filter(|e| e.file_type().is_file()).map(|e| e.into_path()));
        } else {
            out.push(p.clone());
        }
    }
    out
}

/// The compression a file's first bytes show.
fn compression_of(p: &Path) -> Compression {
    let mut head = [0u8; 6];
    let n = File::open(p).and_then(|mut f| f.read(&mut head)).unwrap_or(0);
    Compression::of_magic(&head[..n])
}

impl KeptFormat {
    /// What `--output-format` and the inputs call for.
    ///
    /// # Errors
    ///
    /// Parquet output without Parquet inputs (or with inputs of different
    /// schemas).
    pub fn choose(arg: OutputFormatArg, input: &InputArgs) -> Result<KeptFormat> {
        Ok(match arg {
            OutputFormatArg::Jsonl => KeptFormat::Jsonl(Compression::None),
            OutputFormatArg::JsonlGz => KeptFormat::Jsonl(Compression::Gzip),
            OutputFormatArg::JsonlZst => KeptFormat::Jsonl(Compression::Zstd),
            OutputFormatArg::JsonlBz2 => KeptFormat::Jsonl(Compression::Bzip2),
            OutputFormatArg::JsonlXz => KeptFormat::Jsonl(Compression::Xz),
            OutputFormatArg::Parquet => Self::parquet(input, true)?,
            OutputFormatArg::Auto => {
                let files = files(&input.paths);
                let stdin = input.paths.is_empty() || input.paths.iter().any(|p| p.as_os_str() == "-");
                if !stdin && !files.is_empty() && files.iter().all(|f| input::is_parquet(f)) {
                    Self::parquet(input, false)?
                } else {
                    let found: Vec<Compression> = files.iter().map(|f| compression_of(f)).collect();
                    match found.first() {
                        Some(&c) if !stdin && found.iter().all(|&x| x == c) => KeptFormat::Jsonl(c),
                        _ => KeptFormat::Jsonl(Compression::None),
                    }
                }
            }
        })
    }

    #[cfg(feature = "parquet")]
    fn parquet(input: &InputArgs, asked: bool) -> Result<KeptFormat> {
        match input::parquet::common_schema(&input.paths)? {
            Some(schema) => Ok(KeptFormat::Parquet(schema)),
            None if asked => Err(crate::UsageError(
                "--output-format parquet writes the kept rows in the schema of Parquet inputs, and no \
                 input is Parquet; choose jsonl (or jsonl.zst, jsonl.gz)"
                    .into(),
            )
            .into()),
            None => Ok(KeptFormat::Jsonl(Compression::None)),
        }
    }

    #[cfg(not(feature = "parquet"))]
    fn parquet(_input: &InputArgs, asked: bool) -> Result<KeptFormat> {
        if asked {
            return Err(crate::UsageError(
                "this neardup was built without the `parquet` feature; choose --output-format jsonl".into(),
            )
            .into());
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
    Parquet(Box<input::parquet::ParquetWriter>),
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
                        return Err(e).with_context(|| {
                            format!("{}: cannot remove the earlier run's file", p.display())
                        })
                    }
                    _ => {}
                }
            }
        }
        let tmp = crate::output::temp_file_in(dir, ".tmp")?;
        let file = tmp.reopen().with_context(|| tmp.path().display().to_string())?;
        let sink = match format {
            KeptFormat::Jsonl(c) => {
                Sink::Jsonl(Box::new(c.encoder(BufWriter::with_capacity(1 << 16, file))?))
            }
            #[cfg(feature = "parquet")]
            KeptFormat::Parquet(schema) => Sink::Parquet(Box::new(input::parquet::ParquetWriter::new(
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
        let at = || self.path.display().to_string();
        match &mut self.sink {
            Sink::Jsonl(w) => {
                w.write_all(json.as_bytes()).with_context(at)?;
                w.write_all(b"\n").with_context(at)?;
            }
            #[cfg(feature = "parquet")]
            Sink::Parquet(w) => w.push(json).with_context(at)?,
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
                let buf = (*w).finish().with_context(|| at.clone())?;
                buf.into_inner().map_err(|e| e.into_error()).with_context(|| at.clone())?
            }
            #[cfg(feature = "parquet")]
            Sink::Parquet(w) => w.finish()?,
        };
        file.sync_all().with_context(|| at.clone())?;
        self.tmp.persist(&self.path).with_context(|| format!("{at}: cannot rename into place"))?;
        Ok(self.path)
    }
}
