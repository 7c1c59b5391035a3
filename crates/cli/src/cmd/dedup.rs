//! `neardup dedup`: remove near duplicates from a corpus.
//!
//! The core's dedup does the work (`neardup::dedup`): with a MinHash
//! pipeline (`--method minhash`), signatures, LSH bands and a Jaccard
//! threshold; with a SimHash one, fingerprints, pigeonhole tables and a
//! radius. This command reads the documents, hands them over and
//! writes kept.jsonl, clusters.jsonl, pairs.jsonl and summary.json.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result};
use neardup::dedup::{
    Dedup, DedupResult, Keep as KeepPolicy, LshDedup, Records, ShingleJaccard, SignatureRecords,
};
use neardup::detector::Detector;
use neardup::index::pairs::PairsOptions;
use neardup::minhash::{estimate, MinHasher, Signature};
use neardup::{Fingerprinter, Radius};
use serde_json::{json, Value};

use super::cluster_view::{self, Shown, ShownCluster};
use super::{batches, sign_records, ErrorPolicy};
use crate::args::{DedupArgs, Keep};
use crate::fplist;
use crate::input::{self, BadRecord, Record};
use crate::output::{count, Output};
use crate::UsageError;
use neardup::minhash::Method;

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
        if args.method == Some(Method::Minhash) || args.threshold.is_some() {
            return Err(UsageError(
                "--fingerprints are SimHash fingerprints; MinHash (--method minhash, --threshold) needs the texts"
                    .into(),
            )
            .into());
        }
    }
    let start = Instant::now();
    let mut stages = Stages::default();
    std::fs::create_dir_all(&args.output)
        .with_context(|| format!("{}: cannot create the output directory", args.output.display()))?;
    let detector = if args.fingerprints.is_none() {
        Some(args.pipeline.detector(args.method, args.k, args.threshold)?)
    } else {
        None
    };
    args.input.keep_raw = true;
    let errors = ErrorPolicy::new(args.input.on_error);
    let (docs, found, total, bytes_in, rule, shown) = match &detector {
        Some(Detector::MinHash(m)) => minhash(&args, m, &errors, &mut stages)?,
        Some(Detector::SimHash(f)) => simhash(&args, Some(f), &errors, &mut stages)?,
        None => simhash(&args, None, &errors, &mut stages)?,
    };
    let n = docs.len();
    let kept = found.kept_mask(n).iter().filter(|&&k| k).count() as u64;
    let secs = start.elapsed().as_secs_f64();
    let counts = Counts { documents: n, records_read: total, kept, input_bytes: bytes_in, seconds: secs };
    write_summary(&args, detector.as_ref(), rule, &found, &stages, &counts)?;
    errors.summary(total);
    for line in &shown {
        eprintln!("{line}");
    }
    let clusters = found.clusters.len();
    if clusters > args.show && args.show > 0 {
        eprintln!(
            "(the first {} of {clusters} clusters; all of them in {})",
            args.show,
            args.output.join("clusters.jsonl").display()
        );
    }
    eprintln!(
        "neardup: {}, {kept} kept, {} removed in {} ({secs:.2} s); kept records in {}, counts in summary.json",
        count(n as u64, "document"),
        n as u64 - kept,
        count(clusters as u64, "cluster"),
        args.output.join("kept.jsonl").display()
    );
    Ok(ExitCode::SUCCESS)
}

/// What one method's run gives: the documents, what was found, the records
/// read, the input bytes, the rule in words for the summary, and the first
/// clusters as shown to a person.
type Run = (Vec<Doc>, DedupResult, u64, u64, Value, Vec<String>);

/// Deduplicates by SimHash fingerprints (of the texts, or --fingerprints).
fn simhash(
    args: &DedupArgs,
    fingerprinter: Option<&Fingerprinter>,
    errors: &ErrorPolicy,
    stages: &mut Stages,
) -> Result<Run> {
    let mut bytes_in = 0u64;
    let (docs, records, texts, total) = match (&args.fingerprints, fingerprinter) {
        (Some(path), _) => stages.time("read fingerprints", || {
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
        (None, f) => {
            let f = f.expect("a pipeline for texts");
            let mut records = Records::new(f.bits());
            let (docs, texts, total) = read_docs(
                args,
                errors,
                stages,
                &mut bytes_in,
                "read and fingerprint",
                |batch| super::fingerprint_records(f, batch, args.input.allow_empty),
                |(fp, features), r| records.push(fp, features, r.text.chars().count()),
            )?;
            (docs, records, texts, total)
        }
    };
    let (radius, found) = deduplicate(args, fingerprinter, &records, &texts)?;
    stages.0.extend(found.timings.iter().copied());
    let closeness =
        |a: u32, b: u32| ("distance", json!(records.fingerprint(a).distance(records.fingerprint(b))));
    stages.time("write", || write_outputs(args, &docs, &found, &closeness))?;
    let shown = show(args, &docs, &found, &closeness);
    // {"k": 3}, or {"k": 4, "steps": [{"below": 48, "k": 2}, …]} by length.
    let mut rule = serde_json::to_value(&radius)?;
    rule["method"] = json!("simhash");
    Ok((docs, found, total, bytes_in, rule, shown))
}

/// Deduplicates by MinHash signatures.
fn minhash(
    args: &DedupArgs,
    minhasher: &MinHasher,
    errors: &ErrorPolicy,
    stages: &mut Stages,
) -> Result<Run> {
    let mut bytes_in = 0u64;
    let mut records = SignatureRecords::new(minhasher.permutations());
    let none = vec![0u32; minhasher.permutations()];
    let (docs, texts, total) = read_docs(
        args,
        errors,
        stages,
        &mut bytes_in,
        "read and sign",
        |batch| sign_records(minhasher, batch, args.input.allow_empty),
        |(signature, features), r| {
            let values = signature.as_ref().map_or(&none[..], Signature::values);
            records.push(values, features, r.text.chars().count());
        },
    )?;
    let verifier = args.verify.map(|v| ShingleJaccard::for_minhash(minhasher, &texts, v.threshold));
    let mut dedup = LshDedup::of(minhasher).keep(args.keep.into()).pairs(args.pairs);
    if let Some(v) = &verifier {
        dedup = dedup.verify(v);
    }
    let found = find(args, || if args.online { dedup.online(&records) } else { dedup.batch(&records) })?;
    stages.0.extend(found.timings.iter().copied());
    let closeness =
        |a: u32, b: u32| ("similarity", json!(round(estimate(records.signature(a), records.signature(b)))));
    stages.time("write", || write_outputs(args, &docs, &found, &closeness))?;
    let shown = show(args, &docs, &found, &closeness);
    let banding = minhasher.banding();
    let rule = json!({ "method": "minhash", "threshold": minhasher.threshold(),
        "permutations": minhasher.permutations(), "bands": banding.bands, "rows": banding.rows });
    Ok((docs, found, total, bytes_in, rule, shown))
}

/// Runs the core's dedup under a progress line; its configuration errors
/// are usage errors.
fn find(args: &DedupArgs, f: impl FnOnce() -> neardup::Result<DedupResult>) -> Result<DedupResult> {
    let pb = crate::progress::stage(if args.online { "online check" } else { "finding near duplicates" });
    let found = f();
    pb.finish_and_clear();
    found.map_err(|e| match e {
        neardup::Error::Config(m) => anyhow::Error::from(UsageError(m)),
        e => e.into(),
    })
}

fn round(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
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
    let found = find(args, || if args.online { dedup.online(records) } else { dedup.batch(records) })?;
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
    detector: Option<&Detector>,
    rule: Value,
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
        "mode": if args.online { "online" } else { "batch" },
        "keep": KeepPolicy::from(args.keep).to_string(),
        "verify": args.verify.map(|v| format!("jaccard:{}", v.threshold)),
        "pipeline": detector.map(|d| format!("{:016x}", d.config().id())),
        "layout": found.layout,
        "input_bytes": c.input_bytes,
        "seconds": { "total": c.seconds, "stages": stages.0.iter().map(|(k, v)| (k.to_string(), json!(v))).collect::<serde_json::Map<_, _>>() },
        "documents_per_second": n as f64 / c.seconds,
        "mb_per_second": c.input_bytes as f64 / 1e6 / c.seconds,
    });
    let mut summary = summary;
    if let (Some(to), Value::Object(rule)) = (summary.as_object_mut(), rule) {
        to.extend(rule);
    }
    let mut out = Output::open(Some(&args.output.join("summary.json")))?;
    serde_json::to_writer_pretty(&mut *out.writer(), &summary)?;
    out.writer().write_all(b"\n")?;
    out.finish()?;
    Ok(())
}

/// How close two records are, as a field of clusters.jsonl and pairs.jsonl:
/// `("distance", bits)` or `("similarity", estimate)`.
type Closeness<'a> = dyn Fn(u32, u32) -> (&'static str, Value) + 'a;

/// Writes clusters.jsonl, kept.jsonl and (with --pairs) pairs.jsonl.
fn write_outputs(args: &DedupArgs, docs: &[Doc], found: &DedupResult, closeness: &Closeness) -> Result<()> {
    let mut out = Output::open(Some(&args.output.join("clusters.jsonl")))?;
    for (ci, c) in found.clusters.iter().enumerate() {
        let members: Vec<Value> = c
            .members
            .iter()
            .map(|&i| {
                let (name, value) = closeness(c.kept, i);
                json!({ "id": docs[i as usize].id, name: value })
            })
            .collect();
        let v = json!({ "cluster": ci, "representative": docs[c.kept as usize].id, "size": c.members.len(), "members": members });
        serde_json::to_writer(&mut *out.writer(), &v)?;
        out.writer().write_all(b"\n")?;
    }
    out.finish()?;
    let mut out = Output::open(Some(&args.output.join("kept.jsonl")))?;
    for (d, keep) in docs.iter().zip(found.kept_mask(docs.len())) {
        if keep {
            out.writer().write_all(d.raw.as_bytes())?;
            out.writer().write_all(b"\n")?;
        }
    }
    out.finish()?;
    if args.pairs {
        let mut out = Output::open(Some(&args.output.join("pairs.jsonl")))?;
        for p in &found.pairs {
            let (name, value) = closeness(p.a, p.b);
            let mut v = json!({ "a": docs[p.a as usize].id, "b": docs[p.b as usize].id, name: value });
            if let (Some(j), Some(_)) = (p.score, args.verify) {
                v["jaccard"] = json!(j);
            }
            serde_json::to_writer(&mut *out.writer(), &v)?;
            out.writer().write_all(b"\n")?;
        }
        out.finish()?;
    }
    Ok(())
}

/// The first `--show` clusters, as lines for a person.
fn show(args: &DedupArgs, docs: &[Doc], found: &DedupResult, closeness: &Closeness) -> Vec<String> {
    let doc = |i: u32| Shown { id: &docs[i as usize].id, raw: &docs[i as usize].raw };
    let clusters: Vec<ShownCluster> = found
        .clusters
        .iter()
        .take(args.show)
        .map(|c| ShownCluster {
            kept: doc(c.kept),
            removed: c
                .members
                .iter()
                .filter(|&&i| i != c.kept)
                .map(|&i| {
                    let (name, value) = closeness(c.kept, i);
                    let value = match value.as_number() {
                        Some(n) if n.is_f64() => format!("{:.2}", n.as_f64().unwrap_or(0.0)),
                        _ => value.to_string(),
                    };
                    (doc(i), format!("{name} {value}"))
                })
                .collect(),
            size: c.members.len(),
        })
        .collect();
    cluster_view::lines(&clusters, found.clusters.len(), args.input.text_field.as_deref().unwrap_or("text"))
}

/// Reads the documents in batches, computes each batch with `compute`
/// (in parallel) and hands each result to `push` with its record, in input
/// order; bad records go to `errors`. Returns the documents, their texts
/// (kept only for --verify) and how many records were read.
fn read_docs<T>(
    args: &DedupArgs,
    errors: &ErrorPolicy,
    stages: &mut Stages,
    bytes_in: &mut u64,
    stage: &'static str,
    compute: impl Fn(&[Record]) -> Vec<neardup::Result<T>>,
    mut push: impl FnMut(T, &Record),
) -> Result<(Vec<Doc>, Vec<String>, u64)> {
    let keep_text = args.verify.is_some();
    let mut docs = Vec::new();
    let mut texts = Vec::new();
    let pb = crate::progress::bar(|| input::total_bytes(&args.input), "reading");
    let t = Instant::now();
    let total = batches(&args.input, errors, &pb, |batch| {
        let results = compute(batch);
        for (r, res) in batch.drain(..).zip(results) {
            *bytes_in += r.raw_len;
            match res {
                Ok(x) => {
                    push(x, &r);
                    let raw = r.raw.unwrap_or_else(|| json!({ "id": r.id, "text": r.text }).to_string());
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
    pb.finish_and_clear();
    stages.0.push((stage, t.elapsed().as_secs_f64()));
    Ok((docs, texts, total))
}
