//! The in-memory index of the stored documents.

use neardup::index::KeyedIndex;
use neardup::minhash::{KeyedLsh, Signature};
use neardup::{Radius, Sketch};

use super::{features_of, Found, Near};
use crate::error::StoreError;
use crate::record::DocRecord;
use crate::Result;

/// The index of the stored documents, keyed by document id: SimHash
/// tables, or MinHash bands.
pub(super) enum State {
    SimHash(KeyedIndex<Box<str>>),
    MinHash(KeyedLsh<Box<str>>),
}

/// A sketch of the wrong kind: the engine checks every request first.
fn unchecked() -> StoreError {
    StoreError::Invalid("a sketch of the other method reached the index".into())
}

impl State {
    /// The SimHash tables, if this is a SimHash store.
    pub(super) fn simhash(&self) -> Option<&KeyedIndex<Box<str>>> {
        match self {
            State::SimHash(d) => Some(d),
            State::MinHash(_) => None,
        }
    }

    /// The SimHash tables, mutably.
    pub(super) fn simhash_mut(&mut self) -> Option<&mut KeyedIndex<Box<str>>> {
        match self {
            State::SimHash(d) => Some(d),
            State::MinHash(_) => None,
        }
    }

    pub(super) fn len(&self) -> usize {
        match self {
            State::SimHash(d) => d.len(),
            State::MinHash(d) => d.len(),
        }
    }

    /// Adds many committed documents (SimHash: one bulk load of the index;
    /// MinHash: the bands filled in parallel).
    pub(super) fn add_many(&mut self, records: &[DocRecord]) -> Result<()> {
        match self {
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

    pub(super) fn add(&mut self, r: &DocRecord) -> Result<()> {
        match (self, &r.sketch) {
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
    pub(super) fn near(
        &self,
        sketch: &Sketch,
        near: Near,
        features: Option<u32>,
        rule: &Radius,
        threshold: f64,
    ) -> Result<Vec<Found>> {
        let mut out: Vec<Found> = match (self, sketch) {
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

    pub(super) fn forget(&mut self, id: &str) -> Result<()> {
        match self {
            State::SimHash(docs) => {
                docs.remove(id)?;
            }
            State::MinHash(docs) => {
                docs.remove(id);
            }
        }
        Ok(())
    }

    /// Every stored (id, sketch).
    pub(super) fn sketches(&self) -> Vec<(String, Sketch)> {
        match self {
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
        }
    }

    /// Bytes of the in-memory index.
    pub(super) fn memory_bytes(&self) -> usize {
        match self {
            State::SimHash(docs) => docs.memory_bytes(),
            State::MinHash(docs) => docs.memory_bytes(),
        }
    }
}
