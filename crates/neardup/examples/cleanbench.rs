//! Times the cleaning jobs' inner loops on one thread: the exact key of a
//! text (XXH3-128, raw and after the pipeline's normalizers), cutting into
//! units and keying them, and a suffix array (`cargo run --release
//! --example cleanbench -- JSONL...`; texts from the "text" field).

use std::time::Instant;

use neardup::clean::substrings::{KeepSpan, Measure, Substrings};
use neardup::clean::{Boilerplate, Unit};
use neardup::dedup::{exact_key, ExactText};
use neardup::detector::Detector;

#[path = "common/corpus.rs"]
mod corpus;
#[path = "common/timing.rs"]
mod timing;

fn median(f: impl FnMut()) -> f64 {
    timing::median_secs(5, f)
}

fn main() {
    let mut texts = Vec::new();
    for path in std::env::args().skip(1) {
        texts.extend(corpus::load(&path, usize::MAX).0);
    }
    let bytes: usize = texts.iter().map(String::len).sum();
    let gbs = |secs: f64| bytes as f64 / secs / 1e9;
    println!("{} texts, {:.1} MB, one thread", texts.len(), bytes as f64 / 1e6);
    let mut sink = 0u128;
    let raw = median(|| texts.iter().for_each(|t| sink ^= exact_key(t)));
    println!("exact key, raw text:        {:.2} GB/s", gbs(raw));
    let d = Detector::preset("minhash").expect("the preset");
    let norm = median(|| texts.iter().for_each(|t| sink ^= d.exact_key(t, ExactText::Normalized)));
    println!("exact key, normalized text: {:.2} GB/s", gbs(norm));
    for unit in [Unit::Paragraph, Unit::Line, Unit::Sentences(3)] {
        let job = Boilerplate::new(unit);
        let secs =
            median(|| texts.iter().for_each(|t| sink ^= job.units(t).keys.first().copied().unwrap_or(0)));
        println!("units and keys, {unit:<12} {:.2} GB/s", gbs(secs));
    }
    let job = Substrings::new(Measure::Bytes(100)).keep(KeepSpan::First);
    let dir = std::env::temp_dir();
    let mut corpus = job.corpus(&dir).expect("a temporary file");
    for t in &texts {
        corpus.push(t).expect("written");
    }
    let corpus = corpus.finish().expect("mapped");
    let t = Instant::now();
    let removal = job.find(&corpus, 8 << 30, &dir).expect("found");
    println!(
        "suffix array and repeats (L = 100 bytes): {:.1} MB/s, {} bytes in repeats",
        bytes as f64 / 1e6 / t.elapsed().as_secs_f64(),
        removal.removed_symbols()
    );
    std::hint::black_box(sink);
}
