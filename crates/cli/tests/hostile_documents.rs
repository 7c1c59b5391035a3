//! Hostile documents against the real binary, generated at test time
//! (`neardup_testkit::hostile`): each is a clear error for that file; the
//! CLI's `dedup --on-error skip` completes; `neardup serve` answers them
//! with 422, stays up, answers other clients meanwhile, and reads a normal
//! upload right after a bomb.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use neardup_testkit::hostile;
use serde_json::{json, Value};

/// What each hostile file is, and what its error must say. The bombs
/// inflate to 64 MiB: 8× the 8 MiB that a 2 MiB text limit allows.
fn hostile_files() -> Vec<(&'static str, Vec<u8>, &'static str)> {
    let bomb = 64 << 20;
    vec![
        ("self-drawing-form.pdf", hostile::self_drawing_form("A form that draws itself."), ""),
        ("form-lattice.pdf", hostile::form_lattice(40, "laugh"), "draws its forms more than 100000 times"),
        ("self-listing-pages.pdf", hostile::self_listing_pages("A page tree that lists itself."), ""),
        ("deep-page-tree.pdf", hostile::deep_page_tree(10_000), "nests more than 32 deep"),
        ("flate-bomb.pdf", hostile::flate_bomb(bomb, "A bomb."), "decompression bomb"),
        ("object-stream-bomb.pdf", hostile::object_stream_bomb(bomb, "A bomb in an object stream."), ""),
        ("docx-bomb.docx", hostile::docx_bomb(bomb, "A zip bomb."), "decompression bomb"),
        ("deep.html", hostile::deep_html(200_000, "deep"), ""),
        ("program.pdf", b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0".to_vec(), "it is a program"),
        ("cut-short.pdf", hostile::pdf_saying("cut short")[..200].to_vec(), ""),
    ]
}

/// `neardup dedup DIR --on-error skip` over every hostile file and two
/// normal ones: it completes, names each file it skips with its reason,
/// and keeps the normal documents (and the self-referencing ones, read
/// once each).
#[test]
fn dedup_skips_hostile_documents_and_completes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("in");
    std::fs::create_dir(&dir).unwrap();
    let files = hostile_files();
    for (name, bytes, _) in &files {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
    std::fs::write(dir.join("normal.pdf"), hostile::pdf_saying("A normal paper about near duplicates."))
        .unwrap();
    std::fs::write(dir.join("notes.txt"), "Plain notes, nothing hostile in them at all.").unwrap();
    let out = tmp.path().join("out");
    let start = Instant::now();
    let o = Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args(["dedup", "--on-error", "skip", "--max-doc-bytes", "2M", "-o"])
        .arg(&out)
        .arg(&dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(!err.contains("panicked") && !err.contains("RUST_BACKTRACE"), "{err}");
    assert!(start.elapsed() < Duration::from_secs(60), "{:?}", start.elapsed());
    for (name, _, says) in &files {
        if !says.is_empty() {
            let line =
                err.lines().find(|l| l.contains(name)).unwrap_or_else(|| panic!("{name} not named: {err}"));
            assert!(line.contains("skipped") && line.contains(says), "{line}");
        }
    }
    let kept = std::fs::read_to_string(out.join("kept.jsonl")).unwrap();
    let texts: Vec<String> = kept
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["text"].as_str().unwrap_or_default().to_owned())
        .collect();
    for want in ["A normal paper about near duplicates.", "Plain notes", "A form that draws itself."] {
        assert!(texts.iter().any(|t| t.contains(want)), "{want} not kept: {texts:?}");
    }
    // A page tree that lists itself is read once, not three times.
    let listed = texts.iter().find(|t| t.contains("A page tree that lists itself.")).unwrap();
    assert_eq!(listed.matches("A page tree that lists itself.").count(), 1, "{listed}");
}

/// `neardup serve --data ARGS…` on a free loopback port: the process and
/// its address.
fn serve(args: &[&std::ffi::OsStr]) -> (std::process::Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args(["serve", "--listen", "127.0.0.1:0", "--data"])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stderr.as_mut().unwrap()), &mut line)
        .unwrap();
    let addr = line.split("http://").nth(1).and_then(|s| s.split_whitespace().next()).unwrap().to_owned();
    (child, addr)
}

/// One request on a fresh connection: status, headers and JSON body.
fn request(addr: &str, method: &str, path: &str, body: &[u8]) -> (u16, String, Value) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .unwrap();
    s.write_all(body).unwrap();
    let mut resp = Vec::new();
    s.read_to_end(&mut resp).unwrap();
    let resp = String::from_utf8_lossy(&resp).into_owned();
    let status = resp.get(9..12).and_then(|c| c.parse().ok()).unwrap_or(0);
    let (head, body) = resp.split_once("\r\n\r\n").unwrap_or((&resp, ""));
    (status, head.to_owned(), serde_json::from_str(body).unwrap_or(Value::Null))
}

fn upload(addr: &str, name: &str, bytes: &[u8]) -> (u16, Value) {
    let (status, _, v) = request(addr, "POST", &format!("/v1/extract?name={name}"), bytes);
    (status, v)
}

/// The server's resident memory, from /proc.
fn rss_bytes(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb << 10)
}

/// Every hostile upload is a 422 naming the file; the server stays up and
/// small; searches go on while they are read; a normal upload right after
/// each bomb is read within 2 s; wrong logins are limited.
#[test]
fn serve_answers_hostile_uploads_and_stays_up() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let (mut child, addr) = serve(&[data.as_os_str(), "--max-body".as_ref(), "2M".as_ref()]);
    let doc = json!({"id": "d1", "text": "今天天气很好，我们去公园散步吧"}).to_string();
    assert_eq!(request(&addr, "POST", "/v1/documents", doc.as_bytes()).0, 200);

    // Searches from another thread all along.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let searcher = {
        let (addr, stop) = (addr.clone(), stop.clone());
        std::thread::spawn(move || {
            let q = json!({"text": "今天天气很好，我们去公园散步吧"}).to_string();
            let mut answered = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let (status, _, v) = request(&addr, "POST", "/v1/search", q.as_bytes());
                assert_eq!(status, 200, "a search failed during hostile uploads: {v}");
                answered += 1;
            }
            answered
        })
    };
    let normal = hostile::pdf_saying("A normal paper about near duplicates.");
    let mut peak = 0;
    for (name, bytes, says) in hostile_files() {
        let (status, v) = upload(&addr, name, &bytes);
        peak = peak.max(rss_bytes(child.id()));
        match says {
            "" if status == 200 => {}
            says => {
                assert_eq!(status, 422, "{name}: {v}");
                let m = v["error"]["message"].as_str().unwrap_or_default();
                assert!(m.starts_with(&format!("{name}: ")) && m.contains(says), "{name}: {m}");
            }
        }
        let start = Instant::now();
        let (status, v) = upload(&addr, "normal.pdf", &normal);
        assert_eq!(
            (status, v["text"].as_str()),
            (200, Some("A normal paper about near duplicates.")),
            "after {name}"
        );
        assert!(start.elapsed() < Duration::from_secs(2), "after {name}: {:?}", start.elapsed());
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let answered = searcher.join().unwrap();
    assert!(answered > 0);
    assert!(peak < 1 << 30, "the server grew to {} MiB", peak >> 20);
    // Plain text over the text limit is refused up front, naming it.
    let (status, v) = upload(&addr, "big.txt", &vec![b'a'; 3 << 20]);
    assert_eq!((status, v["error"]["code"].as_str()), (413, Some("text_too_large")), "{v}");
    assert_eq!(request(&addr, "GET", "/healthz", b"").0, 200);
    Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(child.wait().unwrap().success());
}

/// The real server limits wrong tokens per client: 429 with Retry-After.
#[test]
fn serve_throttles_wrong_logins() {
    let tmp = tempfile::tempdir().unwrap();
    let token_file = tmp.path().join("token");
    std::fs::write(&token_file, "a-token-of-more-than-16-bytes").unwrap();
    let data = tmp.path().join("data");
    let (mut child, addr) = serve(&[data.as_os_str(), "--token-file".as_ref(), token_file.as_os_str()]);
    let statuses: Vec<u16> =
        (0..12).map(|_| request(&addr, "POST", "/v1/session", br#"{"token": "guess"}"#).0).collect();
    assert_eq!(&statuses[..10], &[401; 10]);
    let (status, head, v) =
        request(&addr, "POST", "/v1/session", br#"{"token": "a-token-of-more-than-16-bytes"}"#);
    assert_eq!(status, 429, "{v}");
    assert!(head.to_ascii_lowercase().contains("retry-after: "), "{head}");
    Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    let _ = child.wait();
}

/// A reader child limits itself before it reads anything (it is started
/// with `posix_spawn`, so nothing runs between fork and exec): it may
/// write no file and dump no core, and runs at nice 10.
#[test]
#[cfg(target_os = "linux")]
fn a_reader_limits_itself_before_reading() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_neardup"))
        .arg(neardup_cli::READER)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let limits = format!("/proc/{}/limits", child.id());
    let stat = format!("/proc/{}/stat", child.id());
    let deadline = Instant::now() + Duration::from_secs(10);
    let (mut files, mut cores, mut nice) = (String::new(), String::new(), String::new());
    while Instant::now() < deadline {
        let text = std::fs::read_to_string(&limits).unwrap_or_default();
        let line = |name: &str| text.lines().find(|l| l.starts_with(name)).unwrap_or("").to_owned();
        (files, cores) = (line("Max file size"), line("Max core file size"));
        // The 19th field of stat, after the command's parenthesis.
        let s = std::fs::read_to_string(&stat).unwrap_or_default();
        nice = s.rsplit(')').next().unwrap_or("").split_whitespace().nth(16).unwrap_or("").to_owned();
        if files.split_whitespace().nth(3) == Some("0") && nice == "10" {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    drop(child.stdin.take());
    assert!(child.wait().unwrap().success(), "a reader whose parent closes its input ends cleanly");
    assert_eq!(files.split_whitespace().nth(3), Some("0"), "{files}");
    assert_eq!(cores.split_whitespace().nth(4), Some("0"), "{cores}");
    assert_eq!(nice, "10");
}
