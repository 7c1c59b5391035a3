//! [`Dedup::batch`]: all pairs by the plan, verified, clustered.

use rayon::prelude::*;

use super::{make_clusters, timed, Dedup, DedupResult, Pair, Plan, Records, Verifier};
use crate::error::Result;
use crate::index::cluster::UnionFind;
use crate::index::pairs::{AllPairs, LinkRule, PairsOptions};
use crate::radius::Pass;

pub(super) fn run(d: &Dedup<'_>, records: &Records) -> Result<DedupResult> {
    if d.verifier.is_none() && !d.pairs {
        return linked(d, records);
    }
    let plan = Plan::new(d.radius);
    let mut timings = Vec::new();
    let n = records.len();
    // Pass 0: every record at the smallest radius; identical fingerprints
    // are collapsed into groups.
    let ap = timed(&mut timings, "find pairs", || records.words().all_pairs(plan.passes()[0].k, d.layout))?;
    let layout = ap.layout.map(|l| l.to_string()).unwrap_or_default();
    // Later passes: the records short enough for a larger radius, and of
    // their pairs only those whose own radius is that pass's.
    let extra =
        timed(&mut timings, "find pairs of short documents", || later_passes(&plan, records, d.layout))?;
    let mut uf = UnionFind::new(n);
    let mut pairs: Vec<Pair> = Vec::new();
    let pair = |(a, b, distance): (u32, u32, u32)| Pair { a, b, distance, score: None };
    match d.verifier {
        None => timed(&mut timings, "cluster", || {
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
            if d.pairs {
                ap.for_each_pair(|i, j, dist| pairs.push(pair((i, j, dist))));
                pairs.extend(extra.iter().copied().map(pair));
            }
            Ok(())
        })?,
        Some(v) => {
            let verified = timed(&mut timings, "verify", || Ok(verify(v, &ap, &extra)))?;
            timed(&mut timings, "cluster", || {
                for p in &verified {
                    uf.union(p.a, p.b);
                }
                Ok(())
            })?;
            if d.pairs {
                pairs = verified;
            }
        }
    }
    let clusters = make_clusters(uf, d.keep, false, |i| records.length(i));
    Ok(DedupResult { clusters, pairs, layout, timings, indexed: Vec::new() })
}

/// The batch without pairs to collect or verify: pass 0's pairs go
/// straight into union-find a few buckets at a time (never all held: on
/// near-duplicate-heavy data they are hundreds of millions), then the
/// later passes' accepted pairs. The same clusters as [`run`]'s other path.
fn linked(d: &Dedup<'_>, records: &Records) -> Result<DedupResult> {
    let plan = Plan::new(d.radius);
    let mut timings = Vec::new();
    let mut uf = UnionFind::new(records.len());
    let spec = timed(&mut timings, "find pairs", || {
        records.words().linked(plan.passes()[0].k, d.layout, None, &mut |a, b| {
            uf.union(a, b);
        })
    })?;
    let layout = spec.map(|l| l.to_string()).unwrap_or_default();
    if plan.radius().shrinks_with_length() {
        // Later passes linked too: a pair is linked when the radius takes
        // it, whichever pass finds it (a pair within a smaller radius is
        // joined already), judged on each group's shortest member.
        let radius = plan.radius();
        let length = |i: u32| records.features(i).min(u32::MAX as usize) as u32;
        let accepts = |d: u32, a: u32, b: u32| radius.accepts(d, a as usize, b as usize);
        timed(&mut timings, "find pairs of short documents", || {
            for pass in plan.passes().iter().skip(1) {
                let subset = pass_subset(pass, records);
                let length = |j: u32| length(subset[j as usize]);
                let rule = LinkRule { length: &length, accepts: &accepts };
                records.words().subset(&subset).linked(pass.k, d.layout, Some(&rule), &mut |a, b| {
                    uf.union(subset[a as usize], subset[b as usize]);
                })?;
            }
            Ok(())
        })?;
    } else {
        let extra =
            timed(&mut timings, "find pairs of short documents", || later_passes(&plan, records, d.layout))?;
        timed(&mut timings, "cluster", || {
            for &(a, b, _) in &extra {
                uf.union(a, b);
            }
            Ok(())
        })?;
    }
    let clusters = make_clusters(uf, d.keep, false, |i| records.length(i));
    Ok(DedupResult { clusters, pairs: Vec::new(), layout, timings, indexed: Vec::new() })
}

/// The passes after the first: the records short enough for a larger
/// radius, and of their pairs only those whose own radius is that pass's.
fn later_passes(plan: &Plan, records: &Records, layout: PairsOptions) -> Result<Vec<(u32, u32, u32)>> {
    let mut extra: Vec<(u32, u32, u32)> = Vec::new();
    for (p, pass) in plan.passes().iter().enumerate().skip(1) {
        let subset = pass_subset(pass, records);
        let found = records.words().subset(&subset).all_pairs(pass.k, layout)?;
        found.for_each_pair(|i, j, dist| {
            let (a, b) = (subset[i as usize], subset[j as usize]);
            if plan.accepts(p, dist, records.features(a), records.features(b)) {
                extra.push((a, b, dist));
            }
        });
    }
    Ok(extra)
}

/// The records that take part in a later pass: those short enough for it.
fn pass_subset(pass: &Pass, records: &Records) -> Vec<u32> {
    (0..records.len() as u32).filter(|&i| pass.includes(records.features(i))).collect()
}

/// The candidate pairs the verifier accepts: every pair of records the
/// passes found, identical fingerprints included; the verifier prepares only
/// the records named.
fn verify(v: &dyn Verifier, ap: &AllPairs, extra: &[(u32, u32, u32)]) -> Vec<Pair> {
    let mut candidates: Vec<(u32, u32, u32)> = Vec::new();
    ap.for_each_pair(|i, j, dist| candidates.push((i, j, dist)));
    candidates.extend_from_slice(extra);
    let mut involved: Vec<u32> = candidates.iter().flat_map(|p| [p.0, p.1]).collect();
    involved.par_sort_unstable();
    involved.dedup();
    v.prepare(&involved);
    let t = v.threshold();
    candidates
        .par_iter()
        .filter_map(|&(a, b, distance)| {
            let s = v.score(a, b);
            (s >= t).then_some(Pair { a, b, distance, score: Some(s) })
        })
        .collect()
}
