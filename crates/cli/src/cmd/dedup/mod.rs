//! `neardup dedup`: remove near duplicates from a corpus.
//!
//! The core's dedup does the work (`neardup::dedup`): with a MinHash
//! pipeline (`--method minhash`), signatures, LSH bands and a Jaccard
//! threshold; with a SimHash one, fingerprints, pigeonhole tables and a
//! radius. This command reads the documents, hands them over and
//! writes kept.jsonl, clusters.jsonl, pairs.jsonl and summary.json.
//!
//! Memory is bounded by `--memory`: records that do not fit move to
//! `--tmp-dir` ([`docs::DocStore`]), and so do MinHash signatures (the
//! core's spilling records); the outputs are written in one read of the
//! records, and summary.json last, as the mark of a finished run.

mod against;
mod cluster_view;
mod docs;
mod memory;
mod outofcore;
mod resume;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result};
use neardup::dedup::{
    fingerprint_list, DedupOptions, DedupRecords, DedupResult, ExactPass, ExactRecords, ExactText,
    Keep as KeepPolicy, Records, Repeat, ShingleColumn, SignatureRecords, SpillTo,
};
use neardup::detector::Detector;
use neardup::index::pairs::PairsOptions;
use serde_json::{json, Value};

use self::cluster_view::{Shown, ShownCluster};
use crate::args::{DedupArgs, DedupMethod, Keep};
use crate::fplist;
use crate::input::{self, BadRecord};
use crate::kept::{KeptFormat, KeptWriter};
use crate::output::{count, Output};
use crate::records::{batches, ErrorPolicy};
use crate::targets::entries::id_text;
use crate::UsageError;
use docs::DocStore;
use memory::Shares;
use neardup::minhash::Method;
use resume::{abort_at, Checkpoint, ReadStage};

/// Where a run keeps what does not fit in memory, and how much.
struct Spill {
    dir: PathBuf,
    shares: Shares,
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

pub fn run(args: DedupArgs) -> Result<ExitCode> {
    check_fingerprint_flags(&args)?;
    input::check_paths(&args.input)?;
    let out = crate::output::OutputDir::create(&args.output)?;
    let done = run_into(args)?;
    out.keep();
    Ok(done)
}

/// [`run`] once the output directory is there.
fn run_into(mut args: DedupArgs) -> Result<ExitCode> {
    let start = Instant::now();
    let mut stages = Stages::default();
    remove_stale_results(&args)?;
    let spill = spill_of(&args)?;
    let kept_format = crate::kept::choose(args.output_format, &args.input)?;
    let mut against = against::Against::open(&args)?;
    let detector = detector_of(&args, against.as_ref())?;
    let verify = verification(&args, detector.as_ref());
    let options = DedupOptions {
        keep: args.keep.into(),
        online: args.online,
        pairs: args.pairs,
        verify,
        layout: PairsOptions { blocks: args.blocks, memory: spill.shares.tables },
        key_memory: Some(spill.shares.band_keys),
        clusters: args.clusters.into(),
    };
    if outofcore::wanted(&args) {
        return outofcore::run(&args, &spill, &kept_format, &mut stages, start);
    }
    args.input.keep_raw = true;
    let errors = ErrorPolicy::new(args.input.on_error);
    let checkpoint = Checkpoint::of(&args, &spill.dir, detector.as_ref().map(|d| d.config().id()))?;
    let ReadStage { mut docs, records, shingles, total, bytes_in, .. } =
        read_stage(&args, detector.as_ref(), &spill, &errors, checkpoint.as_ref(), &mut stages)?;
    // The rule as data (summary.json) and in words (the last line).
    let (rule, method) = rule_of(&args, detector.as_ref(), &records)?;
    let finding = Finding { args: &args, detector: detector.as_ref(), records: &records, options: &options };
    let found = finding.run(against.as_ref(), &shingles, checkpoint.as_ref(), &mut stages)?;
    drop(shingles);
    let n = docs.len();
    let mut kept_ids = Vec::new();
    let (shown, kept_path) = stages.time("write", || {
        let ids = args.save_index.then_some(&mut kept_ids);
        write_outputs(&args, &kept_format, &mut docs, &found, &records, verify, ids)
    })?;
    if let Some(a) = against.as_mut().filter(|_| args.save_index) {
        save_to_index(&args, a, checkpoint.as_ref(), &records, &kept_ids, &mut stages)?;
    }
    let kept = found.kept_mask(n).iter().filter(|&&k| k).count() as u64;
    let secs = start.elapsed().as_secs_f64();
    let spilled = Spilled { records: docs.spilled_bytes(), signatures: records.spilled_bytes() };
    let cut_short = errors.cut_short();
    // A file cut short counted as a record read; it is not a skipped one.
    let records_read = total - cut_short.len() as u64;
    let counts = Counts { documents: n, records_read, cut_short, kept, input_bytes: bytes_in, seconds: secs };
    let found_counts = FoundCounts::of(&found);
    let d = detector.as_ref();
    write_summary(&args, d, rule, &found_counts, &stages, &counts, &spill, spilled, verify)?;
    if let Some(c) = checkpoint {
        c.finish()?;
    }
    errors.summary(total);
    let exact = matches!(records, DedupRecords::Exact(_));
    print_result(&args, exact, &method, &shown, found.clusters.len(), &counts, &kept_path);
    Ok(ExitCode::SUCCESS)
}

/// summary.json marks a finished run: an earlier one's goes first, so a
/// run that stops early leaves none. pairs.jsonl of an earlier --pairs run
/// must not stand beside new results either.
fn remove_stale_results(args: &DedupArgs) -> Result<()> {
    remove_stale(&args.output.join("summary.json"))?;
    if !args.pairs {
        remove_stale(&args.output.join("pairs.jsonl"))?;
    }
    Ok(())
}

/// The pipeline and rule: the index's with `--against`, none for a
/// fingerprint list, else the flags'.
fn detector_of(args: &DedupArgs, against: Option<&against::Against>) -> Result<Option<Detector>> {
    Ok(match against {
        Some(a) => Some(a.detector(args)?),
        None if args.fingerprints.is_none() => {
            Some(args.pipeline.detector(args.method.and_then(DedupMethod::near), args.k, args.threshold)?)
        }
        None => None,
    })
}

/// The records: an earlier run's (`--resume`), or read now.
fn read_stage(
    args: &DedupArgs,
    detector: Option<&Detector>,
    spill: &Spill,
    errors: &ErrorPolicy,
    checkpoint: Option<&Checkpoint>,
    stages: &mut Stages,
) -> Result<ReadStage> {
    if let Some(r) = checkpoint.map(|c| c.read_stage(spill.shares.shingles)).transpose()?.flatten() {
        stages.0.push(("read (earlier run)", r.seconds));
        errors.add_skipped(r.skipped);
        return Ok(r);
    }
    let mut r = match detector {
        Some(d) => read_docs(args, d, spill, errors, stages)?,
        None => read_fingerprints(args, spill, stages)?,
    };
    if let Some(c) = checkpoint {
        stages.time("checkpoint", || c.save_read(&mut r))?;
    }
    Ok(r)
}

/// What finding the duplicates needs.
struct Finding<'a> {
    args: &'a DedupArgs,
    detector: Option<&'a Detector>,
    records: &'a DedupRecords,
    options: &'a DedupOptions,
}

impl Finding<'_> {
    /// The clusters: an earlier run's (`--resume`), or found now (against
    /// an index with `--against`).
    fn run(
        &self,
        against: Option<&against::Against>,
        shingles: &ShingleColumn,
        checkpoint: Option<&Checkpoint>,
        stages: &mut Stages,
    ) -> Result<DedupResult> {
        if let Some((found, timings)) = checkpoint.map(Checkpoint::found).transpose()?.flatten() {
            for (name, secs) in timings {
                stages.0.push((Box::leak(format!("{name} (earlier run)").into_boxed_str()), secs));
            }
            return Ok(found);
        }
        let matches = match against {
            Some(a) => Some(stages.time("look up the index", || a.matches(self.records))?),
            None => None,
        };
        let (records, options) = (self.records, self.options);
        let found = find(self.args, || match (self.detector, &matches) {
            (Some(d), Some(m)) => d.dedup_against(records, shingles, options, m),
            (Some(d), None) => d.dedup(records, shingles, options),
            (None, _) => {
                let DedupRecords::Fingerprints(r) = records else {
                    unreachable!("a list holds fingerprints")
                };
                Ok(fingerprint_list(r, self.args.k, options)?.1)
            }
        })?;
        stages.0.extend(found.timings.iter().copied());
        abort_at("find");
        if let Some(c) = checkpoint {
            c.save_found(&found)?;
        }
        Ok(found)
    }
}

/// `--save-index`: adds the kept documents to the index of `--against`
/// (once: a resumed run whose index was updated before it stopped does not
/// add them again).
fn save_to_index(
    args: &DedupArgs,
    against: &mut against::Against,
    checkpoint: Option<&Checkpoint>,
    records: &DedupRecords,
    kept_ids: &[(u32, String)],
    stages: &mut Stages,
) -> Result<()> {
    let index = args.against.as_ref().map(|p| p.display().to_string()).unwrap_or_default();
    if checkpoint.is_some_and(Checkpoint::index_saved) {
        note!("neardup: the kept documents were added to {index} before the run stopped");
        return Ok(());
    }
    let added = stages.time("add to the index", || against.save(records, kept_ids))?;
    if let Some(c) = checkpoint {
        c.mark_index_saved()?;
    }
    abort_at("saved");
    note!("neardup: added the {} kept to {index}", count(added as u64, "document"));
    Ok(())
}

/// The last lines on stderr: the rule, the clusters shown, the counts.
fn print_result(
    args: &DedupArgs,
    exact: bool,
    method: &str,
    shown: &[String],
    clusters: usize,
    counts: &Counts,
    kept_path: &std::path::Path,
) {
    if exact {
        note!("neardup: duplicates: {method}");
    } else {
        note!("neardup: near duplicates by {method}");
    }
    for line in shown {
        note!("{line}");
    }
    print_clusters_shown(args, clusters);
    let (n, kept) = (counts.documents as u64, counts.kept);
    note!(
        "neardup: {}, {kept} kept, {} removed in {} ({:.2} s); kept records in {}, counts in summary.json",
        count(n, "document"),
        n - kept,
        count(clusters as u64, "cluster"),
        counts.seconds,
        kept_path.display()
    );
}

/// The temporary folder (`--tmp-dir`, else the output directory), checked
/// to be a writable folder, and the shares of `--memory`.
fn spill_of(args: &DedupArgs) -> Result<Spill> {
    let dir = args.tmp_dir.clone().unwrap_or_else(|| args.output.clone());
    if !dir.is_dir() {
        return Err(UsageError(format!(
            "--tmp-dir {}: no such folder; name an existing folder with room for about the corpus's size",
            dir.display()
        ))
        .into());
    }
    tempfile::tempfile_in(&dir).with_context(|| {
        format!("{}: cannot write a temporary file in this folder (--tmp-dir)", dir.display())
    })?;
    Ok(Spill { dir, shares: Shares::of(args.memory.0) })
}

/// The verification a run does: `--verify jaccard:T`, none with `--verify
/// none`, else the method's default (SimHash verifies; MinHash, exact
/// dedup and fingerprint lists do not).
fn verification(args: &DedupArgs, detector: Option<&Detector>) -> Option<neardup::dedup::Threshold> {
    match args.verify {
        Some(v) => v.threshold(),
        None if args.method == Some(DedupMethod::Exact) || args.fingerprints.is_some() => None,
        None => detector.and_then(Detector::default_verify),
    }
}

/// Whether `--verify jaccard:T` was given.
fn verifies(args: &DedupArgs) -> bool {
    args.verify.is_some_and(|v| v != crate::args::Verify::Off)
}

/// With `--fingerprints`, the flags that need the texts are usage errors;
/// so are flags of the near-duplicate methods with `--method exact`.
fn check_fingerprint_flags(args: &DedupArgs) -> Result<()> {
    if args.method == Some(DedupMethod::Exact) {
        let why = if args.fingerprints.is_some() {
            "--method exact needs the texts, not --fingerprints"
        } else if args.k.is_some() || args.threshold.is_some() || verifies(args) {
            "--method exact finds identical texts: -k, --threshold and --verify belong to simhash and minhash"
        } else if args.against.is_some() {
            "--against looks documents up in an index of signatures or fingerprints: use --method minhash \
             or simhash (an identical text is near its copy by either)"
        } else {
            return Ok(());
        };
        return Err(UsageError(why.into()).into());
    }
    if args.fingerprints.is_none() {
        return Ok(());
    }
    let why = if verifies(args) {
        "--verify needs the texts; it cannot be used with --fingerprints"
    } else if args.keep != Keep::First {
        "--keep longest|shortest needs the texts, not --fingerprints"
    } else if args.method == Some(DedupMethod::Minhash) || args.threshold.is_some() {
        "--fingerprints are SimHash fingerprints; MinHash (--method minhash, --threshold) needs the texts"
    } else {
        return Ok(());
    };
    Err(UsageError(why.into()).into())
}

/// Says where the clusters not shown are.
fn print_clusters_shown(args: &DedupArgs, clusters: usize) {
    if clusters > args.show && args.show > 0 {
        note!(
            "(the first {} of {clusters} clusters; all of them in {})",
            args.show,
            args.output.join("clusters.jsonl").display()
        );
    }
}

/// Removes an output file of an earlier run that this run does not write.
fn remove_stale(path: &std::path::Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("{}: cannot remove the earlier run's file", path.display()))
        }
        _ => Ok(()),
    }
}

/// Reads a list of fingerprints (--fingerprints).
fn read_fingerprints(args: &DedupArgs, spill: &Spill, stages: &mut Stages) -> Result<ReadStage> {
    let path = args.fingerprints.as_ref().expect("--fingerprints");
    let t = Instant::now();
    stages.time("read fingerprints", || {
        let bytes_in = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        let (words, ids) = fplist::read(path)?;
        let mut docs = DocStore::new(spill.shares.records, &spill.dir, Some(bytes_in));
        for i in 0..words.len() {
            let id = ids.get(i);
            let raw = json!({ "id": id, "fingerprint": words.get(i) }).to_string();
            docs.push(id, raw)?;
        }
        let total = docs.len() as u64;
        let records = DedupRecords::Fingerprints(Records::from_words(words));
        let seconds = t.elapsed().as_secs_f64();
        Ok(ReadStage { docs, records, shingles: ShingleColumn::new(), total, bytes_in, skipped: 0, seconds })
    })
}

/// The rule as data (summary.json) and in words: the detector's, or for
/// a fingerprint list the radius --k or the classic one.
fn rule_of(args: &DedupArgs, detector: Option<&Detector>, records: &DedupRecords) -> Result<(Value, String)> {
    if let DedupRecords::Exact(_) = records {
        let what = if args.exact == "raw" { "raw texts, byte for byte" } else { "normalized texts" };
        return Ok((
            json!({ "method": "exact", "exact": args.exact }),
            format!("identical {what} (XXH3-128)"),
        ));
    }
    if let Some(d) = detector {
        return Ok((d.rule_json(), d.describe()));
    }
    let DedupRecords::Fingerprints(r) = records else { unreachable!("a list holds fingerprints") };
    let radius = args.k.map_or_else(|| neardup::Radius::classic(r.bits()), neardup::Radius::fixed);
    let mut rule = serde_json::to_value(&radius).expect("a radius serializes");
    rule["method"] = json!("simhash");
    Ok((rule, format!("SimHash, {radius}")))
}

/// Runs the core's dedup under a progress line; its configuration errors
/// are usage errors.
fn find<T>(args: &DedupArgs, f: impl FnOnce() -> neardup::Result<T>) -> Result<T> {
    let pb = crate::progress::stage(if args.online { "online check" } else { "finding near duplicates" });
    let found = f();
    pb.finish_and_clear();
    found.map_err(|e| match e {
        neardup::Error::Config(m) => anyhow::Error::from(UsageError(m)),
        e => e.into(),
    })
}

/// What the summary counts.
struct Counts {
    documents: usize,
    records_read: u64,
    /// Where input files were cut short (`FILE:LINE`): the rest of each lost.
    cut_short: Vec<String>,
    kept: u64,
    input_bytes: u64,
    seconds: f64,
}

/// What summary.json says of the clusters.
struct FoundCounts {
    /// Clusters by their number of members.
    sizes: BTreeMap<usize, usize>,
    clusters: usize,
    /// Clusters near a document of the `--against` index.
    near_index: usize,
    layout: String,
}

impl FoundCounts {
    fn of(found: &DedupResult) -> FoundCounts {
        let mut sizes: BTreeMap<usize, usize> = BTreeMap::new();
        for cl in &found.clusters {
            *sizes.entry(cl.members.len()).or_default() += 1;
        }
        FoundCounts {
            sizes,
            clusters: found.clusters.len(),
            near_index: found.indexed.iter().filter(|x| x.is_some()).count(),
            layout: found.layout.clone(),
        }
    }
}

/// Bytes moved to the temporary folder.
struct Spilled {
    records: u64,
    signatures: u64,
}

/// Writes summary.json.
#[allow(clippy::too_many_arguments)]
fn write_summary(
    args: &DedupArgs,
    detector: Option<&Detector>,
    rule: Value,
    found: &FoundCounts,
    stages: &Stages,
    c: &Counts,
    spill: &Spill,
    spilled: Spilled,
    verify: Option<neardup::dedup::Threshold>,
) -> Result<()> {
    let histogram = &found.sizes;
    let n = c.documents;
    let summary = json!({
        "documents": n,
        "records_read": c.records_read,
        "skipped": c.records_read - n as u64,
        "files_cut_short": c.cut_short,
        "kept": c.kept,
        "duplicates_removed": n as u64 - c.kept,
        "clusters": found.clusters,
        "cluster_sizes": histogram.iter().map(|(k, v)| (k.to_string(), json!(v))).collect::<serde_json::Map<_, _>>(),
        "mode": if args.online { "online" } else { "batch" },
        "against": args.against.as_ref().map(|p| p.display().to_string()),
        "clusters_near_the_index": found.near_index,
        "index_updated": args.save_index,
        "keep": KeepPolicy::from(args.keep).to_string(),
        "clusters_by": if args.online { "online".to_string() } else { neardup::dedup::ClusterMode::from(args.clusters).to_string() },
        "verify": verify.map(|t| format!("jaccard:{t}")),
        "pipeline": detector.map(|d| format!("{:016x}", d.config().id())),
        "layout": found.layout,
        "input_bytes": c.input_bytes,
        "seconds": { "total": c.seconds, "stages": stages.0.iter().map(|(k, v)| (k.to_string(), json!(v))).collect::<serde_json::Map<_, _>>() },
        "documents_per_second": n as f64 / c.seconds,
        "mb_per_second": c.input_bytes as f64 / 1e6 / c.seconds,
        "memory": {
            "budget": args.memory.0,
            "peak_rss": memory::peak_rss(),
            "tmp_dir": spill.dir.display().to_string(),
            "spilled_bytes": { "records": spilled.records, "signatures": spilled.signatures },
        },
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

/// Writes kept.jsonl in one read of the documents, gathering on the way
/// the ids of the documents in a cluster (and the records of the shown
/// ones); then clusters.jsonl and (with --pairs) pairs.jsonl. Each cluster
/// member and pair says how close it is in the method's terms (`distance`
/// in bits, or estimated `similarity`). Returns the lines that show the
/// first clusters.
fn write_outputs(
    args: &DedupArgs,
    format: &KeptFormat,
    docs: &mut DocStore,
    found: &DedupResult,
    records: &DedupRecords,
    verify: Option<neardup::dedup::Threshold>,
    mut kept_ids: Option<&mut Vec<(u32, String)>>,
) -> Result<(Vec<String>, PathBuf)> {
    let n = docs.len();
    let kept = found.kept_mask(n);
    // The documents named in clusters.jsonl and pairs.jsonl (a pair may
    // join two kept documents, in no justified cluster).
    let pair_members = found.pairs.iter().flat_map(|p| [p.a, p.b]);
    let mut clustered = vec![false; n];
    for i in found.clusters.iter().flat_map(|c| c.members.iter().copied()).chain(pair_members) {
        clustered[i as usize] = true;
    }
    let shown: HashSet<u32> =
        found.clusters.iter().take(args.show).flat_map(|c| c.members.iter().copied()).collect();
    let mut ids = Ids(vec![None; n]);
    let mut raws: HashMap<u32, String> = HashMap::with_capacity(shown.len());
    let mut out = KeptWriter::open(&args.output, "kept", format)?;
    let pb = crate::progress::count_bar(n as u64, "writing kept records");
    docs.for_each(|i, id, raw| {
        pb.inc(1);
        if kept[i] {
            out.push(raw)?;
            if let Some(ids) = kept_ids.as_deref_mut() {
                ids.push((i as u32, id_text(&id.value())));
            }
        }
        if clustered[i] {
            ids.0[i] = Some(id.value());
        }
        let i = i as u32;
        if shown.contains(&i) {
            raws.insert(i, raw.to_owned());
        }
        Ok(())
    })?;
    pb.finish_and_clear();
    let kept_path = out.finish()?;
    abort_at("write");
    write_clusters(args, found, records, &ids)?;
    if args.pairs {
        write_pairs(args, found, records, &ids, verify)?;
    }
    Ok((show(args, &ids, &raws, found, records)?, kept_path))
}

/// clusters.jsonl: each cluster's members with their closeness to the
/// representative, in cluster order.
fn write_clusters(args: &DedupArgs, found: &DedupResult, records: &DedupRecords, ids: &Ids) -> Result<()> {
    let id = |i: u32| &ids[&i];
    let mut out = Output::open(Some(&args.output.join("clusters.jsonl")))?;
    for (ci, c) in found.clusters.iter().enumerate() {
        let v = match found.indexed.get(ci).and_then(Option::as_ref) {
            Some(x) => indexed_cluster(ci, c, x, records, ids)?,
            None => {
                // Written as it goes, keys in the order `json!` sorts them
                // (a `Value` per member cost a third of the stage on a
                // corpus of short documents).
                let w = out.writer();
                // Numbered from 1, as the terminal shows them ("cluster 1 of 5").
                write!(w, "{{\"cluster\":{},\"members\":[", ci + 1)?;
                for (k, &i) in c.members.iter().enumerate() {
                    if k > 0 {
                        w.write_all(b",")?;
                    }
                    write_member(w, id(i), records.closeness(c.kept, i)?)?;
                }
                w.write_all(b"],\"representative\":")?;
                serde_json::to_writer(&mut *w, id(c.kept))?;
                writeln!(w, ",\"size\":{}}}", c.members.len())?;
                continue;
            }
        };
        serde_json::to_writer(&mut *out.writer(), &v)?;
        out.writer().write_all(b"\n")?;
    }
    out.finish()?;
    Ok(())
}

/// pairs.jsonl (`--pairs`): every pair that stood.
fn write_pairs(
    args: &DedupArgs,
    found: &DedupResult,
    records: &DedupRecords,
    ids: &Ids,
    verify: Option<neardup::dedup::Threshold>,
) -> Result<()> {
    let id = |i: u32| &ids[&i];
    let mut out = Output::open(Some(&args.output.join("pairs.jsonl")))?;
    for p in &found.pairs {
        let c = records.closeness(p.a, p.b)?;
        let mut v = json!({ "a": id(p.a), "b": id(p.b), c.name(): c.value() });
        if let (Some(j), Some(_)) = (p.score, verify) {
            v["jaccard"] = json!(neardup::similarity::round4(j));
        }
        serde_json::to_writer(&mut *out.writer(), &v)?;
        out.writer().write_all(b"\n")?;
    }
    out.finish()?;
    Ok(())
}

/// The ids of the documents the outputs name, by record number.
struct Ids(Vec<Option<Value>>);

impl std::ops::Index<&u32> for Ids {
    type Output = Value;

    fn index(&self, i: &u32) -> &Value {
        self.0[*i as usize].as_ref().expect("the id of every document an output names is kept")
    }
}

/// A member of a cluster as clusters.jsonl has it: `{"id":…,"similarity":…}`
/// or `{"distance":…,"id":…}` (the keys sorted, as `json!` writes them).
fn write_member(
    w: &mut (impl std::io::Write + ?Sized),
    id: &Value,
    closeness: neardup::dedup::Closeness,
) -> Result<()> {
    use neardup::dedup::Closeness;
    match closeness {
        Closeness::Distance(d) => {
            write!(w, "{{\"distance\":{d},\"id\":")?;
            serde_json::to_writer(&mut *w, id)?;
        }
        Closeness::Similarity(s) => {
            w.write_all(b"{\"id\":")?;
            serde_json::to_writer(&mut *w, id)?;
            w.write_all(b",\"similarity\":")?;
            serde_json::to_writer(&mut *w, &s)?;
        }
    }
    w.write_all(b"}")?;
    Ok(())
}

/// A cluster near an indexed document, as clusters.jsonl has it: the
/// indexed document is the representative (and the first member, marked
/// `"indexed": true`); a new member that matched the index says how near
/// it is to it, the others how near they are to the member that matched
/// (`"to"`).
fn indexed_cluster(
    ci: usize,
    c: &neardup::dedup::Cluster,
    x: &neardup::dedup::IndexMatch,
    records: &DedupRecords,
    ids: &Ids,
) -> Result<Value> {
    let mut members = vec![json!({ "id": x.id, "indexed": true })];
    for &i in &c.members {
        members.push(if i == c.kept {
            json!({ "id": ids[&i], x.closeness.name(): x.closeness.value() })
        } else {
            let near = records.closeness(c.kept, i)?;
            json!({ "id": ids[&i], near.name(): near.value(), "to": ids[&c.kept] })
        });
    }
    Ok(json!({
        "cluster": ci + 1,
        "representative": x.id,
        "indexed": true,
        "size": c.members.len() + 1,
        "members": members,
    }))
}

/// The first `--show` clusters, as lines for a person.
fn show(
    args: &DedupArgs,
    ids: &Ids,
    raws: &HashMap<u32, String>,
    found: &DedupResult,
    records: &DedupRecords,
) -> Result<Vec<String>> {
    let doc = |i: u32| Shown { id: &ids[&i], raw: &raws[&i] };
    let indexed: Vec<Option<Value>> =
        found.indexed.iter().take(args.show).map(|x| x.as_ref().map(|x| json!(x.id))).collect();
    let mut clusters = Vec::new();
    for (ci, c) in found.clusters.iter().take(args.show).enumerate() {
        let mut removed = Vec::new();
        let cluster = match indexed.get(ci).and_then(Option::as_ref) {
            Some(x) => {
                let m = found.indexed[ci].as_ref().expect("indexed");
                removed.push((doc(c.kept), m.closeness.to_string()));
                for &i in c.members.iter().filter(|&&i| i != c.kept) {
                    removed.push((doc(i), records.closeness(c.kept, i)?.to_string()));
                }
                ShownCluster {
                    kept: Shown { id: x, raw: "{}" },
                    indexed: true,
                    removed,
                    size: c.members.len() + 1,
                }
            }
            None => {
                for &i in c.members.iter().filter(|&&i| i != c.kept) {
                    removed.push((doc(i), records.closeness(c.kept, i)?.to_string()));
                }
                ShownCluster { kept: doc(c.kept), indexed: false, removed, size: c.members.len() }
            }
        };
        clusters.push(cluster);
    }
    let field = args.input.text_field.as_deref().unwrap_or("text");
    Ok(cluster_view::lines(&clusters, found.clusters.len(), field))
}

/// Reads the documents in batches, signs each batch in parallel by the
/// detector's empty-document rule and keeps each record's sketch, in input
/// order; bad records go to `errors`. A text identical to an earlier one
/// takes its sketch instead of being signed again (the exact pass, unless
/// --no-exact-pass). With --method exact, each record's exact key instead.
fn read_docs(
    args: &DedupArgs,
    detector: &Detector,
    spill: &Spill,
    errors: &ErrorPolicy,
    stages: &mut Stages,
) -> Result<ReadStage> {
    let exact = (args.method == Some(DedupMethod::Exact))
        .then(|| args.exact.parse::<ExactText>().expect("the parser allows only modes"));
    let mut reading = Reading::new(args, detector, spill, exact.is_some());
    let pb = crate::progress::bar(|| input::total_bytes(&args.input), "reading");
    let t = Instant::now();
    let total = batches(&args.input, errors, &pb, |batch| match exact {
        Some(mode) => reading.hash(batch, mode),
        None => reading.sign(batch, errors),
    })?;
    pb.finish_and_clear();
    // The stage's name says what signing made, as summary.json has it.
    let stage = match (exact, detector.method()) {
        (Some(_), _) => "read and hash",
        (None, Method::Simhash) => "read and fingerprint",
        (None, Method::Minhash) => "read and sign",
    };
    let seconds = t.elapsed().as_secs_f64();
    stages.0.push((stage, seconds));
    let copies = reading.pass.as_ref().map_or(0, ExactPass::copies);
    if copies > 0 {
        note!(
            "neardup: {} repeated an earlier text exactly and took its {} (no signing)",
            count(copies, "document"),
            if detector.method() == Method::Minhash { "signature" } else { "fingerprint" }
        );
    }
    let Reading { docs, records, shingles, bytes_in, .. } = reading;
    Ok(ReadStage { docs, records, shingles, total, bytes_in, skipped: errors.skipped(), seconds })
}

/// The records of a dedup as they are read: their sketches (or exact
/// keys), their fields for kept.jsonl, their verification shingles.
struct Reading<'a> {
    detector: &'a Detector,
    allow_empty: bool,
    /// Whether verification shingles are kept while signing.
    keep_shingles: bool,
    records: DedupRecords,
    docs: DocStore,
    shingles: ShingleColumn,
    /// The exact pass (none with `--no-exact-pass` or `--method exact`).
    pass: Option<ExactPass>,
    bytes_in: u64,
}

impl<'a> Reading<'a> {
    fn new(args: &DedupArgs, detector: &'a Detector, spill: &Spill, exact: bool) -> Reading<'a> {
        let records = match (exact, detector) {
            (true, _) => DedupRecords::Exact(ExactRecords::new()),
            (false, Detector::MinHash(m)) => DedupRecords::Signatures(SignatureRecords::spilling(
                m.permutations(),
                SpillTo { dir: spill.dir.clone(), limit: spill.shares.signatures },
            )),
            (false, d) => d.records(),
        };
        Reading {
            detector,
            allow_empty: args.input.allow_empty,
            keep_shingles: verification(args, Some(detector)).is_some(),
            records,
            docs: DocStore::new(spill.shares.records, &spill.dir, input::total_bytes(&args.input)),
            // What verification compares: each document's shingles, kept
            // while signing (no text is tokenized twice).
            shingles: ShingleColumn::spilling(SpillTo {
                dir: spill.dir.clone(),
                limit: spill.shares.shingles,
            }),
            pass: (!exact && !args.no_exact_pass).then(|| ExactPass::with_memory(spill.shares.exact)),
            bytes_in: 0,
        }
    }

    /// `--method exact`: each record's exact key.
    fn hash(&mut self, batch: &mut Vec<input::Record>, mode: ExactText) -> Result<()> {
        use rayon::prelude::*;
        let DedupRecords::Exact(keys) = &mut self.records else { unreachable!("exact records") };
        let found: Vec<_> = batch
            .par_iter()
            .map(|r| (self.detector.exact_key(&r.text, mode), r.text.chars().count()))
            .collect();
        for (mut r, (key, chars)) in batch.drain(..).zip(found) {
            self.bytes_in += r.raw_len;
            keys.push(key, chars);
            let raw = r.take_json();
            self.docs.push(r.id, raw)?;
        }
        Ok(())
    }

    /// Signs a batch on every core (a record that repeats an earlier text
    /// exactly takes its sketch), and keeps what was made.
    fn sign(&mut self, batch: &mut Vec<input::Record>, errors: &ErrorPolicy) -> Result<()> {
        use rayon::prelude::*;
        let (repeats, keys) = match &self.pass {
            Some(p) => p.repeats(&batch.iter().map(|r| r.text.as_str()).collect::<Vec<_>>()),
            None => (vec![Repeat::No; batch.len()], Vec::new()),
        };
        let (detector, allow_empty, keep_shingles) = (self.detector, self.allow_empty, self.keep_shingles);
        // Lengths are counted by the signing threads too: the loop below
        // runs on one thread while they wait.
        let results: Vec<Option<Signed>> = batch
            .par_iter()
            .zip(&repeats)
            .map(|(r, c)| match c {
                Repeat::No if keep_shingles => {
                    let mut kept = Vec::new();
                    let signed = detector.sign_keeping_shingles(&r.text, allow_empty, &mut kept);
                    Some((signed, r.text.chars().count(), kept))
                }
                Repeat::No => Some((detector.sign(&r.text, allow_empty), r.text.chars().count(), Vec::new())),
                _ => None,
            })
            .collect();
        let mut index_of: Vec<Option<u32>> = vec![None; batch.len()];
        for (i, ((r, res), repeat)) in batch.drain(..).zip(results).zip(repeats).enumerate() {
            let earlier = match repeat {
                Repeat::No => None,
                Repeat::Earlier(at) => Some(Some(at)),
                Repeat::InBatch(j) => Some(index_of[j]),
            };
            index_of[i] = self.push(r, res, earlier, errors)?;
            if let (Some(p), Some(at)) = (self.pass.as_mut(), index_of[i]) {
                p.record(keys[i], at, earlier.is_some());
            }
        }
        abort_at("sign");
        Ok(())
    }

    /// Keeps one record: signed (`res`), or a copy of the record
    /// `earlier` names (`Some(None)`: of one that could not be signed).
    /// Returns its index, or `None` for a bad record.
    fn push(
        &mut self,
        mut r: input::Record,
        res: Option<Signed>,
        earlier: Option<Option<u32>>,
        errors: &ErrorPolicy,
    ) -> Result<Option<u32>> {
        self.bytes_in += r.raw_len;
        let at = self.records.len() as u32;
        let records = &mut self.records;
        let mut kept: Vec<u64> = Vec::new();
        match (res, earlier) {
            (Some((Ok((sketch, features)), chars, hashes)), _) => {
                kept = hashes;
                records.push(sketch.as_ref(), features, chars)?
            }
            (_, Some(Some(first))) => {
                let (sketch, features) = (records.sketch(first)?, records.features(first));
                records.push(sketch.as_ref(), features, records.length(first) as usize)?;
            }
            (Some((Err(e), _, _)), _) => {
                errors.bad(&BadRecord {
                    rest_lost: false,
                    origin: r.origin.clone(),
                    message: e.to_string(),
                })?;
                return Ok(None);
            }
            // A copy of a record that could not be signed.
            (None, _) => {
                let e = self.detector.sign(&r.text, self.allow_empty).err().map(|e| e.to_string());
                let message = e.unwrap_or_else(|| "cannot be signed".into());
                errors.bad(&BadRecord { rest_lost: false, origin: r.origin.clone(), message })?;
                return Ok(None);
            }
        }
        let raw = r.take_json();
        self.docs.push(r.id, raw)?;
        if self.keep_shingles {
            match earlier {
                // An exact copy shares its shingles, and needs no verifying.
                Some(Some(first)) => self.shingles.push_same(first),
                _ => self.shingles.push(&kept)?,
            }
        }
        Ok(Some(at))
    }
}

/// A record signed: its sketch and feature count (or why not), its
/// characters, its verification shingles.
type Signed = (neardup::Result<(Option<neardup::Sketch>, usize)>, usize, Vec<u64>);
