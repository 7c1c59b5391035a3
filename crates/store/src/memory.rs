//! [`MemoryStore`]: a store in memory, for tests and throwaway engines.

use std::collections::BTreeMap;
use std::sync::RwLock;

use crate::record::{check_id, DocRecord, SnapshotMark, StoreMeta};
use crate::{Result, SeqVisitor, Store, Written};

/// Documents in a `BTreeMap` behind a lock. Nothing survives the process.
#[derive(Debug, Default)]
pub struct MemoryStore {
    inner: RwLock<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    meta: Option<StoreMeta>,
    docs: BTreeMap<String, (u64, DocRecord)>,
    by_seq: BTreeMap<u64, String>,
    dead: std::collections::BTreeSet<u64>,
    last_seq: u64,
    generation: u64,
    snapshot: Option<SnapshotMark>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }
}

impl Store for MemoryStore {
    fn meta(&self) -> Result<Option<StoreMeta>> {
        Ok(self.inner.read().expect("lock").meta.clone())
    }

    fn set_meta(&self, meta: &StoreMeta) -> Result<()> {
        self.inner.write().expect("lock").meta.get_or_insert_with(|| meta.clone());
        Ok(())
    }

    fn put(&self, docs: &[DocRecord]) -> Result<Vec<Written>> {
        for d in docs {
            check_id(&d.id)?;
        }
        let mut g = self.inner.write().expect("lock");
        let mut written = Vec::with_capacity(docs.len());
        for d in docs {
            g.last_seq += 1;
            let seq = g.last_seq;
            let replaced = g.docs.insert(d.id.clone(), (seq, d.clone())).map(|(old, _)| old);
            g.by_seq.insert(seq, d.id.clone());
            if let Some(old) = replaced {
                g.by_seq.remove(&old);
                g.dead.insert(old);
            }
            written.push(Written { seq, replaced });
        }
        g.generation += 1;
        Ok(written)
    }

    fn get(&self, id: &str) -> Result<Option<DocRecord>> {
        Ok(self.inner.read().expect("lock").docs.get(id).map(|(_, d)| d.clone()))
    }

    fn remove(&self, id: &str) -> Result<Option<u64>> {
        let mut g = self.inner.write().expect("lock");
        let removed = g.docs.remove(id).map(|(seq, _)| seq);
        if let Some(seq) = removed {
            g.by_seq.remove(&seq);
            g.dead.insert(seq);
            g.generation += 1;
        }
        Ok(removed)
    }

    fn last_seq(&self) -> Result<u64> {
        Ok(self.inner.read().expect("lock").last_seq)
    }

    fn for_each_after(&self, after: u64, f: &mut SeqVisitor<'_>) -> Result<()> {
        let docs: Vec<(u64, DocRecord)> = {
            let g = self.inner.read().expect("lock");
            g.by_seq.range(after.saturating_add(1)..).map(|(&s, id)| (s, g.docs[id].1.clone())).collect()
        };
        docs.into_iter().try_for_each(|(s, d)| f(s, d))
    }

    fn dead_seqs(&self) -> Result<Vec<u64>> {
        Ok(self.inner.read().expect("lock").dead.iter().copied().collect())
    }

    fn forget_dead(&self, seqs: &[u64]) -> Result<()> {
        let mut g = self.inner.write().expect("lock");
        for s in seqs {
            g.dead.remove(s);
        }
        Ok(())
    }

    fn for_each(&self, f: &mut dyn FnMut(DocRecord) -> Result<()>) -> Result<()> {
        let docs: Vec<DocRecord> =
            self.inner.read().expect("lock").docs.values().map(|(_, d)| d.clone()).collect();
        docs.into_iter().try_for_each(f)
    }

    fn len(&self) -> Result<u64> {
        Ok(self.inner.read().expect("lock").docs.len() as u64)
    }

    fn generation(&self) -> Result<u64> {
        Ok(self.inner.read().expect("lock").generation)
    }

    fn snapshot_mark(&self) -> Result<Option<SnapshotMark>> {
        Ok(self.inner.read().expect("lock").snapshot.clone())
    }

    fn set_snapshot_mark(&self, mark: &SnapshotMark) -> Result<()> {
        self.inner.write().expect("lock").snapshot = Some(mark.clone());
        Ok(())
    }

    fn disk_bytes(&self) -> u64 {
        0
    }
}
