//! `neardup compare`: two documents, their distance, and why (SimHash;
//! MinHash pipelines in `minhash`).

mod minhash;

use std::process::ExitCode;

use anyhow::Result;
use neardup::detector::Detector;
use neardup::{Explanation, Radius};
use serde_json::json;

use crate::args::CompareArgs;
use crate::input::read_document;
use crate::UsageError;

pub fn run(args: CompareArgs) -> Result<ExitCode> {
    let docs = read_two(&args)?;
    let detector = args.pipeline.detector(args.method, args.k, args.threshold)?;
    if !args.json {
        println!("method      {}", detector.describe());
    }
    let fingerprinter = match detector {
        Detector::SimHash(f) => f,
        Detector::MinHash(m) => return minhash::run(&args, &docs, &m),
    };
    let ex: Vec<Explanation> = docs.iter().map(|(_, t)| fingerprinter.explain(t)).collect();
    for ((name, _), e) in docs.iter().zip(&ex) {
        if e.features.is_empty() && !args.allow_empty {
            anyhow::bail!(no_features(name));
        }
    }
    // The rule `dedup` clusters by: the pipeline's radius for these two
    // lengths, unless --k fixes it.
    let radius = args.k.map_or_else(|| fingerprinter.radius().clone(), Radius::fixed);
    let verdict = Verdict::of(&ex, radius);
    if args.json {
        print_json(&args, &docs, &ex, &verdict)?;
    } else {
        print_text(&args, &docs, &ex, &verdict);
    }
    Ok(ExitCode::SUCCESS)
}

/// The two documents to compare, as (source, text): files first, then `--text`s.
pub(super) fn read_two(args: &CompareArgs) -> Result<Vec<(String, String)>> {
    let mut docs: Vec<(String, String)> = Vec::new();
    for f in &args.files {
        match read_document(f, args.max_doc_bytes.0, args.allow_empty) {
            Ok(r) => docs.push((r.origin, r.text)),
            Err(b) => anyhow::bail!("{}: {}", b.origin, b.message),
        }
    }
    for (i, t) in args.text.iter().enumerate() {
        docs.push((format!("--text #{}", i + 1), t.clone()));
    }
    if docs.len() != 2 {
        return Err(UsageError(format!(
            "compare needs exactly two documents (files or --text), got {}; \
             e.g. `neardup compare a.txt b.txt` or `neardup compare --text A --text B`",
            docs.len()
        ))
        .into());
    }
    Ok(docs)
}

/// The error for a document without features (unless --allow-empty).
pub(super) fn no_features(name: &str) -> String {
    format!(
        "{name}: document has no features (empty, blank, or only punctuation/stop words), so any two \
         such documents look identical; pass --allow-empty to compare anyway"
    )
}

/// The distance between the two fingerprints and what the radius rule says of it.
struct Verdict {
    distance: u32,
    counts: [usize; 2],
    radius: Radius,
    k: u32,
    near: bool,
}

impl Verdict {
    fn of(ex: &[Explanation], radius: Radius) -> Verdict {
        let distance = ex[0].fingerprint.distance(ex[1].fingerprint);
        let counts = [ex[0].feature_count, ex[1].feature_count];
        let k = radius.k_for_pair(counts[0], counts[1]);
        let near = radius.accepts(distance, counts[0], counts[1]);
        Verdict { distance, counts, radius, k, near }
    }
}

fn print_json(args: &CompareArgs, docs: &[(String, String)], ex: &[Explanation], v: &Verdict) -> Result<()> {
    let (a, b) = (ex[0].fingerprint, ex[1].fingerprint);
    let mut out = json!({
        "method": "simhash",
        "a": { "source": docs[0].0, "fingerprint": a },
        "b": { "source": docs[1].0, "fingerprint": b },
        "bits": a.bits().get(),
        "distance": v.distance,
        "similarity": a.similarity(b),
        "estimated_cosine": a.estimated_cosine(b),
        "k": v.k,
        "radius": v.radius,
        "features": v.counts,
        "near_duplicate": v.near,
    });
    if args.explain {
        out["explain"] = json!([explain_json(&ex[0], args.top), explain_json(&ex[1], args.top)]);
        out["feature_changes"] = json!(ex[0].changes(&ex[1]).into_iter().take(args.top).collect::<Vec<_>>());
    }
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(())
}

fn print_text(args: &CompareArgs, docs: &[(String, String)], ex: &[Explanation], v: &Verdict) {
    let (a, b) = (ex[0].fingerprint, ex[1].fingerprint);
    let (d, k, f) = (v.distance, v.k, a.bits().get());
    let rule = if args.k.is_some() {
        "--k".to_owned()
    } else if v.radius.is_fixed() {
        "the pipeline's radius".to_owned()
    } else {
        format!("the pipeline's radius, {}, for {} and {} features", v.radius, v.counts[0], v.counts[1])
    };
    println!("a           {a}  {}", docs[0].0);
    println!("b           {b}  {}", docs[1].0);
    println!("distance    {d} of {f} bits");
    println!("similarity  {:.4}", a.similarity(b));
    println!("cosine      {:.4} (estimated)", a.estimated_cosine(b));
    if v.near {
        println!("verdict     near duplicates (distance {d} ≤ k = {k}: {rule})");
    } else {
        println!("verdict     different (distance {d} > k = {k}: {rule})");
    }
    if args.explain {
        println!();
        print_changes(&ex[0], &ex[1], args.top);
        for (i, ((name, _), e)) in docs.iter().zip(ex).enumerate() {
            println!();
            print_fragile(if i == 0 { "a" } else { "b" }, name, e, args.top);
        }
        let diff: Vec<String> = (0..f).filter(|&j| a.bit(j) != b.bit(j)).map(|j| j.to_string()).collect();
        println!();
        println!("bits that differ: {}", if diff.is_empty() { "none".into() } else { diff.join(" ") });
    }
}

fn top_features(e: &Explanation, top: usize) -> Vec<&neardup::FeatureVote> {
    let mut f: Vec<_> = e.features.iter().collect();
    f.sort_by(|x, y| y.weight.abs().total_cmp(&x.weight.abs()));
    f.truncate(top);
    f
}

/// Bits sorted by how close they came to flipping.
fn fragile_bits(e: &Explanation, top: usize) -> Vec<usize> {
    let mut bits: Vec<usize> = (0..e.lanes.len()).collect();
    bits.sort_by(|&x, &y| e.margin(x).total_cmp(&e.margin(y)));
    bits.truncate(top);
    bits
}

/// What differs between the two: the features whose weights differ most.
fn print_changes(a: &Explanation, b: &Explanation, top: usize) {
    let changes = a.changes(b);
    if changes.is_empty() {
        println!("features: the same in both, with the same weights");
        return;
    }
    let shown = changes.len().min(top);
    println!("features that differ most ({shown} of {}; weight in a, in b):", changes.len());
    for c in &changes[..shown] {
        let side = match (c.weight_a == 0.0, c.weight_b == 0.0) {
            (true, _) => "only in b",
            (_, true) => "only in a",
            _ => "",
        };
        println!("  {:>10.4}  {:>10.4}  {:<9}  {}", c.weight_a, c.weight_b, side, c.feature);
    }
}

fn print_fragile(label: &str, name: &str, e: &Explanation, top: usize) {
    println!(
        "{label}: {} features voted ({name}); bits closest to flipping (lane sum, share of total weight):",
        e.features.len()
    );
    for j in fragile_bits(e, top) {
        println!(
            "  bit {j:>3} = {}  {:>+12.4}  {:.4}",
            u8::from(e.fingerprint.bit(j as u32)),
            e.lanes[j],
            e.margin(j)
        );
    }
}

fn explain_json(e: &Explanation, top: usize) -> serde_json::Value {
    let bits: Vec<_> = fragile_bits(e, top)
        .into_iter()
        .map(|j| json!({"bit": j, "value": e.fingerprint.bit(j as u32), "lane": e.lanes[j], "margin": e.margin(j)}))
        .collect();
    json!({
        "fingerprint": e.fingerprint,
        "features_voted": e.features.len(),
        "top_features": top_features(e, top),
        "total_weight": e.total_weight,
        "closest_bits": bits,
    })
}
