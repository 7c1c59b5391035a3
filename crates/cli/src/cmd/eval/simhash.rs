//! `neardup eval` for SimHash pipelines: precision, recall and F1 per radius k.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use neardup::minhash::Method;
use neardup::quality::{Counts, Curve, DistanceHistogram};
use neardup::similarity::round4;
use neardup::similarity::FeatureSet;
use neardup::{Fingerprinter, Radius};
use rayon::prelude::*;
use serde_json::{json, Value};

use super::{groups_of, metrics, print_groups, Evaluated, Labelled, Subject};
use crate::args::EvalArgs;
use crate::plot::{Axis, PlotInput};

/// Evaluates a SimHash pipeline: prints its table to `w` and returns its
/// JSON, plot and per-pair outcomes.
pub fn evaluate<'a>(
    w: &mut dyn Write,
    s: &'a Subject,
    fingerprinter: &Fingerprinter,
    pairs: &[Labelled],
    args: &EvalArgs,
) -> Result<Evaluated<'a>> {
    let bits = fingerprinter.bits().get();
    let max_k = args.max_k.unwrap_or(bits / 4).min(bits);
    let recommended = fingerprinter.radius();
    let radius = args.k.map_or_else(|| recommended.clone(), Radius::fixed);
    let verify = args.verify.map_or(Method::Simhash.default_verify(), |v| v.threshold()).map(|t| t.get());
    let pb = crate::progress::stage(&format!("evaluating {}", s.name));
    let scored = score(fingerprinter, pairs, verify);
    let r = report(pairs, &scored, &args.pairs, bits, max_k, &radius, recommended);
    pb.finish_and_clear();
    print_subject(w, s, fingerprinter, &r, &radius, verify)?;
    let json = subject_json(s, fingerprinter, &r, &radius, verify);
    let dump = pairs
        .iter()
        .zip(&scored)
        .map(|(p, x)| {
            json!({"config": s.name, "method": "simhash", "edit": p.edit, "label": u8::from(p.duplicate),
                "distance": x.distance, "features_a": x.features.0, "features_b": x.features.1,
                "verified": x.verified, "length": p.bucket.name()})
        })
        .collect();
    let best = r.overall.best_k();
    let plot = PlotInput {
        name: &s.name,
        axis: Axis::Radius { max_k, bits },
        points: r.overall.points().iter().enumerate().map(|(k, c)| (k as f64, *c)).collect(),
        histogram: r.histogram.clone(),
        marks: radius_marks(&radius),
        best: (f64::from(best), r.overall.at(best)),
    };
    Ok(Evaluated { json, plot, dump })
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
    let groups = groups_of(pairs, files)
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

fn curve_json(c: &Curve) -> Value {
    Value::Array(
        c.points()
            .iter()
            .enumerate()
            .map(|(k, p)| {
                json!({"k": k, "precision": round4(p.precision()), "recall": round4(p.recall()), "f1": round4(p.f1())})
            })
            .collect(),
    )
}

fn subject_json(
    s: &Subject,
    fingerprinter: &Fingerprinter,
    r: &Report,
    radius: &Radius,
    verify: Option<f64>,
) -> Value {
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
        "config": fingerprinter.config(),
        "bits": fingerprinter.bits().get(),
        "verify": verify.map(|t| format!("jaccard:{t}")),
        "pairs": o.at(0).positives() + o.at(0).negatives(),
        "duplicates": o.at(0).positives(),
        "method": "simhash",
        "recommended_k": fingerprinter.radius().max_k(),
        "recommended_radius": fingerprinter.radius().to_json(),
        "at_recommended_k": metrics(&r.recommended),
        "at_recommended": metrics(&r.recommended),
        "k": radius.to_json(),
        "at_k": metrics(&r.at_radius),
        "best_k": best,
        "at_best_k": metrics(&o.at(best)),
        "curve": curve_json(o),
        "histogram": r.histogram,
    });
    v.as_object_mut().expect("object").extend(groups);
    v
}

fn print_subject(
    w: &mut dyn Write,
    s: &Subject,
    fingerprinter: &Fingerprinter,
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
        fingerprinter.bits(),
        verify.map(|t| format!(", verified by Jaccard ≥ {t}")).unwrap_or_default(),
        o.at(0).positives() + o.at(0).negatives(),
        o.at(0).positives(),
        o.at(0).negatives(),
    )?;
    writeln!(w, "recommended  {}   {}", line(r.recommended), fingerprinter.radius())?;
    if radius != fingerprinter.radius() {
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
    let at = if radius.is_fixed() { format!("k={:<2}", radius.max_k()) } else { "radius".to_owned() };
    let rows = r.groups.iter().map(|(key, (c, a))| (key, *a, c.best_k().to_string(), c.at(c.best_k())));
    print_groups(w, &at, "best k", rows)?;
    writeln!(w)?;
    Ok(())
}

/// The lines a plot draws for a radius: one per length step.
fn radius_marks(r: &Radius) -> Vec<(f64, String)> {
    if r.is_fixed() {
        return vec![(f64::from(r.max_k()), format!("radius k = {}", r.max_k()))];
    }
    let (steps, rest) = r.steps();
    let mut marks: Vec<_> =
        steps.iter().map(|&(n, k)| (f64::from(k), format!("radius k = {k} (below {n} features)"))).collect();
    marks.push((f64::from(rest), format!("radius k = {rest} (longer documents)")));
    marks
}
