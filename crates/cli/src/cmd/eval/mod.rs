//! `neardup eval`: precision, recall and F1 on labelled pairs, per radius k
//! (SimHash, `simhash.rs`) or per Jaccard threshold (MinHash, `minhash.rs`).

mod minhash;
mod simhash;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use neardup::detector::Detector;
use neardup::minhash::Method;
use neardup::near::Near;
use neardup::quality::{Counts, LengthBucket};
use neardup::similarity::round4;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::args::EvalArgs;
use crate::output::Output;
use crate::plot::{self, PlotInput};
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
    pub detector: Detector,
}

/// What evaluating one configuration gives besides its printed table.
pub struct Evaluated<'a> {
    /// Its results as JSON (--json).
    pub json: Value,
    /// Its plots (--plot).
    pub plot: PlotInput<'a>,
    /// One JSON object per pair (--dump).
    pub dump: Vec<Value>,
}

/// The pairs (by position) of each group: by edit, by length, and by
/// file when there are several.
pub fn groups_of(pairs: &[Labelled], files: &[PathBuf]) -> BTreeMap<(&'static str, String), Vec<usize>> {
    let mut members: BTreeMap<(&'static str, String), Vec<usize>> = BTreeMap::new();
    for (i, p) in pairs.iter().enumerate() {
        members.entry(("edit", p.edit.clone())).or_default().push(i);
        members.entry(("length", p.bucket.name().to_owned())).or_default().push(i);
        if files.len() > 1 {
            members.entry(("file", files[p.file].display().to_string())).or_default().push(i);
        }
    }
    members
}

fn metrics(c: &Counts) -> Value {
    json!({
        "precision": round4(c.precision()),
        "recall": round4(c.recall()),
        "f1": round4(c.f1()),
        "tp": c.tp, "fp": c.fp, "fn": c.fn_, "tn": c.tn,
    })
}

/// Prints the per-group table: each group's pairs, its counts at the rule
/// in use (`at`, e.g. `k=8` or `t=0.5`) and at its own best point (`best`
/// names the column: `best k`, `best t`), a block per dimension.
pub fn print_groups<'a>(
    w: &mut dyn std::io::Write,
    at: &str,
    best: &str,
    rows: impl Iterator<Item = (&'a (&'static str, String), Counts, String, Counts)>,
) -> Result<()> {
    let mut last_dim = "";
    for ((dim, name), a, best_at, b) in rows {
        if *dim != last_dim {
            writeln!(w)?;
            writeln!(w, "  by {dim:<24} pairs   dups |  {at} P      R      F1 |  {best}  P      R      F1")?;
            last_dim = dim;
        }
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
            best_at,
            f(b.precision(), b.tp + b.fp),
            f(b.recall(), b.positives()),
            f(b.f1(), b.positives()),
        )?;
    }
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

/// The configurations named by the flags: when none, the preset `dedup`
/// would run (of --method, or the method --k/--max-k or --threshold
/// implies, else `neardup::presets::DEFAULT_METHOD`'s); each must be of
/// --method when it is given.
fn subjects(args: &EvalArgs) -> Result<Vec<Subject>> {
    // --max-k, as --k, asks for SimHash.
    let asked = Near::of(args.k.or(args.max_k), args.threshold).map_err(|e| UsageError(e.to_string()))?;
    let mut out = Vec::new();
    let mut presets_wanted = args.presets.clone();
    if presets_wanted.is_empty() && args.configs.is_empty() {
        let method = args.method.or(asked.method()).unwrap_or(neardup::presets::DEFAULT_METHOD);
        presets_wanted.push(neardup::presets::of_method(method).into());
    }
    let load = |d: neardup::Result<Detector>| {
        d.and_then(|d| d.with_method(args.method, None)).map_err(|e| UsageError(e.to_string()))
    };
    for name in presets_wanted {
        let detector = load(Detector::preset(&name))?;
        out.push(Subject { name: name.clone(), preset: Some(name), detector });
    }
    for path in &args.configs {
        let detector = load(Detector::from_file(path))?;
        out.push(Subject { name: path.display().to_string(), preset: None, detector });
    }
    for s in &out {
        let method = s.detector.method();
        if let Err(e) = asked.check(method) {
            let why = match (asked, method) {
                (Near::Within(_), Method::Minhash) => {
                    "--k and --max-k are for SimHash pipelines; a MinHash pipeline takes --threshold"
                        .to_string()
                }
                (Near::AtLeast(_), Method::Simhash) => {
                    "--threshold is for MinHash pipelines; a SimHash pipeline takes --k".to_string()
                }
                _ => e.to_string(),
            };
            return Err(UsageError(format!("{}: {why}", s.name)).into());
        }
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
        note!("neardup: skipped {undecided} pairs labelled undecided (-1 or null)");
    }
    let mut out = Output::open(None)?;
    let mut done = Vec::new();
    for s in &subjects {
        done.push(match &s.detector {
            Detector::SimHash(f) => simhash::evaluate(out.writer(), s, f, &pairs, &args)?,
            Detector::MinHash(m) => minhash::evaluate(out.writer(), s, m, &pairs, &args)?,
        });
    }
    out.finish()?;
    if let Some(path) = &args.json {
        write_json(path, &Value::Array(done.iter().map(|e| e.json.clone()).collect()))?;
    }
    if let Some(dir) = &args.plot {
        let inputs: Vec<_> = done.iter().map(|e| &e.plot).collect();
        let files = plot::write_all(dir, &inputs)?;
        note!("neardup: wrote {} plots to {}", files.len(), dir.display());
    }
    if let Some(path) = &args.dump {
        let mut o = Output::open(Some(path))?;
        for line in done.iter().flat_map(|e| &e.dump) {
            writeln!(o.writer(), "{line}")?;
        }
        o.finish()?;
    }
    Ok(ExitCode::SUCCESS)
}

fn write_json(path: &Path, v: &Value) -> Result<()> {
    let mut o = Output::open(Some(path))?;
    serde_json::to_writer_pretty(o.writer(), v).with_context(|| path.display().to_string())?;
    writeln!(o.writer())?;
    o.finish()
}
