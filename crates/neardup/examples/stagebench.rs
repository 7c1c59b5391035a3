//! Where the time of a preset's text stages goes, one thread: MB/s of
//! normalize alone, then with tokenize, with the filters, and the whole
//! signature (medians of RUNS passes).
//!
//! `cargo run --release -p neardup --example stagebench -- FILE.jsonl [RUNS] [PRESET]`

use std::time::Instant;

#[path = "common/corpus.rs"]
mod corpus;

use neardup::{minhash::MinHasher, stages::Stages, tokenize::Tokenizer};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).expect("usage: stagebench FILE.jsonl [RUNS] [PRESET]");
    let runs: usize = args.get(2).map_or(5, |s| s.parse().expect("RUNS"));
    let preset = args.get(3).map_or("minhash", String::as_str);
    let (texts, bytes) = corpus::load(path, usize::MAX);
    let stages = Stages::load(neardup::presets::config(preset).expect("preset")).expect("stages");
    let minhasher = MinHasher::preset("minhash").expect("preset");
    let time = |f: &dyn Fn(&str) -> usize| {
        let mut v = Vec::new();
        for _ in 0..=runs {
            let t0 = Instant::now();
            let mut n = 0;
            for t in &texts {
                n += f(t);
            }
            std::hint::black_box(n);
            v.push(t0.elapsed().as_secs_f64());
        }
        let mid = v.len() / 2;
        bytes as f64 / 1e6 / *v.select_nth_unstable_by(mid, f64::total_cmp).1
    };
    let norm = time(&|t| stages.normalize(t).len());
    let tok = time(&|t| {
        let n = stages.normalize(t);
        let mut v = Vec::new();
        stages.tokenizer().tokenize(&n, &mut v);
        v.len()
    });
    let filt = time(&|t| stages.filtered_tokens(&stages.normalize(t)).len());
    let feats = time(&|t| stages.with_features(t, |f| f.len()));
    let sig = time(&|t| minhasher.signature_counted(t).map_or(0, |s| s.1));
    println!("{preset}: normalize {norm:.1} MB/s, +tokenize {tok:.1}, +filter {filt:.1}, +shingles {feats:.1}; minhash signature {sig:.1}");
}
