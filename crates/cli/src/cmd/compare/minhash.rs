//! `neardup compare` with a MinHash pipeline: the two signatures'
//! estimated Jaccard similarity, the exact Jaccard of the feature sets,
//! whether they share an LSH band, and the verdict `dedup` would reach
//! (a shared band and an estimate at least the threshold).

use std::collections::BTreeSet;
use std::process::ExitCode;

use anyhow::Result;
use neardup::dedup::LshDedup;
use neardup::minhash::{estimate, MinHasher};
use serde_json::json;

use super::no_features;
use crate::args::CompareArgs;

/// One document as MinHash sees it.
struct Side {
    features: BTreeSet<String>,
    /// The signature's values; `None` without features.
    values: Option<Vec<u32>>,
}

/// What `dedup --method minhash` would say of the pair.
struct Verdict {
    similarity: f64,
    exact: f64,
    shares_band: bool,
    near: bool,
}

pub fn run(args: &CompareArgs, docs: &[(String, String)], m: &MinHasher) -> Result<ExitCode> {
    let mut sides = Vec::new();
    for (name, text) in docs {
        let values = m.signature_counted(text).map(|(s, _)| s.values().to_vec());
        if values.is_none() && !args.allow_empty {
            anyhow::bail!(no_features(name));
        }
        sides.push(Side { features: m.features(text).into_iter().collect(), values });
    }
    let v = verdict(m, docs, &sides);
    if args.json {
        print_json(args, m, docs, &sides, &v)?;
    } else {
        print_text(args, m, docs, &sides, &v);
    }
    Ok(ExitCode::SUCCESS)
}

/// What `LshDedup` decides of the pair; a document without features is
/// never a near duplicate.
fn verdict(m: &MinHasher, docs: &[(String, String)], sides: &[Side]) -> Verdict {
    let exact = m.exact_jaccard(&docs[0].1, &docs[1].1);
    match (&sides[0].values, &sides[1].values) {
        (Some(a), Some(b)) => Verdict {
            similarity: estimate(a, b),
            exact,
            shares_band: m.banding().shares_band(a, b),
            near: LshDedup::of(m).links(a, b),
        },
        _ => Verdict { similarity: 0.0, exact, shares_band: false, near: false },
    }
}

/// Features of `a` not in `b`, at most `top`.
fn only<'a>(a: &'a BTreeSet<String>, b: &'a BTreeSet<String>, top: usize) -> Vec<&'a str> {
    a.difference(b).take(top).map(String::as_str).collect()
}

fn print_json(
    args: &CompareArgs,
    m: &MinHasher,
    docs: &[(String, String)],
    sides: &[Side],
    v: &Verdict,
) -> Result<()> {
    let banding = m.banding();
    let mut out = json!({
        "method": "minhash",
        "a": { "source": docs[0].0, "features": sides[0].features.len() },
        "b": { "source": docs[1].0, "features": sides[1].features.len() },
        "permutations": m.permutations(),
        "similarity": v.similarity,
        "exact_jaccard": v.exact,
        "threshold": m.threshold(),
        "bands": banding.bands,
        "rows": banding.rows,
        "shares_band": v.shares_band,
        "near_duplicate": v.near,
    });
    if args.explain {
        let (a, b) = (&sides[0].features, &sides[1].features);
        out["explain"] = json!({
            "shared": a.intersection(b).count(),
            "only_a": only(a, b, args.top),
            "only_b": only(b, a, args.top),
        });
    }
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(())
}

fn print_text(args: &CompareArgs, m: &MinHasher, docs: &[(String, String)], sides: &[Side], v: &Verdict) {
    let t = m.threshold();
    let rule = if args.threshold.is_some() { "--threshold" } else { "the pipeline's threshold" };
    println!("a           {} features  {}", sides[0].features.len(), docs[0].0);
    println!("b           {} features  {}", sides[1].features.len(), docs[1].0);
    println!("similarity  {:.4} (estimated from {} values)", v.similarity, m.permutations());
    println!("jaccard     {:.4} (exact, of the feature sets)", v.exact);
    let band = if v.shares_band { "share a band" } else { "share no band" };
    let banding = m.banding();
    if v.near {
        println!(
            "verdict     near duplicates (estimate {:.4} ≥ {t}: {rule}; they {band} of {banding})",
            v.similarity
        );
    } else if v.similarity >= t {
        println!("verdict     different (estimate {:.4} ≥ {t}, but they {band} of {banding}, so dedup never compares them)", v.similarity);
    } else {
        println!("verdict     different (estimate {:.4} < {t}: {rule})", v.similarity);
    }
    if args.explain {
        let (a, b) = (&sides[0].features, &sides[1].features);
        println!();
        println!("features shared: {}", a.intersection(b).count());
        println!("only in a (first {}): {}", args.top, only(a, b, args.top).join(" | "));
        println!("only in b (first {}): {}", args.top, only(b, a, args.top).join(" | "));
    }
}
