//! `dedup NEW… --against INDEX`: new documents are removed exactly when
//! `compare` calls them near an indexed document, or when they are near a
//! new document kept before them (the indexed ones count as kept first);
//! `--save-index` adds the kept ones to the index.

use std::collections::{BTreeSet, HashSet};
use std::path::Path;

use serde_json::{json, Value};

use super::{neardup, testdata, tmp};

/// The texts of a labelled pairs file.
fn pairs(file: &str) -> Vec<(String, String)> {
    std::fs::read_to_string(testdata(file))
        .unwrap()
        .lines()
        .map(|l| {
            let p: Value = serde_json::from_str(l).unwrap();
            (p["text_a"].as_str().unwrap().to_owned(), p["text_b"].as_str().unwrap().to_owned())
        })
        .collect()
}

fn jsonl(docs: &[(String, String)]) -> String {
    docs.iter().map(|(id, text)| format!("{}\n", json!({"id": id, "text": text}))).collect()
}

fn ids(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["id"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn dedup_against_an_index_removes_what_compare_calls_near_and_what_is_near_a_kept_one() {
    let dir = tmp();
    let (en, zh) = (pairs("pairs_en.jsonl"), pairs("pairs_zh.jsonl"));
    // The corpus: the `a` of three English and three Chinese pairs.
    let old: Vec<(String, String)> = (0..3)
        .flat_map(|i| [(format!("old-en{i}"), en[i].0.clone()), (format!("old-zh{i}"), zh[i].0.clone())])
        .collect();
    // New: their `b`s, an exact copy of one, pairs among themselves, and
    // unrelated documents.
    let mut new: Vec<(String, String)> = (0..3)
        .flat_map(|i| [(format!("b-en{i}"), en[i].1.clone()), (format!("b-zh{i}"), zh[i].1.clone())])
        .collect();
    new.push(("copy-en0".into(), en[0].0.clone()));
    for i in 10..13 {
        new.push((format!("new-a{i}"), en[i].0.clone()));
        new.push((format!("new-b{i}"), en[i].1.clone()));
        new.push((format!("other-zh{i}"), zh[i].0.clone()));
    }
    let old_file = neardup_testkit::cli::write(dir.path(), "old.jsonl", jsonl(&old).as_bytes());
    let new_file = neardup_testkit::cli::write(dir.path(), "new.jsonl", jsonl(&new).as_bytes());
    for (i, (_, text)) in old.iter().chain(&new).enumerate() {
        std::fs::write(dir.path().join(format!("t{i}.txt")), text).unwrap();
    }
    let (old_file, new_file) = (old_file.to_str().unwrap(), new_file.to_str().unwrap());
    for (method, index, preset) in [("minhash", "idx", "minhash"), ("simhash", "idx.ndx", "default")] {
        neardup(&["index", "build", old_file, "-o", index, "--preset", preset], dir.path(), None).ok();
        // `compare`'s verdict for every (indexed, new) pair, two at a time.
        let work: Vec<(usize, usize)> =
            (0..new.len()).flat_map(|n| (0..old.len()).map(move |o| (n, o))).collect();
        let (root, n_old) = (dir.path(), old.len());
        let near_old: BTreeSet<usize> = std::thread::scope(|s| {
            let halves: Vec<_> = work
                .chunks(work.len().div_ceil(2))
                .map(|part| {
                    s.spawn(move || {
                        part.iter()
                            .filter(|&&(n, o)| {
                                let (a, b) = (format!("t{o}.txt"), format!("t{}.txt", n_old + n));
                                let out =
                                    neardup(&["compare", &a, &b, "--json", "--preset", preset], root, None)
                                        .ok();
                                serde_json::from_str::<Value>(&out.stdout()).unwrap()["near_duplicate"]
                                    == true
                            })
                            .map(|&(n, _)| n)
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            halves.into_iter().flat_map(|h| h.join().unwrap()).collect()
        });
        assert!(near_old.len() >= 4 && near_old.len() < 12, "{method}: {near_old:?}");
        // The near pairs among the new documents alone (the rule's, verified
        // as dedup verifies). Against the index, the indexed documents count
        // as kept before any new one: a new document near one is removed;
        // the others, in input order, are removed when near a new document
        // kept before them.
        let plain = format!("plain-{method}");
        neardup(&["dedup", new_file, "-o", &plain, "--preset", preset, "--pairs"], dir.path(), None).ok();
        let pairs: HashSet<(String, String)> =
            std::fs::read_to_string(dir.path().join(&plain).join("pairs.jsonl"))
                .unwrap()
                .lines()
                .flat_map(|l| {
                    let p: Value = serde_json::from_str(l).unwrap();
                    let (a, b) = (p["a"].as_str().unwrap().to_owned(), p["b"].as_str().unwrap().to_owned());
                    [(a.clone(), b.clone()), (b, a)]
                })
                .collect();
        let near_ids: HashSet<String> = near_old.iter().map(|&n| new[n].0.clone()).collect();
        let mut want_kept: HashSet<String> = HashSet::new();
        for (id, _) in &new {
            if !near_ids.contains(id) && !want_kept.iter().any(|k| pairs.contains(&(k.clone(), id.clone()))) {
                want_kept.insert(id.clone());
            }
        }
        assert!(!pairs.is_empty(), "{method}: the new documents have near pairs among themselves");
        let out = format!("against-{method}");
        neardup(&["dedup", new_file, "--against", index, "-o", &out, "--save-index"], dir.path(), None).ok();
        let kept: HashSet<String> = ids(&dir.path().join(&out).join("kept.jsonl")).into_iter().collect();
        assert_eq!(kept, want_kept, "{method}");
        assert!(kept.len() >= 5, "{method}: {kept:?}");
        // Each cluster near the index names an indexed document.
        let written = std::fs::read_to_string(dir.path().join(&out).join("clusters.jsonl")).unwrap();
        let old_ids: HashSet<&str> = old.iter().map(|d| d.0.as_str()).collect();
        let mut indexed = 0;
        for l in written.lines() {
            let c: Value = serde_json::from_str(l).unwrap();
            if c["indexed"] == true {
                indexed += 1;
                assert!(old_ids.contains(c["representative"].as_str().unwrap()), "{c}");
                assert_eq!(c["members"][0]["id"], c["representative"]);
            }
        }
        assert!(indexed >= 4, "{method}: {written}");
        let summary: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join(&out).join("summary.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(summary["kept"], kept.len());
        assert_eq!(summary["clusters_near_the_index"], indexed);
        // The kept ones went into the index: against it now, nothing new is kept.
        let again = format!("again-{method}");
        neardup(&["dedup", new_file, "--against", index, "-o", &again], dir.path(), None).ok();
        assert!(ids(&dir.path().join(&again).join("kept.jsonl")).is_empty(), "{method}");
    }
}

#[test]
fn dedup_against_refuses_what_does_not_fit_the_index() {
    let dir = tmp();
    let docs = testdata("docs_en.jsonl");
    neardup(&["index", "build", &docs, "-o", "idx"], dir.path(), None).ok();
    neardup(&["dedup", &docs, "--against", "idx", "-o", "out", "--method", "simhash"], dir.path(), None)
        .fails(2, "idx holds MinHash sketches");
    neardup(&["dedup", &docs, "--against", "idx", "-o", "out", "--preset", "default"], dir.path(), None)
        .fails(2, "pipeline");
    neardup(&["dedup", &docs, "--against", "nothing", "-o", "out"], dir.path(), None)
        .fails(1, "nothing does not exist");
    neardup(&["dedup", &docs, "--save-index", "-o", "out"], dir.path(), None).fails(2, "--against");
    neardup(&["fingerprint", &docs, "--format", "tsv", "-o", "fps.tsv"], dir.path(), None).ok();
    neardup(&["index", "build", "--fingerprints", "fps.tsv", "-o", "fps.ndx"], dir.path(), None).ok();
    neardup(&["dedup", &docs, "--against", "fps.ndx", "-o", "out"], dir.path(), None)
        .fails(2, "knows no pipeline");
}

/// A resumed run does not add its kept documents to the index twice: stopped
/// right after --save-index updated the index, it finishes without adding
/// them again.
#[test]
fn a_resumed_run_adds_to_the_index_once() {
    let dir = tmp();
    let docs = testdata("docs_en.jsonl");
    let new = testdata("docs_zh.jsonl");
    neardup(&["index", "build", &docs, "-o", "idx"], dir.path(), None).ok();
    let count = || {
        let out = neardup(&["index", "stats", "idx", "--json"], dir.path(), None).ok();
        serde_json::from_str::<Value>(&out.stdout()).unwrap()["documents"].as_u64().unwrap()
    };
    let before = count();
    let args = ["dedup", &new, "--against", "idx", "--save-index", "--resume", "-o", "out"];
    let killed = std::process::Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args(args)
        .current_dir(dir.path())
        .env("NEARDUP_ABORT_AT", "saved")
        .output()
        .unwrap();
    assert!(killed.status.code().is_none(), "{killed:?}");
    let after = count();
    assert!(after > before, "the kept documents went in: {before} -> {after}");
    let run = neardup(&args, dir.path(), None).ok();
    assert!(run.stderr().contains("before the run stopped"), "{}", run.stderr());
    assert_eq!(count(), after);
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/summary.json")).unwrap()).unwrap();
    assert_eq!(summary["kept"].as_u64().unwrap(), after - before);
}
