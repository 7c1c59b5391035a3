//! A data directory's passage files (`passages.ndx`, `passages.texts.redb`)
//! as `neardup serve` and `neardup report --against DIR` open them: damage
//! and missing files are errors naming the file and the rebuild command;
//! `index add` to the passage index keeps the new sources' texts; `kill -9`
//! during such an add loses nothing acknowledged.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

fn testdata(name: &str) -> String {
    format!("{}/../../testdata/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn neardup(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_neardup")).args(args).output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A data directory whose passages index `sources`, with their texts.
fn passage_dir(at: &Path, sources: &[&str]) -> PathBuf {
    std::fs::create_dir_all(at).unwrap();
    let sources: Vec<String> = sources.iter().map(|s| testdata(s)).collect();
    let mut args = vec!["index", "build", "--passages", "--keep-texts", "-o", at.to_str().unwrap()];
    args.extend(sources.iter().map(String::as_str));
    let o = neardup(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    at.to_owned()
}

/// `neardup report A --against DIR` as JSON.
fn report(dir: &Path, a: &str) -> Result<Value, String> {
    let o = neardup(&["report", &testdata(a), "--against", dir.to_str().unwrap(), "--format", "json"]);
    if !o.status.success() {
        return Err(stderr(&o));
    }
    Ok(serde_json::from_slice(&o.stdout).unwrap())
}

/// What `neardup serve --data DIR` says when it stops at start, within
/// 60 s (a server that starts instead is a failure).
fn serve_refuses(dir: &Path) -> String {
    let mut child = Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args(["serve", "--data", dir.to_str().unwrap(), "--listen", "127.0.0.1:0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
            assert!(!status.success(), "{err}");
            assert!(!err.contains("panicked"), "{err}");
            return err;
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("neardup serve started on damaged passages of {}", dir.display());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Each damaged or missing passage file: the server does not start and
/// the report does not run, both naming the file and the rebuild.
#[test]
fn damaged_or_missing_passage_files_are_errors_naming_them() {
    let tmp = tempfile::tempdir().unwrap();
    let good = passage_dir(&tmp.path().join("good"), &["report_en_b.txt", "report_zh_b.txt"]);
    let r = report(&good, "report_en_a.txt").unwrap();
    assert_eq!(r["sources"][0]["text"], Value::Bool(true), "{r}");
    let copy = |name: &str| {
        let to = tmp.path().join(name);
        std::fs::create_dir(&to).unwrap();
        for f in ["passages.ndx", "passages.texts.redb"] {
            std::fs::copy(good.join(f), to.join(f)).unwrap();
        }
        to
    };
    let rebuild = "neardup index build --passages INPUTS -o DIR --keep-texts";

    // One flipped byte in the middle of the passage index.
    let flipped = copy("flipped");
    let mut bytes = std::fs::read(flipped.join("passages.ndx")).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x01;
    std::fs::write(flipped.join("passages.ndx"), bytes).unwrap();
    // The texts deleted.
    let deleted = copy("deleted");
    std::fs::remove_file(deleted.join("passages.texts.redb")).unwrap();
    // The texts cut short.
    let truncated = copy("truncated");
    let bytes = std::fs::read(truncated.join("passages.texts.redb")).unwrap();
    std::fs::write(truncated.join("passages.texts.redb"), &bytes[..bytes.len() / 2]).unwrap();
    // The texts replaced by something else.
    let foreign = copy("foreign");
    std::fs::write(foreign.join("passages.texts.redb"), b"not a database at all").unwrap();

    for (dir, file) in [
        (&flipped, "passages.ndx"),
        (&deleted, "passages.texts.redb"),
        (&truncated, "passages.texts.redb"),
        (&foreign, "passages.texts.redb"),
    ] {
        let named = dir.join(file).display().to_string();
        let err = serve_refuses(dir);
        assert!(err.contains(&named) && err.contains(rebuild), "serve, {named}: {err}");
        let err = report(dir, "report_en_a.txt").unwrap_err();
        assert!(
            err.contains(&named) && err.contains(rebuild) && !err.contains("panicked"),
            "report, {named}: {err}"
        );
    }
    assert!(report(&deleted, "report_en_a.txt").unwrap_err().contains("missing"));
}

/// `index add DIR/passages.ndx SOURCES`: the new sources' passages and
/// their texts, so that a report shows both sides of what was copied.
#[test]
fn adding_to_a_passage_index_keeps_the_new_texts() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = passage_dir(&tmp.path().join("lib"), &["report_zh_b.txt"]);
    let before = report(&dir, "report_en_a.txt").unwrap();
    assert!(before["sources"].as_array().unwrap().is_empty(), "{before}");
    let index = dir.join("passages.ndx");
    let o = neardup(&["index", "add", index.to_str().unwrap(), &testdata("report_en_b.txt")]);
    assert!(o.status.success(), "{}", stderr(&o));
    let after = report(&dir, "report_en_a.txt").unwrap();
    let source = &after["sources"][0];
    assert_eq!(source["id"].as_str(), Some(testdata("report_en_b.txt").as_str()), "{after}");
    assert_eq!(source["text"], Value::Bool(true), "the added source's text is kept: {after}");
    let first = after["matches"].as_array().unwrap().first().cloned().unwrap();
    assert!(first["b"]["text"].as_str().is_some_and(|t| !t.is_empty()), "{first}");
    // The sources from before keep theirs.
    let zh = report(&dir, "report_zh_a.txt").unwrap();
    assert_eq!(zh["sources"][0]["text"], Value::Bool(true), "{zh}");
    // No temporary files are left behind.
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.starts_with('.')), "{names:?}");
}

/// `kill -9` at times through `index add` to a passage index: every add
/// that finished before is there, with its texts; the files always open
/// (checked whole); the add killed is there whole or not at all.
#[test]
fn kill_9_during_a_passage_add_loses_nothing_acknowledged() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = passage_dir(&tmp.path().join("lib"), &["report_zh_b.txt"]);
    let entries = |dir: &Path| -> u64 {
        let o = neardup(&["index", "stats", dir.join("passages.ndx").to_str().unwrap(), "--json"]);
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_slice::<Value>(&o.stdout).unwrap()["entries"].as_u64().unwrap()
    };
    let add = |dir: &Path, source: &str| -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_neardup"));
        c.args(["index", "add", dir.join("passages.ndx").to_str().unwrap(), source]);
        if source.ends_with(".jsonl") {
            c.args(["--text-field", "text", "--id-field", "id"]);
        }
        c.stdout(Stdio::null()).stderr(Stdio::piped());
        c
    };
    // What one whole add of the English documents adds, on a copy.
    let docs = testdata("docs_en.jsonl");
    let probe = passage_dir(&tmp.path().join("probe"), &["report_zh_b.txt"]);
    let before = entries(&probe);
    assert!(add(&probe, &docs).status().unwrap().success());
    let whole = entries(&probe) - before;
    assert!(whole > 0);

    let mut cut_off = 0;
    for (round, delay) in [5u64, 30, 80, 150, 300, 600].into_iter().enumerate() {
        // An add that finishes is acknowledged.
        let source = testdata(if round % 2 == 0 { "report_en_b.txt" } else { "report_zh_unrelated.txt" });
        let o = add(&dir, &source).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let acknowledged = entries(&dir);
        // An add killed partway.
        let mut child = add(&dir, &docs).spawn().unwrap();
        std::thread::sleep(Duration::from_millis(delay));
        let _ = child.kill();
        if !child.wait().unwrap().success() {
            cut_off += 1;
        }
        let now = entries(&dir);
        assert!(
            now == acknowledged || now == acknowledged + whole,
            "round {round}: {now} entries after the kill, {acknowledged} acknowledged, an add of {whole}"
        );
        // Both files open, checked whole, with the texts of what was
        // acknowledged.
        let r = report(&dir, "report_zh_a.txt").unwrap_or_else(|e| panic!("round {round}: {e}"));
        assert_eq!(r["sources"][0]["text"], Value::Bool(true), "round {round}: {r}");
        if round % 2 == 0 {
            let r = report(&dir, "report_en_a.txt").unwrap();
            assert_eq!(r["sources"][0]["text"], Value::Bool(true), "round {round}: {r}");
        }
    }
    // Some add was really cut off (else this tests nothing).
    assert!(cut_off > 0, "every add finished before its kill");
}
