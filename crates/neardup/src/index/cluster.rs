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
}
