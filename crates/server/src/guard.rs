//! Middleware (guards): the bearer-token check and request observation (timeout, metrics).

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use neardup_store::Store;

use crate::error::ApiError;
use crate::AppState;

/// Equal in time whatever the contents (the length may show).
pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(diff) == 0
}

pub(crate) async fn auth<S: Store + 'static>(
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
            .map(|(_, t)| t.trim());
        let ok = match given {
            Some(given) => constant_time_eq(given.as_bytes(), token.as_bytes()),
            // The page's login: a live session's cookie, sent by this
            // site's pages only (SameSite=Strict).
            None => crate::page::session_cookie(req.headers()).is_some_and(|id| state.sessions.valid(id)),
        };
        if !ok {
            return ApiError {
                status: StatusCode::UNAUTHORIZED,
                code: "unauthorized",
                message: "missing or wrong bearer token (Authorization: Bearer TOKEN), or log in on the page"
                    .into(),
            }
            .into_response();
        }
    }
    next.run(req).await
}

/// Times out slow requests and records every request in the metrics.
pub(crate) async fn observe<S: Store + 'static>(
    State(state): State<Arc<AppState<S>>>,
    req: Request,
    next: Next,
) -> Response {
    let route = req.extensions().get::<MatchedPath>().map_or("unmatched", |p| p.as_str()).to_owned();
    let start = Instant::now();
    // A body announced over the limit is refused without reading it into
    // a request: up to twice the limit it is read and dropped first (so
    // that a client still sending it reads the 413 instead of a broken
    // pipe); beyond, it is refused at once and the connection closed.
    // Uploads of documents have their own limit.
    let is_upload = req.uri().path() == "/v1/extract";
    let max = if is_upload { state.settings.max_upload_bytes } else { state.settings.max_body_bytes };
    let announced =
        req.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if let Some(n) = announced.filter(|&n| n > max as u64) {
        if n <= max.saturating_mul(2) as u64 {
            let drain = axum::body::to_bytes(req.into_body(), max.saturating_mul(2));
            let _ = tokio::time::timeout(state.settings.timeout, drain).await;
        }
        let response = if is_upload {
            ApiError::upload_too_large(Some(n), max).into_response()
        } else {
            ApiError::too_large(Some(max)).into_response()
        };
        state.metrics.record(&route, response.status().as_u16(), start.elapsed().as_secs_f64());
        return response;
    }
    // Its body's bytes reserved first (all bodies held at once are
    // bounded; a request that gives no length may send up to its limit).
    let need = http_body::Body::size_hint(req.body()).exact().unwrap_or(max as u64);
    let answer = async {
        let _held = state.bodies.reserve(need).await;
        next.run(req).await
    };
    let response = match tokio::time::timeout(state.settings.timeout, answer).await {
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
    let response = enveloped(response).await;
    state.metrics.record(&route, response.status().as_u16(), start.elapsed().as_secs_f64());
    response
}

/// Errors the framework answers itself (405 with an empty body, a path
/// that is not UTF-8, …) in the JSON envelope every other error has,
/// keeping their headers (`Allow`).
async fn enveloped(response: Response) -> Response {
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if status.as_u16() < 400 || is_json {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, 64 << 10).await.unwrap_or_default();
    let code = match status {
        StatusCode::BAD_REQUEST => "bad_request",
        StatusCode::NOT_FOUND => "not_found",
        StatusCode::METHOD_NOT_ALLOWED => "method_not_allowed",
        StatusCode::PAYLOAD_TOO_LARGE => "payload_too_large",
        StatusCode::UNSUPPORTED_MEDIA_TYPE => "unsupported_media_type",
        _ => "error",
    };
    let mut message = String::from_utf8_lossy(&text).trim().to_owned();
    if message.is_empty() {
        message = match parts.headers.get(header::ALLOW).and_then(|v| v.to_str().ok()) {
            Some(allow) if status == StatusCode::METHOD_NOT_ALLOWED => {
                format!("this route takes {allow}; see GET /openapi.json")
            }
            _ => status.canonical_reason().unwrap_or("error").to_owned(),
        };
    }
    let fresh = ApiError { status, code, message }.into_response();
    parts.headers.remove(header::CONTENT_LENGTH);
    let (fresh_parts, body) = fresh.into_parts();
    parts.headers.extend(fresh_parts.headers);
    Response::from_parts(parts, body)
}
