//! Faults at the disk, on a real filesystem that fills up: a small tmpfs
//! mounted for the test (needs root; skipped with a note elsewhere, and
//! required where `NEARDUP_REQUIRE_TMPFS=1`, as in CI).
//!
//! The disk fills while documents are written; every failed write says the
//! disk is full and stores nothing; reads go on; space is freed (the tmpfs
//! grown, as an operator would); writes succeed again without a restart;
//! and every acknowledged document is there, in the running engine and in
//! the file reopened.

use std::path::Path;

use neardup::{Fingerprint, Fingerprinter, Radius};
use neardup_store::{Engine, Mode, NewDoc, RedbStore, Store, WriteFailure};
use neardup_testkit::tmpfs::Tmpfs;
use neardup_testkit::Rng;

/// A batch of documents with random fingerprints and 1 KB of metadata each.
fn batch(rng: &mut Rng, first: usize, n: usize) -> Vec<NewDoc> {
    (first..first + n)
        .map(|i| {
            let mut d = NewDoc::new(format!("doc-{i:06}"), Fingerprint::from_u64(rng.next()));
            d.metadata = Some(serde_json::json!({ "pad": "x".repeat(1000) }));
            d
        })
        .collect()
}

fn open(path: &Path) -> Engine<RedbStore> {
    let config = Fingerprinter::preset("default").unwrap().config().clone();
    Engine::open(RedbStore::open(path).unwrap(), config, Radius::fixed(3)).unwrap()
}

#[test]
#[cfg_attr(not(neardup_tmpfs), ignore = "needs root to mount a tmpfs; NEARDUP_REQUIRE_TMPFS=1 requires it")]
fn a_full_disk_stores_nothing_and_writes_resume_once_space_is_freed() {
    let dir = tempfile::tempdir().unwrap();
    let fs = Tmpfs::mount(dir.path(), "3m");
    let path = fs.path().join("store.redb");
    let engine = open(&path);
    let mut rng = Rng(7);
    let (mut acknowledged, mut next) = (Vec::new(), 0);
    // Fill the disk.
    let err = loop {
        let docs = batch(&mut rng, next, 20);
        next += 20;
        let ids: Vec<String> = docs.iter().map(|d| d.id.clone()).collect();
        match engine.submit_batch(docs, Mode::Insert, Some(3)) {
            Ok(_) => acknowledged.extend(ids),
            Err(e) => break e,
        }
        assert!(next < 100_000, "the 3 MB disk never filled");
    };
    assert_eq!(err.write_failure(), Some(WriteFailure::DiskFull), "{err}");
    assert!(err.to_string().contains("disk is full"), "{err}");
    assert!(!err.to_string().contains(&*fs.path().to_string_lossy()), "no server path: {err}");
    assert!(acknowledged.len() > 100, "some writes fit first ({})", acknowledged.len());
    // Still full: later writes fail the same way (not redb's "previous
    // I/O error"), deletes too, and nothing of them is stored.
    for _ in 0..3 {
        let e = engine.submit_batch(batch(&mut rng, next, 20), Mode::Insert, Some(3)).unwrap_err();
        assert_eq!(e.write_failure(), Some(WriteFailure::DiskFull), "{e}");
        next += 20;
    }
    assert!(engine.write_health().is_some_and(|(k, _)| k == WriteFailure::DiskFull));
    // Reads go on.
    assert_eq!(engine.len(), acknowledged.len());
    for id in acknowledged.iter().step_by(97) {
        assert!(engine.get(id).unwrap().is_some(), "{id} readable while the disk is full");
    }
    assert_eq!(engine.get(&format!("doc-{:06}", next - 1)).unwrap(), None);
    // Free space while running: the health check recovers first, then
    // writes succeed again, without a restart.
    fs.resize("32m");
    assert_eq!(engine.write_health(), None, "healthy once the disk takes writes");
    let docs = batch(&mut rng, next, 20);
    acknowledged.extend(docs.iter().map(|d| d.id.clone()));
    engine.submit_batch(docs, Mode::Insert, Some(3)).expect("writes resume without a restart");
    assert!(engine.delete(&acknowledged[0]).unwrap());
    let gone = acknowledged.remove(0);
    assert_eq!(engine.len(), acknowledged.len());
    let (failures, _) = engine.fault_counts();
    assert!(failures >= 4, "{failures} write failures counted");
    assert_eq!(engine.store().reopens(), 1);
    // Nothing acknowledged lost, nothing unacknowledged stored: in the file
    // reopened as well.
    drop(engine);
    let engine = open(&path);
    let mut stored: Vec<String> = engine.sketches().into_iter().map(|(id, _)| id).collect();
    stored.sort();
    acknowledged.sort();
    assert_eq!(stored, acknowledged);
    assert_eq!(engine.get(&gone).unwrap(), None);
}

#[test]
#[cfg_attr(not(neardup_tmpfs), ignore = "needs root to mount a tmpfs; NEARDUP_REQUIRE_TMPFS=1 requires it")]
fn a_full_disk_without_writes_recovers_on_the_next_write() {
    let dir = tempfile::tempdir().unwrap();
    let fs = Tmpfs::mount(dir.path(), "2m");
    let path = fs.path().join("store.redb");
    let store = RedbStore::open(&path).unwrap();
    let mut rng = Rng(9);
    let mut n = 0;
    let err = loop {
        let docs: Vec<_> = batch(&mut rng, n, 50)
            .into_iter()
            .map(|d| neardup_store::DocRecord {
                id: d.id,
                sketch: d.sketch,
                inserted_at_ms: 1,
                content_hash: None,
                metadata: d.metadata,
                features: None,
            })
            .collect();
        n += 50;
        if let Err(e) = store.put(&docs) {
            break e;
        }
    };
    assert_eq!(err.write_failure(), Some(WriteFailure::DiskFull));
    let stored = store.len().unwrap();
    assert_eq!(stored as usize, n - 50, "the failed batch stored nothing");
    fs.resize("16m");
    // No health check in between: the write itself reopens.
    assert!(store.delete("doc-000000").unwrap());
    assert_eq!(store.len().unwrap(), stored - 1);
    assert_eq!(store.write_failing(), None);
}
