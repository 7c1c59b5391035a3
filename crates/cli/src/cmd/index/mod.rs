//! `neardup index build|add|query|stats`: a persistent index, as an index
//! file or a `neardup serve` data directory. One function per subcommand;
//! `add`, `query` and `stats` work on a [`Target`], implemented by an index
//! file ([`file::FileTarget`]) and a data directory ([`data::DataTarget`]).

mod data;
mod entries;
mod file;

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use neardup::index::file::{IndexFile, Names};
use neardup::index::TableIndex;
use neardup::meta::IndexMeta;
use neardup::passage::PassageConfig;
use neardup::{Fingerprint, Fingerprinter, PipelineConfig};
use rayon::prelude::*;
use serde_json::{json, Value};

use crate::args::{IndexAddArgs, IndexArgs, IndexBuildArgs, IndexCommand, IndexQueryArgs, IndexStatsArgs};
use crate::datadir::is_data_dir;
use crate::fplist;
use crate::output::Output;
use crate::UsageError;

pub use file::{check_pipeline, open};

pub fn run(args: IndexArgs) -> Result<ExitCode> {
    match args.command {
        IndexCommand::Build(a) => build(a)?,
        IndexCommand::Add(a) => target(&a.index, &a.pipeline, false, true)?.add(&a)?,
        IndexCommand::Query(a) => query(a)?,
        IndexCommand::Stats(a) => stats(a)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// What `index add|query|stats` work on.
trait Target: Sync {
    /// The pipeline that made the entries, if the index knows it.
    fn pipeline(&self) -> Option<&PipelineConfig>;

    /// Adds documents or a fingerprint list.
    fn add(&mut self, args: &IndexAddArgs) -> Result<()>;

    /// Prepares for queries by `k` (`None`: the index's radius rule).
    fn prepare(&mut self, k: Option<u32>) -> Result<()>;

    /// The matches of one query as `{"id", "distance"}`, nearest first:
    /// within `k`, or by the rule for a document of `features` features.
    fn query(&self, fp: Fingerprint, features: Option<u32>, k: Option<u32>) -> Result<Vec<Value>, String>;

    /// The radius queries without a k get, as `neardup` prints it.
    fn radius(&self) -> String;

    /// Prints sizes and settings.
    fn stats(&self, json: bool) -> Result<()>;
}

/// Opens `path` as a data directory (a directory) or an index file.
fn target(
    path: &Path,
    pipeline: &crate::args::PipelineArgs,
    no_verify: bool,
    create: bool,
) -> Result<Box<dyn Target>> {
    Ok(if is_data_dir(path) {
        Box::new(data::DataTarget::open(path, pipeline, create)?)
    } else {
        Box::new(file::FileTarget::open(path, pipeline, no_verify)?)
    })
}

fn build(a: IndexBuildArgs) -> Result<()> {
    if !a.passages && a.passage.given() {
        return Err(UsageError("--window and --min-chars go with --passages".into()).into());
    }
    if is_data_dir(&a.output) {
        return Err(UsageError(format!(
            "{} is a directory: -o names the index file to write; to fill a data directory, use `neardup index add {} …`",
            a.output.display(),
            a.output.display()
        ))
        .into());
    }
    let fingerprinter = if a.fingerprints.is_none() { Some(a.pipeline.load()?) } else { None };
    let cfg = a.passages.then(|| a.passage.over(PassageConfig::default()));
    let made = match (&a.fingerprints, &fingerprinter, &cfg) {
        (Some(path), _, _) => entries::from_list(path, 0)?,
        (None, Some(fingerprinter), Some(cfg)) => entries::from_passages(&a.input, fingerprinter, cfg, 0)?,
        (None, fingerprinter, _) => {
            entries::from_documents(&a.input, fingerprinter.as_ref().expect("a pipeline"), 0)?
        }
    };
    let meta = IndexMeta {
        pipeline: fingerprinter.as_ref().map(|f| f.config().clone()),
        passages: cfg,
        ..IndexMeta::default()
    };
    let bits = match (&fingerprinter, made.entries.first()) {
        (Some(f), _) => f.bits(),
        (None, Some(e)) => e.1.bits(),
        (None, None) => neardup::Bits::B64,
    };
    // The tables serve the rule's pass 0 (the later passes are built from
    // the stored feature counts when a query needs them).
    let k = a.k.unwrap_or_else(|| neardup::dedup::Plan::new(&file::rule(&meta, bits)).passes()[0].k);
    let mut b = TableIndex::builder().bits(bits).k(k).memory(a.layout.memory.0);
    if let Some(m) = a.layout.blocks {
        b = b.blocks(m);
    }
    let n = made.len();
    let index = b.build_from(made.entries).map_err(|e| UsageError(e.to_string()))?;
    let file = IndexFile {
        index,
        names: Some(Names::from_strings(&made.names)),
        features: fingerprinter.is_some().then_some(made.features),
        meta: meta.to_value(),
    };
    file.write(&a.output)?;
    eprintln!("neardup: indexed {n} entries into {} ({})", a.output.display(), file.index.layout());
    Ok(())
}

fn query(a: IndexQueryArgs) -> Result<()> {
    let mut target = target(&a.index, &a.pipeline, a.no_verify, false)?;
    let pipeline = || -> Result<Fingerprinter> {
        match target.pipeline() {
            Some(c) => Ok(Fingerprinter::new(c.clone())?),
            None => Err(UsageError(format!(
                "{}: this index was built from fingerprints and knows no pipeline; query with --fingerprint(s)",
                a.index.display()
            ))
            .into()),
        }
    };
    // The queries: (query as shown, fingerprint, feature count if known).
    let mut queries: Vec<(Value, Fingerprint, Option<u32>)> = Vec::new();
    for h in &a.fingerprint {
        let f: Fingerprint = h.parse().map_err(|e: neardup::Error| UsageError(e.to_string()))?;
        queries.push((json!(h), f, None));
    }
    if !a.text.is_empty() {
        let fingerprinter = pipeline()?;
        for t in &a.text {
            let (f, n) = fingerprinter.fingerprint_counted(t);
            queries.push((json!(t), f, Some(u32::try_from(n).unwrap_or(u32::MAX - 1))));
        }
    }
    if let Some(path) = &a.fingerprints {
        let (words, ids) = fplist::read(path)?;
        for i in 0..words.len() {
            queries.push((ids.get(i), words.get(i), None));
        }
    }
    if !a.input.paths.is_empty() {
        let fingerprinter = pipeline()?;
        let docs = entries::from_documents(&a.input, &fingerprinter, 0)?;
        for (((_, f), name), n) in docs.entries.into_iter().zip(docs.names).zip(docs.features) {
            queries.push((json!(name), f, Some(n)));
        }
    }
    if queries.is_empty() {
        return Err(UsageError(
            "nothing to query: give --text, --fingerprint, --fingerprints or document paths".into(),
        )
        .into());
    }
    target.prepare(a.k)?;
    if a.k.is_none() {
        eprintln!("neardup: near duplicates by the index's radius: {}", target.radius());
    }
    let target = &*target;
    let results: Vec<Result<Vec<Value>, String>> =
        queries.par_iter().map(|&(_, f, n)| target.query(f, n, a.k)).collect();
    let mut out = Output::open(a.output.as_deref())?;
    for ((q, f, _), res) in queries.iter().zip(results) {
        let matches = res.map_err(|e| UsageError(format!("query {q}: {e}")))?;
        let v = json!({ "query": q, "fingerprint": f, "matches": matches });
        serde_json::to_writer(&mut *out.writer(), &v)?;
        out.writer().write_all(b"\n")?;
    }
    out.finish()?;
    Ok(())
}

fn stats(a: IndexStatsArgs) -> Result<()> {
    target(&a.index, &crate::args::PipelineArgs::none(), false, false)?.stats(a.json)
}
