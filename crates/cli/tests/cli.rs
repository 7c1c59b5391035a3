//! Runs the `neardup` binary in temporary directories.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use neardup_testkit::cli::{write, Run};
use neardup_testkit::Rng;
use serde_json::{json, Value};

fn neardup(args: &[&str], dir: &Path, stdin: Option<&[u8]>) -> Run {
    neardup_testkit::cli::run(Path::new(env!("CARGO_BIN_EXE_neardup")), args, dir, stdin)
}

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn testdata(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata").join(name).display().to_string()
}

mod cleaning;
mod dedup_against;
mod dedup_memory;
mod formats;

const EN: &str = "The quick brown fox jumps over the lazy dog near the river bank.";

#[test]
fn fingerprint_files_dirs_and_stdin() {
    let d = tmp();
    write(d.path(), "docs/b.txt", EN.as_bytes());
    write(d.path(), "docs/a.txt", "我们在北京吃烤鸭，天气很好。".as_bytes());
    write(d.path(), "docs/sub/c.txt", b"third document with some words in it");
    let r = neardup(&["fingerprint", "docs"], d.path(), None).ok();
    let ids: Vec<String> = r.jsonl().iter().map(|v| v["id"].as_str().unwrap().to_owned()).collect();
    assert_eq!(ids, ["docs/a.txt", "docs/b.txt", "docs/sub/c.txt"]);
    for v in r.jsonl() {
        assert_eq!(v["fingerprint"].as_str().unwrap().len(), 16);
    }
    let s = neardup(&["fingerprint", "-", "--format", "tsv"], d.path(), Some(EN.as_bytes())).ok();
    let line = s.stdout();
    let (id, hex) = line.trim().split_once('\t').unwrap();
    assert_eq!(id, "-");
    let f = neardup(&["fingerprint", "docs/b.txt"], d.path(), None).ok();
    assert_eq!(f.jsonl()[0]["fingerprint"].as_str().unwrap(), hex, "file and stdin agree");
}

#[test]
fn jsonl_fields_order_and_threads() {
    let d = tmp();
    let corpus = testdata("docs_zh.jsonl");
    let one = neardup(&["fingerprint", &corpus, "-j", "1"], d.path(), None).ok();
    let two = neardup(&["fingerprint", &corpus, "-j", "2"], d.path(), None).ok();
    assert_eq!(one.stdout(), two.stdout(), "output order is input order at any thread count");
    assert_eq!(one.jsonl().len(), 40);
    assert!(one.jsonl()[0]["id"].as_str().unwrap().starts_with("zh/"));
    let mut jsonl = String::new();
    for i in 0..3 {
        jsonl.push_str(&format!("{{\"url\": \"u{i}\", \"body\": \"{EN} {i}\"}}\n"));
    }
    write(d.path(), "in.jsonl", jsonl.as_bytes());
    let r =
        neardup(&["fingerprint", "in.jsonl", "--text-field", "body", "--id-field", "url"], d.path(), None)
            .ok();
    let ids: Vec<String> = r.jsonl().iter().map(|v| v["id"].as_str().unwrap().to_owned()).collect();
    assert_eq!(ids, ["u0", "u1", "u2"]);
    // Without an id field, the id is FILE:LINE; numbers stay numbers.
    write(
        d.path(),
        "n.jsonl",
        format!("{{\"text\": \"{EN}\"}}\n{{\"id\": 7, \"text\": \"{EN}\"}}\n").as_bytes(),
    );
    let r = neardup(&["fingerprint", "n.jsonl"], d.path(), None).ok();
    assert_eq!(r.jsonl()[0]["id"], "n.jsonl:1");
    assert_eq!(r.jsonl()[1]["id"], 7);
}

#[test]
fn presets_and_config_files() {
    let d = tmp();
    write(d.path(), "a.txt", EN.as_bytes());
    let def = neardup(&["fingerprint", "a.txt"], d.path(), None).ok().stdout();
    let shown = neardup(&["config", "show", "default"], d.path(), None).ok().stdout();
    write(d.path(), "my.toml", shown.as_bytes());
    neardup(&["config", "check", "my.toml"], d.path(), None).ok();
    let via_file = neardup(&["fingerprint", "a.txt", "--config", "my.toml"], d.path(), None).ok().stdout();
    assert_eq!(def, via_file);
    let json = neardup(&["config", "show", "yanyiwu", "--json"], d.path(), None).ok().stdout();
    write(d.path(), "y.json", json.as_bytes());
    let c = neardup(&["config", "check", "y.json"], d.path(), None).ok().stdout();
    assert!(c.contains("same as preset yanyiwu"), "{c}");
    for p in ["keywords", "python-simhash", "yanyiwu", "ferd"] {
        let other = neardup(&["fingerprint", "a.txt", "--preset", p], d.path(), None).ok().stdout();
        assert_ne!(def, other, "{p}");
    }
}

#[test]
fn bad_configs_are_usage_errors() {
    let d = tmp();
    write(d.path(), "a.txt", EN.as_bytes());
    neardup(&["fingerprint", "a.txt", "--preset", "nope"], d.path(), None)
        .fails(2, "unknown preset \"nope\"");
    write(d.path(), "bad.toml", b"bits = 64\n[tokenizer]\ntype = \"wordz\"\n");
    neardup(&["fingerprint", "a.txt", "--config", "bad.toml"], d.path(), None).fails(2, "bad.toml");
    neardup(&["config", "check", "bad.toml"], d.path(), None).fails(2, "wordz");
    write(d.path(), "sw.toml", b"tokenizer = { type = \"words\" }\nfilters = [{ type = \"stopwords\", files = [\"missing.txt\"] }]\n");
    neardup(&["config", "check", "sw.toml"], d.path(), None).fails(2, "missing.txt");
    neardup(&["config", "check", "absent.toml"], d.path(), None).fails(2, "absent.toml");
    neardup(&["fingerprint", "--bogus"], d.path(), None).fails(2, "--bogus");
}

#[test]
fn bad_records_fail_with_file_and_line() {
    let d = tmp();
    write(d.path(), "good.txt", EN.as_bytes());
    write(d.path(), "latin1.txt", b"caf\xe9 au lait with more words here");
    neardup(&["fingerprint", "latin1.txt"], d.path(), None).fails(1, "latin1.txt: invalid UTF-8 at byte 3");
    write(d.path(), "empty.txt", b"");
    neardup(&["fingerprint", "empty.txt"], d.path(), None).fails(1, "empty.txt: empty document");
    write(d.path(), "blank.txt", b"  \n\t ");
    neardup(&["fingerprint", "blank.txt"], d.path(), None).fails(1, "blank.txt: empty document");
    write(d.path(), "punct.txt", "，。！？...".as_bytes());
    neardup(&["fingerprint", "punct.txt"], d.path(), None).fails(1, "punct.txt: document has no features");
    write(d.path(), "bin.dat", b"\x7fELF\x00\x01\x02 binary");
    neardup(&["fingerprint", "bin.dat"], d.path(), None).fails(1, "bin.dat: looks binary");
    neardup(&["fingerprint", "nope.txt"], d.path(), None).fails(1, "nope.txt: cannot open");
    // A missing input is named as such, not as a bad record to skip, even
    // under --on-error skip, and nothing is read.
    let run = neardup(&["dedup", "good.txt", "nope.txt", "--on-error", "skip", "-o", "o"], d.path(), None);
    assert_eq!(run.code(), 1);
    assert!(
        run.stderr().contains("no such file") && !run.stderr().contains("--on-error"),
        "{}",
        run.stderr()
    );
    assert!(!d.path().join("o").exists());
    neardup(&["fingerprint", "good.txt", "--max-doc-bytes", "10"], d.path(), None)
        .fails(1, "over the limit of 10");
    let lines = format!(
        "{{\"text\": \"{EN}\"}}\nnot json\n{{\"text\": 5}}\n{{\"body\": \"x\"}}\n[1]\n{{\"text\": \"{EN}\", \"id\": [1]}}\n\n"
    );
    write(d.path(), "m.jsonl", lines.as_bytes());
    let r = neardup(&["fingerprint", "m.jsonl"], d.path(), None).fails(1, "m.jsonl:2: malformed JSON");
    assert_eq!(r.jsonl().len(), 1, "the good record before the bad one is written");
    let r = neardup(&["fingerprint", "m.jsonl", "--on-error", "skip"], d.path(), None).ok();
    assert_eq!(r.jsonl().len(), 1);
    let e = r.stderr();
    assert!(e.contains("m.jsonl:3: field \"text\" is a number, not a string"), "{e}");
    assert!(e.contains("m.jsonl:4: no field \"text\""), "{e}");
    assert!(e.contains("m.jsonl:5: expected a JSON object"), "{e}");
    assert!(e.contains("m.jsonl:6: field \"id\" is an array"), "{e}");
    assert!(e.contains("skipped 5 of 6 records"), "{e}");
    write(d.path(), "bad.jsonl", b"{\"text\": \"caf\xe9\"}\n");
    neardup(&["fingerprint", "bad.jsonl"], d.path(), None).fails(1, "bad.jsonl:1: invalid UTF-8");
    neardup(&["fingerprint", "m.jsonl", "--id-field", "url"], d.path(), None).fails(1, "no field \"url\"");
}

#[test]
fn features_show_what_voted() {
    let d = tmp();
    write(d.path(), "a.txt", "今天天气很好，我们去公园散步吧".as_bytes());
    let r = neardup(&["fingerprint", "a.txt", "--preset", "keywords", "--features"], d.path(), None).ok();
    let v = &r.jsonl()[0];
    let feats = v["features"].as_array().unwrap();
    assert!(feats.iter().any(|f| f[0] == "散步" && f[1].as_f64().unwrap() > 0.0), "{v}");
    neardup(&["fingerprint", "a.txt", "--features", "--format", "tsv"], d.path(), None)
        .fails(2, "--features needs");
}

#[test]
fn allow_empty_fingerprints_empty_documents() {
    let d = tmp();
    write(d.path(), "empty.txt", b"");
    let r =
        neardup(&["fingerprint", "empty.txt", "--allow-empty", "--preset", "python-simhash"], d.path(), None)
            .ok();
    assert_eq!(r.jsonl()[0]["fingerprint"], "e9800998ecf8427e");
}

#[test]
fn output_file_is_atomic() {
    let d = tmp();
    write(d.path(), "a.txt", EN.as_bytes());
    write(d.path(), "b.txt", b"\xff\xfe");
    neardup(&["fingerprint", "a.txt", "b.txt", "-o", "out.jsonl"], d.path(), None).fails(1, "b.txt");
    assert!(!d.path().join("out.jsonl").exists(), "no half-written output");
    let leftovers: Vec<_> = std::fs::read_dir(d.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(".neardup"))
        .collect();
    assert!(leftovers.is_empty());
    neardup(&["fingerprint", "a.txt", "-o", "out.jsonl"], d.path(), None).ok();
    let s = std::fs::read_to_string(d.path().join("out.jsonl")).unwrap();
    assert_eq!(s.lines().count(), 1);
}

/// `-o` naming a file is a usage error that says what -o is; a run that
/// fails leaves no output directory it made (but one that was there, and
/// anything in it, stays).
#[test]
fn output_directories_of_failed_runs() {
    let d = tmp();
    write(d.path(), "afile", b"");
    write(d.path(), "bad.jsonl", b"{\"id\":1,\"text\":\"a b c\"}\nnot json\n");
    for cmd in ["dedup", "boilerplate", "substrings"] {
        let r = neardup(&[cmd, "bad.jsonl", "-o", "afile"], d.path(), None).fails(2, "afile: is a file");
        assert!(r.stderr().contains("name a new directory"), "{}", r.stderr());
        neardup(&[cmd, "bad.jsonl", "-o", "new/out"], d.path(), None).fails(1, "bad.jsonl:2");
        assert!(!d.path().join("new/out").exists(), "{cmd}: a failed run left its output directory");
    }
    std::fs::create_dir(d.path().join("there")).unwrap();
    neardup(&["dedup", "bad.jsonl", "-o", "there"], d.path(), None).fails(1, "bad.jsonl:2");
    assert!(d.path().join("there").is_dir(), "a directory that was there stays");
    neardup(&["dedup", "bad.jsonl", "--on-error", "skip", "-o", "new/ok"], d.path(), None).ok();
    assert!(d.path().join("new/ok/summary.json").exists());
}

#[test]
fn compare_texts_and_files() {
    let d = tmp();
    let r = neardup(&["compare", "--text", EN, "--text", &format!("{EN}!"), "--json"], d.path(), None).ok();
    let v: Value = serde_json::from_str(&r.stdout()).unwrap();
    assert_eq!(
        (&v["method"], &v["similarity"], &v["exact_jaccard"]),
        (&json!("minhash"), &json!(1.0), &json!(1.0))
    );
    assert_eq!(v["near_duplicate"], true);
    let args = ["compare", "--text", EN, "--text", &format!("{EN}!"), "--json", "--method", "simhash"];
    let v: Value = serde_json::from_str(&neardup(&args, d.path(), None).ok().stdout()).unwrap();
    assert_eq!(v["distance"], 0);
    assert_eq!(v["near_duplicate"], true);
    let r = neardup(
        &["compare", "--text", EN, "--text", "Something else entirely, about cooking rice.", "--k", "3"],
        d.path(),
        None,
    )
    .ok();
    assert!(r.stdout().contains("verdict     different"), "{}", r.stdout());
    write(d.path(), "a.txt", "今天天气很好，我们去公园散步吧".as_bytes());
    let r = neardup(
        &["compare", "a.txt", "--text", "今天天气真好，我们去公园散步吧", "--explain", "--method", "simhash"],
        d.path(),
        None,
    )
    .ok();
    let out = r.stdout();
    assert!(out.contains("bits closest to flipping"), "{out}");
    // What differs is named, not what both share.
    let differ = out
        .split("features that differ most")
        .nth(1)
        .expect("a list of changes")
        .split("\n\n")
        .next()
        .unwrap();
    assert!(differ.contains("only in a  很"), "{out}");
    assert!(differ.contains("only in b  真"), "{out}");
    assert!(!differ.contains("散步") && !differ.contains("天气"), "those are in both: {out}");
    neardup(&["compare", "--text", "one"], d.path(), None).fails(2, "exactly two documents");
    write(d.path(), "bad.txt", b"\xff");
    neardup(&["compare", "bad.txt", "a.txt"], d.path(), None).fails(1, "bad.txt: invalid UTF-8");
    write(d.path(), "bin.dat", b"\x7fELF\x00\x01 binary");
    neardup(&["compare", "bin.dat", "a.txt"], d.path(), None).fails(1, "bin.dat: looks binary");
    neardup(&["compare", "--text", "", "--text", "x y z"], d.path(), None)
        .fails(1, "--text #1: document has no features");
    neardup(&["compare", "--text", "!!", "--text", "?"], d.path(), None).fails(1, "pass --allow-empty");
    // Two empty documents: identical fingerprints (SimHash), but never
    // near duplicates by MinHash (dedup does not link them either).
    let args = ["compare", "--text", "", "--text", "", "--allow-empty", "--json", "--method", "simhash"];
    let r = neardup(&args, d.path(), None).ok();
    assert!(r.stdout().contains("\"distance\": 0"), "{}", r.stdout());
    let r = neardup(&["compare", "--text", "", "--text", "", "--allow-empty", "--json"], d.path(), None).ok();
    assert!(r.stdout().contains("\"near_duplicate\": false"), "{}", r.stdout());
    neardup(&["compare", "a.txt", "a.txt", "--max-doc-bytes", "5"], d.path(), None)
        .fails(1, "over the limit of 5");
}

#[test]
fn idf_build_then_use() {
    let d = tmp();
    let corpus = testdata("docs_zh.jsonl");
    let r = neardup(
        &["idf", "build", &corpus, "-o", "idf.txt", "--preset", "keywords", "--min-df", "2"],
        d.path(),
        None,
    )
    .ok();
    assert!(r.stderr().contains("from 40 documents"), "{}", r.stderr());
    let table = std::fs::read_to_string(d.path().join("idf.txt")).unwrap();
    assert!(table.lines().count() > 10);
    let first: Vec<&str> = table.lines().next().unwrap().split(' ').collect();
    assert!(first[1].parse::<f64>().unwrap() > 0.0);
    let cfg = neardup(&["config", "show", "keywords"], d.path(), None)
        .ok()
        .stdout()
        .replace("idf = \"jieba\"", "idf = \"idf.txt\"");
    write(d.path(), "k.toml", cfg.as_bytes());
    neardup(&["config", "check", "k.toml"], d.path(), None).ok();
    neardup(&["fingerprint", &corpus, "--config", "k.toml"], d.path(), None).ok();
    write(d.path(), "bad_idf.txt", b"word notanumber\n");
    let cfg2 = cfg.replace("idf.txt", "bad_idf.txt");
    write(d.path(), "k2.toml", cfg2.as_bytes());
    neardup(&["config", "check", "k2.toml"], d.path(), None).fails(2, "bad_idf.txt:1");
    let cfg3 = cfg.replace("unknown = 11.9547675029", "unknown = \"median\"");
    write(d.path(), "k3.toml", cfg3.as_bytes());
    neardup(&["config", "check", "k3.toml"], d.path(), None).ok();
    write(d.path(), "k4.toml", cfg.replace("unknown = 11.9547675029", "unknown = \"nan\"").as_bytes());
    neardup(&["config", "check", "k4.toml"], d.path(), None)
        .fails(2, r#"expected a number, "median" or "mean""#);
}

#[test]
fn broken_pipe_is_not_an_error() {
    let d = tmp();
    let corpus = testdata("docs_en.jsonl");
    let mut child = Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args(["fingerprint", &corpus, &corpus, &corpus])
        .current_dir(d.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Notes to a closed stderr (`2>&1 | head` once head has quit) are
/// dropped: the command finishes its work and exits 0, not 101 (a panic).
#[test]
fn a_closed_stderr_is_not_a_panic() {
    let d = tmp();
    let corpus = testdata("docs_en.jsonl");
    for args in [
        vec!["dedup", corpus.as_str(), "-o", "out"],
        vec!["index", "build", corpus.as_str(), "-o", "idx.ndx", "--preset", "default"],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_neardup"))
            .args(&args)
            .current_dir(d.path())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stderr.take());
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(0), "{args:?}");
    }
    assert!(d.path().join("out/kept.jsonl").exists() && d.path().join("idx.ndx").exists());
}

// ---- dedup, pairs, index ----

/// 10,000 fingerprints: random, near neighbours at distances 1..5, copies.
fn fingerprint_list(n: usize) -> Vec<u64> {
    let mut rng = Rng(42);
    let mut v: Vec<u64> = Vec::with_capacity(n);
    while v.len() < n {
        let r = rng.next();
        match r % 10 {
            0..=5 => v.push(rng.next()),
            6 | 7 if !v.is_empty() => {
                let base = v[(rng.next() % v.len() as u64) as usize];
                let mut w = base;
                for _ in 0..(1 + rng.next() % 5) {
                    w ^= 1 << (rng.next() % 64);
                }
                v.push(w);
            }
            _ if !v.is_empty() => v.push(v[(rng.next() % v.len() as u64) as usize]),
            _ => {}
        }
    }
    v
}

/// Every pair within k, as (i, j, distance) positions.
fn brute_pairs(v: &[u64], k: u32) -> Vec<(usize, usize, u32)> {
    neardup_testkit::brute_pairs(v, k).into_iter().map(|(i, j, d)| (i as usize, j as usize, d)).collect()
}

/// Connected components of size > 1, each sorted, ordered by first member.
fn brute_clusters(n: usize, pairs: &[(usize, usize, u32)]) -> Vec<Vec<usize>> {
    neardup_testkit::brute_clusters(n, pairs.iter().map(|p| (p.0, p.1)))
}

#[test]
fn pairs_equal_brute_force_on_ten_thousand() {
    let dir = tmp();
    let v = fingerprint_list(10_000);
    let text: String = v.iter().enumerate().map(|(i, w)| format!("doc{i}\t{w:016x}\n")).collect();
    write(dir.path(), "fps.tsv", text.as_bytes());
    let run = neardup(&["pairs", "fps.tsv", "--k", "3"], dir.path(), None).ok();
    let mut got: Vec<(usize, usize, u32)> = run
        .stdout()
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            let a: usize = f[0][3..].parse().unwrap();
            let b: usize = f[1][3..].parse().unwrap();
            (a.min(b), a.max(b), f[2].parse().unwrap())
        })
        .collect();
    got.sort_unstable();
    let expected = brute_pairs(&v, 3);
    assert!(expected.iter().any(|p| p.2 == 0), "the data has identical fingerprints");
    assert_eq!(got, expected);
    // Without ids, ids are line numbers; JSONL output.
    let plain: String = v.iter().take(100).map(|w| format!("{w:016x}\n")).collect();
    let run =
        neardup(&["pairs", "-", "--k", "64", "--format", "jsonl"], dir.path(), Some(plain.as_bytes())).ok();
    assert_eq!(run.jsonl().len(), 100 * 99 / 2);
    let ids: std::collections::BTreeSet<u64> =
        run.jsonl().iter().flat_map(|p| [p["a"].as_u64().unwrap(), p["b"].as_u64().unwrap()]).collect();
    assert_eq!(ids, (1..=100).collect(), "ids are line numbers");
}

#[test]
fn dedup_of_fingerprints_equals_brute_force_clustering() {
    let dir = tmp();
    let v = fingerprint_list(10_000);
    let text: String = v.iter().enumerate().map(|(i, w)| format!("{i}\t{w:016x}\n")).collect();
    write(dir.path(), "fps.tsv", text.as_bytes());
    let near = |x: u32, c: u32| {
        let d = (v[x as usize] ^ v[c as usize]).count_ones();
        (d <= 3).then_some(d)
    };
    let order: Vec<u32> = (0..v.len() as u32).collect();
    let justified: Vec<Vec<usize>> = neardup_testkit::brute_justified(&order, near, |_, _| true)
        .into_iter()
        .map(|(_, m)| m.into_iter().map(|i| i as usize).collect())
        .collect();
    let components = brute_clusters(v.len(), &brute_pairs(&v, 3));
    assert!(justified.len() > components.len(), "the list has chains");
    for (how, expected) in [("justified", justified), ("components", components)] {
        let out = format!("out-{how}");
        neardup(
            &["dedup", "--fingerprints", "fps.tsv", "-o", &out, "--k", "3", "--clusters", how],
            dir.path(),
            None,
        )
        .ok();
        let clusters: Vec<Value> = std::fs::read_to_string(dir.path().join(&out).join("clusters.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let mut got: Vec<Vec<usize>> = clusters
            .iter()
            .map(|c| {
                let mut m: Vec<usize> = c["members"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|m| m["id"].as_str().unwrap().parse().unwrap())
                    .collect();
                m.sort_unstable();
                m
            })
            .collect();
        got.sort();
        assert_eq!(got, expected, "{how}");
        if how == "justified" {
            // Every member is within k of its cluster's representative.
            assert!(clusters.iter().all(|c| c["members"]
                .as_array()
                .unwrap()
                .iter()
                .all(|m| m["distance"].as_u64().unwrap() <= 3)));
        }
        let kept = std::fs::read_to_string(dir.path().join(&out).join("kept.jsonl")).unwrap().lines().count();
        let removed: usize = expected.iter().map(|c| c.len() - 1).sum();
        assert_eq!(kept, v.len() - removed);
        let summary: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join(&out).join("summary.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(summary["duplicates_removed"], removed);
        assert_eq!(summary["documents"], 10_000);
        assert_eq!(summary["clusters_by"], how);
    }
}

#[test]
fn dedup_documents_keeps_records_and_clusters_near_duplicates() {
    let dir = tmp();
    // A corpus of the labelled pairs' texts: near duplicates by construction.
    let mut seen = std::collections::HashSet::new();
    let mut body = String::new();
    for l in std::fs::read_to_string(testdata("pairs_en.jsonl")).unwrap().lines() {
        let p: Value = serde_json::from_str(l).unwrap();
        for (id, text) in [("id_a", "text_a"), ("id_b", "text_b")] {
            if seen.insert(p[id].as_str().unwrap().to_owned()) {
                body += &format!("{}\n", serde_json::json!({"id": p[id], "text": p[text], "n": seen.len()}));
            }
        }
    }
    let corpus = write(dir.path(), "corpus.jsonl", body.as_bytes()).display().to_string();
    let out = dir.path().join("out");
    // Whole components of every pair within k, unverified, as brute force
    // finds them.
    let args = ["--pairs", "--k", "12", "--clusters", "components", "--verify", "none"];
    neardup(&[&["dedup", &corpus, "-o", out.to_str().unwrap()][..], &args[..]].concat(), dir.path(), None)
        .ok();
    // Brute force over the same fingerprints.
    let fps = neardup(&["fingerprint", &corpus], dir.path(), None).ok().jsonl();
    let v: Vec<u64> =
        fps.iter().map(|r| u64::from_str_radix(r["fingerprint"].as_str().unwrap(), 16).unwrap()).collect();
    let expected = brute_clusters(v.len(), &brute_pairs(&v, 12));
    assert!(!expected.is_empty(), "testdata has near duplicates at k = 12");
    let got = clusters_of(&out.join("clusters.jsonl"), |id| fps.iter().position(|r| r["id"] == *id).unwrap());
    assert_eq!(got, expected);
    // kept.jsonl holds the input lines themselves, in input order.
    let input: Vec<String> = std::fs::read_to_string(&corpus).unwrap().lines().map(str::to_owned).collect();
    let kept: Vec<String> =
        std::fs::read_to_string(out.join("kept.jsonl")).unwrap().lines().map(str::to_owned).collect();
    let removed: usize = expected.iter().map(|c| c.len() - 1).sum();
    assert_eq!(kept.len(), input.len() - removed);
    let mut it = input.iter();
    assert!(kept.iter().all(|k| it.any(|i| i == k)), "kept records are input lines, in order");
    assert!(out.join("pairs.jsonl").exists());
    // Clusters are numbered from 1 in clusters.jsonl, as on the terminal.
    let numbers: Vec<u64> = std::fs::read_to_string(out.join("clusters.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["cluster"].as_u64().unwrap())
        .collect();
    assert_eq!(numbers, (1..=expected.len() as u64).collect::<Vec<_>>());
    // A run without --pairs into the same directory leaves no stale pairs.jsonl.
    neardup(&["dedup", &corpus, "-o", out.to_str().unwrap(), "--k", "12"], dir.path(), None).ok();
    assert!(!out.join("pairs.jsonl").exists(), "the earlier run's pairs.jsonl was left behind");
    // --keep longest keeps the longest text of each cluster.
    neardup(&["dedup", &corpus, "-o", "out2", "--k", "12", "--keep", "longest"], dir.path(), None).ok();
    let kept2 = std::fs::read_to_string(dir.path().join("out2/kept.jsonl")).unwrap();
    for c in &expected {
        let longest = c
            .iter()
            .max_by_key(|&&i| {
                (
                    serde_json::from_str::<Value>(&input[i]).unwrap()["text"]
                        .as_str()
                        .unwrap()
                        .chars()
                        .count(),
                    std::cmp::Reverse(i),
                )
            })
            .unwrap();
        assert!(kept2.lines().any(|l| l == input[*longest]), "cluster {c:?}");
    }
    // --verify with an impossible threshold removes nothing but exact copies.
    neardup(&["dedup", &corpus, "-o", "out3", "--k", "12", "--verify", "jaccard:1"], dir.path(), None).ok();
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out3/summary.json")).unwrap())
            .unwrap();
    assert!(s["duplicates_removed"].as_u64().unwrap() < removed as u64);
}

#[test]
fn dedup_online_keeps_the_first_of_each_near_duplicate() {
    let dir = tmp();
    let a = "SimHash maps similar documents to similar fingerprints so that near duplicates differ in only a few bits of the sixty four";
    let b = "Completely unrelated text about cooking rice and beans slowly in a large iron pot over a low fire for hours";
    let lines = [
        serde_json::json!({"id": "a", "text": a, "extra": 1}),
        serde_json::json!({"id": "b", "text": b}),
        serde_json::json!({"id": "a2", "text": a}),
    ];
    let body: String = lines.iter().map(|l| format!("{l}\n")).collect();
    write(dir.path(), "in.jsonl", body.as_bytes());
    neardup(&["dedup", "--online", "in.jsonl", "-o", "out"], dir.path(), None).ok();
    let kept: Vec<Value> = std::fs::read_to_string(dir.path().join("out/kept.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(kept.iter().map(|k| k["id"].as_str().unwrap()).collect::<Vec<_>>(), ["a", "b"]);
    assert_eq!(kept[0]["extra"], 1, "all fields are kept");
    let c: Value =
        serde_json::from_str(std::fs::read_to_string(dir.path().join("out/clusters.jsonl")).unwrap().trim())
            .unwrap();
    assert_eq!(c["representative"], "a");
    assert_eq!(c["members"][1], serde_json::json!({"id": "a2", "similarity": 1.0}));
    // SimHash's online mode keeps the same, with distances.
    neardup(&["dedup", "--online", "--method", "simhash", "in.jsonl", "-o", "sim"], dir.path(), None).ok();
    let c: Value =
        serde_json::from_str(std::fs::read_to_string(dir.path().join("sim/clusters.jsonl")).unwrap().trim())
            .unwrap();
    assert_eq!(c["members"][1], serde_json::json!({"id": "a2", "distance": 0}));
}

#[test]
fn dedup_reads_csv_and_names_bad_rows() {
    let dir = tmp();
    let csv = "id,body\n1,\"the quick brown fox jumps over the lazy dog, again and again\"\n2,\"the quick brown fox jumps over the lazy dog, again and again\"\n3,a,extra\n";
    write(dir.path(), "in.csv", csv.as_bytes());
    neardup(&["dedup", "in.csv", "--text-field", "body", "-o", "out"], dir.path(), None).fails(1, "in.csv:4");
    assert!(!dir.path().join("out/kept.jsonl").exists(), "no partial output");
    neardup(
        &["dedup", "in.csv", "--text-field", "body", "-o", "out", "--on-error", "skip"],
        dir.path(),
        None,
    )
    .ok();
    let kept = std::fs::read_to_string(dir.path().join("out/kept.jsonl")).unwrap();
    assert_eq!(kept.lines().count(), 1);
    assert!(kept.contains("\"body\""), "{kept}");
    neardup(&["dedup", "in.csv", "-o", "out"], dir.path(), None).fails(1, "no column \"text\"");
}

#[test]
fn a_csv_quote_left_open_is_named_not_swallowed() {
    // The csv crate reads an unclosed quote as a field running to the end
    // of the input: here row 3 would silently swallow rows 4 and 5.
    let dir = tmp();
    let csv = "id,text\n1,\"first row of text\"\n2,\"second row, opened\n3,third row\n4,\"fourth\"\n";
    write(dir.path(), "open.csv", csv.as_bytes());
    neardup(&["fingerprint", "open.csv"], dir.path(), None)
        .fails(1, "open.csv:3: a quoted field opened in this row is never closed");
    // Quoted line breaks, doubled quotes and a bare quote in an unquoted
    // field are all fine.
    let csv = "id,text\n1,\"multi\nline\"\n2,\"a 5\"\" screen\"\n3,a 5\" screen\n";
    write(dir.path(), "ok.csv", csv.as_bytes());
    let out = neardup(&["fingerprint", "ok.csv"], dir.path(), None).ok();
    assert_eq!(out.jsonl().len(), 3, "{}", out.stdout());
}

#[test]
fn dedup_and_pairs_refuse_bad_arguments_and_lists() {
    let dir = tmp();
    write(dir.path(), "fps.tsv", b"a\t0123456789abcdef\nb\tnot-hex\n");
    neardup(&["pairs", "fps.tsv"], dir.path(), None).fails(1, "fps.tsv:2");
    write(dir.path(), "mixed.txt", b"0123456789abcdef\n0123456789abcdef0123456789abcdef\n");
    neardup(&["pairs", "mixed.txt"], dir.path(), None).fails(1, "one list holds one width");
    write(dir.path(), "ids.txt", b"0123456789abcdef\nx\t0123456789abcdef\n");
    neardup(&["pairs", "ids.txt"], dir.path(), None).fails(1, "every line an id or none");
    neardup(&["pairs", "missing.txt"], dir.path(), None).fails(1, "missing.txt");
    write(dir.path(), "ok.txt", b"0123456789abcdef\n");
    neardup(&["dedup", "--fingerprints", "ok.txt", "-o", "o", "--verify", "jaccard:0.5"], dir.path(), None)
        .fails(2, "--verify needs the texts");
    neardup(&["dedup", "x.jsonl", "-o", "o", "--verify", "cosine:0.5"], dir.path(), None)
        .fails(2, "jaccard:T");
    neardup(&["dedup", "x.jsonl", "-o", "o", "--memory", "lots"], dir.path(), None).fails(2, "not a size");
    neardup(&["pairs", "ok.txt", "--k", "3", "--blocks", "2"], dir.path(), None)
        .fails(1, "more than 3 blocks");
}

#[test]
fn index_build_add_query_stats() {
    let dir = tmp();
    let en = testdata("docs_en.jsonl");
    let zh = testdata("docs_zh.jsonl");
    neardup(&["index", "build", &en, "-o", "en.ndx", "--preset", "default"], dir.path(), None).ok();
    let first: Value =
        serde_json::from_str(std::fs::read_to_string(&en).unwrap().lines().next().unwrap()).unwrap();
    let text = first["text"].as_str().unwrap();
    let q = neardup(&["index", "query", "en.ndx", "--text", text], dir.path(), None).ok().jsonl();
    assert_eq!(q.len(), 1);
    assert_eq!(q[0]["matches"][0]["id"], first["id"]);
    assert_eq!(q[0]["matches"][0]["distance"], 0);
    // Add the Chinese documents; the English ones are still found.
    neardup(&["index", "add", "en.ndx", &zh], dir.path(), None).ok();
    let stats = neardup(&["index", "stats", "en.ndx", "--json"], dir.path(), None).ok();
    let s: Value = serde_json::from_str(&stats.stdout()).unwrap();
    assert_eq!(s["entries"], 64);
    assert!(s["reason"].as_str().unwrap().contains("budget"));
    let text_stats = neardup(&["index", "stats", "en.ndx"], dir.path(), None).ok().stdout();
    assert!(text_stats.contains("layout:") && text_stats.contains("why:"), "{text_stats}");
    // Query by documents and by fingerprint, at a larger radius than built for.
    let q = neardup(&["index", "query", "en.ndx", &zh, "--k", "0"], dir.path(), None).ok().jsonl();
    assert_eq!(q.len(), 40);
    assert!(q.iter().all(|r| !r["matches"].as_array().unwrap().is_empty()));
    let fp = q[0]["fingerprint"].as_str().unwrap().to_owned();
    let wide = neardup(&["index", "query", "en.ndx", "--fingerprint", &fp, "--k", "20"], dir.path(), None)
        .ok()
        .jsonl();
    assert!(!wide[0]["matches"].as_array().unwrap().is_empty());
    // Built from fingerprints: no pipeline, so text queries are refused.
    write(dir.path(), "fps.txt", b"x\t0123456789abcdef\ny\t0123456789abcdee\n");
    neardup(&["index", "build", "--fingerprints", "fps.txt", "-o", "f.ndx"], dir.path(), None).ok();
    let q = neardup(
        &["index", "query", "f.ndx", "--fingerprint", "0123456789abcdef", "--k", "1"],
        dir.path(),
        None,
    )
    .ok()
    .jsonl();
    assert_eq!(q[0]["matches"], serde_json::json!([{"id": "x", "distance": 0}, {"id": "y", "distance": 1}]));
    neardup(&["index", "query", "f.ndx", "--text", "hello"], dir.path(), None).fails(2, "knows no pipeline");
}

#[test]
fn index_files_that_are_damaged_or_mismatched_are_refused() {
    // Damaged and foreign files are input errors (1); the wrong pipeline,
    // width or arguments for a good file are usage errors (2).
    let dir = tmp();
    let en = testdata("docs_en.jsonl");
    neardup(&["index", "build", &en, "-o", "en.ndx", "--preset", "default"], dir.path(), None).ok();
    let bytes = std::fs::read(dir.path().join("en.ndx")).unwrap();
    write(dir.path(), "cut.ndx", &bytes[..bytes.len() / 2]);
    neardup(&["index", "stats", "cut.ndx"], dir.path(), None).fails(1, "truncated");
    let mut flipped = bytes.clone();
    flipped[bytes.len() / 2] ^= 0x10;
    write(dir.path(), "bad.ndx", &flipped);
    neardup(&["index", "query", "bad.ndx", "--text", "x"], dir.path(), None).fails(1, "checksum");
    let mut newer = bytes.clone();
    newer[8..12].copy_from_slice(&3u32.to_le_bytes());
    write(dir.path(), "newer.ndx", &newer);
    neardup(&["index", "stats", "newer.ndx"], dir.path(), None).fails(
        1,
        "index file version 3, this neardup reads versions 1 to 2: it was written by a newer neardup",
    );
    write(dir.path(), "not.ndx", b"hello world, this is not an index file at all");
    neardup(&["index", "stats", "not.ndx"], dir.path(), None).fails(1, "not a neardup index");
    neardup(&["index", "stats", "absent.ndx"], dir.path(), None).fails(1, "absent.ndx does not exist");
    neardup(&["index", "add", "absent", &en], dir.path(), None).fails(1, "`mkdir absent` first");
    neardup(&["index", "query", "en.ndx", "--text", "x", "--preset", "keywords"], dir.path(), None)
        .fails(2, "rebuild the index");
    neardup(
        &["index", "query", "en.ndx", "--fingerprint", "0123456789abcdef0123456789abcdef"],
        dir.path(),
        None,
    )
    .fails(2, "128-bit");
    neardup(&["index", "query", "en.ndx"], dir.path(), None).fails(2, "nothing to query");
    // A failed add leaves the index as it was.
    write(dir.path(), "bad.jsonl", b"{\"text\": \"fine text here\"}\nnot json\n");
    neardup(&["index", "add", "en.ndx", "bad.jsonl"], dir.path(), None).fails(1, "bad.jsonl:2");
    assert_eq!(std::fs::read(dir.path().join("en.ndx")).unwrap(), bytes);
}

#[test]
fn dedup_default_radius_equals_brute_force_by_length() {
    // No --k: the default preset's length-dependent radius. Expected
    // clusters: brute force over every pair with the library's rule.
    use neardup::presets::recommended_radius;
    let dir = tmp();
    let mut texts = Vec::new();
    let mut body = String::new();
    for file in ["pairs_en.jsonl", "pairs_zh.jsonl"] {
        for l in std::fs::read_to_string(testdata(file)).unwrap().lines() {
            let p: Value = serde_json::from_str(l).unwrap();
            for t in ["text_a", "text_b"] {
                let text = p[t].as_str().unwrap().to_owned();
                if !texts.contains(&text) {
                    body += &format!("{}\n", serde_json::json!({"id": texts.len(), "text": text}));
                    texts.push(text);
                }
            }
        }
    }
    write(dir.path(), "corpus.jsonl", body.as_bytes());
    let fingerprinter = neardup::Fingerprinter::preset("default").unwrap();
    let radius = recommended_radius("default", fingerprinter.bits()).unwrap();
    assert!(!radius.is_fixed());
    let counted: Vec<(u64, usize)> = texts
        .iter()
        .map(|t| fingerprinter.fingerprint_counted(t))
        .map(|(f, n)| (f.as_u64().unwrap(), n))
        .collect();
    let mut pairs = Vec::new();
    let mut beyond_min = 0;
    for i in 0..counted.len() {
        for j in i + 1..counted.len() {
            let d = (counted[i].0 ^ counted[j].0).count_ones();
            if d <= radius.k_for_pair(counted[i].1, counted[j].1) {
                pairs.push((i, j, d));
                beyond_min += usize::from(d > radius.min_k());
            }
        }
    }
    assert!(beyond_min > 0, "some pairs need the short-document radius");
    let expected = brute_clusters(texts.len(), &pairs);
    neardup(&["dedup", "corpus.jsonl", "-o", "out", "--method", "simhash"], dir.path(), None).ok();
    let mut got: Vec<Vec<usize>> = std::fs::read_to_string(dir.path().join("out/clusters.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            let c: Value = serde_json::from_str(l).unwrap();
            let mut m: Vec<usize> =
                c["members"].as_array().unwrap().iter().map(|m| m["id"].as_u64().unwrap() as usize).collect();
            m.sort_unstable();
            m
        })
        .collect();
    got.sort();
    assert_eq!(got, expected);
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/summary.json")).unwrap()).unwrap();
    let written = serde_json::to_value(&radius).unwrap();
    assert!(s["k"].is_u64() && s["k"] == written["k"], "k is a number: the radius of long documents");
    assert_eq!(s["steps"], written["steps"], "and the steps by length");
    // Online: every removed document is within the rule of its representative.
    neardup(&["dedup", "--online", "--method", "simhash", "corpus.jsonl", "-o", "on"], dir.path(), None).ok();
    for l in std::fs::read_to_string(dir.path().join("on/clusters.jsonl")).unwrap().lines() {
        let c: Value = serde_json::from_str(l).unwrap();
        let r = c["representative"].as_u64().unwrap() as usize;
        for m in c["members"].as_array().unwrap() {
            let i = m["id"].as_u64().unwrap() as usize;
            let d = (counted[i].0 ^ counted[r].0).count_ones();
            assert!(d <= radius.k_for_pair(counted[i].1, counted[r].1), "{i} vs {r}: {d}");
        }
    }
}

/// One rule everywhere: with default settings (MinHash) and with SimHash's,
/// `compare`'s verdict on a pair is whether `dedup` links the pair (its pairs.jsonl, the
/// accept rule before clustering), on every labelled pair of testdata/ —
/// and a pair `dedup` links ends in one cluster.
#[test]
fn compare_verdict_equals_dedup_with_defaults() {
    let dir = tmp();
    let mut pairs: Vec<(String, String)> = Vec::new();
    let mut body = String::new();
    for file in ["pairs_en.jsonl", "pairs_zh.jsonl"] {
        for l in std::fs::read_to_string(testdata(file)).unwrap().lines() {
            let p: Value = serde_json::from_str(l).unwrap();
            let (a, b) = (p["text_a"].as_str().unwrap().to_owned(), p["text_b"].as_str().unwrap().to_owned());
            let i = pairs.len();
            body += &format!("{}\n", serde_json::json!({"id": format!("{i}a"), "text": a}));
            body += &format!("{}\n", serde_json::json!({"id": format!("{i}b"), "text": b}));
            pairs.push((a, b));
        }
    }
    write(dir.path(), "corpus.jsonl", body.as_bytes());
    // The defaults (MinHash), then SimHash.
    for method in [&[][..], &["--method", "simhash"][..]] {
        let out = if method.is_empty() { "out" } else { "sim" };
        neardup(&[&["dedup", "corpus.jsonl", "-o", out, "--pairs"][..], method].concat(), dir.path(), None)
            .ok();
        let linked: std::collections::HashSet<(String, String)> =
            std::fs::read_to_string(dir.path().join(out).join("pairs.jsonl"))
                .unwrap()
                .lines()
                .map(|l| {
                    let v: Value = serde_json::from_str(l).unwrap();
                    (v["a"].as_str().unwrap().to_owned(), v["b"].as_str().unwrap().to_owned())
                })
                .collect();
        let cluster_of: std::collections::HashMap<String, u64> =
            std::fs::read_to_string(dir.path().join(out).join("clusters.jsonl"))
                .unwrap()
                .lines()
                .flat_map(|l| {
                    let c: Value = serde_json::from_str(l).unwrap();
                    let n = c["cluster"].as_u64().unwrap();
                    c["members"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|m| (m["id"].as_str().unwrap().to_owned(), n))
                        .collect::<Vec<_>>()
                })
                .collect();
        // Two compares at a time (jieba loads in each process).
        let verdicts: Vec<(bool, u64)> = std::thread::scope(|s| {
            let chunks: Vec<_> = pairs
                .chunks(pairs.len().div_ceil(2))
                .map(|chunk| {
                    s.spawn(|| {
                        chunk
                            .iter()
                            .map(|(a, b)| {
                                let r = neardup(
                                    &[&["compare", "--text", a, "--text", b, "--json"][..], method].concat(),
                                    dir.path(),
                                    None,
                                )
                                .ok();
                                let v: Value = serde_json::from_str(&r.stdout()).unwrap();
                                (v["near_duplicate"].as_bool().unwrap(), v["distance"].as_u64().unwrap_or(0))
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            chunks.into_iter().flat_map(|h| h.join().unwrap()).collect()
        });
        let mut near = 0;
        let mut beyond_classic = 0;
        for (i, &(verdict, d)) in verdicts.iter().enumerate() {
            let (a, b) = (format!("{i}a"), format!("{i}b"));
            assert_eq!(verdict, linked.contains(&(a.clone(), b.clone())), "pair {i} (distance {d})");
            if verdict {
                assert_eq!(cluster_of.get(&a), cluster_of.get(&b), "pair {i}");
                near += 1;
                beyond_classic += usize::from(d > 3);
            }
        }
        assert!(near > 10, "{near} near pairs ({method:?})");
        assert!(method.is_empty() || beyond_classic > 0, "{beyond_classic} beyond k = 3");
    }
}

/// `index query` without --k answers by the pipeline's rule, for an index
/// file and a data directory alike: a labelled pair's `b` finds its `a`
/// exactly when the rule accepts the pair (as `dedup` and `compare`).
#[test]
fn index_query_uses_the_pipelines_rule() {
    let dir = tmp();
    let d = dir.path();
    let fingerprinter = neardup::Fingerprinter::preset("default").unwrap();
    let (mut a_docs, mut b_docs, mut want) = (String::new(), String::new(), Vec::new());
    for file in ["pairs_en.jsonl", "pairs_zh.jsonl"] {
        for l in std::fs::read_to_string(testdata(file)).unwrap().lines() {
            let p: Value = serde_json::from_str(l).unwrap();
            let (a, b) = (p["text_a"].as_str().unwrap(), p["text_b"].as_str().unwrap());
            let i = want.len();
            a_docs += &format!("{}\n", serde_json::json!({"id": format!("a{i}"), "text": a}));
            b_docs += &format!("{}\n", serde_json::json!({"id": format!("b{i}"), "text": b}));
            let ((fa, na), (fb, nb)) =
                (fingerprinter.fingerprint_counted(a), fingerprinter.fingerprint_counted(b));
            want.push(fingerprinter.radius().accepts(fa.distance(fb), na, nb));
        }
    }
    write(d, "a.jsonl", a_docs.as_bytes());
    write(d, "b.jsonl", b_docs.as_bytes());
    neardup(&["index", "build", "a.jsonl", "-o", "a.ndx", "--preset", "default"], d, None).ok();
    std::fs::create_dir(d.join("data")).unwrap();
    neardup(&["index", "add", "data", "a.jsonl", "--preset", "default"], d, None).ok();
    for target in ["a.ndx", "data"] {
        let r = neardup(&["index", "query", target, "b.jsonl"], d, None).ok();
        assert!(r.stderr().contains("k = 8 below 600 features, else 4"), "{}", r.stderr());
        for (i, v) in r.jsonl().iter().enumerate() {
            let found = v["matches"].as_array().unwrap().iter().any(|m| m["id"] == format!("a{i}"));
            assert_eq!(found, want[i], "{target}: pair {i}");
        }
    }
    assert!(want.iter().filter(|&&w| w).count() > 10);
}

/// Index files and data directories written by the release before index
/// files carried opaque metadata and feature counts still open, and answer
/// what that release answered (testdata/compat, see its README).
#[test]
fn files_written_by_0_1_still_open() {
    let dir = tmp();
    let compat = |name: &str| testdata(&format!("compat/{name}"));
    let d = dir.path();
    let (en, zh) = (testdata("docs_en.jsonl"), testdata("docs_zh.jsonl"));
    let same_lines = |got: &str, want_file: &str| {
        let want = std::fs::read_to_string(compat(want_file)).unwrap();
        let parse =
            |s: &str| s.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()).collect::<Vec<_>>();
        assert_eq!(parse(got), parse(&want), "{want_file}");
    };
    let r = neardup(&["index", "query", &compat("v0.1-docs.ndx"), &en, &zh, "--k", "3"], d, None).ok();
    same_lines(&r.stdout(), "v0.1-docs.query.jsonl");
    // The pipeline check and the rule work on the old file too; it has no
    // feature counts, which is said.
    let r = neardup(&["index", "query", &compat("v0.1-docs.ndx"), &en, "--preset", "default"], d, None).ok();
    assert!(r.stderr().contains("before indexes kept feature counts"), "{}", r.stderr());
    assert_eq!(r.jsonl().len(), 24);
    neardup(&["index", "query", &compat("v0.1-docs.ndx"), &en, "--preset", "keywords"], d, None)
        .fails(2, "rebuild the index");
    let s = neardup(&["index", "stats", &compat("v0.1-docs.ndx")], d, None).ok();
    assert!(s.stdout().contains("radius:      k = 8 below 600 features, else 4"), "{}", s.stdout());
    let r = neardup(
        &[
            "report",
            &testdata("report_en_a.txt"),
            "--against",
            &compat("v0.1-passages.ndx"),
            "--format",
            "json",
        ],
        d,
        None,
    )
    .ok();
    let without_paths = |mut v: Value| {
        v["a"]["path"] = Value::Null;
        v["against"] = Value::Null;
        v
    };
    let want: Value =
        serde_json::from_str(&std::fs::read_to_string(compat("v0.1-passages.report.json")).unwrap()).unwrap();
    // What 0.1 wrote is still written, the same (later fields, such as
    // `ratios`, are added beside it).
    let mut got = without_paths(serde_json::from_str::<Value>(&r.stdout()).unwrap());
    got.as_object_mut().unwrap().retain(|k, _| want.get(k).is_some());
    assert_eq!(got, without_paths(want));
    // The data directory (a copy: opening may write to it).
    let data = d.join("data");
    std::fs::create_dir(&data).unwrap();
    for f in ["store.redb", "index.ndx"] {
        std::fs::copy(compat(&format!("v0.1-data/{f}")), data.join(f)).unwrap();
    }
    let data = data.display().to_string();
    let r = neardup(&["index", "query", &data, &en, &zh, "--k", "3"], d, None).ok();
    same_lines(&r.stdout(), "v0.1-data.query.jsonl");
    let s = neardup(&["index", "stats", &data, "--json"], d, None).ok();
    let v: Value = serde_json::from_str(&s.stdout()).unwrap();
    assert_eq!(v["documents"], 64);
    // Adding to the old directory keeps its documents and adds counts.
    write(
        d,
        "more.jsonl",
        b"{\"id\": \"new-1\", \"text\": \"A new document about rivers, foxes and dogs.\"}\n",
    );
    neardup(&["index", "add", &data, "more.jsonl"], d, None).ok();
    let s = neardup(&["index", "stats", &data, "--json"], d, None).ok();
    assert_eq!(serde_json::from_str::<Value>(&s.stdout()).unwrap()["documents"], 65);
}

#[test]
fn a_data_directory_written_before_record_version_4_answers_the_same() {
    // testdata/compat/v0.2-data: a MinHash data directory written before
    // store records held their sequence numbers and before band tables
    // were packed (2 segments of eight-byte entries, 2 tombstones: the
    // two replacements in v0.2-more.jsonl). v0.2-data.query.jsonl is what
    // that version answered for these queries.
    let dir = tmp();
    let d = dir.path();
    let compat = |name: &str| testdata(&format!("compat/{name}"));
    let data = d.join("data");
    std::fs::create_dir_all(data.join("index")).unwrap();
    for f in [
        "store.redb",
        "store.clean",
        "index/MANIFEST.json",
        "index/seg-00000001.nds",
        "index/seg-00000002.nds",
    ] {
        std::fs::copy(compat(&format!("v0.2-data/{f}")), data.join(f)).unwrap();
    }
    let data = data.display().to_string();
    let queries = [testdata("docs_en.jsonl"), testdata("copies.jsonl"), compat("v0.2-more.jsonl")];
    let want = std::fs::read_to_string(compat("v0.2-data.query.jsonl")).unwrap();
    let query = || {
        let mut args = vec!["index", "query", data.as_str()];
        args.extend(queries.iter().map(String::as_str));
        neardup(&args, d, None).ok().stdout()
    };
    assert_eq!(query(), want, "the old directory, opened as it is");
    // A new document (a new, packed segment), then a compaction merges the
    // old segments with it: the old answers stay, the new one is found.
    write(d, "copy.jsonl", &std::fs::read(testdata("copies.jsonl")).unwrap()[..]);
    let first: Value = serde_json::from_str(want.lines().next().unwrap()).unwrap();
    neardup(&["index", "add", &data, "copy.jsonl"], d, None).ok();
    neardup(&["index", "compact", &data], d, None).ok();
    let s: Value =
        serde_json::from_str(&neardup(&["index", "stats", &data, "--json"], d, None).ok().stdout()).unwrap();
    assert_eq!(s["documents"], 66 + 6, "{s}");
    // One segment (old and new rows merged, packed) and no tombstones.
    assert_eq!(s["disk_index"]["segments"].as_array().unwrap().len(), 1, "{s}");
    assert_eq!(
        (s["disk_index"]["tombstones"].as_u64(), s["disk_index"]["counters"]["merges"].as_u64()),
        (Some(0), Some(1))
    );
    let after: Vec<Value> = query().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let ids = |v: &Value| -> Vec<String> {
        v["matches"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap().to_owned()).collect()
    };
    let mut got = ids(&after[0]);
    got.retain(|id| !id.starts_with("en/blog/"));
    assert_eq!(got, ids(&first), "the old matches of the first query, and the copies added since");
    let copies: Vec<Value> = std::fs::read_to_string(testdata("copies.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for c in &copies {
        let line = after.iter().find(|l| l["query"] == c["id"]).unwrap();
        assert!(ids(line).contains(&c["id"].as_str().unwrap().to_owned()), "{line}");
    }
}

#[test]
fn eval_counts_by_hand() {
    // Four pairs, hand-checked: identical (d = 0, dup), a near copy (dup),
    // an unrelated pair (not), and one labelled -1 (skipped).
    let dir = tmp();
    let a = "the quick brown fox jumps over the lazy dog near the river bank every single morning";
    let b = "the quick brown fox jumps over the lazy dog near the river bank every single evening";
    let c = "完全不同的一段中文文本，讲的是做饭和洗衣服的家务事情。";
    let lines = [
        serde_json::json!({"text_a": a, "text_b": a, "label": 1, "edit": "format"}),
        serde_json::json!({"text_a": a, "text_b": b, "label": 1, "edit": "combo:sub0.05+html"}),
        serde_json::json!({"text_a": a, "text_b": c, "label": 0, "edit": "random_negative"}),
        serde_json::json!({"text_a": b, "text_b": c, "label": -1}),
    ];
    let body: String = lines.iter().map(|l| format!("{l}\n")).collect();
    write(dir.path(), "p.jsonl", body.as_bytes());
    let fingerprinter = neardup::Fingerprinter::preset("default").unwrap();
    let d_ab = fingerprinter.fingerprint(a).distance(fingerprinter.fingerprint(b));
    let d_ac = fingerprinter.fingerprint(a).distance(fingerprinter.fingerprint(c));
    assert!(d_ab < d_ac, "{d_ab} {d_ac}");
    let run = neardup(
        &["eval", "p.jsonl", "--max-k", "64", "--json", "q.json", "--verify", "none"],
        dir.path(),
        None,
    )
    .ok();
    assert!(run.stderr().contains("skipped 1 pairs"), "{}", run.stderr());
    let q: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("q.json")).unwrap()).unwrap();
    let r = &q[0];
    assert_eq!((r["pairs"].as_u64(), r["duplicates"].as_u64()), (Some(3), Some(2)));
    let curve = r["curve"].as_array().unwrap();
    assert_eq!(curve.len(), 65);
    for (k, p) in curve.iter().enumerate() {
        let k = k as u32;
        let tp = 1 + u32::from(d_ab <= k);
        let fp_ = u32::from(d_ac <= k);
        let (precision, recall) = (f64::from(tp) / f64::from(tp + fp_), f64::from(tp) / 2.0);
        let f1 = 2.0 * f64::from(tp) / f64::from(2 * tp + fp_ + (2 - tp));
        let close = |x: &Value, y: f64| (x.as_f64().unwrap() - y).abs() < 1e-4;
        assert!(
            close(&p["precision"], precision) && close(&p["recall"], recall) && close(&p["f1"], f1),
            "k = {k}: {p}"
        );
    }
    // best k: the smallest k with F1 = 1 (both duplicates, no false alarm).
    assert_eq!(r["best_k"].as_u64(), Some(u64::from(d_ab)));
    assert_eq!(r["by_edit"]["combo"]["duplicates"], 1, "combo:… counts as combo");
    assert_eq!(r["by_length"]["<100"]["pairs"], 3);
    // A bad line is named by file and line; no pairs at all is an error.
    write(dir.path(), "bad.jsonl", b"{\"text_a\": \"x\", \"text_b\": \"y\", \"label\": 1}\n{oops\n");
    neardup(&["eval", "bad.jsonl"], dir.path(), None).fails(1, "bad.jsonl:2");
    write(dir.path(), "none.jsonl", b"{\"text_a\": \"x\", \"text_b\": \"y\", \"label\": -1}\n");
    neardup(&["eval", "none.jsonl"], dir.path(), None).fails(1, "no labelled pairs");
}

#[test]
fn eval_plots_are_written_as_png_and_svg() {
    let dir = tmp();
    let run = neardup(
        &["eval", &testdata("pairs_en.jsonl"), "--preset", "default,python-simhash", "--plot", "plots/new"],
        dir.path(),
        None,
    )
    .ok();
    assert!(run.stderr().contains("wrote 8 plots"), "{}", run.stderr());
    for preset in ["default", "python-simhash"] {
        for chart in ["pr", "distances"] {
            let png = std::fs::read(dir.path().join(format!("plots/new/{preset}-{chart}.png"))).unwrap();
            assert!(png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 10_000, "{preset}-{chart}.png");
            let svg =
                std::fs::read_to_string(dir.path().join(format!("plots/new/{preset}-{chart}.svg"))).unwrap();
            assert!(svg.contains("<svg") && svg.contains(preset), "{preset}-{chart}.svg");
            let wanted = if chart == "pr" { "recall" } else { "label 0" };
            assert!(svg.contains(wanted), "{preset}-{chart}.svg lacks {wanted}");
        }
    }
    // No temporary files are left behind.
    let names: Vec<_> =
        std::fs::read_dir(dir.path().join("plots/new")).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 8, "{names:?}");
    // A plot directory that cannot be created is an error that names it.
    write(dir.path(), "blocker", b"");
    let run = neardup(&["eval", &testdata("pairs_en.jsonl"), "--plot", "blocker/sub"], dir.path(), None);
    assert_eq!(run.code(), 1);
    assert!(run.stderr().contains("blocker/sub"), "{}", run.stderr());
}

/// The copied spans pasted into testdata/report_{en,zh}_a.txt (see
/// testdata/README.md): byte ranges in A and in B.
fn report_cases(lang: &str) -> Vec<((u64, u64), (u64, u64))> {
    let cases: Value =
        serde_json::from_str(&std::fs::read_to_string(testdata("report_cases.json")).unwrap()).unwrap();
    cases[lang]["copied"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let r = |v: &Value| (v[0].as_u64().unwrap(), v[1].as_u64().unwrap());
            (r(&c["a"]), r(&c["b"]))
        })
        .collect()
}

#[test]
fn report_finds_copied_passages_with_their_offsets() {
    let dir = tmp();
    for lang in ["en", "zh"] {
        let (a, b) = (testdata(&format!("report_{lang}_a.txt")), testdata(&format!("report_{lang}_b.txt")));
        let a_text = std::fs::read(&a).unwrap();
        let b_text = std::fs::read(&b).unwrap();
        let run = neardup(&["report", &a, &b, "--format", "json"], dir.path(), None).ok();
        let r: Value = serde_json::from_str(&run.stdout()).unwrap();
        let found: Vec<((u64, u64), (u64, u64))> = r["matches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                (
                    (m["a"]["start"].as_u64().unwrap(), m["a"]["end"].as_u64().unwrap()),
                    (m["b"]["start"].as_u64().unwrap(), m["b"]["end"].as_u64().unwrap()),
                )
            })
            .collect();
        // Each copy is one match that ends exactly where it ends; it starts
        // where it starts, or earlier where the lines before it are the
        // same in both (the handbook's navigation lines: shared text too).
        for (ca, cb) in report_cases(lang) {
            let one = found.iter().filter(|(a, _)| a.0 < ca.1 && ca.0 < a.1).collect::<Vec<_>>();
            assert!(
                one.len() == 1 && one[0].0 .1 == ca.1 && one[0].1 .1 == cb.1,
                "{lang}: copied A {ca:?} / B {cb:?} not found as one match in {found:?}"
            );
            let ((a0, _), (b0, _)) = *one[0];
            let shared =
                |s: &[u8]| String::from_utf8_lossy(s).split_whitespace().collect::<Vec<_>>().join(" ");
            assert!(
                (a0, b0) == (ca.0, cb.0)
                    || shared(&a_text[a0 as usize..ca.0 as usize]).contains("Debian 管理员手册"),
                "{lang}: {ca:?} found from {a0}"
            );
            assert_eq!(a_text[ca.0 as usize..ca.1 as usize], b_text[cb.0 as usize..cb.1 as usize]);
        }
        // Whatever else is found is text the two documents really share
        // (navigation lines of the same handbook), and never overlaps a copy
        // partially.
        for m in r["matches"].as_array().unwrap() {
            let (at, bt) = (m["a"]["text"].as_str().unwrap(), m["b"]["text"].as_str().unwrap());
            let (s, e) =
                (m["a"]["start"].as_u64().unwrap() as usize, m["a"]["end"].as_u64().unwrap() as usize);
            assert_eq!(at.as_bytes(), &a_text[s..e]);
            let words = |t: &str| t.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).count();
            assert!(words(at) >= 3 && words(bt) >= 3, "{lang}: {at:?} ~ {bt:?}");
        }
        let sim = r["similarity"].as_f64().unwrap();
        assert!(sim > 0.2 && sim < 0.6, "{lang}: similarity {sim}");
        // Unrelated documents share nothing.
        let u = testdata(&format!("report_{lang}_unrelated.txt"));
        let run = neardup(&["report", &a, &u, "--format", "json"], dir.path(), None).ok();
        let r: Value = serde_json::from_str(&run.stdout()).unwrap();
        assert_eq!(r["matches"].as_array().unwrap().len(), 0, "{lang}: {}", run.stdout());
        assert_eq!(r["similarity"].as_f64(), Some(0.0));
        // A document against itself: everything.
        let run = neardup(&["report", &a, &a, "--format", "json"], dir.path(), None).ok();
        let r: Value = serde_json::from_str(&run.stdout()).unwrap();
        assert_eq!(r["similarity"].as_f64(), Some(1.0), "{lang}");
        // The text format names the offsets too.
        let run = neardup(&["report", &a, &b], dir.path(), None).ok();
        let ((a0, a1), (b0, b1)) = found[0];
        assert!(run.stdout().contains(&format!("A {a0}..{a1}  <->  B {b0}..{b1}")), "{}", run.stdout());
    }
}

#[test]
fn report_html_is_one_page_with_linked_highlights() {
    let dir = tmp();
    let (a, b) = (testdata("report_zh_a.txt"), testdata("report_zh_b.txt"));
    neardup(&["report", &a, &b, "--format", "html", "-o", "r.html"], dir.path(), None).ok();
    let html = std::fs::read_to_string(dir.path().join("r.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"));
    // Self-contained: no external scripts, styles, images or fonts.
    for external in ["<script src", "<link", "<img", "url("] {
        assert!(!html.contains(external), "{external}");
    }
    // Every match: an anchor on each side, each linking to the other.
    let n = report_cases("zh").len();
    for i in 0..n {
        assert!(
            html.contains(&format!("id=\"a{i}\"")) && html.contains(&format!("id=\"b{i}\"")),
            "match {i}"
        );
        assert!(
            html.contains(&format!("href=\"#b{i}\"")) && html.contains(&format!("href=\"#a{i}\"")),
            "match {i}"
        );
    }
    assert!(html.contains("class=\"hl c0\"") && html.contains("class=\"hl c1\""));
    // Both texts are there in full, escaped.
    let b_text = std::fs::read_to_string(&b).unwrap();
    let first_line = b_text.lines().find(|l| !l.trim().is_empty()).unwrap();
    assert!(html.contains(first_line.trim()), "{first_line}");
    let dir2 = tmp();
    write(
        dir2.path(),
        "a.txt",
        b"Tags <b>like this</b> & \"quotes\" are text. They must stay text in the page, not markup at all.",
    );
    neardup(&["report", "a.txt", "a.txt", "--format", "html", "-o", "x.html"], dir2.path(), None).ok();
    let x = std::fs::read_to_string(dir2.path().join("x.html")).unwrap();
    assert!(x.contains("&lt;b&gt;like this&lt;/b&gt; &amp; &quot;quotes&quot;") && !x.contains("<b>like"));
}

#[test]
fn report_against_a_passage_index() {
    let dir = tmp();
    let docs = ["report_en_b.txt", "report_en_unrelated.txt", "report_zh_b.txt", "report_zh_unrelated.txt"];
    let paths: Vec<String> = docs.iter().map(|d| testdata(d)).collect();
    let mut args = vec!["index", "build", "--passages", "-o", "p.ndx"];
    args.extend(paths.iter().map(String::as_str));
    let run = neardup(&args, dir.path(), None).ok();
    assert!(run.stderr().contains("indexed"), "{}", run.stderr());
    let stats = neardup(&["index", "stats", "p.ndx", "--json"], dir.path(), None).ok();
    let stats: Value = serde_json::from_str(&stats.stdout()).unwrap();
    assert!(stats["entries"].as_u64().unwrap() > 20);
    for lang in ["en", "zh"] {
        let a = testdata(&format!("report_{lang}_a.txt"));
        let run = neardup(&["report", &a, "--against", "p.ndx", "--format", "json"], dir.path(), None).ok();
        let r: Value = serde_json::from_str(&run.stdout()).unwrap();
        let source = testdata(&format!("report_{lang}_b.txt"));
        let sources = r["sources"].as_array().unwrap();
        assert_eq!(sources[0]["id"].as_str(), Some(source.as_str()), "{lang}: {sources:?}");
        assert_eq!(sources.len(), 1, "{lang}: only the source shares text: {sources:?}");
        // Every copied span is covered, to a window's precision.
        let a_text = std::fs::read(&a).unwrap();
        for (ca, cb) in report_cases(lang) {
            let hit = r["matches"].as_array().unwrap().iter().find(|m| {
                let (s, e) = (m["a"]["start"].as_u64().unwrap(), m["a"]["end"].as_u64().unwrap());
                s < ca.1 && ca.0 < e
            });
            let m = hit.unwrap_or_else(|| panic!("{lang}: copied {ca:?} not found: {}", run.stdout()));
            let (s, e) = (m["a"]["start"].as_u64().unwrap(), m["a"]["end"].as_u64().unwrap());
            // Within a window (2 sentences) of the copy's edges.
            let slack = |x: u64, y: u64| {
                String::from_utf8_lossy(&a_text[x.min(y) as usize..x.max(y) as usize]).chars().count()
            };
            assert!(slack(s, ca.0) < 200 && slack(e, ca.1) < 200, "{lang}: {s}..{e} vs {ca:?}");
            let (bs, be) = (m["b"]["start"].as_u64().unwrap(), m["b"]["end"].as_u64().unwrap());
            assert!(bs < cb.1 && cb.0 < be, "{lang}: B {bs}..{be} vs {cb:?}");
            assert_eq!(m["b"]["id"].as_str(), Some(source.as_str()));
        }
    }
    // --exclude leaves a document out; --min-windows drops spans of fewer
    // matched windows.
    let a_en = testdata("report_en_a.txt");
    for extra in [["--exclude", paths[0].as_str()], ["--min-windows", "1000"]] {
        let mut args = vec!["report", a_en.as_str(), "--against", "p.ndx", "--format", "json"];
        args.extend(extra);
        let run = neardup(&args, dir.path(), None).ok();
        let r: Value = serde_json::from_str(&run.stdout()).unwrap();
        let found = (r["matches"].as_array().unwrap().len(), r["similarity"].as_f64());
        assert_eq!(found, (0, Some(0.0)), "{extra:?}: {}", run.stdout());
    }
    // An index of whole documents is refused, with what to do.
    let mut args = vec!["index", "build", "-o", "d.ndx", "--preset", "default"];
    args.extend(paths.iter().map(String::as_str));
    neardup(&args, dir.path(), None).ok();
    let run = neardup(&["report", &testdata("report_en_a.txt"), "--against", "d.ndx"], dir.path(), None);
    assert_eq!(run.code(), 2);
    assert!(run.stderr().contains("--passages"), "{}", run.stderr());
    // So are passage flags that differ from the index's.
    let run = neardup(
        &["report", &testdata("report_en_a.txt"), "--against", "p.ndx", "--window", "5"],
        dir.path(),
        None,
    );
    assert_eq!(run.code(), 2);
    assert!(run.stderr().contains("fixed when it was built"), "{}", run.stderr());
}

#[test]
fn report_refuses_bad_input_clearly() {
    let dir = tmp();
    write(dir.path(), "ok.txt", "Some text. More text here.".as_bytes());
    write(dir.path(), "bad.txt", b"valid start \xff\xfe then junk");
    write(dir.path(), "bin.dat", b"\x00\x01\x02binary");
    write(dir.path(), "empty.txt", b"  \n ");
    for (file, wanted) in [
        ("bad.txt", "invalid UTF-8 at byte 12"),
        ("bin.dat", "binary"),
        ("empty.txt", "empty"),
        ("nope.txt", "cannot open"),
    ] {
        let run = neardup(&["report", "ok.txt", file], dir.path(), None);
        assert_eq!(run.code(), 1, "{file}");
        assert!(run.stderr().contains(file) && run.stderr().contains(wanted), "{file}: {}", run.stderr());
    }
    let run = neardup(&["report", "ok.txt", "ok.txt", "--seed-words", "0"], dir.path(), None);
    assert_eq!(run.code(), 2);
    assert!(run.stderr().contains("--seed-words"), "{}", run.stderr());
    let run = neardup(&["report", "ok.txt", "ok.txt", "-k", "3"], dir.path(), None);
    assert_eq!(run.code(), 2, "-k is for --against");
    let run = neardup(&["report", "ok.txt"], dir.path(), None);
    assert_eq!(run.code(), 2, "B or --against is required");
    // A failed report leaves no output file behind.
    let run =
        neardup(&["report", "ok.txt", "bad.txt", "-o", "out.html", "--format", "html"], dir.path(), None);
    assert_eq!(run.code(), 1);
    assert!(!dir.path().join("out.html").exists());
}

/// Headless Chromium, if installed (`CHROMIUM` names it explicitly).
#[test]
#[cfg_attr(
    not(neardup_chromium),
    ignore = "needs Chromium (apt-get install chromium); NEARDUP_REQUIRE_CHROMIUM=1 requires it"
)]
fn report_html_renders_highlights_in_headless_chromium() {
    // Built to run here: build.rs found Chromium, or CI requires it.
    let browser = env!("NEARDUP_CHROMIUM");
    assert!(
        !browser.is_empty(),
        "Chromium is required (NEARDUP_REQUIRE_CHROMIUM) but not on PATH: apt-get install chromium"
    );
    let dir = tmp();
    let (a, b) = (testdata("report_en_a.txt"), testdata("report_en_b.txt"));
    neardup(&["report", &a, &b, "--format", "html", "-o", "r.html"], dir.path(), None).ok();
    let page = dir.path().join("r.html");
    let shot = dir.path().join("shot.png");
    let mut child = Command::new(browser)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1280,900"])
        .arg(format!("--user-data-dir={}", dir.path().join("profile").display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", page.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium starts");
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > std::time::Duration::from_secs(90) {
            let _ = child.kill();
            panic!("chromium took over 90 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let decoder = png::Decoder::new(std::fs::File::open(&shot).expect("a screenshot"));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    assert!(info.width >= 1000 && info.height >= 800, "{}x{}", info.width, info.height);
    // Count the pixels of the first two highlight colours (CSS .c0, .c1) in
    // A's column (left half) and B's (right half).
    let colours = [(0xff, 0xe0, 0x8a), (0xa8, 0xe6, 0xa1)];
    let mut counts = [[0u32; 2]; 2];
    for y in 0..info.height as usize {
        for x in 0..info.width as usize {
            let i = (y * info.width as usize + x) * channels;
            let px = (buf[i], buf[i + 1], buf[i + 2]);
            let near = |c: (u8, u8, u8)| {
                px.0.abs_diff(c.0) <= 3 && px.1.abs_diff(c.1) <= 3 && px.2.abs_diff(c.2) <= 3
            };
            for (k, c) in colours.iter().enumerate() {
                if near(*c) {
                    counts[k][usize::from(x >= info.width as usize / 2)] += 1;
                }
            }
        }
    }
    for (k, [left, right]) in counts.iter().enumerate() {
        assert!(*left > 500 && *right > 500, "highlight colour {k}: {left} pixels in A, {right} in B");
    }
}

// ---- MinHash ----

/// The labelled pairs' texts as a corpus (both languages): near duplicates
/// by construction. Returns the corpus path and its (id, text) records.
fn pairs_corpus(dir: &Path) -> (String, Vec<(Value, String)>) {
    let mut seen = std::collections::HashSet::new();
    let mut body = String::new();
    let mut records = Vec::new();
    for lang in ["en", "zh"] {
        for l in std::fs::read_to_string(testdata(&format!("pairs_{lang}.jsonl"))).unwrap().lines() {
            let p: Value = serde_json::from_str(l).unwrap();
            for (id, text) in [("id_a", "text_a"), ("id_b", "text_b")] {
                if seen.insert(p[id].as_str().unwrap().to_owned()) {
                    body += &format!("{}\n", serde_json::json!({"id": p[id], "text": p[text]}));
                    records.push((p[id].clone(), p[text].as_str().unwrap().to_owned()));
                }
            }
        }
    }
    (write(dir, "corpus.jsonl", body.as_bytes()).display().to_string(), records)
}

/// Clusters of clusters.jsonl as sorted positions (of each member's id), sorted.
fn clusters_of(path: &Path, position: impl Fn(&Value) -> usize) -> Vec<Vec<usize>> {
    let mut got: Vec<Vec<usize>> = std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            let c: Value = serde_json::from_str(l).unwrap();
            let mut m: Vec<usize> =
                c["members"].as_array().unwrap().iter().map(|m| position(&m["id"])).collect();
            m.sort_unstable();
            m
        })
        .collect();
    got.sort();
    got
}

#[test]
fn dedup_minhash_equals_brute_force_over_signatures() {
    let dir = tmp();
    let (corpus, records) = pairs_corpus(dir.path());
    for threshold in [0.5, 0.3] {
        let out = format!("out{threshold}");
        let t = threshold.to_string();
        neardup(
            &["dedup", &corpus, "-o", &out, "--method", "minhash", "--threshold", &t, "--pairs"],
            dir.path(),
            None,
        )
        .ok();
        // Brute force: every pair sharing a band of the threshold's banding
        // whose estimate reaches the threshold.
        let m = neardup::detector::Detector::preset("minhash")
            .unwrap()
            .with_method(None, Some(threshold))
            .unwrap();
        let m = m.minhasher().unwrap();
        let sigs: Vec<_> = records.iter().map(|r| m.signature(&r.1).unwrap()).collect();
        let banding = m.banding();
        let mut want = Vec::new();
        for i in 0..sigs.len() {
            for j in i + 1..sigs.len() {
                let (a, b) = (sigs[i].values(), sigs[j].values());
                if banding.shares_band(a, b) && neardup::minhash::estimate(a, b) >= threshold {
                    want.push((i, j, 0));
                }
            }
        }
        let expected = brute_clusters(sigs.len(), &want);
        assert!(!expected.is_empty(), "testdata has near duplicates at {threshold}");
        assert_eq!(
            clusters_of(&dir.path().join(&out).join("clusters.jsonl"), |id| {
                records.iter().position(|r| r.0 == *id).unwrap()
            }),
            expected
        );
        let pairs = std::fs::read_to_string(dir.path().join(&out).join("pairs.jsonl")).unwrap();
        let mut got: Vec<(usize, usize, u32)> = pairs
            .lines()
            .map(|l| {
                let p: Value = serde_json::from_str(l).unwrap();
                let at = |k: &str| records.iter().position(|r| r.0 == p[k]).unwrap();
                let (i, j) = (at("a"), at("b"));
                let s = neardup::minhash::estimate(sigs[i].values(), sigs[j].values());
                assert!((p["similarity"].as_f64().unwrap() - s).abs() < 1e-4, "{p}");
                (i.min(j), i.max(j), 0)
            })
            .collect();
        got.sort_unstable();
        assert_eq!(got, want, "pairs.jsonl at {threshold}");
        let s: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join(&out).join("summary.json")).unwrap(),
        )
        .unwrap();
        assert_eq!((s["method"].as_str(), s["threshold"].as_f64()), (Some("minhash"), Some(threshold)));
        assert_eq!(
            (s["bands"].as_u64(), s["rows"].as_u64()),
            (Some(banding.bands as u64), Some(banding.rows as u64))
        );
    }
    // The preset names the method too; --verify drops pairs below an exact shingle Jaccard.
    neardup(&["dedup", &corpus, "-o", "p", "--preset", "minhash"], dir.path(), None).ok();
    assert_eq!(
        std::fs::read(dir.path().join("p/clusters.jsonl")).unwrap(),
        std::fs::read(dir.path().join("out0.5/clusters.jsonl")).unwrap()
    );
    neardup(&["dedup", &corpus, "-o", "v", "--preset", "minhash", "--verify", "jaccard:1"], dir.path(), None)
        .ok();
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("v/summary.json")).unwrap()).unwrap();
    let p: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("p/summary.json")).unwrap()).unwrap();
    assert!(v["duplicates_removed"].as_u64() < p["duplicates_removed"].as_u64(), "{v} {p}");
}

#[test]
fn dedup_minhash_refuses_what_does_not_fit() {
    let dir = tmp();
    write(
        dir.path(),
        "in.jsonl",
        b"{\"id\": 1, \"text\": \"some words here\"}\n{\"id\": 2, \"text\": \"\"}\n",
    );
    write(dir.path(), "fps.txt", b"0123456789abcdef\n");
    let d = dir.path();
    // An empty document is named, unless allowed (then it is kept, alone).
    neardup(&["dedup", "in.jsonl", "-o", "o", "--method", "minhash"], d, None).fails(1, "in.jsonl:2");
    neardup(&["dedup", "in.jsonl", "-o", "o", "--method", "minhash", "--allow-empty"], d, None).ok();
    let kept = std::fs::read_to_string(d.join("o/kept.jsonl")).unwrap();
    assert_eq!(kept.lines().count(), 2);
    // Mixing methods, thresholds out of range, thresholds with k, MinHash of fingerprints.
    neardup(&["dedup", "in.jsonl", "-o", "o", "--method", "simhash", "--preset", "minhash"], d, None)
        .fails(2, "method is minhash, not simhash");
    neardup(&["dedup", "in.jsonl", "-o", "o", "--method", "minhash", "--preset", "default"], d, None)
        .fails(2, "the preset minhash");
    neardup(&["dedup", "in.jsonl", "-o", "o", "--threshold", "0"], d, None).fails(2, "Jaccard threshold");
    neardup(&["dedup", "in.jsonl", "-o", "o", "--threshold", "0.5", "--k", "3"], d, None).fails(2, "--k");
    neardup(&["dedup", "--fingerprints", "fps.txt", "-o", "o", "--method", "minhash"], d, None)
        .fails(2, "needs the texts");
    // A banding that does not fit its signatures ([lsh] is the last table).
    let config = neardup::presets::config("minhash").unwrap().to_toml() + "bands = 20\nrows = 10\n";
    write(d, "bad.toml", config.as_bytes());
    neardup(&["dedup", "in.jsonl", "-o", "o", "--config", "bad.toml"], d, None).fails(2, "do not fit");
}

#[test]
fn eval_minhash_counts_by_hand() {
    let dir = tmp();
    let a =
        "the quick brown fox jumps over the lazy dog near the river bank every single morning of the year";
    let b =
        "the quick brown fox jumps over the lazy dog near the river bank every single evening of the year";
    let c = "完全不同的一段中文文本，讲的是做饭和洗衣服的家务事情。";
    let lines = [
        serde_json::json!({"text_a": a, "text_b": a, "label": 1, "edit": "format"}),
        serde_json::json!({"text_a": a, "text_b": b, "label": 1, "edit": "sub"}),
        serde_json::json!({"text_a": a, "text_b": c, "label": 0, "edit": "random_negative"}),
    ];
    let body: String = lines.iter().map(|l| format!("{l}\n")).collect();
    write(dir.path(), "p.jsonl", body.as_bytes());
    neardup(
        &["eval", "p.jsonl", "--method", "minhash", "--json", "q.json", "--plot", "plots"],
        dir.path(),
        None,
    )
    .ok();
    let q: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("q.json")).unwrap()).unwrap();
    let r = &q[0];
    assert_eq!((r["method"].as_str(), r["name"].as_str()), (Some("minhash"), Some("minhash")));
    assert_eq!(r["recommended_threshold"].as_f64(), Some(neardup::presets::MINHASH_THRESHOLD));
    let m = neardup::minhash::MinHasher::preset("minhash").unwrap();
    let (sa, sb, sc) = (m.signature(a).unwrap(), m.signature(b).unwrap(), m.signature(c).unwrap());
    let curve = r["curve"].as_array().unwrap();
    assert_eq!(curve.len(), 100);
    for p in curve {
        let t = p["threshold"].as_f64().unwrap();
        let banding = neardup::minhash::Banding {
            bands: p["bands"].as_u64().unwrap() as usize,
            rows: p["rows"].as_u64().unwrap() as usize,
        };
        let found = |x: &neardup::minhash::Signature, y: &neardup::minhash::Signature| {
            banding.shares_band(x.values(), y.values()) && x.jaccard(y) >= t
        };
        assert!(!found(&sa, &sc), "an unrelated pair is never found");
        let tp = 1 + u32::from(found(&sa, &sb));
        assert_eq!(p["recall"].as_f64().unwrap(), f64::from(tp) / 2.0, "{p}");
        assert_eq!(p["precision"].as_f64().unwrap(), 1.0, "{p}");
    }
    let at = &r["at_recommended"];
    let banding = m.banding();
    let found_ab = banding.shares_band(sa.values(), sb.values()) && sa.jaccard(&sb) >= m.threshold();
    assert_eq!(at["tp"].as_u64(), Some(1 + u64::from(found_ab)));
    for chart in ["pr", "distances"] {
        let svg = std::fs::read_to_string(dir.path().join(format!("plots/minhash-{chart}.svg"))).unwrap();
        assert!(svg.contains("Jaccard"), "minhash-{chart}.svg");
    }
    // A radius is SimHash's, a threshold MinHash's.
    neardup(&["eval", "p.jsonl", "--method", "minhash", "--k", "3"], dir.path(), None)
        .fails(2, "--threshold");
    neardup(&["eval", "p.jsonl", "--preset", "default", "--threshold", "0.4"], dir.path(), None)
        .fails(2, "--k");
    // A threshold alone implies MinHash, as in dedup.
    neardup(&["eval", "p.jsonl", "--threshold", "0.4"], dir.path(), None).ok();
    neardup(&["eval", "p.jsonl", "--method", "minhash", "--preset", "default"], dir.path(), None)
        .fails(2, "method is simhash");
}

#[test]
fn config_show_prints_the_banding_and_s_curve() {
    let dir = tmp();
    let show = neardup(&["config", "show", "minhash"], dir.path(), None).ok().stdout();
    assert!(show.contains("32 bands × 4 rows of the 128 values"), "{show}");
    assert!(show.contains("a missed pair weighed 0.9"), "{show}");
    assert!(show.contains("similarity   P(candidate)"), "{show}");
    write(dir.path(), "m.toml", show.as_bytes());
    let check = neardup(&["config", "check", "m.toml"], dir.path(), None).ok().stdout();
    assert!(check.contains("same as preset minhash") && check.contains("Jaccard ≥ 0.5"), "{check}");
    let list = neardup(&["config", "list"], dir.path(), None).ok().stdout();
    assert!(list.lines().any(|l| l == "minhash"), "{list}");
}

#[test]
fn a_csv_column_named_like_serde_jsons_raw_value_token_round_trips() {
    // Found by fuzz/fuzz_targets/input.rs: with serde_json's raw_value
    // feature on, an object whose first key is this token was read as raw
    // JSON text, so such a CSV's kept.jsonl could not be read back.
    let dir = tmp();
    let csv = "$serde_json::private::RawValue,text\n\"1,e\",a text long enough to have some features in it\n";
    write(dir.path(), "in.csv", csv.as_bytes());
    neardup(&["dedup", "in.csv", "-o", "out"], dir.path(), None).ok();
    let kept = std::fs::read_to_string(dir.path().join("out/kept.jsonl")).unwrap();
    write(dir.path(), "again.jsonl", kept.as_bytes());
    neardup(&["fingerprint", "again.jsonl"], dir.path(), None).ok();
}

/// Token 3-shingles as `../shared/data/textsim.py` defines them for the
/// labels: NFKC, lower case, each CJK ideograph one token, every other
/// run of letters and digits one token.
fn shingles3(text: &str) -> std::collections::HashSet<String> {
    use unicode_normalization::UnicodeNormalization;
    let cjk =
        |c: char| matches!(c, '\u{3400}'..='\u{4dbf}' | '\u{4e00}'..='\u{9fff}' | '\u{f900}'..='\u{faff}');
    let mut tokens: Vec<String> = Vec::new();
    let mut run = String::new();
    for c in text.nfkc().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() && !cjk(c) {
            run.push(c);
            continue;
        }
        if !run.is_empty() {
            tokens.push(std::mem::take(&mut run));
        }
        if cjk(c) {
            tokens.push(c.to_string());
        }
    }
    if !run.is_empty() {
        tokens.push(run);
    }
    tokens.windows(3).map(|w| w.join("\u{1f}")).collect()
}

fn jaccard3(a: &str, b: &str) -> f64 {
    let (a, b) = (shingles3(a), shingles3(b));
    a.intersection(&b).count() as f64 / a.union(&b).count() as f64
}

#[test]
fn the_readme_demo_removes_real_near_duplicates_and_nothing_else() {
    // The README's first command, as written there.
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
    let command =
        "dedup testdata/docs_en.jsonl testdata/docs_zh.jsonl testdata/copies.jsonl -o target/sample-dedup";
    assert!(readme.lines().take(12).any(|l| l.ends_with(command)), "the README's first command changed");
    let dir = tmp();
    let files = ["docs_en.jsonl", "docs_zh.jsonl", "copies.jsonl"].map(testdata);
    let run = neardup(&["dedup", &files[0], &files[1], &files[2], "-o", "out"], dir.path(), None).ok();
    let shown = run.stderr();
    assert!(shown.contains("70 documents, 65 kept, 5 removed in 5 clusters"), "{shown}");
    assert!(shown.contains("removed, similarity 0.74  en/blog/heinous-dvd-pirates"), "{shown}");
    assert!(shown.contains("第 10 章 Debian 和内核 (转载)"), "titles are shown: {shown}");
    let records: Vec<Value> = files
        .iter()
        .flat_map(|f| {
            std::fs::read_to_string(f)
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect::<Vec<_>>()
        })
        .collect();
    let text =
        |id: &Value| records.iter().find(|r| &r["id"] == id).unwrap()["text"].as_str().unwrap().to_owned();
    // Removed: exactly the records that say they repeat another, each with
    // a token 3-shingle Jaccard of at least 0.5 to another cluster member.
    let clusters: Vec<Value> = std::fs::read_to_string(dir.path().join("out/clusters.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut removed = Vec::new();
    for c in &clusters {
        let members: Vec<&Value> = c["members"].as_array().unwrap().iter().map(|m| &m["id"]).collect();
        for &m in members.iter().filter(|&&m| m != &c["representative"]) {
            let best =
                members.iter().filter(|&&o| o != m).map(|o| jaccard3(&text(m), &text(o))).fold(0.0, f64::max);
            assert!(best >= 0.5, "{m} is removed with a 3-shingle Jaccard of {best:.3}");
            removed.push(m.as_str().unwrap().to_owned());
        }
    }
    let mut copies: Vec<String> = records
        .iter()
        .filter(|r| r.get("copy_of").is_some())
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .collect();
    removed.sort();
    copies.sort();
    assert_eq!(removed, copies);
    let kept = std::fs::read_to_string(dir.path().join("out/kept.jsonl")).unwrap();
    assert_eq!(kept.lines().count(), 65);
}

/// Splits a README command line into words (double quotes group words).
fn shell_words(line: &str) -> Vec<String> {
    let (mut words, mut word, mut quoted, mut started) = (Vec::new(), String::new(), false, false);
    for c in line.chars() {
        match c {
            '"' => (quoted, started) = (!quoted, true),
            ' ' if !quoted => {
                if started {
                    words.push(std::mem::take(&mut word));
                }
                started = false;
            }
            c => (word, started) = (word + &c.to_string(), true),
        }
    }
    if started {
        words.push(word);
    }
    words
}

#[test]
fn readme_examples_print_what_the_readme_shows() {
    // Every ```sh block of the README that starts with `$ neardup …` runs
    // here (in a folder that sees testdata/) and prints what follows it,
    // timings aside.
    let root = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let dir = tmp();
    #[cfg(unix)]
    std::os::unix::fs::symlink(root.join("testdata").canonicalize().unwrap(), dir.path().join("testdata"))
        .unwrap();
    let seconds = |s: &str| {
        s.split(" s)")
            .map(|p| p.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.'))
            .collect::<Vec<_>>()
            .join(" s)")
    };
    let mut ran = 0;
    for block in readme.split("```sh\n").skip(1) {
        let block = block.split("```").next().unwrap();
        let Some((command, shown)) = block.strip_prefix("$ neardup ").and_then(|b| b.split_once('\n')) else {
            continue;
        };
        let args = shell_words(command);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = neardup(&args, dir.path(), None).ok();
        let printed = format!("{}{}", run.stdout(), run.stderr());
        assert_eq!(seconds(&printed), seconds(shown), "README: $ neardup {command}");
        ran += 1;
    }
    assert!(ran >= 2, "the README's examples were found ({ran})");
}

/// `neardup` with `NEARDUP_SIMD` set to `level`.
fn with_simd(level: &str, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_neardup")).args(args).env("NEARDUP_SIMD", level).output().unwrap()
}

#[test]
fn every_simd_level_gives_the_same_fingerprints_and_an_unknown_one_is_refused() {
    let en = testdata("docs_en.jsonl");
    let zh = testdata("docs_zh.jsonl");
    for preset in ["python-simhash", "default", "keywords"] {
        let args = ["fingerprint", "--preset", preset, &en, &zh];
        let auto = with_simd("auto", &args);
        assert!(auto.status.success(), "{}", String::from_utf8_lossy(&auto.stderr));
        assert_eq!(String::from_utf8_lossy(&auto.stdout).lines().count(), 64);
        // Levels this CPU lacks fall back (with a note), so every name runs.
        for level in ["portable", "avx2", "avx512"] {
            let out = with_simd(level, &args);
            assert!(out.status.success(), "{level}: {}", String::from_utf8_lossy(&out.stderr));
            assert_eq!(out.stdout, auto.stdout, "{preset} at NEARDUP_SIMD={level}");
            let supported = level.parse::<neardup::simd::Level>().unwrap().is_supported();
            assert_eq!(String::from_utf8_lossy(&out.stderr).contains("does not support it"), !supported);
        }
    }
    let bad = with_simd("sse9", &["fingerprint", &en]);
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("NEARDUP_SIMD=\"sse9\" is not a SIMD level: use auto, avx512, avx2 or portable"),
        "{err}"
    );
    assert!(bad.stdout.is_empty());
}

#[test]
fn index_query_fingerprint_lists_answer_as_single_queries() {
    // A list at a fixed k takes the index's batched query; each answer must
    // be the one a single query gives.
    let dir = tmp();
    let en = testdata("docs_en.jsonl");
    let zh = testdata("docs_zh.jsonl");
    neardup(&["index", "build", &en, &zh, "-o", "i.ndx", "--preset", "default"], dir.path(), None).ok();
    let fps = neardup(&["fingerprint", &en, &zh, "--format", "tsv"], dir.path(), None).ok().stdout();
    write(dir.path(), "fps.tsv", fps.as_bytes());
    for k in ["0", "3", "12"] {
        let batch =
            neardup(&["index", "query", "i.ndx", "--fingerprints", "fps.tsv", "--k", k], dir.path(), None)
                .ok()
                .jsonl();
        assert_eq!(batch.len(), 64);
        for (line, got) in fps.lines().zip(&batch).step_by(7) {
            let fp = line.rsplit_once('\t').unwrap().1;
            let one = neardup(&["index", "query", "i.ndx", "--fingerprint", fp, "--k", k], dir.path(), None)
                .ok()
                .jsonl();
            assert_eq!(one[0]["matches"], got["matches"], "{fp} at k = {k}");
            assert!(!got["matches"].as_array().unwrap().is_empty());
        }
    }
    // A list longer than a block (65,536 queries are answered at a time)
    // is streamed: every block answers as the first, in order, and a
    // --fingerprint flag comes first.
    let long: String = (0..70_000).map(|i| fps.lines().nth(i % 64).unwrap().to_owned() + "\n").collect();
    write(dir.path(), "long.tsv", long.as_bytes());
    let first = fps.lines().next().unwrap().rsplit_once('\t').unwrap().1;
    let got = neardup(
        &["index", "query", "i.ndx", "--fingerprint", first, "--fingerprints", "long.tsv", "--k", "3"],
        dir.path(),
        None,
    )
    .ok()
    .jsonl();
    assert_eq!(got.len(), 70_001);
    assert_eq!(got[0]["query"], first);
    let once =
        neardup(&["index", "query", "i.ndx", "--fingerprints", "fps.tsv", "--k", "3"], dir.path(), None)
            .ok()
            .jsonl();
    for (i, line) in got[1..].iter().enumerate() {
        assert_eq!(line, &once[i % 64], "query {i}");
    }
    // An empty list has nothing to query.
    write(dir.path(), "empty.tsv", b"\n");
    neardup(&["index", "query", "i.ndx", "--fingerprints", "empty.tsv", "--k", "3"], dir.path(), None)
        .fails(2, "nothing to query");
}
