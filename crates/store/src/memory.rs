//! [`MemoryStore`]: a store in memory, for tests and throwaway engines.

use std::collections::BTreeMap;
use std::sync::RwLock;

use crate::record::{check_id, DocRecord, StoreMeta};
use crate::{Result, Store};

/// Documents in a `BTreeMap` behind a lock. Nothing survives the process.
#[derive(Debug, Default)]
pub struct MemoryStore {
    inner: RwLock<(Option<StoreMeta>, BTreeMap<String, DocRecord>)>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }
}

impl Store for MemoryStore {
    fn meta(&self) -> Result<Option<StoreMeta>> {
        Ok(self.inner.read().expect("lock").0.clone())
    }

    fn set_meta(&self, meta: &StoreMeta) -> Result<()> {
        self.inner.write().expect("lock").0.get_or_insert_with(|| meta.clone());
        Ok(())
    }

    fn put(&self, docs: &[DocRecord]) -> Result<()> {
        for d in docs {
            check_id(&d.id)?;
        }
        let mut g = self.inner.write().expect("lock");
        for d in docs {
            g.1.insert(d.id.clone(), d.clone());
        }
        Ok(())
    }

    fn get(&self, id: &str) -> Result<Option<DocRecord>> {
        Ok(self.inner.read().expect("lock").1.get(id).cloned())
    }

    fn delete(&self, id: &str) -> Result<bool> {
        Ok(self.inner.write().expect("lock").1.remove(id).is_some())
    }

    fn for_each(&self, f: &mut dyn FnMut(DocRecord) -> Result<()>) -> Result<()> {
        let docs: Vec<DocRecord> = self.inner.read().expect("lock").1.values().cloned().collect();
        docs.into_iter().try_for_each(f)
    }

    fn len(&self) -> Result<u64> {
        Ok(self.inner.read().expect("lock").1.len() as u64)
    }

    fn disk_bytes(&self) -> u64 {
        0
    }
}
