//! `neardup index build|add|query|stats`: a persistent index file.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};
use neardup::index::file::{IndexFile, Names};
use neardup::index::{HammingIndex, TableIndex};
use neardup::passage::{PassageConfig, PassageDoc};
use neardup::{Fingerprint, Fingerprinter};
use neardup_store::NewDoc;
use rayon::prelude::*;
use serde_json::{json, Value};

use super::{batches, ErrorPolicy};
use crate::args::{IndexArgs, IndexCommand, InputArgs};
use crate::datadir::{is_data_dir, DataDir};
use crate::fplist;
use crate::input::{self, BadRecord};
use crate::output::Output;
use crate::UsageError;

pub fn run(args: IndexArgs) -> Result<ExitCode> {
    match args.command {
        IndexCommand::Build { input, pipeline, fingerprints, output, k, layout, passages, passage } => {
            if !passages && passage.given() {
                return Err(UsageError("--window and --min-chars go with --passages".into()).into());
            }
            if is_data_dir(&output) {
                return Err(UsageError(format!(
                    "{} is a directory: -o names the index file to write; to fill a data directory, use `neardup index add {} …`",
                    output.display(),
                    output.display()
                ))
                .into());
            }
            let fp = if fingerprints.is_none() { Some(pipeline.load()?) } else { None };
            let cfg = passages.then(|| passage.over(PassageConfig::default()));
            let (entries, names) = match (&fingerprints, &fp, &cfg) {
                (Some(path), _, _) => from_list(path, 0)?,
                (None, Some(fp), Some(cfg)) => from_passages(&input, fp, cfg, 0)?,
                (None, fp, _) => from_documents(&input, fp.as_ref().expect("a pipeline"), 0)?,
            };
            let k = match (k, &fp, &cfg) {
                (Some(k), _, _) => k,
                (None, Some(fp), Some(_)) => neardup::passage::index_radius(fp.bits()).max_k(),
                _ => 3,
            };
            let bits = match (&fp, entries.first()) {
                (Some(f), _) => f.config().bits,
                (None, Some(e)) => e.1.bits(),
                (None, None) => neardup::Bits::B64,
            };
            let mut b = TableIndex::builder().bits(bits).k(k).memory(layout.memory.0);
            if let Some(m) = layout.blocks {
                b = b.blocks(m);
            }
            let n = entries.len();
            let index = b.build_from(entries).map_err(|e| UsageError(e.to_string()))?;
            let file = IndexFile {
                index,
                config: fp.map(|f| f.config().clone()),
                names: Some(Names::from_strings(&names)),
                passages: cfg,
            };
            file.write(&output)?;
            eprintln!("neardup: indexed {n} entries into {} ({})", output.display(), file.index.layout());
        }
        IndexCommand::Add { index, input, fingerprints, pipeline } if is_data_dir(&index) => {
            data_add(&index, &input, fingerprints.as_deref(), &pipeline)?;
        }
        IndexCommand::Add { index, input, fingerprints, pipeline } => {
            let mut file = open(&index, false)?;
            check_pipeline(&file, &pipeline)?;
            let start = file.names.as_ref().map_or(0, Names::len) as u64;
            let (entries, mut new_names) = match (&fingerprints, &file.config) {
                (Some(path), _) => from_list(path, start)?,
                (None, Some(config)) => {
                    let fp = Fingerprinter::new(config.clone())?;
                    match &file.passages {
                        Some(cfg) => from_passages(&input, &fp, cfg, start)?,
                        None => from_documents(&input, &fp, start)?,
                    }
                }
                (None, None) => {
                    return Err(UsageError(format!(
                        "{}: this index was built from fingerprints and knows no pipeline; add with --fingerprints",
                        index.display()
                    ))
                    .into())
                }
            };
            let n = entries.len();
            file.index.bulk_load(entries).map_err(|e| UsageError(format!("{}: {e}", index.display())))?;
            let mut names: Vec<String> =
                file.names.as_ref().map(|n| n.iter().map(str::to_owned).collect()).unwrap_or_default();
            names.append(&mut new_names);
            file.names = Some(Names::from_strings(&names));
            file.write(&index)?;
            eprintln!("neardup: added {n} entries; {} now holds {}", index.display(), file.index.len());
        }
        IndexCommand::Query {
            index,
            input,
            text,
            fingerprint,
            fingerprints,
            k,
            output,
            no_verify,
            pipeline,
        } => {
            let target = if is_data_dir(&index) {
                Target::Data(DataDir::open_existing(&index, &pipeline)?)
            } else {
                let file = open(&index, no_verify)?;
                check_pipeline(&file, &pipeline)?;
                Target::File(Box::new(file))
            };
            let config = match &target {
                Target::Data(d) => Some(d.engine.config().clone()),
                Target::File(f) => f.config.clone(),
            };
            let pipeline = || -> Result<Fingerprinter> {
                match &config {
                    Some(c) => Ok(Fingerprinter::new(c.clone())?),
                    None => Err(UsageError(format!(
                        "{}: this index was built from fingerprints and knows no pipeline; query with --fingerprint(s)",
                        index.display()
                    ))
                    .into()),
                }
            };
            // The queries: (query as shown, fingerprint).
            let mut queries: Vec<(Value, Fingerprint)> = Vec::new();
            for h in &fingerprint {
                let f: Fingerprint = h.parse().map_err(|e: neardup::Error| UsageError(e.to_string()))?;
                queries.push((json!(h), f));
            }
            if !text.is_empty() {
                let fp = pipeline()?;
                for t in &text {
                    queries.push((json!(t), fp.fingerprint(t)));
                }
            }
            if let Some(path) = &fingerprints {
                let (words, ids) = fplist::read(path)?;
                for i in 0..words.len() {
                    queries.push((ids.get(i), words.get(i)));
                }
            }
            if !input.paths.is_empty() {
                let fp = pipeline()?;
                let (entries, names) = from_documents(&input, &fp, 0)?;
                for ((_, f), name) in entries.into_iter().zip(names) {
                    queries.push((json!(name), f));
                }
            }
            if queries.is_empty() {
                return Err(UsageError(
                    "nothing to query: give --text, --fingerprint, --fingerprints or document paths".into(),
                )
                .into());
            }
            let results: Vec<Result<Vec<Value>, String>> =
                queries.par_iter().map(|(_, f)| target.query(*f, k)).collect();
            let mut out = Output::open(output.as_deref())?;
            for ((q, f), res) in queries.iter().zip(results) {
                let matches = res.map_err(|e| UsageError(format!("query {q}: {e}")))?;
                let v = json!({ "query": q, "fingerprint": f, "matches": matches });
                serde_json::to_writer(&mut *out.writer(), &v)?;
                out.writer().write_all(b"\n")?;
            }
            out.finish()?;
        }
        IndexCommand::Stats { index, json } if is_data_dir(&index) => {
            let data = DataDir::open_existing(&index, &crate::args::PipelineArgs::none())?;
            let s = data.engine.stats();
            let source = data.source.to_string();
            let mut out = std::io::stdout().lock();
            if json {
                let mut v = serde_json::to_value(&s)?;
                v["data_dir"] = json!(index);
                v["index"] = json!(source);
                v["opened_in_s"] = json!(data.opened_in.as_secs_f64());
                serde_json::to_writer_pretty(&mut out, &v)?;
                writeln!(out)?;
            } else {
                writeln!(out, "data dir:    {} (a `neardup serve` data directory)", index.display())?;
                writeln!(out, "documents:   {}", s.documents)?;
                writeln!(out, "pipeline:    {} ({}-bit)", s.pipeline, s.bits)?;
                writeln!(out, "store:       {} bytes on disk", s.disk_bytes)?;
                writeln!(
                    out,
                    "index:       tables for k = {}, {} bytes in memory, {} segments",
                    s.table_k, s.index_bytes, s.segments
                )?;
                writeln!(out, "opened:      in {:.2} s, {source}", data.opened_in.as_secs_f64())?;
            }
        }
        IndexCommand::Stats { index, json } => {
            let file = open(&index, false)?;
            let s = file.index.stats();
            let mut out = std::io::stdout().lock();
            if json {
                let mut v = serde_json::to_value(&s)?;
                v["file_bytes"] = json!(std::fs::metadata(&index).map(|m| m.len()).unwrap_or(0));
                v["pipeline"] = json!(file.config.as_ref().map(|c| format!("{:016x}", c.id())));
                serde_json::to_writer_pretty(&mut out, &v)?;
                writeln!(out)?;
            } else {
                let file_bytes = std::fs::metadata(&index).map(|m| m.len()).unwrap_or(0);
                writeln!(out, "file:        {} ({} bytes)", index.display(), file_bytes)?;
                match &file.config {
                    Some(c) => writeln!(out, "pipeline:    {:016x} ({}-bit)", c.id(), c.bits)?,
                    None => writeln!(out, "pipeline:    none (built from fingerprints)")?,
                }
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
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// What `index query` searches: an index file or a data directory.
enum Target {
    File(Box<IndexFile>),
    Data(DataDir),
}

impl Target {
    /// The matches within `k` as `{"id", "distance"}`, nearest first.
    fn query(&self, f: Fingerprint, k: u32) -> Result<Vec<Value>, String> {
        match self {
            Target::File(file) => Ok(file
                .index
                .query(f, k)
                .map_err(|e| e.to_string())?
                .iter()
                .map(|m| {
                    let id = file.names.as_ref().and_then(|n| n.get(m.id)).map_or(json!(m.id), |s| json!(s));
                    json!({ "id": id, "distance": m.distance })
                })
                .collect()),
            Target::Data(d) => Ok(d
                .engine
                .search(f, k, usize::MAX)
                .map_err(|e| e.to_string())?
                .into_iter()
                .map(|m| json!({ "id": m.id, "distance": m.distance }))
                .collect()),
        }
    }
}

/// `neardup index add DIR …`: documents or a fingerprint list into a data
/// directory (replacing equal ids), committed in chunks, then a fresh
/// snapshot so that the next `serve` starts without a rebuild.
fn data_add(
    dir: &Path,
    input: &InputArgs,
    fingerprints: Option<&Path>,
    pipeline: &crate::args::PipelineArgs,
) -> Result<()> {
    let data = DataDir::open(dir, pipeline, None)?;
    let (entries, names) = match fingerprints {
        Some(path) => from_list(path, 0)?,
        None => {
            let fp = Fingerprinter::new(data.engine.config().clone())?;
            from_documents(input, &fp, 0)?
        }
    };
    let bits = data.engine.config().bits;
    if let Some((i, (_, f))) = entries.iter().enumerate().find(|(_, (_, f))| f.bits() != bits) {
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
    let n = entries.len();
    let mut docs: Vec<NewDoc> =
        entries.into_iter().zip(names).map(|((_, f), id)| NewDoc::new(id, f)).collect();
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

/// Documents per commit when adding to a data directory.
const DATA_CHUNK: usize = 100_000;

/// With --preset or --config given, they must name the index's pipeline.
pub fn check_pipeline(file: &IndexFile, args: &crate::args::PipelineArgs) -> Result<()> {
    if args.preset.is_none() && args.config.is_none() {
        return Ok(());
    }
    let wanted = args.load()?;
    file.check_config(wanted.config()).map_err(|e| UsageError(e.to_string()).into())
}

pub fn open(path: &Path, no_verify: bool) -> Result<IndexFile> {
    let r = if no_verify { IndexFile::open_unverified(path) } else { IndexFile::open(path) };
    r.map_err(|e| match e {
        neardup::Error::Io { .. } => anyhow::Error::new(e),
        e => UsageError(e.to_string()).into(),
    })
    .with_context(|| format!("cannot open the index {}", path.display()))
}

type Entries = (Vec<(u64, Fingerprint)>, Vec<String>);

fn from_list(path: &Path, first_id: u64) -> Result<Entries> {
    let (words, ids) = fplist::read(path)?;
    let entries = (0..words.len()).map(|i| (first_id + i as u64, words.get(i))).collect();
    let names = (0..words.len()).map(|i| ids.text(i)).collect();
    Ok((entries, names))
}

fn from_documents(input: &InputArgs, fp: &Fingerprinter, first_id: u64) -> Result<Entries> {
    let allow_empty = input.allow_empty;
    entries_of(input, first_id, "fingerprinting", |batch| {
        super::fingerprint_records(fp, batch, allow_empty)
            .into_iter()
            .map(|r| r.map(|(f, _)| vec![(f, String::new())]))
            .collect()
    })
}

/// The passage windows of every document, named `ID#START-END`.
fn from_passages(
    input: &InputArgs,
    fp: &Fingerprinter,
    cfg: &PassageConfig,
    first_id: u64,
) -> Result<Entries> {
    let allow_empty = input.allow_empty;
    entries_of(input, first_id, "fingerprinting passages", |batch| {
        batch
            .par_iter()
            .map(|r| {
                let doc = PassageDoc::new(fp, &r.text, cfg);
                if doc.passages.is_empty() && !allow_empty {
                    return Err(neardup::Error::EmptyDocument);
                }
                let range = |p: &neardup::passage::Passage| format!("#{}-{}", p.bytes.start, p.bytes.end);
                Ok(doc.passages.iter().map(|p| (p.fingerprint, range(&p.passage))).collect())
            })
            .collect()
    })
}

/// Reads the input and turns each batch, by `each`, into per-record entries
/// (fingerprint, suffix of the record's id) or an error for `--on-error`.
fn entries_of(
    input: &InputArgs,
    first_id: u64,
    what: &str,
    each: impl Fn(&[input::Record]) -> Vec<neardup::Result<Vec<(Fingerprint, String)>>>,
) -> Result<Entries> {
    let errors = ErrorPolicy::new(input.on_error);
    let pb = crate::progress::bar(|| input::total_bytes(input), what);
    let mut entries = Vec::new();
    let mut names = Vec::new();
    let total = batches(input, &errors, &pb, |batch| {
        for (r, res) in batch.iter().zip(each(batch)) {
            match res {
                Ok(found) => {
                    let id = match &r.id {
                        Value::String(s) => s.clone(),
                        v => v.to_string(),
                    };
                    for (f, suffix) in found {
                        entries.push((first_id + entries.len() as u64, f));
                        names.push(format!("{id}{suffix}"));
                    }
                }
                Err(e) => errors.bad(&BadRecord { origin: r.origin.clone(), message: e.to_string() })?,
            }
        }
        Ok(())
    })?;
    pb.finish_and_clear();
    errors.summary(total);
    Ok((entries, names))
}
