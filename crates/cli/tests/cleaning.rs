//! Corpus cleaning beyond near duplicates: `dedup --method exact`, the
//! exact pass before signing, `boilerplate` and `substrings`, each checked
//! against a brute-force reference.

use std::collections::HashMap;

use serde_json::{json, Value};

use super::{neardup, testdata, tmp};

fn kept_ids(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["id"].clone())
        .collect()
}

/// The sample documents, some repeated exactly, some in upper case.
fn repeated() -> (String, Vec<(String, String)>) {
    let mut docs = Vec::new();
    for l in std::fs::read_to_string(testdata("docs_en.jsonl")).unwrap().lines().take(12) {
        let v: Value = serde_json::from_str(l).unwrap();
        docs.push(v["text"].as_str().unwrap().to_owned());
    }
    let mut recs = Vec::new();
    for i in 0..60usize {
        let base = &docs[(i * 7) % docs.len()];
        let text = if i % 5 == 0 { base.to_uppercase() } else { base.clone() };
        recs.push((format!("r{i}"), text));
    }
    let body = recs.iter().map(|(id, t)| format!("{}\n", json!({"id": id, "text": t, "n": id}))).collect();
    (body, recs)
}

#[test]
fn exact_dedup_keeps_the_first_of_each_identical_text() {
    let dir = tmp();
    let (body, recs) = repeated();
    neardup_testkit::cli::write(dir.path(), "c.jsonl", body.as_bytes());
    for (mode, fold) in [("raw", false), ("normalized", true)] {
        let out = format!("out-{mode}");
        neardup(&["dedup", "c.jsonl", "--method", "exact", "--exact", mode, "-o", &out], dir.path(), None)
            .ok();
        let mut seen = std::collections::HashSet::new();
        let want: Vec<Value> = recs
            .iter()
            .filter(|(_, t)| seen.insert(if fold { t.to_lowercase() } else { t.clone() }))
            .map(|(id, _)| json!(id))
            .collect();
        assert_eq!(kept_ids(&dir.path().join(&out).join("kept.jsonl")), want, "{mode}");
        let summary: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join(&out).join("summary.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(summary["method"], "exact");
        assert_eq!(summary["documents"], 60);
    }
    neardup(&["dedup", "c.jsonl", "--method", "exact", "-k", "3", "-o", "x"], dir.path(), None)
        .fails(2, "--method exact finds identical texts");
}

#[test]
fn the_exact_pass_changes_nothing_but_the_work() {
    let dir = tmp();
    let (body, _) = repeated();
    neardup_testkit::cli::write(dir.path(), "c.jsonl", body.as_bytes());
    for method in ["minhash", "simhash"] {
        let mut outs = Vec::new();
        for (name, extra) in
            [("pass", vec![]), ("nopass", vec!["--no-exact-pass"]), ("spill", vec!["--memory", "1K"])]
        {
            let out = format!("out-{method}-{name}");
            let mut a = vec!["dedup", "c.jsonl", "--method", method, "-o", &out, "--pairs"];
            a.extend(extra);
            let r = neardup(&a, dir.path(), None).ok();
            if name == "pass" {
                assert!(r.stderr().contains("repeated an earlier text exactly"), "{}", r.stderr());
            }
            let files: Vec<String> = ["kept.jsonl", "clusters.jsonl", "pairs.jsonl"]
                .iter()
                .map(|f| std::fs::read_to_string(dir.path().join(&out).join(f)).unwrap())
                .collect();
            outs.push(files);
        }
        assert_eq!(outs[0], outs[1], "{method}: with and without the exact pass");
        assert_eq!(outs[0], outs[2], "{method}: with signatures spilled");
    }
}

/// Documents that share a banner paragraph and a Chinese footer sentence.
fn with_boilerplate() -> Vec<Value> {
    let mut recs = Vec::new();
    for (i, l) in std::fs::read_to_string(testdata("docs_zh.jsonl")).unwrap().lines().take(20).enumerate() {
        let v: Value = serde_json::from_str(l).unwrap();
        let body = v["text"].as_str().unwrap().split("\n\n").next().unwrap().trim().to_owned();
        let text = match i % 4 {
            0 => format!("{body}\n\nAccept all cookies to continue reading.\n\n转载请注明出处。谢谢合作！"),
            1 => format!("Accept  ALL cookies to continue reading.\n\n{body}"),
            2 => format!("{body}。转载请注明出处。谢谢合作！"),
            _ => "Accept all cookies to continue reading.".to_owned(),
        };
        recs.push(json!({"id": format!("z{i}"), "lang": "zh", "text": text, "n": i}));
    }
    recs
}

#[test]
fn boilerplate_removes_shared_units_and_keeps_every_other_field() {
    let dir = tmp();
    let recs = with_boilerplate();
    let body: String = recs.iter().map(|r| format!("{r}\n")).collect();
    neardup_testkit::cli::write(dir.path(), "c.jsonl", body.as_bytes());
    let r = neardup(&["boilerplate", "c.jsonl", "-o", "out", "--min-docs", "3"], dir.path(), None).ok();
    assert!(r.stderr().contains("Accept all cookies to continue reading."), "{}", r.stderr());
    let kept: Vec<Value> = std::fs::read_to_string(dir.path().join("out/kept.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/summary.json")).unwrap()).unwrap();
    // Records in = kept + dropped (the banner-only ones: nothing left).
    assert_eq!(summary["dropped_too_short"], 5);
    assert_eq!(kept.len() + 5, recs.len());
    let by_id: HashMap<&str, &Value> = recs.iter().map(|r| (r["id"].as_str().unwrap(), r)).collect();
    for k in &kept {
        let orig = by_id[k["id"].as_str().unwrap()];
        assert_eq!((&k["lang"], &k["n"]), (&orig["lang"], &orig["n"]), "fields kept");
        let text = k["text"].as_str().unwrap();
        assert!(!text.to_lowercase().contains("accept all cookies"), "{text}");
        assert!(!text.is_empty());
    }
    let removed: Vec<Value> = std::fs::read_to_string(dir.path().join("out/removed.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(removed[0]["removed"], 15, "{removed:?}");
    // Sentences: the Chinese footer goes too, wherever it stands.
    neardup(
        &["boilerplate", "c.jsonl", "-o", "out2", "--unit", "sentences:1", "--min-docs", "3"],
        dir.path(),
        None,
    )
    .ok();
    let kept = std::fs::read_to_string(dir.path().join("out2/kept.jsonl")).unwrap();
    assert!(!kept.contains("转载请注明出处"), "{kept}");
    assert!(!kept.contains('\u{fffd}'));
    // Standard input cannot be read twice.
    neardup(&["boilerplate", "-o", "out3"], dir.path(), Some(body.as_bytes()))
        .fails(2, "reads its input twice");
    neardup(&["boilerplate", "c.jsonl", "-o", "o", "--min-docs", "1"], dir.path(), None)
        .fails(2, "2 documents or more");
}

#[test]
fn substrings_cut_later_copies_on_token_boundaries() {
    let dir = tmp();
    let banner = "本文转载自网络，版权归原作者所有，如有侵权请联系删除。Share this article with friends!";
    let mut recs = Vec::new();
    for (i, l) in std::fs::read_to_string(testdata("docs_zh.jsonl")).unwrap().lines().take(12).enumerate() {
        let v: Value = serde_json::from_str(l).unwrap();
        let own: String = v["text"].as_str().unwrap().chars().take(80).collect();
        let text = if i % 2 == 0 { format!("{own}\n{banner}") } else { own };
        recs.push(json!({"id": i, "text": text, "src": "zh"}));
    }
    recs.push(json!({"id": 99, "text": banner, "src": "only"}));
    let body: String = recs.iter().map(|r| format!("{r}\n")).collect();
    let gz = {
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(body.as_bytes()).unwrap();
        e.finish().unwrap()
    };
    neardup_testkit::cli::write(dir.path(), "c.jsonl.gz", &gz);
    neardup(&["substrings", "c.jsonl.gz", "-o", "out", "--min-bytes", "40"], dir.path(), None).ok();
    let kept: Vec<Value> = {
        use std::io::Read;
        let bytes = std::fs::read(dir.path().join("out/kept.jsonl.gz")).unwrap();
        let mut s = String::new();
        flate2::read::MultiGzDecoder::new(&bytes[..]).read_to_string(&mut s).unwrap();
        s.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    };
    // The banner-only record is all repeat: dropped; records in = kept + dropped.
    assert_eq!(kept.len(), recs.len() - 1);
    for (k, r) in kept.iter().zip(&recs) {
        assert_eq!((&k["id"], &k["src"]), (&r["id"], &r["src"]));
        let (text, orig) = (k["text"].as_str().unwrap(), r["text"].as_str().unwrap());
        if k["id"] == 0 {
            assert_eq!(text, orig, "the first copy stays");
        } else if orig.contains(banner) {
            assert!(!text.contains("版权归原作者所有"), "{text}");
            assert!(orig.starts_with(text.trim_end()), "only the banner goes: {text}");
        } else {
            assert_eq!(text, orig);
        }
    }
    let removed: Vec<Value> = std::fs::read_to_string(dir.path().join("out/removed.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(removed.len(), 6, "{removed:?}");
    for s in &removed {
        let r = &recs[s["id"].as_u64().unwrap().min(12) as usize];
        let t = r["text"].as_str().unwrap();
        let (a, b) = (s["start"].as_u64().unwrap() as usize, s["end"].as_u64().unwrap() as usize);
        assert_eq!(&t[a..b], s["text"].as_str().unwrap(), "the side file names the bytes cut");
    }
    // Keep none: the first copy goes too.
    neardup(
        &["substrings", "c.jsonl.gz", "-o", "out2", "--min-tokens", "10", "--keep", "none"],
        dir.path(),
        None,
    )
    .ok();
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out2/summary.json")).unwrap())
            .unwrap();
    assert_eq!(summary["spans_removed"], 7, "{summary}");
}
