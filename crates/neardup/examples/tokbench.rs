use neardup::tokenize::ascii_words;
use neardup::vote::{Lanes, Vote};
use neardup::Bits;
use std::time::Instant;
fn main() {
    let mut texts = Vec::new();
    for line in std::fs::read_to_string("../shared/data/docs_en.jsonl").unwrap().lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let t = v["text"].as_str().unwrap().to_lowercase();
        if t.is_ascii() {
            texts.push(t);
        }
    }
    let bytes: usize = texts.iter().map(|t| t.len()).sum();
    let mut best = f64::MAX;
    let mut ntok = 0;
    for _ in 0..7 {
        let t0 = Instant::now();
        ntok = 0;
        let mut out = Vec::new();
        for t in &texts {
            out.clear();
            ascii_words(t, &mut out);
            ntok += out.len();
        }
        best = best.min(t0.elapsed().as_secs_f64());
    }
    println!(
        "ascii_words: {:.0} MB/s, {} tokens, {:.2} bytes/token, {:.2} ns/token",
        bytes as f64 / 1e6 / best,
        ntok,
        bytes as f64 / ntok as f64,
        best * 1e9 / ntok as f64
    );
    let votes: Vec<Vote> = (0..1_000_000u64)
        .map(|i| Vote { hash: u128::from(i.wrapping_mul(0x9e3779b97f4a7c15)), weight: 1.0 })
        .collect();
    let mut best = f64::MAX;
    for _ in 0..7 {
        let t0 = Instant::now();
        let mut l = Lanes::new(Bits::B64);
        l.add(&votes);
        std::hint::black_box(l.fingerprint());
        best = best.min(t0.elapsed().as_secs_f64());
    }
    println!("vote: {:.2} ns/vote", best * 1e9 / votes.len() as f64);
    let mut best = f64::MAX;
    for _ in 0..7 {
        let t0 = Instant::now();
        let mut x = 0u64;
        for t in &texts {
            for w in t.as_bytes().chunks(20) {
                x ^= xxhash_rust::xxh3::xxh3_64(w);
            }
        }
        std::hint::black_box(x);
        best = best.min(t0.elapsed().as_secs_f64());
    }
    println!("xxh3 20B chunks: {:.2} ns/hash", best * 1e9 / (bytes as f64 / 20.0));
}
