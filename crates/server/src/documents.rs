//! Papers as they come: `POST /v1/extract` (a file's bytes → its text:
//! .docx, .pdf, .html, .md or plain text, by `neardup_io::documents`) and
//! `POST /v1/report` (a text's copied passages against the data
//! directory's passage index, by `neardup::report`: the spans `neardup
//! report --against DIR` gives).

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use neardup::report::{Against, Exclusions};
use neardup::Radius;
use neardup_io::documents::{file_limit, kind_of_file, text_of_file, Limits, Unreadable};
use neardup_store::Store;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::error::ApiError;
use crate::types::{ApiJson, ReportReq};
use crate::AppState;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ExtractQuery {
    /// The file's name: its extension says what it is when its first
    /// bytes do not.
    #[serde(default)]
    name: Option<String>,
}

/// A reader that cannot read the file: 422 with what to do.
fn unreadable(name: &str, e: &Unreadable) -> ApiError {
    let code = match e {
        Unreadable::NoTextLayer { .. } => "no_text_layer",
        Unreadable::TooLarge { .. } => "document_too_large",
        Unreadable::TimedOut => "parse_timeout",
        Unreadable::NotA { .. } => "not_a_document",
        Unreadable::Bomb { .. } => "decompression_bomb",
        Unreadable::ReaderDied { .. } => "reader_failed",
        _ => "unreadable_document",
    };
    ApiError { status: StatusCode::UNPROCESSABLE_ENTITY, code, message: format!("{name}: {e}") }
}

pub(crate) async fn extract<S: Store + 'static>(
    State(state): State<Arc<AppState<S>>>,
    Query(q): Query<ExtractQuery>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let name = q.name.unwrap_or_else(|| "upload".to_owned());
    let label = name.clone();
    // A body sent without its length is stopped at the limit as it comes.
    let body = body.map_err(|e| match e.status() {
        StatusCode::PAYLOAD_TOO_LARGE => ApiError::upload_too_large(None, state.settings.max_upload_bytes),
        _ => ApiError::bad_request(format!("{name}: the upload broke off ({e}); send it again")),
    })?;
    if body.is_empty() {
        return Err(ApiError::bad_request(format!(
            "{name}: the file is empty; choose a file with text in it"
        )));
    }
    // Plain text is its own text: over the text limit, it is refused
    // before it is read (the page refuses it before it is sent).
    let max_text = state.settings.max_body_bytes as u64;
    let kind = kind_of_file(&name, &body);
    if body.len() as u64 > file_limit(kind, state.settings.max_upload_bytes as u64, max_text) {
        return Err(ApiError::text_too_large(&name, body.len() as u64, max_text));
    }
    // A bounded number of files are read at once, each within the parse
    // time, by a child process killed at the deadline (`neardup serve`
    // installs `neardup_io::documents::isolation`), so that the slot is
    // free again with the answer; the text is counted and written out on
    // the upload thread too (`crate::uploads`).
    let time = state.settings.parse_timeout;
    let limits = Limits { max_text_bytes: max_text, deadline: None }.within(time);
    let answer = state
        .uploads
        .run(time + std::time::Duration::from_secs(1), move || answer_of(&name, &body, &limits))
        .await?;
    let body = answer.unwrap_or_else(|| Err(unreadable(&label, &Unreadable::TimedOut)))?;
    Ok(([(header::CONTENT_TYPE, "application/json")], body).into_response())
}

/// `/v1/extract`'s answer for one file, as JSON bytes.
fn answer_of(name: &str, body: &[u8], limits: &Limits) -> Result<Vec<u8>, ApiError> {
    let (kind, text) = text_of_file(name, body, limits).map_err(|e| unreadable(name, &e))?;
    if text.trim().is_empty() {
        return Err(ApiError {
            status: StatusCode::UNPROCESSABLE_ENTITY,
            code: "no_text",
            message: format!("{name}: no text in it (empty, or only white space)"),
        });
    }
    // The reader's own name for the format (as --input-format spells it).
    let kind = kind.map_or("text", |k| neardup_io::InputFormat::of_document(k).name());
    let answer = json!({"name": name, "kind": kind, "chars": text.chars().count(), "text": text});
    serde_json::to_vec(&answer).map_err(|e| ApiError::internal(format!("{name}: {e}")))
}

pub(crate) async fn report<S: Store + 'static>(
    State(state): State<Arc<AppState<S>>>,
    ApiJson(req): ApiJson<ReportReq>,
) -> Result<Json<Value>, ApiError> {
    let passages = crate::library::passages_of(&state)?;
    if let Some(k) = req.k.filter(|&k| k > state.settings.max_k) {
        return Err(ApiError::bad_request(format!(
            "k = {k} is over this server's limit of {}",
            state.settings.max_k
        )));
    }
    if req.text.trim().is_empty() {
        return Err(ApiError::bad_request("the text is empty; paste or upload the document to check"));
    }
    let ask = Against {
        radius: req.k.map(Radius::fixed),
        exclude: req.exclude.unwrap_or_default(),
        min_windows: req.min_windows.unwrap_or(1).max(1),
        max_sources: req.max_sources.unwrap_or(20),
        exclusions: Exclusions {
            quotes: req.quotes.unwrap_or(true),
            references: req.references.unwrap_or(true),
            min_match_chars: req.min_match_chars.unwrap_or(0),
            own: req.own.unwrap_or_default(),
        },
        ..Against::default()
    };
    let name = req.name.unwrap_or_else(|| "A".to_owned());
    let html = req.html.unwrap_or(false);
    let done = tokio::task::spawn_blocking(move || {
        passages.report(&name, req.text, &ask).map(|r| {
            let mut v = r.to_json();
            if html {
                v["html"] = json!(r.html_body());
            }
            v
        })
    })
    .await
    .map_err(|_| ApiError::internal("the report failed"))?;
    Ok(Json(done?))
}
