//! The on-disk index (segments, a memory part, tombstones, merges) answers
//! exactly what the in-memory index answers, for both methods, through
//! inserts, replacements, deletes, flushes, merges and reopens; a damaged
//! or missing segment is rebuilt from the store, and an index directory
//! of a newer version is refused.

use std::path::Path;

use neardup::minhash::Signature;
use neardup::{Fingerprint, PipelineConfig, Sketch};
use neardup_store::{DiskOptions, Engine, IndexSource, MemoryStore, Mode, Near, NewDoc, RedbStore};
use neardup_testkit::Rng;

const FLUSH: usize = 40;

fn options() -> DiskOptions {
    DiskOptions { flush_rows: FLUSH, memory: 1 << 30 }
}

fn open_disk(dir: &Path, config: &PipelineConfig) -> (Engine<RedbStore>, IndexSource) {
    let store = RedbStore::open(&dir.join("store.redb")).unwrap();
    Engine::open_dir(store, config.clone(), None, &dir.join("index"), options()).unwrap()
}

/// Sketches in families (near duplicates within a family).
struct Gen {
    rng: Rng,
    minhash: bool,
    bases: Vec<Vec<u32>>,
}

impl Gen {
    fn new(seed: u64, minhash: bool) -> Gen {
        let mut rng = Rng(seed);
        let bases = (0..25).map(|_| (0..128).map(|_| rng.next() as u32).collect()).collect();
        Gen { rng, minhash, bases }
    }

    fn sketch(&mut self) -> Sketch {
        let base = self.bases[self.rng.below(self.bases.len() as u64) as usize].clone();
        if self.minhash {
            let change = self.rng.below(60);
            let values: Vec<u32> = base
                .iter()
                .map(|&v| if self.rng.below(100) < change { self.rng.next() as u32 } else { v })
                .collect();
            Sketch::Signature(Signature::from_values(values))
        } else {
            let mut v = u64::from(base[0]) << 32 | u64::from(base[1]);
            for _ in 0..self.rng.below(10) {
                v ^= 1 << self.rng.below(64);
            }
            Sketch::Fingerprint(Fingerprint::from_u64(v))
        }
    }

    fn doc(&mut self, id: u64) -> NewDoc {
        let mut d = NewDoc::new(format!("doc-{id}"), self.sketch());
        d.features = Some(if self.rng.below(2) == 0 { 100 } else { 5_000 });
        d
    }
}

/// Every probe's answers from both engines, by the rule and (SimHash) at
/// a fixed k.
fn same_answers(
    disk: &Engine<RedbStore>,
    memory: &Engine<MemoryStore>,
    gen: &mut Gen,
    minhash: bool,
    when: &str,
) {
    assert_eq!(disk.len(), memory.len(), "{when}: documents");
    let probes: Vec<(Sketch, Option<u32>)> =
        (0..40).map(|probe| (gen.sketch(), Some(if probe % 2 == 0 { 100 } else { 5_000 }))).collect();
    let nears: Vec<Near> =
        if minhash { vec![Near::Rule, Near::AtLeast(0.7)] } else { vec![Near::Rule, Near::Within(3)] };
    for near in nears {
        // Batched on the lookup threads, as `index query` and `dedup
        // --against` ask, and one by one: the same answers.
        let batch: Vec<(&Sketch, Option<u32>)> = probes.iter().map(|(s, f)| (s, *f)).collect();
        let many = disk.search_many(&batch, near, usize::MAX);
        for (probe, ((sketch, features), a_many)) in probes.iter().zip(many).enumerate() {
            let a = disk.search(sketch.clone(), near, *features, usize::MAX).unwrap();
            let b = memory.search(sketch.clone(), near, *features, usize::MAX).unwrap();
            assert_eq!(a, b, "{when}: probe {probe}, {near:?}");
            assert_eq!(a_many.unwrap(), a, "{when}: probe {probe}, {near:?}, batched");
        }
    }
}

fn disk_equals_memory(minhash: bool) {
    let config: PipelineConfig =
        neardup::presets::config(if minhash { "minhash" } else { "default" }).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (mut disk, source) = open_disk(dir.path(), &config);
    assert!(matches!(source, IndexSource::Rebuilt { .. }), "{source}");
    let memory = Engine::open(MemoryStore::new(), config.clone(), config.radius()).unwrap();
    let mut gen = Gen::new(if minhash { 3 } else { 4 }, minhash);
    let mut next = 0u64;
    for round in 0..12 {
        // A batch of new documents, some replacing earlier ones.
        let docs: Vec<NewDoc> = (0..37)
            .map(|i| {
                let id = if i % 7 == 0 && next > 0 { gen.rng.below(next) } else { next + i };
                gen.doc(id)
            })
            .collect();
        next += 37;
        let a = disk.submit_batch(docs.clone(), Mode::Insert, Near::Rule).unwrap();
        let b = memory.submit_batch(docs, Mode::Insert, Near::Rule).unwrap();
        assert_eq!(a, b, "round {round}: the batch's own answers");
        // Check-and-insert.
        let d = gen.doc(next);
        next += 1;
        assert_eq!(
            disk.submit(d.clone(), Mode::InsertIfUnique, Near::Rule).unwrap(),
            memory.submit(d, Mode::InsertIfUnique, Near::Rule).unwrap()
        );
        // Deletes.
        for _ in 0..5 {
            let id = format!("doc-{}", gen.rng.below(next));
            assert_eq!(disk.delete(&id).unwrap(), memory.delete(&id).unwrap());
        }
        same_answers(&disk, &memory, &mut gen, minhash, &format!("round {round}"));
        if round % 4 == 3 {
            drop(disk);
            let (again, source) = open_disk(dir.path(), &config);
            assert!(matches!(source, IndexSource::Segments { .. }), "{source}");
            disk = again;
            same_answers(&disk, &memory, &mut gen, minhash, &format!("round {round}, reopened"));
        }
    }
    // Give the merger its time, then check again.
    for _ in 0..200 {
        let s = disk.disk_stats().unwrap();
        if s.pending_merges == 0 && !s.flush_pending {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let stats = disk.disk_stats().unwrap();
    assert!(stats.counters.flushes >= 5, "{stats:?}");
    assert!(stats.counters.merges > 0, "merges were made: {stats:?}");
    assert!(stats.counters.merged_rows > 0, "{stats:?}");
    same_answers(&disk, &memory, &mut gen, minhash, "after merges");
    assert_eq!(disk.sketches(), memory.sketches());
}

#[test]
fn minhash_on_disk_answers_as_in_memory() {
    disk_equals_memory(true);
}

#[test]
fn simhash_on_disk_answers_as_in_memory() {
    disk_equals_memory(false);
}

/// A segment file of the data directory `dir`.
fn a_segment(dir: &Path) -> std::path::PathBuf {
    std::fs::read_dir(dir.join("index"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "nds"))
        .expect("a segment was written")
}

#[test]
fn a_damaged_or_missing_segment_is_rebuilt_from_the_store() {
    let config = neardup::presets::config("minhash").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut gen = Gen::new(9, true);
    let docs: Vec<NewDoc> = (0..300).map(|i| gen.doc(i)).collect();
    let probes: Vec<Sketch> = docs.iter().step_by(13).map(|d| d.sketch.clone()).collect();
    let answers = |e: &Engine<RedbStore>| -> Vec<_> {
        probes.iter().map(|p| e.search(p.clone(), Near::Rule, None, usize::MAX).unwrap()).collect()
    };
    let want = {
        let (e, _) = open_disk(dir.path(), &config);
        e.load(docs).unwrap();
        answers(&e)
    };
    let segment = a_segment(dir.path());
    // Damaged inside: opened at once, found by the check on the merger
    // thread, rebuilt before the next answer.
    let mut bytes = std::fs::read(&segment).unwrap();
    let n = bytes.len();
    bytes[n / 2] ^= 0xff;
    std::fs::write(&segment, &bytes).unwrap();
    let (e, source) = open_disk(dir.path(), &config);
    assert!(matches!(source, IndexSource::Segments { .. }), "{source}");
    for _ in 0..500 {
        let _ = answers(&e);
        if e.healed().is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(e.healed().is_some_and(|why| why.contains("failed its check")), "{:?}", e.healed());
    assert_eq!(answers(&e), want);
    drop(e);
    // Damaged at the end (another file's checksum): rebuilt on open.
    let segment = a_segment(dir.path());
    let mut bytes = std::fs::read(&segment).unwrap();
    let n = bytes.len();
    bytes[n - 12] ^= 0xff;
    std::fs::write(&segment, &bytes).unwrap();
    let (e, source) = open_disk(dir.path(), &config);
    assert!(
        matches!(&source, IndexSource::Rebuilt { why } if why.contains("not the one the manifest lists")),
        "{source}"
    );
    assert_eq!(answers(&e), want);
    drop(e);
    // Missing.
    let segment = a_segment(dir.path());
    std::fs::remove_file(&segment).unwrap();
    let (e, source) = open_disk(dir.path(), &config);
    assert!(matches!(&source, IndexSource::Rebuilt { why } if why.contains("missing")), "{source}");
    assert_eq!(answers(&e), want);
    drop(e);
    // A newer version's index directory is refused, not rebuilt over.
    let manifest = dir.path().join("index/MANIFEST.json");
    let text = std::fs::read_to_string(&manifest).unwrap().replace("\"version\": 1", "\"version\": 99");
    std::fs::write(&manifest, text).unwrap();
    let store = RedbStore::open(&dir.path().join("store.redb")).unwrap();
    let e =
        Engine::open_dir(store, config, None, &dir.path().join("index"), options()).unwrap_err().to_string();
    assert!(e.contains("newer neardup"), "{e}");
}

/// One step of a random history.
#[derive(Clone, Debug)]
enum Op {
    /// Insert (or replace) these ids with sketches from these seeds.
    Put(Vec<(u8, u64)>),
    Delete(u8),
    Reopen,
    /// Let the merger thread finish what is due.
    Settle,
}

fn op() -> impl proptest::strategy::Strategy<Value = Op> {
    use proptest::prelude::*;
    prop_oneof![
        6 => proptest::collection::vec((any::<u8>(), any::<u64>()), 1..24).prop_map(Op::Put),
        3 => any::<u8>().prop_map(Op::Delete),
        1 => Just(Op::Reopen),
        1 => Just(Op::Settle),
    ]
}

/// A sketch from a seed: a few families, so near duplicates abound.
fn seeded(seed: u64, minhash: bool) -> Sketch {
    let family = seed % 5;
    let mut x = family.wrapping_mul(0x9e37_79b9_7f4a_7c15) + 1;
    if minhash {
        let mut y = seed | 1;
        let values: Vec<u32> = (0..128)
            .map(|_| {
                let base = neardup_testkit::next(&mut x) as u32;
                if neardup_testkit::next(&mut y).is_multiple_of(3) {
                    neardup_testkit::next(&mut y) as u32
                } else {
                    base
                }
            })
            .collect();
        Sketch::Signature(Signature::from_values(values))
    } else {
        let flips = seed >> 8;
        let v = (0..(seed >> 3) % 9)
            .fold(neardup_testkit::next(&mut x), |v, i| v ^ (1 << ((flips >> (i * 6)) % 64)));
        Sketch::Fingerprint(Fingerprint::from_u64(v))
    }
}

/// What a brute-force scan of `stored` answers for `q` by the engine's rule.
fn scan(
    config: &PipelineConfig,
    stored: &std::collections::BTreeMap<String, (Sketch, u32)>,
    q: &Sketch,
    n: u32,
) -> Vec<(String, u32)> {
    let mut out: Vec<(String, u32)> = match q {
        Sketch::Fingerprint(f) => {
            let radius = config.radius();
            stored
                .iter()
                .filter_map(|(id, (s, m))| {
                    let d = (s.fingerprint()?.value() ^ f.value()).count_ones();
                    radius.accepts(d, n as usize, *m as usize).then(|| (id.clone(), d))
                })
                .collect()
        }
        Sketch::Signature(sig) => {
            let lsh = config.lsh.clone().unwrap_or_default();
            let banding = lsh.banding(128).unwrap();
            stored
                .iter()
                .filter_map(|(id, (s, _))| {
                    let other = match s {
                        Sketch::Signature(o) => o.values(),
                        Sketch::Fingerprint(_) => return None,
                    };
                    let shared =
                        (0..banding.bands).any(|b| banding.key(other, b) == banding.key(sig.values(), b));
                    let equal = neardup::minhash::equal_values(other, sig.values());
                    (shared && equal as f64 / 128.0 >= lsh.threshold)
                        .then(|| (id.clone(), (128 - equal) as u32))
                })
                .collect()
        }
    };
    out.sort_by(|a, b| a.1.cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
    out
}

fn history_equals_scan(minhash: bool, ops: Vec<Op>) {
    let config = neardup::presets::config(if minhash { "minhash" } else { "default" }).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let options = DiskOptions { flush_rows: 8, memory: 1 << 30 };
    let open = || {
        let store = RedbStore::open(&dir.path().join("store.redb")).unwrap();
        Engine::open_dir(store, config.clone(), None, &dir.path().join("index"), options).unwrap().0
    };
    let mut engine = open();
    let mut stored = std::collections::BTreeMap::new();
    for op in ops {
        match op {
            Op::Put(docs) => {
                let new: Vec<NewDoc> = docs
                    .iter()
                    .map(|&(id, seed)| {
                        let mut d = NewDoc::new(format!("d{id}"), seeded(seed, minhash));
                        d.features = Some(if seed.is_multiple_of(2) { 100 } else { 3_000 });
                        d
                    })
                    .collect();
                for d in &new {
                    stored.insert(d.id.clone(), (d.sketch.clone(), d.features.unwrap()));
                }
                engine.load(new).unwrap();
            }
            Op::Delete(id) => {
                let id = format!("d{id}");
                assert_eq!(engine.delete(&id).unwrap(), stored.remove(&id).is_some());
            }
            Op::Reopen => {
                drop(engine);
                engine = open();
            }
            Op::Settle => {
                for _ in 0..100 {
                    let s = engine.disk_stats().unwrap();
                    if s.pending_merges == 0 && !s.flush_pending {
                        break;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
            }
        }
        assert_eq!(engine.len(), stored.len());
        for seed in [0u64, 1, 2, 3, 4, 77, 1_000_003] {
            for n in [100u32, 3_000] {
                let q = seeded(seed, minhash);
                let got: Vec<(String, u32)> = engine
                    .search(q.clone(), Near::Rule, Some(n), usize::MAX)
                    .unwrap()
                    .into_iter()
                    .map(|f| (f.id, f.distance))
                    .collect();
                assert_eq!(got, scan(&config, &stored, &q, n), "seed {seed}, {n} features");
            }
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 8, ..Default::default() })]

    #[test]
    fn minhash_histories_answer_as_a_scan(ops in proptest::collection::vec(op(), 1..40)) {
        history_equals_scan(true, ops);
    }

    #[test]
    fn simhash_histories_answer_as_a_scan(ops in proptest::collection::vec(op(), 1..40)) {
        history_equals_scan(false, ops);
    }
}
