//! Union-find, for turning near-duplicate pairs into clusters.

/// A disjoint-set forest over `0..n` with path halving and union by size.
#[derive(Clone, Debug)]
pub struct UnionFind {
    parent: Vec<u32>,
    size: Vec<u32>,
}

impl UnionFind {
    /// `n` singletons.
    pub fn new(n: usize) -> UnionFind {
        UnionFind { parent: (0..n as u32).collect(), size: vec![1; n] }
    }

    /// The representative of `x`'s set.
    pub fn find(&mut self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            let p = self.parent[x as usize];
            self.parent[x as usize] = self.parent[p as usize];
            x = p;
        }
        x
    }

    /// Joins the sets of `a` and `b`; true when they were apart.
    pub fn union(&mut self, a: u32, b: u32) -> bool {
        let (mut a, mut b) = (self.find(a), self.find(b));
        if a == b {
            return false;
        }
        if self.size[a as usize] < self.size[b as usize] {
            std::mem::swap(&mut a, &mut b);
        }
        self.parent[b as usize] = a;
        self.size[a as usize] += self.size[b as usize];
        true
    }

    /// The sets with more than one element, each sorted, ordered by their
    /// smallest element.
    pub fn clusters(&mut self) -> Vec<Vec<u32>> {
        let n = self.parent.len();
        let mut by_root: Vec<Vec<u32>> = vec![Vec::new(); n];
        for x in 0..n as u32 {
            let r = self.find(x);
            by_root[r as usize].push(x);
        }
        let mut out: Vec<Vec<u32>> = by_root.into_iter().filter(|c| c.len() > 1).collect();
        out.sort_unstable_by_key(|c| c[0]);
        out
    }
}

/// The connected components of the graph with edges `a[i] — b[i]` over
/// any ordered vertex names: every vertex of an edge, ascending, and its
/// component's label, the smallest vertex of the component (in `T`'s
/// order). What a distributed job that emits edges (the Spark job's
/// driver) turns into clusters.
///
/// ```
/// use neardup::index::cluster::components;
///
/// let (vertices, labels) = components(&[5i64, -3, 9], &[7, 5, 11]);
/// assert_eq!(vertices, [-3, 5, 7, 9, 11]);
/// assert_eq!(labels, [-3, -3, -3, 9, 9]);
/// ```
///
/// # Panics
///
/// If `a` and `b` differ in length, or over 2^32 vertices.
pub fn components<T: Ord + Copy + Send>(a: &[T], b: &[T]) -> (Vec<T>, Vec<T>) {
    use rayon::prelude::*;
    assert_eq!(a.len(), b.len(), "one target per source");
    let mut vertices: Vec<T> = a.iter().chain(b).copied().collect();
    vertices.par_sort_unstable();
    vertices.dedup();
    let n = u32::try_from(vertices.len()).expect("at most 2^32 vertices");
    let at = |v: T| vertices.binary_search(&v).expect("a vertex") as u32;
    let mut uf = UnionFind::new(n as usize);
    for (&x, &y) in a.iter().zip(b) {
        uf.union(at(x), at(y));
    }
    // Vertices are sorted, so a component's first member is its smallest.
    let mut labels = vertices.clone();
    for c in uf.clusters() {
        for &m in &c {
            labels[m as usize] = vertices[c[0] as usize];
        }
    }
    (vertices, labels)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins_transitively() {
        let mut uf = UnionFind::new(6);
        assert!(uf.union(0, 3));
        assert!(uf.union(3, 5));
        assert!(!uf.union(0, 5));
        assert!(uf.union(1, 2));
        assert_eq!(uf.clusters(), vec![vec![0, 3, 5], vec![1, 2]]);
    }

    /// Components equal a brute-force closure (repeated relabelling to the
    /// smallest neighbour's label until nothing changes).
    #[test]
    fn components_equal_a_fixed_point_of_min_labels() {
        let mut rng = neardup_testkit::Rng(7);
        for n in [1usize, 5, 60, 400] {
            let edges: Vec<(i64, i64)> = (0..n)
                .map(|_| {
                    (rng.below(n as u64 * 2) as i64 - n as i64, rng.below(n as u64 * 2) as i64 - n as i64)
                })
                .collect();
            let (a, b): (Vec<i64>, Vec<i64>) = edges.iter().copied().unzip();
            let (vertices, labels) = components(&a, &b);
            let mut want: std::collections::BTreeMap<i64, i64> =
                a.iter().chain(&b).map(|&v| (v, v)).collect();
            loop {
                let mut changed = false;
                for &(x, y) in &edges {
                    let m = want[&x].min(want[&y]);
                    for v in [x, y] {
                        if want[&v] != m {
                            want.insert(v, m);
                            changed = true;
                        }
                    }
                }
                if !changed {
                    break;
                }
            }
            assert_eq!(vertices, want.keys().copied().collect::<Vec<_>>());
            assert_eq!(labels, want.values().copied().collect::<Vec<_>>(), "{n} edges");
        }
    }
}
