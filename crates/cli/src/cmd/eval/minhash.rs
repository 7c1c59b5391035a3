//! `neardup eval` for MinHash pipelines: precision, recall and F1 per
//! Jaccard threshold.
//!
//! A pair counts as found at threshold `t` exactly when `neardup dedup
//! --threshold t` would link it: its signatures share a band of the banding
//! chosen for `t` (or the configuration's fixed banding), its estimated
//! similarity is at least `t`, and with --verify its shingle Jaccard passes.

use std::collections::BTreeMap;
use std::io::Write;

use anyhow::Result;
use neardup::minhash::Method;
use neardup::minhash::{Banding, LshConfig, MinHasher, Signature};
use neardup::quality::{Counts, DistanceHistogram, ThresholdCurve};
use neardup::similarity::round4;
use rayon::prelude::*;
use serde_json::{json, Value};

use super::{groups_of, metrics, print_groups, Evaluated, Labelled, Subject};
use crate::args::EvalArgs;
use crate::plot::{Axis, PlotInput};

/// Similarity histogram bins (of width 0.02).
const BINS: u32 = 50;

/// A pair's outcome under one pipeline.
struct Scored {
    /// Both signatures; `None` when a text has no features (never found).
    signatures: Option<(Signature, Signature)>,
    /// The estimated Jaccard similarity (0 without signatures).
    similarity: f64,
    verified: bool,
}

impl Scored {
    fn found(&self, banding: &Banding, threshold: f64) -> bool {
        self.verified
            && self.similarity >= threshold
            && self.signatures.as_ref().is_some_and(|(a, b)| banding.shares_band(a.values(), b.values()))
    }
}

fn score(minhasher: &MinHasher, pairs: &[Labelled], verify: Option<f64>) -> Vec<Scored> {
    pairs
        .par_iter()
        .map(|p| {
            let signatures =
                minhasher.signature_counted(&p.text_a).zip(minhasher.signature_counted(&p.text_b));
            let signatures = signatures.map(|((a, _), (b, _))| (a, b));
            let similarity = signatures.as_ref().map_or(0.0, |(a, b)| a.jaccard(b));
            let verified = verify.is_none_or(|t| minhasher.shingle_jaccard(&p.text_a, &p.text_b) >= t);
            Scored { signatures, similarity, verified }
        })
        .collect()
}

/// The banding `dedup --threshold t` uses with this pipeline.
fn banding_at(minhasher: &MinHasher, threshold: f64) -> Result<Banding> {
    let lsh = LshConfig { threshold, ..minhasher.lsh().clone() };
    lsh.banding(minhasher.permutations()).map_err(|e| crate::UsageError(e).into())
}

/// The curves of one pipeline: overall, at the reported and recommended
/// thresholds, and per group.
struct Report {
    curve: ThresholdCurve,
    /// Bandings along the curve, by threshold.
    bandings: BTreeMap<u64, Banding>,
    at_threshold: Counts,
    recommended: Counts,
    groups: BTreeMap<(&'static str, String), (ThresholdCurve, Counts)>,
    histogram: DistanceHistogram,
}

fn report(
    minhasher: &MinHasher,
    pairs: &[Labelled],
    scored: &[Scored],
    args: &EvalArgs,
    threshold: f64,
) -> Result<Report> {
    let grid = ThresholdCurve::grid();
    let bandings: Vec<Banding> =
        grid.par_iter().map(|&t| banding_at(minhasher, t)).collect::<Result<Vec<_>>>()?;
    // found[i][g]: pair i found at grid threshold g.
    let found: Vec<Vec<bool>> = scored
        .par_iter()
        .map(|s| grid.iter().zip(&bandings).map(|(&t, b)| s.found(b, t)).collect())
        .collect();
    let curve_of = |idx: &[usize]| {
        ThresholdCurve::new(
            grid.iter()
                .enumerate()
                .map(|(g, &t)| (t, Counts::tally(idx.iter().map(|&i| (found[i][g], pairs[i].duplicate)))))
                .collect(),
        )
    };
    let at = |t: f64, b: &Banding, idx: &[usize]| {
        Counts::tally(idx.iter().map(|&i| (scored[i].found(b, t), pairs[i].duplicate)))
    };
    let (chosen, recommended) =
        (banding_at(minhasher, threshold)?, banding_at(minhasher, minhasher.threshold())?);
    let all: Vec<usize> = (0..pairs.len()).collect();
    let groups = groups_of(pairs, &args.pairs)
        .into_iter()
        .map(|(key, idx)| (key, (curve_of(&idx), at(threshold, &chosen, &idx))))
        .collect();
    let histogram = DistanceHistogram::of_similarity(
        pairs.iter().zip(scored).map(|(p, s)| (s.similarity, p.duplicate)),
        BINS,
    );
    Ok(Report {
        curve: curve_of(&all),
        bandings: grid.iter().zip(bandings).map(|(t, b)| (t.to_bits(), b)).collect(),
        at_threshold: at(threshold, &chosen, &all),
        recommended: at(minhasher.threshold(), &recommended, &all),
        groups,
        histogram,
    })
}

/// Evaluates a MinHash pipeline: prints its table to `w` and returns its
/// JSON, plot and per-pair outcomes.
pub fn evaluate<'a>(
    w: &mut dyn Write,
    s: &'a Subject,
    minhasher: &MinHasher,
    pairs: &[Labelled],
    args: &EvalArgs,
) -> Result<Evaluated<'a>> {
    let threshold = args.threshold.unwrap_or(minhasher.threshold());
    let verify = args.verify.map_or(Method::Minhash.default_verify(), |v| v.threshold()).map(|t| t.get());
    let pb = crate::progress::stage(&format!("evaluating {}", s.name));
    let scored = score(minhasher, pairs, verify);
    let r = report(minhasher, pairs, &scored, args, threshold)?;
    pb.finish_and_clear();
    print_subject(w, s, minhasher, &r, threshold, verify)?;
    let json = subject_json(s, minhasher, &r, threshold, verify)?;
    let banding = banding_at(minhasher, threshold)?;
    let dump = pairs
        .iter()
        .zip(&scored)
        .map(|(p, x)| {
            json!({"config": s.name, "method": "minhash", "edit": p.edit, "label": u8::from(p.duplicate),
                "similarity": round4(x.similarity), "found": x.found(&banding, threshold),
                "verified": x.verified, "length": p.bucket.name()})
        })
        .collect();
    let mut marks = vec![(minhasher.threshold(), format!("threshold {}", minhasher.threshold()))];
    if threshold != minhasher.threshold() {
        marks.push((threshold, format!("chosen threshold {threshold}")));
    }
    let plot = PlotInput {
        name: &s.name,
        axis: Axis::Threshold { bins: BINS },
        points: r.curve.points().to_vec(),
        histogram: r.histogram.clone(),
        marks,
        best: r.curve.best(),
    };
    Ok(Evaluated { json, plot, dump })
}

fn curve_json(c: &ThresholdCurve, bandings: &BTreeMap<u64, Banding>) -> Value {
    Value::Array(
        c.points()
            .iter()
            .map(|(t, p)| {
                let b = bandings[&t.to_bits()];
                json!({"threshold": t, "bands": b.bands, "rows": b.rows,
                    "precision": round4(p.precision()), "recall": round4(p.recall()), "f1": round4(p.f1())})
            })
            .collect(),
    )
}

fn subject_json(
    s: &Subject,
    minhasher: &MinHasher,
    r: &Report,
    threshold: f64,
    verify: Option<f64>,
) -> Result<Value> {
    let (best, at_best) = r.curve.best();
    let banding = |t: f64| -> Result<Value> {
        let b = banding_at(minhasher, t)?;
        Ok(json!({"bands": b.bands, "rows": b.rows}))
    };
    let mut groups = serde_json::Map::new();
    for ((dim, name), (c, at)) in &r.groups {
        let by = groups.entry(format!("by_{dim}")).or_insert_with(|| json!({}));
        let (gbest, gat) = c.best();
        by[name] = json!({
            "pairs": at.positives() + at.negatives(),
            "duplicates": at.positives(),
            "at_threshold": metrics(at),
            "best_threshold": gbest,
            "at_best_threshold": metrics(&gat),
            "curve": curve_json(c, &r.bandings),
        });
    }
    let o = r.at_threshold;
    let mut v = json!({
        "name": s.name,
        "preset": s.preset,
        "config": minhasher.config(),
        "method": "minhash",
        "permutations": minhasher.permutations(),
        "verify": verify.map(|t| format!("jaccard:{t}")),
        "pairs": o.positives() + o.negatives(),
        "duplicates": o.positives(),
        "recommended_threshold": minhasher.threshold(),
        "recommended_banding": banding(minhasher.threshold())?,
        "at_recommended": metrics(&r.recommended),
        "threshold": threshold,
        "banding": banding(threshold)?,
        "at_threshold": metrics(&o),
        "best_threshold": best,
        "best_banding": banding(best)?,
        "at_best_threshold": metrics(&at_best),
        "curve": curve_json(&r.curve, &r.bandings),
        "histogram": { "bins": BINS, "duplicates": r.histogram.duplicates, "others": r.histogram.others },
    });
    v.as_object_mut().expect("object").extend(groups);
    Ok(v)
}

fn print_subject(
    w: &mut dyn Write,
    s: &Subject,
    minhasher: &MinHasher,
    r: &Report,
    threshold: f64,
    verify: Option<f64>,
) -> Result<()> {
    let line = |c: Counts| format!("P {:.3}  R {:.3}  F1 {:.3}", c.precision(), c.recall(), c.f1());
    let o = r.at_threshold;
    let (best, at_best) = r.curve.best();
    writeln!(
        w,
        "== {}  (MinHash, {} values{}; {} pairs: {} near duplicates, {} others)",
        s.name,
        minhasher.permutations(),
        verify.map(|t| format!(", verified by Jaccard ≥ {t}")).unwrap_or_default(),
        o.positives() + o.negatives(),
        o.positives(),
        o.negatives(),
    )?;
    let rule = |t: f64| -> Result<String> { Ok(format!("Jaccard ≥ {t} ({})", banding_at(minhasher, t)?)) };
    writeln!(w, "recommended  {}   {}", line(r.recommended), rule(minhasher.threshold())?)?;
    if threshold != minhasher.threshold() {
        writeln!(w, "chosen       {}   {}", line(o), rule(threshold)?)?;
    }
    writeln!(w, "best         {}   {}", line(at_best), rule(best)?)?;
    writeln!(w)?;
    writeln!(w, "  threshold  banding     precision  recall     F1      tp      fp      fn")?;
    for &(t, c) in r.curve.points() {
        let on_grid = ((t * 100.0).round() as u32).is_multiple_of(5);
        let mark = match (t == threshold, t == best) {
            (true, true) => " <- threshold, best",
            (true, false) => " <- threshold",
            (false, true) => " <- best",
            _ => "",
        };
        if !on_grid && mark.is_empty() {
            continue;
        }
        let b = r.bandings[&t.to_bits()];
        writeln!(
            w,
            "  {t:>9.2}  {:>3} × {:<3}  {:>9.3}  {:>6.3}  {:>5.3}  {:>6}  {:>6}  {:>6}{mark}",
            b.bands,
            b.rows,
            c.precision(),
            c.recall(),
            c.f1(),
            c.tp,
            c.fp,
            c.fn_
        )?;
    }
    let rows = r.groups.iter().map(|(key, (c, a))| (key, *a, format!("{:.2}", c.best().0), c.best().1));
    print_groups(w, &format!("t={threshold:<4}"), "best t", rows)?;
    writeln!(w)?;
    Ok(())
}
