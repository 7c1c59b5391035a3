//! The handlers: parse the request, call the engine, answer.

#[allow(unused_imports)]
use super::*;

pub(crate) async fn fingerprint<S: Store + 'static>(
    State(state): State<Arc<AppState<S>>>,
    ApiJson(req): ApiJson<FingerprintReq>,
) -> Result<Json<Value>, ApiError> {
    let (fp, features) = state.fingerprinter.fingerprint_counted(&req.text);
    let mut v = json!({"fingerprint": fp, "features": features, "bits": fp.bits().get()});
    if req.explain {
        let e = state.fingerprinter.explain(&req.text);
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

impl<S: Store> AppState<S> {
    /// The request's radius: its own `k`, else the server's `-k`, else
    /// `None` (the engine's rule).
    pub(crate) fn k(&self, k: Option<u32>) -> Result<Option<u32>, ApiError> {
        match k.or(self.settings.default_k) {
            Some(k) if k > self.settings.max_k => Err(ApiError::bad_request(format!(
                "k = {k} is over this server's limit of {}",
                self.settings.max_k
            ))),
            k => Ok(k),
        }
    }

    /// The radius a request was answered by, as `neardup` prints it.
    pub(crate) fn radius_text(&self, k: Option<u32>) -> String {
        k.map_or_else(|| self.engine.radius().to_string(), |k| format!("k = {k}"))
    }

    /// The fingerprint of a request, from `text` or `fingerprint` (exactly
    /// one), its content hash, and its feature count (counted from a text;
    /// `features` may come with a fingerprint).
    pub(crate) fn fingerprint_of(
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
                let (fp, n) = self.fingerprinter.fingerprint_counted(t);
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
                if fp.bits() != self.fingerprinter.bits() {
                    return Err(ApiError::bad_request(format!(
                        "{what}: a {}-bit fingerprint, but this store holds {}-bit ones",
                        fp.bits(),
                        self.fingerprinter.bits()
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

    pub(crate) fn new_doc(&self, d: DocumentReq, what: &str) -> Result<NewDoc, ApiError> {
        let (fingerprint, content_hash, features) =
            self.fingerprint_of(d.text.as_deref(), d.fingerprint.as_deref(), d.features, what)?;
        Ok(NewDoc { id: d.id, fingerprint, content_hash, metadata: d.metadata, features })
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
    let k = state.k(req.k)?;
    let mode = req.mode.unwrap_or(Mode::InsertIfUnique);
    let doc = state.new_doc(req, "document")?;
    let (id, fp) = (doc.id.clone(), doc.fingerprint);
    let engine = state.engine.clone();
    let outcome = blocking(move || engine.submit(doc, mode, k)).await?;
    Ok(Json(OutcomeOut { id: &id, fingerprint: fp, inserted: outcome.inserted, matches: &outcome.matches })
        .into_response())
}

pub(crate) async fn submit_batch<S: Store + 'static>(
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

pub(crate) async fn get_document<S: Store + 'static>(
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
    let k = state.k(req.k)?;
    let (fp, _, features) =
        state.fingerprint_of(req.text.as_deref(), req.fingerprint.as_deref(), req.features, "search")?;
    let limit = req.limit.unwrap_or(state.settings.default_limit);
    let matches = state.engine.search(fp, k, features, limit)?;
    Ok(Json(json!({"fingerprint": fp, "k": k, "radius": state.radius_text(k), "matches": matches})))
}

pub(crate) async fn stats<S: Store + 'static>(State(state): State<Arc<AppState<S>>>) -> Json<Value> {
    let s = state.engine.stats();
    Json(json!({
        "documents": s.documents, "bits": s.bits, "table_k": s.table_k, "index_bytes": s.index_bytes,
        "disk_bytes": s.disk_bytes, "pipeline": s.pipeline, "default_k": state.settings.default_k,
        "radius": state.radius_text(state.settings.default_k),
        "commits": s.commits, "segments": s.segments,
        "uptime_s": state.started.elapsed().as_secs_f64(), "version": env!("CARGO_PKG_VERSION"),
    }))
}

pub(crate) async fn metrics_text<S: Store + 'static>(
    State(state): State<Arc<AppState<S>>>,
) -> impl IntoResponse {
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
