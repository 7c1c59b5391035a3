//! Union-find over record numbers at 4 bytes a record, in memory or — past
//! a budget — in a memory-mapped temporary file, so the page cache rather
//! than the process holds it.
//!
//! The smaller root always becomes the parent (a record's parent is never
//! after it), so each component's root is its first record and
//! [`Parents::flatten`] points every record at its root in one ascending
//! pass. With path halving this costs O(log n) amortised a call, and needs
//! no size or rank column.

use std::path::Path;

use super::spill::spill_error;
use crate::error::Result;

/// Where the parents live.
enum Storage {
    Memory(Vec<u32>),
    Mapped(memmap2::MmapMut),
}

/// Parents of `0..n`.
pub(crate) struct Parents {
    storage: Storage,
}

impl std::fmt::Debug for Parents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Parents").field("n", &self.len()).field("mapped", &self.is_mapped()).finish()
    }
}

impl Parents {
    /// `n` singletons: in memory when `4 n` bytes fit `memory`, else in an
    /// unnamed temporary file in `dir`, mapped.
    pub(crate) fn new(n: usize, memory: u64, dir: &Path) -> Result<Parents> {
        let bytes = n as u64 * 4;
        let storage = if bytes <= memory {
            Storage::Memory((0..n as u32).collect())
        } else {
            let file = tempfile::tempfile_in(dir).map_err(|e| spill_error(dir, e, 0))?;
            file.set_len(bytes).map_err(|e| spill_error(dir, e, 0))?;
            // SAFETY: the file is unnamed and this process's own: nothing
            // else can change or truncate it while it is mapped.
            let mut map = unsafe { memmap2::MmapMut::map_mut(&file) }.map_err(|e| spill_error(dir, e, 0))?;
            for (i, b) in map.chunks_exact_mut(4).enumerate() {
                b.copy_from_slice(&(i as u32).to_ne_bytes());
            }
            Storage::Mapped(map)
        };
        Ok(Parents { storage })
    }

    /// Whether the parents live in a mapped file.
    pub(crate) fn is_mapped(&self) -> bool {
        matches!(self.storage, Storage::Mapped(_))
    }

    fn slice(&mut self) -> &mut [u32] {
        match &mut self.storage {
            Storage::Memory(v) => v,
            Storage::Mapped(m) => {
                // SAFETY: a mapping is page aligned (so aligned for u32), its
                // length is 4 n, and every bit pattern is a valid u32.
                let (head, body, _) = unsafe { m.align_to_mut::<u32>() };
                debug_assert!(head.is_empty());
                body
            }
        }
    }

    /// How many records.
    pub(crate) fn len(&self) -> usize {
        match &self.storage {
            Storage::Memory(v) => v.len(),
            Storage::Mapped(m) => m.len() / 4,
        }
    }

    /// Joins the sets of `a` and `b` under the smaller root.
    pub(crate) fn union(&mut self, a: u32, b: u32) {
        let p = self.slice();
        let (ra, rb) = (find(p, a), find(p, b));
        if ra != rb {
            p[ra.max(rb) as usize] = ra.min(rb);
        }
    }

    /// Points every record at its root (the component's first record) and
    /// returns the parents: `p[i] == i` for a root, else its root.
    pub(crate) fn flatten(&mut self) -> &[u32] {
        let p = self.slice();
        for i in 0..p.len() {
            p[i] = p[p[i] as usize];
        }
        p
    }
}

fn find(p: &mut [u32], mut x: u32) -> u32 {
    while p[x as usize] != x {
        let up = p[p[x as usize] as usize];
        p[x as usize] = up;
        x = up;
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::cluster::UnionFind;

    #[test]
    fn in_memory_and_mapped_agree_with_union_find() {
        let dir = tempfile::tempdir().unwrap();
        let n = 5_000;
        let mut x = 3u64;
        let mut next = || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) as u32 % n
        };
        let pairs: Vec<(u32, u32)> = (0..3_000).map(|_| (next(), next())).collect();
        let mut uf = UnionFind::new(n as usize);
        for &(a, b) in &pairs {
            uf.union(a, b);
        }
        for memory in [u64::MAX, 0] {
            let mut p = Parents::new(n as usize, memory, dir.path()).unwrap();
            assert_eq!(p.is_mapped(), memory == 0);
            for &(a, b) in &pairs {
                p.union(a, b);
            }
            let flat = p.flatten().to_vec();
            for i in 0..n {
                // The root is the component's first record.
                let root = flat[i as usize];
                assert!(root <= i);
                assert_eq!(flat[root as usize], root);
                assert_eq!(uf.find(i), uf.find(root));
            }
            for &(a, b) in &pairs {
                assert_eq!(flat[a as usize], flat[b as usize]);
            }
            // As many components as union-find has.
            let roots = (0..n).filter(|&i| flat[i as usize] == i).count();
            let uf_roots = (0..n).filter(|&i| uf.find(i) == i).count();
            assert_eq!(roots, uf_roots);
        }
    }
}
