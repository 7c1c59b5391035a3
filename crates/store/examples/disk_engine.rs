//! The on-disk index at scale, without HTTP: load N generated sketches
//! into a data directory (durable batches), let merges finish, reopen,
//! then search and check-and-insert from every core.
//!
//! ```sh
//! cargo run --release -p neardup-store --example disk_engine -- DIR N minhash|simhash SECONDS load|serve [MEMORY_MB [THREADS]]
//! ```
//!
//! MEMORY_MB is the index's `--memory` (default 256): its memory part and
//! merges, and an eighth of it for redb's page cache. THREADS (after
//! MEMORY_MB) is the number of client threads searching and inserting
//! (default: one per core; a directory larger than the page cache wants
//! more, to keep disk reads in flight, as the server's blocking pool
//! does).
//!
//! `load` makes the directory; `serve` (another process, so that its
//! memory is the open directory's alone) reopens and measures it;
//! `memory` opens the same store with the in-memory index instead (what
//! data directories did before issue 52: rebuilt from the store on every
//! open) and measures it the same way, for a side-by-side ratio.
//!
//! Sketches are generated without text (as `indexbench` does): MinHash
//! signatures of 128 random values (the `minhash` preset's banding),
//! SimHash 64-bit fingerprints (the `default` preset's rule). Every tenth
//! document is a near copy of an earlier one, so searches find something.
//! Prints one JSON line per measurement: load rate, disk bytes per
//! document, open time, RssAnon after open and while serving, searches per
//! second (stored documents' sketches, so every search has an answer) and
//! batched durable insert-if-unique per second.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use neardup::minhash::Signature;
use neardup::{Fingerprint, Sketch};
use neardup_store::{DiskOptions, Engine, Mode, Near, NewDoc, RedbStore};
use neardup_testkit::next;

/// The sketch of document `i` (a pure function of `i`: searches regenerate
/// stored ones); every tenth is a near copy of document `i - 7`.
fn sketch(i: u64, minhash: bool) -> Sketch {
    let (base, edit) = if i % 10 == 9 { (i - 7, true) } else { (i, false) };
    let mut x = base.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x5bd1_e995;
    if minhash {
        let mut v: Vec<u32> = (0..128).map(|_| next(&mut x) as u32).collect();
        if edit {
            for j in (0..128).step_by(8) {
                v[j] ^= 1;
            }
        }
        Sketch::Signature(Signature::from_values(v))
    } else {
        let mut f = next(&mut x);
        if edit {
            f ^= 0b1011;
        }
        Sketch::Fingerprint(Fingerprint::from_u64(f))
    }
}

fn doc(i: u64, minhash: bool) -> NewDoc {
    let mut d = NewDoc::new(format!("https://example.com/page/{i:010}"), sketch(i, minhash));
    d.features = Some(300 + (i % 1000) as u32);
    d
}

fn status_kb(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

/// Bytes allocated on disk (the store's file is sparse at its end).
fn allocated(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).unwrap();
    if m.is_dir() {
        std::fs::read_dir(path).unwrap().flatten().map(|e| allocated(&e.path())).sum()
    } else {
        m.blocks() * 512
    }
}

/// The index's memory (MEMORY_MB, default 256 MB).
fn memory() -> u64 {
    std::env::args().nth(6).map_or(256, |m| m.parse().expect("MEMORY_MB")) << 20
}

fn open(dir: &Path, minhash: bool) -> (Engine<RedbStore>, f64) {
    let config = neardup::presets::config(if minhash { "minhash" } else { "default" }).unwrap();
    let t = Instant::now();
    let cache = (memory() / 8).max(16 << 20) as usize;
    let store = RedbStore::open_with_cache(&dir.join("store.redb"), false, cache).unwrap();
    let options = DiskOptions::for_memory(memory());
    let (engine, _) = Engine::open_dir(store, config, None, &dir.join("index"), options).unwrap();
    (engine, t.elapsed().as_secs_f64())
}

fn settle(engine: &Engine<RedbStore>) {
    loop {
        let s = engine.disk_stats().expect("an on-disk index");
        if s.pending_merges == 0 && !s.flush_pending {
            return;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = Path::new(args.first().expect("DIR")).to_path_buf();
    let n: u64 = args.get(1).map_or(1_000_000, |a| a.parse().expect("N"));
    let minhash = args.get(2).is_none_or(|m| m == "minhash");
    let seconds: u64 = args.get(3).map_or(10, |a| a.parse().expect("SECONDS"));
    let method = if minhash { "minhash" } else { "simhash" };
    // Client threads (default one per core). A search that misses the
    // page cache waits on the disk, so more clients than cores keep more
    // reads in flight — as `neardup serve` does, which answers each
    // request on a blocking thread of its own.
    let threads = match args.get(6) {
        Some(t) => t.parse().expect("THREADS"),
        None => std::thread::available_parallelism().map_or(2, |n| n.get()),
    };
    match args.get(4).map(String::as_str) {
        Some("load") => load(&dir, n, minhash, method),
        Some("serve") => serve(&dir, n, minhash, method, seconds, threads, false),
        Some("memory") => serve(&dir, n, minhash, method, seconds, threads, true),
        _ => panic!("the fifth argument is load, serve or memory"),
    }
}

fn load(dir: &Path, n: u64, minhash: bool, method: &str) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();

    // Load, in durable batches of 50,000.
    let (engine, _) = open(dir, minhash);
    let t = Instant::now();
    for start in (0..n).step_by(50_000) {
        engine.load((start..(start + 50_000).min(n)).map(|i| doc(i, minhash)).collect()).unwrap();
    }
    let load_s = t.elapsed().as_secs_f64();
    settle(&engine);
    let settled_s = t.elapsed().as_secs_f64();
    let stats = engine.disk_stats().unwrap();
    drop(engine);
    let store = allocated(&dir.join("store.redb"));
    let index = allocated(&dir.join("index"));
    println!(
        "{{\"bench\": \"load\", \"method\": \"{method}\", \"docs\": {n}, \"seconds\": {load_s:.1}, \"per_s\": {:.0}, \
         \"merged_by_s\": {settled_s:.1}, \"segments\": {}, \"write_amplification\": {:.2}, \
         \"store_bytes_per_doc\": {:.0}, \"index_bytes_per_doc\": {:.0}, \"disk_bytes_per_doc\": {:.0}}}",
        n as f64 / load_s,
        stats.segments.len(),
        (stats.counters.flushed_rows + stats.counters.merged_rows) as f64 / stats.counters.flushed_rows.max(1) as f64,
        store as f64 / n as f64,
        index as f64 / n as f64,
        (store + index) as f64 / n as f64,
    );
}

fn serve(dir: &Path, n: u64, minhash: bool, method: &str, seconds: u64, threads: usize, in_memory: bool) {
    // Reopen: the time, and the memory it holds.
    let (engine, open_s) = if in_memory {
        let config = neardup::presets::config(if minhash { "minhash" } else { "default" }).unwrap();
        let t = Instant::now();
        let store = RedbStore::open_unverified(&dir.join("store.redb")).unwrap();
        let radius = config.radius();
        (Engine::open(store, config, radius).unwrap(), t.elapsed().as_secs_f64())
    } else {
        open(dir, minhash)
    };
    let index = if in_memory { "memory" } else { "disk" };
    println!(
        "{{\"bench\": \"open\", \"index\": \"{index}\", \"method\": \"{method}\", \"docs\": {n}, \"seconds\": {open_s:.3}, \
         \"rss_anon_mb\": {}}}",
        status_kb("RssAnon:") / 1024
    );
    let engine = Arc::new(engine);

    // Searches of stored documents' sketches, from every core.
    let done = Arc::new(AtomicU64::new(0));
    let found = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let t = Instant::now();
    let workers: Vec<_> = (0..threads as u64)
        .map(|w| {
            let (engine, done, found, stop) = (engine.clone(), done.clone(), found.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut x = w + 1;
                while !stop.load(Ordering::Relaxed) {
                    let i = next(&mut x) % n;
                    let hits = engine.search(sketch(i, minhash), Near::Rule, Some(300), usize::MAX).unwrap();
                    found.fetch_add(u64::from(!hits.is_empty()), Ordering::Relaxed);
                    done.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_secs(seconds));
    stop.store(true, Ordering::Relaxed);
    workers.into_iter().for_each(|w| w.join().unwrap());
    let searches = done.load(Ordering::Relaxed);
    println!(
        "{{\"bench\": \"search\", \"index\": \"{index}\", \"method\": \"{method}\", \"docs\": {n}, \"threads\": {threads}, \"per_s\": {:.0}, \
         \"answered\": {:.3}, \"rss_anon_mb\": {}}}",
        searches as f64 / t.elapsed().as_secs_f64(),
        found.load(Ordering::Relaxed) as f64 / searches.max(1) as f64,
        status_kb("RssAnon:") / 1024
    );

    if in_memory {
        // The in-memory engine writes to the same store: leave it as loaded.
        return;
    }
    // Batched durable insert-if-unique (1,000 new documents a batch) from
    // every core: group commits share fsyncs.
    let done = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let t = Instant::now();
    let workers: Vec<_> = (0..threads as u64)
        .map(|w| {
            let (engine, done, stop) = (engine.clone(), done.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut batch = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let first = n + (w * 1_000_000_000) + batch * 1_000;
                    let docs: Vec<NewDoc> = (first..first + 1_000).map(|i| doc(i, minhash)).collect();
                    let out = engine.submit_batch(docs, Mode::InsertIfUnique, Near::Rule).unwrap();
                    done.fetch_add(out.len() as u64, Ordering::Relaxed);
                    batch += 1;
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_secs(seconds));
    stop.store(true, Ordering::Relaxed);
    workers.into_iter().for_each(|w| w.join().unwrap());
    let s = engine.disk_stats().expect("an on-disk index");
    println!(
        "{{\"bench\": \"insert\", \"method\": \"{method}\", \"docs\": {n}, \"threads\": {threads}, \"batch\": 1000, \
         \"per_s\": {:.0}, \"rss_anon_mb\": {}, \"in_memory\": {}, \"index_memory_mb\": {}, \"segments\": {}}}",
        done.load(Ordering::Relaxed) as f64 / t.elapsed().as_secs_f64(),
        status_kb("RssAnon:") / 1024,
        s.in_memory,
        engine.stats().index_bytes >> 20,
        s.segments.len()
    );
}
