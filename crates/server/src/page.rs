//! The page people check documents with: `GET /` and its assets, compiled
//! into the binary (nothing is fetched from elsewhere), the session a
//! login makes (`crate::session`), and the headers every response carries (a strict
//! Content-Security-Policy: no inline script or style, nothing from
//! another origin).

use std::sync::Arc;

use std::net::SocketAddr;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use neardup_store::Store;
use serde_json::json;

use crate::error::ApiError;
use crate::guard::constant_time_eq;
use crate::session;
use crate::types::{ApiJson, SessionReq};
use crate::AppState;

const INDEX_HTML: &str = include_str!("../assets/index.html");
const APP_JS: &str = include_str!("../assets/app.js");
const APP_CSS: &str = include_str!("../assets/app.css");

/// The cookie a login sets: a random session id the server keeps
/// (`crate::session`), HttpOnly (no script reads it), SameSite=Strict (no
/// other site's page sends it), Secure over TLS.
pub(crate) const SESSION_COOKIE: &str = "neardup_session";

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

/// Whether cookies get `Secure`: `--secure-cookies`, or the request came
/// over TLS to a proxy in front (`X-Forwarded-Proto: https`; this server
/// itself speaks plain HTTP).
fn secure(settings: &crate::Settings, headers: &HeaderMap) -> bool {
    settings.secure_cookies
        || headers
            .get("x-forwarded-proto")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.split(',').next().is_some_and(|p| p.trim().eq_ignore_ascii_case("https")))
}

/// The session cookie: `value` for `max_age` seconds (0 clears it).
fn cookie(value: &str, max_age: u64, secure: bool) -> String {
    let secure = if secure { "; Secure" } else { "" };
    format!("{SESSION_COOKIE}={value}; HttpOnly; SameSite=Strict; Path=/; Max-Age={max_age}{secure}")
}

/// The client a request came from: its connection's peer, or, when that
/// is a trusted proxy (`--trusted-proxy`), the nearest address in
/// `X-Forwarded-For` that is not one (a client can put anything at the
/// far end of that header; only what trusted proxies appended counts).
pub(crate) fn client_of(settings: &crate::Settings, parts: &axum::http::request::Parts) -> session::Client {
    let peer = parts.extensions.get::<ConnectInfo<SocketAddr>>().map(|c| c.0.ip())?;
    if !settings.trusted_proxies.contains(&peer) {
        return Some(peer);
    }
    let mut client = peer;
    let hops = parts.headers.get_all("x-forwarded-for").iter().filter_map(|v| v.to_str().ok());
    let hops: Vec<&str> = hops.flat_map(|v| v.split(',')).map(str::trim).collect();
    for hop in hops.iter().rev() {
        match hop.parse::<std::net::IpAddr>() {
            Ok(ip) => client = ip,
            // Not an address: nothing nearer can be believed.
            Err(_) => break,
        }
        if !settings.trusted_proxies.contains(&client) {
            break;
        }
    }
    Some(client)
}

/// `POST /v1/session`: logs in with the token (the page's login form),
/// setting a cookie that holds a new random session id. Wrong tokens are
/// limited per client: past [`session::MAX_FAILURES`] in a minute, 429
/// with `Retry-After`.
pub(crate) async fn login<S: Store + 'static>(
    State(state): State<Arc<AppState<S>>>,
    parts: axum::http::request::Parts,
    ApiJson(req): ApiJson<SessionReq>,
) -> Result<Response, ApiError> {
    let Some(token) = &state.settings.token else {
        return Ok(Json(json!({"session": false, "message": "this server has no token: no login needed"}))
            .into_response());
    };
    let client = client_of(&state.settings, &parts);
    if let Some(wait) = state.sessions.wait_for(client) {
        let secs = wait.as_secs().max(1);
        let e = ApiError {
            status: StatusCode::TOO_MANY_REQUESTS,
            code: "too_many_logins",
            message: format!(
                "more than {} wrong tokens from this client in a minute; try again in {secs} s",
                session::MAX_FAILURES
            ),
        };
        return Ok(([(header::RETRY_AFTER, secs.to_string())], e).into_response());
    }
    if !constant_time_eq(req.token.trim().as_bytes(), token.as_bytes()) {
        state.sessions.failed(client);
        return Err(ApiError {
            status: StatusCode::UNAUTHORIZED,
            code: "unauthorized",
            message: "wrong token".into(),
        });
    }
    let id = state.sessions.start(client).map_err(|e| ApiError::internal(format!("no session id: {e}")))?;
    let set = cookie(&id, session::LIFETIME.as_secs(), secure(&state.settings, &parts.headers));
    Ok(([(header::SET_COOKIE, set)], Json(json!({"session": true}))).into_response())
}

/// `DELETE /v1/session`: logs out: the session is revoked on the server
/// (its cookie is worthless from now on, wherever a copy is) and cleared
/// in the browser.
pub(crate) async fn logout<S: Store + 'static>(
    State(state): State<Arc<AppState<S>>>,
    headers: HeaderMap,
) -> Response {
    if let Some(id) = session_cookie(&headers) {
        state.sessions.end(id);
    }
    let set = cookie("", 0, secure(&state.settings, &headers));
    ([(header::SET_COOKIE, set)], Json(json!({"session": false}))).into_response()
}

/// The session cookie's value, if the request carries one.
pub(crate) fn session_cookie(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|c| c.trim().strip_prefix(SESSION_COOKIE)?.strip_prefix('='))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(peer: &str, forwarded: &[&str]) -> axum::http::request::Parts {
        let mut req = axum::http::Request::builder().uri("/v1/session");
        for f in forwarded {
            req = req.header("x-forwarded-for", *f);
        }
        let (mut parts, ()) = req.body(()).unwrap().into_parts();
        parts.extensions.insert(ConnectInfo(SocketAddr::new(peer.parse().unwrap(), 40000)));
        parts
    }

    fn client(trusted: &[&str], peer: &str, forwarded: &[&str]) -> String {
        let settings = crate::Settings {
            trusted_proxies: trusted.iter().map(|t| t.parse().unwrap()).collect(),
            ..crate::Settings::default()
        };
        client_of(&settings, &parts(peer, forwarded)).unwrap().to_string()
    }

    #[test]
    fn forwarded_for_counts_only_from_trusted_proxies() {
        // No proxy trusted: the peer, whatever the header says.
        assert_eq!(client(&[], "10.0.0.1", &["203.0.113.7"]), "10.0.0.1");
        // An untrusted peer's header is ignored.
        assert_eq!(client(&["10.0.0.9"], "10.0.0.1", &["203.0.113.7"]), "10.0.0.1");
        // The trusted proxy's client.
        assert_eq!(client(&["10.0.0.1"], "10.0.0.1", &["203.0.113.7"]), "203.0.113.7");
        // A client's forged entries sit at the far end: the nearest hop
        // that is not a trusted proxy is the client.
        assert_eq!(client(&["10.0.0.1"], "10.0.0.1", &["1.2.3.4, 203.0.113.7"]), "203.0.113.7");
        assert_eq!(
            client(&["10.0.0.1", "10.0.0.2"], "10.0.0.1", &["1.2.3.4", "203.0.113.7, 10.0.0.2"]),
            "203.0.113.7"
        );
        assert_eq!(client(&["10.0.0.1"], "10.0.0.1", &["2001:db8::1"]), "2001:db8::1");
        // Garbage stops the walk at the last address believed.
        assert_eq!(client(&["10.0.0.1"], "10.0.0.1", &["203.0.113.7, junk"]), "10.0.0.1");
        // Every hop a trusted proxy, or no header: the farthest believed.
        assert_eq!(client(&["10.0.0.1", "10.0.0.2"], "10.0.0.1", &["10.0.0.2"]), "10.0.0.2");
        assert_eq!(client(&["10.0.0.1"], "10.0.0.1", &[]), "10.0.0.1");
    }
}
