//! The in-memory index of the stored documents.

#[allow(unused_imports)]
use super::*;

/// The index of the stored documents, keyed by document id.
pub(super) struct State {
    pub(super) docs: KeyedIndex<Box<str>>,
}

impl State {
    /// Adds many committed documents with one bulk load of the index.
    pub(super) fn add_many(&mut self, records: &[DocRecord]) -> Result<()> {
        let items = records
            .iter()
            .map(|r| (Box::from(r.id.as_str()), r.fingerprint, features_of(r.features)))
            .collect();
        Ok(self.docs.insert_batch(items)?)
    }

    pub(super) fn found(&self, matches: Vec<neardup::index::Match>, limit: usize) -> Vec<Found> {
        let mut out: Vec<Found> = self
            .docs
            .keyed(matches)
            .into_iter()
            .map(|(id, distance)| Found { id: id.to_string(), distance })
            .collect();
        out.sort_by(|a, b| a.distance.cmp(&b.distance).then_with(|| a.id.cmp(&b.id)));
        out.truncate(limit);
        out
    }

    pub(super) fn add(&mut self, r: &DocRecord) -> Result<()> {
        Ok(self.docs.insert(r.id.as_str().into(), r.fingerprint, features_of(r.features))?)
    }

    /// The stored documents near `fp`: within `k`, or by the rule for a
    /// document of `features` features.
    pub(super) fn near(
        &self,
        fp: Fingerprint,
        k: Option<u32>,
        features: Option<u32>,
        rule: &Radius,
    ) -> Result<Vec<Found>> {
        let matches = match k {
            Some(k) => self.docs.query_slots(fp, k)?,
            None => self.docs.query_rule_slots(fp, features_of(features), rule)?,
        };
        Ok(self.found(matches, usize::MAX))
    }

    pub(super) fn forget(&mut self, id: &str) -> Result<()> {
        self.docs.remove(id)?;
        Ok(())
    }
}
