//! Hostile clients over a real socket: idle and slow connections are
//! closed after the header timeout while normal requests are served, the
//! connection cap answers 503 and recovers, an announced body over the
//! limit is refused at once, and the framework's own errors come in the
//! JSON envelope.

use std::time::{Duration, Instant};

use neardup_server::{ConnLimits, Settings};
use neardup_store::MemoryStore;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

mod common;

const HEADER_TIMEOUT: Duration = Duration::from_millis(800);

async fn start(max_connections: usize) -> std::net::SocketAddr {
    let limits = ConnLimits { header_timeout: HEADER_TIMEOUT, max_connections };
    common::start(MemoryStore::new(), Settings::default(), limits).await
}

/// Whether the server closed `s` within `within` (EOF or reset; anything
/// it sent before, such as an answer, is read and dropped).
async fn closed_within(s: &mut TcpStream, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    let mut buf = [0u8; 4096];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, s.read(&mut buf)).await {
            Err(_) => return false,
            Ok(Ok(0) | Err(_)) => return true,
            Ok(Ok(_)) => {}
        }
    }
}

/// One whole request on a fresh connection; status and body.
async fn request(addr: std::net::SocketAddr, raw: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(raw.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut out)).await;
    let text = String::from_utf8_lossy(&out).into_owned();
    let status = text.get(9..12).and_then(|c| c.parse().ok()).unwrap_or(0);
    (status, text)
}

async fn healthz(addr: std::net::SocketAddr) -> u16 {
    request(addr, "GET /healthz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n").await.0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_and_slow_connections_are_closed_and_others_served() {
    let addr = start(1000).await;
    let mut held = Vec::new();
    for i in 0..300 {
        let mut s = TcpStream::connect(addr).await.unwrap();
        if i % 3 == 0 {
            // Half a request head, never finished.
            s.write_all(b"POST /v1/documents HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n")
                .await
                .unwrap();
        }
        held.push(s);
    }
    // Served meanwhile.
    assert_eq!(healthz(addr).await, 200);
    // A keep-alive connection that goes idle after its answer.
    let mut keep = TcpStream::connect(addr).await.unwrap();
    keep.write_all(b"GET /livez HTTP/1.1\r\nhost: x\r\n\r\n").await.unwrap();
    let mut buf = [0u8; 1024];
    let n = keep.read(&mut buf).await.unwrap();
    assert!(buf[..n].starts_with(b"HTTP/1.1 200"), "{}", String::from_utf8_lossy(&buf[..n]));
    held.push(keep);
    let start = Instant::now();
    for (i, s) in held.iter_mut().enumerate() {
        assert!(
            closed_within(s, HEADER_TIMEOUT * 4).await,
            "connection {i} still open after {:?}",
            start.elapsed()
        );
    }
    assert_eq!(healthz(addr).await, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_connection_cap_answers_503_then_recovers() {
    let addr = start(20).await;
    let mut held = Vec::new();
    for _ in 0..20 {
        held.push(TcpStream::connect(addr).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let (status, text) = request(addr, "GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n").await;
    assert_eq!(status, 503, "{text}");
    assert!(text.contains("too_many_connections") && text.contains("retry-after: 1"), "{text}");
    // The held ones time out; the server serves again.
    for s in &mut held {
        assert!(closed_within(s, HEADER_TIMEOUT * 4).await);
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(healthz(addr).await, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_announced_over_the_limit_is_refused_at_once() {
    let addr = start(100).await;
    let started = Instant::now();
    let (status, text) = request(
        addr,
        "POST /v1/documents HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 1000000000\r\n\r\n{}",
    )
    .await;
    assert_eq!(status, 413, "{text}");
    assert!(text.contains("payload_too_large"), "{text}");
    assert!(started.elapsed() < Duration::from_secs(2), "took {:?}", started.elapsed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn framework_errors_come_in_the_json_envelope() {
    let addr = start(100).await;
    let (status, text) =
        request(addr, "PUT /v1/search HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n").await;
    assert_eq!(status, 405, "{text}");
    assert!(text.to_ascii_lowercase().contains("\r\nallow: post"), "{text}");
    let body: Value = serde_json::from_str(text.split_once("\r\n\r\n").unwrap().1).unwrap();
    assert_eq!(body["error"]["code"], "method_not_allowed", "{body}");
    let (status, text) =
        request(addr, "GET /v1/documents/%FF%FE HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n").await;
    assert_eq!(status, 400, "{text}");
    let body: Value = serde_json::from_str(text.split_once("\r\n\r\n").unwrap().1).unwrap();
    assert_eq!(body["error"]["code"], "bad_request", "{body}");
}
