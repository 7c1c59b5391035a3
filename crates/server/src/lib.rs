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

mod body_budget;
mod documents;
mod error;
mod fair_body;
mod guard;
mod library;
mod listen;
mod metrics;
mod openapi;
mod page;
mod routes;
mod session;
mod types;
mod uploads;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::DefaultBodyLimit;
use axum::middleware;
use axum::routing::{get, post};
use axum::{Json, Router};
use neardup::detector::Detector;
use neardup::minhash::Method;
use neardup::near::Near;
use neardup_store::passages::Passages;
use neardup_store::{Engine, Store};
use serde_json::json;

pub use error::ApiError;
pub use listen::{serve_with, ConnLimits};
pub use metrics::Metrics;

use guard::{auth, observe};
use routes::{
    delete_document, fingerprint, get_document, healthz, metrics_text, search, stats, submit, submit_batch,
};

/// Limits and defaults of the service. Defaults: the pipeline's radius
/// rule (SimHash) or threshold (MinHash), 10 MiB bodies, 32 MiB uploads
/// read within 10 s, batches of 1,000, 30 s per request, search limit 100,
/// no token.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The radius when a request gives none (SimHash data directories);
    /// `None` (the default): the engine's rule ([`Engine::radius`], the
    /// pipeline's radius by the documents' lengths), the rule `neardup
    /// dedup` and `compare` use.
    pub default_k: Option<u32>,
    /// The Jaccard threshold when a request gives none (MinHash data
    /// directories); `None` (the default): the pipeline's.
    pub default_threshold: Option<f64>,
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
    /// The largest document uploaded to `/v1/extract`, in bytes.
    pub max_upload_bytes: usize,
    /// The longest reading one uploaded document may take.
    pub parse_timeout: Duration,
    /// Session cookies always get `Secure` (by default only when a proxy
    /// says the request came over TLS: `X-Forwarded-Proto: https`).
    pub secure_cookies: bool,
    /// Proxies in front whose `X-Forwarded-For` is believed: a request
    /// from one of these addresses comes from the nearest address in that
    /// header that is not one of them (logins are limited per client).
    /// Empty by default: every client is its connection's peer.
    pub trusted_proxies: Vec<std::net::IpAddr>,
    /// The bytes of request bodies held at once, all requests together
    /// (at least the largest one request may send): over it, requests wait
    /// for others to finish. 256 MiB by default.
    pub max_bodies_bytes: u64,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            default_k: None,
            default_threshold: None,
            max_k: 16,
            max_body_bytes: 10 << 20,
            max_batch: 1000,
            timeout: Duration::from_secs(30),
            default_limit: 100,
            token: None,
            max_upload_bytes: 32 << 20,
            parse_timeout: Duration::from_secs(10),
            secure_cookies: false,
            trusted_proxies: Vec::new(),
            max_bodies_bytes: 256 << 20,
        }
    }
}

impl Settings {
    /// What a request without k or threshold gets: the server's -k or
    /// --threshold (checked by [`AppState::new`] not to be both), else the
    /// engine's rule.
    pub fn default_near(&self) -> Near {
        match (self.default_k, self.default_threshold) {
            (Some(k), _) => Near::Within(k),
            (None, Some(t)) => Near::AtLeast(t),
            (None, None) => Near::Rule,
        }
    }
}

/// What handlers share.
pub struct AppState<S: Store> {
    engine: Arc<Engine<S>>,
    detector: Detector,
    settings: Settings,
    metrics: Metrics,
    started: Instant,
    /// The data directory's passages, for `/v1/report`.
    passages: Option<Arc<Passages>>,
    /// Where uploads are read, a few at once (each holds a thread and
    /// its file's memory).
    uploads: uploads::Uploads,
    /// The page's logins.
    sessions: session::Sessions,
    /// The request bodies held at once.
    bodies: body_budget::BodyBudget,
}

impl<S: Store> AppState<S> {
    /// State over an engine; the fingerprinter (SimHash) or MinHasher is
    /// built from its pipeline.
    ///
    /// # Errors
    ///
    /// A pipeline that does not load, or a default k for a MinHash engine
    /// (threshold for a SimHash one).
    pub fn new(engine: Arc<Engine<S>>, settings: Settings) -> Result<AppState<S>, neardup::Error> {
        let detector = Detector::new(engine.config().clone())?;
        // The server's -k or --threshold must fit its data directory.
        let near = Near::of(settings.default_k, settings.default_threshold)?;
        near.check(detector.method()).map_err(|e| {
            let method = detector.method();
            neardup::Error::Config(match near {
                Near::Within(_) if method != Method::Simhash => format!(
                    "-k is a SimHash radius, but this data directory holds {} signatures: use --threshold",
                    method.title()
                ),
                Near::AtLeast(_) if method != Method::Minhash => format!(
                    "--threshold is for MinHash data directories, but this one holds {} fingerprints: use -k",
                    method.title()
                ),
                _ => format!("--threshold: {e}"),
            })
        })?;
        let largest = settings.max_upload_bytes.max(settings.max_body_bytes) as u64;
        let bodies = body_budget::BodyBudget::new(settings.max_bodies_bytes.max(largest));
        Ok(AppState {
            engine,
            detector,
            settings,
            bodies,
            metrics: Metrics::default(),
            started: Instant::now(),
            passages: None,
            uploads: uploads::Uploads::new(EXTRACTING),
            sessions: session::Sessions::default(),
        })
    }

    /// With the data directory's passages (`neardup_store::passages`):
    /// `POST /v1/report` and the page's copied passages answer from them.
    pub fn with_passages(mut self, passages: Option<Passages>) -> AppState<S> {
        self.passages = passages.map(Arc::new);
        self
    }

    /// Writes out what the passage library holds in memory (on a clean
    /// stop; else the next open rebuilds it from the library's database).
    ///
    /// # Errors
    ///
    /// A full disk.
    pub fn close(&self) -> neardup_store::Result<()> {
        match &self.passages {
            Some(p) => p.flush(),
            None => Ok(()),
        }
    }
}

/// Uploads read at once.
const EXTRACTING: usize = 2;

impl<S: Store> AppState<S> {
    /// What `/openapi.json` describes: this server's method, widths and limits.
    fn contract(&self) -> openapi::Contract {
        openapi::Contract {
            token: self.settings.token.is_some(),
            method: self.detector.method(),
            bits: self.detector.config().bits.get(),
            permutations: self.detector.minhasher().map_or(0, |m| m.permutations()),
            max_k: self.settings.max_k,
            max_batch: self.settings.max_batch,
            passages: self.passages.is_some(),
        }
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
        .route("/v1/report", post(documents::report::<S>))
        .route("/v1/passages", post(library::add::<S>))
        .route("/v1/passages:batch", post(library::add_batch::<S>))
        .route("/v1/passages/{*id}", get(library::get::<S>).delete(library::delete::<S>))
        .route(
            "/v1/extract",
            post(documents::extract::<S>).layer(DefaultBodyLimit::max(state.settings.max_upload_bytes)),
        )
        .route_layer(middleware::from_fn_with_state(state.clone(), auth::<S>));
    let spec = Json(openapi::document(&state.contract()));
    Router::new()
        .merge(api)
        .route("/", get(page::index))
        .route("/assets/app.js", get(page::app_js))
        .route("/assets/app.css", get(page::app_css))
        .route("/assets/report.css", get(page::report_css))
        .route("/v1/session", post(page::login::<S>).delete(page::logout::<S>))
        .route("/healthz", get(healthz::<S>))
        .route("/livez", get(|| async { Json(json!({"status": "ok"})) }))
        .route("/openapi.json", get(move || async move { spec.clone() }))
        .fallback(|| async { ApiError::not_found("no such route; see GET /openapi.json") })
        .layer(middleware::from_fn_with_state(state.clone(), observe::<S>))
        .layer(DefaultBodyLimit::max(state.settings.max_body_bytes))
        .layer(middleware::from_fn(page::headers))
        .layer(middleware::map_request(fair_body::fair))
        .with_state(state)
}

/// Serves `app` on `listener` until `shutdown` resolves (see
/// [`shutdown_signal`]), with the default [`ConnLimits`]; requests in
/// flight (writes included) finish before it returns.
pub async fn serve(
    listener: tokio::net::TcpListener,
    app: Router,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_with(listener, app, shutdown, ConnLimits::default()).await
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

#[cfg(test)]
mod tests {
    use crate::guard::constant_time_eq;

    #[test]
    fn tokens_compare_exactly() {
        assert!(constant_time_eq(b"secret", b"secret"));
        assert!(!constant_time_eq(b"secret", b"secreT"));
        assert!(!constant_time_eq(b"secret", b"secret!"));
        assert!(!constant_time_eq(b"", b"x"));
    }
}
