//! Opening the index: from a snapshot file when it holds exactly the
//! store's state, else rebuilt from the store; writing snapshots.

use std::borrow::Cow;
use std::path::Path;

use neardup::dedup::{Plan, UNKNOWN_FEATURES};
use neardup::index::file::IndexFile;
use neardup::index::{keys_from_names, KeyedIndex, RuleTables, TableIndex, TableIndexBuilder};
use neardup::meta::IndexMeta;
use neardup::minhash::{KeyedLsh, Signature};
use neardup::{PipelineConfig, Radius, Sketch};

use super::state::State;
use super::{Engine, Lsh};
use crate::error::StoreError;
use crate::record::SnapshotMark;
use crate::{Result, Store};

/// The index of everything in the store, from a full read.
pub(super) fn rebuild(store: &dyn Store, config: &PipelineConfig, radius: &Radius) -> Result<State> {
    if let Some(lsh) = Lsh::of(config)? {
        let mut docs = KeyedLsh::new(lsh.banding, lsh.permutations);
        docs.reserve(usize::try_from(store.len()?).unwrap_or(0));
        // In chunks, each banded in parallel.
        let mut chunk: Vec<(Box<str>, Signature)> = Vec::new();
        let flush = |docs: &mut KeyedLsh<Box<str>>, chunk: &mut Vec<(Box<str>, Signature)>| {
            docs.insert_batch(chunk.iter().map(|(id, s)| (id.clone(), s.values())));
            chunk.clear();
        };
        store.for_each_sketch(&mut |id, sketch, _| match sketch {
            Sketch::Signature(s) if s.len() == lsh.permutations => {
                chunk.push((Box::from(id), s));
                if chunk.len() == 65_536 {
                    flush(&mut docs, &mut chunk);
                }
                Ok(())
            }
            _ => Err(StoreError::Corrupt {
                id: id.to_owned(),
                message: format!("not a MinHash signature of {} values", lsh.permutations),
            }),
        })?;
        flush(&mut docs, &mut chunk);
        return Ok(State::MinHash(docs));
    }
    let mut names = Vec::new();
    let mut entries = Vec::new();
    let mut features = Vec::new();
    store.for_each_sketch(&mut |id, sketch, n| {
        let fp = match sketch {
            Sketch::Fingerprint(fp) if fp.bits() == config.bits => fp,
            _ => {
                return Err(StoreError::Corrupt {
                    id: id.to_owned(),
                    message: format!("not a {}-bit fingerprint", config.bits),
                })
            }
        };
        entries.push((names.len() as u64, fp));
        names.push(Some(Box::from(id)));
        features.push(n.unwrap_or(UNKNOWN_FEATURES as u32));
        Ok(())
    })?;
    let builder = tables(config);
    let index = builder.clone().k(Plan::new(radius).passes()[0].k).build_from(entries)?;
    Ok(State::SimHash(KeyedIndex::from_slots(index, names, Some(features))?.with_radius(radius, builder)?))
}

/// How the engine's index tables are built (each pass sets its k).
pub(super) fn tables(config: &PipelineConfig) -> TableIndexBuilder {
    TableIndex::builder().bits(config.bits).expected_len(1_000_000)
}

/// The index from a snapshot file, or why it cannot be used.
pub(super) fn load_snapshot(
    store: &dyn Store,
    config: &PipelineConfig,
    radius: Option<&Radius>,
    path: &Path,
) -> Result<std::result::Result<(State, Radius), String>> {
    let Some(mark) = store.snapshot_mark()? else { return Ok(Err("no snapshot was written".into())) };
    let generation = store.generation()?;
    if mark.generation != generation {
        return Ok(Err(format!(
            "the store changed after the last snapshot (generation {generation}, snapshot {})",
            mark.generation
        )));
    }
    if !path.exists() {
        return Ok(Err(format!("{} is missing", path.display())));
    }
    let file = match IndexFile::stored_checksum(path).and_then(|sum| Ok((sum, IndexFile::open(path)?))) {
        Ok((sum, _)) if sum != mark.checksum => {
            return Ok(Err(format!("{} is not the snapshot the store recorded", path.display())))
        }
        Ok((_, file)) => file,
        Err(e) => return Ok(Err(e.to_string())),
    };
    // The snapshot's pipeline carries the rule its engine answered by.
    let made_for = match IndexMeta::of(&file) {
        Ok(IndexMeta { pipeline: Some(c), .. }) if c.same_fingerprints(config) => c.radius(),
        _ => return Ok(Err("the snapshot was made with another pipeline".into())),
    };
    let radius = radius.cloned().unwrap_or(made_for);
    let radius = &radius;
    let layout = file.index.layout();
    let k = Plan::new(radius).passes()[0].k;
    if k != layout.k {
        return Ok(Err(format!("the snapshot's tables serve k = {}, not {k}", layout.k)));
    }
    let Some(stored) = file.names else { return Ok(Err("the snapshot has no names".into())) };
    let names: Vec<Option<Box<str>>> = keys_from_names(&stored, |n| Box::from(n));
    // Snapshots written before feature counts were kept have none: the
    // rule then needs the store's (a rebuild).
    if file.features.is_none() && !radius.is_fixed() {
        return Ok(Err("the snapshot has no feature counts".into()));
    }
    // The snapshot's later passes serve its own rule; another rule's are
    // built from the feature counts.
    let stored = RuleTables::from_tables(radius, file.later).ok();
    let docs =
        KeyedIndex::from_slots(file.index, names, file.features.map(|f| f.to_vec())).and_then(
            |d| match stored {
                Some(t) => Ok(d.with_rule_tables(t)),
                None => d.with_radius(radius, tables(config)),
            },
        );
    let state = match docs {
        Ok(docs) => State::SimHash(docs),
        Err(e) => return Ok(Err(format!("the snapshot's index does not match its names: {e}"))),
    };
    let live = state.len();
    if live as u64 != mark.documents || store.len()? != mark.documents {
        return Ok(Err("the snapshot's document count does not match the store".into()));
    }
    Ok(Ok((state, radius.clone())))
}

impl<S: Store> Engine<S> {
    /// Writes the index to `path` (atomically) and records its mark in the
    /// store, so that [`open_with_snapshot`](Self::open_with_snapshot) can
    /// skip the rebuild. Writes wait meanwhile. Any later write to the store
    /// makes the snapshot stale (it is then ignored, never wrong).
    ///
    /// A MinHash engine writes none (`None`): its index is rebuilt from
    /// the store on open.
    pub fn write_snapshot(&self, path: &Path) -> Result<Option<SnapshotMark>> {
        let _writer = self.writer.lock().expect("lock");
        let generation = self.store.generation()?;
        let state = self.state.read().expect("lock");
        let Some(docs) = state.simhash() else { return Ok(None) };
        // Deleted slots keep their place (as empty names) so that the
        // index's internal ids stay the names' positions.
        let names = docs.keys().names(|k| Cow::Borrowed(&**k));
        // The pipeline with the rule this engine answers by.
        let pipeline = PipelineConfig { radius: Some(self.radius.clone()), ..self.config.clone() };
        let meta = IndexMeta { pipeline: Some(pipeline), ..IndexMeta::default() };
        let file = IndexFile {
            columns: Vec::new(),
            deferred: Vec::new(),
            index: docs.index().clone(),
            names: Some(names),
            later: docs.rule_tables().map(|t| t.tables().cloned().collect()).unwrap_or_default(),
            features: Some(docs.slot_features().to_vec().into()),
            meta: meta.to_value(),
        };
        file.write(path)?;
        let mark = SnapshotMark {
            generation,
            checksum: IndexFile::stored_checksum(path)?,
            documents: docs.len() as u64,
        };
        self.store.set_snapshot_mark(&mark)?;
        Ok(Some(mark))
    }
}
