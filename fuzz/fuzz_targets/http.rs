//! Arbitrary request bodies and ids into the whole HTTP service (the
//! router over an in-memory engine, SimHash or MinHash, in process): the
//! first byte picks the route and the data directory's method, the rest
//! is the body (or the document id). Every answer is below 500 and every
//! error is the JSON envelope with a code and a message — never a panic.
#![no_main]

use std::sync::{Arc, Mutex, OnceLock};

use axum::body::Body;
use axum::http::Request;
use libfuzzer_sys::fuzz_target;
use neardup::detector::Detector;
use neardup_server::{router, AppState, Settings};
use neardup_store::{Engine, MemoryStore};
use tower::ServiceExt;

struct Apps {
    runtime: tokio::runtime::Runtime,
    /// SimHash and MinHash services, made anew every so often so that
    /// stored documents do not pile up.
    apps: Mutex<(usize, [axum::Router; 2])>,
}

fn app(preset: &str) -> axum::Router {
    let detector = Detector::preset(preset).expect("preset");
    let config = detector.config().clone();
    let radius = config.radius();
    let engine = Arc::new(Engine::open(MemoryStore::new(), config, radius).expect("engine"));
    let settings = Settings { max_body_bytes: 1 << 16, max_batch: 8, ..Settings::default() };
    router(Arc::new(AppState::new(engine, settings).expect("state")))
}

fn apps() -> &'static Apps {
    static APPS: OnceLock<Apps> = OnceLock::new();
    APPS.get_or_init(|| Apps {
        runtime: tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime"),
        apps: Mutex::new((0, [app("default"), app("minhash")])),
    })
}

const POSTS: [&str; 4] = ["/v1/fingerprint", "/v1/documents", "/v1/documents:batch", "/v1/search"];

fuzz_target!(|data: &[u8]| {
    let Some((&sel, rest)) = data.split_first() else { return };
    let apps = apps();
    let service = {
        let mut guard = apps.apps.lock().expect("lock");
        guard.0 += 1;
        if guard.0 % 20_000 == 0 {
            guard.1 = [app("default"), app("minhash")];
        }
        guard.1[usize::from(sel & 1)].clone()
    };
    let route = (sel >> 1) % 6;
    let request = if route < 4 {
        Request::post(POSTS[usize::from(route)])
            .header("content-type", "application/json")
            .body(Body::from(rest.to_vec()))
    } else {
        // The id as raw path bytes, percent-encoded where needed.
        let id: String = rest.iter().map(|b| format!("%{b:02X}")).collect();
        let method = if route == 4 { "GET" } else { "DELETE" };
        Request::builder().method(method).uri(format!("/v1/documents/{id}")).body(Body::empty())
    };
    let Ok(request) = request else { return };
    let response = apps.runtime.block_on(service.oneshot(request)).expect("infallible");
    let status = response.status();
    let bytes = apps.runtime.block_on(axum::body::to_bytes(response.into_body(), usize::MAX)).expect("body");
    assert!(status.as_u16() < 500, "{status}: {}", String::from_utf8_lossy(&bytes));
    if status.as_u16() >= 400 {
        let v: serde_json::Value = serde_json::from_slice(&bytes).expect("an error is JSON");
        assert!(v["error"]["code"].is_string() && v["error"]["message"].is_string(), "{v}");
    }
});
