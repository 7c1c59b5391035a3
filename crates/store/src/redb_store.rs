//! [`RedbStore`]: documents in an embedded redb database.

use std::path::{Path, PathBuf};

use redb::{Database, ReadableDatabase, ReadableTable, ReadableTableMetadata, TableDefinition};

use crate::error::StoreError;
use crate::record::{check_id, DocRecord, SnapshotMark, StoreMeta};
use crate::{Result, Store};

/// id → encoded [`DocRecord`].
const DOCS: TableDefinition<&str, &[u8]> = TableDefinition::new("docs");
/// "meta" → JSON of [`StoreMeta`]; "generation" → u64 (little-endian)
/// bumped by every document write; "snapshot" → JSON of [`SnapshotMark`].
const META: TableDefinition<&str, &[u8]> = TableDefinition::new("meta");

/// A redb database file. Every write is one transaction committed with
/// immediate durability (fsync) before it returns; readers never block the
/// writer. redb locks the file, so a second process opening it fails
/// cleanly instead of corrupting it.
pub struct RedbStore {
    db: Database,
    path: PathBuf,
}

impl std::fmt::Debug for RedbStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedbStore").field("path", &self.path).finish()
    }
}

impl RedbStore {
    /// Opens the database at `path`, creating it (and its directory) if
    /// missing.
    pub fn open(path: &Path) -> Result<RedbStore> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| StoreError::Database {
                path: dir.to_path_buf(),
                message: format!("cannot create the directory: {e}"),
            })?;
        }
        let db = Database::create(path).map_err(|e| db_error(path, e))?;
        let store = RedbStore { db, path: path.to_path_buf() };
        // Create both tables up front, so readers of a new store find them.
        let txn = store.db.begin_write().map_err(|e| store.err(e))?;
        {
            txn.open_table(DOCS).map_err(|e| store.err(e))?;
            txn.open_table(META).map_err(|e| store.err(e))?;
        }
        txn.commit().map_err(|e| store.err(e))?;
        Ok(store)
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn err(&self, e: impl Into<redb::Error>) -> StoreError {
        db_error(&self.path, e)
    }

    /// Bumps the generation inside a write transaction.
    fn bump_generation(&self, txn: &redb::WriteTransaction) -> Result<()> {
        let mut table = txn.open_table(META).map_err(|e| self.err(e))?;
        let current = table.get(GENERATION).map_err(|e| self.err(e))?.map(|v| read_u64(v.value()));
        let next = current.unwrap_or(0) + 1;
        table.insert(GENERATION, next.to_le_bytes().as_slice()).map_err(|e| self.err(e))?;
        Ok(())
    }

    fn meta_json<T: serde::de::DeserializeOwned>(&self, key: &str) -> Result<Option<T>> {
        let txn = self.db.begin_read().map_err(|e| self.err(e))?;
        let table = txn.open_table(META).map_err(|e| self.err(e))?;
        let Some(v) = table.get(key).map_err(|e| self.err(e))? else { return Ok(None) };
        serde_json::from_slice(v.value())
            .map(Some)
            .map_err(|e| StoreError::Corrupt { id: format!("(store {key})"), message: e.to_string() })
    }
}

const GENERATION: &str = "generation";

fn read_u64(v: &[u8]) -> u64 {
    v.try_into().map_or(0, u64::from_le_bytes)
}

fn db_error(path: &Path, e: impl Into<redb::Error>) -> StoreError {
    let e: redb::Error = e.into();
    let hint = match &e {
        redb::Error::DatabaseAlreadyOpen => {
            "; another process (a running `neardup serve`?) has it open: stop it first"
        }
        redb::Error::Corrupted(_) => "; restore the data directory from a backup",
        _ => "",
    };
    StoreError::Database { path: path.to_path_buf(), message: format!("{e}{hint}") }
}

impl Store for RedbStore {
    fn meta(&self) -> Result<Option<StoreMeta>> {
        self.meta_json("meta")
    }

    fn set_meta(&self, meta: &StoreMeta) -> Result<()> {
        let txn = self.db.begin_write().map_err(|e| self.err(e))?;
        {
            let mut table = txn.open_table(META).map_err(|e| self.err(e))?;
            if table.get("meta").map_err(|e| self.err(e))?.is_none() {
                let json = serde_json::to_vec(meta).expect("metadata serializes");
                table.insert("meta", json.as_slice()).map_err(|e| self.err(e))?;
            }
        }
        txn.commit().map_err(|e| self.err(e))
    }

    fn put(&self, docs: &[DocRecord]) -> Result<()> {
        for d in docs {
            check_id(&d.id)?;
        }
        let txn = self.db.begin_write().map_err(|e| self.err(e))?;
        {
            let mut table = txn.open_table(DOCS).map_err(|e| self.err(e))?;
            for d in docs {
                table.insert(d.id.as_str(), d.encode().as_slice()).map_err(|e| self.err(e))?;
            }
        }
        self.bump_generation(&txn)?;
        txn.commit().map_err(|e| self.err(e))
    }

    fn get(&self, id: &str) -> Result<Option<DocRecord>> {
        let txn = self.db.begin_read().map_err(|e| self.err(e))?;
        let table = txn.open_table(DOCS).map_err(|e| self.err(e))?;
        let v = table.get(id).map_err(|e| self.err(e))?;
        v.map(|v| DocRecord::decode(id, v.value())).transpose()
    }

    fn delete(&self, id: &str) -> Result<bool> {
        let txn = self.db.begin_write().map_err(|e| self.err(e))?;
        let existed = {
            let mut table = txn.open_table(DOCS).map_err(|e| self.err(e))?;
            let removed = table.remove(id).map_err(|e| self.err(e))?;
            removed.is_some()
        };
        if existed {
            self.bump_generation(&txn)?;
        }
        txn.commit().map_err(|e| self.err(e))?;
        Ok(existed)
    }

    fn for_each(&self, f: &mut dyn FnMut(DocRecord) -> Result<()>) -> Result<()> {
        let txn = self.db.begin_read().map_err(|e| self.err(e))?;
        let table = txn.open_table(DOCS).map_err(|e| self.err(e))?;
        for item in table.iter().map_err(|e| self.err(e))? {
            let (k, v) = item.map_err(|e| self.err(e))?;
            f(DocRecord::decode(k.value(), v.value())?)?;
        }
        Ok(())
    }

    fn for_each_sketch(&self, f: &mut crate::SketchVisitor<'_>) -> Result<()> {
        let txn = self.db.begin_read().map_err(|e| self.err(e))?;
        let table = txn.open_table(DOCS).map_err(|e| self.err(e))?;
        for item in table.iter().map_err(|e| self.err(e))? {
            let (k, v) = item.map_err(|e| self.err(e))?;
            let id = k.value();
            let sketch = DocRecord::decode_sketch(id, v.value())?;
            f(id, sketch, DocRecord::decode_features(v.value()))?;
        }
        Ok(())
    }

    fn generation(&self) -> Result<u64> {
        let txn = self.db.begin_read().map_err(|e| self.err(e))?;
        let table = txn.open_table(META).map_err(|e| self.err(e))?;
        let v = table.get(GENERATION).map_err(|e| self.err(e))?;
        Ok(v.map_or(0, |v| read_u64(v.value())))
    }

    fn snapshot_mark(&self) -> Result<Option<SnapshotMark>> {
        self.meta_json("snapshot")
    }

    fn set_snapshot_mark(&self, mark: &SnapshotMark) -> Result<()> {
        let txn = self.db.begin_write().map_err(|e| self.err(e))?;
        {
            let mut table = txn.open_table(META).map_err(|e| self.err(e))?;
            let json = serde_json::to_vec(mark).expect("a mark serializes");
            table.insert("snapshot", json.as_slice()).map_err(|e| self.err(e))?;
        }
        txn.commit().map_err(|e| self.err(e))
    }

    fn len(&self) -> Result<u64> {
        let txn = self.db.begin_read().map_err(|e| self.err(e))?;
        let table = txn.open_table(DOCS).map_err(|e| self.err(e))?;
        table.len().map_err(|e| self.err(e))
    }

    fn disk_bytes(&self) -> u64 {
        std::fs::metadata(&self.path).map(|m| m.len()).unwrap_or(0)
    }
}
