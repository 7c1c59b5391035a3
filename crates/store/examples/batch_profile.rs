use neardup::{Fingerprint, Fingerprinter};
use neardup_store::{Engine, Mode, NewDoc, RedbStore};
use std::time::Instant;

fn main() {
    let dir = std::env::args().nth(1).unwrap();
    let store = RedbStore::open(&std::path::Path::new(&dir).join("store.redb")).unwrap();
    let cfg = Fingerprinter::preset("default").unwrap().config().clone();
    let t = Instant::now();
    let (engine, src) =
        Engine::open_with_snapshot(store, cfg, Some(3), &std::path::Path::new(&dir).join("index.ndx"))
            .unwrap();
    eprintln!("open {:?} {src}", t.elapsed());
    let mut x = 0x1234_5678_9abc_def1u64;
    for round in 0..10 {
        let docs: Vec<NewDoc> = (0..1000)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                NewDoc::new(format!("p{round}-{i}-{x}"), Fingerprint::from_u64(x))
            })
            .collect();
        let t = Instant::now();
        let q: usize = docs.iter().map(|d| engine.search(d.fingerprint, 3, 100).unwrap().len()).sum();
        let tq = t.elapsed();
        let t = Instant::now();
        engine.submit_batch(docs, Mode::InsertIfUnique, 3).unwrap();
        let ts = t.elapsed();
        let recs: Vec<neardup_store::DocRecord> = (0..1000)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                neardup_store::DocRecord {
                    id: format!("z{round}-{i}-{x}"),
                    fingerprint: Fingerprint::from_u64(x),
                    inserted_at_ms: 0,
                    content_hash: None,
                    metadata: None,
                }
            })
            .collect();
        let t = Instant::now();
        use neardup_store::Store;
        engine.store().put(&recs).unwrap();
        eprintln!("queries {tq:?} ({q}), submit {ts:?}, raw put {:?}", t.elapsed());
    }
}
