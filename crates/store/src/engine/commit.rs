//! Writes: group commit (every queued write applied in order and
//! committed in one durable transaction), bulk loads, deletes.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use neardup::minhash::index::LshIndex;
use neardup::Sketch;
use rayon::prelude::*;

use super::merger::merge_due;
use super::state::State;
use super::{features_of, Engine, Found, Mode, Near, NewDoc, Outcome};
use crate::error::StoreError;
use crate::pending::Pending;
use crate::record::{check_id, DocRecord};
use crate::{Result, Store};

/// A write waiting in the group-commit queue.
pub(super) struct Job {
    docs: Vec<NewDoc>,
    mode: Mode,
    /// What counts as near.
    near: Near,
}

/// Where a group's leader leaves a job's result.
#[derive(Default)]
pub(super) struct Slot(Mutex<Option<Result<Vec<Outcome>>>>);

impl Slot {
    pub(super) fn set(&self, r: Result<Vec<Outcome>>) {
        *self.0.lock().expect("lock") = Some(r);
    }

    pub(super) fn take(&self) -> Option<Result<Vec<Outcome>>> {
        self.0.lock().expect("lock").take()
    }
}

pub(super) fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

impl<S: Store> Engine<S> {
    /// Submits one document (see [`Mode`]); near duplicates are as `near`
    /// says (see [`search`](Self::search); `None` is the engine's
    /// [rule](Self::rule), `Some(k)` within k bits).
    pub fn submit(&self, doc: NewDoc, mode: Mode, near: impl Into<Near>) -> Result<Outcome> {
        Ok(self.submit_batch(vec![doc], mode, near)?.pop().expect("one outcome"))
    }

    /// Submits documents in order, as if one by one, with one durable
    /// commit for all that are stored. With [`Mode::InsertIfUnique`] a
    /// document near an earlier one of the same batch is not stored.
    pub fn submit_batch(&self, docs: Vec<NewDoc>, mode: Mode, near: impl Into<Near>) -> Result<Vec<Outcome>> {
        let near = near.into();
        for d in &docs {
            check_id(&d.id)?;
            self.check(&d.sketch, near)?;
        }
        if mode == Mode::Check {
            self.heal()?;
            let state = self.state.read().expect("lock");
            return docs
                .iter()
                .map(|d| {
                    let matches = self.near_in(&state, &d.sketch, near, d.features)?;
                    Ok(Outcome { inserted: false, matches })
                })
                .collect();
        }
        self.commit_grouped(Job { docs, mode, near })
    }

    /// Group commit: the job joins the queue; whoever holds the writer lock
    /// takes every queued job, applies them in queue order (as if one by
    /// one) and commits them in one durable transaction. Concurrent single
    /// writes thus share one fsync, and each is still acknowledged only
    /// after its commit.
    pub(super) fn commit_grouped(&self, job: Job) -> Result<Vec<Outcome>> {
        self.heal()?;
        let slot = Arc::new(Slot::default());
        self.queue.lock().expect("lock").push((job, slot.clone()));
        {
            let _writer = self.writer.lock().expect("lock");
            // A leader before us may have committed our job while we waited.
            if let Some(done) = slot.take() {
                return done;
            }
            let jobs = std::mem::take(&mut *self.queue.lock().expect("lock"));
            match self.apply(&jobs) {
                Ok(mut outcomes) => {
                    for ((_, s), o) in jobs.iter().zip(outcomes.drain(..)) {
                        s.set(Ok(o));
                    }
                }
                Err(e) => {
                    let (message, kind) = (e.to_string(), e.write_failure());
                    for (_, s) in &jobs {
                        s.set(Err(StoreError::GroupCommit { message: message.clone(), kind }));
                    }
                    slot.set(Err(e));
                }
            }
        }
        // The merges the new segments may be due for run on the merger
        // thread: no reader or writer waits for them.
        self.merger.wake();
        slot.take().expect("our job was in the group")
    }

    /// Decides every job of a group, commits what is stored, then shows it
    /// to readers. Called with the writer lock held.
    pub(super) fn apply(&self, jobs: &[(Job, Arc<Slot>)]) -> Result<Vec<Vec<Outcome>>> {
        let now = now_ms();
        let mut outcomes: Vec<Vec<Outcome>> = Vec::with_capacity(jobs.len());
        let mut records: Vec<DocRecord> = Vec::new();
        // Documents of this group stored so far, to check later ones against.
        let mut group = self.group(jobs);
        {
            let state = self.state.read().expect("lock");
            // The stored documents near each, looked up in parallel (the
            // index does not change under the read lock); then the group's
            // own, in order.
            // (All the group's documents at once: a group of many single
            // writes is one parallel pass, not one per write.)
            let all: Vec<(&NewDoc, Near)> =
                jobs.iter().flat_map(|(job, _)| job.docs.iter().map(move |d| (d, job.near))).collect();
            let lookup = || {
                all.par_iter().map(|&(d, near)| self.near_in(&state, &d.sketch, near, d.features)).collect()
            };
            let stored: Vec<_> = self.on_lookup_threads(lookup);
            let mut stored = stored.into_iter();
            for (job, _) in jobs {
                let mut job_outcomes = Vec::with_capacity(job.docs.len());
                for d in &job.docs {
                    let mut matches = stored.next().expect("one lookup per document")?;
                    for found in self.near_in_group(&group, &records, d, job.near) {
                        matches.retain(|f| f.id != found.id);
                        matches.push(found);
                    }
                    matches.sort_by(|a, b| a.distance.cmp(&b.distance).then_with(|| a.id.cmp(&b.id)));
                    let insert = job.mode == Mode::Insert || matches.is_empty();
                    if insert {
                        group.push(records.len(), &d.sketch);
                        records.push(DocRecord {
                            id: d.id.clone(),
                            sketch: d.sketch.clone(),
                            inserted_at_ms: now,
                            content_hash: d.content_hash,
                            metadata: d.metadata.clone(),
                            features: d.features,
                        });
                    }
                    job_outcomes.push(Outcome { inserted: insert, matches });
                }
                outcomes.push(job_outcomes);
            }
        }
        if !records.is_empty() {
            // Durable first; the index sees the documents only once committed.
            let put = self.store.put(&records);
            let rebuilt = self.after_write(&put, 1)?;
            let written = put?;
            self.commits.fetch_add(1, Ordering::Relaxed);
            if rebuilt {
                return Ok(outcomes);
            }
            let mut state = self.state.write().expect("lock");
            match &mut *state {
                // Bands are filled in parallel; the disk's memory part in one go.
                State::MinHash(_) | State::Disk(_) => state.add_many(&records, &written)?,
                // Segments as single inserts make them (merged in the background).
                State::SimHash(_) => {
                    for (r, &w) in records.iter().zip(&written) {
                        state.add(r, w)?;
                    }
                }
            }
            drop(state);
            self.after_disk_write()?;
        }
        Ok(outcomes)
    }

    /// An empty group for `jobs`: SimHash blocks for the largest radius
    /// any job asks for, or MinHash bands.
    fn group(&self, jobs: &[(Job, Arc<Slot>)]) -> Group {
        match &self.lsh {
            Some(l) => Group::MinHash(LshIndex::new(l.banding, l.permutations)),
            None => {
                let max_k = jobs.iter().map(|(j, _)| j.near.k().unwrap_or_else(|| self.radius.max_k())).max();
                Group::SimHash(Pending::new(self.bits(), max_k.unwrap_or(0)))
            }
        }
    }

    /// The documents of the group so far (`records`) near `d`, by the same
    /// rule as the stored ones.
    fn near_in_group(&self, group: &Group, records: &[DocRecord], d: &NewDoc, near: Near) -> Vec<Found> {
        match (group, &d.sketch) {
            (Group::SimHash(pending), Sketch::Fingerprint(fp)) => {
                let k = near.k().unwrap_or_else(|| self.radius.max_k());
                pending
                    .query(*fp, k)
                    .into_iter()
                    .filter(|&(pos, distance)| {
                        near.k().is_some()
                            || self.radius.accepts(
                                distance,
                                features_of(d.features),
                                features_of(records[pos].features),
                            )
                    })
                    .map(|(pos, distance)| Found { id: records[pos].id.clone(), distance, similarity: None })
                    .collect()
            }
            (Group::MinHash(index), Sketch::Signature(s)) => index
                .query(s.values(), self.threshold(near).unwrap_or(1.0))
                .into_iter()
                .map(|m| Found {
                    id: records[m.id as usize].id.clone(),
                    distance: m.differing,
                    similarity: Some(m.similarity),
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Stores documents without looking for near duplicates (a bulk import;
    /// a document replaces any with its id, the last of equal ids wins), in
    /// one durable commit.
    pub fn load(&self, docs: Vec<NewDoc>) -> Result<()> {
        for d in &docs {
            check_id(&d.id)?;
            self.check(&d.sketch, Near::Rule)?;
        }
        let _writer = self.writer.lock().expect("lock");
        let now = now_ms();
        let records: Vec<DocRecord> = docs
            .into_iter()
            .map(|d| DocRecord {
                id: d.id,
                sketch: d.sketch,
                inserted_at_ms: now,
                content_hash: d.content_hash,
                metadata: d.metadata,
                features: d.features,
            })
            .collect();
        if records.is_empty() {
            return Ok(());
        }
        let put = self.store.put(&records);
        let rebuilt = self.after_write(&put, 1)?;
        let written = put?;
        self.commits.fetch_add(1, Ordering::Relaxed);
        if rebuilt {
            return Ok(());
        }
        self.state.write().expect("lock").add_many(&records, &written)?;
        if self.state.read().expect("lock").disk().is_some() {
            // An on-disk index flushes and merges on the merger thread
            // (writers flush themselves only when it falls behind).
            self.after_disk_write()?;
            self.merger.wake();
        } else {
            // A bulk import merges as it goes (no reader is waiting).
            merge_due(&self.state, &super::merger::NEVER);
        }
        Ok(())
    }

    /// Deletes a document; returns whether it existed.
    pub fn delete(&self, id: &str) -> Result<bool> {
        let _writer = self.writer.lock().expect("lock");
        let deleted = self.store.remove(id);
        let moved = deleted.as_ref().map_or(0, |seq| u64::from(seq.is_some()));
        let rebuilt = self.after_write(&deleted, moved)?;
        let removed = deleted?;
        if let (false, Some(seq)) = (rebuilt, removed) {
            self.state.write().expect("lock").forget(id, seq)?;
            self.after_disk_write()?;
        }
        Ok(removed.is_some())
    }
}

impl<S: Store> Engine<S> {
    /// After a write to an on-disk index (writer lock held): lets the store
    /// forget the tombstones the index no longer needs, and flushes here
    /// when the merger thread has fallen two flushes behind.
    fn after_disk_write(&self) -> Result<()> {
        let (forget, overfull) = {
            let mut state = self.state.write().expect("lock");
            match state.disk_mut() {
                Some(d) => (d.take_forgettable(), d.overfull()),
                None => return Ok(()),
            }
        };
        if !forget.is_empty() {
            self.store.forget_dead(&forget)?;
        }
        if overfull {
            // The merger thread is busy (a long merge): flush here, as
            // back-pressure, and leave merges to it.
            if let Some(d) = self.state.write().expect("lock").disk_mut() {
                d.flush_frozen()?;
                d.freeze();
            }
            self.merger.wake();
        }
        Ok(())
    }
}

/// The documents a group commit is about to store, searchable by the
/// group's later documents: SimHash blocks, or MinHash bands over their
/// positions in the group.
pub(super) enum Group {
    SimHash(Pending),
    MinHash(LshIndex),
}

impl Group {
    /// Adds the sketch of the group's document at `pos` (0, 1, …).
    fn push(&mut self, pos: usize, sketch: &Sketch) {
        match (self, sketch) {
            (Group::SimHash(p), Sketch::Fingerprint(fp)) => p.push(*fp),
            (Group::MinHash(index), Sketch::Signature(s)) => {
                index.insert(u32::try_from(pos).expect("groups below 2^32 documents"), s.values())
            }
            _ => unreachable!("the engine checks every sketch's method"),
        }
    }
}
