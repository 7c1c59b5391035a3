//! MinHash stores: one suite, run against the redb database and memory.
//! The engine answers like a scan over the stored signatures (a shared
//! band and an estimate at the threshold or above), insert-if-unique has
//! one winner, signatures survive a reopen, and a data directory holds one
//! method.

use std::sync::Arc;

use neardup::minhash::{estimate, Banding, Method, Signature};
use neardup::{Fingerprint, PipelineConfig, Radius, Sketch};
use neardup_store::{Engine, IndexSource, MemoryStore, Mode, Near, NewDoc, RedbStore, Store, StoreError};
use neardup_testkit::Rng;

const K: usize = 128;

fn config() -> PipelineConfig {
    neardup::presets::config("minhash").unwrap()
}

fn banding() -> Banding {
    config().lsh.unwrap_or_default().banding(K).unwrap()
}

fn open<S: Store>(store: S) -> Engine<S> {
    Engine::open(store, config(), Radius::fixed(3)).unwrap()
}

/// A family member: `base` with each value replaced with probability
/// `change` (percent), so members' estimates spread over 0.3–1.
fn member(rng: &mut Rng, base: &[u32], change: u64) -> Signature {
    Signature::from_values(
        base.iter()
            .map(|&v| if rng.below(100) < change { rng.next() as u32 } else { v })
            .collect::<Vec<u32>>(),
    )
}

fn families(rng: &mut Rng, n: usize) -> Vec<Signature> {
    let bases: Vec<Vec<u32>> = (0..30).map(|_| (0..K).map(|_| rng.next() as u32).collect()).collect();
    (0..n)
        .map(|_| {
            let base = &bases[rng.below(bases.len() as u64) as usize];
            let change = rng.below(60);
            member(rng, base, change)
        })
        .collect()
}

fn engine_equals_scan<S: Store>(store: S) {
    let engine = open(store);
    let mut rng = Rng(17);
    let sigs = families(&mut rng, 1500);
    let docs: Vec<NewDoc> =
        sigs.iter().enumerate().map(|(i, s)| NewDoc::new(format!("d{i}"), s.clone())).collect();
    for chunk in docs.chunks(200) {
        engine.submit_batch(chunk.to_vec(), Mode::Insert, Near::Rule).unwrap();
    }
    for i in (0..sigs.len()).step_by(5) {
        assert!(engine.delete(&format!("d{i}")).unwrap());
    }
    // Replace some: their old signatures must be gone from the bands.
    for i in (1..sigs.len()).step_by(11) {
        engine
            .submit(NewDoc::new(format!("d{i}"), sigs[(i * 7) % sigs.len()].clone()), Mode::Insert, None)
            .unwrap();
    }
    let stored = engine.sketches();
    assert_eq!(stored.len(), engine.len());
    let b = banding();
    for q in families(&mut rng, 150) {
        for (near, t) in [(Near::Rule, 0.5), (Near::AtLeast(0.3), 0.3), (Near::AtLeast(0.8), 0.8)] {
            let mut want: Vec<(u32, String)> = stored
                .iter()
                .filter_map(|(id, s)| {
                    let s = s.signature().unwrap().values();
                    let e = estimate(q.values(), s);
                    (b.shares_band(q.values(), s) && e >= t)
                        .then(|| ((K - (e * K as f64).round() as usize) as u32, id.clone()))
                })
                .collect();
            want.sort();
            let got: Vec<(u32, String)> = engine
                .search(q.clone(), near, None, usize::MAX)
                .unwrap()
                .into_iter()
                .map(|f| (f.distance, f.id))
                .collect();
            assert_eq!(got, want, "{near:?}");
        }
    }
}

fn semantics<S: Store>(store: S) {
    let engine = open(store);
    let mut rng = Rng(5);
    let base: Vec<u32> = (0..K).map(|_| rng.next() as u32).collect();
    let close = member(&mut rng, &base, 5);
    let far = Signature::from_values((0..K).map(|_| rng.next() as u32).collect::<Vec<u32>>());
    let a = Signature::from_values(base.clone());
    assert!(engine.submit(NewDoc::new("a", a.clone()), Mode::InsertIfUnique, None).unwrap().inserted);
    let o = engine.submit(NewDoc::new("b", close.clone()), Mode::InsertIfUnique, None).unwrap();
    assert!(!o.inserted);
    let m = &o.matches[0];
    assert_eq!((m.id.as_str(), m.similarity), ("a", Some(estimate(&base, close.values()))));
    assert_eq!(m.distance as usize, K - (m.similarity.unwrap() * K as f64).round() as usize);
    // A higher threshold than the pair's estimate lets it in.
    let o = engine.submit(NewDoc::new("b", close.clone()), Mode::Check, Near::AtLeast(0.999)).unwrap();
    assert!(o.matches.is_empty() && !o.inserted && engine.get("b").unwrap().is_none());
    // A batch: the second is near the first of the same batch.
    let far_close = member(&mut rng, far.values(), 3);
    let out = engine
        .submit_batch(
            vec![NewDoc::new("c", far.clone()), NewDoc::new("d", far_close)],
            Mode::InsertIfUnique,
            None,
        )
        .unwrap();
    assert_eq!(out.iter().map(|o| o.inserted).collect::<Vec<_>>(), [true, false]);
    assert_eq!(out[1].matches[0].id, "c");
    assert_eq!(engine.get("c").unwrap().unwrap().sketch, Sketch::from(far));
    let stats = engine.stats();
    assert_eq!(
        (stats.method, stats.permutations, stats.bits, stats.documents),
        (Method::Minhash, Some(K), None, 2)
    );
    assert_eq!(stats.radius, "Jaccard ≥ 0.5 (32 bands × 4 rows of 128 values)");
    // Bad input: the other method's sketch or rule, a short signature, a
    // threshold out of range. Each names what to send instead.
    let bad = |r: Result<neardup_store::Outcome, StoreError>, what: &str| {
        let e = r.unwrap_err();
        assert!(matches!(e, StoreError::Invalid(_)) && e.to_string().contains(what), "{e}");
    };
    bad(engine.submit(NewDoc::new("f", Fingerprint::from_u64(1)), Mode::Insert, None), "its signature");
    bad(engine.submit(NewDoc::new("f", a.clone()), Mode::Insert, Some(3)), "give a threshold");
    bad(engine.submit(NewDoc::new("f", Signature::from_values(vec![1, 2])), Mode::Insert, None), "2 values");
    bad(engine.submit(NewDoc::new("f", a.clone()), Mode::Check, Near::AtLeast(1.5)), "(0, 1]");
    assert_eq!(engine.len(), 2);
}

fn one_winner<S: Store + 'static>(store: S) {
    let engine = Arc::new(open(store));
    let mut rng = Rng(9);
    let bases: Arc<Vec<Vec<u32>>> =
        Arc::new((0..20).map(|_| (0..K).map(|_| rng.next() as u32).collect()).collect());
    let threads: Vec<_> = (0..8u64)
        .map(|t| {
            let (engine, bases) = (engine.clone(), bases.clone());
            std::thread::spawn(move || {
                let mut rng = Rng(100 + t);
                (0..bases.len())
                    .filter(|&round| {
                        let sig = member(&mut rng, &bases[round], 4);
                        let doc = NewDoc::new(format!("t{t}-r{round}"), sig);
                        engine.submit(doc, Mode::InsertIfUnique, None).unwrap().inserted
                    })
                    .count()
            })
        })
        .collect();
    let wins: usize = threads.into_iter().map(|t| t.join().unwrap()).sum();
    assert_eq!(wins, 20, "one winner per round");
    assert_eq!(engine.len(), 20);
}

#[test]
fn memory_store_conforms() {
    engine_equals_scan(MemoryStore::new());
    semantics(MemoryStore::new());
    one_winner(MemoryStore::new());
}

#[test]
fn redb_store_conforms() {
    let dir = tempfile::tempdir().unwrap();
    let redb = |name: &str| RedbStore::open(&dir.path().join(name)).unwrap();
    engine_equals_scan(redb("scan.redb"));
    semantics(redb("semantics.redb"));
    one_winner(redb("race.redb"));
}

#[test]
fn signatures_survive_a_reopen_and_methods_do_not_mix() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.redb");
    let snapshot = dir.path().join("index.ndx");
    let mut rng = Rng(3);
    let sigs = families(&mut rng, 300);
    let before = {
        let engine = open(RedbStore::open(&path).unwrap());
        let docs = sigs.iter().enumerate().map(|(i, s)| NewDoc::new(format!("d{i}"), s.clone())).collect();
        engine.load(docs).unwrap();
        engine.delete("d7").unwrap();
        assert_eq!(engine.write_snapshot(&snapshot).unwrap(), None, "MinHash stores write no snapshot");
        engine.sketches()
    };
    let (engine, source) =
        Engine::open_with_snapshot(RedbStore::open(&path).unwrap(), config(), None, &snapshot).unwrap();
    assert!(matches!(&source, IndexSource::Rebuilt { why } if why.contains("MinHash")), "{source}");
    assert_eq!(engine.sketches(), before);
    assert_eq!(engine.len(), 299);
    let q = sigs[3].clone();
    assert_eq!(engine.search(q, None, None, 1).unwrap()[0].id, "d3");
    drop(engine);
    // A SimHash pipeline cannot open it, nor a MinHash one a SimHash store.
    let simhash = neardup::presets::config("default").unwrap();
    let e = Engine::open(RedbStore::open(&path).unwrap(), simhash.clone(), Radius::fixed(3)).unwrap_err();
    assert!(matches!(e, StoreError::MethodMismatch { .. }), "{e}");
    assert!(e.to_string().contains("holds MinHash signatures, not SimHash fingerprints"), "{e}");
    let other = dir.path().join("simhash.redb");
    drop(Engine::open(RedbStore::open(&other).unwrap(), simhash, Radius::fixed(3)).unwrap());
    let e = Engine::open(RedbStore::open(&other).unwrap(), config(), Radius::fixed(3)).unwrap_err();
    assert!(e.to_string().contains("holds SimHash fingerprints, not MinHash signatures"), "{e}");
    // Another K is another pipeline.
    let mut k64 = config();
    k64.minhash = Some(neardup::minhash::MinHashConfig { permutations: 64, seed: 0 });
    let e = Engine::open(RedbStore::open(&path).unwrap(), k64, Radius::fixed(3)).unwrap_err();
    assert!(matches!(e, StoreError::ConfigMismatch { .. }), "{e}");
}
