//! Fingerprinting throughput per preset (criterion, `Throughput::Bytes`).
//!
//! Uses `../shared/data` when present (the figures in bench/RESULTS.md),
//! otherwise the small slices in `testdata/`.

use std::path::{Path, PathBuf};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use neardup::vote::{Lanes, Vote};
use neardup::{Bits, Fingerprinter};

fn corpus(lang: &str) -> Vec<String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let shared = root.join(format!("../shared/data/docs_{lang}.jsonl"));
    let path = if shared.exists() { shared } else { root.join(format!("testdata/docs_{lang}.jsonl")) };
    read(&path, 4 << 20)
}

fn read(path: &Path, max_bytes: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut bytes = 0;
    for line in std::fs::read_to_string(path).unwrap().lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let t = v["text"].as_str().unwrap().to_owned();
        bytes += t.len();
        out.push(t);
        if bytes > max_bytes {
            break;
        }
    }
    out
}

fn presets(c: &mut Criterion) {
    for (lang, names) in
        [("en", &["default", "python-simhash"][..]), ("zh", &["default", "keywords", "yanyiwu"][..])]
    {
        let docs = corpus(lang);
        let bytes: usize = docs.iter().map(String::len).sum();
        let mut g = c.benchmark_group(format!("fingerprint/{lang}"));
        g.throughput(Throughput::Bytes(bytes as u64));
        g.sample_size(10);
        for name in names {
            let fingerprinter = Fingerprinter::preset(name).unwrap();
            fingerprinter.fingerprint("预热 warm up");
            g.bench_function(*name, |b| {
                b.iter(|| docs.iter().map(|d| fingerprinter.fingerprint(d).value()).fold(0, |a, x| a ^ x))
            });
        }
        g.finish();
    }
}

fn vote(c: &mut Criterion) {
    let votes: Vec<Vote> = (0..10_000u64)
        .map(|i| Vote { hash: u128::from(i.wrapping_mul(0x9e37_79b9_7f4a_7c15)), weight: 1.0 })
        .collect();
    let mut g = c.benchmark_group("vote");
    g.throughput(Throughput::Elements(votes.len() as u64));
    g.bench_function("64-lanes", |b| {
        b.iter(|| {
            let mut l = Lanes::new(Bits::B64);
            l.add(&votes);
            l.fingerprint()
        })
    });
    g.finish();
}

fn startup(c: &mut Criterion) {
    // What a fresh process pays before its first Chinese document: the
    // jieba dictionary is loaded once per process, so this measures a new
    // pipeline only; `bench/fingerprint.sh` times whole processes.
    c.bench_function("build/default", |b| b.iter(|| Fingerprinter::preset("default").unwrap()));
}

criterion_group!(benches, presets, vote, startup);
criterion_main!(benches);
