//! Runs the `neardup` binary in temporary directories.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

struct Run {
    out: Output,
}

impl Run {
    fn code(&self) -> i32 {
        self.out.status.code().expect("exited")
    }
    fn stdout(&self) -> String {
        String::from_utf8(self.out.stdout.clone()).unwrap()
    }
    fn stderr(&self) -> String {
        String::from_utf8(self.out.stderr.clone()).unwrap()
    }
    fn ok(self) -> Run {
        assert_eq!(self.code(), 0, "stderr: {}", self.stderr());
        assert!(!self.stderr().contains("panicked"), "{}", self.stderr());
        self
    }
    fn fails(self, code: i32, needle: &str) -> Run {
        assert_eq!(self.code(), code, "stdout: {}\nstderr: {}", self.stdout(), self.stderr());
        assert!(self.stderr().contains(needle), "expected {needle:?} in stderr: {}", self.stderr());
        assert!(!self.stderr().contains("panicked"), "{}", self.stderr());
        self
    }
    fn jsonl(&self) -> Vec<Value> {
        self.stdout().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    }
}

fn neardup(args: &[&str], dir: &Path, stdin: Option<&[u8]>) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_neardup"));
    cmd.args(args).current_dir(dir).stdout(Stdio::piped()).stderr(Stdio::piped());
    cmd.env_remove("RUST_BACKTRACE");
    cmd.stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() });
    let mut child = cmd.spawn().unwrap();
    if let Some(data) = stdin {
        child.stdin.take().unwrap().write_all(data).unwrap();
    }
    Run { out: child.wait_with_output().unwrap() }
}

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn write(dir: &Path, name: &str, data: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, data).unwrap();
    p
}

fn testdata(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata").join(name).display().to_string()
}

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
    for p in ["keywords", "python-simhash", "yanyiwu"] {
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

#[test]
fn compare_texts_and_files() {
    let d = tmp();
    let r = neardup(&["compare", "--text", EN, "--text", &format!("{EN}!"), "--json"], d.path(), None).ok();
    let v: Value = serde_json::from_str(&r.stdout()).unwrap();
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
        &[
            "compare",
            "a.txt",
            "--text",
            "今天天气真好，我们去公园散步吧",
            "--explain",
            "--preset",
            "keywords",
        ],
        d.path(),
        None,
    )
    .ok();
    let out = r.stdout();
    assert!(out.contains("散步") && out.contains("bits closest to flipping"), "{out}");
    neardup(&["compare", "--text", "one"], d.path(), None).fails(2, "exactly two documents");
    write(d.path(), "bad.txt", b"\xff");
    neardup(&["compare", "bad.txt", "a.txt"], d.path(), None).fails(1, "bad.txt: invalid UTF-8");
    write(d.path(), "bin.dat", b"\x7fELF\x00\x01 binary");
    neardup(&["compare", "bin.dat", "a.txt"], d.path(), None).fails(1, "bin.dat: looks binary");
    neardup(&["compare", "--text", "", "--text", "x y z"], d.path(), None)
        .fails(1, "--text #1: document has no features");
    neardup(&["compare", "--text", "!!", "--text", "?"], d.path(), None).fails(1, "pass --allow-empty");
    let r = neardup(&["compare", "--text", "", "--text", "", "--allow-empty", "--json"], d.path(), None).ok();
    assert!(r.stdout().contains("\"distance\": 0"), "{}", r.stdout());
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
