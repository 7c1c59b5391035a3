//! Prints a flavour's words of documents, for differential tests against
//! the real libraries (tests/compat/run.sh):
//! `cut jieba|cppjieba|cppjieba-nodejieba [--no-hmm] < docs` (cppjieba:
//! v5.6.7; cppjieba-nodejieba: the one in nodejieba 3.5.8), where each document is its byte
//! length on a line, then its bytes. Each document's words are written
//! separated by U+0001 and ended by U+0002.

use std::io::{BufRead, Read, Write};

use neardup_jieba::{CppjiebaRules, Segmenter};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (seg, rules) = match args.first().map(String::as_str) {
        Some("jieba") => (Segmenter::jieba(), CppjiebaRules::default()),
        Some("cppjieba") => (Segmenter::cppjieba(), CppjiebaRules::V5_6_7),
        Some("cppjieba-nodejieba") => (Segmenter::cppjieba(), CppjiebaRules::Nodejieba3_5_8),
        _ => {
            eprintln!("usage: cut jieba|cppjieba|cppjieba-nodejieba [--no-hmm] < docs");
            std::process::exit(2);
        }
    };
    let hmm = !args.iter().any(|a| a == "--no-hmm");
    let mut input = std::io::stdin().lock();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut line = String::new();
    loop {
        line.clear();
        if input.read_line(&mut line).expect("read") == 0 {
            break;
        }
        let n: usize = line.trim().parse().expect("a byte length");
        let mut buf = vec![0; n];
        input.read_exact(&mut buf).expect("the document's bytes");
        let text = String::from_utf8(buf).expect("UTF-8");
        let mut words = Vec::new();
        seg.cut_with_rules(&text, hmm, rules, &mut words);
        out.write_all(words.join("\u{1}").as_bytes()).expect("write");
        out.write_all(b"\x02").expect("write");
    }
}
