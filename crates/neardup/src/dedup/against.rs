//! Deduplicating new records against an existing corpus (`neardup dedup
//! NEW… --against INDEX`): each new record is looked up in the index of
//! the corpus, and the indexed documents count as kept before any new
//! one. With justified clusters (the default), a new record near an
//! indexed document is removed for it — a cluster of one whose
//! representative is the indexed document — and the others are split as
//! without an index, the matched ones set aside (never kept, never a
//! centre). With whole components, a component with a member near an
//! indexed document keeps none of its new records, and a new record near
//! an indexed one alone is a cluster of one, removed.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{Closeness, Cluster, ClusterMode, DedupResult};

/// An indexed document that a new record is near: its id in the index and
/// how near, in the method's terms.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IndexMatch {
    /// The indexed document's id.
    pub id: String,
    /// How near the new record is to it.
    pub closeness: Closeness,
}

impl DedupResult {
    /// The result of a dedup against an index: `matches` gives, for the
    /// new records near an indexed document, the nearest such (by record
    /// position). Justified clusters (`mode`) must come from a batch that
    /// set the matched records aside: each matched record becomes a cluster
    /// of one with its match. Whole components with a matched member get
    /// that match (of their earliest matched member, which becomes the
    /// cluster's `kept`: the record linked to the index, removed like the
    /// others); a matched record in no component becomes a cluster of one.
    /// Clusters stay ordered by their first member.
    pub fn against(mut self, matches: &BTreeMap<u32, IndexMatch>, mode: ClusterMode) -> DedupResult {
        if mode == ClusterMode::Justified {
            let mut clusters: Vec<(Cluster, Option<IndexMatch>)> =
                self.clusters.into_iter().map(|c| (c, None)).collect();
            for (&m, x) in matches {
                clusters.push((Cluster { kept: m, members: vec![m] }, Some(x.clone())));
            }
            clusters.sort_by_key(|(c, _)| c.members[0]);
            (self.clusters, self.indexed) = clusters.into_iter().unzip();
            return self;
        }
        let mut clustered = std::collections::HashSet::new();
        let mut indexed = Vec::with_capacity(self.clusters.len());
        for c in &mut self.clusters {
            clustered.extend(c.members.iter().copied());
            let first = c.members.iter().find_map(|m| matches.get(m).map(|x| (*m, x)));
            indexed.push(first.map(|(m, x)| {
                c.kept = m;
                x.clone()
            }));
        }
        let mut clusters: Vec<(Cluster, Option<IndexMatch>)> =
            self.clusters.into_iter().zip(indexed).collect();
        for (&m, x) in matches.iter().filter(|(m, _)| !clustered.contains(m)) {
            clusters.push((Cluster { kept: m, members: vec![m] }, Some(x.clone())));
        }
        clusters.sort_by_key(|(c, _)| c.members[0]);
        let (clusters, indexed) = clusters.into_iter().unzip();
        self.clusters = clusters;
        self.indexed = indexed;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dedup::Pair;

    fn m(id: &str) -> IndexMatch {
        IndexMatch { id: id.into(), closeness: Closeness::Distance(1) }
    }

    /// Matched clusters keep nothing, matched singletons become clusters of
    /// one, and the rest is untouched.
    #[test]
    fn indexed_documents_count_as_earlier_kept_members() {
        let found = DedupResult {
            clusters: vec![
                Cluster { kept: 0, members: vec![0, 2] },
                Cluster { kept: 6, members: vec![3, 5, 6] },
            ],
            pairs: vec![Pair { a: 0, b: 2, distance: 1, score: None }],
            ..DedupResult::default()
        };
        let matches = BTreeMap::from([(5, m("old-5")), (6, m("old-6")), (1, m("old-1"))]);
        let got = found.clone().against(&matches, ClusterMode::Components);
        let seen: Vec<_> = got
            .clusters
            .iter()
            .zip(&got.indexed)
            .map(|(c, x)| (c.kept, c.members.clone(), x.as_ref().map(|x| x.id.as_str())))
            .collect();
        assert_eq!(
            seen,
            [(0, vec![0, 2], None), (1, vec![1], Some("old-1")), (5, vec![3, 5, 6], Some("old-5"))]
        );
        assert_eq!(got.kept_mask(8), [true, false, false, false, true, false, false, true]);
        assert_eq!(got.removed(), 5);
        // Justified clusters hold no matched record: each is a cluster of one.
        let found = DedupResult {
            clusters: vec![
                Cluster { kept: 0, members: vec![0, 2] },
                Cluster { kept: 4, members: vec![3, 4] },
            ],
            ..DedupResult::default()
        };
        let got = found.against(&matches, ClusterMode::Justified);
        let seen: Vec<_> = got.clusters.iter().map(|c| (c.kept, c.members.clone())).collect();
        assert_eq!(seen, [(0, vec![0, 2]), (1, vec![1]), (4, vec![3, 4]), (5, vec![5]), (6, vec![6])]);
        assert_eq!(got.kept_mask(8), [true, false, false, false, true, false, false, true]);
    }
}
