//! The data directory's passage library online: `POST /v1/passages`
//! (one document with its text), `POST /v1/passages:batch`, `GET` and
//! `DELETE /v1/passages/{id}`. What is added is in the next `POST
//! /v1/report` (the library is `neardup_store::passages::Passages`, open
//! to write while the server runs; `neardup index add DIR --passages`
//! does the same offline).

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use neardup_store::passages::Passages;
use neardup_store::Store;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::error::ApiError;
use crate::routes::{blocking, shown};
use crate::types::ApiJson;
use crate::AppState;

/// One document of the library: its id and text.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PassageDocReq {
    id: String,
    text: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PassageBatchReq {
    documents: Vec<PassageDocReq>,
}

/// The server's passages, or 409 with how to make a library.
pub(crate) fn passages_of<S: Store>(state: &AppState<S>) -> Result<Arc<Passages>, ApiError> {
    state.passages.clone().ok_or_else(|| ApiError {
        status: StatusCode::CONFLICT,
        code: "no_passages",
        message: "this data directory has no passage library; make one with \
                  `neardup index build --passages INPUTS -o DIR` and restart the server"
            .into(),
    })
}

/// The server's passages if they take changes: 409 for a window index of
/// neardup 0.x.
fn writable_of<S: Store>(state: &AppState<S>) -> Result<Arc<Passages>, ApiError> {
    let passages = passages_of(state)?;
    if passages.library().is_none() {
        return Err(ApiError {
            status: StatusCode::CONFLICT,
            code: "read_only_passages",
            message: "this data directory's passages are a window index of neardup 0.x, which takes no \
                      changes: rebuild them as a library with `neardup index build --passages INPUTS -o DIR`"
                .into(),
        });
    }
    Ok(passages)
}

/// Adds `docs` (refused whole, the first bad one named); the library's
/// size after.
async fn add_all<S: Store + 'static>(
    state: &AppState<S>,
    docs: Vec<(String, String)>,
) -> Result<u64, ApiError> {
    let passages = writable_of(state)?;
    blocking(move || {
        passages.add(&docs)?;
        Ok(passages.documents()?.unwrap_or(0))
    })
    .await
}

pub(crate) async fn add<S: Store + 'static>(
    State(state): State<Arc<AppState<S>>>,
    ApiJson(req): ApiJson<PassageDocReq>,
) -> Result<Response, ApiError> {
    let id = req.id.clone();
    let documents = add_all(&state, vec![(req.id, req.text)]).await?;
    Ok(Json(json!({"id": id, "documents": documents})).into_response())
}

pub(crate) async fn add_batch<S: Store + 'static>(
    State(state): State<Arc<AppState<S>>>,
    ApiJson(req): ApiJson<PassageBatchReq>,
) -> Result<Json<Value>, ApiError> {
    if req.documents.len() > state.settings.max_batch {
        return Err(ApiError::batch_too_large(req.documents.len(), state.settings.max_batch));
    }
    let n = req.documents.len();
    let docs = req.documents.into_iter().map(|d| (d.id, d.text)).collect();
    let documents = add_all(&state, docs).await?;
    Ok(Json(json!({"added": n, "documents": documents})))
}

pub(crate) async fn get<S: Store + 'static>(
    State(state): State<Arc<AppState<S>>>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let passages = passages_of(&state)?;
    let key = id.clone();
    match blocking(move || passages.text_of(&key)).await? {
        Some(text) => Ok(Json(json!({"id": id, "chars": text.chars().count(), "text": text}))),
        None => Err(ApiError::not_found(format!("the passage library holds no document {}", shown(&id)))),
    }
}

pub(crate) async fn delete<S: Store + 'static>(
    State(state): State<Arc<AppState<S>>>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let passages = writable_of(&state)?;
    let key = id.clone();
    match blocking(move || passages.remove(&[key])).await? {
        0 => Err(ApiError::not_found(format!("the passage library holds no document {}", shown(&id)))),
        _ => Ok(Json(json!({"id": id, "deleted": true}))),
    }
}
