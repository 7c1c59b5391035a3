//! Segmentation speed against jieba-rs, one thread, side by side:
//! `cargo run --release -p neardup-jieba --example segbench -- FILE.jsonl [MB]`
//! (the first MB megabytes of texts, 16 by default). Checks that both give
//! the same words, prints MB/s and the ratio (median of 5 runs each), and
//! the time to load each flavour.

use std::time::Instant;

use neardup_jieba::Segmenter;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).expect("usage: segbench FILE.jsonl [MB]");
    let mb: usize = args.get(2).map_or(16, |m| m.parse().expect("MB"));
    let t = Instant::now();
    let jieba = Segmenter::jieba();
    let load_ours = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let _ = Segmenter::cppjieba();
    let load_cpp = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let reference = jieba_rs::Jieba::new();
    let load_theirs = t.elapsed().as_secs_f64();
    println!(
        "load: ours {:.1} ms (cppjieba flavour {:.1} ms), jieba-rs {:.1} ms",
        load_ours * 1e3,
        load_cpp * 1e3,
        load_theirs * 1e3
    );

    let mut texts = Vec::new();
    let mut bytes = 0;
    for line in std::fs::read_to_string(path).expect("read").lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("json");
        let t = v["text"].as_str().expect("text").to_owned();
        bytes += t.len();
        texts.push(t);
        if bytes >= mb << 20 {
            break;
        }
    }
    let mbs = bytes as f64 / 1e6;
    println!("{} texts, {:.1} MB", texts.len(), mbs);
    for hmm in [false, true] {
        let mut words = Vec::new();
        let mut n_ours = 0;
        let mut n_theirs = 0;
        for t in &texts {
            words.clear();
            jieba.cut(t, hmm, &mut words);
            let theirs: Vec<&str> = reference.cut(t, hmm).into_iter().map(|x| x.word).collect();
            assert_eq!(words, theirs, "different words (hmm = {hmm})");
            n_ours += words.len();
            n_theirs += theirs.len();
        }
        assert_eq!(n_ours, n_theirs);
        let mut ours = Vec::new();
        let mut theirs = Vec::new();
        for _ in 0..5 {
            let t = Instant::now();
            let mut n = 0;
            for x in &texts {
                words.clear();
                jieba.cut(x, hmm, &mut words);
                n += words.len();
            }
            ours.push(t.elapsed().as_secs_f64());
            std::hint::black_box(n);
            let t = Instant::now();
            let mut n = 0;
            for x in &texts {
                n += reference.cut(x, hmm).len();
            }
            theirs.push(t.elapsed().as_secs_f64());
            std::hint::black_box(n);
        }
        let (o, th) = (median(ours), median(theirs));
        println!(
            "hmm={hmm:<5} words {n_ours}: ours {:.1} MB/s, jieba-rs {:.1} MB/s, ratio {:.2}x",
            mbs / o,
            mbs / th,
            th / o
        );
    }
}
