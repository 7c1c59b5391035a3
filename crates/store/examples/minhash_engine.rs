//! The MinHash store engine without HTTP: how fast insert-if-unique runs at
//! N stored signatures, durable (redb, fsync per commit), single documents
//! from T threads (group commit) and batches of 1,000 from one thread.
//!
//! ```sh
//! cargo run --release -p neardup-store --example minhash_engine -- [N] [SECONDS] [THREADS]
//! ```
//!
//! Loads N random signatures (K = 128, the `minhash` preset) with
//! `Engine::load` into a new store under target/, then runs each load for
//! SECONDS. Random signatures share no band, so every document is stored:
//! the work of a new document (lookups, group check, commit, banding).
//! Prints one JSON line per measurement.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use neardup::minhash::Signature;
use neardup::Radius;
use neardup_store::{Engine, Mode, Near, NewDoc, RedbStore};
use neardup_testkit::next;

fn signature(x: &mut u64) -> Signature {
    Signature::from_values((0..128).map(|_| next(x) as u32).collect::<Vec<u32>>())
}

fn rss_mb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .map(|l| l.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap())
        })
        .unwrap_or(0)
        / 1024
}

fn main() {
    let args: Vec<u64> = std::env::args().skip(1).map(|a| a.parse().expect("numbers")).collect();
    let n = args.first().copied().unwrap_or(1_000_000);
    let seconds = args.get(1).copied().unwrap_or(10);
    let threads = args.get(2).copied().unwrap_or(64);
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/minhash-engine-bench");
    let _ = std::fs::remove_dir_all(&dir);
    let config = neardup::presets::config("minhash").unwrap();
    let engine = Arc::new(
        Engine::open(RedbStore::open(&dir.join("store.redb")).unwrap(), config, Radius::fixed(3)).unwrap(),
    );
    let mut x = 1u64;
    let started = Instant::now();
    for start in (0..n).step_by(100_000) {
        let docs = (start..(start + 100_000).min(n))
            .map(|i| NewDoc::new(format!("d{i}"), signature(&mut x)))
            .collect();
        engine.load(docs).unwrap();
    }
    let load_s = started.elapsed().as_secs_f64();
    let stats = engine.stats();
    println!(
        "{{\"bench\": \"load\", \"docs\": {n}, \"seconds\": {load_s:.2}, \"index_bytes_per_doc\": {}, \"disk_bytes_per_doc\": {}, \"rss_mb\": {}}}",
        stats.index_bytes / n.max(1),
        stats.disk_bytes / n.max(1),
        rss_mb()
    );
    // Batches of 1,000 from one thread.
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let (mut done, mut lat) = (0u64, Vec::new());
    let t = Instant::now();
    while Instant::now() < deadline {
        let docs: Vec<NewDoc> =
            (0..1000).map(|i| NewDoc::new(format!("b{done}-{i}"), signature(&mut x))).collect();
        let t0 = Instant::now();
        let out = engine.submit_batch(docs, Mode::InsertIfUnique, Near::Rule).unwrap();
        lat.push(t0.elapsed().as_secs_f64() * 1e3);
        done += out.iter().filter(|o| o.inserted).count() as u64;
    }
    lat.sort_by(f64::total_cmp);
    println!(
        "{{\"bench\": \"insert-if-unique batches of 1,000, 1 thread\", \"docs_per_s\": {:.0}, \"p50_ms\": {:.1}, \"p99_ms\": {:.1}}}",
        done as f64 / t.elapsed().as_secs_f64(),
        lat[lat.len() / 2],
        lat[lat.len() * 99 / 100]
    );
    // Single documents from many threads (they share group commits).
    let stop = Arc::new(AtomicBool::new(false));
    let count = Arc::new(AtomicU64::new(0));
    let t = Instant::now();
    let handles: Vec<_> = (0..threads)
        .map(|th| {
            let (engine, stop, count) = (engine.clone(), stop.clone(), count.clone());
            std::thread::spawn(move || {
                let mut x = 1000 + th;
                let mut i = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let doc = NewDoc::new(format!("s{th}-{i}"), signature(&mut x));
                    i += 1;
                    if engine.submit(doc, Mode::InsertIfUnique, None).unwrap().inserted {
                        count.fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_secs(seconds));
    stop.store(true, Ordering::Relaxed);
    for h in handles {
        h.join().unwrap();
    }
    println!(
        "{{\"bench\": \"insert-if-unique single, {threads} threads\", \"docs_per_s\": {:.0}, \"rss_mb\": {}}}",
        count.load(Ordering::Relaxed) as f64 / t.elapsed().as_secs_f64(),
        rss_mb()
    );
    drop(engine);
    let _ = std::fs::remove_dir_all(&dir);
}
