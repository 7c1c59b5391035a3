//! [`Dedup::batch`]: all pairs by the plan, verified, clustered — as
//! justified clusters ([`split`](super::split)) unless whole components
//! are asked for.

use rayon::prelude::*;

use super::split::{self, ClusterMode, Rule, SCANNED_CENTRES};
use super::verify::SetCache;
use super::{make_clusters, timed, Dedup, DedupResult, Pair, Plan, Records, Verifier};
use crate::error::Result;
use crate::fingerprint::Fingerprint;
use crate::index::cluster::UnionFind;
use crate::index::pairs::{AllPairs, LinkRule, PairsOptions};
use crate::index::{HammingIndex, TableIndex};
use crate::radius::{Pass, Radius};

pub(super) fn run(d: &Dedup<'_>, records: &Records) -> Result<DedupResult> {
    let mut timings = Vec::new();
    let justified = d.clusters == ClusterMode::Justified;
    // Justified clusters verify each link they keep, not every pair: the
    // components are then found unverified.
    let (uf, pairs, layout) = if !d.pairs && (justified || d.verifier.is_none()) {
        let (uf, layout) = linked(d, records, &mut timings)?;
        (uf, Vec::new(), layout)
    } else {
        listed(d, records, &mut timings)?
    };
    let clusters = if justified {
        let rule = FingerprintRule { records, radius: d.radius, layout: d.layout };
        timed(&mut timings, "split components", || {
            split::split(&rule, uf, d.keep, |i| records.length(i), d.verifier, d.aside)
        })?
    } else {
        make_clusters(uf, d.keep, false, |i| records.length(i))
    };
    Ok(DedupResult { clusters, pairs, layout, timings, indexed: Vec::new() })
}

impl Dedup<'_> {
    /// The justified split of records shuffled into groups, as a
    /// distributed job has them after finding components: `groups[i]`
    /// names record `i`'s component; a component's records are adjacent
    /// and in keep order (input order, or longest or shortest first, ties
    /// in input order). Returns, for each record, the record it is
    /// removed for (near it by the radius and, with a verifier, verified),
    /// or itself when it is kept — what [`batch`](Self::batch) decides for
    /// the same component.
    ///
    /// # Errors
    ///
    /// A radius beyond the width, `groups` not one per record, or an
    /// impossible layout.
    pub fn split_groups(&self, records: &Records, groups: &[i64]) -> Result<Vec<u32>> {
        self.radius.validate(records.bits()).map_err(crate::Error::Config)?;
        let rule = FingerprintRule { records, radius: self.radius, layout: self.layout };
        split::owners(&rule, records.len(), groups, self.verifier)
    }
}

/// Every pair of the passes, verified if asked, into union-find; the
/// pairs kept when asked for.
fn listed(
    d: &Dedup<'_>,
    records: &Records,
    timings: &mut Vec<(&'static str, f64)>,
) -> Result<(UnionFind, Vec<Pair>, String)> {
    let plan = Plan::new(d.radius);
    let n = records.len();
    // Pass 0: every record at the smallest radius; identical fingerprints
    // are collapsed into groups.
    let ap = timed(timings, "find pairs", || records.words().all_pairs(plan.passes()[0].k, d.layout))?;
    let layout = ap.layout.map(|l| l.to_string()).unwrap_or_default();
    // Later passes: the records short enough for a larger radius, and of
    // their pairs only those whose own radius is that pass's.
    let extra = timed(timings, "find pairs of short documents", || later_passes(&plan, records, d.layout))?;
    let mut uf = UnionFind::new(n);
    let mut pairs: Vec<Pair> = Vec::new();
    let pair = |(a, b, distance): (u32, u32, u32)| Pair { a, b, distance, score: None };
    match d.verifier {
        None => timed(timings, "cluster", || {
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
            let verified = timed(timings, "verify", || verify(v, n, &ap, &extra))?;
            timed(timings, "cluster", || {
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
    Ok((uf, pairs, layout))
}

/// The batch without pairs to collect or verify: pass 0's pairs go
/// straight into union-find a few buckets at a time (never all held: on
/// near-duplicate-heavy data they are hundreds of millions), then the
/// later passes' accepted pairs. The same clusters as [`run`]'s other path.
fn linked(
    d: &Dedup<'_>,
    records: &Records,
    timings: &mut Vec<(&'static str, f64)>,
) -> Result<(UnionFind, String)> {
    let plan = Plan::new(d.radius);
    let mut uf = UnionFind::new(records.len());
    let spec = timed(timings, "find pairs", || {
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
        timed(timings, "find pairs of short documents", || {
            for pass in plan.passes().iter().skip(1) {
                let subset = pass_subset(pass, records);
                let length = |j: u32| length(subset[j as usize]);
                let rule = LinkRule { length: &length, accepts: &accepts, always: radius.min_k() };
                records.words().subset(&subset).linked(pass.k, d.layout, Some(&rule), &mut |a, b| {
                    uf.union(subset[a as usize], subset[b as usize]);
                })?;
            }
            Ok(())
        })?;
    } else {
        let extra =
            timed(timings, "find pairs of short documents", || later_passes(&plan, records, d.layout))?;
        timed(timings, "cluster", || {
            for &(a, b, _) in &extra {
                uf.union(a, b);
            }
            Ok(())
        })?;
    }
    Ok((uf, layout))
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
/// passes found, identical fingerprints included; the verifier's sets are
/// made only for the records named.
fn verify(v: &dyn Verifier, n: usize, ap: &AllPairs, extra: &[(u32, u32, u32)]) -> Result<Vec<Pair>> {
    let mut candidates: Vec<(u32, u32, u32)> = Vec::new();
    ap.for_each_pair(|i, j, dist| candidates.push((i, j, dist)));
    candidates.extend_from_slice(extra);
    let mut involved: Vec<u32> = candidates.iter().flat_map(|p| [p.0, p.1]).collect();
    involved.par_sort_unstable();
    involved.dedup();
    let sets = SetCache::new(v, n);
    sets.prepare(&involved)?;
    let scored: Vec<Option<Pair>> = candidates
        .par_iter()
        .map(|&(a, b, distance)| Ok(sets.stands(a, b)?.map(|s| Pair { a, b, distance, score: Some(s) })))
        .collect::<Result<_>>()?;
    Ok(scored.into_iter().flatten().collect())
}

/// SimHash's rule for the split: within the radius for the pair's
/// feature counts. Centres are scanned while few, then looked up in
/// permuted tables at the radius's largest k.
pub(super) struct FingerprintRule<'a> {
    pub(super) records: &'a Records,
    pub(super) radius: &'a Radius,
    pub(super) layout: PairsOptions,
}

/// A component's centres: fingerprint and feature count, by position.
pub(super) struct FingerprintCentres {
    fps: Vec<(Fingerprint, usize)>,
    index: Option<TableIndex>,
    /// The component's size (the index's expected length).
    members: usize,
}

impl Rule for FingerprintRule<'_> {
    type Member = (Fingerprint, usize);
    type Centres = FingerprintCentres;

    fn load(&self, i: u32) -> Result<(Fingerprint, usize)> {
        Ok((self.records.fingerprint(i), self.records.features(i)))
    }

    fn centres(&self, members: usize) -> Result<FingerprintCentres> {
        Ok(FingerprintCentres { fps: Vec::new(), index: None, members })
    }

    fn near(&self, c: &FingerprintCentres, x: &(Fingerprint, usize), out: &mut Vec<u32>) -> Result<()> {
        let mut found: Vec<(u32, u32)> = Vec::new();
        match &c.index {
            Some(index) => {
                for m in index.query(x.0, self.radius.max_k())? {
                    let (_, features) = c.fps[m.id as usize];
                    if self.radius.accepts(m.distance, x.1, features) {
                        found.push((m.distance, m.id as u32));
                    }
                }
            }
            None => {
                for (at, &(fp, features)) in c.fps.iter().enumerate() {
                    let distance = x.0.distance(fp);
                    if self.radius.accepts(distance, x.1, features) {
                        found.push((distance, at as u32));
                    }
                }
            }
        }
        found.sort_unstable();
        out.extend(found.into_iter().map(|(_, at)| at));
        Ok(())
    }

    fn add(&self, c: &mut FingerprintCentres, x: (Fingerprint, usize)) -> Result<()> {
        let at = c.fps.len() as u64;
        c.fps.push(x);
        match &mut c.index {
            Some(index) => index.insert(at, x.0)?,
            None if c.fps.len() > SCANNED_CENTRES => {
                let mut builder = TableIndex::builder()
                    .bits(self.records.bits())
                    .k(self.radius.max_k())
                    .expected_len(c.members)
                    .memory(self.layout.memory);
                if let Some(m) = self.layout.blocks {
                    builder = builder.blocks(m);
                }
                let entries = c.fps.iter().enumerate().map(|(i, &(fp, _))| (i as u64, fp));
                c.index = Some(builder.build_from(entries)?);
            }
            None => {}
        }
        Ok(())
    }
}
