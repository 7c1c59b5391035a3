//! A data directory's passage library (`DIR/passages/`: `library.redb`,
//! `seg-*.ndx`, `MANIFEST.json`) as `neardup serve` and `neardup report
//! --against DIR` open it: damage is an error naming the file and the
//! rebuild command; `index add DIR --passages` adds sources with their
//! texts; `kill -9` during such an add loses nothing acknowledged.

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
    let mut args = vec!["index", "build", "--passages", "-o", at.to_str().unwrap()];
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

/// The library's segment files.
fn segments(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir.join("passages"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("seg-"))
        .collect();
    v.sort();
    v
}

/// Each damaged library file: the server does not start and the report
/// does not run, both naming the file and the rebuild.
#[test]
fn damaged_library_files_are_errors_naming_them() {
    let tmp = tempfile::tempdir().unwrap();
    let make = |name: &str| passage_dir(&tmp.path().join(name), &["report_en_b.txt", "report_zh_b.txt"]);
    let (flipped, truncated, foreign) = (make("flipped"), make("truncated"), make("foreign"));
    let seg = segments(&flipped)[0].clone();
    let mut bytes = std::fs::read(&seg).unwrap();
    let n = bytes.len();
    bytes[n / 2] ^= 0x10;
    std::fs::write(&seg, bytes).unwrap();
    let db = |d: &Path| d.join("passages").join("library.redb");
    let bytes = std::fs::read(db(&truncated)).unwrap();
    std::fs::write(db(&truncated), &bytes[..bytes.len() / 3]).unwrap();
    std::fs::write(db(&foreign), b"not a database at all").unwrap();
    for (dir, named) in [(&flipped, seg.clone()), (&truncated, db(&truncated)), (&foreign, db(&foreign))] {
        let named = named.display().to_string();
        let err = serve_refuses(dir);
        assert!(err.contains(&named) && err.contains("rebuild"), "serve, {named}: {err}");
        let err = report(dir, "report_en_a.txt").unwrap_err();
        assert!(
            err.contains(&named) && err.contains("rebuild") && !err.contains("panicked"),
            "report, {named}: {err}"
        );
    }
}

/// `index build --passages -o NEW`: a new path becomes a data directory
/// with a library (a failed build leaves nothing); `*.ndx` is still a 0.x
/// window index file.
#[test]
fn a_new_output_path_becomes_a_library() {
    let tmp = tempfile::tempdir().unwrap();
    let new = tmp.path().join("new").join("library");
    let o =
        neardup(&["index", "build", "--passages", &testdata("report_en_b.txt"), "-o", new.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(new.join("passages").join("MANIFEST.json").is_file(), "{}", stderr(&o));
    let r = report(&new, "report_en_a.txt").unwrap();
    assert_eq!(r["sources"][0]["text"], Value::Bool(true), "{r}");
    let failed = tmp.path().join("failed");
    let o =
        neardup(&["index", "build", "--passages", &testdata("no such file"), "-o", failed.to_str().unwrap()]);
    assert!(!o.status.success() && stderr(&o).contains("no such file"), "{}", stderr(&o));
    assert!(!failed.exists(), "a failed build leaves no directory");
    let ndx = tmp.path().join("old.ndx");
    let o =
        neardup(&["index", "build", "--passages", &testdata("report_en_b.txt"), "-o", ndx.to_str().unwrap()]);
    assert!(o.status.success() && ndx.is_file(), "{}", stderr(&o));
}

/// `index add DIR --passages SOURCES`: the new sources with their texts,
/// so that a report shows both sides of what was copied.
#[test]
fn adding_to_a_library_keeps_the_new_texts() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = passage_dir(&tmp.path().join("lib"), &["report_zh_b.txt"]);
    let before = report(&dir, "report_en_a.txt").unwrap();
    assert!(before["sources"].as_array().unwrap().is_empty(), "{before}");
    let o = neardup(&["index", "add", dir.to_str().unwrap(), "--passages", &testdata("report_en_b.txt")]);
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
    // Adding the same id again replaces it: still one source.
    let o = neardup(&["index", "add", dir.to_str().unwrap(), "--passages", &testdata("report_en_b.txt")]);
    assert!(o.status.success(), "{}", stderr(&o));
    let again = report(&dir, "report_en_a.txt").unwrap();
    assert_eq!(again["sources"].as_array().unwrap().len(), 1, "{again}");
    assert_eq!(again["similarity"], after["similarity"], "{again}");
    // No temporary files are left behind.
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.starts_with('.')), "{names:?}");
}

/// `kill -9` at times through `index add --passages`: every add that
/// finished before is there, with its texts; the library always opens
/// (checked whole).
#[test]
fn kill_9_during_a_library_add_loses_nothing_acknowledged() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = passage_dir(&tmp.path().join("lib"), &["report_zh_b.txt"]);
    let add = |dir: &Path, source: &str| -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_neardup"));
        c.args(["index", "add", dir.to_str().unwrap(), "--passages", source]);
        if source.ends_with(".jsonl") {
            c.args(["--text-field", "text", "--id-field", "id", "--allow-empty"]);
        }
        c.stdout(Stdio::null()).stderr(Stdio::piped());
        c
    };
    let docs = testdata("docs_en.jsonl");
    let mut cut_off = 0;
    for (round, delay) in [5u64, 30, 80, 150, 300, 600].into_iter().enumerate() {
        // An add that finishes is acknowledged.
        let source = testdata(if round % 2 == 0 { "report_en_b.txt" } else { "report_zh_unrelated.txt" });
        let o = add(&dir, &source).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        // An add killed partway.
        let mut child = add(&dir, &docs).spawn().unwrap();
        std::thread::sleep(Duration::from_millis(delay));
        let _ = child.kill();
        if !child.wait().unwrap().success() {
            cut_off += 1;
        }
        // The library opens, checked whole, with the texts of what was
        // acknowledged.
        let r = report(&dir, "report_zh_a.txt").unwrap_or_else(|e| panic!("round {round}: {e}"));
        assert_eq!(r["sources"][0]["text"], Value::Bool(true), "round {round}: {r}");
        let r = report(&dir, "report_en_a.txt").unwrap();
        let ids: Vec<&str> =
            r["sources"].as_array().unwrap().iter().filter_map(|s| s["id"].as_str()).collect();
        assert!(ids.contains(&testdata("report_en_b.txt").as_str()), "round {round}: {r}");
    }
    // Some add was really cut off (else this tests nothing).
    assert!(cut_off > 0, "every add finished before its kill");
}
