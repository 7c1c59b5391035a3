//! An index file as a [`Target`].

use rayon::prelude::*;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use neardup::dedup::UNKNOWN_FEATURES;
use neardup::detector::Detector;
use neardup::index::file::{IndexFile, Names};
use neardup::index::{HammingIndex, Match, RuleTables, TableIndex};
use neardup::meta::IndexMeta;
use neardup::{Bits, PipelineConfig, Radius, Sketch};
use neardup_store::Near;
use serde_json::{json, Value};

use super::{entries, Target};
use crate::args::{IndexAddArgs, PipelineArgs};
use crate::UsageError;

/// The radius an index's queries get without a k: passage windows' own,
/// else the pipeline's rule, else the classic k.
pub fn rule(meta: &IndexMeta, bits: Bits) -> Radius {
    match (&meta.passages, &meta.pipeline) {
        (Some(_), _) => neardup::passage::index_radius(bits),
        (None, Some(p)) => p.radius(),
        (None, None) => Radius::classic(bits),
    }
}

pub struct FileTarget {
    path: PathBuf,
    file: IndexFile,
    meta: IndexMeta,
    rule: Radius,
    /// The later passes of a length-dependent rule: the file's own, or
    /// built from its feature counts for queries by the rule.
    passes: Option<RuleTables>,
}

impl FileTarget {
    pub fn open(path: &Path, pipeline: &PipelineArgs, no_verify: bool) -> Result<FileTarget> {
        let file = open(path, no_verify)?;
        let meta =
            IndexMeta::of(&file).with_context(|| format!("{}: unreadable metadata", path.display()))?;
        check_pipeline(&meta, pipeline)?;
        let rule = rule(&meta, file.index.bits());
        Ok(FileTarget { path: path.to_owned(), file, meta, rule, passes: None })
    }

    /// The feature count of entry `id` ([`UNKNOWN_FEATURES`] if not stored).
    fn features(&self, id: u64) -> usize {
        self.file.features.as_ref().and_then(|f| f.get(id)).map_or(UNKNOWN_FEATURES, |n| n as usize)
    }

    fn named(&self, found: Vec<Match>) -> Vec<Value> {
        let name = |id: u64| self.file.names.as_ref().and_then(|n| n.get(id)).map_or(json!(id), |s| json!(s));
        found.iter().map(|m| json!({ "id": name(m.id), "distance": m.distance })).collect()
    }
}

impl FileTarget {
    /// Adds entries numbered from the file's count on, and rewrites the
    /// file (a new file renamed over it).
    fn insert(&mut self, made: entries::Entries) -> Result<()> {
        let start = self.file.names.as_ref().map_or(0, Names::len) as u64;
        let n = made.len();
        let file = &mut self.file;
        // The later passes' tables the file holds take the new entries too.
        if !file.later.is_empty() {
            let mut later = RuleTables::from_tables(&self.rule, std::mem::take(&mut file.later))
                .map_err(|e| UsageError(format!("{}: {e}", self.path.display())))?;
            let entries: Vec<_> =
                made.entries.iter().zip(&made.features).map(|(&(id, fp), &n)| (id, fp, n as usize)).collect();
            later.bulk_load(&entries).map_err(|e| UsageError(format!("{}: {e}", self.path.display())))?;
            file.later = later.tables().cloned().collect();
        }
        file.index
            .bulk_load(made.entries)
            .map_err(|e| UsageError(format!("{}: {e}", self.path.display())))?;
        let names = Names::followed_by(file.names.as_ref(), &made.names);
        if file.features.is_some() || self.meta.pipeline.is_some() {
            // Older files have no counts: their entries count as long.
            let mut features = file
                .features
                .take()
                .map_or_else(|| vec![UNKNOWN_FEATURES as u32; start as usize], |f| f.to_vec());
            features.resize(start as usize, UNKNOWN_FEATURES as u32);
            features.extend(made.features);
            file.features = Some(features.into());
        }
        file.names = Some(names);
        file.meta = self.meta.to_value();
        file.write(&self.path)?;
        note!("neardup: added {n} entries; {} now holds {}", self.path.display(), file.index.len());
        Ok(())
    }
}

impl Target for FileTarget {
    fn pipeline(&self) -> Option<&PipelineConfig> {
        self.meta.pipeline.as_ref()
    }

    fn add(&mut self, args: &IndexAddArgs) -> Result<()> {
        let start = self.file.names.as_ref().map_or(0, Names::len) as u64;
        let made = match (&args.fingerprints, &self.meta.pipeline) {
            (Some(path), _) => entries::from_list(path, start)?,
            (None, Some(config)) => {
                let detector = Detector::new(config.clone())?;
                let Some(fingerprinter) = detector.fingerprinter() else {
                    return Err(UsageError(format!(
                        "{}: this index file names a MinHash pipeline; index files hold SimHash fingerprints",
                        self.path.display()
                    ))
                    .into());
                };
                match &self.meta.passages {
                    Some(cfg) => entries::from_passages(&args.input, fingerprinter, cfg, start)?,
                    None => entries::from_documents(&args.input, &detector, start)?.into_fingerprints(),
                }
            }
            (None, None) => {
                return Err(UsageError(format!(
                "{}: this index was built from fingerprints and knows no pipeline; add with --fingerprints",
                self.path.display()
            ))
                .into())
            }
        };
        self.insert(made)
    }

    fn add_entries(&mut self, made: entries::Entries<Sketch>) -> Result<()> {
        if made.entries.iter().any(|(_, s)| s.fingerprint().is_none()) {
            return Err(UsageError(format!(
                "{}: index files hold SimHash fingerprints, not MinHash signatures",
                self.path.display()
            ))
            .into());
        }
        let start = self.file.names.as_ref().map_or(0, Names::len) as u64;
        let mut made = made.into_fingerprints();
        for (i, e) in made.entries.iter_mut().enumerate() {
            e.0 = start + i as u64;
        }
        self.insert(made)
    }

    fn prepare(&mut self, k: Option<u32>) -> Result<()> {
        if k.is_some() || self.rule.is_fixed() {
            return Ok(());
        }
        if self.file.features.is_none() {
            note!(
                "neardup: {} was built before indexes kept feature counts: its entries count as long documents \
                 (k = {}); rebuild it, or give --k",
                self.path.display(),
                self.rule.k_for(UNKNOWN_FEATURES)
            );
        }
        if !self.file.later.is_empty() {
            match RuleTables::from_tables(&self.rule, self.file.later.clone()) {
                Ok(t) => {
                    self.passes = Some(t);
                    return Ok(());
                }
                Err(e) => note!("neardup: {}: rebuilding the rule's tables ({e})", self.path.display()),
            }
        }
        let features = self.file.features.as_ref();
        let entries = self
            .file
            .index
            .entries()
            .into_iter()
            .map(|(id, fp)| {
                (id, fp, features.and_then(|f| f.get(id)).map_or(UNKNOWN_FEATURES, |n| n as usize))
            })
            .collect();
        let builder = TableIndex::builder().bits(self.file.index.bits());
        let passes = RuleTables::build(neardup::dedup::Plan::new(&self.rule), &builder, entries)
            .map_err(|e| UsageError(format!("{}: {e}", self.path.display())))?;
        self.passes = Some(passes);
        Ok(())
    }

    fn query(&self, sketch: &Sketch, features: Option<u32>, near: Near) -> Result<Vec<Value>, String> {
        let Some(fp) = sketch.fingerprint() else {
            return Err("index files hold SimHash fingerprints, not MinHash signatures".into());
        };
        let k = match near {
            Near::AtLeast(_) => {
                return Err("--threshold is for MinHash data directories; an index file takes --k".into())
            }
            near => near.k(),
        };
        let found = match (k, &self.passes) {
            (Some(k), _) => self.file.index.query(fp, k),
            (None, Some(p)) => p.query_by(
                &self.file.index,
                &self.rule,
                fp,
                features.map_or(UNKNOWN_FEATURES, |n| n as usize),
                |id| self.features(id),
            ),
            (None, None) => self.file.index.query(fp, self.rule.max_k()),
        };
        Ok(self.named(found.map_err(|e| e.to_string())?))
    }

    /// At a fixed k, fingerprints go to the index's batched query (their
    /// memory reads overlapped); anything else is asked one by one.
    fn query_many(&self, queries: &[(&Sketch, Option<u32>)], near: Near) -> Vec<Result<Vec<Value>, String>> {
        let fps: Option<Vec<neardup::Fingerprint>> = queries.iter().map(|(s, _)| s.fingerprint()).collect();
        match (near, fps) {
            (Near::Within(k), Some(fps)) => match self.file.index.query_batch(&fps, k) {
                Ok(found) => found.into_par_iter().map(|m| Ok(self.named(m))).collect(),
                Err(e) => vec![Err(e.to_string()); queries.len()],
            },
            _ => queries.par_iter().map(|&(s, n)| self.query(s, n, near)).collect(),
        }
    }

    fn radius(&self) -> String {
        self.rule.to_string()
    }

    fn stats(&self, json: bool) -> Result<()> {
        let (file, index) = (&self.file, &self.path);
        let s = file.index.stats();
        let file_bytes = std::fs::metadata(index).map(|m| m.len()).unwrap_or(0);
        let pipeline = self.meta.pipeline.as_ref();
        let mut out = std::io::stdout().lock();
        if json {
            let mut v = serde_json::to_value(&s)?;
            v["file_bytes"] = json!(file_bytes);
            v["pipeline"] = json!(pipeline.map(|c| format!("{:016x}", c.id())));
            v["radius"] = json!(self.rule.to_string());
            serde_json::to_writer_pretty(&mut out, &v)?;
            writeln!(out)?;
            return Ok(());
        }
        writeln!(out, "file:        {} ({} bytes)", index.display(), file_bytes)?;
        match pipeline {
            Some(c) => writeln!(out, "pipeline:    {:016x} ({}-bit)", c.id(), c.bits)?,
            None => writeln!(out, "pipeline:    none (built from fingerprints)")?,
        }
        writeln!(out, "radius:      {} (queries without --k)", self.rule)?;
        writeln!(out, "entries:     {} ({} distinct fingerprints)", s.entries, s.distinct)?;
        writeln!(out, "layout:      {}", s.layout_text)?;
        writeln!(out, "why:         {}", s.reason)?;
        writeln!(out, "memory:      {} ({:.1} bytes per entry)", s.bytes_human, s.bytes_per_entry)?;
        writeln!(out, "tables:      lead blocks, key bits, directory bits, bytes per entry, key-run length p50/p90/p99/max (expected)")?;
        for (i, t) in s.tables.iter().enumerate() {
            writeln!(
                out,
                "  {i:>3}  {:<12} {:>3} {:>3} {:>2}   {}/{}/{}/{} ({:.2})",
                format!("{:?}", t.lead_blocks),
                t.key_bits,
                t.dir_bits,
                t.entry_bytes,
                t.run_p50,
                t.run_p90,
                t.run_p99,
                t.run_max,
                t.expected_run
            )?;
        }
        for w in &s.warnings {
            writeln!(out, "warning:     {w}")?;
        }
        Ok(())
    }
}

/// With --preset or --config given, they must name the index's pipeline.
pub fn check_pipeline(meta: &IndexMeta, args: &PipelineArgs) -> Result<()> {
    if args.preset.is_none() && args.config.is_none() {
        return Ok(());
    }
    let wanted = args.load_detector()?;
    meta.check_pipeline(wanted.config()).map_err(|e| UsageError(e.to_string()).into())
}

/// Opens an index file; a missing, damaged or foreign file is an input
/// error (exit 1) naming it.
pub fn open(path: &Path, no_verify: bool) -> Result<IndexFile> {
    let r = if no_verify { IndexFile::open_unverified(path) } else { IndexFile::open(path) };
    r.map_err(anyhow::Error::new).with_context(|| format!("cannot open the index {}", path.display()))
}
