//! `neardup eval`: precision, recall and F1 per k on labelled pairs.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use neardup::quality::{Counts, Curve, DistanceHistogram, LengthBucket};
use neardup::similarity::FeatureSet;
use neardup::Fingerprinter;
use neardup::Radius;
use rayon::prelude::*;
use serde::Deserialize;
use serde_json::{json, Value};

use super::plot;
use crate::args::EvalArgs;
use crate::output::Output;
use crate::UsageError;

/// One labelled pair.
pub struct Labelled {
    pub text_a: String,
    pub text_b: String,
    pub duplicate: bool,
    /// The kind of edit (`combo:…` folded to `combo`), or `unknown`.
    pub edit: String,
    /// Which input file it came from (index into the file list).
    pub file: usize,
    pub bucket: LengthBucket,
}

#[derive(Deserialize)]
struct Line {
    text_a: String,
    text_b: String,
    label: Option<serde_json::Value>,
    #[serde(default)]
    edit: Option<String>,
}

/// Reads labelled pairs; undecided labels (-1 or null) are skipped and counted.
pub fn read_pairs(paths: &[PathBuf]) -> Result<(Vec<Labelled>, u64)> {
    let mut out = Vec::new();
    let mut undecided = 0u64;
    for (file, path) in paths.iter().enumerate() {
        let bytes = std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))?;
        for (no, line) in bytes.split(|&b| b == b'\n').enumerate() {
            let at = || format!("{}:{}", path.display(), no + 1);
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let line = std::str::from_utf8(line).map_err(|e| {
                anyhow::anyhow!("{}: not UTF-8 (byte {}); pairs must be UTF-8 JSONL", at(), e.valid_up_to())
            })?;
            let l: Line = serde_json::from_str(line).map_err(|e| {
                anyhow::anyhow!(
                    "{}: {e}; each line must be a JSON object with text_a, text_b and label",
                    at()
                )
            })?;
            let duplicate = match &l.label {
                Some(Value::Number(n)) if n.as_i64() == Some(1) => true,
                Some(Value::Number(n)) if n.as_i64() == Some(0) => false,
                Some(Value::Bool(b)) => *b,
                Some(Value::Number(n)) if n.as_i64() == Some(-1) => {
                    undecided += 1;
                    continue;
                }
                None | Some(Value::Null) => {
                    undecided += 1;
                    continue;
                }
                Some(v) => {
                    anyhow::bail!("{}: label {v} is not 1 (near duplicate), 0 (not) or -1 (undecided)", at())
                }
            };
            let edit = l.edit.as_deref().unwrap_or("unknown");
            let edit = edit.split(':').next().unwrap_or(edit).to_owned();
            let bucket = LengthBucket::of(l.text_a.chars().count());
            out.push(Labelled { text_a: l.text_a, text_b: l.text_b, duplicate, edit, file, bucket });
        }
    }
    if out.is_empty() {
        anyhow::bail!(
            "{}: no labelled pairs (lines with text_a, text_b and label 0 or 1)",
            paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
        );
    }
    Ok((out, undecided))
}

/// One configuration under evaluation.
pub struct Subject {
    pub name: String,
    pub preset: Option<String>,
    pub fingerprinter: Fingerprinter,
    /// The preset's recommended radius (fixed, or by length).
    pub radius: Radius,
}

/// A pair's outcome under one configuration.
#[derive(Clone, Copy)]
pub struct Scored {
    pub distance: u32,
    /// The features (with repeats) of both documents.
    pub features: (usize, usize),
    pub verified: bool,
}

/// Fingerprints both texts of every pair (and measures Jaccard with `verify`).
pub fn score(fingerprinter: &Fingerprinter, pairs: &[Labelled], verify: Option<f64>) -> Vec<Scored> {
    pairs
        .par_iter()
        .map(|p| {
            let (a, na) = fingerprinter.fingerprint_counted(&p.text_a);
            let (b, nb) = fingerprinter.fingerprint_counted(&p.text_b);
            let (distance, features) = (a.distance(b), (na, nb));
            let verified = verify.is_none_or(|t| {
                FeatureSet::shingles(fingerprinter, &p.text_a, 3).jaccard(&FeatureSet::shingles(
                    fingerprinter,
                    &p.text_b,
                    3,
                )) >= t
            });
            Scored { distance, features, verified }
        })
        .collect()
}

/// The curves of one configuration: overall and per group.
pub struct Report {
    pub overall: Curve,
    /// The counts at the radius reported on (the recommended one or --k).
    pub at_radius: Counts,
    /// The counts at the configuration's recommended radius.
    pub recommended: Counts,
    /// (dimension, group) → curve and counts at the radius, e.g. ("edit", "html").
    pub groups: BTreeMap<(&'static str, String), (Curve, Counts)>,
    pub histogram: DistanceHistogram,
}

pub fn report(
    pairs: &[Labelled],
    scored: &[Scored],
    files: &[PathBuf],
    bits: u32,
    max_k: u32,
    radius: &Radius,
    recommended: &Radius,
) -> Report {
    let triple = |i: usize| (scored[i].distance, pairs[i].duplicate, scored[i].verified);
    let outcome = |radius: &Radius, i: usize| {
        let s = scored[i];
        (s.verified && s.distance <= radius.k_for_pair(s.features.0, s.features.1), pairs[i].duplicate)
    };
    let overall = Curve::new((0..pairs.len()).map(triple), max_k);
    let at_radius = Counts::tally((0..pairs.len()).map(|i| outcome(radius, i)));
    let recommended = Counts::tally((0..pairs.len()).map(|i| outcome(recommended, i)));
    let mut members: BTreeMap<(&'static str, String), Vec<usize>> = BTreeMap::new();
    for (i, p) in pairs.iter().enumerate() {
        members.entry(("edit", p.edit.clone())).or_default().push(i);
        members.entry(("length", p.bucket.name().to_owned())).or_default().push(i);
        if files.len() > 1 {
            members.entry(("file", files[p.file].display().to_string())).or_default().push(i);
        }
    }
    let groups = members
        .into_iter()
        .map(|(key, idx)| {
            let c = Counts::tally(idx.iter().map(|&i| outcome(radius, i)));
            (key, (Curve::new(idx.into_iter().map(triple), max_k), c))
        })
        .collect();
    let histogram =
        DistanceHistogram::new(pairs.iter().zip(scored).map(|(p, s)| (s.distance, p.duplicate)), bits);
    Report { overall, at_radius, recommended, groups, histogram }
}

fn metrics(c: &Counts) -> Value {
    json!({
        "precision": round(c.precision()),
        "recall": round(c.recall()),
        "f1": round(c.f1()),
        "tp": c.tp, "fp": c.fp, "fn": c.fn_, "tn": c.tn,
    })
}

fn round(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

fn curve_json(c: &Curve) -> Value {
    Value::Array(
        c.points()
            .iter()
            .enumerate()
            .map(|(k, p)| {
                json!({"k": k, "precision": round(p.precision()), "recall": round(p.recall()), "f1": round(p.f1())})
            })
            .collect(),
    )
}

fn subject_json(s: &Subject, r: &Report, radius: &Radius, verify: Option<f64>) -> Value {
    let o = &r.overall;
    let best = o.best_k();
    let mut groups = serde_json::Map::new();
    for ((dim, name), (c, at)) in &r.groups {
        let by = groups.entry(format!("by_{dim}")).or_insert_with(|| json!({}));
        by[name] = json!({
            "pairs": c.at(0).positives() + c.at(0).negatives(),
            "duplicates": c.at(0).positives(),
            "at_k": metrics(at),
            "best_k": c.best_k(),
            "at_best_k": metrics(&c.at(c.best_k())),
            "curve": curve_json(c),
        });
    }
    let mut v = json!({
        "name": s.name,
        "preset": s.preset,
        "config": s.fingerprinter.config(),
        "bits": s.fingerprinter.bits().get(),
        "verify": verify.map(|t| format!("jaccard:{t}")),
        "pairs": o.at(0).positives() + o.at(0).negatives(),
        "duplicates": o.at(0).positives(),
        "recommended_k": s.radius.max_k(),
        "recommended_radius": radius_json(&s.radius),
        "at_recommended_k": metrics(&r.recommended),
        "k": radius_json(radius),
        "at_k": metrics(&r.at_radius),
        "best_k": best,
        "at_best_k": metrics(&o.at(best)),
        "curve": curve_json(o),
        "histogram": r.histogram,
    });
    v.as_object_mut().expect("object").extend(groups);
    v
}

/// A radius as JSON: a number when fixed, else its steps.
pub fn radius_json(r: &Radius) -> Value {
    if r.is_fixed() {
        return json!(r.max_k());
    }
    let (steps, rest) = r.steps();
    json!({
        "below_features": steps.iter().map(|s| json!({"features": s.0, "k": s.1})).collect::<Vec<_>>(),
        "else": rest,
    })
}

fn print_subject(
    w: &mut dyn Write,
    s: &Subject,
    r: &Report,
    radius: &Radius,
    verify: Option<f64>,
) -> Result<()> {
    let o = &r.overall;
    let best = o.best_k();
    let line = |c: Counts| format!("P {:.3}  R {:.3}  F1 {:.3}", c.precision(), c.recall(), c.f1());
    writeln!(
        w,
        "== {}  ({} bits{}; {} pairs: {} near duplicates, {} others)",
        s.name,
        s.fingerprinter.bits(),
        verify.map(|t| format!(", verified by Jaccard ≥ {t}")).unwrap_or_default(),
        o.at(0).positives() + o.at(0).negatives(),
        o.at(0).positives(),
        o.at(0).negatives(),
    )?;
    writeln!(w, "recommended  {}   {}", line(r.recommended), s.radius)?;
    if *radius != s.radius {
        writeln!(w, "chosen       {}   {radius}", line(r.at_radius))?;
    }
    writeln!(w, "best fixed   {}   k = {best}", line(o.at(best)))?;
    writeln!(w)?;
    writeln!(w, "  k  precision  recall     F1      tp      fp      fn")?;
    for (i, c) in o.points().iter().enumerate() {
        let mark = match (radius.is_fixed() && i as u32 == radius.max_k(), i as u32 == best) {
            (true, true) => " <- k, best",
            (true, false) => " <- k",
            (false, true) => " <- best",
            _ => "",
        };
        writeln!(
            w,
            "{i:>3}  {:>9.3}  {:>6.3}  {:>5.3}  {:>6}  {:>6}  {:>6}{mark}",
            c.precision(),
            c.recall(),
            c.f1(),
            c.tp,
            c.fp,
            c.fn_
        )?;
    }
    let mut last_dim = "";
    let at = if radius.is_fixed() { format!("k={:<2}", radius.max_k()) } else { "radius".to_owned() };
    for ((dim, name), (c, a)) in &r.groups {
        if *dim != last_dim {
            writeln!(w)?;
            writeln!(w, "  by {dim:<24} pairs   dups |  {at} P      R      F1 |  best k  P      R      F1")?;
            last_dim = dim;
        }
        let (a, bk) = (*a, c.best_k());
        let b = c.at(bk);
        let f = |x: f64, n: u64| if n == 0 { "    - ".to_owned() } else { format!("{x:>6.3}") };
        writeln!(
            w,
            "  {:<27} {:>5}  {:>5} |       {} {} {} |  {:>6}  {} {} {}",
            truncate(name, 27),
            a.positives() + a.negatives(),
            a.positives(),
            f(a.precision(), a.tp + a.fp),
            f(a.recall(), a.positives()),
            f(a.f1(), a.positives()),
            bk,
            f(b.precision(), b.tp + b.fp),
            f(b.recall(), b.positives()),
            f(b.f1(), b.positives()),
        )?;
    }
    writeln!(w)?;
    Ok(())
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_owned()
    } else {
        let tail: String = s.chars().rev().take(n - 1).collect::<Vec<_>>().into_iter().rev().collect();
        format!("…{tail}")
    }
}

/// The configurations named by the flags, `default` when none.
fn subjects(args: &EvalArgs) -> Result<Vec<Subject>> {
    let mut out = Vec::new();
    let mut presets_wanted = args.presets.clone();
    if presets_wanted.is_empty() && args.configs.is_empty() {
        presets_wanted.push("default".into());
    }
    for name in presets_wanted {
        let fingerprinter = Fingerprinter::preset(&name).map_err(|e| UsageError(e.to_string()))?;
        let radius = fingerprinter.radius().clone();
        out.push(Subject { name: name.clone(), preset: Some(name), fingerprinter, radius });
    }
    for path in &args.configs {
        let fingerprinter = Fingerprinter::from_file(path).map_err(|e| UsageError(e.to_string()))?;
        let radius = fingerprinter.radius().clone();
        out.push(Subject { name: path.display().to_string(), preset: None, fingerprinter, radius });
    }
    Ok(out)
}

pub fn run(args: EvalArgs) -> Result<ExitCode> {
    let subjects = subjects(&args)?;
    if let Some(dir) = &args.plot {
        // Checked before the work, not after it.
        plot::prepare_dir(dir)?;
    }
    let (pairs, undecided) = read_pairs(&args.pairs)?;
    if undecided > 0 {
        eprintln!("neardup: skipped {undecided} pairs labelled undecided (-1 or null)");
    }
    let mut out = Output::open(None)?;
    let mut results = Vec::new();
    let mut all_scored = Vec::new();
    let mut reports = Vec::new();
    for s in &subjects {
        let bits = s.fingerprinter.bits().get();
        let max_k = args.max_k.unwrap_or(bits / 4).min(bits);
        let radius = args.k.map_or_else(|| s.radius.clone(), Radius::fixed);
        let pb = crate::progress::stage(&format!("evaluating {}", s.name));
        let scored = score(&s.fingerprinter, &pairs, args.verify.map(|v| v.threshold));
        let r = report(&pairs, &scored, &args.pairs, bits, max_k, &radius, &s.radius);
        pb.finish_and_clear();
        print_subject(out.writer(), s, &r, &radius, args.verify.map(|v| v.threshold))?;
        results.push(subject_json(s, &r, &radius, args.verify.map(|v| v.threshold)));
        all_scored.push(scored);
        reports.push((r, radius));
    }
    out.finish()?;
    if let Some(path) = &args.json {
        write_json(path, &Value::Array(results))?;
    }
    if let Some(dir) = &args.plot {
        let inputs: Vec<_> = subjects
            .iter()
            .zip(&reports)
            .map(|(s, (r, radius))| plot::PlotInput {
                name: &s.name,
                curve: &r.overall,
                histogram: &r.histogram,
                radius: radius_marks(radius),
                best_k: r.overall.best_k(),
            })
            .collect();
        let files = plot::write_all(dir, &inputs)?;
        eprintln!("neardup: wrote {} plots to {}", files.len(), dir.display());
    }
    if let Some(path) = &args.dump {
        let mut o = Output::open(Some(path))?;
        for (s, scored) in subjects.iter().zip(&all_scored) {
            for (p, x) in pairs.iter().zip(scored) {
                let line = json!({"config": s.name, "edit": p.edit, "label": u8::from(p.duplicate),
                    "distance": x.distance, "features_a": x.features.0, "features_b": x.features.1, "verified": x.verified,
                    "length": p.bucket.name()});
                writeln!(o.writer(), "{line}")?;
            }
        }
        o.finish()?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The lines a plot draws for a radius: one per length step.
fn radius_marks(r: &Radius) -> Vec<(u32, String)> {
    if r.is_fixed() {
        return vec![(r.max_k(), format!("radius k = {}", r.max_k()))];
    }
    let (steps, rest) = r.steps();
    let mut marks: Vec<_> =
        steps.iter().map(|&(n, k)| (k, format!("radius k = {k} (below {n} features)"))).collect();
    marks.push((rest, format!("radius k = {rest} (longer documents)")));
    marks
}

fn write_json(path: &Path, v: &Value) -> Result<()> {
    let mut o = Output::open(Some(path))?;
    serde_json::to_writer_pretty(o.writer(), v).with_context(|| path.display().to_string())?;
    writeln!(o.writer())?;
    o.finish()
}
