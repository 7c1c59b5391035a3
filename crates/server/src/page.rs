//! The page people check documents with: `GET /` and its assets, compiled
//! into the binary (nothing is fetched from elsewhere), the session a
//! login makes, and the headers every response carries (a strict
//! Content-Security-Policy: no inline script or style, nothing from
//! another origin).

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use neardup_store::Store;
use serde_json::json;

use crate::error::ApiError;
use crate::guard::constant_time_eq;
use crate::types::{ApiJson, SessionReq};
use crate::AppState;

const INDEX_HTML: &str = include_str!("../assets/index.html");
const APP_JS: &str = include_str!("../assets/app.js");
const APP_CSS: &str = include_str!("../assets/app.css");

/// The cookie a login sets: the token's hex, HttpOnly (no script reads
/// it), SameSite=Strict (no other site's page sends it).
pub(crate) const SESSION_COOKIE: &str = "neardup_session";

/// How long a login lasts.
const SESSION_SECONDS: u32 = 12 * 3600;

/// The policy: scripts, styles, fetches and forms from this origin only;
/// no inline script or style, no frames, no plugins, no base changes.
pub(crate) const CSP: &str =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
     connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/// Adds the security headers to every response.
pub(crate) async fn headers(req: Request, next: Next) -> Response {
    let mut response = next.run(req).await;
    let h = response.headers_mut();
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    response
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, content_type), (header::CACHE_CONTROL, "no-cache")], body).into_response()
}

pub(crate) async fn index() -> Response {
    asset("text/html; charset=utf-8", INDEX_HTML)
}

pub(crate) async fn app_js() -> Response {
    asset("text/javascript; charset=utf-8", APP_JS)
}

pub(crate) async fn app_css() -> Response {
    asset("text/css; charset=utf-8", APP_CSS)
}

pub(crate) async fn report_css() -> Response {
    asset("text/css; charset=utf-8", neardup::report::CSS)
}

/// The session cookie's value for `token`: its hex (a cookie value cannot
/// hold every byte a token may).
pub(crate) fn session_value(token: &str) -> String {
    token.bytes().map(|b| format!("{b:02x}")).collect()
}

/// `POST /v1/session`: logs in with the token (the page's login form),
/// setting the session cookie.
pub(crate) async fn login<S: Store + 'static>(
    State(state): State<Arc<AppState<S>>>,
    ApiJson(req): ApiJson<SessionReq>,
) -> Result<Response, ApiError> {
    let Some(token) = &state.settings.token else {
        return Ok(Json(json!({"session": false, "message": "this server has no token: no login needed"}))
            .into_response());
    };
    if !constant_time_eq(req.token.trim().as_bytes(), token.as_bytes()) {
        return Err(ApiError {
            status: StatusCode::UNAUTHORIZED,
            code: "unauthorized",
            message: "wrong token".into(),
        });
    }
    let cookie = format!(
        "{SESSION_COOKIE}={}; HttpOnly; SameSite=Strict; Path=/; Max-Age={SESSION_SECONDS}",
        session_value(token)
    );
    Ok(([(header::SET_COOKIE, cookie)], Json(json!({"session": true}))).into_response())
}

/// `DELETE /v1/session`: logs out (clears the cookie).
pub(crate) async fn logout() -> Response {
    let cookie = format!("{SESSION_COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0");
    ([(header::SET_COOKIE, cookie)], Json(json!({"session": false}))).into_response()
}
