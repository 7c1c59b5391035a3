//! Index benchmarks (run with `--release`; see bench/index.sh).
//!
//! ```text
//! indexbench gen N Q K DIR         write DIR/base.u64 (N random fingerprints) and
//!                                  DIR/queries.u64 (Q queries, half of them within K
//!                                  bits of a stored fingerprint), little-endian
//! indexbench query DIR K [LINEAR]  build a TableIndex over DIR/base.u64, answer the
//!                                  queries one by one (latency) and in a rayon batch;
//!                                  with LINEAR, also a linear scan of the first
//!                                  LINEAR queries. One JSON line on stdout.
//! indexbench pairs N K             all pairs within K of N random fingerprints (plus
//!                                  planted neighbours); one JSON line.
//! ```

use std::time::Instant;

use neardup::index::pairs::{all_pairs, PairsOptions};
use neardup::index::{HammingIndex, LinearScan, TableIndex};
use neardup::Fingerprint;

use neardup_testkit::Rng;

/// A word within `k` bits of `base` (0 to k distinct bits flipped).
fn near(rng: &mut Rng, base: u64, k: u64) -> u64 {
    let d = rng.below(k + 1) as u32;
    rng.flip(u128::from(base), d, 64) as u64
}

fn write_u64s(path: &std::path::Path, v: &[u64]) {
    let bytes: Vec<u8> = v.iter().flat_map(|w| w.to_le_bytes()).collect();
    std::fs::write(path, bytes).unwrap();
}

fn read_u64s(path: &std::path::Path) -> Vec<u64> {
    std::fs::read(path).unwrap().chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect()
}

/// Median GB/s (bytes read + written) of copying `bytes` bytes, three runs.
fn memcpy_gb_per_s(bytes: usize) -> f64 {
    let src = vec![1u8; bytes];
    let mut dst = vec![0u8; bytes];
    let mut rates: Vec<f64> = (0..3)
        .map(|_| {
            let t = Instant::now();
            dst.copy_from_slice(std::hint::black_box(&src));
            std::hint::black_box(&dst);
            2.0 * bytes as f64 / t.elapsed().as_secs_f64() / 1e9
        })
        .collect();
    rates.sort_by(f64::total_cmp);
    rates[1]
}

/// GB/s at which fresh memory is first written (page faults and zeroing,
/// and under a hypervisor the host backing the pages): what a pass into a
/// newly allocated buffer costs, against `memcpy` into pages already there.
fn first_touch_gb_per_s(bytes: usize) -> f64 {
    let mut v: Vec<u8> = Vec::with_capacity(bytes);
    let t = Instant::now();
    // SAFETY: the first `bytes` bytes of the capacity are written here.
    unsafe {
        std::ptr::write_bytes(v.as_mut_ptr(), 1, bytes);
        v.set_len(bytes);
    }
    std::hint::black_box(&v);
    bytes as f64 / t.elapsed().as_secs_f64() / 1e9
}

/// Independent random 8-byte reads per second (median of three passes of
/// 2·10^7) from a buffer of `bytes` bytes on huge pages, as the index's
/// tables are: the most random reads a query stream could get from this
/// machine's memory on one core.
fn random_reads_per_s(bytes: usize) -> f64 {
    let n = bytes / 8;
    let mut v: Vec<u64> = Vec::with_capacity(n);
    // SAFETY: madvise changes only the paging policy of this allocation.
    #[cfg(target_os = "linux")]
    unsafe {
        libc::madvise(v.as_mut_ptr().cast(), n * 8, libc::MADV_HUGEPAGE)
    };
    v.extend((0..n as u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)));
    let mut rates: Vec<f64> = (0..3)
        .map(|pass| {
            let mut x = 0x2545_f491_4f6c_dd1d_u64 ^ pass;
            let mut sum = 0u64;
            let reads = 20_000_000;
            let t = Instant::now();
            for _ in 0..reads {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                sum = sum.wrapping_add(v[(x % n as u64) as usize]);
            }
            std::hint::black_box(sum);
            reads as f64 / t.elapsed().as_secs_f64()
        })
        .collect();
    rates.sort_by(f64::total_cmp);
    rates[1]
}

/// Bytes of this process's anonymous memory on transparent huge pages.
fn anon_huge_bytes() -> u64 {
    let s = std::fs::read_to_string("/proc/self/smaps_rollup").unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix("AnonHugePages:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

fn peak_rss_bytes() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<u64>().ok())
        .unwrap_or(0)
        * 1024
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("gen") => {
            let n: usize = args[2].parse().unwrap();
            let q: usize = args[3].parse().unwrap();
            let k: u64 = args[4].parse().unwrap();
            let dir = std::path::Path::new(&args[5]);
            std::fs::create_dir_all(dir).unwrap();
            let mut rng = Rng(1);
            let base: Vec<u64> = (0..n).map(|_| rng.next()).collect();
            let queries: Vec<u64> = (0..q)
                .map(|i| {
                    if i % 2 == 0 {
                        let b = base[(rng.next() % n as u64) as usize];
                        near(&mut rng, b, k)
                    } else {
                        rng.next()
                    }
                })
                .collect();
            write_u64s(&dir.join("base.u64"), &base);
            write_u64s(&dir.join("queries.u64"), &queries);
        }
        Some("query") => {
            let dir = std::path::Path::new(&args[2]);
            let k: u32 = args[3].parse().unwrap();
            let linear_n: usize = args.get(4).map_or(0, |s| s.parse().unwrap());
            let base = read_u64s(&dir.join("base.u64"));
            let queries: Vec<Fingerprint> =
                read_u64s(&dir.join("queries.u64")).into_iter().map(Fingerprint::from_u64).collect();
            let n = base.len();
            let t = Instant::now();
            let mut builder = TableIndex::builder().k(k);
            if let Ok(m) = std::env::var("INDEXBENCH_BLOCKS") {
                builder = builder.blocks(m.parse().unwrap());
            }
            let index = builder
                .build_from(base.iter().enumerate().map(|(i, &w)| (i as u64, Fingerprint::from_u64(w))))
                .unwrap();
            let build_s = t.elapsed().as_secs_f64();
            let rss_after_build = peak_rss_bytes();
            let huge = anon_huge_bytes();
            // One thread, one query at a time: latency.
            let mut lat: Vec<f64> = Vec::with_capacity(queries.len());
            let mut hits = 0usize;
            let t = Instant::now();
            for &q in &queries {
                let s = Instant::now();
                hits += index.query(q, k).unwrap().len();
                lat.push(s.elapsed().as_secs_f64() * 1e6);
            }
            let single_s = t.elapsed().as_secs_f64();
            lat.sort_by(f64::total_cmp);
            let pct = |p: f64| lat[((lat.len() - 1) as f64 * p) as usize];
            // Batch, all threads.
            let t = Instant::now();
            let batch = index.query_batch(&queries, k).unwrap();
            let batch_s = t.elapsed().as_secs_f64();
            let batch_hits: usize = batch.iter().map(Vec::len).sum();
            assert_eq!(batch_hits, hits);
            // Batch on this one thread: queries' memory reads interleaved.
            let t = Instant::now();
            let local = index.query_batch_local(&queries, k).unwrap();
            let local_s = t.elapsed().as_secs_f64();
            assert_eq!(local, batch, "one thread's batch equals rayon's");
            // The machine's memory bandwidth, for scale: a copy of 1 GiB; and
            // its random reads per second over a buffer as large as the index.
            let mem_gbs = memcpy_gb_per_s(1 << 30);
            let random_reads = random_reads_per_s(index.memory_bytes().min(4 << 30));
            let mut linear = serde_json::Value::Null;
            if linear_n > 0 {
                let mut lin = LinearScan::new(neardup::Bits::B64);
                for (i, &w) in base.iter().enumerate() {
                    lin.insert(i as u64, Fingerprint::from_u64(w)).unwrap();
                }
                let t = Instant::now();
                for &q in &queries[..linear_n] {
                    let a = lin.query(q, k).unwrap();
                    assert_eq!(a, index.query(q, k).unwrap(), "the index equals the linear scan");
                }
                let s = t.elapsed().as_secs_f64();
                linear = serde_json::json!({ "queries": linear_n, "qps": linear_n as f64 / s });
            }
            let bytes = index.memory_bytes();
            println!(
                "{}",
                serde_json::json!({
                    "bench": "query", "n": n, "k": k, "queries": queries.len(), "hits": hits,
                    "layout": index.layout().to_string(), "build_s": build_s,
                    "qps_1thread": queries.len() as f64 / single_s,
                    "p50_us": pct(0.5), "p99_us": pct(0.99), "max_us": lat[lat.len() - 1],
                    "qps_batch": queries.len() as f64 / batch_s, "threads": rayon::current_num_threads(),
                    "qps_batch_1thread": queries.len() as f64 / local_s, "anon_huge_bytes": huge, "memcpy_gb_per_s": mem_gbs, "random_reads_per_s": random_reads,
                    "index_bytes": bytes, "bytes_per_fp": bytes as f64 / n as f64,
                    "peak_rss_bytes": rss_after_build.max(peak_rss_bytes()), "linear": linear,
                })
            );
        }
        Some("pairs") => {
            let n: usize = args[2].parse().unwrap();
            let k: u32 = args[3].parse().unwrap();
            let mut rng = Rng(2);
            let mut v: Vec<u64> = Vec::with_capacity(n);
            while v.len() < n {
                let w = rng.next();
                v.push(w);
                if v.len().is_multiple_of(100) {
                    v.push(near(&mut rng, w, k as u64));
                }
            }
            v.truncate(n);
            let rss0 = peak_rss_bytes();
            let t = Instant::now();
            let ap = all_pairs(&v, 64, k, PairsOptions::default()).unwrap();
            let s = t.elapsed().as_secs_f64();
            println!(
                "{}",
                serde_json::json!({
                    "bench": "pairs", "n": n, "k": k, "seconds": s, "pairs": ap.pair_count(),
                    "layout": ap.layout.map(|l| l.to_string()), "threads": rayon::current_num_threads(),
                    "input_bytes": n * 8, "peak_rss_bytes": peak_rss_bytes(), "rss_before": rss0,
                    "memcpy_gb_per_s": memcpy_gb_per_s(1 << 30),
                    "first_touch_gb_per_s": first_touch_gb_per_s(1 << 30),
                })
            );
        }
        _ => {
            eprintln!("usage: indexbench gen N Q K DIR | query DIR K [LINEAR] | pairs N K");
            std::process::exit(2);
        }
    }
}
