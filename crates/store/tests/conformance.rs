//! One suite, run against every `Store`: the redb database and memory.

use std::sync::Arc;

use neardup::index::{HammingIndex, LinearScan};
use neardup::{Fingerprint, Fingerprinter, PipelineConfig, Radius, Sketch};
use neardup_store::{
    DocRecord, Engine, Found, IndexSource, MemoryStore, Mode, NewDoc, RedbStore, Store, StoreError, StoreMeta,
};

fn config() -> PipelineConfig {
    Fingerprinter::preset("default").unwrap().config().clone()
}

use neardup_testkit::Rng;

fn record(id: &str, v: u64) -> DocRecord {
    DocRecord {
        id: id.into(),
        sketch: Fingerprint::from_u64(v).into(),
        inserted_at_ms: 1,
        content_hash: Some(v),
        metadata: Some(serde_json::json!({"v": v.to_string()})),
        features: Some(v as u32 % 1000),
    }
}

fn store_basics(store: &dyn Store) {
    assert_eq!(store.meta().unwrap(), None);
    let meta = StoreMeta { format_version: neardup::FORMAT_VERSION, config: config() };
    store.set_meta(&meta).unwrap();
    let mut other = meta.clone();
    other.config.bits = neardup::Bits::B128;
    store.set_meta(&other).unwrap();
    assert_eq!(store.meta().unwrap(), Some(meta), "the first metadata stays");
    assert!(store.is_empty().unwrap());
    assert_eq!(store.last_seq().unwrap(), 0);
    let w = store.put(&[record("b", 2), record("a", 1), record("c", 3)]).unwrap();
    assert_eq!(w.iter().map(|w| (w.seq, w.replaced)).collect::<Vec<_>>(), [(1, None), (2, None), (3, None)]);
    let w = store.put(&[record("b", 20)]).unwrap();
    assert_eq!((w[0].seq, w[0].replaced), (4, Some(1)), "a replaced document's number is a tombstone");
    assert_eq!(store.len().unwrap(), 3);
    assert_eq!(store.get("b").unwrap(), Some(record("b", 20)));
    assert_eq!(store.get("zz").unwrap(), None);
    let mut seen = Vec::new();
    store
        .for_each(&mut |d| {
            seen.push(d.id);
            Ok(())
        })
        .unwrap();
    assert_eq!(seen, ["a", "b", "c"], "id order");
    assert_eq!(store.remove("a").unwrap(), Some(2));
    assert!(!store.delete("a").unwrap());
    assert_eq!(store.len().unwrap(), 2);
    // Sequence numbers: the documents after a number, in order; tombstones
    // until forgotten.
    let after = |n: u64| {
        let mut seen = Vec::new();
        store
            .for_each_after(n, &mut |seq, d| {
                seen.push((seq, d.id));
                Ok(())
            })
            .unwrap();
        seen
    };
    assert_eq!(after(0), [(3, "c".to_owned()), (4, "b".to_owned())]);
    assert_eq!(after(3), [(4, "b".to_owned())]);
    assert!(after(4).is_empty());
    assert_eq!(store.dead_seqs().unwrap(), [1, 2]);
    store.forget_dead(&[1]).unwrap();
    assert_eq!(store.dead_seqs().unwrap(), [2]);
    assert_eq!(store.last_seq().unwrap(), 4);
    // A bad id fails the whole batch.
    assert!(store.put(&[record("d", 4), record("", 5)]).is_err());
    assert_eq!(store.get("d").unwrap(), None);
}

fn engine_semantics<S: Store>(store: S) {
    let engine = Engine::open(store, config(), Radius::fixed(3)).unwrap();
    let base = 0x0123_4567_89ab_cdef;
    let doc = |id: &str, v: u64| NewDoc::new(id, Fingerprint::from_u64(v));
    assert!(engine.submit(doc("a", base), Mode::InsertIfUnique, Some(3)).unwrap().inserted);
    // Near a → refused, with a as the match.
    let o = engine.submit(doc("b", base ^ 0b101), Mode::InsertIfUnique, Some(3)).unwrap();
    assert_eq!(
        (o.inserted, o.matches.len(), o.matches[0].id.as_str(), o.matches[0].distance),
        (false, 1, "a", 2)
    );
    // Check never stores; insert always does.
    let o = engine.submit(doc("c", base ^ 1), Mode::Check, Some(3)).unwrap();
    assert!(!o.inserted && o.matches.len() == 1);
    assert!(engine.get("c").unwrap().is_none());
    let o = engine.submit(doc("c", base ^ 1), Mode::Insert, Some(3)).unwrap();
    assert!(o.inserted && o.matches.len() == 1);
    assert_eq!(engine.len(), 2);
    // A batch: the second is near the first of the same batch.
    let far = !base;
    let out = engine
        .submit_batch(
            vec![doc("d", far), doc("e", far ^ 0b11), doc("f", far ^ 0xff00)],
            Mode::InsertIfUnique,
            Some(3),
        )
        .unwrap();
    assert_eq!(out.iter().map(|o| o.inserted).collect::<Vec<_>>(), [true, false, true]);
    assert_eq!(out[1].matches[0].id, "d");
    // Search, limit, delete.
    let hits = engine.search(Fingerprint::from_u64(base), Some(3), None, 10).unwrap();
    assert_eq!(hits.iter().map(|f| f.id.as_str()).collect::<Vec<_>>(), ["a", "c"]);
    assert_eq!(engine.search(Fingerprint::from_u64(base), Some(3), None, 1).unwrap().len(), 1);
    assert!(engine.delete("a").unwrap());
    assert!(!engine.delete("a").unwrap());
    assert_eq!(engine.search(Fingerprint::from_u64(base), Some(3), None, 10).unwrap().len(), 1);
    // Replacing an id moves it.
    engine.submit(doc("c", far ^ 0xf0f0_0000), Mode::Insert, Some(3)).unwrap();
    assert!(engine.search(Fingerprint::from_u64(base), Some(3), None, 10).unwrap().is_empty());
    // Bad input: width, k, id.
    let wide = NewDoc::new("w", Fingerprint::from_u128(1));
    assert!(matches!(engine.submit(wide, Mode::Insert, Some(3)), Err(StoreError::Invalid(_))));
    assert!(matches!(
        engine.search(Fingerprint::from_u64(1), Some(65), None, 1),
        Err(StoreError::Invalid(_))
    ));
    assert!(matches!(engine.submit(doc("", 1), Mode::Insert, Some(3)), Err(StoreError::Invalid(_))));
}

fn engine_equals_linear_scan<S: Store>(store: S) {
    let engine = Engine::open(store, config(), Radius::fixed(3)).unwrap();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let centres: Vec<u64> = (0..20).map(|_| rng.next()).collect();
    let mut docs = Vec::new();
    for i in 0..2000 {
        let c = centres[rng.next() as usize % centres.len()];
        docs.push(NewDoc::new(format!("doc-{i}"), Fingerprint::from_u64(rng.near(c, 10))));
    }
    for chunk in docs.chunks(250) {
        engine.submit_batch(chunk.to_vec(), Mode::Insert, Some(3)).unwrap();
    }
    for i in (0..2000).step_by(7) {
        engine.delete(&format!("doc-{i}")).unwrap();
    }
    let stored = engine.fingerprints();
    let mut scan = LinearScan::new(neardup::Bits::B64);
    for (i, (_, fp)) in stored.iter().enumerate() {
        scan.insert(i as u64, *fp).unwrap();
    }
    for q in 0..200 {
        let c = centres[q % centres.len()];
        let fp = Fingerprint::from_u64(rng.near(c, 6));
        for k in [0, 3, 6] {
            let mut want: Vec<(u32, String)> = scan
                .query(fp, k)
                .unwrap()
                .into_iter()
                .map(|m| (m.distance, stored[m.id as usize].0.clone()))
                .collect();
            want.sort();
            let got: Vec<(u32, String)> = engine
                .search(fp, Some(k), None, usize::MAX)
                .unwrap()
                .into_iter()
                .map(|f| (f.distance, f.id))
                .collect();
            assert_eq!(got, want, "query {q} at k = {k}");
        }
    }
}

fn concurrent_insert_if_unique_has_one_winner<S: Store + 'static>(store: S) {
    let engine = Arc::new(Engine::open(store, config(), Radius::fixed(3)).unwrap());
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let engine = engine.clone();
            std::thread::spawn(move || {
                (0..20)
                    .filter(|round| {
                        let fp = Fingerprint::from_u64(0xdead_beef_0000 + round * 1_000_003 * 0x1_0000_0001);
                        let doc = NewDoc::new(format!("t{t}-r{round}"), fp);
                        engine.submit(doc, Mode::InsertIfUnique, Some(3)).unwrap().inserted
                    })
                    .count()
            })
        })
        .collect();
    let wins: usize = threads.into_iter().map(|t| t.join().unwrap()).sum();
    assert_eq!(wins, 20, "one winner per round");
    assert_eq!(engine.len(), 20);
}

/// Many writers at once (their writes share group commits): every write
/// lands, each caller gets its own document's outcome, and what is stored
/// equals what was acknowledged.
fn concurrent_writers_all_land<S: Store + 'static>(store: S) {
    let engine = Arc::new(Engine::open(store, config(), Radius::fixed(3)).unwrap());
    let threads: Vec<_> = (0..6u64)
        .map(|t| {
            let engine = engine.clone();
            std::thread::spawn(move || {
                let mut rng = Rng(0x1234_5678 + t);
                let mut acked = Vec::new();
                for i in 0..60 {
                    // Far apart: random 64-bit values are within 3 bits with
                    // negligible probability.
                    let doc = NewDoc::new(format!("w{t}-{i}"), Fingerprint::from_u64(rng.next()));
                    if i % 10 == 9 {
                        let batch: Vec<NewDoc> = (0..5)
                            .map(|j| NewDoc::new(format!("w{t}-{i}-b{j}"), Fingerprint::from_u64(rng.next())))
                            .collect();
                        let outcomes =
                            engine.submit_batch(batch.clone(), Mode::InsertIfUnique, Some(3)).unwrap();
                        assert_eq!(outcomes.len(), 5);
                        assert!(outcomes.iter().all(|o| o.inserted && o.matches.is_empty()));
                        acked.extend(batch.into_iter().map(|d| (d.id, d.sketch.fingerprint().unwrap())));
                    }
                    let o = engine.submit(doc.clone(), Mode::InsertIfUnique, Some(3)).unwrap();
                    assert!(o.inserted && o.matches.is_empty(), "{o:?}");
                    // A check of the same fingerprint now finds exactly it.
                    let again = engine.submit(doc.clone(), Mode::Check, Some(0)).unwrap();
                    assert_eq!(
                        again.matches.iter().map(|f| f.id.as_str()).collect::<Vec<_>>(),
                        [doc.id.as_str()]
                    );
                    acked.push((doc.id, doc.sketch.fingerprint().unwrap()));
                }
                acked
            })
        })
        .collect();
    let mut acked: Vec<(String, Fingerprint)> = threads.into_iter().flat_map(|t| t.join().unwrap()).collect();
    acked.sort();
    assert_eq!(acked.len(), 6 * 90);
    assert_eq!(engine.fingerprints(), acked);
    for (id, fp) in &acked {
        assert_eq!(engine.get(id).unwrap().unwrap().sketch, Sketch::from(*fp));
    }
    assert!(engine.stats().commits <= acked.len() as u64);
}

/// `load` (bulk import) replaces equal ids (the last wins, also within one
/// call) and indexes everything; what is searchable equals a linear scan.
fn bulk_load_replaces_and_indexes<S: Store>(store: S) {
    let engine = Engine::open(store, config(), Radius::fixed(3)).unwrap();
    let mut rng = Rng(77);
    let docs: Vec<NewDoc> =
        (0..3000).map(|i| NewDoc::new(format!("d{}", i % 2500), Fingerprint::from_u64(rng.next()))).collect();
    engine.load(docs[..1000].to_vec()).unwrap();
    engine.load(docs[1000..].to_vec()).unwrap();
    assert_eq!(engine.len(), 2500);
    // The last of equal ids wins: d0..d499 come from docs[2500..].
    let mut want: Vec<(String, Fingerprint)> =
        docs[500..].iter().map(|d| (d.id.clone(), d.sketch.fingerprint().unwrap())).collect();
    want.sort();
    assert_eq!(engine.fingerprints(), want);
    for (id, fp) in want.iter().step_by(50) {
        assert_eq!(
            engine.search(*fp, Some(0), None, 10).unwrap(),
            vec![Found { id: id.clone(), distance: 0, similarity: None }]
        );
        assert_eq!(engine.get(id).unwrap().unwrap().sketch, Sketch::from(*fp));
    }
    assert!(matches!(
        engine.load(vec![NewDoc::new("", Fingerprint::from_u64(1))]),
        Err(StoreError::Invalid(_))
    ));
    assert!(matches!(
        engine.load(vec![NewDoc::new("x", Fingerprint::from_u128(1 << 100))]),
        Err(StoreError::Invalid(_))
    ));
}

/// A snapshot is used only while it holds exactly the store's state; a
/// stale, damaged, foreign or missing one is ignored (with the reason) and
/// the index is rebuilt — either way the answers equal the store's.
fn snapshots_are_used_only_when_current(dir: &std::path::Path, open: impl Fn() -> Box<dyn Store>) {
    let snap = dir.join("index.ndx");
    let reopen = |k: u32| {
        let (engine, source) =
            Engine::open_with_snapshot(open(), config(), Some(Radius::fixed(k)), &snap).unwrap();
        (engine, source)
    };
    let (engine, source) = reopen(3);
    assert!(matches!(&source, IndexSource::Rebuilt { why } if why.contains("no snapshot")), "{source}");
    let mut rng = Rng(5);
    engine
        .load((0..500).map(|i| NewDoc::new(format!("s{i}"), Fingerprint::from_u64(rng.next()))).collect())
        .unwrap();
    engine.delete("s7").unwrap();
    engine.delete("s300").unwrap();
    let before = engine.fingerprints();
    let mark = engine.write_snapshot(&snap).unwrap().unwrap();
    assert_eq!(mark.documents, 498);
    drop(engine);

    let (engine, source) = reopen(3);
    assert_eq!(source, IndexSource::Snapshot);
    assert_eq!(engine.fingerprints(), before);
    for (id, fp) in before.iter().step_by(20) {
        assert_eq!(
            engine.search(*fp, Some(3), None, 10).unwrap(),
            vec![Found { id: id.clone(), distance: 0, similarity: None }]
        );
    }
    assert!(engine
        .search(Fingerprint::from_u64(0), Some(64), None, usize::MAX)
        .unwrap()
        .iter()
        .all(|f| f.id != "s7"));
    // Writes after a snapshot-loaded open work, and make the snapshot stale.
    let extra = NewDoc::new("after", Fingerprint::from_u64(rng.next()));
    assert!(engine.submit(extra.clone(), Mode::InsertIfUnique, Some(3)).unwrap().inserted);
    engine.delete("s8").unwrap();
    let after = engine.fingerprints();
    drop(engine);
    let (engine, source) = reopen(3);
    assert!(matches!(&source, IndexSource::Rebuilt { why } if why.contains("changed")), "{source}");
    assert_eq!(engine.fingerprints(), after);

    // A snapshot for another radius is not used.
    engine.write_snapshot(&snap).unwrap();
    drop(engine);
    let (engine, source) = reopen(5);
    assert!(matches!(&source, IndexSource::Rebuilt { why } if why.contains("k = 3")), "{source}");
    assert_eq!(engine.fingerprints(), after);
    assert_eq!(engine.stats().table_k, Some(5));
    engine.write_snapshot(&snap).unwrap();
    drop(engine);
    // Any radius is taken when none is asked for.
    let (engine, source) = Engine::open_with_snapshot(open(), config(), None, &snap).unwrap();
    assert_eq!(source, IndexSource::Snapshot);
    assert_eq!(engine.stats().table_k, Some(5));
    drop(engine);

    // A damaged snapshot is not used.
    let (engine, _) = reopen(3);
    engine.write_snapshot(&snap).unwrap();
    drop(engine);
    let mut bytes = std::fs::read(&snap).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&snap, &bytes).unwrap();
    let (engine, source) = reopen(3);
    assert!(matches!(&source, IndexSource::Rebuilt { why } if why.contains("checksum")), "{source}");
    assert_eq!(engine.fingerprints(), after);
    drop(engine);

    // A missing one neither.
    std::fs::remove_file(&snap).unwrap();
    let (engine, source) = reopen(3);
    assert!(matches!(&source, IndexSource::Rebuilt { why } if why.contains("missing")), "{source}");
    assert_eq!(engine.fingerprints(), after);
}

/// Commits append index segments; the merger thread merges them in the
/// background, so the count stays logarithmic and answers stay exact.
fn segments_are_merged_in_the_background<S: Store>(store: S) {
    let engine = Engine::open(store, config(), Radius::fixed(3)).unwrap();
    let mut rng = Rng(31);
    let mut all = Vec::new();
    for b in 0..40 {
        let docs: Vec<NewDoc> =
            (0..1000).map(|i| NewDoc::new(format!("g{b}-{i}"), Fingerprint::from_u64(rng.next()))).collect();
        all.extend(docs.iter().map(|d| (d.id.clone(), d.sketch.fingerprint().unwrap())));
        engine.submit_batch(docs, Mode::InsertIfUnique, Some(3)).unwrap();
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while engine.stats().segments > 8 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(engine.stats().segments <= 8, "{} segments", engine.stats().segments);
    all.sort();
    assert_eq!(engine.fingerprints(), all);
    for (id, fp) in all.iter().step_by(997) {
        assert_eq!(
            engine.search(*fp, Some(3), None, 10).unwrap(),
            vec![Found { id: id.clone(), distance: 0, similarity: None }]
        );
    }
}

fn config_mismatch_is_refused(store: impl Store) {
    let mut other = config();
    other.bits = neardup::Bits::B128;
    store.set_meta(&StoreMeta { format_version: neardup::FORMAT_VERSION, config: other }).unwrap();
    let e = Engine::open(store, config(), Radius::fixed(3)).unwrap_err();
    assert!(matches!(e, StoreError::ConfigMismatch { .. }), "{e}");
    assert!(e.to_string().contains("configuration it was made with"), "{e}");
}

fn redb(dir: &tempfile::TempDir, name: &str) -> RedbStore {
    RedbStore::open(&dir.path().join(name)).unwrap()
}

#[test]
fn memory_store_conforms() {
    store_basics(&MemoryStore::new());
    engine_semantics(MemoryStore::new());
    engine_equals_linear_scan(MemoryStore::new());
    concurrent_insert_if_unique_has_one_winner(MemoryStore::new());
    concurrent_writers_all_land(MemoryStore::new());
    bulk_load_replaces_and_indexes(MemoryStore::new());
    segments_are_merged_in_the_background(MemoryStore::new());
    let dir = tempfile::tempdir().unwrap();
    let shared = Arc::new(MemoryStore::new());
    snapshots_are_used_only_when_current(dir.path(), || Box::new(shared.clone()));
    config_mismatch_is_refused(MemoryStore::new());
}

#[test]
fn redb_store_conforms() {
    let dir = tempfile::tempdir().unwrap();
    store_basics(&redb(&dir, "basics.redb"));
    engine_semantics(redb(&dir, "semantics.redb"));
    engine_equals_linear_scan(redb(&dir, "scan.redb"));
    concurrent_insert_if_unique_has_one_winner(redb(&dir, "race.redb"));
    concurrent_writers_all_land(redb(&dir, "writers.redb"));
    bulk_load_replaces_and_indexes(redb(&dir, "load.redb"));
    segments_are_merged_in_the_background(redb(&dir, "merge.redb"));
    let path = dir.path().join("snap.redb");
    snapshots_are_used_only_when_current(dir.path(), || Box::new(RedbStore::open(&path).unwrap()));
    config_mismatch_is_refused(redb(&dir, "mismatch.redb"));
}

/// A copy (opening may write to it) of testdata/compat/`data`/store.redb.
fn compat_store(data: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.redb");
    let from = format!("{}/../../testdata/compat/{data}/store.redb", env!("CARGO_MANIFEST_DIR"));
    std::fs::copy(from, &path).unwrap();
    (dir, path)
}

#[test]
fn a_store_written_before_sequence_numbers_gets_them_on_open() {
    let (_dir, path) = compat_store("v0.1-data");
    let store = RedbStore::open(&path).unwrap();
    let n = store.len().unwrap();
    assert!(n > 0);
    assert_eq!(store.last_seq().unwrap(), n, "one number per document, in id order");
    let mut ids = Vec::new();
    store
        .for_each_after(0, &mut |seq, d| {
            ids.push((seq, d.id));
            Ok(())
        })
        .unwrap();
    assert!(ids.windows(2).all(|w| w[0].1 < w[1].1 && w[0].0 + 1 == w[1].0));
    drop(store);
    let again = RedbStore::open(&path).unwrap();
    assert_eq!(again.last_seq().unwrap(), n, "numbered once");
    assert!(again.dead_seqs().unwrap().is_empty());
}

#[test]
fn a_store_of_record_version_3_moves_its_sequence_numbers_into_the_records() {
    // testdata/compat/v0.2-data/store.redb: 64 documents, then two of them
    // replaced (sequence numbers 65 and 66, tombstones for the old ones)
    // and two added (67, 68), written when the numbers lived in a table
    // of their own.
    let (_dir, path) = compat_store("v0.2-data");
    let mut before = Vec::new();
    for round in 0..2 {
        let store = RedbStore::open(&path).unwrap();
        assert_eq!((store.len().unwrap(), store.last_seq().unwrap()), (66, 68));
        assert_eq!(store.dead_seqs().unwrap().len(), 2);
        let mut seqs = Vec::new();
        store
            .for_each_after(0, &mut |seq, d| {
                seqs.push((seq, d.id));
                Ok(())
            })
            .unwrap();
        assert_eq!(seqs.len(), 66);
        assert_eq!(seqs.last().unwrap(), &(68, "new/2".to_owned()));
        if round == 0 {
            before = seqs;
        } else {
            assert_eq!(seqs, before, "the same numbers after the migration");
        }
    }
    // Replacing and removing find the numbers in the records now.
    let store = RedbStore::open(&path).unwrap();
    let mut d = store.get("new/2").unwrap().unwrap();
    d.inserted_at_ms += 1;
    let written = store.put(&[d.clone()]).unwrap();
    assert_eq!((written[0].seq, written[0].replaced), (69, Some(68)));
    assert_eq!(store.get("new/2").unwrap().unwrap(), d);
    assert_eq!(store.remove("new/1").unwrap(), Some(67));
    assert_eq!(store.dead_seqs().unwrap().len(), 4);
}

#[test]
fn redb_store_persists_and_refuses_a_second_opener() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data/store.redb");
    {
        let engine = Engine::open(RedbStore::open(&path).unwrap(), config(), Radius::fixed(3)).unwrap();
        let docs = (0..100u64)
            .map(|i| NewDoc::new(format!("d{i}"), Fingerprint::from_u64(i * 0x0101_0101_0101)))
            .collect();
        engine.submit_batch(docs, Mode::Insert, Some(3)).unwrap();
        engine.delete("d5").unwrap();
        let e = RedbStore::open(&path).unwrap_err().to_string();
        assert!(e.contains("store.redb") && e.contains("stop it first"), "{e}");
    }
    let engine = Engine::open(RedbStore::open(&path).unwrap(), config(), Radius::fixed(3)).unwrap();
    assert_eq!(engine.len(), 99);
    assert!(engine.get("d5").unwrap().is_none());
    assert_eq!(engine.get("d7").unwrap().unwrap().sketch, Fingerprint::from_u64(7 * 0x0101_0101_0101).into());
    let mut other = config();
    other.bits = neardup::Bits::B128;
    drop(engine);
    let e = Engine::open(RedbStore::open(&path).unwrap(), other, Radius::fixed(3)).unwrap_err();
    assert!(matches!(e, StoreError::ConfigMismatch { .. }));
}
