//! The handlers: parse the request, call the engine, answer.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use neardup::detector::Detector;
use neardup::minhash::{Method, Signature};
use neardup::{Fingerprint, Sketch};
use neardup_store::{Mode, Near, NewDoc, Store};
use serde_json::{json, Value};

use crate::error::ApiError;
use crate::types::{
    ApiJson, BatchOut, BatchReq, DocumentReq, FingerprintReq, OutcomeOut, SearchReq, SignatureIn,
};
use crate::AppState;

pub(crate) async fn fingerprint<S: Store + 'static>(
    State(state): State<Arc<AppState<S>>>,
    ApiJson(req): ApiJson<FingerprintReq>,
) -> Result<Json<Value>, ApiError> {
    // The empty-document rule of every front end: no features, no sketch.
    let (sketch, features) = match state.detector.sign(&req.text, false) {
        Ok((Some(sketch), n)) => (sketch, n),
        _ => {
            return Err(ApiError::bad_request(
                "the text has no features (empty, or only punctuation); nothing to sign",
            ))
        }
    };
    let mut v = match &sketch {
        Sketch::Fingerprint(fp) => json!({"fingerprint": fp, "features": features, "bits": fp.bits().get()}),
        Sketch::Signature(sig) => {
            json!({"signature": sig.to_hex(), "features": features, "permutations": sig.len()})
        }
    };
    if req.explain {
        v["explain"] = match &state.detector {
            Detector::SimHash(f) => {
                let e = f.explain(&req.text);
                let top: Vec<Value> = e
                    .features
                    .iter()
                    .take(20)
                    .map(|f| json!({"feature": f.feature, "weight": f.weight, "hash": f.hash}))
                    .collect();
                json!({"features": top, "distinct_features": e.features.len()})
            }
            Detector::MinHash(m) => {
                let mut features = m.features(&req.text);
                features.sort_unstable();
                features.dedup();
                let n = features.len();
                features.truncate(20);
                json!({"features": features, "distinct_features": n})
            }
        };
    }
    Ok(Json(v))
}

impl<S: Store> AppState<S> {
    /// What counts as near for a request: its own `k` or `threshold`, else
    /// the server's `-k` or `--threshold`, else the engine's rule: the
    /// server's own limits (one of the two, `--max-k`) checked here, the
    /// rest (a k for MinHash, a threshold for SimHash or outside (0, 1])
    /// by the engine's check.
    pub(crate) fn near(&self, k: Option<u32>, threshold: Option<f64>) -> Result<Near, ApiError> {
        let asked = Near::of(k, threshold).map_err(|e| ApiError::bad_request(e.to_string()))?;
        match asked {
            Near::Within(k) if k > self.settings.max_k => Err(ApiError::bad_request(format!(
                "k = {k} is over this server's limit of {}",
                self.settings.max_k
            ))),
            Near::Rule => Ok(self.settings.default_near()),
            near => self.checked(near),
        }
    }

    /// A request's rule, checked by the engine against the store's method.
    fn checked(&self, near: Near) -> Result<Near, ApiError> {
        self.engine.check_near(near)?;
        Ok(near)
    }

    /// The sketch of a request, from `text`, `fingerprint` (SimHash) or
    /// `signature` (MinHash) — exactly one — its content hash, and its
    /// feature count (counted from a text; `features` may come with a
    /// fingerprint).
    pub(crate) fn sketch_of(
        &self,
        text: Option<&str>,
        fingerprint: Option<&str>,
        signature: Option<SignatureIn>,
        features: Option<u32>,
        what: &str,
    ) -> Result<(Sketch, Option<u64>, Option<u32>), ApiError> {
        let method = self.detector.method();
        if features == Some(u32::MAX) {
            return Err(ApiError::bad_request(format!("{what}: features must be below 2^32 - 1")));
        }
        match (text, fingerprint, signature) {
            (Some(_), None, None) if features.is_some() => Err(ApiError::bad_request(format!(
                "{what}: \"features\" goes with \"fingerprint\"; a text's features are counted"
            ))),
            (Some(t), None, None) => {
                let Ok((Some(sketch), n)) = self.detector.sign(t, false) else {
                    return Err(ApiError::bad_request(format!(
                        "{what}: the text has no features (empty, or only punctuation); nothing to sign"
                    )));
                };
                let n = u32::try_from(n).unwrap_or(u32::MAX - 1);
                Ok((sketch, Some(xxhash_rust::xxh3::xxh3_64(t.as_bytes())), Some(n)))
            }
            (None, Some(_), None) if method == Method::Minhash => Err(ApiError::bad_request(format!(
                "{what}: this data directory holds MinHash signatures: send \"text\" or \"signature\", not \"fingerprint\""
            ))),
            (None, None, Some(_)) if method == Method::Simhash => Err(ApiError::bad_request(format!(
                "{what}: this data directory holds SimHash fingerprints: send \"text\" or \"fingerprint\", not \"signature\""
            ))),
            (None, Some(h), None) => {
                // Exactly the digits (no 0x, no spaces): what /openapi.json says.
                if !h.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return Err(ApiError::bad_request(format!(
                        "{what}: a fingerprint is {} hex digits, nothing else",
                        self.detector.config().bits.get() / 4
                    )));
                }
                let fp: Fingerprint = h.parse().map_err(|e| ApiError::bad_request(format!("{what}: {e}")))?;
                Ok((self.checked_sketch(fp.into(), what)?, None, features))
            }
            (None, None, Some(sig)) => {
                let sig = match sig {
                    SignatureIn::Hex(h) => {
                        Signature::from_hex(&h).map_err(|e| ApiError::bad_request(format!("{what}: {e}")))?
                    }
                    SignatureIn::Values(v) => Signature::from_values(v),
                };
                Ok((self.checked_sketch(sig.into(), what)?, None, features))
            }
            _ => Err(ApiError::bad_request(format!(
                "{what}: give exactly one of \"text\" and \"{}\"",
                if method == Method::Minhash { "signature" } else { "fingerprint" }
            ))),
        }
    }

    /// A sent sketch, checked by the engine against the store's method and
    /// width, its error naming the record (`what`).
    fn checked_sketch(&self, sketch: Sketch, what: &str) -> Result<Sketch, ApiError> {
        match self.engine.check_sketch(&sketch) {
            Ok(()) => Ok(sketch),
            Err(e) => Err(ApiError::bad_request(format!("{what}: {e}"))),
        }
    }

    pub(crate) fn new_doc(&self, d: DocumentReq, what: &str) -> Result<NewDoc, ApiError> {
        let (sketch, content_hash, features) =
            self.sketch_of(d.text.as_deref(), d.fingerprint.as_deref(), d.signature, d.features, what)?;
        Ok(NewDoc { id: d.id, sketch, content_hash, metadata: d.metadata, features })
    }
}

/// Runs a store write off the async workers (a commit waits for the disk).
pub(crate) async fn blocking<T: Send + 'static>(
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
pub(crate) fn shown(id: &str) -> String {
    if id.chars().count() <= 100 {
        format!("{id:?}")
    } else {
        format!("{:?}…", id.chars().take(100).collect::<String>())
    }
}

pub(crate) async fn submit<S: Store + 'static>(
    State(state): State<Arc<AppState<S>>>,
    ApiJson(req): ApiJson<DocumentReq>,
) -> Result<Response, ApiError> {
    let near = state.near(req.k, req.threshold)?;
    let mode = req.mode.unwrap_or(Mode::InsertIfUnique);
    let doc = state.new_doc(req, "document")?;
    let (id, fp) = (doc.id.clone(), doc.sketch.fingerprint());
    let engine = state.engine.clone();
    let outcome = blocking(move || engine.submit(doc, mode, near)).await?;
    Ok(Json(OutcomeOut { id: &id, fingerprint: fp, inserted: outcome.inserted, matches: &outcome.matches })
        .into_response())
}

pub(crate) async fn submit_batch<S: Store + 'static>(
    State(state): State<Arc<AppState<S>>>,
    ApiJson(req): ApiJson<BatchReq>,
) -> Result<Response, ApiError> {
    let near = state.near(req.k, req.threshold)?;
    let mode = req.mode.unwrap_or(Mode::InsertIfUnique);
    if req.documents.len() > state.settings.max_batch {
        return Err(ApiError::batch_too_large(req.documents.len(), state.settings.max_batch));
    }
    let mut docs = Vec::with_capacity(req.documents.len());
    for (i, d) in req.documents.into_iter().enumerate() {
        if d.mode.is_some() || d.k.is_some() || d.threshold.is_some() {
            return Err(ApiError::bad_request(format!(
                "documents[{i}]: mode, k and threshold belong to the batch, not to its documents"
            )));
        }
        docs.push(state.new_doc(d, &format!("documents[{i}]"))?);
    }
    let keys: Vec<(String, Option<Fingerprint>)> =
        docs.iter().map(|d| (d.id.clone(), d.sketch.fingerprint())).collect();
    let engine = state.engine.clone();
    let outcomes = blocking(move || engine.submit_batch(docs, mode, near)).await?;
    let results = keys
        .iter()
        .zip(&outcomes)
        .map(|((id, fp), o)| OutcomeOut { id, fingerprint: *fp, inserted: o.inserted, matches: &o.matches })
        .collect();
    Ok(Json(BatchOut { results }).into_response())
}

pub(crate) async fn get_document<S: Store + 'static>(
    State(state): State<Arc<AppState<S>>>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    match state.engine.get(&id)? {
        Some(d) => {
            let mut v = json!({
                "id": d.id, "inserted_at_ms": d.inserted_at_ms,
                "content_hash": d.content_hash.map(|h| format!("{h:016x}")), "metadata": d.metadata,
                "features": d.features,
            });
            v[sketch_key(&d.sketch)] = json!(d.sketch);
            Ok(Json(v))
        }
        None => Err(ApiError::not_found(format!("no document {}", shown(&id)))),
    }
}

pub(crate) async fn delete_document<S: Store + 'static>(
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

pub(crate) async fn search<S: Store + 'static>(
    State(state): State<Arc<AppState<S>>>,
    ApiJson(req): ApiJson<SearchReq>,
) -> Result<Json<Value>, ApiError> {
    let near = state.near(req.k, req.threshold)?;
    let (sketch, _, features) = state.sketch_of(
        req.text.as_deref(),
        req.fingerprint.as_deref(),
        req.signature,
        req.features,
        "search",
    )?;
    let limit = req.limit.unwrap_or(state.settings.default_limit);
    let key = sketch_key(&sketch);
    let matches = state.engine.search(sketch.clone(), near, features, limit)?;
    let mut v = json!({"radius": state.engine.rule_of(near), "matches": matches});
    match state.engine.method() {
        Method::Simhash => {
            v["k"] = json!(near.k());
            v[key] = json!(sketch);
        }
        Method::Minhash => v["threshold"] = json!(state.engine.threshold(near)),
    }
    Ok(Json(v))
}

/// The JSON key a sketch goes under.
fn sketch_key(s: &Sketch) -> &'static str {
    match s {
        Sketch::Fingerprint(_) => "fingerprint",
        Sketch::Signature(_) => "signature",
    }
}

pub(crate) async fn stats<S: Store + 'static>(State(state): State<Arc<AppState<S>>>) -> Json<Value> {
    let s = state.engine.stats();
    let near = state.near(None, None).unwrap_or_default();
    Json(json!({
        "documents": s.documents, "method": s.method, "bits": s.bits, "table_k": s.table_k,
        "permutations": s.permutations, "index_bytes": s.index_bytes,
        "disk_bytes": s.disk_bytes, "pipeline": s.pipeline, "default_k": state.settings.default_k,
        // The threshold a MinHash search without one runs at: `--threshold`,
        // else the pipeline's (it showed null then, while searches ran at 0.5).
        "default_threshold": state.engine.threshold(near),
        "radius": state.engine.rule_of(near),
        "commits": s.commits, "segments": s.segments,
        "passages": state.passages.as_ref().map(|p| json!({
            "texts": p.keeps_texts(), "documents": p.documents().ok().flatten(),
        })),
        "max_upload_bytes": state.settings.max_upload_bytes,
        // Files named otherwise are plain text, held to the text limit too
        // (`neardup_io::documents::file_limit`): the page checks both.
        "max_text_bytes": state.settings.max_body_bytes,
        "document_extensions": neardup_io::documents::DocumentKind::EXTENSIONS,
        "token": state.settings.token.is_some(),
        "uptime_s": state.started.elapsed().as_secs_f64(), "version": env!("CARGO_PKG_VERSION"),
    }))
}

/// `/healthz`: 200 while reads and writes work; 503 (`degraded`, with
/// why) while writes fail at the disk — reads still work then, and the
/// check itself lets the store recover once the disk takes writes.
pub(crate) async fn healthz<S: Store + 'static>(State(state): State<Arc<AppState<S>>>) -> Response {
    let engine = state.engine.clone();
    let health = tokio::task::spawn_blocking(move || engine.write_health()).await.ok().flatten();
    match health {
        None => Json(json!({"status": "ok", "reads": "ok", "writes": "ok"})).into_response(),
        Some((kind, message)) => (
            StatusCode::SERVICE_UNAVAILABLE,
            [(header::RETRY_AFTER, "5")],
            Json(json!({"status": "degraded", "reads": "ok", "writes": kind.name(), "message": message})),
        )
            .into_response(),
    }
}

pub(crate) async fn metrics_text<S: Store + 'static>(
    State(state): State<Arc<AppState<S>>>,
) -> impl IntoResponse {
    let s = state.engine.stats();
    let (write_failures, rebuilds) = state.engine.fault_counts();
    let writes_ok = state.engine.store().write_failing().is_none();
    let disk = state.engine.disk_stats();
    let d = |f: &dyn Fn(&neardup_store::DiskStats) -> u64| disk.as_ref().map_or(0.0, |d| f(d) as f64);
    let body = state.metrics.render(&[
        ("neardup_documents", "Stored documents.", s.documents as f64),
        ("neardup_index_bytes", "Bytes of the index held in memory.", s.index_bytes as f64),
        (
            "neardup_index_disk_bytes",
            "Bytes of the on-disk index's segment files (mapped; the page cache holds them).",
            d(&|d| d.segments.iter().map(|s| s.1).sum()),
        ),
        (
            "neardup_index_in_memory_documents",
            "Documents in the on-disk index's memory part.",
            d(&|d| d.in_memory),
        ),
        (
            "neardup_index_tombstones",
            "Deleted or replaced rows of segments not yet merged away.",
            d(&|d| d.tombstones),
        ),
        ("neardup_index_merges_pending", "Merges of segments due now.", d(&|d| d.pending_merges)),
        ("neardup_index_flushes_total", "Segments written from the memory part.", d(&|d| d.counters.flushes)),
        ("neardup_index_merges_total", "Merges of segments made.", d(&|d| d.counters.merges)),
        (
            "neardup_index_merged_rows_total",
            "Rows written by merges (over neardup_index_flushed_rows_total: write amplification, less one).",
            d(&|d| d.counters.merged_rows),
        ),
        ("neardup_index_flushed_rows_total", "Rows written by flushes.", d(&|d| d.counters.flushed_rows)),
        ("neardup_store_bytes", "Bytes of the database on disk.", s.disk_bytes as f64),
        ("neardup_commits", "Durable commits since start (a group commit counts once).", s.commits as f64),
        ("neardup_index_segments", "Segments of the index (merged in the background).", s.segments as f64),
        (
            "neardup_write_failures_total",
            "Writes that failed at the disk (full, or another I/O error); none of them stored anything.",
            write_failures as f64,
        ),
        (
            "neardup_index_rebuilds_total",
            "Index rebuilds from the store after a failed write had reached the disk after all.",
            rebuilds as f64,
        ),
        (
            "neardup_writes_healthy",
            "1 while writes work, 0 while they fail at the disk.",
            f64::from(u8::from(writes_ok)),
        ),
    ]);
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], body)
}
