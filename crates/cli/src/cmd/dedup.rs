//! `neardup dedup`: remove near duplicates from a corpus.
//!
//! Batch mode: fingerprint everything (in parallel), find all pairs within
//! k with the pigeonhole tables (identical fingerprints collapsed first),
//! optionally verify pairs by feature Jaccard, union-find into clusters,
//! keep one record per cluster. Online mode (`--online`): each document is
//! kept unless it is within k of one kept before it.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result};
use neardup::dedup::{Dedup, DedupResult, Keep as KeepPolicy, Records, ShingleJaccard};
use neardup::index::pairs::PairsOptions;
use neardup::{Fingerprinter, Radius};
use serde_json::{json, Value};

use super::{batches, ErrorPolicy};
use crate::args::{DedupArgs, Keep};
use crate::fplist;
use crate::input::{self, BadRecord};
use crate::output::Output;
use crate::UsageError;

/// One input document, as much of it as the outputs need.
struct Doc {
    id: Value,
    /// The record as JSON, written to kept.jsonl when it survives.
    raw: String,
}

/// Times per stage, in seconds, in order.
#[derive(Default)]
struct Stages(Vec<(&'static str, f64)>);

impl Stages {
    fn time<T>(&mut self, name: &'static str, f: impl FnOnce() -> Result<T>) -> Result<T> {
        let pb = crate::progress::stage(name);
        let t = Instant::now();
        let r = f();
        self.0.push((name, t.elapsed().as_secs_f64()));
        pb.finish_and_clear();
        r
    }
}

impl From<Keep> for KeepPolicy {
    fn from(k: Keep) -> KeepPolicy {
        match k {
            Keep::First => KeepPolicy::First,
            Keep::Longest => KeepPolicy::Longest,
            Keep::Shortest => KeepPolicy::Shortest,
        }
    }
}

pub fn run(mut args: DedupArgs) -> Result<ExitCode> {
    if args.fingerprints.is_some() {
        if args.verify.is_some() {
            return Err(
                UsageError("--verify needs the texts; it cannot be used with --fingerprints".into()).into()
            );
        }
        if args.keep != Keep::First {
            return Err(
                UsageError("--keep longest|shortest needs the texts, not --fingerprints".into()).into()
            );
        }
    }
    let start = Instant::now();
    let mut stages = Stages::default();
    std::fs::create_dir_all(&args.output)
        .with_context(|| format!("{}: cannot create the output directory", args.output.display()))?;
    let fingerprinter = if args.fingerprints.is_none() { Some(args.pipeline.load()?) } else { None };
    args.input.keep_raw = true;

    // 1. Documents and fingerprints.
    let errors = ErrorPolicy::new(args.input.on_error);
    let mut bytes_in = 0u64;
    let (docs, records, texts, total) = match &args.fingerprints {
        Some(path) => stages.time("read fingerprints", || {
            bytes_in = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
            let (words, ids) = fplist::read(path)?;
            let docs = (0..words.len())
                .map(|i| {
                    let id = ids.get(i);
                    let raw = json!({ "id": id, "fingerprint": words.get(i) }).to_string();
                    Doc { id, raw }
                })
                .collect::<Vec<_>>();
            let n = docs.len() as u64;
            Ok((docs, Records::from_words(words), Vec::new(), n))
        })?,
        None => {
            let fingerprinter = fingerprinter.as_ref().expect("a pipeline");
            let pb = crate::progress::bar(|| input::total_bytes(&args.input), "fingerprinting");
            let t = Instant::now();
            let r = read_and_fingerprint(&args, fingerprinter, &errors, &pb, &mut bytes_in)?;
            pb.finish_and_clear();
            stages.0.push(("read and fingerprint", t.elapsed().as_secs_f64()));
            r
        }
    };

    // 2–4. Candidate pairs, verification, clusters: the core's dedup.
    let (radius, found) = deduplicate(&args, fingerprinter.as_ref(), &records, &texts)?;
    stages.0.extend(found.timings.iter().copied());
    let n = docs.len();

    // 5. Outputs.
    let kept = stages.time("write", || write_outputs(&args, &docs, &records, &found))?;

    let secs = start.elapsed().as_secs_f64();
    let counts = Counts { documents: n, records_read: total, kept, input_bytes: bytes_in, seconds: secs };
    write_summary(&args, fingerprinter.as_ref(), &radius, &found, &stages, &counts)?;
    errors.summary(total);
    eprintln!(
        "neardup: {n} documents, {kept} kept, {} removed in {} clusters ({secs:.2} s); see {}",
        n as u64 - kept,
        found.clusters.len(),
        args.output.join("summary.json").display()
    );
    Ok(ExitCode::SUCCESS)
}

/// The core's dedup with the command line's settings: the radius (--k,
/// else the pipeline's rule, else the classic k for a fingerprint list)
/// and what was found.
fn deduplicate(
    args: &DedupArgs,
    fingerprinter: Option<&Fingerprinter>,
    records: &Records,
    texts: &[String],
) -> Result<(Radius, DedupResult)> {
    let radius = match (args.k, fingerprinter) {
        (Some(k), _) => Radius::fixed(k),
        (None, Some(fingerprinter)) => fingerprinter.radius().clone(),
        (None, None) => Radius::classic(records.bits()),
    };
    let verifier = args
        .verify
        .map(|v| ShingleJaccard::new(fingerprinter.expect("texts have a pipeline"), texts, v.threshold));
    let mut dedup = Dedup::new(&radius)
        .keep(args.keep.into())
        .layout(PairsOptions { blocks: args.layout.blocks, memory: args.layout.memory.0 })
        .pairs(args.pairs);
    if let Some(v) = &verifier {
        dedup = dedup.verify(v);
    }
    let pb = crate::progress::stage(if args.online { "online check" } else { "finding near duplicates" });
    let found = if args.online { dedup.online(records) } else { dedup.batch(records) };
    pb.finish_and_clear();
    let found = found.map_err(|e| match e {
        neardup::Error::Config(m) => anyhow::Error::from(UsageError(m)),
        e => e.into(),
    })?;
    Ok((radius, found))
}

/// What the summary counts.
struct Counts {
    documents: usize,
    records_read: u64,
    kept: u64,
    input_bytes: u64,
    seconds: f64,
}

/// Writes summary.json.
fn write_summary(
    args: &DedupArgs,
    fingerprinter: Option<&Fingerprinter>,
    radius: &Radius,
    found: &DedupResult,
    stages: &Stages,
    c: &Counts,
) -> Result<()> {
    let mut histogram: BTreeMap<usize, usize> = BTreeMap::new();
    for cl in &found.clusters {
        *histogram.entry(cl.members.len()).or_default() += 1;
    }
    let n = c.documents;
    let summary = json!({
        "documents": n,
        "records_read": c.records_read,
        "skipped": c.records_read - n as u64,
        "kept": c.kept,
        "duplicates_removed": n as u64 - c.kept,
        "clusters": found.clusters.len(),
        "cluster_sizes": histogram.iter().map(|(k, v)| (k.to_string(), json!(v))).collect::<serde_json::Map<_, _>>(),
        "k": radius.to_string(),
        "mode": if args.online { "online" } else { "batch" },
        "keep": KeepPolicy::from(args.keep).to_string(),
        "verify": args.verify.map(|v| format!("jaccard:{}", v.threshold)),
        "pipeline": fingerprinter.map(|f| format!("{:016x}", f.config().id())),
        "layout": found.layout,
        "input_bytes": c.input_bytes,
        "seconds": { "total": c.seconds, "stages": stages.0.iter().map(|(k, v)| (k.to_string(), json!(v))).collect::<serde_json::Map<_, _>>() },
        "documents_per_second": n as f64 / c.seconds,
        "mb_per_second": c.input_bytes as f64 / 1e6 / c.seconds,
    });
    let mut out = Output::open(Some(&args.output.join("summary.json")))?;
    serde_json::to_writer_pretty(&mut *out.writer(), &summary)?;
    out.writer().write_all(b"\n")?;
    out.finish()?;
    Ok(())
}

/// Writes clusters.jsonl, kept.jsonl and (with --pairs) pairs.jsonl;
/// returns how many records were kept.
fn write_outputs(args: &DedupArgs, docs: &[Doc], records: &Records, found: &DedupResult) -> Result<u64> {
    let mut out = Output::open(Some(&args.output.join("clusters.jsonl")))?;
    for (ci, c) in found.clusters.iter().enumerate() {
        let rep = records.fingerprint(c.kept);
        let members: Vec<Value> = c
            .members
            .iter()
            .map(|&i| json!({ "id": docs[i as usize].id, "distance": rep.distance(records.fingerprint(i)) }))
            .collect();
        let v = json!({ "cluster": ci, "representative": docs[c.kept as usize].id, "size": c.members.len(), "members": members });
        serde_json::to_writer(&mut *out.writer(), &v)?;
        out.writer().write_all(b"\n")?;
    }
    out.finish()?;
    let mut out = Output::open(Some(&args.output.join("kept.jsonl")))?;
    let mut kept = 0u64;
    for (d, keep) in docs.iter().zip(found.kept_mask(docs.len())) {
        if keep {
            kept += 1;
            out.writer().write_all(d.raw.as_bytes())?;
            out.writer().write_all(b"\n")?;
        }
    }
    out.finish()?;
    if args.pairs {
        let mut out = Output::open(Some(&args.output.join("pairs.jsonl")))?;
        for p in &found.pairs {
            let mut v =
                json!({ "a": docs[p.a as usize].id, "b": docs[p.b as usize].id, "distance": p.distance });
            if let Some(j) = p.score {
                v["jaccard"] = json!(j);
            }
            serde_json::to_writer(&mut *out.writer(), &v)?;
            out.writer().write_all(b"\n")?;
        }
        out.finish()?;
    }
    Ok(kept)
}

type Loaded = (Vec<Doc>, Records, Vec<String>, u64);

fn read_and_fingerprint(
    args: &DedupArgs,
    fingerprinter: &Fingerprinter,
    errors: &ErrorPolicy,
    pb: &indicatif::ProgressBar,
    bytes_in: &mut u64,
) -> Result<Loaded> {
    let allow_empty = args.input.allow_empty;
    let keep_text = args.verify.is_some();
    let mut docs = Vec::new();
    let mut texts = Vec::new();
    let mut records = Records::new(fingerprinter.bits());
    let total = batches(&args.input, errors, pb, |batch| {
        let results = super::fingerprint_records(fingerprinter, batch, allow_empty);
        for (r, res) in batch.drain(..).zip(results) {
            *bytes_in += r.raw_len;
            match res {
                Ok((f, features)) => {
                    let raw = r.raw.unwrap_or_else(|| json!({ "id": r.id, "text": r.text }).to_string());
                    records.push(f, features, r.text.chars().count());
                    docs.push(Doc { id: r.id, raw });
                    if keep_text {
                        texts.push(r.text);
                    }
                }
                Err(e) => errors.bad(&BadRecord { origin: r.origin.clone(), message: e.to_string() })?,
            }
        }
        Ok(())
    })?;
    Ok((docs, records, texts, total))
}
