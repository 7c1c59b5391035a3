//! [`Engine`]: a [`Store`] plus the in-memory index over its fingerprints.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex, RwLock};
use std::time::{SystemTime, UNIX_EPOCH};

use std::path::Path;

use neardup::dedup::{Plan, UNKNOWN_FEATURES};
use neardup::index::file::{IndexFile, Names as FileNames};
use neardup::index::{KeyedIndex, TableIndex, TableIndexBuilder};
use neardup::meta::IndexMeta;
use neardup::{Bits, Fingerprint, PipelineConfig, Radius, FORMAT_VERSION};
use serde::Serialize;

use crate::error::StoreError;
use crate::pending::Pending;
use crate::record::{check_id, DocRecord, SnapshotMark, StoreMeta};
use crate::{Result, Store};

/// What [`Engine::submit`] does with a document.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Store it (replacing a document with the same id) and report its near
    /// duplicates.
    Insert,
    /// Only report its near duplicates.
    Check,
    /// Store it only if it has no near duplicate, atomically: of many
    /// concurrent near-identical submissions exactly one is stored.
    InsertIfUnique,
}

/// A document to submit.
#[derive(Clone, Debug, PartialEq)]
pub struct NewDoc {
    /// Its id.
    pub id: String,
    /// Its fingerprint (made with the engine's pipeline).
    pub fingerprint: Fingerprint,
    /// A hash of its text, if it came as text.
    pub content_hash: Option<u64>,
    /// The caller's metadata.
    pub metadata: Option<serde_json::Value>,
    /// How many features voted in its fingerprint
    /// ([`Fingerprinter::fingerprint_counted`](neardup::Fingerprinter::fingerprint_counted)),
    /// if known: the length the pipeline's radius rule needs. Unknown
    /// counts as a long document.
    pub features: Option<u32>,
}

impl NewDoc {
    /// A document with an id and a fingerprint, no hash, no metadata, no
    /// feature count.
    pub fn new(id: impl Into<String>, fingerprint: Fingerprint) -> NewDoc {
        NewDoc { id: id.into(), fingerprint, content_hash: None, metadata: None, features: None }
    }

    /// The document of a text: its fingerprint, feature count and content
    /// hash under `fp`'s pipeline.
    pub fn of_text(id: impl Into<String>, fp: &neardup::Fingerprinter, text: &str) -> NewDoc {
        let (fingerprint, n) = fp.fingerprint_counted(text);
        NewDoc {
            id: id.into(),
            fingerprint,
            content_hash: Some(xxhash_rust::xxh3::xxh3_64(text.as_bytes())),
            metadata: None,
            features: Some(u32::try_from(n).unwrap_or(u32::MAX - 1)),
        }
    }
}

/// A document's feature count as the index keeps it.
fn features_of(f: Option<u32>) -> usize {
    f.map_or(UNKNOWN_FEATURES, |n| n as usize)
}

/// A stored document near a query.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Found {
    /// Its id.
    pub id: String,
    /// The Hamming distance to the query.
    pub distance: u32,
}

/// What [`Engine::submit`] did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Outcome {
    /// Whether the document was stored.
    pub inserted: bool,
    /// The stored documents within k before it was stored (sorted by
    /// distance, then id); for a batch, earlier documents of the same batch
    /// that were stored count too.
    pub matches: Vec<Found>,
}

/// Sizes and settings, for `/v1/stats` and `neardup index stats`.
#[derive(Clone, Debug, Serialize)]
pub struct EngineStats {
    /// Stored documents.
    pub documents: u64,
    /// The fingerprint width.
    pub bits: u32,
    /// The radius pass 0's index tables serve (larger ones scan).
    pub table_k: u32,
    /// The rule requests without a k get (the pipeline's radius unless
    /// the engine was opened with a fixed one), e.g. `k = 8 below 600
    /// features, else 4`.
    pub radius: String,
    /// Bytes of the in-memory index.
    pub index_bytes: u64,
    /// Bytes of the database on disk (0 in memory).
    pub disk_bytes: u64,
    /// The pipeline's id (16 hex digits).
    pub pipeline: String,
    /// Segments of the index (merged in the background after commits; a
    /// persistently high count means the merger falls behind).
    pub segments: u64,
    /// Durable commits of documents since the engine opened (a group commit
    /// counts once, however many writes it carried).
    pub commits: u64,
}

/// The index of the stored documents, keyed by document id.
struct State {
    docs: KeyedIndex<Box<str>>,
}

impl State {
    /// Adds many committed documents with one bulk load of the index.
    fn add_many(&mut self, records: &[DocRecord]) -> Result<()> {
        let items = records
            .iter()
            .map(|r| (Box::from(r.id.as_str()), r.fingerprint, features_of(r.features)))
            .collect();
        Ok(self.docs.insert_batch(items)?)
    }

    fn found(&self, matches: Vec<neardup::index::Match>, limit: usize) -> Vec<Found> {
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

    fn add(&mut self, r: &DocRecord) -> Result<()> {
        Ok(self.docs.insert(r.id.as_str().into(), r.fingerprint, features_of(r.features))?)
    }

    /// The stored documents near `fp`: within `k`, or by the rule for a
    /// document of `features` features.
    fn near(
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

    fn forget(&mut self, id: &str) -> Result<()> {
        self.docs.remove(id)?;
        Ok(())
    }
}

/// A store and the index over it. Reads (search, check, get) run
/// concurrently; writes are serialized, and a write returns only after the
/// store committed it.
pub struct Engine<S: Store> {
    store: S,
    config: PipelineConfig,
    /// The rule requests without a k get.
    radius: Radius,
    state: Arc<RwLock<State>>,
    /// Held by the writer applying a group of queued jobs.
    writer: Mutex<()>,
    /// Writes waiting for the next group commit.
    queue: Mutex<Vec<(Job, Arc<Slot>)>>,
    /// Commits of documents so far.
    commits: AtomicU64,
    /// Wakes the thread that merges index segments.
    merger: Merger,
}

/// A write waiting in the group-commit queue.
struct Job {
    docs: Vec<NewDoc>,
    mode: Mode,
    /// The radius, or `None` for the engine's rule.
    k: Option<u32>,
}

/// Where a group's leader leaves a job's result.
#[derive(Default)]
struct Slot(Mutex<Option<Result<Vec<Outcome>>>>);

impl Slot {
    fn set(&self, r: Result<Vec<Outcome>>) {
        *self.0.lock().expect("lock") = Some(r);
    }

    fn take(&self) -> Option<Result<Vec<Outcome>>> {
        self.0.lock().expect("lock").take()
    }
}

impl<S: Store> std::fmt::Debug for Engine<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine").field("pipeline", &format!("{:016x}", self.config.id())).finish()
    }
}

/// Where an engine's index came from when it opened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IndexSource {
    /// Loaded from a snapshot file that matched the store.
    Snapshot,
    /// Rebuilt from the store, for the reason given.
    Rebuilt {
        /// Why the snapshot was not used.
        why: String,
    },
}

impl std::fmt::Display for IndexSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IndexSource::Snapshot => f.write_str("index loaded from its snapshot"),
            IndexSource::Rebuilt { why } => write!(f, "index rebuilt from the store ({why})"),
        }
    }
}

/// Refuses a store made with another pipeline or format; records them in a
/// new one.
fn check_meta(store: &dyn Store, config: &PipelineConfig) -> Result<()> {
    match store.meta()? {
        Some(m) if m.format_version != FORMAT_VERSION => {
            Err(StoreError::FormatVersion { stored: m.format_version, current: FORMAT_VERSION })
        }
        Some(m) if !m.config.same_fingerprints(config) => Err(StoreError::ConfigMismatch {
            stored: format!("{:016x}", m.config.id()),
            wanted: format!("{:016x}", config.id()),
        }),
        Some(_) => Ok(()),
        None => store.set_meta(&StoreMeta { format_version: FORMAT_VERSION, config: config.clone() }),
    }
}

/// The index of everything in the store, from a full read.
fn rebuild(store: &dyn Store, config: &PipelineConfig, radius: &Radius) -> Result<State> {
    let mut names = Vec::new();
    let mut entries = Vec::new();
    let mut features = Vec::new();
    store.for_each_fingerprint(&mut |id, fp, n| {
        if fp.bits() != config.bits {
            return Err(StoreError::Corrupt {
                id: id.to_owned(),
                message: "fingerprint of the wrong width".into(),
            });
        }
        entries.push((names.len() as u64, fp));
        names.push(Some(Box::from(id)));
        features.push(n.unwrap_or(UNKNOWN_FEATURES as u32));
        Ok(())
    })?;
    let builder = tables(config);
    let index = builder.clone().k(Plan::new(radius).passes()[0].k).build_from(entries)?;
    Ok(State { docs: KeyedIndex::from_slots(index, names, Some(features))?.with_radius(radius, builder)? })
}

/// How the engine's index tables are built (each pass sets its k).
fn tables(config: &PipelineConfig) -> TableIndexBuilder {
    TableIndex::builder().bits(config.bits).expected_len(1_000_000)
}

/// The index from a snapshot file, or why it cannot be used.
fn load_snapshot(
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
    let names: Vec<Option<Box<str>>> = stored.iter().map(|n| (!n.is_empty()).then(|| n.into())).collect();
    // Snapshots written before feature counts were kept have none: the
    // rule then needs the store's (a rebuild).
    if file.features.is_none() && !radius.is_fixed() {
        return Ok(Err("the snapshot has no feature counts".into()));
    }
    let docs = KeyedIndex::from_slots(file.index, names, file.features)
        .and_then(|d| d.with_radius(radius, tables(config)));
    let state = match docs {
        Ok(docs) => State { docs },
        Err(e) => return Ok(Err(format!("the snapshot's index does not match its names: {e}"))),
    };
    let live = state.docs.len();
    if live as u64 != mark.documents || store.len()? != mark.documents {
        return Ok(Err("the snapshot's document count does not match the store".into()));
    }
    Ok(Ok((state, radius.clone())))
}

/// Runs the segment merges the index is due for without blocking readers
/// or writers: plans under a read lock, sorts with no lock, swaps under a
/// short write lock; segments appended meanwhile do not spoil a merge. A
/// merge that cannot be built (it cannot fail on entries that were indexed
/// once) is skipped: answers stay exact, only slower.
fn merge_due(state: &RwLock<State>) {
    loop {
        let mut merged_any = false;
        let passes = state.read().expect("lock").docs.indexes().count();
        for i in 0..passes {
            let plan = state.read().expect("lock").docs.indexes().nth(i).and_then(TableIndex::merge_plan);
            let Some(Ok(merged)) = plan.map(|p| p.build()) else { continue };
            merged_any |=
                state.write().expect("lock").docs.index_mut(i).is_some_and(|t| t.apply_merge(merged));
        }
        if !merged_any {
            return;
        }
    }
}

/// The thread that merges index segments after commits. Wake-ups coalesce;
/// dropping the handle stops the thread (after the merge in progress).
struct Merger {
    wake: Option<mpsc::SyncSender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// Set if the thread could not be started: merges then run inline.
    inline: Option<Arc<RwLock<State>>>,
}

impl Merger {
    fn start(state: Arc<RwLock<State>>) -> Merger {
        let (wake, woken) = mpsc::sync_channel::<()>(1);
        let shared = state.clone();
        let thread = std::thread::Builder::new()
            .name("neardup-merge".into())
            .spawn(move || {
                while woken.recv().is_ok() {
                    merge_due(&shared);
                }
            })
            .ok();
        match thread {
            Some(t) => Merger { wake: Some(wake), thread: Some(t), inline: None },
            None => Merger { wake: None, thread: None, inline: Some(state) },
        }
    }

    /// Asks for a merge pass (a no-op if one is already asked for).
    fn wake(&self) {
        if let Some(w) = &self.wake {
            let _ = w.try_send(());
        } else if let Some(state) = &self.inline {
            merge_due(state);
        }
    }
}

impl Drop for Merger {
    fn drop(&mut self) {
        self.wake = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

impl<S: Store> Engine<S> {
    /// Opens an engine over `store` for fingerprints of `config`, answering
    /// requests without a k by `radius` (usually `config.radius()`, the
    /// pipeline's rule; [`Radius::fixed`] for one k), with index tables for
    /// each pass of its plan (other radii are answered exactly, larger ones
    /// by a scan). A new store records `config`; a store made with another
    /// pipeline or fingerprint format is refused.
    pub fn open(store: S, config: PipelineConfig, radius: Radius) -> Result<Engine<S>> {
        check_meta(&store, &config)?;
        let state = rebuild(&store, &config, &radius)?;
        Ok(Engine::with_state(store, config, radius, state))
    }

    /// Like [`open`](Self::open), but takes the index from the snapshot
    /// file at `snapshot` when it holds exactly the store's current state
    /// (its mark in the store names the store's generation and the file's
    /// checksum, and the file's pipeline and radius are the wanted ones);
    /// otherwise rebuilds it from the store, saying why in the returned
    /// [`IndexSource`].
    ///
    /// The snapshot holds pass 0's tables and the feature counts; the
    /// tables of later passes are built from them on open. `radius: None`
    /// takes the rule the snapshot was written for (for tools that only
    /// read or bulk-load), or the pipeline's when it rebuilds.
    pub fn open_with_snapshot(
        store: S,
        config: PipelineConfig,
        radius: Option<Radius>,
        snapshot: &Path,
    ) -> Result<(Engine<S>, IndexSource)> {
        check_meta(&store, &config)?;
        let (state, radius, source) = match load_snapshot(&store, &config, radius.as_ref(), snapshot)? {
            Ok((state, radius)) => (state, radius, IndexSource::Snapshot),
            Err(why) => {
                let radius = radius.unwrap_or_else(|| config.radius());
                (rebuild(&store, &config, &radius)?, radius, IndexSource::Rebuilt { why })
            }
        };
        Ok((Engine::with_state(store, config, radius, state), source))
    }

    fn with_state(store: S, config: PipelineConfig, radius: Radius, mut state: State) -> Engine<S> {
        for i in 0.. {
            match state.docs.index_mut(i) {
                Some(t) => t.set_deferred_merges(true),
                None => break,
            }
        }
        let state = Arc::new(RwLock::new(state));
        Engine {
            store,
            config,
            radius,
            merger: Merger::start(state.clone()),
            state,
            writer: Mutex::new(()),
            queue: Mutex::default(),
            commits: AtomicU64::new(0),
        }
    }

    /// Writes the index to `path` (atomically) and records its mark in the
    /// store, so that [`open_with_snapshot`](Self::open_with_snapshot) can
    /// skip the rebuild. Writes wait meanwhile. Any later write to the store
    /// makes the snapshot stale (it is then ignored, never wrong).
    pub fn write_snapshot(&self, path: &Path) -> Result<SnapshotMark> {
        let _writer = self.writer.lock().expect("lock");
        let generation = self.store.generation()?;
        let state = self.state.read().expect("lock");
        // Deleted slots keep their place (as empty names) so that the
        // index's internal ids stay the names' positions.
        let names: Vec<&str> = state.docs.slot_keys().map(|k| k.map_or("", |k| &**k)).collect();
        // The pipeline with the rule this engine answers by.
        let pipeline = PipelineConfig { radius: Some(self.radius.clone()), ..self.config.clone() };
        let meta = IndexMeta { pipeline: Some(pipeline), ..IndexMeta::default() };
        let file = IndexFile {
            index: state.docs.index().clone(),
            names: Some(FileNames::from_strings(&names)),
            features: Some(state.docs.slot_features().to_vec()),
            meta: meta.to_value(),
        };
        file.write(path)?;
        let mark = SnapshotMark {
            generation,
            checksum: IndexFile::stored_checksum(path)?,
            documents: state.docs.len() as u64,
        };
        self.store.set_snapshot_mark(&mark)?;
        Ok(mark)
    }

    /// The pipeline its fingerprints come from.
    pub fn config(&self) -> &PipelineConfig {
        &self.config
    }

    /// The rule requests without a k get.
    pub fn radius(&self) -> &Radius {
        &self.radius
    }

    /// The store.
    pub fn store(&self) -> &S {
        &self.store
    }

    fn bits(&self) -> Bits {
        self.config.bits
    }

    fn check(&self, fp: Fingerprint, k: Option<u32>) -> Result<()> {
        if fp.bits() != self.bits() {
            return Err(StoreError::Invalid(format!(
                "a {}-bit fingerprint, but this store holds {}-bit ones",
                fp.bits(),
                self.bits()
            )));
        }
        let k = k.unwrap_or(0);
        if k > self.bits().get() {
            return Err(StoreError::Invalid(format!("k = {k} is more than the {} bits", self.bits())));
        }
        Ok(())
    }

    /// The stored documents near `fp`, nearest first, at most `limit`:
    /// within `k`, or (`k` = `None`) by the engine's [rule](Self::radius)
    /// for a document of `features` features (unknown: a long document).
    pub fn search(
        &self,
        fp: Fingerprint,
        k: Option<u32>,
        features: Option<u32>,
        limit: usize,
    ) -> Result<Vec<Found>> {
        self.check(fp, k)?;
        let state = self.state.read().expect("lock");
        let mut found = state.near(fp, k, features, &self.radius)?;
        found.truncate(limit);
        Ok(found)
    }

    /// Submits one document (see [`Mode`]); near duplicates are those
    /// within `k`, or by the engine's [rule](Self::radius) when `k` is `None`.
    pub fn submit(&self, doc: NewDoc, mode: Mode, k: Option<u32>) -> Result<Outcome> {
        Ok(self.submit_batch(vec![doc], mode, k)?.pop().expect("one outcome"))
    }

    /// Submits documents in order, as if one by one, with one durable
    /// commit for all that are stored. With [`Mode::InsertIfUnique`] a
    /// document near an earlier one of the same batch is not stored.
    pub fn submit_batch(&self, docs: Vec<NewDoc>, mode: Mode, k: Option<u32>) -> Result<Vec<Outcome>> {
        for d in &docs {
            check_id(&d.id)?;
            self.check(d.fingerprint, k)?;
        }
        if mode == Mode::Check {
            let state = self.state.read().expect("lock");
            return docs
                .iter()
                .map(|d| {
                    let matches = state.near(d.fingerprint, k, d.features, &self.radius)?;
                    Ok(Outcome { inserted: false, matches })
                })
                .collect();
        }
        self.commit_grouped(Job { docs, mode, k })
    }

    /// Group commit: the job joins the queue; whoever holds the writer lock
    /// takes every queued job, applies them in queue order (as if one by
    /// one) and commits them in one durable transaction. Concurrent single
    /// writes thus share one fsync, and each is still acknowledged only
    /// after its commit.
    fn commit_grouped(&self, job: Job) -> Result<Vec<Outcome>> {
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
                    let message = e.to_string();
                    for (_, s) in &jobs {
                        s.set(Err(StoreError::GroupCommit(message.clone())));
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
    fn apply(&self, jobs: &[(Job, Arc<Slot>)]) -> Result<Vec<Vec<Outcome>>> {
        let now = now_ms();
        let mut outcomes: Vec<Vec<Outcome>> = Vec::with_capacity(jobs.len());
        let mut records = Vec::new();
        // Documents of this group stored so far, to check later ones against.
        let max_k = jobs.iter().map(|(j, _)| j.k.unwrap_or_else(|| self.radius.max_k())).max().unwrap_or(0);
        let mut group = Pending::new(self.bits().get(), max_k);
        {
            let state = self.state.read().expect("lock");
            for (job, _) in jobs {
                let mut job_outcomes = Vec::with_capacity(job.docs.len());
                for d in &job.docs {
                    let mut matches = state.near(d.fingerprint, job.k, d.features, &self.radius)?;
                    let group_k = job.k.unwrap_or_else(|| self.radius.max_k());
                    for (pos, distance) in group.query(d.fingerprint, group_k) {
                        let id: &DocRecord = &records[pos];
                        let near = job.k.is_some()
                            || self.radius.accepts(
                                distance,
                                features_of(d.features),
                                features_of(id.features),
                            );
                        if !near {
                            continue;
                        }
                        matches.retain(|f| f.id != id.id);
                        matches.push(Found { id: id.id.clone(), distance });
                    }
                    matches.sort_by(|a, b| a.distance.cmp(&b.distance).then_with(|| a.id.cmp(&b.id)));
                    let insert = job.mode == Mode::Insert || matches.is_empty();
                    if insert {
                        group.push(d.fingerprint);
                        records.push(DocRecord {
                            id: d.id.clone(),
                            fingerprint: d.fingerprint,
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
            self.store.put(&records)?;
            self.commits.fetch_add(1, Ordering::Relaxed);
            let mut state = self.state.write().expect("lock");
            for r in &records {
                state.add(r)?;
            }
        }
        Ok(outcomes)
    }

    /// Stores documents without looking for near duplicates (a bulk import;
    /// a document replaces any with its id, the last of equal ids wins), in
    /// one durable commit.
    pub fn load(&self, docs: Vec<NewDoc>) -> Result<()> {
        for d in &docs {
            check_id(&d.id)?;
            self.check(d.fingerprint, None)?;
        }
        let _writer = self.writer.lock().expect("lock");
        let now = now_ms();
        let records: Vec<DocRecord> = docs
            .into_iter()
            .map(|d| DocRecord {
                id: d.id,
                fingerprint: d.fingerprint,
                inserted_at_ms: now,
                content_hash: d.content_hash,
                metadata: d.metadata,
                features: d.features,
            })
            .collect();
        if records.is_empty() {
            return Ok(());
        }
        self.store.put(&records)?;
        self.commits.fetch_add(1, Ordering::Relaxed);
        self.state.write().expect("lock").add_many(&records)?;
        // A bulk import merges as it goes (no reader is waiting).
        merge_due(&self.state);
        Ok(())
    }

    /// The stored document with this id.
    pub fn get(&self, id: &str) -> Result<Option<DocRecord>> {
        self.store.get(id)
    }

    /// Deletes a document; returns whether it existed.
    pub fn delete(&self, id: &str) -> Result<bool> {
        let _writer = self.writer.lock().expect("lock");
        let existed = self.store.delete(id)?;
        self.state.write().expect("lock").forget(id)?;
        Ok(existed)
    }

    /// How many documents are stored.
    pub fn len(&self) -> usize {
        self.state.read().expect("lock").docs.len()
    }

    /// True when nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Sizes and settings.
    pub fn stats(&self) -> EngineStats {
        let state = self.state.read().expect("lock");
        EngineStats {
            documents: state.docs.len() as u64,
            bits: self.bits().get(),
            table_k: state.docs.index().layout().k,
            radius: self.radius.to_string(),
            index_bytes: state.docs.memory_bytes() as u64,
            disk_bytes: self.store.disk_bytes(),
            pipeline: format!("{:016x}", self.config.id()),
            commits: self.commits.load(Ordering::Relaxed),
            segments: state.docs.indexes().map(|t| t.stats().segments as u64).sum(),
        }
    }

    /// Every stored (id, fingerprint), for checks against a linear scan.
    pub fn fingerprints(&self) -> Vec<(String, Fingerprint)> {
        let state = self.state.read().expect("lock");
        let mut v: Vec<(String, Fingerprint)> = state
            .docs
            .index()
            .entries()
            .into_iter()
            .filter_map(|(i, fp)| Some((state.docs.key(i)?.to_string(), fp)))
            .collect();
        v.sort();
        v
    }
}
