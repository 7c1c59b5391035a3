//! A `neardup serve` data directory as a [`Target`].

use std::io::Write;
use std::path::Path;

use anyhow::Result;
use neardup::{Fingerprint, Fingerprinter, PipelineConfig};
use neardup_store::NewDoc;
use serde_json::{json, Value};

use super::{entries, Target};
use crate::args::{IndexAddArgs, PipelineArgs};
use crate::datadir::DataDir;
use crate::UsageError;

/// Documents per commit when adding to a data directory.
const DATA_CHUNK: usize = 100_000;

pub struct DataTarget(DataDir);

impl DataTarget {
    /// Opens the directory; `create` makes a new data directory of an
    /// empty one (for `add`), else a directory without a store is an error.
    pub fn open(dir: &Path, pipeline: &PipelineArgs, create: bool) -> Result<DataTarget> {
        Ok(DataTarget(if create {
            DataDir::open(dir, pipeline, None)?
        } else {
            DataDir::open_existing(dir, pipeline)?
        }))
    }
}

impl Target for DataTarget {
    fn pipeline(&self) -> Option<&PipelineConfig> {
        Some(self.0.engine.config())
    }

    /// Documents or a fingerprint list into the directory (replacing equal
    /// ids), committed in chunks, then a fresh snapshot so that the next
    /// `serve` starts without a rebuild.
    fn add(&mut self, args: &IndexAddArgs) -> Result<()> {
        let (data, dir) = (&self.0, &args.index);
        let made = match &args.fingerprints {
            Some(path) => entries::from_list(path, 0)?,
            None => {
                entries::from_documents(&args.input, &Fingerprinter::new(data.engine.config().clone())?, 0)?
            }
        };
        let bits = data.engine.config().bits;
        let names = &made.names;
        if let Some((i, (_, f))) = made.entries.iter().enumerate().find(|(_, (_, f))| f.bits() != bits) {
            return Err(UsageError(format!(
                "entry {} ({:?}): a {}-bit fingerprint, but {} holds {bits}-bit ones",
                i + 1,
                names[i],
                f.bits(),
                dir.display()
            ))
            .into());
        }
        if let Some((i, id)) =
            names.iter().enumerate().find(|(_, id)| id.is_empty() || id.len() > neardup_store::MAX_ID_BYTES)
        {
            return Err(UsageError(format!(
                "entry {}: a document id must be 1 to {} bytes, this one has {}; give every record an id",
                i + 1,
                neardup_store::MAX_ID_BYTES,
                id.len()
            ))
            .into());
        }
        let n = made.len();
        let known = args.fingerprints.is_none();
        let mut docs: Vec<NewDoc> = made
            .entries
            .into_iter()
            .zip(made.names)
            .zip(made.features)
            .map(|(((_, f), id), features)| NewDoc {
                features: known.then_some(features),
                ..NewDoc::new(id, f)
            })
            .collect();
        while !docs.is_empty() {
            let rest = docs.split_off(docs.len().min(DATA_CHUNK));
            data.engine
                .load(std::mem::replace(&mut docs, rest))
                .map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))?;
        }
        data.save_snapshot()?;
        eprintln!("neardup: added {n} documents; {} now holds {}", dir.display(), data.engine.len());
        Ok(())
    }

    fn prepare(&mut self, _k: Option<u32>) -> Result<()> {
        Ok(())
    }

    fn query(&self, fp: Fingerprint, features: Option<u32>, k: Option<u32>) -> Result<Vec<Value>, String> {
        Ok(self
            .0
            .engine
            .search(fp, k, features, usize::MAX)
            .map_err(|e| e.to_string())?
            .into_iter()
            .map(|m| json!({ "id": m.id, "distance": m.distance }))
            .collect())
    }

    fn radius(&self) -> String {
        self.0.engine.radius().to_string()
    }

    fn stats(&self, json: bool) -> Result<()> {
        let data = &self.0;
        let s = data.engine.stats();
        let source = data.source.to_string();
        let mut out = std::io::stdout().lock();
        if json {
            let mut v = serde_json::to_value(&s)?;
            v["data_dir"] = json!(data.dir);
            v["index"] = json!(source);
            v["opened_in_s"] = json!(data.opened_in.as_secs_f64());
            serde_json::to_writer_pretty(&mut out, &v)?;
            writeln!(out)?;
        } else {
            writeln!(out, "data dir:    {} (a `neardup serve` data directory)", data.dir.display())?;
            writeln!(out, "documents:   {}", s.documents)?;
            writeln!(out, "pipeline:    {} ({}-bit)", s.pipeline, s.bits)?;
            writeln!(out, "radius:      {} (requests without k)", s.radius)?;
            writeln!(out, "store:       {} bytes on disk", s.disk_bytes)?;
            writeln!(
                out,
                "index:       tables for k = {} (pass 0), {} bytes in memory, {} segments",
                s.table_k, s.index_bytes, s.segments
            )?;
            writeln!(out, "opened:      in {:.2} s, {source}", data.opened_in.as_secs_f64())?;
        }
        Ok(())
    }
}
