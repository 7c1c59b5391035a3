//! [`Dedup::online`]: each record kept unless near one kept before it.

use super::verify::SetCache;
use super::{make_clusters, timed, Dedup, DedupResult, Pair, Records};
use crate::error::Result;
use crate::index::cluster::UnionFind;
use crate::index::{HammingIndex, TableIndex};

pub(super) fn run(d: &Dedup<'_>, records: &Records) -> Result<DedupResult> {
    let n = records.len();
    let mut builder = TableIndex::builder()
        .bits(records.bits())
        .k(d.radius.max_k())
        .expected_len(n)
        .memory(d.layout.memory);
    if let Some(m) = d.layout.blocks {
        builder = builder.blocks(m);
    }
    let mut index = builder.build()?;
    let layout = index.layout().to_string();
    let mut uf = UnionFind::new(n);
    let mut pairs = Vec::new();
    let mut timings = Vec::new();
    let sets = d.verifier.map(|v| SetCache::new(v, n));
    timed(&mut timings, "online check", || {
        for i in 0..n as u32 {
            let fp = records.fingerprint(i);
            let mut matches = index.query(fp, d.radius.max_k())?;
            matches
                .retain(|m| d.radius.accepts(m.distance, records.features(i), records.features(m.id as u32)));
            matches.sort_unstable();
            // The nearest kept record (ties: the earliest) that passes verification.
            let mut owner = None;
            for m in &matches {
                let kept = m.id as u32;
                let score = match &sets {
                    None => None,
                    Some(sets) => match sets.stands(kept, i)? {
                        Some(s) => Some(s),
                        None => continue,
                    },
                };
                owner = Some((kept, m.distance, score));
                break;
            }
            match owner {
                Some((kept, distance, score)) => {
                    uf.union(kept, i);
                    if d.pairs {
                        pairs.push(Pair { a: kept, b: i, distance, score });
                    }
                }
                None => index.insert(u64::from(i), fp)?,
            }
        }
        Ok(())
    })?;
    let clusters = make_clusters(uf, d.keep, true, |i| records.length(i));
    Ok(DedupResult { clusters, pairs, layout, timings, indexed: Vec::new() })
}
