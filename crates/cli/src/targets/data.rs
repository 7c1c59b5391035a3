//! A `neardup serve` data directory as a [`Target`].

use std::io::Write;
use std::path::Path;

use anyhow::Result;
use neardup::detector::Detector;
use neardup::minhash::Method;
use neardup::{PipelineConfig, Sketch};
use neardup_store::{Near, NewDoc};
use serde_json::{json, Value};

use super::{entries, Target};
use crate::args::{IndexAddArgs, InputArgs, PipelineArgs};
use crate::datadir::DataDir;
use crate::UsageError;

/// Documents per commit when adding to a data directory.
const DATA_CHUNK: usize = 100_000;

pub struct DataTarget(Option<DataDir>);

impl Drop for DataTarget {
    /// Closes the directory cleanly (see [`DataDir::close`]).
    fn drop(&mut self) {
        if let Some(d) = self.0.take() {
            d.close();
        }
    }
}

impl DataTarget {
    /// Opens the directory; `create` makes a new data directory of an
    /// empty one (for `add`; of the method `implied`, else the default
    /// one, when no pipeline is given), else a directory without a store is
    /// an error.
    pub fn open(
        dir: &Path,
        pipeline: &PipelineArgs,
        create: bool,
        implied: Option<Method>,
    ) -> Result<DataTarget> {
        Ok(DataTarget(Some(if create {
            DataDir::open(dir, pipeline, None, implied)?
        } else {
            DataDir::open_existing(dir, pipeline)?
        })))
    }

    fn data(&self) -> &DataDir {
        self.0.as_ref().expect("open until dropped")
    }
}

impl Target for DataTarget {
    fn pipeline(&self) -> Option<&PipelineConfig> {
        Some(self.data().engine.config())
    }

    /// Documents or a fingerprint list into the directory (replacing equal
    /// ids), committed in chunks, then a fresh snapshot so that the next
    /// `serve` starts without a rebuild.
    fn add(&mut self, args: &IndexAddArgs) -> Result<()> {
        self.add_from(&args.input, args.fingerprints.as_deref())
    }

    fn add_entries(&mut self, made: entries::Entries<Sketch>) -> Result<()> {
        let features = made.features.iter().map(|&n| Some(n)).collect();
        let sketches = made.entries.into_iter().map(|(_, s)| s).collect();
        let n = made.names.len() as u64;
        self.store(made.names, features, sketches, usize::MAX)?;
        self.added(n);
        Ok(())
    }

    fn prepare(&mut self, _k: Option<u32>) -> Result<()> {
        Ok(())
    }

    fn query(&self, sketch: &Sketch, features: Option<u32>, near: Near) -> Result<Vec<Value>, String> {
        as_values(self.data().engine.search(sketch.clone(), near, features, usize::MAX))
    }

    fn query_many(&self, queries: &[(&Sketch, Option<u32>)], near: Near) -> Vec<Result<Vec<Value>, String>> {
        self.data().engine.search_many(queries, near, usize::MAX).into_iter().map(as_values).collect()
    }

    fn radius(&self) -> String {
        self.data().engine.rule()
    }

    fn stats(&self, json: bool) -> Result<()> {
        let data = self.data();
        let s = data.engine.stats();
        let source = data.source.to_string();
        let mut out = std::io::stdout().lock();
        if json {
            let mut v = serde_json::to_value(&s)?;
            v["data_dir"] = json!(data.dir);
            v["index"] = json!(source);
            v["opened_in_s"] = json!(data.opened_in.as_secs_f64());
            v["disk_index"] = json!(data.engine.disk_stats());
            serde_json::to_writer_pretty(&mut out, &v)?;
            writeln!(out)?;
        } else {
            writeln!(out, "data dir:    {} (a `neardup serve` data directory)", data.dir.display())?;
            writeln!(out, "documents:   {}", s.documents)?;
            match (s.bits, s.permutations) {
                (Some(bits), _) => writeln!(out, "pipeline:    {} (SimHash, {bits}-bit)", s.pipeline)?,
                (None, Some(k)) => writeln!(out, "pipeline:    {} (MinHash, {k} values)", s.pipeline)?,
                (None, None) => writeln!(out, "pipeline:    {}", s.pipeline)?,
            }
            writeln!(out, "rule:        {} (requests without k or threshold)", s.radius)?;
            writeln!(out, "store:       {} bytes on disk", s.disk_bytes)?;
            let tables = match s.table_k {
                Some(k) => format!("tables for k = {k} (pass 0)"),
                None => "LSH bands".to_owned(),
            };
            match data.engine.disk_stats() {
                Some(d) => {
                    let rows: u64 = d.segments.iter().map(|s| s.0).sum();
                    let bytes: u64 = d.segments.iter().map(|s| s.1).sum();
                    writeln!(
                        out,
                        "index:       on disk in {} ({tables}): {} segments, {rows} rows, {bytes} bytes; {} documents \
                         in memory, {} tombstones; {} bytes of memory",
                        d.dir.display(),
                        d.segments.len(),
                        d.in_memory,
                        d.tombstones,
                        s.index_bytes
                    )?;
                    let sizes: Vec<String> = d.segments.iter().map(|s| s.0.to_string()).collect();
                    writeln!(out, "segments:    {} rows, oldest first", sizes.join(" + "))?;
                    let c = d.counters;
                    let amplification = if c.flushed_rows > 0 {
                        (c.flushed_rows + c.merged_rows) as f64 / c.flushed_rows as f64
                    } else {
                        1.0
                    };
                    writeln!(
                        out,
                        "merges:      {} pending{}; {} flushes, {} merges, rows written {:.2}x the rows flushed",
                        d.pending_merges,
                        if d.flush_pending { ", a flush waiting" } else { "" },
                        c.flushes,
                        c.merges,
                        amplification
                    )?;
                }
                None => writeln!(
                    out,
                    "index:       {tables}, {} bytes in memory, {} segments",
                    s.index_bytes, s.segments
                )?,
            }
            writeln!(out, "opened:      in {:.2} s, {source}", data.opened_in.as_secs_f64())?;
        }
        Ok(())
    }
}

impl DataTarget {
    /// Adds documents (signed or fingerprinted as the directory's method
    /// says) or a fingerprint list (SimHash only), replacing equal ids, in
    /// commits of [`DATA_CHUNK`]; then writes the snapshot.
    pub fn add_from(&self, input: &InputArgs, fingerprints: Option<&Path>) -> Result<()> {
        let data = self.data();
        let dir = &data.dir;
        let config = data.engine.config();
        let (names, features, sketches): (Vec<String>, Vec<Option<u32>>, Vec<Sketch>) = match fingerprints {
            Some(_) if config.method == Method::Minhash => {
                return Err(UsageError(format!(
                    "{} holds MinHash signatures; a fingerprint list holds SimHash fingerprints: add the documents instead",
                    dir.display()
                ))
                .into())
            }
            Some(path) => {
                let made = entries::from_list(path, 0)?;
                let bits = config.bits;
                if let Some((i, (_, f))) = made.entries.iter().enumerate().find(|(_, (_, f))| f.bits() != bits) {
                    return Err(UsageError(format!(
                        "entry {} ({:?}): a {}-bit fingerprint, but {} holds {bits}-bit ones",
                        i + 1,
                        made.names[i],
                        f.bits(),
                        dir.display()
                    ))
                    .into());
                }
                let n = made.len();
                (made.names, vec![None; n], made.entries.into_iter().map(|(_, f)| f.into()).collect())
            }
            None => {
                // Signed and stored a chunk at a time: memory holds one
                // chunk's sketches, not the corpus's.
                let detector = Detector::new(config.clone())?;
                let mut n = 0u64;
                entries::documents_in_chunks(input, &detector, 0, DATA_CHUNK, &mut |made| {
                    n += made.len() as u64;
                    let features = made.features.iter().map(|&n| Some(n)).collect();
                    self.store(made.names, features, made.entries.into_iter().map(|(_, s)| s).collect(), DATA_CHUNK)
                })?;
                self.added(n);
                return Ok(());
            }
        };
        let n = names.len() as u64;
        self.store(names, features, sketches, DATA_CHUNK)?;
        self.added(n);
        Ok(())
    }

    /// Says how many documents were added and how many the directory holds.
    fn added(&self, n: u64) {
        let data = self.data();
        note!(
            "neardup: added {}; {} now holds {}",
            crate::output::count(n, "document"),
            data.dir.display(),
            data.engine.len()
        );
    }

    /// Stores documents (replacing equal ids) in commits of `chunk`.
    fn store(
        &self,
        names: Vec<String>,
        features: Vec<Option<u32>>,
        sketches: Vec<Sketch>,
        chunk: usize,
    ) -> Result<()> {
        let data = self.data();
        let dir = &data.dir;
        if let Some((i, id)) = names
            .iter()
            .enumerate()
            .find(|(_, id)| id.is_empty() || id.chars().count() > neardup_store::MAX_ID_CHARS)
        {
            return Err(UsageError(format!(
                "entry {}: a document id must be 1 to {} characters, this one has {}; give every record an id",
                i + 1,
                neardup_store::MAX_ID_CHARS,
                id.chars().count()
            ))
            .into());
        }
        let mut docs: Vec<NewDoc> = sketches
            .into_iter()
            .zip(names)
            .zip(features)
            .map(|((sketch, id), features)| NewDoc { features, ..NewDoc::new(id, sketch) })
            .collect();
        while !docs.is_empty() {
            let rest = docs.split_off(docs.len().min(chunk));
            data.engine
                .load(std::mem::replace(&mut docs, rest))
                .map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))?;
        }
        Ok(())
    }
}

/// A search's matches as `{"id", "distance"[, "similarity"]}` values.
fn as_values(found: neardup_store::Result<Vec<neardup_store::Found>>) -> Result<Vec<Value>, String> {
    let found = found.map_err(|e| e.to_string())?;
    found.into_iter().map(|m| serde_json::to_value(m).map_err(|e| e.to_string())).collect()
}
