//! The neardup HTTP service: check-and-insert, search, get and delete over
//! a durable [`Engine`], with stats, Prometheus metrics and an OpenAPI
//! description. [`router`] builds the whole service without a socket (for
//! tests); [`serve`] runs it until [`shutdown_signal`] (SIGTERM or SIGINT),
//! finishing requests in flight.
//!
//! Safe by default: the CLI listens on 127.0.0.1; an optional bearer token
//! (compared in constant time) guards every route but `/healthz`; bodies,
//! batches and request time are limited.

#![deny(missing_docs)]

mod error;
mod metrics;
mod openapi;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::rejection::JsonRejection;
use axum::extract::{DefaultBodyLimit, FromRequest, MatchedPath, Path, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use neardup::{Fingerprint, Fingerprinter};
use neardup_store::{Engine, Mode, NewDoc, Store};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub use error::ApiError;
pub use metrics::Metrics;

/// Limits and defaults of the service. Defaults: the pipeline's radius
/// rule, 10 MiB bodies, batches of 1,000, 30 s per request, search limit
/// 100, no token.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The radius when a request gives none; `None` (the default): the
    /// engine's rule ([`Engine::radius`], the pipeline's radius by the
    /// documents' lengths), the rule `neardup dedup` and `compare` use.
    pub default_k: Option<u32>,
    /// The largest radius a request may ask for.
    pub max_k: u32,
    /// The largest request body, in bytes.
    pub max_body_bytes: usize,
    /// The most documents in one `/v1/documents:batch`.
    pub max_batch: usize,
    /// The longest a request may take.
    pub timeout: Duration,
    /// The most matches a search returns when it gives no limit.
    pub default_limit: usize,
    /// The bearer token every route but `/healthz` requires, if any.
    pub token: Option<String>,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            default_k: None,
            max_k: 16,
            max_body_bytes: 10 << 20,
            max_batch: 1000,
            timeout: Duration::from_secs(30),
            default_limit: 100,
            token: None,
        }
    }
}

/// What handlers share.
pub struct AppState<S: Store> {
    engine: Arc<Engine<S>>,
    fp: Fingerprinter,
    settings: Settings,
    metrics: Metrics,
    started: Instant,
}

impl<S: Store> AppState<S> {
    /// State over an engine; the fingerprinter is built from its pipeline.
    pub fn new(engine: Arc<Engine<S>>, settings: Settings) -> Result<AppState<S>, neardup::Error> {
        let fp = Fingerprinter::new(engine.config().clone())?;
        Ok(AppState { engine, fp, settings, metrics: Metrics::default(), started: Instant::now() })
    }
}

/// The whole service as a router (no socket): every route, the limits,
/// the token check, the timeout and the metrics.
pub fn router<S: Store + 'static>(state: Arc<AppState<S>>) -> Router {
    let api = Router::new()
        .route("/v1/fingerprint", post(fingerprint::<S>))
        .route("/v1/documents", post(submit::<S>))
        .route("/v1/documents:batch", post(submit_batch::<S>))
        // A wildcard, so that ids with slashes (URLs, paths) work raw as
        // well as percent-encoded.
        .route("/v1/documents/{*id}", get(get_document::<S>).delete(delete_document::<S>))
        .route("/v1/search", post(search::<S>))
        .route("/v1/stats", get(stats::<S>))
        .route("/metrics", get(metrics_text::<S>))
        .route("/openapi.json", get(|| async { Json(openapi::document()) }))
        .route_layer(middleware::from_fn_with_state(state.clone(), auth::<S>));
    Router::new()
        .merge(api)
        .route("/healthz", get(|| async { Json(json!({"status": "ok"})) }))
        .fallback(|| async { ApiError::not_found("no such route; see GET /openapi.json") })
        .layer(middleware::from_fn_with_state(state.clone(), observe::<S>))
        .layer(DefaultBodyLimit::max(state.settings.max_body_bytes))
        .with_state(state)
}

/// Serves `app` on `listener` until `shutdown` resolves (see
/// [`shutdown_signal`]); requests in flight (writes included) finish before
/// it returns.
pub async fn serve(
    listener: tokio::net::TcpListener,
    app: Router,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, app).with_graceful_shutdown(shutdown).await
}

/// Binds `addr` (port 0 picks a free one).
pub async fn bind(addr: SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    tokio::net::TcpListener::bind(addr).await
}

/// Takes over SIGTERM and SIGINT **now** (call it before announcing that
/// the service is up, so that a signal sent right after cannot kill the
/// process ungracefully); the future resolves at the first of them. Needs
/// a tokio runtime.
///
/// # Errors
/// When the signal handlers cannot be installed.
pub fn shutdown_signal() -> std::io::Result<impl std::future::Future<Output = ()> + Send + 'static> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = signal(SignalKind::terminate())?;
        let mut int = signal(SignalKind::interrupt())?;
        Ok(async move {
            tokio::select! { _ = term.recv() => {}, _ = int.recv() => {} }
        })
    }
    #[cfg(not(unix))]
    {
        Ok(async {
            let _ = tokio::signal::ctrl_c().await;
        })
    }
}

/// Equal in time whatever the contents (the length may show).
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(diff) == 0
}

async fn auth<S: Store + 'static>(
    State(state): State<Arc<AppState<S>>>,
    req: Request,
    next: Next,
) -> Response {
    if let Some(token) = &state.settings.token {
        let given = req
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map_or("", |(_, t)| t.trim());
        if !constant_time_eq(given.as_bytes(), token.as_bytes()) {
            return ApiError {
                status: StatusCode::UNAUTHORIZED,
                code: "unauthorized",
                message: "missing or wrong bearer token (Authorization: Bearer TOKEN)".into(),
            }
            .into_response();
        }
    }
    next.run(req).await
}

/// Times out slow requests and records every request in the metrics.
async fn observe<S: Store + 'static>(
    State(state): State<Arc<AppState<S>>>,
    req: Request,
    next: Next,
) -> Response {
    let route = req.extensions().get::<MatchedPath>().map_or("unmatched", |p| p.as_str()).to_owned();
    let start = Instant::now();
    let response = match tokio::time::timeout(state.settings.timeout, next.run(req)).await {
        Ok(r) => r,
        Err(_) => ApiError {
            status: StatusCode::SERVICE_UNAVAILABLE,
            code: "timeout",
            message: format!(
                "the request took over {:?}; retry, or send smaller batches",
                state.settings.timeout
            ),
        }
        .into_response(),
    };
    state.metrics.record(&route, response.status().as_u16(), start.elapsed().as_secs_f64());
    response
}

/// `Json` whose rejections are JSON errors that say what is wrong.
struct ApiJson<T>(T);

impl<T: DeserializeOwned, St: Send + Sync> FromRequest<St> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &St) -> Result<Self, ApiError> {
        match Json::<T>::from_request(req, state).await {
            Ok(Json(v)) => Ok(ApiJson(v)),
            Err(e) => Err(match e {
                JsonRejection::MissingJsonContentType(_) => ApiError {
                    status: StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    code: "unsupported_media_type",
                    message: "send JSON with Content-Type: application/json".into(),
                },
                JsonRejection::BytesRejection(b) if b.status() == StatusCode::PAYLOAD_TOO_LARGE => ApiError {
                    status: StatusCode::PAYLOAD_TOO_LARGE,
                    code: "payload_too_large",
                    message: "the request body is over the server's limit (--max-body); send smaller batches"
                        .into(),
                },
                e => ApiError { status: StatusCode::BAD_REQUEST, code: "bad_json", message: e.body_text() },
            }),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FingerprintReq {
    text: String,
    #[serde(default)]
    explain: bool,
}

async fn fingerprint<S: Store + 'static>(
    State(state): State<Arc<AppState<S>>>,
    ApiJson(req): ApiJson<FingerprintReq>,
) -> Result<Json<Value>, ApiError> {
    let (fp, features) = state.fp.fingerprint_counted(&req.text);
    let mut v = json!({"fingerprint": fp, "features": features, "bits": fp.bits().get()});
    if req.explain {
        let e = state.fp.explain(&req.text);
        let top: Vec<Value> = e
            .features
            .iter()
            .take(20)
            .map(|f| json!({"feature": f.feature, "weight": f.weight, "hash": f.hash}))
            .collect();
        v["explain"] = json!({"features": top, "distinct_features": e.features.len()});
    }
    Ok(Json(v))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DocumentReq {
    id: String,
    text: Option<String>,
    fingerprint: Option<String>,
    mode: Option<Mode>,
    k: Option<u32>,
    metadata: Option<Value>,
    features: Option<u32>,
}

impl<S: Store> AppState<S> {
    /// The request's radius: its own `k`, else the server's `-k`, else
    /// `None` (the engine's rule).
    fn k(&self, k: Option<u32>) -> Result<Option<u32>, ApiError> {
        match k.or(self.settings.default_k) {
            Some(k) if k > self.settings.max_k => Err(ApiError::bad_request(format!(
                "k = {k} is over this server's limit of {}",
                self.settings.max_k
            ))),
            k => Ok(k),
        }
    }

    /// The radius a request was answered by, as `neardup` prints it.
    fn radius_text(&self, k: Option<u32>) -> String {
        k.map_or_else(|| self.engine.radius().to_string(), |k| format!("k = {k}"))
    }

    /// The fingerprint of a request, from `text` or `fingerprint` (exactly
    /// one), its content hash, and its feature count (counted from a text;
    /// `features` may come with a fingerprint).
    fn fingerprint_of(
        &self,
        text: Option<&str>,
        hex: Option<&str>,
        features: Option<u32>,
        what: &str,
    ) -> Result<(Fingerprint, Option<u64>, Option<u32>), ApiError> {
        match (text, hex) {
            (Some(_), None) if features.is_some() => Err(ApiError::bad_request(format!(
                "{what}: \"features\" goes with \"fingerprint\"; a text's features are counted"
            ))),
            (Some(t), None) => {
                let (fp, n) = self.fp.fingerprint_counted(t);
                if n == 0 {
                    return Err(ApiError::bad_request(format!(
                        "{what}: the text has no features (empty, or only punctuation); nothing to fingerprint"
                    )));
                }
                let n = u32::try_from(n).unwrap_or(u32::MAX - 1);
                Ok((fp, Some(xxhash_rust::xxh3::xxh3_64(t.as_bytes())), Some(n)))
            }
            (None, Some(h)) => {
                let fp: Fingerprint = h.parse().map_err(|e| ApiError::bad_request(format!("{what}: {e}")))?;
                if fp.bits() != self.fp.bits() {
                    return Err(ApiError::bad_request(format!(
                        "{what}: a {}-bit fingerprint, but this store holds {}-bit ones",
                        fp.bits(),
                        self.fp.bits()
                    )));
                }
                if features == Some(u32::MAX) {
                    return Err(ApiError::bad_request(format!("{what}: features must be below 2^32 - 1")));
                }
                Ok((fp, None, features))
            }
            _ => Err(ApiError::bad_request(format!(
                "{what}: give exactly one of \"text\" and \"fingerprint\""
            ))),
        }
    }

    fn new_doc(&self, d: DocumentReq, what: &str) -> Result<NewDoc, ApiError> {
        let (fingerprint, content_hash, features) =
            self.fingerprint_of(d.text.as_deref(), d.fingerprint.as_deref(), d.features, what)?;
        Ok(NewDoc { id: d.id, fingerprint, content_hash, metadata: d.metadata, features })
    }
}

/// Runs a store write off the async workers (a commit waits for the disk).
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> neardup_store::Result<T> + Send + 'static,
) -> Result<T, ApiError> {
    match tokio::task::spawn_blocking(f).await {
        Ok(r) => Ok(r?),
        Err(e) => Err(ApiError {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            code: "internal",
            message: format!("the write failed: {e}"),
        }),
    }
}

/// An id as shown in a message: quoted, and cut after 100 characters.
fn shown(id: &str) -> String {
    if id.chars().count() <= 100 {
        format!("{id:?}")
    } else {
        format!("{:?}…", id.chars().take(100).collect::<String>())
    }
}

/// One document's answer, serialized directly (no `Value` tree: batches of
/// a thousand are answered often).
#[derive(Serialize)]
struct OutcomeOut<'a> {
    id: &'a str,
    fingerprint: Fingerprint,
    inserted: bool,
    matches: &'a [neardup_store::Found],
}

#[derive(Serialize)]
struct BatchOut<'a> {
    results: Vec<OutcomeOut<'a>>,
}

async fn submit<S: Store + 'static>(
    State(state): State<Arc<AppState<S>>>,
    ApiJson(req): ApiJson<DocumentReq>,
) -> Result<Response, ApiError> {
    let k = state.k(req.k)?;
    let mode = req.mode.unwrap_or(Mode::InsertIfUnique);
    let doc = state.new_doc(req, "document")?;
    let (id, fp) = (doc.id.clone(), doc.fingerprint);
    let engine = state.engine.clone();
    let outcome = blocking(move || engine.submit(doc, mode, k)).await?;
    Ok(Json(OutcomeOut { id: &id, fingerprint: fp, inserted: outcome.inserted, matches: &outcome.matches })
        .into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BatchReq {
    documents: Vec<DocumentReq>,
    mode: Option<Mode>,
    k: Option<u32>,
}

async fn submit_batch<S: Store + 'static>(
    State(state): State<Arc<AppState<S>>>,
    ApiJson(req): ApiJson<BatchReq>,
) -> Result<Response, ApiError> {
    let k = state.k(req.k)?;
    let mode = req.mode.unwrap_or(Mode::InsertIfUnique);
    if req.documents.len() > state.settings.max_batch {
        return Err(ApiError {
            status: StatusCode::PAYLOAD_TOO_LARGE,
            code: "batch_too_large",
            message: format!(
                "{} documents; this server takes at most {} per batch (--max-batch)",
                req.documents.len(),
                state.settings.max_batch
            ),
        });
    }
    let mut docs = Vec::with_capacity(req.documents.len());
    for (i, d) in req.documents.into_iter().enumerate() {
        if d.mode.is_some() || d.k.is_some() {
            return Err(ApiError::bad_request(format!(
                "documents[{i}]: mode and k belong to the batch, not to its documents"
            )));
        }
        docs.push(state.new_doc(d, &format!("documents[{i}]"))?);
    }
    let keys: Vec<(String, Fingerprint)> = docs.iter().map(|d| (d.id.clone(), d.fingerprint)).collect();
    let engine = state.engine.clone();
    let outcomes = blocking(move || engine.submit_batch(docs, mode, k)).await?;
    let results = keys
        .iter()
        .zip(&outcomes)
        .map(|((id, fp), o)| OutcomeOut { id, fingerprint: *fp, inserted: o.inserted, matches: &o.matches })
        .collect();
    Ok(Json(BatchOut { results }).into_response())
}

async fn get_document<S: Store + 'static>(
    State(state): State<Arc<AppState<S>>>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    match state.engine.get(&id)? {
        Some(d) => Ok(Json(json!({
            "id": d.id, "fingerprint": d.fingerprint, "inserted_at_ms": d.inserted_at_ms,
            "content_hash": d.content_hash.map(|h| format!("{h:016x}")), "metadata": d.metadata,
            "features": d.features,
        }))),
        None => Err(ApiError::not_found(format!("no document {}", shown(&id)))),
    }
}

async fn delete_document<S: Store + 'static>(
    State(state): State<Arc<AppState<S>>>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let engine = state.engine.clone();
    let key = id.clone();
    let existed = blocking(move || engine.delete(&key)).await?;
    if existed {
        Ok(Json(json!({"id": id, "deleted": true})))
    } else {
        Err(ApiError::not_found(format!("no document {}", shown(&id))))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchReq {
    text: Option<String>,
    fingerprint: Option<String>,
    k: Option<u32>,
    limit: Option<usize>,
    features: Option<u32>,
}

async fn search<S: Store + 'static>(
    State(state): State<Arc<AppState<S>>>,
    ApiJson(req): ApiJson<SearchReq>,
) -> Result<Json<Value>, ApiError> {
    let k = state.k(req.k)?;
    let (fp, _, features) =
        state.fingerprint_of(req.text.as_deref(), req.fingerprint.as_deref(), req.features, "search")?;
    let limit = req.limit.unwrap_or(state.settings.default_limit);
    let matches = state.engine.search(fp, k, features, limit)?;
    Ok(Json(json!({"fingerprint": fp, "k": k, "radius": state.radius_text(k), "matches": matches})))
}

async fn stats<S: Store + 'static>(State(state): State<Arc<AppState<S>>>) -> Json<Value> {
    let s = state.engine.stats();
    Json(json!({
        "documents": s.documents, "bits": s.bits, "table_k": s.table_k, "index_bytes": s.index_bytes,
        "disk_bytes": s.disk_bytes, "pipeline": s.pipeline, "default_k": state.settings.default_k,
        "radius": state.radius_text(state.settings.default_k),
        "commits": s.commits, "segments": s.segments,
        "uptime_s": state.started.elapsed().as_secs_f64(), "version": env!("CARGO_PKG_VERSION"),
    }))
}

async fn metrics_text<S: Store + 'static>(State(state): State<Arc<AppState<S>>>) -> impl IntoResponse {
    let s = state.engine.stats();
    let body = state.metrics.render(&[
        ("neardup_documents", "Stored documents.", s.documents as f64),
        ("neardup_index_bytes", "Bytes of the in-memory index.", s.index_bytes as f64),
        ("neardup_store_bytes", "Bytes of the database on disk.", s.disk_bytes as f64),
        ("neardup_commits", "Durable commits since start (a group commit counts once).", s.commits as f64),
        (
            "neardup_index_segments",
            "Segments of the in-memory index (merged in the background).",
            s.segments as f64,
        ),
    ]);
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], body)
}

#[cfg(test)]
mod tests {
    use super::constant_time_eq;

    #[test]
    fn tokens_compare_exactly() {
        assert!(constant_time_eq(b"secret", b"secret"));
        assert!(!constant_time_eq(b"secret", b"secreT"));
        assert!(!constant_time_eq(b"secret", b"secret!"));
        assert!(!constant_time_eq(b"", b"x"));
    }
}
