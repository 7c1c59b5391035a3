//! `dedup` in bounded memory: a run whose records and signatures move to
//! `--tmp-dir` (`--memory 1K` spills every one, and leaves the exact pass
//! no room to remember texts) writes what a run in memory writes; a full
//! temporary folder is a clear error that leaves no output.

use std::path::Path;

use serde_json::Value;

use super::{neardup, testdata, tmp};

/// A corpus with near duplicates in both languages: the labelled pairs'
/// texts, each pair's `a` again with a word changed, and records that are
/// skipped (malformed JSON, an empty text) among them.
fn corpus() -> String {
    let mut body = String::new();
    let mut n = 0;
    for file in ["pairs_en.jsonl", "pairs_zh.jsonl"] {
        for l in std::fs::read_to_string(testdata(file)).unwrap().lines() {
            let p: Value = serde_json::from_str(l).unwrap();
            for text in [&p["text_a"], &p["text_b"]] {
                n += 1;
                body += &format!("{}\n", serde_json::json!({"id": format!("d{n}"), "text": text, "n": n}));
            }
            let changed = p["text_a"].as_str().unwrap().replacen(' ', " zebra ", 1);
            body += &format!("{}\n", serde_json::json!({"id": n * 1000, "text": changed}));
            if n % 10 == 0 {
                // An exact copy: the exact pass gives it the first's sketch
                // in memory, and signs it again once its table is full
                // (at once with --memory 1K).
                body += &format!("{}\n", serde_json::json!({"id": format!("copy{n}"), "text": p["text_b"]}));
            }
            if n % 20 == 0 {
                body += "{\"id\": \"broken\", \"text\": \n";
                body += "{\"id\": \"empty\", \"text\": \"  \"}\n";
            }
        }
    }
    body
}

/// The files of a finished run, and summary.json without what differs by
/// run (times, memory).
fn outputs(out: &Path) -> (Vec<(String, String)>, Value) {
    let mut files = Vec::new();
    for name in ["kept.jsonl", "clusters.jsonl", "pairs.jsonl"] {
        if let Ok(s) = std::fs::read_to_string(out.join(name)) {
            files.push((name.to_owned(), s));
        }
    }
    let mut summary: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let memory = summary.as_object_mut().unwrap().remove("memory").unwrap();
    for volatile in ["seconds", "documents_per_second", "mb_per_second"] {
        summary.as_object_mut().unwrap().remove(volatile);
    }
    (files, serde_json::json!({ "summary": summary, "memory": memory }))
}

#[test]
fn dedup_out_of_core_writes_what_dedup_in_memory_writes() {
    let dir = tmp();
    let corpus = neardup_testkit::cli::write(dir.path(), "corpus.jsonl", corpus().as_bytes());
    let corpus = corpus.to_str().unwrap();
    let spill = dir.path().join("spill");
    std::fs::create_dir(&spill).unwrap();
    let runs: &[(&str, &[&str])] = &[
        ("minhash", &["--keep", "first"]),
        ("minhash", &["--keep", "longest", "--pairs"]),
        ("minhash", &["--keep", "shortest", "--verify", "jaccard:0.3", "--pairs"]),
        ("minhash", &["--online", "--pairs"]),
        ("simhash", &["--keep", "first", "--pairs"]),
        ("simhash", &["--keep", "longest", "--verify", "jaccard:0.3"]),
        ("simhash", &["--keep", "shortest", "--online"]),
    ];
    for (i, (method, flags)) in runs.iter().enumerate() {
        let run = |memory: &str, out: &str| {
            let mut args = vec!["dedup", corpus, "-o", out, "--method", method, "--on-error", "skip"];
            args.extend_from_slice(flags);
            args.extend_from_slice(&["--memory", memory, "--tmp-dir", spill.to_str().unwrap()]);
            neardup(&args, dir.path(), None).ok();
            outputs(&dir.path().join(out))
        };
        let (in_memory, m) = run("1G", &format!("mem{i}"));
        let (out_of_core, o) = run("1K", &format!("ooc{i}"));
        let what = format!("{method} {flags:?}");
        assert_eq!(out_of_core, in_memory, "{what}");
        assert_eq!(o["summary"], m["summary"], "{what}");
        let removed = m["summary"]["duplicates_removed"].as_u64().unwrap();
        assert!(removed >= 20, "{what}: {removed} removed; the corpus has near duplicates");
        assert_eq!(m["summary"]["skipped"], 12, "{what}");
        // In memory nothing moved; out of core the records did, and
        // MinHash's signatures.
        assert_eq!(m["memory"]["spilled_bytes"]["records"], 0, "{what}");
        assert!(o["memory"]["spilled_bytes"]["records"].as_u64().unwrap() > 100_000, "{what}");
        let signatures = o["memory"]["spilled_bytes"]["signatures"].as_u64().unwrap();
        assert_eq!(signatures > 0, *method == "minhash", "{what}");
        assert!(o["memory"]["peak_rss"].as_u64().unwrap() > 0);
        assert_eq!(o["memory"]["budget"], 1024);
    }
    // Nothing is left in the temporary folder.
    assert_eq!(std::fs::read_dir(&spill).unwrap().count(), 0);
    // Standard input moves to the temporary folder as a file does.
    let body = std::fs::read(corpus).unwrap();
    let args = ["dedup", "-", "--input-format", "jsonl", "-o", "stdin", "--on-error", "skip"];
    neardup(&args, dir.path(), Some(&body)).ok();
    let mut small = args.to_vec();
    small[5] = "stdin_ooc";
    small.extend_from_slice(&["--memory", "1K"]);
    neardup(&small, dir.path(), Some(&body)).ok();
    assert_eq!(outputs(&dir.path().join("stdin_ooc")).0, outputs(&dir.path().join("stdin")).0);
}

#[test]
fn dedup_refuses_a_temporary_folder_that_is_not_one() {
    let dir = tmp();
    let corpus = testdata("docs_en.jsonl");
    neardup(&["dedup", &corpus, "-o", "out", "--tmp-dir", "nowhere"], dir.path(), None)
        .fails(2, "--tmp-dir nowhere: no such folder");
    neardup(&["dedup", &corpus, "-o", "out", "--memory", "lots"], dir.path(), None).fails(2, "--memory");
}

#[test]
#[cfg_attr(not(neardup_tmpfs), ignore = "needs root to mount a tmpfs; NEARDUP_REQUIRE_TMPFS=1 requires it")]
fn a_full_temporary_folder_is_named_and_leaves_no_output() {
    let dir = tmp();
    let mount = dir.path().join("small");
    std::fs::create_dir(&mount).unwrap();
    let fs = neardup_testkit::tmpfs::Tmpfs::mount(&mount, "64k");
    let corpus = corpus().repeat(3);
    let corpus = neardup_testkit::cli::write(dir.path(), "corpus.jsonl", corpus.as_bytes());
    // An earlier run's outputs stand in the output folder.
    neardup(&["dedup", corpus.to_str().unwrap(), "-o", "out", "--on-error", "skip"], dir.path(), None).ok();
    assert!(dir.path().join("out/summary.json").exists());
    for method in ["minhash", "simhash"] {
        let args = [
            "dedup",
            corpus.to_str().unwrap(),
            "-o",
            "out",
            "--on-error",
            "skip",
            "--method",
            method,
            "--memory",
            "1K",
            "--tmp-dir",
            fs.path().to_str().unwrap(),
        ];
        let run = neardup(&args, dir.path(), None).fails(1, "no space left in the temporary folder");
        assert!(run.stderr().contains(fs.path().to_str().unwrap()), "{}", run.stderr());
        assert!(run.stderr().contains("--tmp-dir"), "{}", run.stderr());
        // No summary.json: the earlier run's is gone, so no one takes the
        // folder for a finished run; no temporary file is left.
        assert!(!dir.path().join("out/summary.json").exists());
        let left: Vec<_> =
            std::fs::read_dir(dir.path().join("out")).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert!(left.iter().all(|n| !n.to_string_lossy().starts_with(".neardup-")), "{left:?}");
        assert_eq!(std::fs::read_dir(fs.path()).unwrap().count(), 0);
    }
}

/// A run stopped in each stage (as `kill -9` stops it) leaves no
/// summary.json and no partial file; run again with --resume, it goes on
/// from its last finished stage and writes what an uninterrupted run
/// writes, then removes its checkpoint.
#[test]
fn a_run_killed_in_each_stage_resumes_to_the_uninterrupted_output() {
    let dir = tmp();
    let corpus = neardup_testkit::cli::write(dir.path(), "corpus.jsonl", corpus().as_bytes());
    let corpus = corpus.to_str().unwrap();
    for method in ["minhash", "simhash"] {
        let base = ["dedup", corpus, "--method", method, "--on-error", "skip", "--pairs", "--resume"];
        let whole = format!("whole-{method}");
        let mut args = base.to_vec();
        args.extend_from_slice(&["-o", &whole]);
        neardup(&args, dir.path(), None).ok();
        let want = outputs(&dir.path().join(&whole));
        for (stage, resumes) in
            [("sign", None), ("find", Some("after reading and signing")), ("write", Some("after clustering"))]
        {
            let out = format!("{method}-{stage}");
            let mut args = base.to_vec();
            args.extend_from_slice(&["-o", &out, "--memory", "1K"]);
            let killed = std::process::Command::new(env!("CARGO_BIN_EXE_neardup"))
                .args(&args)
                .current_dir(dir.path())
                .env("NEARDUP_ABORT_AT", stage)
                .output()
                .unwrap();
            assert!(killed.status.code().is_none(), "{method} {stage}: the run was not stopped: {killed:?}");
            let o = dir.path().join(&out);
            assert!(!o.join("summary.json").exists(), "{method} {stage}");
            let names: Vec<String> = std::fs::read_dir(&o)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            if stage != "write" {
                assert!(
                    names.iter().all(|n| n.starts_with(".neardup-resume-")),
                    "{method} {stage}: {names:?}"
                );
            }
            let run = neardup(&args, dir.path(), None).ok();
            match resumes {
                Some(what) => assert!(
                    run.stderr().contains(&format!("resuming {what}")),
                    "{method} {stage}: {}",
                    run.stderr()
                ),
                None => assert!(!run.stderr().contains("resuming"), "{}", run.stderr()),
            }
            let got = outputs(&o);
            assert_eq!(got.0, want.0, "{method} {stage}");
            assert_eq!(got.1["summary"]["duplicates_removed"], want.1["summary"]["duplicates_removed"]);
            assert_eq!(got.1["summary"]["skipped"], want.1["summary"]["skipped"], "{method} {stage}");
            let left: Vec<_> = std::fs::read_dir(&o)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with('.'))
                .collect();
            assert!(left.is_empty(), "{method} {stage}: {left:?}");
        }
    }
}

/// A damaged checkpoint is said so and the run starts over, not stuck.
#[test]
fn a_damaged_checkpoint_is_discarded_and_the_run_starts_over() {
    let dir = tmp();
    let docs = testdata("docs_en.jsonl");
    let args = ["dedup", docs.as_str(), "-o", "out", "--resume"];
    let killed = std::process::Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args(args)
        .current_dir(dir.path())
        .env("NEARDUP_ABORT_AT", "find")
        .output()
        .unwrap();
    assert!(killed.status.code().is_none());
    let checkpoint = std::fs::read_dir(dir.path().join("out")).unwrap().next().unwrap().unwrap().path();
    std::fs::write(checkpoint.join("records.bin"), b"NDDUPCK1 cut short").unwrap();
    let run = neardup(&args, dir.path(), None).ok();
    assert!(run.stderr().contains("cannot read the checkpoint"), "{}", run.stderr());
    assert!(run.stderr().contains("starting over"), "{}", run.stderr());
    assert!(dir.path().join("out/summary.json").exists());
    assert!(!checkpoint.exists());
}

/// A fingerprint list `lines` long: near copies around a few hundred
/// centres, each line as `make(i, hex)` (with a blank line now and then
/// when `blanks`).
fn fingerprint_list(lines: usize, blanks: bool, make: impl Fn(usize, String) -> String) -> String {
    let mut x = 11u64;
    let mut next = || {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        x
    };
    let centres: Vec<u64> = (0..300).map(|_| next()).collect();
    let mut body = String::new();
    for i in 0..lines {
        let mut w = centres[(next() >> 33) as usize % centres.len()];
        for _ in 0..(next() >> 61) {
            w ^= 1 << (next() >> 58);
        }
        body += &make(i, format!("{w:016x}"));
        body.push('\n');
        if blanks && i % 997 == 0 {
            body.push('\n');
        }
    }
    body
}

#[test]
fn a_fingerprint_list_out_of_core_writes_what_the_in_memory_batch_writes() {
    let dir = tmp();
    let spill = dir.path().join("spill");
    std::fs::create_dir(&spill).unwrap();
    let lists = [
        ("hex", fingerprint_list(12_000, true, |_, h| h)),
        ("tab", fingerprint_list(12_000, false, |i, h| format!("doc-{i}\t{h}"))),
        (
            "json",
            fingerprint_list(12_000, false, |i, h| format!("{{\"id\": {}.50, \"fingerprint\": \"{h}\"}}", i)),
        ),
    ];
    for (name, body) in &lists {
        let list = neardup_testkit::cli::write(dir.path(), &format!("{name}.txt"), body.as_bytes());
        for flags in [&["--k", "3"][..], &["--k", "5", "--clusters", "components"], &["--blocks", "6"]] {
            let run = |memory: &str, out: &str, in_memory: bool| {
                let mut args =
                    vec!["dedup", "--fingerprints", list.to_str().unwrap(), "-o", out, "--show", "0"];
                args.extend_from_slice(flags);
                args.extend_from_slice(&["--memory", memory, "--tmp-dir", spill.to_str().unwrap()]);
                let env: &[(&str, &str)] = if in_memory { &[("NEARDUP_LIST_IN_MEMORY", "1")] } else { &[] };
                let bin = std::path::Path::new(env!("CARGO_BIN_EXE_neardup"));
                let r = neardup_testkit::cli::run_with_env(bin, &args, dir.path(), None, env).ok();
                (outputs(&dir.path().join(out)), r.stderr())
            };
            let ((want, m), in_memory) = run("1G", "mem", true);
            let what = format!("{name} {flags:?}");
            assert!(!in_memory.contains("out of core"), "{what}: {in_memory}");
            assert!(m["summary"]["duplicates_removed"].as_u64().unwrap() > 1000, "{what}");
            // Little memory (union-find mapped, many partitions) and plenty.
            for (memory, mapped) in [("64K", true), ("1G", false)] {
                let ((got, mut o), out_of_core) = run(memory, "ooc", false);
                let what = format!("{what} --memory {memory}");
                assert!(out_of_core.contains("out of core"), "{what}: {out_of_core}");
                assert_eq!(got, want, "{what}");
                let ooc = o["summary"].as_object_mut().unwrap().remove("out_of_core").unwrap();
                assert_eq!(ooc["partitions"].as_u64().unwrap() > 1, mapped, "{what}: {ooc}");
                assert_eq!(ooc["union_find_mapped"], mapped, "{what}");
                let (mut a, mut b) = (m["summary"].clone(), o["summary"].clone());
                for s in [&mut a, &mut b] {
                    s.as_object_mut().unwrap().remove("layout");
                }
                assert_eq!(b, a, "{what}");
            }
        }
    }
    assert_eq!(std::fs::read_dir(&spill).unwrap().count(), 0);
    // 128-bit fingerprints are deduplicated in memory.
    let wide = fingerprint_list(3_000, false, |_, h| format!("{h}{h}"));
    let wide = neardup_testkit::cli::write(dir.path(), "wide.txt", wide.as_bytes());
    neardup(
        &["dedup", "--fingerprints", wide.to_str().unwrap(), "-o", "wide", "--memory", "64K"],
        dir.path(),
        None,
    )
    .ok();
    let summary = std::fs::read_to_string(dir.path().join("wide/summary.json")).unwrap();
    assert!(!summary.contains("out_of_core"), "{summary}");
}
