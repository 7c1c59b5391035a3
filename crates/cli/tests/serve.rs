//! `neardup serve` as a process: persistence across restarts, graceful
//! stop, and acknowledged writes surviving `kill -9`.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use neardup_testkit::next;
use serde_json::{json, Value};

mod hostile_documents;
mod passages;

/// Starts `neardup serve` on a free loopback port; returns it and its address.
fn start(data: &Path, extra: &[&str]) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args(["serve", "--data"])
        .arg(data)
        .args(["--listen", "127.0.0.1:0"])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("neardup starts");
    let mut line = String::new();
    BufReader::new(child.stderr.as_mut().unwrap()).read_line(&mut line).unwrap();
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .unwrap_or_else(|| panic!("{line}"));
    (child, addr.to_owned())
}

/// One HTTP/1.1 request with `Connection: close`: (status, body).
fn http(addr: &str, method: &str, path: &str, body: Option<&Value>) -> std::io::Result<(u16, Value)> {
    let mut s = TcpStream::connect(addr)?;
    s.set_read_timeout(Some(Duration::from_secs(30)))?;
    let body = body.map(Value::to_string).unwrap_or_default();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    let mut resp = String::new();
    s.read_to_string(&mut resp)?;
    let status = resp.get(9..12).and_then(|c| c.parse().ok()).ok_or(std::io::ErrorKind::UnexpectedEof)?;
    let json = resp
        .split_once("\r\n\r\n")
        .map_or(Value::Null, |(_, b)| serde_json::from_str(b).unwrap_or(Value::Null));
    Ok((status, json))
}

/// A GET's body as text.
fn get_text(addr: &str, path: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").unwrap();
    let mut resp = String::new();
    s.read_to_string(&mut resp).unwrap();
    resp.split_once("\r\n\r\n").map(|(_, b)| b.to_owned()).unwrap_or_default()
}

/// Inserts "doc-1" (a Chinese sentence) and checks it was stored.
fn insert_doc_1(addr: &str) {
    let doc = json!({"id": "doc-1", "text": "今天天气很好，我们去公园散步吧"});
    let (s, v) = http(addr, "POST", "/v1/documents", Some(&doc)).unwrap();
    assert_eq!((s, v["inserted"].as_bool()), (200, Some(true)), "{v}");
}

fn sigterm(child: &Child) {
    Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
}

#[test]
fn serve_persists_and_stops_gracefully() {
    let dir = tempfile::tempdir().unwrap();
    // A SimHash directory (the default method's has no snapshot).
    let (mut child, addr) = start(dir.path(), &["--preset", "default"]);
    insert_doc_1(&addr);
    sigterm(&child);
    assert!(child.wait().unwrap().success());
    let (mut child, addr) = start(dir.path(), &[]);
    let (s, v) = http(&addr, "GET", "/v1/documents/doc-1", None).unwrap();
    assert_eq!((s, v["id"].as_str()), (200, Some("doc-1")));
    // The on-disk index reports itself (the clean stop flushed doc-1).
    let metrics = get_text(&addr, "/metrics");
    for line in [
        "neardup_index_flushes_total 1",
        "neardup_index_in_memory_documents 0",
        "neardup_index_merges_total 0",
    ] {
        assert!(metrics.contains(line), "{line} in {metrics}");
    }
    child.kill().unwrap();
    child.wait().unwrap();
    // Another pipeline is refused, with what to do.
    let out = Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args(["serve", "--data"])
        .arg(dir.path())
        .args(["--listen", "127.0.0.1:0", "--preset", "python-simhash"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("configuration it was made with"));
    // SIGTERM the moment it says it is up: still a graceful stop (the
    // handlers are installed before that line), the store marked clean.
    for _ in 0..5 {
        let (mut child, _) = start(dir.path(), &[]);
        assert!(!dir.path().join("store.clean").exists(), "the mark goes while the store is open");
        sigterm(&child);
        assert!(child.wait().unwrap().success());
        assert!(dir.path().join("store.clean").exists());
        assert!(dir.path().join("index/MANIFEST.json").exists());
    }
}

#[test]
fn acknowledged_writes_survive_kill_9() {
    let dir = tempfile::tempdir().unwrap();
    let centres: Vec<u64> = {
        let mut x = 0x1234_5678_9abc_def1;
        (0..16).map(|_| next(&mut x)).collect()
    };
    // id → fingerprint of every write attempted, and the acknowledged ids.
    let attempted: Arc<Mutex<BTreeMap<String, u64>>> = Arc::default();
    let acked: Arc<Mutex<Vec<String>>> = Arc::default();
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    // 24 rounds: every sixth ends with a graceful stop (which flushes the
    // index's memory part), the other 20 with kill -9 — amid the flushes
    // and merges of the on-disk index, which a small --memory makes every
    // 64 documents.
    for round in 0..24 {
        // Fingerprints: a SimHash directory.
        let (mut child, addr) = start(dir.path(), &["--preset", "default", "--memory", "64K"]);
        let clients: Vec<_> = (0..4)
            .map(|t| {
                let (attempted, acked, addr, centres) =
                    (attempted.clone(), acked.clone(), addr.clone(), centres.clone());
                let mut x = seed ^ ((t + 1) * 0x9e37_79b9);
                std::thread::spawn(move || {
                    for i in 0.. {
                        let c = centres[next(&mut x) as usize % centres.len()];
                        let fp = (0..next(&mut x) % 6).fold(c, |v, _| v ^ (1 << (next(&mut x) % 64)));
                        let id = format!("r{round}-c{t}-{i}");
                        attempted.lock().unwrap().insert(id.clone(), fp);
                        let body = json!({"id": id, "fingerprint": format!("{fp:016x}"), "mode": "insert"});
                        match http(&addr, "POST", "/v1/documents", Some(&body)) {
                            Ok((200, v)) if v["inserted"] == json!(true) => acked.lock().unwrap().push(id),
                            Ok((s, v)) => panic!("{s}: {v}"),
                            Err(_) => break, // killed
                        }
                    }
                })
            })
            .collect();
        std::thread::sleep(Duration::from_millis(50 + next(&mut seed) % 250));
        if round % 6 == 5 {
            // A graceful stop with writes in flight: they finish, the
            // process exits 0 after writing its snapshot.
            sigterm(&child);
            assert!(child.wait().unwrap().success(), "graceful stop in round {round}");
        } else {
            child.kill().unwrap(); // SIGKILL
            child.wait().unwrap();
        }
        for c in clients {
            c.join().unwrap();
        }
    }
    let (mut child, addr) = start(dir.path(), &["--memory", "64K"]);
    let acked = acked.lock().unwrap().clone();
    assert!(acked.len() > 100, "only {} writes acknowledged", acked.len());

    let attempted = attempted.lock().unwrap().clone();
    // Every acknowledged write is there; what is stored is exactly known.
    let mut stored: Vec<(String, u64)> = Vec::new();
    for (id, fp) in &attempted {
        let (s, v) = http(&addr, "GET", &format!("/v1/documents/{id}"), None).unwrap();
        match s {
            200 => {
                assert_eq!(v["fingerprint"], json!(format!("{fp:016x}")));
                stored.push((id.clone(), *fp));
            }
            404 => assert!(!acked.contains(id), "acknowledged {id} was lost"),
            s => panic!("{s}: {v}"),
        }
    }
    let (_, v) = http(&addr, "GET", "/v1/stats", None).unwrap();
    assert_eq!(v["documents"].as_u64(), Some(stored.len() as u64));
    // Search answers exactly what a linear scan of the stored fingerprints does.
    let mut x = 99u64;
    for q in 0..100 {
        let c = centres[q % centres.len()];
        let fp = (0..next(&mut x) % 5).fold(c, |v, _| v ^ (1 << (next(&mut x) % 64)));
        for k in [0u32, 3, 6] {
            let (s, v) = http(
                &addr,
                "POST",
                "/v1/search",
                Some(&json!({"fingerprint": format!("{fp:016x}"), "k": k, "limit": 1_000_000})),
            )
            .unwrap();
            assert_eq!(s, 200);
            let mut got: Vec<(u32, String)> = v["matches"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| (m["distance"].as_u64().unwrap() as u32, m["id"].as_str().unwrap().to_owned()))
                .collect();
            got.sort();
            let mut want: Vec<(u32, String)> = stored
                .iter()
                .map(|(id, f)| ((f ^ fp).count_ones(), id.clone()))
                .filter(|(d, _)| *d <= k)
                .collect();
            want.sort();
            assert_eq!(got, want, "query {q} k = {k}");
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    // The kills came amid flushes and merges of the on-disk index.
    let st = neardup(&["index", "stats", "--json"], dir.path());
    let v: Value = serde_json::from_slice(&st.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&st)));
    let counters = &v["disk_index"]["counters"];
    let (flushes, merges) = (counters["flushes"].as_u64().unwrap(), counters["merges"].as_u64().unwrap());
    // How many depends on how fast this machine wrote between kills: a
    // flush every 64 documents, so at least a few, and a merge.
    assert!(flushes >= 5 && merges > 0, "{v}");
    eprintln!(
        "{} acknowledged, {} stored of {} attempted over 20 kill -9 and 4 SIGTERM rounds; {flushes} flushes, \
         {merges} merges",
        acked.len(),
        stored.len(),
        attempted.len()
    );
}

fn neardup(args: &[&str], dir: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args(args)
        .arg(dir)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap()
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `neardup index add|query|stats DIR` work on the server's data directory
/// while it is stopped (and say so while it runs); the server then starts
/// from the snapshot they leave.
#[test]
fn index_commands_share_the_data_directory() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    // SimHash: queried by -k, started from a snapshot.
    let (child, addr) = start(&data, &["--preset", "default"]);
    insert_doc_1(&addr);
    // While the server runs, the store is locked: a clear refusal.
    let busy =
        Command::new(env!("CARGO_BIN_EXE_neardup")).args(["index", "stats"]).arg(&data).output().unwrap();
    assert!(!busy.status.success());
    assert!(stderr(&busy).contains("stop it first"), "{}", stderr(&busy));
    sigterm(&child);
    let mut child = child;
    assert!(child.wait().unwrap().success());

    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/docs_en.jsonl");
    let add = Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args(["index", "add"])
        .arg(&data)
        .arg(&docs)
        .output()
        .unwrap();
    assert!(add.status.success(), "{}", stderr(&add));
    assert!(stderr(&add).contains("now holds 25"), "{}", stderr(&add));

    let first: Value =
        serde_json::from_str(std::fs::read_to_string(&docs).unwrap().lines().next().unwrap()).unwrap();
    let text = first["text"].as_str().unwrap();
    let id = first["id"].as_str().unwrap();
    let q = Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args(["index", "query"])
        .arg(&data)
        .args(["--text", text, "-k", "0"])
        .output()
        .unwrap();
    assert!(q.status.success(), "{}", stderr(&q));
    let v: Value = serde_json::from_slice(&q.stdout).unwrap();
    assert_eq!(v["matches"][0]["id"], json!(id), "{v}");

    let st = neardup(&["index", "stats", "--json"], &data);
    assert!(st.status.success(), "{}", stderr(&st));
    let v: Value = serde_json::from_slice(&st.stdout).unwrap();
    assert_eq!(v["documents"], json!(25));
    assert!(v["index"].as_str().unwrap().contains("segments on disk"), "{v}");
    // A clean close wrote the memory part as a segment.
    assert_eq!(v["disk_index"]["in_memory"], json!(0), "{v}");
    assert!(v["disk_index"]["segments"].as_array().is_some_and(|s| !s.is_empty()), "{v}");

    // Reading commands do not turn any directory into a data directory.
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let st = neardup(&["index", "stats"], &empty);
    assert_eq!(st.status.code(), Some(2), "{}", stderr(&st));
    assert!(stderr(&st).contains("not a neardup data directory"), "{}", stderr(&st));
    assert!(!empty.join("store.redb").exists());

    // Another pipeline is refused here too.
    let other = Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args(["index", "add"])
        .arg(&data)
        .arg(&docs)
        .args(["--preset", "python-simhash"])
        .output()
        .unwrap();
    assert_eq!(other.status.code(), Some(2), "{}", stderr(&other));

    // `index build -o DIR` says what to do instead of failing obscurely.
    let build = Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args(["index", "build"])
        .arg(&docs)
        .arg("-o")
        .arg(&data)
        .output()
        .unwrap();
    assert_eq!(build.status.code(), Some(2));
    assert!(stderr(&build).contains("index add"), "{}", stderr(&build));

    // The server opens the on-disk index and serves what was added.
    let mut child = Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args(["serve", "--data"])
        .arg(&data)
        .args(["--listen", "127.0.0.1:0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stderr.as_mut().unwrap()).read_line(&mut line).unwrap();
    assert!(
        line.contains("serving 25 documents")
            && line.contains("segments on disk (0 recent documents read back)"),
        "{line}"
    );
    let addr = line.split("http://").nth(1).unwrap().split_whitespace().next().unwrap();
    // The id has slashes; sent raw, they are part of it.
    let (s, v) = http(addr, "GET", &format!("/v1/documents/{id}"), None).unwrap();
    assert_eq!(s, 200, "{v}");
    child.kill().unwrap();
    child.wait().unwrap();
}

/// A MinHash data directory from `index build`, queried by `index query`,
/// served by `serve` (insert-if-unique by the pipeline's threshold), and
/// durable across `kill -9`; the other method's pipeline, k or fingerprint
/// lists are refused with what to do instead.
#[test]
fn a_minhash_data_directory_is_built_queried_and_served() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("mh");
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/docs_en.jsonl");
    let run = |args: &[&str]| Command::new(env!("CARGO_BIN_EXE_neardup")).args(args).output().unwrap();
    let (d, p) = (data.to_str().unwrap(), docs.to_str().unwrap());
    let build = run(&["index", "build", "--preset", "minhash", p, "-o", d]);
    assert!(build.status.success(), "{}", stderr(&build));
    assert!(stderr(&build).contains("is a MinHash data directory"), "{}", stderr(&build));
    // A build that fails (an empty document) leaves no directory behind.
    let bad = dir.path().join("bad");
    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "{\"id\": \"a\", \"text\": \"\"}\n").unwrap();
    let failed =
        run(&["index", "build", "--preset", "minhash", empty.to_str().unwrap(), "-o", bad.to_str().unwrap()]);
    assert_eq!(failed.status.code(), Some(1), "{}", stderr(&failed));
    assert!(stderr(&failed).contains("empty document"), "{}", stderr(&failed));
    assert!(!bad.exists(), "a failed build left {}", bad.display());
    // Building over it again is refused (build makes new ones).
    let again = run(&["index", "build", "--preset", "minhash", p, "-o", d]);
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));
    assert!(stderr(&again).contains("index add"), "{}", stderr(&again));

    let first: Value =
        serde_json::from_str(std::fs::read_to_string(&docs).unwrap().lines().next().unwrap()).unwrap();
    let (text, id) = (first["text"].as_str().unwrap(), first["id"].as_str().unwrap());
    let edited = text.replacen("the", "a", 3);
    let q = run(&["index", "query", d, "--text", &edited]);
    assert!(q.status.success(), "{}", stderr(&q));
    assert!(stderr(&q).contains("Jaccard ≥ 0.5 (32 bands × 4 rows of 128 values)"), "{}", stderr(&q));
    let v: Value = serde_json::from_slice(&q.stdout).unwrap();
    assert_eq!(v["matches"][0]["id"], json!(id), "{v}");
    let s = v["matches"][0]["similarity"].as_f64().unwrap();
    assert!((0.5..1.0).contains(&s), "{v}");
    let q = run(&["index", "query", d, "--text", &edited, "--threshold", "0.999"]);
    let v: Value = serde_json::from_slice(&q.stdout).unwrap();
    assert_eq!(v["matches"], json!([]), "{v}");

    for (args, says) in [
        (vec!["index", "add", d, "--preset", "default", p], "holds MinHash signatures, not SimHash"),
        (vec!["index", "query", d, "-k", "3", "--text", text], "give a threshold"),
        (vec!["index", "query", d, "--fingerprint", "0123456789abcdef"], "signatures of 128"),
        (vec!["serve", "--data", d, "-k", "3"], "use --threshold"),
    ] {
        let o = run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
    }

    let (mut child, addr) = start(&data, &[]);
    let near = json!({"id": "near-copy", "text": edited});
    let (s, v) = http(&addr, "POST", "/v1/documents", Some(&near)).unwrap();
    assert_eq!((s, v["inserted"].as_bool(), &v["matches"][0]["id"]), (200, Some(false), &json!(id)), "{v}");
    insert_doc_1(&addr);
    child.kill().unwrap(); // SIGKILL: the acknowledged write must survive
    child.wait().unwrap();
    let (mut child, addr) = start(&data, &["--threshold", "0.3"]);
    let (s, v) = http(&addr, "GET", "/v1/documents/doc-1", None).unwrap();
    assert_eq!((s, v["signature"].as_str().map(str::len)), (200, Some(1024)), "{v}");
    let (_, v) = http(&addr, "GET", "/v1/stats", None).unwrap();
    assert_eq!((v["documents"].as_u64(), v["method"].as_str()), (Some(25), Some("minhash")), "{v}");
    assert_eq!(v["radius"], json!("Jaccard ≥ 0.3 (32 bands × 4 rows of 128 values)"));
    sigterm(&child);
    assert!(child.wait().unwrap().success());
    let st = neardup(&["index", "stats", "--json"], &data);
    let v: Value = serde_json::from_slice(&st.stdout).unwrap();
    assert_eq!((v["method"].as_str(), v["permutations"].as_u64()), (Some("minhash"), Some(128)), "{v}");
}

#[test]
fn serving_other_machines_needs_a_token_and_short_tokens_are_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let data = data.to_str().unwrap();
    for listen in ["0.0.0.0:0", "[::]:0"] {
        let o = Command::new(env!("CARGO_BIN_EXE_neardup"))
            .args(["serve", "--data", data, "--listen", listen])
            .output()
            .unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains("--token-file") && err.contains("--allow-unauthenticated"), "{err}");
    }
    // A 3-byte token: served, with a warning first.
    let token = dir.path().join("token");
    std::fs::write(&token, "abc\n").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args(["serve", "--data", data, "--listen", "127.0.0.1:0", "--token-file"])
        .arg(&token)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    assert!(first.contains("warning") && first.contains("3 bytes") && first.contains("16"), "{first}");
    let second = lines.next().unwrap().unwrap();
    assert!(second.contains("serving"), "{second}");
    sigterm(&child);
    assert!(child.wait().unwrap().success());
}

/// Runs neardup with `args` to completion.
fn run(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_neardup")).args(args).output().unwrap()
}

/// A damaged store, a damaged snapshot, a read-only data directory, a file
/// for a directory: each a clear start-up message (or a rebuild that says
/// why), never a panic.
#[test]
fn damaged_or_unwritable_data_directories_are_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good");
    std::fs::create_dir(&good).unwrap();
    let docs = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/docs_en.jsonl");
    // SimHash, whose directories keep an index snapshot.
    let o = run(&["index", "add", good.to_str().unwrap(), docs, "--preset", "default"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let copy = |name: &str| {
        let to = dir.path().join(name);
        std::fs::create_dir(&to).unwrap();
        std::fs::copy(good.join("store.redb"), to.join("store.redb")).unwrap();
        std::fs::create_dir(to.join("index")).unwrap();
        std::fs::copy(good.join("index/MANIFEST.json"), to.join("index/MANIFEST.json")).unwrap();
        to
    };
    // Pages of the store's committed trees overwritten: refused at open by
    // the integrity check (a plain open of this file panics inside redb).
    let bad = copy("bad-store");
    let mut bytes = std::fs::read(bad.join("store.redb")).unwrap();
    for b in &mut bytes[4096..65536] {
        *b ^= 0x5a;
    }
    std::fs::write(bad.join("store.redb"), bytes).unwrap();
    let o = run(&["serve", "--data", bad.to_str().unwrap(), "--listen", "127.0.0.1:0"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("damaged") && err.contains("backup") && !err.contains("panicked"), "{err}");
    // Not a store at all.
    let foreign = copy("foreign");
    std::fs::write(foreign.join("store.redb"), b"not a database").unwrap();
    let o = run(&["serve", "--data", foreign.to_str().unwrap(), "--listen", "127.0.0.1:0"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("not a neardup store"), "{}", stderr(&o));
    // A damaged index manifest: the index is rebuilt from the store,
    // saying why.
    let snap = copy("bad-manifest");
    std::fs::write(snap.join("index/MANIFEST.json"), b"{\"version\": 1, \"segm").unwrap();
    let o = run(&["index", "stats", snap.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("rebuilt from the store (the manifest is unreadable"), "{}", stdout(&o));
    let o = run(&["index", "stats", snap.to_str().unwrap()]);
    assert!(stdout(&o).contains("opened from 1 segment on disk"), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("(SimHash, 64-bit)") && stdout(&o).contains("tables for k = 4"),
        "{}",
        stdout(&o)
    );
    // A file where the directory should be.
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let o = run(&["serve", "--data", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("is a file, not a data directory"), "{}", stderr(&o));
}

#[test]
#[cfg_attr(not(neardup_tmpfs), ignore = "needs root to mount a tmpfs; NEARDUP_REQUIRE_TMPFS=1 requires it")]
fn a_data_directory_on_a_read_only_filesystem_is_refused_clearly() {
    // A tmpfs remounted read-only.
    let dir = tempfile::tempdir().unwrap();
    let docs = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/docs_en.jsonl");
    let fs = neardup_testkit::tmpfs::Tmpfs::mount(dir.path(), "16m");
    let data = fs.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let o = run(&["index", "add", data.to_str().unwrap(), docs]);
    assert!(o.status.success(), "{}", stderr(&o));
    let status = Command::new("mount").args(["-o", "remount,ro"]).arg(fs.path()).status().unwrap();
    assert!(status.success());
    let o = run(&["serve", "--data", data.to_str().unwrap(), "--listen", "127.0.0.1:0"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("read-only filesystem"), "{}", stderr(&o));
}

/// The pairs of the one-answer test: the labelled pairs (English and
/// Chinese), and each labelled `a` against copies of itself with a share of
/// its words (English) or characters (Chinese) dropped, which puts many
/// pairs near the threshold.
fn agreement_pairs() -> Vec<(String, String)> {
    let mut rng = neardup_testkit::Rng(34);
    let mut pairs = Vec::new();
    for (file, rates) in [("pairs_en.jsonl", &[0.15, 0.3, 0.45][..]), ("pairs_zh.jsonl", &[0.3][..])] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata").join(file);
        for line in std::fs::read_to_string(path).unwrap().lines() {
            let p: Value = serde_json::from_str(line).unwrap();
            let (a, b) = (p["text_a"].as_str().unwrap().to_owned(), p["text_b"].as_str().unwrap().to_owned());
            for &rate in rates {
                let kept = |rng: &mut neardup_testkit::Rng| rng.below(1000) >= (rate * 1000.0) as u64;
                let dropped: String = if file.contains("_en") {
                    a.split_whitespace().filter(|_| kept(&mut rng)).collect::<Vec<_>>().join(" ")
                } else {
                    a.chars().filter(|_| kept(&mut rng)).collect()
                };
                pairs.push((a.clone(), dropped));
            }
            pairs.push((a, b));
        }
    }
    pairs
}

/// One default method, one answer: with default settings (no preset, no
/// k, no threshold), `compare` calls a pair near duplicates exactly when
/// `index query` on an index built from `a` finds `a` by `b`, and exactly
/// when `serve`'s `/v1/search` for `b` finds `a` on a new data directory
/// holding `a` alone (each `a` is inserted, searched for and deleted in
/// turn). The index holds every `a` at once: whether a query finds an
/// entry depends on the two alone.
#[test]
fn default_settings_give_one_answer_in_compare_index_query_and_serve() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let pairs = agreement_pairs();
    let run = |args: &[&str]| Command::new(env!("CARGO_BIN_EXE_neardup")).args(args).output().unwrap();
    // compare, two processes at a time.
    let compare = |(a, b): &(String, String)| {
        let o = run(&["compare", "--json", "--text", a, "--text", b]);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["method"], "minhash", "{v}");
        v["near_duplicate"].as_bool().unwrap()
    };
    let half = pairs.len() / 2;
    let verdicts: Vec<bool> = std::thread::scope(|s| {
        let first = s.spawn(|| pairs[..half].iter().map(compare).collect::<Vec<_>>());
        let mut v: Vec<bool> = pairs[half..].iter().map(compare).collect();
        let mut all = first.join().unwrap();
        all.append(&mut v);
        all
    });
    let near = verdicts.iter().filter(|&&v| v).count();
    assert!(near > 20 && pairs.len() - near > 20, "{near} of {} pairs near", pairs.len());

    // index build and index query, default settings.
    let (mut a_docs, mut b_docs) = (String::new(), String::new());
    for (i, (a, b)) in pairs.iter().enumerate() {
        a_docs += &format!("{}\n", json!({"id": format!("a{i}"), "text": a}));
        b_docs += &format!("{}\n", json!({"id": format!("b{i}"), "text": b}));
    }
    std::fs::write(d.join("a.jsonl"), a_docs).unwrap();
    std::fs::write(d.join("b.jsonl"), b_docs).unwrap();
    let (a_path, b_path, idx) = (d.join("a.jsonl"), d.join("b.jsonl"), d.join("idx"));
    let (a_path, b_path, idx) = (a_path.to_str().unwrap(), b_path.to_str().unwrap(), idx.to_str().unwrap());
    let build = run(&["index", "build", a_path, "-o", idx]);
    assert!(build.status.success(), "{}", stderr(&build));
    assert!(stderr(&build).contains("near duplicates by MinHash"), "{}", stderr(&build));
    let q = run(&["index", "query", idx, b_path]);
    assert!(q.status.success(), "{}", stderr(&q));
    let answers: Vec<Value> =
        String::from_utf8_lossy(&q.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(answers.len(), pairs.len());
    for (i, v) in answers.iter().enumerate() {
        let found = v["matches"].as_array().unwrap().iter().any(|m| m["id"] == format!("a{i}"));
        assert_eq!(found, verdicts[i], "index query, pair {i}: {v}");
    }

    // serve on a new data directory, holding one text at a time.
    let (mut child, addr) = start(&d.join("served"), &[]);
    for (i, (a, b)) in pairs.iter().enumerate() {
        let doc = json!({"id": "a", "text": a, "mode": "insert"});
        let (s, v) = http(&addr, "POST", "/v1/documents", Some(&doc)).unwrap();
        assert_eq!((s, v["inserted"].as_bool()), (200, Some(true)), "{v}");
        let (s, v) = http(&addr, "POST", "/v1/search", Some(&json!({"text": b}))).unwrap();
        assert_eq!(s, 200, "{v}");
        let found = v["matches"].as_array().unwrap().iter().any(|m| m["id"] == "a");
        assert_eq!(found, verdicts[i], "serve, pair {i}: {v}");
        let (s, v) = http(&addr, "DELETE", "/v1/documents/a", None).unwrap();
        assert_eq!(s, 200, "{v}");
    }
    let (_, v) = http(&addr, "GET", "/v1/stats", None).unwrap();
    assert_eq!(v["method"], "minhash", "{v}");
    child.kill().unwrap();
    child.wait().unwrap();
}

/// Wrong logins through a trusted proxy (`--trusted-proxy`) are counted
/// per the client its `X-Forwarded-For` names: one client throttled, the
/// next not; without the flag the header is not believed.
#[test]
fn logins_behind_a_trusted_proxy_are_limited_per_forwarded_client() {
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, "a-token-of-more-than-16-bytes").unwrap();
    let login = |addr: &str, forwarded: &str| -> u16 {
        let mut s = TcpStream::connect(addr).unwrap();
        let body = r#"{"token": "guess"}"#;
        write!(
            s,
            "POST /v1/session HTTP/1.1\r\nHost: {addr}\r\nX-Forwarded-For: {forwarded}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut resp = String::new();
        s.read_to_string(&mut resp).unwrap();
        resp[9..12].parse().unwrap()
    };
    for (trusted, second_client) in [(true, 401), (false, 429)] {
        let data = dir.path().join(format!("data-{trusted}"));
        let mut extra = vec!["--token-file", token.to_str().unwrap()];
        if trusted {
            extra.extend(["--trusted-proxy", "127.0.0.1"]);
        }
        let (mut child, addr) = start(&data, &extra);
        let statuses: Vec<u16> = (0..11).map(|_| login(&addr, "203.0.113.7")).collect();
        assert_eq!(statuses[..10], [401; 10]);
        assert_eq!(statuses[10], 429, "the 11th wrong token from one client");
        assert_eq!(login(&addr, "198.51.100.2"), second_client, "another client, trusted proxy: {trusted}");
        child.kill().unwrap();
        child.wait().unwrap();
    }
}

/// The bodies held at once are bounded (`--max-bodies`): while one client
/// sends a body as large as the whole budget, another's request with a
/// body waits, one without a body does not, and once the first body is in
/// and answered, the waiting request is answered too.
#[test]
fn request_bodies_held_at_once_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let limits = ["--max-bodies", "1M", "--max-upload", "1M", "--max-body", "1M"];
    let (mut child, addr) = start(&dir.path().join("data"), &limits);
    let search = json!({"text": "今天天气很好，我们去公园散步吧"}).to_string();
    // A request whose body is `length` bytes, `body` of them sent now.
    let send = |head: &str, length: usize, body: &[u8]| {
        let mut s = TcpStream::connect(&addr).unwrap();
        write!(s, "{head}Host: {addr}\r\nContent-Length: {length}\r\nConnection: close\r\n\r\n").unwrap();
        s.write_all(body).unwrap();
        s
    };
    let answer = |s: &mut TcpStream, within: Duration| {
        s.set_read_timeout(Some(within)).unwrap();
        let mut resp = String::new();
        s.read_to_string(&mut resp).map(|_| resp)
    };
    let search_head = "POST /v1/search HTTP/1.1\r\nContent-Type: application/json\r\n";
    let first =
        answer(&mut send(search_head, search.len(), search.as_bytes()), Duration::from_secs(10)).unwrap();
    assert!(first.starts_with("HTTP/1.1 200"), "{first}");
    // A 1 MiB upload (the whole budget), its first half sent.
    let text = "a plain text line of a large upload\n".repeat(30_000);
    let body = &text.as_bytes()[..1 << 20];
    let mut upload = send("POST /v1/extract?name=big.txt HTTP/1.1\r\n", body.len(), &body[..body.len() / 2]);
    std::thread::sleep(Duration::from_millis(300));
    // A search waits for the budget; a request without a body does not.
    let mut waiting = send(search_head, search.len(), search.as_bytes());
    assert!(
        answer(&mut waiting, Duration::from_millis(700)).is_err(),
        "a search waits while the budget is held"
    );
    assert!(!get_text(&addr, "/healthz").trim().is_empty(), "a request without a body does not wait");
    // The rest of the upload: it is read, and the search goes on.
    upload.write_all(&body[body.len() / 2..]).unwrap();
    let done = answer(&mut upload, Duration::from_secs(20)).unwrap();
    assert!(done.starts_with("HTTP/1.1 200"), "{:.300}", done);
    let later = answer(&mut waiting, Duration::from_secs(20)).unwrap();
    assert!(later.starts_with("HTTP/1.1 200"), "{later}");
    child.kill().unwrap();
    child.wait().unwrap();
}
