//! The in-memory index of the stored documents.

use neardup::index::KeyedIndex;
use neardup::minhash::{KeyedLsh, Signature};
use neardup::{Radius, Sketch};

use super::disk::DiskIndex;
use super::{features_of, Found, Near};
use crate::error::StoreError;
use crate::record::DocRecord;
use crate::{Result, Store, Written};

/// The index of the stored documents, keyed by document id: SimHash
/// tables, or MinHash bands.
pub(super) enum State {
    SimHash(KeyedIndex<Box<str>>),
    MinHash(KeyedLsh<Box<str>>),
    /// Segments on disk and a memory part (a data directory's index).
    Disk(Box<DiskIndex>),
}

/// A sketch of the wrong kind: the engine checks every request first.
fn unchecked() -> StoreError {
    StoreError::Invalid("a sketch of the other method reached the index".into())
}

impl State {
    /// The SimHash tables, if this is an in-memory SimHash index.
    pub(super) fn simhash(&self) -> Option<&KeyedIndex<Box<str>>> {
        match self {
            State::SimHash(d) => Some(d),
            _ => None,
        }
    }

    /// The SimHash tables, mutably.
    pub(super) fn simhash_mut(&mut self) -> Option<&mut KeyedIndex<Box<str>>> {
        match self {
            State::SimHash(d) => Some(d),
            _ => None,
        }
    }

    /// The on-disk index, if this is one.
    pub(super) fn disk(&self) -> Option<&DiskIndex> {
        match self {
            State::Disk(d) => Some(d),
            _ => None,
        }
    }

    /// The on-disk index, mutably.
    pub(super) fn disk_mut(&mut self) -> Option<&mut DiskIndex> {
        match self {
            State::Disk(d) => Some(d),
            _ => None,
        }
    }

    pub(super) fn len(&self) -> usize {
        match self {
            State::SimHash(d) => d.len(),
            State::MinHash(d) => d.len(),
            State::Disk(d) => d.len(),
        }
    }

    /// Adds many committed documents (SimHash: one bulk load of the index;
    /// MinHash: the bands filled in parallel; on disk: the memory part,
    /// frozen for a flush when full), `written` as the store numbered them.
    pub(super) fn add_many(&mut self, records: &[DocRecord], written: &[Written]) -> Result<()> {
        match self {
            State::Disk(d) => {
                if d.add(records, written)? {
                    d.freeze();
                }
                Ok(())
            }
            State::SimHash(docs) => {
                let items = records
                    .iter()
                    .map(|r| {
                        let fp = r.sketch.fingerprint().ok_or_else(unchecked)?;
                        Ok((Box::from(r.id.as_str()), fp, features_of(r.features)))
                    })
                    .collect::<Result<_>>()?;
                Ok(docs.insert_batch(items)?)
            }
            State::MinHash(docs) => {
                let items = records
                    .iter()
                    .map(|r| {
                        Ok((Box::from(r.id.as_str()), r.sketch.signature().ok_or_else(unchecked)?.values()))
                    })
                    .collect::<Result<Vec<_>>>()?;
                docs.insert_batch(items);
                Ok(())
            }
        }
    }

    pub(super) fn add(&mut self, r: &DocRecord, w: Written) -> Result<()> {
        match (self, &r.sketch) {
            (State::Disk(d), _) => {
                if d.add(std::slice::from_ref(r), &[w])? {
                    d.freeze();
                }
                Ok(())
            }
            (State::SimHash(docs), Sketch::Fingerprint(fp)) => {
                Ok(docs.insert(r.id.as_str().into(), *fp, features_of(r.features))?)
            }
            (State::MinHash(docs), Sketch::Signature(s)) => {
                docs.insert(r.id.as_str().into(), s.values());
                Ok(())
            }
            _ => Err(unchecked()),
        }
    }

    /// The stored documents near `sketch`, nearest first (ties: by id):
    /// within `k` or by the `rule` for a document of `features` features
    /// (SimHash, as `near` says), or sharing a band at `threshold` or above
    /// (MinHash: the request's threshold, resolved by the engine).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn near(
        &self,
        store: &dyn Store,
        sketch: &Sketch,
        near: Near,
        features: Option<u32>,
        rule: &Radius,
        threshold: f64,
    ) -> Result<Vec<Found>> {
        let mut out: Vec<Found> = match (self, sketch) {
            (State::Disk(d), _) => d.near(store, sketch, near, features, rule, threshold)?,
            (State::SimHash(docs), Sketch::Fingerprint(fp)) => {
                let matches = match near {
                    Near::Within(k) => docs.query_slots(*fp, k)?,
                    _ => docs.query_rule_slots(*fp, features_of(features), rule)?,
                };
                docs.keyed(matches)
                    .into_iter()
                    .map(|(id, distance)| Found { id: id.to_string(), distance, similarity: None })
                    .collect()
            }
            (State::MinHash(docs), Sketch::Signature(s)) => docs
                .query(s.values(), threshold)
                .into_iter()
                .map(|(id, m)| Found {
                    id: id.to_string(),
                    distance: m.differing,
                    similarity: Some(m.similarity),
                })
                .collect(),
            _ => return Err(unchecked()),
        };
        out.sort_by(|a, b| a.distance.cmp(&b.distance).then_with(|| a.id.cmp(&b.id)));
        Ok(out)
    }

    pub(super) fn forget(&mut self, id: &str, seq: u64) -> Result<()> {
        match self {
            State::Disk(d) => d.remove(seq)?,
            State::SimHash(docs) => {
                docs.remove(id)?;
            }
            State::MinHash(docs) => {
                docs.remove(id);
            }
        }
        Ok(())
    }

    /// Every stored (id, sketch) (`None` on disk: the store has them).
    pub(super) fn sketches(&self) -> Option<Vec<(String, Sketch)>> {
        Some(match self {
            State::Disk(_) => return None,
            State::SimHash(docs) => docs
                .index()
                .entries()
                .into_iter()
                .filter_map(|(i, fp)| Some((docs.key(i)?.to_string(), Sketch::Fingerprint(fp))))
                .collect(),
            State::MinHash(docs) => docs
                .entries()
                .map(|(id, s)| (id.to_string(), Sketch::Signature(Signature::from_values(s.to_vec()))))
                .collect(),
        })
    }

    /// Bytes of the in-memory index.
    pub(super) fn memory_bytes(&self) -> usize {
        match self {
            State::SimHash(docs) => docs.memory_bytes(),
            State::MinHash(docs) => docs.memory_bytes(),
            State::Disk(d) => d.memory_bytes(),
        }
    }
}
