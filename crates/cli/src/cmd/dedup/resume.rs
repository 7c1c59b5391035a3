//! `dedup --resume`: a checkpoint after each long stage, so that a run
//! that was stopped (killed, out of disk, a machine restarted) starts
//! again after its last finished stage instead of from the beginning.
//!
//! The checkpoint is a folder in `--tmp-dir` named by a hash of what
//! decides the result: the inputs (each file's path, size and
//! modification time), the pipeline, the method and rule, and the flags
//! that change the outputs. After reading and signing it holds the
//! records, the documents and the counts (`read.done` written last);
//! after clustering, the clusters (`found.done`); after `--save-index`
//! updated the index, `index.done`. A finished run removes it. Standard input cannot be read again, so a run reading it keeps no
//! checkpoint.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use neardup::dedup::{DedupRecords, DedupResult, ShingleColumn};
use serde_json::{json, Value};

use super::docs::DocStore;
use crate::args::DedupArgs;

/// What reading and signing gave, as a checkpoint keeps it.
pub struct ReadStage {
    pub docs: DocStore,
    pub records: DedupRecords,
    /// The verification shingles signing kept (empty when not verifying).
    pub shingles: ShingleColumn,
    pub total: u64,
    pub bytes_in: u64,
    pub skipped: u64,
    pub seconds: f64,
}

/// Seconds per stage, by name.
type Timings = Vec<(String, f64)>;

/// A run's checkpoint folder.
pub struct Checkpoint {
    dir: PathBuf,
}

impl Checkpoint {
    /// The checkpoint of this command in `tmp`, if it can keep one (not
    /// when reading standard input).
    pub fn of(args: &DedupArgs, tmp: &Path, pipeline: Option<u64>) -> Result<Option<Checkpoint>> {
        if !args.resume {
            return Ok(None);
        }
        let mut inputs = Vec::new();
        if args.input.paths.is_empty() || args.input.paths.iter().any(|p| p.as_os_str() == "-") {
            note!(
                "neardup: --resume keeps no checkpoint when reading standard input (it cannot be read again)"
            );
            return Ok(None);
        }
        for p in args.input.paths.iter().chain(&args.fingerprints) {
            for e in walkdir::WalkDir::new(p).sort_by_file_name() {
                let e = e.with_context(|| format!("{}: cannot read", p.display()))?;
                let m = e.metadata().with_context(|| format!("{}: cannot read", e.path().display()))?;
                let mtime = m.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
                inputs.push(json!([
                    e.path().display().to_string(),
                    m.len(),
                    mtime.map(|d| d.as_nanos() as u64)
                ]));
            }
        }
        let what = json!({
            "inputs": inputs,
            "pipeline": pipeline,
            "input": format!("{:?}", (args.input.input_format, &args.input.text_field, &args.input.id_field,
                args.input.on_error, args.input.allow_empty, args.input.max_doc_bytes)),
            "rule": format!("{:?}", (args.method, args.k, args.threshold, args.keep, &args.verify, args.online,
                args.pairs, args.blocks, &args.against, args.clusters)),
        });
        let key = xxhash_rust::xxh3::xxh3_64(what.to_string().as_bytes());
        let dir = tmp.join(format!(".neardup-resume-{key:016x}"));
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("{}: cannot create the checkpoint folder (--tmp-dir)", dir.display()))?;
        Ok(Some(Checkpoint { dir }))
    }

    /// The reading stage of an earlier run, if it finished. A checkpoint
    /// that cannot be read (damaged, from another version) is said so,
    /// removed, and the run starts over.
    /// Shingles to verify by are held up to `shingles_limit` bytes, the
    /// rest read back from a temporary file.
    pub fn read_stage(&self, shingles_limit: u64) -> Result<Option<ReadStage>> {
        self.try_read_stage(shingles_limit).or_else(|e| self.discard(e))
    }

    /// The clusters of an earlier run, if it got that far, with the
    /// seconds of its stages; an unreadable checkpoint as for
    /// [`read_stage`](Self::read_stage).
    pub fn found(&self) -> Result<Option<(DedupResult, Timings)>> {
        self.try_found().or_else(|e| self.discard(e))
    }

    /// Removes a checkpoint that cannot be read, saying why.
    fn discard<T>(&self, e: anyhow::Error) -> Result<Option<T>> {
        note!("neardup: cannot read the checkpoint {} ({e:#}); starting over", self.dir.display());
        std::fs::remove_dir_all(&self.dir)
            .and_then(|()| std::fs::create_dir_all(&self.dir))
            .with_context(|| format!("{}: cannot remove the damaged checkpoint", self.dir.display()))?;
        Ok(None)
    }

    fn try_read_stage(&self, shingles_limit: u64) -> Result<Option<ReadStage>> {
        if !self.dir.join("read.done").exists() {
            return Ok(None);
        }
        if self.dir.join("texts.jsonl").exists() {
            anyhow::bail!("it was written by an earlier neardup (texts kept, not shingles)");
        }
        let meta: Value = serde_json::from_str(&std::fs::read_to_string(self.dir.join("read.json"))?)?;
        let n = meta["documents"].as_u64().unwrap_or(0) as usize;
        let records = DedupRecords::load(&self.dir).map_err(anyhow::Error::from)?;
        let docs = DocStore::open_file(&self.dir.join("docs.tsv"), n)?;
        let mut shingles =
            ShingleColumn::spilling(neardup::dedup::SpillTo { dir: self.dir.clone(), limit: shingles_limit });
        if let Ok(f) = std::fs::File::open(self.dir.join("shingles.bin")) {
            use std::io::Read;
            let mut r = std::io::BufReader::new(f);
            let mut len = [0u8; 4];
            let mut hashes: Vec<u64> = Vec::new();
            for _ in 0..n {
                r.read_exact(&mut len).context("shingles.bin ends early")?;
                let mut bytes = vec![0u8; 8 * u32::from_le_bytes(len) as usize];
                r.read_exact(&mut bytes).context("shingles.bin ends early")?;
                hashes.clear();
                hashes.extend(
                    bytes.chunks_exact(8).map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes"))),
                );
                shingles.push(&hashes)?;
            }
        }
        let num = |k: &str| meta[k].as_u64().unwrap_or(0);
        note!(
            "neardup: resuming after reading and signing ({n} documents; checkpoint {})",
            self.dir.display()
        );
        Ok(Some(ReadStage {
            docs,
            records,
            shingles,
            total: num("total"),
            bytes_in: num("bytes_in"),
            skipped: num("skipped"),
            seconds: meta["seconds"].as_f64().unwrap_or(0.0),
        }))
    }

    /// Keeps the reading stage; `docs` move to the checkpoint's file.
    pub fn save_read(&self, r: &mut ReadStage) -> Result<()> {
        let _ = std::fs::remove_file(self.dir.join("found.done"));
        r.records.save(&self.dir)?;
        r.docs.save(&self.dir.join("docs.tsv"))?;
        if !r.shingles.is_empty() {
            // Per document: the count (u32), then the hashes (u64), little-endian.
            let mut out = crate::output::Output::open(Some(&self.dir.join("shingles.bin")))?;
            for i in 0..r.shingles.len() as u32 {
                let hashes = r.shingles.get(i).map_err(anyhow::Error::from)?;
                let w = out.writer();
                w.write_all(&(hashes.len() as u32).to_le_bytes())?;
                for h in hashes {
                    w.write_all(&h.to_le_bytes())?;
                }
            }
            out.finish()?;
        }
        let meta = json!({ "documents": r.docs.len(), "total": r.total, "bytes_in": r.bytes_in,
            "skipped": r.skipped, "seconds": r.seconds });
        write(&self.dir.join("read.json"), meta.to_string().as_bytes())?;
        write(&self.dir.join("read.done"), b"")
    }

    fn try_found(&self) -> Result<Option<(DedupResult, Timings)>> {
        if !self.dir.join("found.done").exists() {
            return Ok(None);
        }
        let found = DedupResult::load(&self.dir.join("found.json"))?;
        let timings: Timings =
            serde_json::from_str(&std::fs::read_to_string(self.dir.join("timings.json"))?)?;
        note!("neardup: resuming after clustering ({} clusters)", found.clusters.len());
        Ok(Some((found, timings)))
    }

    /// Keeps the clusters.
    pub fn save_found(&self, found: &DedupResult) -> Result<()> {
        found.save(&self.dir.join("found.json"))?;
        let timings: Vec<(&str, f64)> = found.timings.iter().map(|&(k, v)| (k, v)).collect();
        write(&self.dir.join("timings.json"), serde_json::to_string(&timings)?.as_bytes())?;
        write(&self.dir.join("found.done"), b"")
    }

    /// Whether an earlier run added its kept documents to the --against
    /// index (`--save-index`) before it stopped.
    pub fn index_saved(&self) -> bool {
        self.dir.join("index.done").exists()
    }

    /// Marks the index updated.
    pub fn mark_index_saved(&self) -> Result<()> {
        write(&self.dir.join("index.done"), b"")
    }

    /// Removes the checkpoint of a finished run.
    pub fn finish(self) -> Result<()> {
        std::fs::remove_dir_all(&self.dir)
            .with_context(|| format!("{}: cannot remove the finished run's checkpoint", self.dir.display()))
    }
}

/// Writes a small file of the checkpoint atomically.
fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut out = crate::output::Output::open(Some(path))?;
    out.writer().write_all(bytes)?;
    out.finish()
}

/// Stops the process at `stage` when `NEARDUP_ABORT_AT` names it, as a
/// `kill -9` would (no cleanup): how the tests stop a run in each stage.
pub fn abort_at(stage: &str) {
    if std::env::var("NEARDUP_ABORT_AT").is_ok_and(|s| s == stage) {
        std::process::abort();
    }
}
