//! The service end to end: in process through the router, and over a real
//! socket on an ephemeral 127.0.0.1 port.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use neardup::{Fingerprinter, Radius};
use neardup_server::{router, AppState, ConnLimits, Settings};
use neardup_store::{Engine, MemoryStore, RedbStore};
use serde_json::{json, Value};
use tower::ServiceExt;

mod common;

const TEXT: &str = "The quick brown fox jumps over the lazy dog near the river bank every single morning.";
const NEAR: &str = "The quick brown fox jumps over the lazy dog near the river bank every single morning!";
const OTHER: &str = "完全不同的一段中文文本，讲的是做饭和洗衣服的家务事情，还有周末去公园散步。";

fn app(settings: Settings) -> axum::Router {
    let fingerprinter = Fingerprinter::preset("default").unwrap();
    let engine =
        Arc::new(Engine::open(MemoryStore::new(), fingerprinter.config().clone(), Radius::fixed(3)).unwrap());
    router(Arc::new(AppState::new(engine, settings).unwrap()))
}

async fn call(app: &axum::Router, method: &str, path: &str, body: Option<Value>) -> (StatusCode, Value) {
    let mut req = Request::builder().method(method).uri(path);
    let body = match body {
        Some(b) => {
            req = req.header("content-type", "application/json");
            Body::from(b.to_string())
        }
        None => Body::empty(),
    };
    let resp = app.clone().oneshot(req.body(body).unwrap()).await.unwrap();
    let status = resp.status();
    let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX).await.unwrap();
    (status, serde_json::from_slice(&bytes).unwrap_or(Value::String(String::from_utf8_lossy(&bytes).into())))
}

#[tokio::test]
async fn router_documents_search_get_delete() {
    let app = app(Settings::default());
    let (s, v) = call(&app, "POST", "/v1/fingerprint", Some(json!({"text": TEXT, "explain": true}))).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["fingerprint"].as_str().unwrap().len(), 16);
    assert!(v["explain"]["features"].as_array().unwrap().len() > 5);
    let (s, v) =
        call(&app, "POST", "/v1/documents", Some(json!({"id": "a", "text": TEXT, "metadata": {"url": "u"}})))
            .await;
    assert_eq!((s, v["inserted"].as_bool()), (StatusCode::OK, Some(true)), "{v}");
    let (_, v) = call(&app, "POST", "/v1/documents", Some(json!({"id": "b", "text": NEAR}))).await;
    assert_eq!(v["inserted"], json!(false));
    assert_eq!(v["matches"][0]["id"], json!("a"));
    let (_, v) =
        call(&app, "POST", "/v1/documents", Some(json!({"id": "c", "text": OTHER, "mode": "check"}))).await;
    assert_eq!((v["inserted"].as_bool(), v["matches"].as_array().unwrap().len()), (Some(false), 0));
    let (_, v) = call(&app, "POST", "/v1/search", Some(json!({"text": NEAR, "k": 3}))).await;
    assert_eq!(v["matches"], json!([{"id": "a", "distance": v["matches"][0]["distance"]}]));
    let fp = v["fingerprint"].as_str().unwrap().to_owned();
    let (_, v) = call(&app, "POST", "/v1/search", Some(json!({"fingerprint": fp, "limit": 0}))).await;
    assert_eq!(v["matches"], json!([]));
    let (s, v) = call(&app, "GET", "/v1/documents/a", None).await;
    assert_eq!((s, &v["metadata"]), (StatusCode::OK, &json!({"url": "u"})));
    let (s, _) = call(&app, "DELETE", "/v1/documents/a", None).await;
    assert_eq!(s, StatusCode::OK);
    let (s, v) = call(&app, "GET", "/v1/documents/a", None).await;
    assert_eq!((s, v["error"]["code"].as_str()), (StatusCode::NOT_FOUND, Some("not_found")));
    let (s, _) = call(&app, "DELETE", "/v1/documents/a", None).await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    let (_, v) = call(
        &app,
        "POST",
        "/v1/documents:batch",
        Some(json!({"documents": [
        {"id": "x", "text": TEXT}, {"id": "y", "text": NEAR}, {"id": "z", "text": OTHER}]})),
    )
    .await;
    let inserted: Vec<bool> =
        v["results"].as_array().unwrap().iter().map(|r| r["inserted"].as_bool().unwrap()).collect();
    assert_eq!(inserted, [true, false, true]);
    let (_, v) = call(&app, "GET", "/v1/stats", None).await;
    assert_eq!(v["documents"], json!(2));
    let (s, v) = call(&app, "GET", "/metrics", None).await;
    let text = v.as_str().unwrap();
    assert_eq!(s, StatusCode::OK);
    assert!(text.contains("neardup_http_requests_total{route=\"/v1/documents\",status=\"200\"} 3"), "{text}");
    assert!(
        text.contains("neardup_http_request_duration_seconds_bucket{route=\"/v1/search\",le=\"+Inf\"} 2"),
        "{text}"
    );
    assert!(text.contains("neardup_documents 2"), "{text}");
    let (_, v) = call(&app, "GET", "/openapi.json", None).await;
    for path in [
        "/v1/fingerprint",
        "/v1/documents",
        "/v1/documents:batch",
        "/v1/documents/{id}",
        "/v1/search",
        "/v1/stats",
        "/healthz",
        "/metrics",
    ] {
        assert!(v["paths"].get(path).is_some(), "{path}");
    }
}

#[tokio::test]
async fn ids_with_slashes_and_non_ascii_work_raw_or_percent_encoded() {
    let app = app(Settings::default());
    for id in ["https://example.org/a/b?c=1", "文档 1", "en/man/man4/full.4"] {
        let (s, v) = call(
            &app,
            "POST",
            "/v1/documents",
            Some(json!({"id": id, "fingerprint": "00000000000000ff", "mode": "insert"})),
        )
        .await;
        assert_eq!(s, StatusCode::OK, "{v}");
        let encoded: String = id
            .bytes()
            .map(|b| if b.is_ascii_alphanumeric() { (b as char).to_string() } else { format!("%{b:02X}") })
            .collect();
        let (s, v) = call(&app, "GET", &format!("/v1/documents/{encoded}"), None).await;
        assert_eq!((s, v["id"].as_str()), (StatusCode::OK, Some(id)), "{v}");
        if !id.contains(' ') && !id.contains('?') && id.is_ascii() {
            let (s, v) = call(&app, "GET", &format!("/v1/documents/{id}"), None).await;
            assert_eq!((s, v["id"].as_str()), (StatusCode::OK, Some(id)), "{v}");
        }
        let (s, _) = call(&app, "DELETE", &format!("/v1/documents/{encoded}"), None).await;
        assert_eq!(s, StatusCode::OK);
    }
}

#[tokio::test]
async fn router_refuses_bad_requests_with_json_errors() {
    let app = app(Settings { max_batch: 2, max_body_bytes: 4096, ..Settings::default() });
    let cases: Vec<(&str, Value, StatusCode, &str)> = vec![
        ("/v1/documents", json!({"id": "a"}), StatusCode::BAD_REQUEST, "exactly one of"),
        (
            "/v1/documents",
            json!({"id": "a", "text": TEXT, "fingerprint": "00000000000000ff"}),
            StatusCode::BAD_REQUEST,
            "exactly one of",
        ),
        ("/v1/documents", json!({"id": "", "text": TEXT}), StatusCode::BAD_REQUEST, "must not be empty"),
        ("/v1/documents", json!({"id": "a", "text": "   "}), StatusCode::BAD_REQUEST, "no features"),
        ("/v1/documents", json!({"id": "a", "fingerprint": "xyz"}), StatusCode::BAD_REQUEST, "document:"),
        (
            "/v1/documents",
            json!({"id": "a", "fingerprint": "0000000000000000000000000000000f"}),
            StatusCode::BAD_REQUEST,
            "128-bit",
        ),
        ("/v1/documents", json!({"id": 5, "text": TEXT}), StatusCode::BAD_REQUEST, "id"),
        (
            "/v1/documents",
            json!({"id": "a", "text": TEXT, "mode": "upsert"}),
            StatusCode::BAD_REQUEST,
            "mode",
        ),
        ("/v1/documents", json!({"id": "a", "text": TEXT, "colour": 1}), StatusCode::BAD_REQUEST, "colour"),
        ("/v1/search", json!({"text": TEXT, "k": 40}), StatusCode::BAD_REQUEST, "limit of 16"),
        (
            "/v1/documents:batch",
            json!({"documents": [{"id": "1", "text": TEXT}, {"id": "2", "text": TEXT}, {"id": "3", "text": TEXT}]}),
            StatusCode::PAYLOAD_TOO_LARGE,
            "at most 2",
        ),
        (
            "/v1/documents:batch",
            json!({"documents": [{"id": "1", "text": TEXT, "k": 2}]}),
            StatusCode::BAD_REQUEST,
            "documents[0]",
        ),
        ("/v1/fingerprint", json!({"text": "x".repeat(10_000)}), StatusCode::PAYLOAD_TOO_LARGE, "--max-body"),
    ];
    for (path, body, status, wanted) in cases {
        let (s, v) = call(&app, "POST", path, Some(body.clone())).await;
        assert_eq!(s, status, "{path} {body}: {v}");
        let msg = v["error"]["message"].as_str().unwrap_or_default();
        assert!(msg.contains(wanted) && v["error"]["code"].is_string(), "{path} {body}: {v}");
    }
    // Not JSON at all, and no content type.
    let req = Request::post("/v1/search")
        .header("content-type", "application/json")
        .body(Body::from("{oops"))
        .unwrap();
    let resp = app.clone().oneshot(req).await.unwrap();
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    let req = Request::post("/v1/search").body(Body::from("{}")).unwrap();
    assert_eq!(app.clone().oneshot(req).await.unwrap().status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let (s, v) = call(&app, "GET", "/nope", None).await;
    assert_eq!((s, v["error"]["code"].as_str()), (StatusCode::NOT_FOUND, Some("not_found")));
}

/// Sends a request and reads its JSON body.
async fn json_of(req: reqwest::RequestBuilder) -> Value {
    req.send().await.unwrap().json().await.unwrap()
}

/// A real server on 127.0.0.1:0 over a redb store; returns its base URL.
async fn start(settings: Settings, dir: &tempfile::TempDir) -> String {
    let store = RedbStore::open(&dir.path().join("store.redb")).unwrap();
    let addr = common::start(store, settings, ConnLimits::default()).await;
    format!("http://{addr}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn socket_auth_and_concurrent_insert_if_unique() {
    let dir = tempfile::tempdir().unwrap();
    let base = start(Settings { token: Some("s3cret".into()), ..Settings::default() }, &dir).await;
    let client = reqwest::Client::new();
    // Health needs no token; everything else does.
    assert_eq!(client.get(format!("{base}/healthz")).send().await.unwrap().status(), 200);
    for auth in [None, Some("Bearer wrong"), Some("s3cret"), Some("Basic s3cret"), Some("Bearer s3cre")] {
        let mut r = client.get(format!("{base}/v1/stats"));
        if let Some(a) = auth {
            r = r.header("authorization", a);
        }
        let resp = r.send().await.unwrap();
        assert_eq!(resp.status(), 401, "{auth:?}");
        assert_eq!(resp.headers()["www-authenticate"], "Bearer realm=\"neardup\"");
        let v: Value = resp.json().await.unwrap();
        assert_eq!(v["error"]["code"], json!("unauthorized"));
    }
    let ok =
        client.get(format!("{base}/v1/stats")).header("authorization", "bearer s3cret").send().await.unwrap();
    assert_eq!(ok.status(), 200, "the scheme is case-insensitive");
    // 16 clients race to insert the same text under different ids: one wins.
    let tasks: Vec<_> = (0..16)
        .map(|i| {
            let (client, base) = (client.clone(), base.clone());
            tokio::spawn(async move {
                let body = json!({"id": format!("client-{i}"), "text": TEXT, "mode": "insert-if-unique"});
                let v =
                    json_of(client.post(format!("{base}/v1/documents")).bearer_auth("s3cret").json(&body))
                        .await;
                v["inserted"].as_bool().unwrap()
            })
        })
        .collect();
    let mut wins = 0;
    for t in tasks {
        wins += usize::from(t.await.unwrap());
    }
    assert_eq!(wins, 1);
    let v = json_of(client.get(format!("{base}/v1/stats")).bearer_auth("s3cret")).await;
    assert_eq!(v["documents"], json!(1));
    // A huge body is refused before it is read whole.
    let huge = "x".repeat(11 << 20);
    let resp = client
        .post(format!("{base}/v1/fingerprint"))
        .bearer_auth("s3cret")
        .header("content-type", "application/json")
        .body(format!("{{\"text\": \"{huge}\"}}"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 413);
    // Over the socket too: malformed JSON, wrong types, unknown ids and an
    // over-long batch are JSON errors with a code and a message.
    let post = |path: &str, body: String| {
        client
            .post(format!("{base}{path}"))
            .bearer_auth("s3cret")
            .header("content-type", "application/json")
            .body(body)
    };
    let batch: Vec<Value> =
        (0..1001).map(|i| json!({"id": format!("b{i}"), "fingerprint": "0000000000000001"})).collect();
    let cases = [
        (post("/v1/documents", "{\"id\": \"x\", \"text\": ".into()), 400, "bad_json"),
        (post("/v1/documents", json!({"id": 7, "text": TEXT}).to_string()), 400, "bad_json"),
        (post("/v1/search", json!({"fingerprint": "xyz"}).to_string()), 400, "bad_request"),
        (post("/v1/documents:batch", json!({"documents": batch}).to_string()), 413, "batch_too_large"),
        (client.get(format!("{base}/v1/documents/no-such-id")).bearer_auth("s3cret"), 404, "not_found"),
        (client.delete(format!("{base}/v1/documents/no-such-id")).bearer_auth("s3cret"), 404, "not_found"),
    ];
    for (req, status, code) in cases {
        let resp = req.send().await.unwrap();
        assert_eq!(resp.status(), status, "{code}");
        let v: Value = resp.json().await.unwrap();
        assert_eq!(v["error"]["code"], json!(code), "{v}");
        assert!(!v["error"]["message"].as_str().unwrap().is_empty());
    }
}

/// One radius rule everywhere: without a k, the service's verdict on a
/// labelled pair (store `a`, check `b`; insert-if-unique refuses `b`) is
/// the pipeline's rule for the two documents' lengths — what `neardup
/// dedup` and `compare` decide; with k = 3 it is distance ≤ 3.
#[tokio::test]
async fn the_service_answers_by_the_pipelines_rule() {
    let fingerprinter = Fingerprinter::preset("default").unwrap();
    let rule = fingerprinter.radius().clone();
    let engine =
        Arc::new(Engine::open(MemoryStore::new(), fingerprinter.config().clone(), rule.clone()).unwrap());
    let app = router(Arc::new(AppState::new(engine, Settings::default()).unwrap()));
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let (mut near, mut beyond_3) = (0, 0);
    for (i, line) in ["pairs_en.jsonl", "pairs_zh.jsonl"]
        .iter()
        .flat_map(|f| {
            std::fs::read_to_string(root.join(f)).unwrap().lines().map(str::to_owned).collect::<Vec<_>>()
        })
        .enumerate()
    {
        let p: Value = serde_json::from_str(&line).unwrap();
        let (a, b) = (p["text_a"].as_str().unwrap(), p["text_b"].as_str().unwrap());
        let ((fa, na), (fb, nb)) =
            (fingerprinter.fingerprint_counted(a), fingerprinter.fingerprint_counted(b));
        let d = fa.distance(fb);
        let want = rule.accepts(d, na, nb);
        let id = format!("a{i}");
        let (s, v) =
            call(&app, "POST", "/v1/documents", Some(json!({"id": id, "text": a, "mode": "insert"}))).await;
        assert_eq!(s, StatusCode::OK, "{v}");
        let (_, v) = call(
            &app,
            "POST",
            "/v1/documents",
            Some(json!({"id": format!("b{i}"), "text": b, "mode": "check"})),
        )
        .await;
        let found = v["matches"].as_array().unwrap().iter().any(|m| m["id"] == json!(id));
        assert_eq!(found, want, "pair {i}: distance {d}, {na} and {nb} features");
        let (_, v) = call(&app, "POST", "/v1/search", Some(json!({"text": b, "k": 3}))).await;
        let found3 = v["matches"].as_array().unwrap().iter().any(|m| m["id"] == json!(id));
        assert_eq!((found3, v["radius"].as_str()), (d <= 3, Some("k = 3")), "pair {i}");
        near += usize::from(want);
        beyond_3 += usize::from(want && d > 3);
    }
    assert!(near > 10 && beyond_3 > 0, "{near} near, {beyond_3} beyond k = 3");
    let (_, v) = call(&app, "GET", "/v1/stats", None).await;
    assert_eq!(v["radius"], json!("k = 8 below 600 features, else 4"));
}

/// A service over a MinHash data directory: texts or signatures in,
/// matches with their estimated similarity out; the threshold is the
/// request's or the pipeline's; SimHash inputs are refused, saying what to
/// send.
#[tokio::test]
async fn a_minhash_store_is_served_by_threshold() {
    let config = neardup::presets::config("minhash").unwrap();
    let engine = Arc::new(Engine::open(MemoryStore::new(), config, Radius::fixed(3)).unwrap());
    let app = router(Arc::new(AppState::new(engine.clone(), Settings::default()).unwrap()));
    let long =
        |t: &str| format!("{t} {}", "and then the story went on as stories do for a while longer".repeat(2));
    let (a, b) = (long(TEXT), long(&TEXT.replace("single", "other")));
    let (s, v) = call(&app, "POST", "/v1/fingerprint", Some(json!({"text": a, "explain": true}))).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!((v["signature"].as_str().unwrap().len(), v["permutations"].as_u64()), (128 * 8, Some(128)));
    assert!(v["explain"]["distinct_features"].as_u64().unwrap() > 10);
    let signature = v["signature"].clone();
    let (_, v) = call(&app, "POST", "/v1/documents", Some(json!({"id": "a", "text": a}))).await;
    assert_eq!((v["inserted"].as_bool(), v.get("fingerprint")), (Some(true), None), "{v}");
    let (_, v) = call(&app, "POST", "/v1/documents", Some(json!({"id": "b", "text": b}))).await;
    assert_eq!(v["inserted"], json!(false), "{v}");
    let m = &v["matches"][0];
    let similarity = m["similarity"].as_f64().unwrap();
    assert!(m["id"] == "a" && (0.5..1.0).contains(&similarity), "{v}");
    assert_eq!(m["distance"].as_u64().unwrap(), 128 - (similarity * 128.0).round() as u64);
    // A threshold above the pair's estimate: no match, and b goes in.
    let (_, v) =
        call(&app, "POST", "/v1/documents", Some(json!({"id": "b", "text": b, "threshold": 0.99}))).await;
    assert_eq!((v["inserted"].as_bool(), v["matches"].as_array().unwrap().len()), (Some(true), 0), "{v}");
    // Search by signature, as hex or as values; the stored one comes back.
    let values: Vec<u64> = (0..128)
        .map(|i| u64::from_str_radix(&signature.as_str().unwrap()[i * 8..i * 8 + 8], 16).unwrap())
        .collect();
    for sig in [signature.clone(), json!(values)] {
        let (s, v) =
            call(&app, "POST", "/v1/search", Some(json!({"signature": sig, "threshold": 1.0}))).await;
        assert_eq!(s, StatusCode::OK, "{v}");
        assert_eq!(v["matches"], json!([{"id": "a", "distance": 0, "similarity": 1.0}]), "{v}");
        assert_eq!(v["threshold"], json!(1.0));
    }
    let (_, v) = call(&app, "GET", "/v1/documents/a", None).await;
    assert_eq!(v["signature"], signature);
    let (_, v) = call(&app, "GET", "/v1/stats", None).await;
    assert_eq!(
        (v["method"].as_str(), v["permutations"].as_u64(), v["documents"].as_u64()),
        (Some("minhash"), Some(128), Some(2))
    );
    assert_eq!(v["radius"], json!("Jaccard ≥ 0.5 (32 bands × 4 rows of 128 values)"));
    // Batches check against earlier documents of the same batch.
    let (_, v) = call(
        &app,
        "POST",
        "/v1/documents:batch",
        Some(json!({"documents": [{"id": "x", "text": long(OTHER)}, {"id": "y", "text": long(OTHER)}], "threshold": 0.9})),
    )
    .await;
    assert_eq!(v["results"][1]["matches"][0]["id"], json!("x"), "{v}");
    // Refused, with the reason and what to send.
    for (body, says) in [
        (json!({"id": "f", "fingerprint": "0123456789abcdef"}), "send \"text\" or \"signature\""),
        (json!({"id": "f", "text": a, "k": 3}), "give a threshold"),
        (json!({"id": "f", "text": a, "threshold": 0}), "(0, 1]"),
        (json!({"id": "f", "signature": [1, 2, 3]}), "3 values"),
        (json!({"id": "f", "signature": "xyz"}), "invalid signature"),
        (json!({"id": "f", "signature": [-1, 2]}), "a list of ints from 0 to 2**32 - 1"),
        (json!({"id": "f", "text": "!!!"}), "no features"),
    ] {
        let (s, v) = call(&app, "POST", "/v1/documents", Some(body.clone())).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{body}: {v}");
        assert!(v["error"]["message"].as_str().unwrap().contains(says), "{body}: {v}");
    }
    assert_eq!(engine.len(), 3, "a, b and x");
    // The stats say the threshold a search without one runs at.
    let (_, v) = call(&app, "GET", "/v1/stats", None).await;
    assert_eq!(v["default_threshold"], json!(0.5), "the pipeline's: {v}");
    // A server-wide k makes no sense here; a threshold does.
    let k = Settings { default_k: Some(3), ..Settings::default() };
    assert!(AppState::new(engine.clone(), k).is_err());
    let t = Settings { default_threshold: Some(0.99), ..Settings::default() };
    let app = router(Arc::new(AppState::new(engine, t).unwrap()));
    let (_, v) = call(&app, "GET", "/v1/stats", None).await;
    assert_eq!(v["default_threshold"], json!(0.99), "{v}");
    let (_, v) =
        call(&app, "POST", "/v1/documents", Some(json!({"id": "c", "text": b, "mode": "check"}))).await;
    assert_eq!(v["matches"].as_array().unwrap().len(), 1, "only b itself at 0.99: {v}");
}

/// A store with the `ferd` preset (128-bit MD5 fingerprints over byte
/// windows) is served like any other: the service's fingerprint is the
/// library's, near copies are found, and features show as escaped windows.
#[tokio::test]
async fn a_ferd_store_serves_128_bit_fingerprints() {
    let fingerprinter = Fingerprinter::preset("ferd").unwrap();
    let config = fingerprinter.config().clone();
    let radius = config.radius.clone().unwrap();
    let engine = Arc::new(Engine::open(MemoryStore::new(), config, radius).unwrap());
    let app = router(Arc::new(AppState::new(engine, Settings::default()).unwrap()));
    let long = |t: &str| t.repeat(4);
    let (s, v) =
        call(&app, "POST", "/v1/fingerprint", Some(json!({"text": long(TEXT), "explain": true}))).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["fingerprint"], json!(fingerprinter.fingerprint(&long(TEXT)).to_string()));
    assert_eq!(v["fingerprint"].as_str().unwrap().len(), 32);
    assert!(v["explain"]["features"].as_array().unwrap().len() > 10, "{v}");
    let (_, v) = call(&app, "POST", "/v1/documents", Some(json!({"id": "a", "text": long(TEXT)}))).await;
    assert_eq!(v["inserted"], json!(true), "{v}");
    // One byte changed in 340: two of its windows.
    let near = TEXT.repeat(3) + NEAR;
    let (_, v) = call(&app, "POST", "/v1/documents", Some(json!({"id": "b", "text": near}))).await;
    assert_eq!((v["inserted"].as_bool(), &v["matches"][0]["id"]), (Some(false), &json!("a")), "{v}");
    let (_, v) = call(&app, "POST", "/v1/documents", Some(json!({"id": "c", "text": long(OTHER)}))).await;
    assert_eq!(v["inserted"], json!(true), "{v}");
    let (s, v) = call(&app, "POST", "/v1/documents", Some(json!({"id": "d", "fingerprint": "00ff"}))).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
}

/// A request with `headers`, answering the status, the headers and the body.
async fn raw(
    app: &axum::Router,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> (StatusCode, axum::http::HeaderMap, Vec<u8>) {
    let mut req = Request::builder().method(method).uri(path);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = app.clone().oneshot(req.body(Body::from(body)).unwrap()).await.unwrap();
    let (status, headers) = (resp.status(), resp.headers().clone());
    (status, headers, axum::body::to_bytes(resp.into_body(), usize::MAX).await.unwrap().to_vec())
}

#[tokio::test]
async fn the_page_and_its_assets_come_with_a_strict_policy() {
    let app = app(Settings::default());
    for path in ["/", "/assets/app.js", "/assets/app.css", "/assets/report.css", "/v1/stats"] {
        let (status, headers, body) = raw(&app, "GET", path, &[], Vec::new()).await;
        assert_eq!(status, StatusCode::OK, "{path}");
        let csp = headers["content-security-policy"].to_str().unwrap();
        assert!(csp.starts_with("default-src 'none'; script-src 'self'; style-src 'self'"), "{csp}");
        assert_eq!(headers["x-content-type-options"], "nosniff");
        assert!(!body.is_empty());
    }
    let (_, _, html) = raw(&app, "GET", "/", &[], Vec::new()).await;
    let html = String::from_utf8(html).unwrap();
    assert!(html.contains("<script src=\"/assets/app.js\" defer></script>") && !html.contains("style="));
}

#[tokio::test]
async fn uploads_are_read_as_documents_and_refused_clearly() {
    let app = app(Settings { max_upload_bytes: 1 << 20, ..Settings::default() });
    let (status, _, body) =
        raw(&app, "POST", "/v1/extract?name=essay.md", &[], b"# Title\n\nSome *text*.".to_vec()).await;
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(
        v,
        json!({"name": "essay.md", "kind": "markdown", "chars": 17, "text": "Title\n\nSome text."})
    );
    let (status, _, body) =
        raw(&app, "POST", "/v1/extract?name=paper.docx", &[], b"\x7fELF\x02\x01\x01\0\0\0".to_vec()).await;
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    assert_eq!(v["error"]["code"], "not_a_document");
    assert!(v["error"]["message"]
        .as_str()
        .unwrap()
        .starts_with("paper.docx: not a Word document (.docx): it is a program"));
    // Over --max-upload, but under --max-body: the upload's own limit.
    let (status, _, body) = raw(&app, "POST", "/v1/extract?name=big.txt", &[], vec![b'a'; 2 << 20]).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{}", String::from_utf8_lossy(&body));
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(v["error"]["code"], "upload_too_large");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("the file over this server's limit of 1 MiB (--max-upload)"),
        "{v}"
    );
    // Under --max-upload but over the text limit (--max-body): plain text
    // is refused up front, naming the limit that applies, while a document
    // as large is read; /v1/stats gives the page both limits.
    let app =
        self::app(Settings { max_upload_bytes: 4 << 20, max_body_bytes: 1 << 20, ..Settings::default() });
    let (status, _, body) = raw(&app, "POST", "/v1/extract?name=big.txt", &[], vec![b'a'; 2 << 20]).await;
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        (status, v["error"]["code"].as_str()),
        (StatusCode::PAYLOAD_TOO_LARGE, Some("text_too_large")),
        "{v}"
    );
    let m = v["error"]["message"].as_str().unwrap();
    assert!(
        m.contains("big.txt is 2 MiB of plain text, over this server's text limit of 1 MiB (--max-body)"),
        "{m}"
    );
    let mut html = b"<html><body><p>short</p>".to_vec();
    html.extend(std::iter::repeat_n(b' ', 2 << 20));
    html.extend_from_slice(b"</body></html>");
    let (status, _, body) = raw(&app, "POST", "/v1/extract?name=big.html", &[], html).await;
    assert_eq!(status, StatusCode::OK, "{}", String::from_utf8_lossy(&body));
    let (_, stats) = call(&app, "GET", "/v1/stats", None).await;
    assert_eq!(
        (stats["max_upload_bytes"].as_u64(), stats["max_text_bytes"].as_u64()),
        (Some(4 << 20), Some(1 << 20))
    );
    assert!(stats["document_extensions"].as_array().unwrap().contains(&json!("pdf")));
    // Without passages, a report is refused with what to do.
    let (status, v) = call(&app, "POST", "/v1/report", Some(json!({"text": TEXT}))).await;
    assert_eq!((status, v["error"]["code"].as_str()), (StatusCode::CONFLICT, Some("no_passages")));
}

#[tokio::test]
async fn a_login_makes_a_server_side_session_that_logout_revokes() {
    let token = "a-token-of-more-than-16-bytes";
    let app = app(Settings { token: Some(token.into()), ..Settings::default() });
    let (status, _, _) = raw(&app, "GET", "/v1/stats", &[], Vec::new()).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let json_type = [("content-type", "application/json")];
    let (status, _, _) =
        raw(&app, "POST", "/v1/session", &json_type, br#"{"token": "wrong"}"#.to_vec()).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let login = format!("{{\"token\": \"{token}\"}}").into_bytes();
    let (status, headers, _) = raw(&app, "POST", "/v1/session", &json_type, login.clone()).await;
    assert_eq!(status, StatusCode::OK);
    let cookie = headers["set-cookie"].to_str().unwrap();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict") && cookie.contains("Path=/"),
        "{cookie}"
    );
    assert!(cookie.contains("Max-Age=43200") && !cookie.contains("Secure"), "{cookie}");
    let pair = cookie.split(';').next().unwrap().to_owned();
    // The cookie is a random id, not the token in any spelling.
    let id = pair.strip_prefix("neardup_session=").unwrap();
    let hex: String = token.bytes().map(|b| format!("{b:02x}")).collect();
    assert!(id.len() == 64 && id != hex && !id.contains(token), "{id}");
    let (status, _, _) = raw(&app, "GET", "/v1/stats", &[("cookie", &pair)], Vec::new()).await;
    assert_eq!(status, StatusCode::OK);
    // A second login is a second session.
    let (_, headers, _) = raw(&app, "POST", "/v1/session", &json_type, login).await;
    let other = headers["set-cookie"].to_str().unwrap().split(';').next().unwrap().to_owned();
    assert_ne!(other, pair);
    for forged in ["neardup_session=00".to_owned(), format!("neardup_session={hex}")] {
        let (status, _, _) = raw(&app, "GET", "/v1/stats", &[("cookie", &forged)], Vec::new()).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{forged}");
    }
    // A wrong bearer header is not rescued by a good cookie.
    let both = [("cookie", pair.as_str()), ("authorization", "Bearer nope")];
    let (status, _, _) = raw(&app, "GET", "/v1/stats", &both, Vec::new()).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    // Logging out revokes the session on the server: the old cookie, sent
    // again, no longer works; the other session still does.
    let (_, headers, _) = raw(&app, "DELETE", "/v1/session", &[("cookie", &pair)], Vec::new()).await;
    assert!(headers["set-cookie"].to_str().unwrap().contains("Max-Age=0"));
    let (status, _, _) = raw(&app, "GET", "/v1/stats", &[("cookie", &pair)], Vec::new()).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, _, _) = raw(&app, "GET", "/v1/stats", &[("cookie", &other)], Vec::new()).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn cookies_are_secure_over_tls_and_wrong_tokens_are_throttled() {
    let token = "a-token-of-more-than-16-bytes";
    let login = format!("{{\"token\": \"{token}\"}}").into_bytes();
    let json_type = ("content-type", "application/json");
    // Behind a TLS proxy, or with --secure-cookies.
    for (settings, headers) in [
        (
            Settings { token: Some(token.into()), ..Settings::default() },
            vec![json_type, ("x-forwarded-proto", "https")],
        ),
        (
            Settings { token: Some(token.into()), secure_cookies: true, ..Settings::default() },
            vec![json_type],
        ),
    ] {
        let app = app(settings);
        let (status, h, _) = raw(&app, "POST", "/v1/session", &headers, login.clone()).await;
        assert_eq!(status, StatusCode::OK);
        assert!(h["set-cookie"].to_str().unwrap().ends_with("; Secure"), "{:?}", h["set-cookie"]);
    }
    // Ten wrong tokens a minute, then 429 with Retry-After, even for the
    // right one; a login after the wait works (tested on the counter).
    let app = app(Settings { token: Some(token.into()), ..Settings::default() });
    for i in 0..10 {
        let (status, _, _) =
            raw(&app, "POST", "/v1/session", &[json_type], br#"{"token": "guess"}"#.to_vec()).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "try {i}");
    }
    for body in [br#"{"token": "guess"}"#.to_vec(), login] {
        let (status, h, body) = raw(&app, "POST", "/v1/session", &[json_type], body).await;
        let v: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(
            (status, v["error"]["code"].as_str()),
            (StatusCode::TOO_MANY_REQUESTS, Some("too_many_logins")),
            "{v}"
        );
        let wait: u64 = h["retry-after"].to_str().unwrap().parse().unwrap();
        assert!((1..=60).contains(&wait), "{wait}");
    }
}

fn testdata(name: &str) -> String {
    std::fs::read_to_string(format!("{}/../../testdata/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// A server over an empty passage library in `dir`, open to write.
fn library_app(dir: &std::path::Path, settings: Settings) -> axum::Router {
    use neardup_store::library::{LibraryOptions, LibrarySettings, PassageLibrary};
    let lib_settings = LibrarySettings {
        keys: neardup::passage::LibraryKeys::default(),
        pipeline: Fingerprinter::preset("default").unwrap().config().clone(),
        passages: neardup::passage::PassageConfig::default(),
    };
    drop(PassageLibrary::open(dir, Some(lib_settings), LibraryOptions::default()).unwrap());
    let passages = neardup_store::passages::Passages::open_writable(dir, true).unwrap();
    assert!(passages.is_some());
    let fingerprinter = Fingerprinter::preset("default").unwrap();
    let engine =
        Arc::new(Engine::open(MemoryStore::new(), fingerprinter.config().clone(), Radius::fixed(3)).unwrap());
    router(Arc::new(AppState::new(engine, settings).unwrap().with_passages(passages)))
}

fn sources(report: &Value) -> Vec<&str> {
    report["sources"].as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap()).collect()
}

/// `POST /v1/passages` (and `:batch`), `GET` and `DELETE
/// /v1/passages/{id}`: what is added is found by the next report, with its
/// text; a replaced document is one source; a removed one is gone.
#[tokio::test]
async fn passages_added_online_are_in_the_next_report() {
    let tmp = tempfile::tempdir().unwrap();
    let app = library_app(tmp.path(), Settings { max_batch: 2, ..Settings::default() });
    let a = json!({"text": testdata("report_en_a.txt"), "name": "a"});
    let (s, v) = call(&app, "POST", "/v1/report", Some(a.clone())).await;
    assert_eq!((s, sources(&v).len()), (StatusCode::OK, 0), "{v}");
    let b = testdata("report_en_b.txt");
    let (s, v) = call(&app, "POST", "/v1/passages", Some(json!({"id": "src/b", "text": b}))).await;
    assert_eq!((s, v["documents"].as_u64()), (StatusCode::OK, Some(1)), "{v}");
    let (_, found) = call(&app, "POST", "/v1/report", Some(a.clone())).await;
    assert_eq!(sources(&found), ["src/b"], "{found}");
    assert!(found["matches"][0]["b"]["text"].as_str().is_some_and(|t| !t.is_empty()), "{found}");
    let (s, v) = call(&app, "GET", "/v1/passages/src/b", None).await;
    assert_eq!((s, v["text"].as_str()), (StatusCode::OK, Some(b.as_str())));
    // A batch; the same id again replaces it.
    let batch =
        json!({"documents": [{"id": "src/b", "text": b}, {"id": "zh", "text": testdata("report_zh_b.txt")}]});
    let (s, v) = call(&app, "POST", "/v1/passages:batch", Some(batch)).await;
    assert_eq!((s, v["added"].as_u64(), v["documents"].as_u64()), (StatusCode::OK, Some(2), Some(2)), "{v}");
    let (_, again) = call(&app, "POST", "/v1/report", Some(a.clone())).await;
    assert_eq!((sources(&again), &again["similarity"]), (vec!["src/b"], &found["similarity"]), "{again}");
    let (_, zh) = call(&app, "POST", "/v1/report", Some(json!({"text": testdata("report_zh_a.txt")}))).await;
    assert_eq!(sources(&zh), ["zh"], "{zh}");
    // Bad input: refused whole, named; nothing added.
    let short = json!({"documents": [{"id": "ok", "text": testdata("report_en_unrelated.txt")}, {"id": "tiny", "text": "two words"}]});
    let (s, v) = call(&app, "POST", "/v1/passages:batch", Some(short)).await;
    let m = v["error"]["message"].as_str().unwrap_or_default().to_owned();
    assert!(s == StatusCode::BAD_REQUEST && m.contains("\"tiny\"") && m.contains("too short"), "{s} {v}");
    let three =
        json!({"documents": [{"id": "1", "text": b}, {"id": "2", "text": b}, {"id": "3", "text": b}]});
    let (s, v) = call(&app, "POST", "/v1/passages:batch", Some(three)).await;
    assert_eq!((s, v["error"]["code"].as_str()), (StatusCode::PAYLOAD_TOO_LARGE, Some("batch_too_large")));
    let (s, _) = call(&app, "POST", "/v1/passages", Some(json!({"id": "", "text": b}))).await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    let (_, stats) = call(&app, "GET", "/v1/stats", None).await;
    assert_eq!(stats["passages"], json!({"texts": true, "documents": 2}), "{stats}");
    // Removed: gone from reports; a second delete is 404.
    let (s, v) = call(&app, "DELETE", "/v1/passages/src/b", None).await;
    assert_eq!((s, &v["deleted"]), (StatusCode::OK, &json!(true)), "{v}");
    let (_, gone) = call(&app, "POST", "/v1/report", Some(a)).await;
    assert!(sources(&gone).is_empty(), "{gone}");
    for method in ["DELETE", "GET"] {
        let (s, v) = call(&app, method, "/v1/passages/src/b", None).await;
        assert_eq!(
            (s, v["error"]["code"].as_str()),
            (StatusCode::NOT_FOUND, Some("not_found")),
            "{method} {v}"
        );
    }
    // Without a library: 409 with what to do.
    let plain = app_without_passages();
    for (method, path, body) in [
        ("POST", "/v1/passages", Some(json!({"id": "x", "text": b}))),
        ("GET", "/v1/passages/x", None),
        ("DELETE", "/v1/passages/x", None),
    ] {
        let (s, v) = call(&plain, method, path, body).await;
        assert_eq!(
            (s, v["error"]["code"].as_str()),
            (StatusCode::CONFLICT, Some("no_passages")),
            "{path} {v}"
        );
    }
}

fn app_without_passages() -> axum::Router {
    app(Settings::default())
}

/// Reports while documents are added and removed: every one answers, and
/// each finds the source while it is in the library.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn reports_run_while_the_library_changes() {
    let tmp = tempfile::tempdir().unwrap();
    let app = library_app(tmp.path(), Settings::default());
    let b = testdata("report_en_b.txt");
    let (s, _) = call(&app, "POST", "/v1/passages", Some(json!({"id": "b", "text": b}))).await;
    assert_eq!(s, StatusCode::OK);
    let writer = {
        let app = app.clone();
        let filler = testdata("report_zh_unrelated.txt");
        tokio::spawn(async move {
            for i in 0..40 {
                let (s, v) =
                    call(&app, "POST", "/v1/passages", Some(json!({"id": format!("f{i}"), "text": filler})))
                        .await;
                assert_eq!(s, StatusCode::OK, "{v}");
                if i % 3 == 0 {
                    let (s, v) = call(&app, "DELETE", &format!("/v1/passages/f{i}"), None).await;
                    assert_eq!(s, StatusCode::OK, "{v}");
                }
            }
        })
    };
    let a = json!({"text": testdata("report_en_a.txt")});
    let mut readers = Vec::new();
    for _ in 0..3 {
        let (app, a) = (app.clone(), a.clone());
        readers.push(tokio::spawn(async move {
            for _ in 0..10 {
                let (s, v) = call(&app, "POST", "/v1/report", Some(a.clone())).await;
                assert_eq!((s, sources(&v)), (StatusCode::OK, vec!["b"]), "{v}");
            }
        }));
    }
    writer.await.unwrap();
    for r in readers {
        r.await.unwrap();
    }
    let (_, stats) = call(&app, "GET", "/v1/stats", None).await;
    assert_eq!(stats["passages"]["documents"], json!(1 + 40 - 14), "{stats}");
}
