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
use neardup::index::cluster::UnionFind;
use neardup::index::pairs::PairsOptions;
use neardup::index::{HammingIndex, TableIndex};
use neardup::presets::Radius;
use neardup::similarity::FeatureSet;
use neardup::Fingerprinter;
use rayon::prelude::*;
use serde_json::{json, Value};

use super::{batches, ErrorPolicy};
use crate::args::{DedupArgs, Keep};
use crate::fplist::{self, Words};
use crate::input::{self, BadRecord};
use crate::output::Output;
use crate::UsageError;

/// One input document, as much of it as the outputs need.
struct Doc {
    id: Value,
    /// The record as JSON, written to kept.jsonl when it survives.
    raw: String,
    /// Length in characters (for --keep longest|shortest).
    chars: usize,
    /// The text, kept only for --verify.
    text: Option<String>,
    /// How many features voted (0 for --fingerprints).
    features: usize,
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
    let fp = if args.fingerprints.is_none() { Some(args.pipeline.load()?) } else { None };
    args.input.keep_raw = true;

    // 1. Documents and fingerprints.
    let errors = ErrorPolicy::new(args.input.on_error);
    let mut bytes_in = 0u64;
    let (docs, words, total) = match &args.fingerprints {
        Some(path) => stages.time("read fingerprints", || {
            bytes_in = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
            let (words, ids) = fplist::read(path)?;
            let docs = (0..words.len())
                .map(|i| {
                    let id = ids.get(i);
                    let raw = json!({ "id": id, "fingerprint": words.get(i) }).to_string();
                    Doc { id, raw, chars: 0, text: None, features: 0 }
                })
                .collect::<Vec<_>>();
            let n = docs.len() as u64;
            Ok((docs, words, n))
        })?,
        None => {
            let fp = fp.as_ref().expect("a pipeline");
            let pb = crate::progress::bar(|| input::total_bytes(&args.input), "fingerprinting");
            let t = Instant::now();
            let r = read_and_fingerprint(&args, fp, &errors, &pb, &mut bytes_in)?;
            pb.finish_and_clear();
            stages.0.push(("read and fingerprint", t.elapsed().as_secs_f64()));
            r
        }
    };

    // 2–4. Candidate pairs, verification, clusters.
    let verify = args.verify.map(|v| (v.threshold, fp.as_ref().expect("texts have a pipeline")));
    let bits = fp.as_ref().map_or_else(|| words.bits(), |f| f.bits());
    let radius = match (args.k, &args.fingerprints) {
        (Some(k), _) => Radius::fixed(k),
        (None, Some(_)) => Radius::fixed(neardup::presets::classic_k(bits)),
        (None, None) => args.pipeline.recommended_radius(bits),
    };
    let n = docs.len();
    let (mut uf, pairs, layout_text) = if args.online {
        online(&args, &radius, &docs, &words, verify, &mut stages)?
    } else {
        batch(&args, &radius, &docs, &words, verify, &mut stages)?
    };

    // 5. Outputs.
    let (kept, clusters) = stages.time("write", || {
        let clusters = uf.clusters();
        let rep_of = |c: &[u32]| -> u32 {
            if args.online {
                return c[0];
            }
            match args.keep {
                Keep::First => c[0],
                Keep::Longest => *c.iter().max_by_key(|&&i| (docs[i as usize].chars, std::cmp::Reverse(i))).expect("non-empty"),
                Keep::Shortest => *c.iter().min_by_key(|&&i| (docs[i as usize].chars, i)).expect("non-empty"),
            }
        };
        let mut dropped = vec![false; n];
        let mut out = Output::open(Some(&args.output.join("clusters.jsonl")))?;
        for (ci, c) in clusters.iter().enumerate() {
            let rep = rep_of(c);
            let members: Vec<Value> = c
                .iter()
                .map(|&i| json!({ "id": docs[i as usize].id, "distance": words.get(rep as usize).distance(words.get(i as usize)) }))
                .collect();
            for &i in c {
                dropped[i as usize] = i != rep;
            }
            let v = json!({ "cluster": ci, "representative": docs[rep as usize].id, "size": c.len(), "members": members });
            serde_json::to_writer(&mut *out.writer(), &v)?;
            out.writer().write_all(b"\n")?;
        }
        out.finish()?;
        let mut out = Output::open(Some(&args.output.join("kept.jsonl")))?;
        let mut kept = 0u64;
        for (d, &drop) in docs.iter().zip(&dropped) {
            if !drop {
                kept += 1;
                out.writer().write_all(d.raw.as_bytes())?;
                out.writer().write_all(b"\n")?;
            }
        }
        out.finish()?;
        if args.pairs {
            let mut out = Output::open(Some(&args.output.join("pairs.jsonl")))?;
            for p in &pairs {
                let mut v = json!({ "a": docs[p.0 as usize].id, "b": docs[p.1 as usize].id, "distance": p.2 });
                if let Some(j) = p.3 {
                    v["jaccard"] = json!(j);
                }
                serde_json::to_writer(&mut *out.writer(), &v)?;
                out.writer().write_all(b"\n")?;
            }
            out.finish()?;
        }
        Ok((kept, clusters))
    })?;

    let mut histogram: BTreeMap<usize, usize> = BTreeMap::new();
    for c in &clusters {
        *histogram.entry(c.len()).or_default() += 1;
    }
    let secs = start.elapsed().as_secs_f64();
    let summary = json!({
        "documents": n,
        "records_read": total,
        "skipped": total - n as u64,
        "kept": kept,
        "duplicates_removed": n as u64 - kept,
        "clusters": clusters.len(),
        "cluster_sizes": histogram.iter().map(|(k, v)| (k.to_string(), json!(v))).collect::<serde_json::Map<_, _>>(),
        "k": radius.to_string(),
        "mode": if args.online { "online" } else { "batch" },
        "keep": format!("{:?}", args.keep).to_lowercase(),
        "verify": args.verify.map(|v| format!("jaccard:{}", v.threshold)),
        "pipeline": fp.as_ref().map(|f| format!("{:016x}", f.config().id())),
        "layout": layout_text,
        "input_bytes": bytes_in,
        "seconds": { "total": secs, "stages": stages.0.iter().map(|(k, v)| (k.to_string(), json!(v))).collect::<serde_json::Map<_, _>>() },
        "documents_per_second": n as f64 / secs,
        "mb_per_second": bytes_in as f64 / 1e6 / secs,
    });
    let mut out = Output::open(Some(&args.output.join("summary.json")))?;
    serde_json::to_writer_pretty(&mut *out.writer(), &summary)?;
    out.writer().write_all(b"\n")?;
    out.finish()?;
    errors.summary(total);
    eprintln!(
        "neardup: {n} documents, {kept} kept, {} removed in {} clusters ({secs:.2} s); see {}",
        n as u64 - kept,
        clusters.len(),
        args.output.join("summary.json").display()
    );
    Ok(ExitCode::SUCCESS)
}

type Loaded = (Vec<Doc>, Words, u64);

fn read_and_fingerprint(
    args: &DedupArgs,
    fp: &Fingerprinter,
    errors: &ErrorPolicy,
    pb: &indicatif::ProgressBar,
    bytes_in: &mut u64,
) -> Result<Loaded> {
    let allow_empty = args.input.allow_empty;
    let keep_text = args.verify.is_some();
    let mut docs = Vec::new();
    let mut values: Vec<u128> = Vec::new();
    let bits = fp.config().bits;
    let total = batches(&args.input, errors, pb, |batch| {
        let results = super::fingerprint_records(fp, batch, allow_empty);
        for (r, res) in batch.drain(..).zip(results) {
            *bytes_in += r.raw_len;
            match res {
                Ok((f, features)) => {
                    let raw = r.raw.unwrap_or_else(|| json!({ "id": r.id, "text": r.text }).to_string());
                    let chars = r.text.chars().count();
                    docs.push(Doc { id: r.id, raw, chars, text: keep_text.then_some(r.text), features });
                    values.push(f.value());
                }
                Err(e) => errors.bad(&BadRecord { origin: r.origin.clone(), message: e.to_string() })?,
            }
        }
        Ok(())
    })?;
    let words = match bits {
        neardup::Bits::B64 => Words::B64(values.into_iter().map(|v| v as u64).collect()),
        neardup::Bits::B128 => Words::B128(values),
    };
    Ok((docs, words, total))
}

/// A near-duplicate pair of documents: (a, b, distance, Jaccard when verified).
type DocPair = (u32, u32, u32, Option<f64>);

fn batch(
    args: &DedupArgs,
    radius: &Radius,
    docs: &[Doc],
    words: &Words,
    verify: Option<(f64, &Fingerprinter)>,
    stages: &mut Stages,
) -> Result<(UnionFind, Vec<DocPair>, String)> {
    let opts = PairsOptions { blocks: args.layout.blocks, memory: args.layout.memory.0 };
    let ap = stages.time("find pairs", || super::pairs::find(words, radius.min_k(), opts))?;
    let layout = ap.layout.map(|l| l.to_string()).unwrap_or_default();
    // Pairs beyond the smallest radius: only among documents short enough
    // for a larger one (see Radius::k_for_pair).
    let extra = stages.time("find pairs of short documents", || {
        let mut extra = Vec::new();
        let (steps, _) = radius.steps();
        for &(n, k) in steps {
            if k <= radius.min_k() {
                continue;
            }
            let subset: Vec<u32> =
                (0..docs.len() as u32).filter(|&i| docs[i as usize].features < 2 * n).collect();
            let sub_words = words.subset(&subset);
            let sub = super::pairs::find(&sub_words, k, opts)?;
            sub.for_each_pair(|i, j, d| {
                let (a, b) = (subset[i as usize], subset[j as usize]);
                let want = radius.k_for_pair(docs[a as usize].features, docs[b as usize].features);
                if d > radius.min_k() && d <= want && want == k {
                    extra.push((a, b, d));
                }
            });
        }
        Ok(extra)
    })?;
    let mut uf = UnionFind::new(docs.len());
    let mut pairs: Vec<DocPair> = Vec::new();
    match verify {
        None => stages.time("cluster", || {
            for g in 0..ap.groups() as u32 {
                let m = ap.group(g);
                for &i in &m[1..] {
                    uf.union(m[0], i);
                }
            }
            for &(a, b, _) in &ap.pairs {
                uf.union(ap.group(a)[0], ap.group(b)[0]);
            }
            for &(a, b, _) in &extra {
                uf.union(a, b);
            }
            if args.pairs {
                ap.for_each_pair(|i, j, d| pairs.push((i, j, d, None)));
                pairs.extend(extra.iter().map(|&(a, b, d)| (a, b, d, None)));
            }
            Ok(())
        })?,
        Some((t, fp)) => {
            // Candidate document pairs: within groups of identical
            // fingerprints and across near groups. Shingle sets are made
            // only for documents in some candidate pair.
            let candidates = stages.time("verify", || {
                let mut cand: Vec<(u32, u32, u32)> = Vec::new();
                ap.for_each_pair(|i, j, d| cand.push((i, j, d)));
                cand.extend_from_slice(&extra);
                let mut involved: Vec<u32> = cand.iter().flat_map(|p| [p.0, p.1]).collect();
                involved.par_sort_unstable();
                involved.dedup();
                let sets: Vec<FeatureSet> = involved
                    .par_iter()
                    .map(|&i| FeatureSet::shingles(fp, docs[i as usize].text.as_deref().unwrap_or(""), 3))
                    .collect();
                let set = |i: u32| &sets[involved.binary_search(&i).expect("involved")];
                Ok(cand
                    .par_iter()
                    .filter_map(|&(i, j, d)| {
                        let jac = set(i).jaccard(set(j));
                        (jac >= t).then_some((i, j, d, Some(jac)))
                    })
                    .collect::<Vec<DocPair>>())
            })?;
            stages.time("cluster", || {
                for p in &candidates {
                    uf.union(p.0, p.1);
                }
                Ok(())
            })?;
            if args.pairs {
                pairs = candidates;
            }
        }
    }
    Ok((uf, pairs, layout))
}

fn online(
    args: &DedupArgs,
    radius: &Radius,
    docs: &[Doc],
    words: &Words,
    verify: Option<(f64, &Fingerprinter)>,
    stages: &mut Stages,
) -> Result<(UnionFind, Vec<DocPair>, String)> {
    let mut builder = TableIndex::builder()
        .bits(words.bits())
        .k(radius.max_k())
        .expected_len(docs.len())
        .memory(args.layout.memory.0);
    if let Some(m) = args.layout.blocks {
        builder = builder.blocks(m);
    }
    let mut index = builder.build()?;
    let layout = index.layout().to_string();
    let mut uf = UnionFind::new(docs.len());
    let mut pairs = Vec::new();
    stages.time("online check", || {
        let mut sets: std::collections::HashMap<u32, FeatureSet> = std::collections::HashMap::new();
        let mut set_of = |i: u32, fp: &Fingerprinter| -> FeatureSet {
            sets.entry(i)
                .or_insert_with(|| {
                    FeatureSet::shingles(fp, docs[i as usize].text.as_deref().unwrap_or(""), 3)
                })
                .clone()
        };
        for i in 0..docs.len() {
            let f = words.get(i);
            let mut matches = index.query(f, radius.max_k())?;
            matches
                .retain(|m| m.distance <= radius.k_for_pair(docs[i].features, docs[m.id as usize].features));
            // The nearest kept document (ties: the earliest) that passes verification.
            let mut owner = None;
            for m in &matches {
                match verify {
                    None => {
                        owner = Some((m.id as u32, m.distance, None));
                        break;
                    }
                    Some((t, fp)) => {
                        let jac = set_of(i as u32, fp).jaccard(&set_of(m.id as u32, fp));
                        if jac >= t {
                            owner = Some((m.id as u32, m.distance, Some(jac)));
                            break;
                        }
                    }
                }
            }
            match owner {
                Some((kept, d, jac)) => {
                    uf.union(kept, i as u32);
                    if args.pairs {
                        pairs.push((kept, i as u32, d, jac));
                    }
                }
                None => index.insert(i as u64, f)?,
            }
        }
        Ok(())
    })?;
    Ok((uf, pairs, layout))
}
