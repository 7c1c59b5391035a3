//! `dedup --method minhash` at scale, without the text stages: N synthetic
//! signatures (K = 128, the `minhash` preset's banding and threshold)
//! deduplicated by the core's batch `LshDedup`, for issue 17's 10^7 target.
//!
//! Usage: `cargo run --release -p neardup --example lshdedupbench -- [N] [THREADS] [MEMORY_MB] [TMP_DIR]`
//!
//! With MEMORY_MB, the run is out of core as `dedup --memory` makes it:
//! signatures beyond a quarter of it move to a file in TMP_DIR (default
//! the system's temporary folder) and a quarter holds band keys.
//!
//! The records: 80 % distinct random signatures, 15 % near copies of an
//! earlier one (each value replaced with probability 5–40 %, so estimates
//! spread over 0.6–0.95 around the 0.5 threshold's S-curve) and 5 % exact
//! copies. Prints one JSON line: seconds per stage, the peak RSS and the
//! bytes per document it implies, clusters and removed documents.

use std::time::Instant;

use neardup::dedup::{LshDedup, SignatureRecords, SpillTo};
use neardup::minhash::MinHasher;
use neardup_testkit::next;

/// Peak resident memory of this process, in bytes (Linux; 0 elsewhere).
fn peak_rss() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .map_or(0, |kb: u64| kb * 1024)
}

fn main() {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    let tmp = raw.get(3).map_or_else(std::env::temp_dir, std::path::PathBuf::from);
    let args: Vec<usize> = raw.iter().take(3).map(|a| a.parse().expect("numbers")).collect();
    let memory = args.get(2).map(|&mb| (mb as u64) << 20);
    let n = args.first().copied().unwrap_or(10_000_000);
    if let Some(&threads) = args.get(1) {
        rayon::ThreadPoolBuilder::new().num_threads(threads).build_global().expect("one pool");
    }
    let minhasher = MinHasher::preset("minhash").expect("preset");
    let k = minhasher.permutations();
    let t0 = Instant::now();
    let mut records = match memory {
        Some(m) => SignatureRecords::spilling(k, SpillTo { dir: tmp, limit: m / 4 }),
        None => SignatureRecords::new(k),
    };
    records.reserve(n);
    let mut buf = vec![0u32; k];
    let mut x = 7u64;
    let mut sig = vec![0u32; k];
    for i in 0..n {
        let roll = next(&mut x) % 100;
        if i > 0 && roll < 20 {
            let base = (next(&mut x) % i as u64) as u32;
            sig.copy_from_slice(records.read_signature(base, &mut buf).expect("read back"));
            if roll < 15 {
                let change = 5 + next(&mut x) % 36;
                for v in &mut sig {
                    if next(&mut x) % 100 < change {
                        *v = next(&mut x) as u32;
                    }
                }
            }
        } else {
            for v in &mut sig {
                *v = next(&mut x) as u32;
            }
        }
        records.push(&sig, 100, 1000).expect("room in the temporary folder");
    }
    let made_s = t0.elapsed().as_secs_f64();
    let rss_records = peak_rss();
    let t1 = Instant::now();
    let mut dedup = LshDedup::of(&minhasher);
    if let Some(m) = memory {
        dedup = dedup.memory(m / 4);
    }
    let result = dedup.batch(&records).expect("dedup");
    let dedup_s = t1.elapsed().as_secs_f64();
    let peak = peak_rss();
    let removed: usize = result.clusters.iter().map(|c| c.members.len() - 1).sum();
    let stages: Vec<String> = result.timings.iter().map(|(name, s)| format!("\"{name}\": {s:.2}")).collect();
    println!(
        "{{\"docs\": {n}, \"threads\": {}, \"make_s\": {made_s:.2}, \"dedup_s\": {dedup_s:.2}, \"stages_s\": {{{}}}, \
         \"spilled_mb\": {}, \"peak_rss_mb\": {}, \"records_rss_mb\": {}, \"peak_bytes_per_doc\": {}, \"clusters\": {}, \"removed\": {removed}}}",
        rayon::current_num_threads(),
        stages.join(", "),
        records.spilled_bytes() >> 20,
        peak >> 20,
        rss_records >> 20,
        peak / n.max(1) as u64,
        result.clusters.len(),
    );
}
