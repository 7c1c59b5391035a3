//! Justified clusters: a document is removed only when it is near a
//! document that is kept.
//!
//! The candidate pairs a batch finds (LSH bands, SimHash tables) join
//! documents into connected components, and components chain: A ~ B and
//! B ~ C put C beside A although C may be nothing like A. So a component
//! is only a candidate. [`split`] walks each component's members in keep
//! order (the [`Keep`] policy's order: input order, or longest or shortest
//! first) and keeps a member as a new *centre* unless it is near a centre
//! already kept — by the method's rule ([`Rule`]) and, with a
//! [`Verifier`], verified. A removed member joins the nearest such centre
//! (ties: the centre kept first). Each centre with removed members is one
//! [`Cluster`](super::Cluster), whose `kept` is the centre: every removal
//! is justified by the cluster's kept document.
//!
//! Because the rule's near pairs are exactly pairs the batch links, no
//! document is near a document of another component: the split of each
//! component alone is the greedy over the whole corpus in keep order
//! (what the property tests check against a brute-force scan). A member
//! is compared only with the centres its method's own index finds (a
//! linear scan while a component has few centres, then the bands or the
//! permuted tables), never with every member. Verification sets are made
//! per component and dropped with it.

use std::collections::HashMap;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::verify::Verifier;
use super::{Cluster, Keep};
use crate::error::Result;
use crate::index::cluster::UnionFind;
use crate::similarity::FeatureSet;

/// How a batch turns candidate components into clusters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClusterMode {
    /// Every removed document is near (verified, when verification is on)
    /// the document kept for it: components are split greedily in keep
    /// order (the default).
    #[default]
    Justified,
    /// Whole connected components: one document kept per component, the
    /// rest removed even when only a chain of neighbours joins them to it
    /// (neardup 0.x's behaviour).
    Components,
}

impl std::str::FromStr for ClusterMode {
    type Err = crate::Error;

    fn from_str(s: &str) -> Result<ClusterMode> {
        match s {
            "justified" => Ok(ClusterMode::Justified),
            "components" => Ok(ClusterMode::Components),
            _ => Err(crate::Error::Config(format!("clusters must be justified or components, not {s:?}"))),
        }
    }
}

impl std::fmt::Display for ClusterMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ClusterMode::Justified => "justified",
            ClusterMode::Components => "components",
        })
    }
}

/// Centres a component keeps before the split looks them up in an index
/// instead of scanning them.
pub(super) const SCANNED_CENTRES: usize = 48;

/// Members of a component from which the split makes all their
/// verification sets at once, in parallel.
const PARALLEL_SETS: usize = 256;

/// A method's near-duplicate rule as the split sees it.
pub(super) trait Rule: Sync {
    /// What a member is compared by (its fingerprint, its signature).
    type Member: Send;
    /// A component's centres so far, searchable by the rule.
    type Centres: Send;

    /// Member `i`, read from the records.
    fn load(&self, i: u32) -> Result<Self::Member>;

    /// No centres yet, for a component of `members` documents.
    fn centres(&self, members: usize) -> Result<Self::Centres>;

    /// The centres near `x` by the rule, before verification, as their
    /// positions in the order they were added, nearest first (ties: the
    /// earlier position), into `out`.
    fn near(&self, centres: &Self::Centres, x: &Self::Member, out: &mut Vec<u32>) -> Result<()>;

    /// Adds `x` as the next centre.
    fn add(&self, centres: &mut Self::Centres, x: Self::Member) -> Result<()>;
}

/// The members of a component in `keep`'s order: input order, or longest
/// (shortest) first with ties in input order. `members` is ascending.
pub(crate) fn keep_order(members: &mut [u32], keep: Keep, length: impl Fn(u32) -> u64) {
    match keep {
        Keep::First => {}
        Keep::Longest => members.sort_by_key(|&i| (std::cmp::Reverse(length(i)), i)),
        Keep::Shortest => members.sort_by_key(|&i| (length(i), i)),
    }
}

/// Records already removed elsewhere (near an indexed document): never
/// kept, never a centre, in no cluster of the split.
pub type Aside<'a> = &'a (dyn Fn(u32) -> bool + Sync);

/// Splits the components of `uf` into justified clusters (see the
/// [module](self) documentation), every component on its own thread;
/// records `aside` are left out. Clusters are ordered by their first
/// member, members ascending.
pub(super) fn split<R: Rule>(
    rule: &R,
    mut uf: UnionFind,
    keep: Keep,
    length: impl Fn(u32) -> u64 + Sync,
    verifier: Option<&dyn Verifier>,
    aside: Option<Aside<'_>>,
) -> Result<Vec<Cluster>> {
    let components = uf.clusters();
    drop(uf);
    let split: Vec<Vec<Cluster>> = components
        .into_par_iter()
        .map(|mut members| {
            if let Some(aside) = aside {
                members.retain(|&m| !aside(m));
            }
            keep_order(&mut members, keep, &length);
            component(rule, &members, verifier)
        })
        .collect::<Result<_>>()?;
    let mut clusters: Vec<Cluster> = split.into_iter().flatten().collect();
    clusters.sort_unstable_by_key(|c| c.members[0]);
    Ok(clusters)
}

/// The justified split of records shuffled into groups — how a
/// distributed job (the Spark job) splits the components it found:
/// `groups[i]` names record `i`'s component, the records of a component
/// are adjacent and in keep order. Returns, for each record, the record it
/// is removed for, or itself when it is kept. Groups are split in
/// parallel.
pub(super) fn owners<R: Rule>(
    rule: &R,
    records: usize,
    groups: &[i64],
    verifier: Option<&dyn Verifier>,
) -> Result<Vec<u32>> {
    if groups.len() != records {
        return Err(crate::Error::Config(format!("{} groups for {records} records", groups.len())));
    }
    let split: Vec<Vec<Cluster>> = group_runs(groups)
        .into_par_iter()
        .map(|run| component(rule, &(run.start as u32..run.end as u32).collect::<Vec<u32>>(), verifier))
        .collect::<Result<_>>()?;
    let mut owner: Vec<u32> = (0..groups.len() as u32).collect();
    for c in split.iter().flatten() {
        for &m in &c.members {
            owner[m as usize] = c.kept;
        }
    }
    Ok(owner)
}

/// The runs of equal adjacent names in `groups`, as ranges of positions:
/// how a shuffled partition holds its groups.
pub(super) fn group_runs(groups: &[i64]) -> Vec<std::ops::Range<usize>> {
    let mut start = 0;
    groups
        .chunk_by(|a, b| a == b)
        .map(|run| {
            let range = start..start + run.len();
            start = range.end;
            range
        })
        .collect()
}

/// The clusters of one component whose members are given in keep order.
pub(super) fn component<R: Rule>(
    rule: &R,
    order: &[u32],
    verifier: Option<&dyn Verifier>,
) -> Result<Vec<Cluster>> {
    let mut centres = rule.centres(order.len())?;
    // Per centre: its id and the members removed for it.
    let mut kept: Vec<(u32, Vec<u32>)> = Vec::new();
    // A large component's sets are made up front on every core (a chain
    // can join a tenth of a corpus into one component, which the greedy
    // then walks on one thread); a small one's as the walk needs them.
    let mut sets: HashMap<u32, FeatureSet> = match verifier {
        Some(v) if order.len() >= PARALLEL_SETS => {
            order.par_iter().map(|&d| Ok((d, v.set(d)?))).collect::<Result<_>>()?
        }
        _ => HashMap::new(),
    };
    let mut near = Vec::new();
    for &x in order {
        let member = rule.load(x)?;
        near.clear();
        rule.near(&centres, &member, &mut near)?;
        let mut owner = None;
        for &at in &near {
            let stands = match verifier {
                None => true,
                Some(v) => {
                    let c = kept[at as usize].0;
                    if v.same(x, c) {
                        true
                    } else {
                        for d in [x, c] {
                            if let std::collections::hash_map::Entry::Vacant(e) = sets.entry(d) {
                                e.insert(v.set(d)?);
                            }
                        }
                        v.score(&sets[&x], &sets[&c]) >= v.threshold()
                    }
                }
            };
            if stands {
                owner = Some(at);
                break;
            }
        }
        match owner {
            Some(at) => kept[at as usize].1.push(x),
            None => {
                rule.add(&mut centres, member)?;
                kept.push((x, Vec::new()));
            }
        }
    }
    Ok(kept
        .into_iter()
        .filter(|(_, removed)| !removed.is_empty())
        .map(|(centre, mut members)| {
            members.push(centre);
            members.sort_unstable();
            Cluster { kept: centre, members }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_modes_parse_and_print() {
        for m in [ClusterMode::Justified, ClusterMode::Components] {
            assert_eq!(m.to_string().parse::<ClusterMode>().unwrap(), m);
        }
        assert!("chains".parse::<ClusterMode>().unwrap_err().to_string().contains("justified or components"));
    }

    #[test]
    fn keep_order_puts_the_kept_member_first() {
        let len = |i: u32| [5u64, 9, 9, 1][i as usize];
        let mut m = vec![0, 1, 2, 3];
        keep_order(&mut m, Keep::Longest, len);
        assert_eq!(m, [1, 2, 0, 3]);
        keep_order(&mut m, Keep::Shortest, len);
        assert_eq!(m, [3, 0, 1, 2]);
        let mut m = vec![0, 1, 2, 3];
        keep_order(&mut m, Keep::First, len);
        assert_eq!(m, [0, 1, 2, 3]);
    }
}
