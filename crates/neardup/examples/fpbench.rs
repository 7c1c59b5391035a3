//! Fingerprinting throughput on a JSONL corpus, for `bench/fingerprint.sh`.
//!
//! Usage: `cargo run --release --example fpbench -- PRESET FILE.jsonl [THREADS] [RUNS] [MAX_MB]`
//!
//! Loads the texts, warms up (which also loads dictionaries), then times
//! RUNS passes and prints one JSON line with the median MB/s. THREADS
//! `scaling` alternates one-thread and two-thread passes and reports the
//! median of the per-pass speed-ups, so a machine whose speed drifts
//! between passes (shared cores) skews both sides alike.

use std::time::Instant;

#[path = "common/corpus.rs"]
mod corpus;
use corpus::load;

use neardup::Fingerprinter;
use rayon::prelude::*;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: fpbench PRESET FILE.jsonl [THREADS] [RUNS] [MAX_MB]");
        std::process::exit(2);
    }
    let preset = &args[1];
    if args.get(3).is_some_and(|s| s == "scaling") {
        return scaling(&args);
    }
    let threads: usize = args.get(3).map_or(1, |s| s.parse().expect("THREADS"));
    let runs: usize = args.get(4).map_or(5, |s| s.parse().expect("RUNS"));
    let max_bytes: usize = args.get(5).map_or(usize::MAX, |s| s.parse::<usize>().expect("MAX_MB") << 20);
    let (texts, bytes) = load(&args[2], max_bytes);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    let start = Instant::now();
    let fingerprinter = Fingerprinter::preset(preset).expect("preset");
    let _ = fingerprinter.fingerprint("预热 warm-up 中文");
    let load = start.elapsed().as_secs_f64();
    let mut times = Vec::new();
    let mut check = 0u128;
    for pass in 0..runs + 1 {
        let t0 = Instant::now();
        let fps: Vec<_> = pool.install(|| texts.par_iter().map(|t| fingerprinter.fingerprint(t)).collect());
        times.push(t0.elapsed().as_secs_f64());
        if pass == 0 {
            // The same on every SIMD level: the bench script compares them.
            check = fps.iter().fold(0, |a, f| a.rotate_left(5) ^ f.value());
        }
    }
    times.remove(0); // the first pass warms caches
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    println!(
        "{{\"preset\":\"{preset}\",\"threads\":{threads},\"docs\":{},\"bytes\":{bytes},\"median_s\":{median:.4},\"mb_per_s\":{:.2},\"load_s\":{load:.3},\"check\":\"{check:x}\",\"simd\":\"{}\"}}",
        texts.len(),
        bytes as f64 / 1e6 / median,
        neardup::simd::level()
    );
}

fn scaling(args: &[String]) {
    let runs: usize = args.get(4).map_or(9, |s| s.parse().expect("RUNS"));
    let (texts, bytes) = load(&args[2], usize::MAX);
    let fingerprinter = Fingerprinter::preset(&args[1]).expect("preset");
    let pools: Vec<_> =
        [1, 2].iter().map(|&n| rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap()).collect();
    let pass = |pool: &rayon::ThreadPool| {
        let t0 = Instant::now();
        let n = pool.install(|| {
            texts.par_iter().map(|t| fingerprinter.fingerprint(t).value()).filter(|&v| v == 0).count()
        });
        std::hint::black_box(n);
        t0.elapsed().as_secs_f64()
    };
    pass(&pools[1]);
    let mut ratios = Vec::new();
    let mut one = Vec::new();
    let mut two = Vec::new();
    for _ in 0..runs {
        let (a, b) = (pass(&pools[0]), pass(&pools[1]));
        ratios.push(a / b);
        one.push(a);
        two.push(b);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    println!(
        "{{\"preset\":\"{}\",\"scaling\":{:.3},\"mb_per_s_1\":{:.2},\"mb_per_s_2\":{:.2}}}",
        args[1],
        median(&mut ratios),
        bytes as f64 / 1e6 / median(&mut one),
        bytes as f64 / 1e6 / median(&mut two)
    );
}
