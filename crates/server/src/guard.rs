//! Middleware (guards): the bearer-token check and request observation (timeout, metrics).

#[allow(unused_imports)]
use super::*;

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
pub(crate) async fn observe<S: Store + 'static>(
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
