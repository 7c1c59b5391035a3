//! MinHash signature throughput on a JSONL corpus, one thread, and the
//! one-permutation estimator against the classic one, for issue 17's notes.
//!
//! Usage: `cargo run --release --example minhashbench -- FILE.jsonl [RUNS] [MAX_MB]`
//!
//! Prints one JSON line: the median MB/s of RUNS passes of the `minhash`
//! preset (text → signature, K = 128, word 3-shingles) and, for
//! comparison, of the `default` SimHash preset over the same texts
//! (skipped with `ONLY_MINHASH=1`, for profiling), and a digest of the
//! signatures (`check`), to show a change left them as they were.

use std::time::Instant;

#[path = "common/corpus.rs"]
mod corpus;

use neardup::minhash::MinHasher;
use neardup::Fingerprinter;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 2 {
        eprintln!("usage: minhashbench FILE.jsonl [RUNS] [MAX_MB]");
        std::process::exit(2);
    }
    let runs: usize = args.get(2).map_or(5, |s| s.parse().expect("RUNS"));
    let max_bytes: usize = args.get(3).map_or(usize::MAX, |s| s.parse::<usize>().expect("MAX_MB") << 20);
    let (texts, bytes) = corpus::load(&args[1], max_bytes);
    let minhasher = MinHasher::preset("minhash").expect("preset");
    let simhash = Fingerprinter::preset("default").expect("preset");
    let (mut mh, mut sh) = (Vec::new(), Vec::new());
    let mut check = 0u64;
    for run in 0..=runs {
        let t0 = Instant::now();
        for t in &texts {
            if let Some((s, _)) = minhasher.signature_counted(t) {
                if run == 0 {
                    // A digest of every value of the first pass.
                    check = s.values().iter().fold(check, |c, &v| c.rotate_left(5) ^ u64::from(v));
                }
            }
        }
        let a = t0.elapsed().as_secs_f64();
        let t0 = Instant::now();
        for t in texts.iter().filter(|_| std::env::var_os("ONLY_MINHASH").is_none()) {
            std::hint::black_box(simhash.fingerprint(t));
        }
        let b = t0.elapsed().as_secs_f64();
        if run > 0 {
            mh.push(a);
            sh.push(b);
        }
    }
    let (mh, sh) = (median(mh), median(sh));
    println!(
        "{{\"docs\":{},\"bytes\":{bytes},\"minhash_mb_per_s\":{:.2},\"simhash_default_mb_per_s\":{:.2},\"check\":\"{check:x}\"}}",
        texts.len(),
        bytes as f64 / 1e6 / mh,
        bytes as f64 / 1e6 / sh
    );
}
