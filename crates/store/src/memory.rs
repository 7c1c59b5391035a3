//! [`MemoryStore`]: a store in memory, for tests and throwaway engines.

use std::collections::BTreeMap;
use std::sync::RwLock;

use crate::record::{check_id, DocRecord, SnapshotMark, StoreMeta};
use crate::{Result, Store};

/// Documents in a `BTreeMap` behind a lock. Nothing survives the process.
#[derive(Debug, Default)]
pub struct MemoryStore {
    inner: RwLock<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    meta: Option<StoreMeta>,
    docs: BTreeMap<String, DocRecord>,
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

    fn put(&self, docs: &[DocRecord]) -> Result<()> {
        for d in docs {
            check_id(&d.id)?;
        }
        let mut g = self.inner.write().expect("lock");
        for d in docs {
            g.docs.insert(d.id.clone(), d.clone());
        }
        g.generation += 1;
        Ok(())
    }

    fn get(&self, id: &str) -> Result<Option<DocRecord>> {
        Ok(self.inner.read().expect("lock").docs.get(id).cloned())
    }

    fn delete(&self, id: &str) -> Result<bool> {
        let mut g = self.inner.write().expect("lock");
        let existed = g.docs.remove(id).is_some();
        g.generation += u64::from(existed);
        Ok(existed)
    }

    fn for_each(&self, f: &mut dyn FnMut(DocRecord) -> Result<()>) -> Result<()> {
        let docs: Vec<DocRecord> = self.inner.read().expect("lock").docs.values().cloned().collect();
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
