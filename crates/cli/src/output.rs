//! Output to stdout or to a file that appears only when complete.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// Where results go. A file is written to a temporary sibling and renamed
/// into place by [`Output::finish`]; if the run fails, the temporary file is
/// removed and no half-written output is left behind.
pub enum Output {
    /// Standard output.
    Stdout(BufWriter<io::Stdout>),
    /// A file being written.
    File { tmp: tempfile::NamedTempFile, wtr: BufWriter<std::fs::File>, path: PathBuf },
}

/// A command's output directory (`-o`): made, with its parents, when it
/// does not exist. If the command fails, a directory it made is removed
/// again when nothing was left in it, so a failed run leaves no empty
/// folder behind (one that holds a checkpoint for `--resume` stays).
#[derive(Debug)]
pub struct OutputDir {
    path: PathBuf,
    made: bool,
    kept: bool,
}

impl OutputDir {
    /// Makes `path` a directory for outputs (an existing one is used as
    /// it is).
    ///
    /// # Errors
    ///
    /// A [`UsageError`](crate::UsageError) when `path` is a file, or the
    /// directory cannot be made.
    pub fn create(path: &Path) -> Result<OutputDir> {
        if path.exists() && !path.is_dir() {
            return Err(crate::UsageError(format!(
                "{}: is a file, and -o names the directory the outputs go to (kept records, \
                 clusters, summary.json); name a new directory or an existing one",
                path.display()
            ))
            .into());
        }
        let made = !path.exists();
        std::fs::create_dir_all(path)
            .with_context(|| format!("{}: cannot create the output directory", path.display()))?;
        Ok(OutputDir { path: path.to_owned(), made, kept: false })
    }

    /// The command succeeded: the directory stays, whatever is in it.
    pub fn keep(mut self) {
        self.kept = true;
    }
}

impl Drop for OutputDir {
    fn drop(&mut self) {
        if self.made && !self.kept {
            // Only an empty directory is removed; anything in it stays.
            let _ = std::fs::remove_dir(&self.path);
        }
    }
}

impl Output {
    /// Opens `path`, or stdout for `None`.
    ///
    /// # Errors
    ///
    /// The temporary file cannot be created next to `path`.
    pub fn open(path: Option<&Path>) -> Result<Output> {
        let Some(path) = path else {
            return Ok(Output::Stdout(BufWriter::with_capacity(1 << 16, io::stdout())));
        };
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let tmp = temp_file_in(dir, ".tmp")?;
        let file = tmp.reopen().with_context(|| format!("{}", tmp.path().display()))?;
        Ok(Output::File { tmp, wtr: BufWriter::with_capacity(1 << 16, file), path: path.to_owned() })
    }

    /// The writer.
    pub fn writer(&mut self) -> &mut dyn Write {
        match self {
            Output::Stdout(w) => w,
            Output::File { wtr, .. } => wtr,
        }
    }

    /// Flushes and, for a file, renames it into place.
    ///
    /// # Errors
    ///
    /// Writing or renaming fails.
    pub fn finish(self) -> Result<()> {
        match self {
            Output::Stdout(mut w) => w.flush().context("stdout")?,
            Output::File { tmp, mut wtr, path } => {
                wtr.flush().with_context(|| path.display().to_string())?;
                wtr.get_ref().sync_all().with_context(|| path.display().to_string())?;
                tmp.persist(&path)
                    .with_context(|| format!("{}: cannot rename into place", path.display()))?;
            }
        }
        Ok(())
    }
}

/// A temporary file in `dir` to be renamed over an output: created with the
/// permissions a plain new file gets (0666 less the umask), not tempfile's
/// owner-only 0600, so outputs are as readable as `>` redirection makes them.
pub fn temp_file_in(dir: &Path, suffix: &str) -> Result<tempfile::NamedTempFile> {
    Ok(neardup_io::kept::temp_file_in(dir, suffix)?)
}

/// `n` and the noun, in the plural unless `n` is 1: "1 document",
/// "5 documents".
pub fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}
