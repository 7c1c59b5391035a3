//! TextRank weights.

use rustc_hash::FxHashMap;

use super::{FeatureCounts, Weighter};

/// TextRank over the co-occurrence graph of a document's features.
///
/// Two features are linked when they occur fewer than `window` positions
/// apart; an edge weighs how often that happens. Ranks start at
/// `1 / nodes` and are updated in place, node by node in order of first
/// occurrence, `iterations` times: `r(n) = (1 − d) + d · Σ w(n,m) / W(m) · r(m)`
/// where `W(m)` is the total edge weight of `m` (as `jieba.analyse`).
#[derive(Clone, Copy, Debug)]
pub struct TextRank {
    /// The co-occurrence window.
    pub window: usize,
    /// The damping factor `d`.
    pub damping: f64,
    /// How many update sweeps.
    pub iterations: usize,
}

impl Weighter for TextRank {
    fn weigh(&self, doc: &FeatureCounts<'_>, out: &mut Vec<f64>) {
        let n = doc.distinct.len();
        if n == 0 {
            return;
        }
        let mut edges: FxHashMap<(u32, u32), f64> = FxHashMap::default();
        let seq = doc.sequence;
        for i in 0..seq.len() {
            for j in i + 1..(i + self.window).min(seq.len()) {
                let (a, b) = (seq[i], seq[j]);
                if a == b {
                    continue;
                }
                *edges.entry((a.min(b), a.max(b))).or_insert(0.0) += 1.0;
            }
        }
        // Adjacency lists in a deterministic order.
        let mut adj: Vec<Vec<(u32, f64)>> = vec![Vec::new(); n];
        let mut sorted: Vec<_> = edges.into_iter().collect();
        sorted.sort_by_key(|&((a, b), _)| (a, b));
        for ((a, b), w) in sorted {
            adj[a as usize].push((b, w));
            adj[b as usize].push((a, w));
        }
        let out_sum: Vec<f64> = adj.iter().map(|l| l.iter().map(|e| e.1).sum()).collect();
        let mut rank = vec![1.0 / n as f64; n];
        for _ in 0..self.iterations {
            for v in 0..n {
                let s: f64 = adj[v].iter().map(|&(m, w)| w / out_sum[m as usize] * rank[m as usize]).sum();
                rank[v] = (1.0 - self.damping) + self.damping * s;
            }
        }
        out.extend(rank);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn central_words_rank_higher() {
        // "b" co-occurs with everything; "e" only at the far end.
        let distinct = ["a", "b", "c", "d", "e"];
        let sequence = [0, 1, 2, 1, 3, 1, 0, 1, 2, 4];
        let counts = [2, 4, 2, 1, 1];
        let doc = FeatureCounts { distinct: &distinct, counts: &counts, sequence: &sequence };
        let mut w = Vec::new();
        TextRank { window: 2, damping: 0.85, iterations: 10 }.weigh(&doc, &mut w);
        assert_eq!(w.len(), 5);
        assert!(w[1] > w[0] && w[1] > w[4], "{w:?}");
        assert!(w.iter().all(|&x| x > 0.0));
    }
}
