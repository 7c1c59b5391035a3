//! The service on a disk that fills up (a real tmpfs; see
//! `neardup_testkit::tmpfs`): 507 with a clear message and no server path,
//! `/healthz` degraded while reads go on, writes again once space is freed
//! (no restart), and every acknowledged document on disk.

use neardup_server::{ConnLimits, Settings};
use neardup_store::{RedbStore, Store};
use neardup_testkit::tmpfs::Tmpfs;
use neardup_testkit::Rng;
use serde_json::{json, Value};

mod common;

async fn start(path: &std::path::Path) -> String {
    let addr =
        common::start(RedbStore::open(path).unwrap(), Settings::default(), ConnLimits::default()).await;
    format!("http://{addr}")
}

/// 20 documents with random fingerprints and 1 KB of metadata each.
fn batch(rng: &mut Rng, first: usize) -> (Vec<String>, Value) {
    let ids: Vec<String> = (first..first + 20).map(|i| format!("doc-{i:06}")).collect();
    let docs: Vec<Value> = ids
        .iter()
        .map(|id| json!({"id": id, "fingerprint": format!("{:016x}", rng.next()), "metadata": {"pad": "x".repeat(1000)}}))
        .collect();
    (ids, json!({"documents": docs, "mode": "insert"}))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(not(neardup_tmpfs), ignore = "needs root to mount a tmpfs; NEARDUP_REQUIRE_TMPFS=1 requires it")]
async fn a_full_disk_answers_507_and_writes_resume_once_space_is_freed() {
    let dir = tempfile::tempdir().unwrap();
    let fs = Tmpfs::mount(dir.path(), "3m");
    let path = fs.path().join("store.redb");
    let base = start(&path).await;
    let http = reqwest::Client::new();
    let post = |body: Value| http.post(format!("{base}/v1/documents:batch")).json(&body).send();
    let mut rng = Rng(11);
    let (mut acknowledged, mut next) = (Vec::new(), 0);
    let refused = loop {
        let (ids, body) = batch(&mut rng, next);
        next += 20;
        let r = post(body).await.unwrap();
        if r.status() != 200 {
            break r;
        }
        acknowledged.extend(ids);
        assert!(next < 100_000, "the 3 MB disk never filled");
    };
    assert_eq!(refused.status(), 507);
    let v: Value = refused.json().await.unwrap();
    let message = v["error"]["message"].as_str().unwrap();
    assert_eq!(v["error"]["code"], "disk_full", "{v}");
    assert!(message.contains("disk is full") && message.contains("free space"), "{message}");
    assert!(!message.contains(&*fs.path().to_string_lossy()), "no server path: {message}");
    // Still full: 507 again (not 500), health degraded, reads fine.
    let (_, body) = batch(&mut rng, next);
    assert_eq!(post(body).await.unwrap().status(), 507);
    let r = http.get(format!("{base}/healthz")).send().await.unwrap();
    assert_eq!(r.status(), 503);
    let v: Value = r.json().await.unwrap();
    assert_eq!((v["status"].as_str(), v["writes"].as_str()), (Some("degraded"), Some("disk_full")), "{v}");
    let r = http.get(format!("{base}/livez")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let r = http.get(format!("{base}/v1/documents/{}", acknowledged[3])).send().await.unwrap();
    assert_eq!(r.status(), 200, "reads go on while the disk is full");
    let metrics = http.get(format!("{base}/metrics")).send().await.unwrap().text().await.unwrap();
    assert!(metrics.contains("neardup_writes_healthy 0"), "{metrics}");
    assert!(metrics.contains("neardup_write_failures_total 2"), "{metrics}");
    // Space freed while the server runs: healthy again, writes resume.
    fs.resize("32m");
    let r = http.get(format!("{base}/healthz")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let (ids, body) = batch(&mut rng, next + 20);
    assert_eq!(post(body).await.unwrap().status(), 200, "writes resume without a restart");
    acknowledged.extend(ids);
    let metrics = http.get(format!("{base}/metrics")).send().await.unwrap().text().await.unwrap();
    assert!(metrics.contains("neardup_writes_healthy 1"), "{metrics}");
    // Every acknowledged document is in the file, and nothing else.
    let v: Value = http.get(format!("{base}/v1/stats")).send().await.unwrap().json().await.unwrap();
    assert_eq!(v["documents"], json!(acknowledged.len()));
    let copy = dir.path().join("copy.redb");
    std::fs::copy(&path, &copy).unwrap();
    let store = RedbStore::open(&copy).unwrap();
    let mut stored = Vec::new();
    store
        .for_each(&mut |d| {
            stored.push(d.id);
            Ok(())
        })
        .unwrap();
    acknowledged.sort();
    assert_eq!(stored, acknowledged);
}
