//! JSON error bodies: `{"error": {"code": "...", "message": "..."}}`.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use neardup_store::{StoreError, WriteFailure};

/// An error answered as JSON with a status code.
#[derive(Debug)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// A stable, machine-readable code.
    pub code: &'static str,
    /// What went wrong and what to do.
    pub message: String,
}

impl ApiError {
    /// 400 with code `bad_request`.
    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError { status: StatusCode::BAD_REQUEST, code: "bad_request", message: message.into() }
    }

    /// 413 with code `batch_too_large`: `n` documents over `--max-batch`.
    pub fn batch_too_large(n: usize, max: usize) -> ApiError {
        ApiError {
            status: StatusCode::PAYLOAD_TOO_LARGE,
            code: "batch_too_large",
            message: format!("{n} documents; this server takes at most {max} per batch (--max-batch)"),
        }
    }

    /// 413 with code `payload_too_large`: over `--max-body` (`limit`, when
    /// known).
    pub fn too_large(limit: Option<usize>) -> ApiError {
        let limit = limit.map_or_else(String::new, |l| format!(" of {}", neardup_io::units(l as u64)));
        ApiError {
            status: StatusCode::PAYLOAD_TOO_LARGE,
            code: "payload_too_large",
            message: format!(
                "the request body is over this server's limit{limit} (--max-body); send smaller batches"
            ),
        }
    }

    /// 413 for an upload of `size` bytes (when announced) over
    /// `--max-upload` (`max`).
    pub fn upload_too_large(size: Option<u64>, max: usize) -> ApiError {
        let size = size.map_or_else(String::new, |s| format!(" is {},", neardup_io::units(s)));
        ApiError {
            status: StatusCode::PAYLOAD_TOO_LARGE,
            code: "upload_too_large",
            message: format!(
                "the file{size} over this server's limit of {} (--max-upload); \
                 upload its text, or a smaller file",
                neardup_io::units(max as u64)
            ),
        }
    }

    /// 413 for a plain-text upload of `size` bytes over the text limit
    /// (`--max-body`, `max`): it would be refused as it is read.
    pub fn text_too_large(name: &str, size: u64, max: u64) -> ApiError {
        ApiError {
            status: StatusCode::PAYLOAD_TOO_LARGE,
            code: "text_too_large",
            message: format!(
                "{name} is {} of plain text, over this server's text limit of {} (--max-body); \
                 split it, or check it with `neardup report`",
                neardup_io::units(size),
                neardup_io::units(max)
            ),
        }
    }

    /// 500 with code `internal`.
    pub fn internal(message: impl Into<String>) -> ApiError {
        ApiError { status: StatusCode::INTERNAL_SERVER_ERROR, code: "internal", message: message.into() }
    }

    /// 503 with code `unavailable`.
    pub fn unavailable(message: impl Into<String>) -> ApiError {
        ApiError { status: StatusCode::SERVICE_UNAVAILABLE, code: "unavailable", message: message.into() }
    }

    /// 404 with code `not_found`.
    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError { status: StatusCode::NOT_FOUND, code: "not_found", message: message.into() }
    }
}

impl From<StoreError> for ApiError {
    /// Bad arguments are 400; a full disk 507 and other failures at the disk
    /// 503 (with `Retry-After`: the store reopens itself); anything else
    /// 500. Messages name no server paths (the log has the whole error).
    fn from(e: StoreError) -> ApiError {
        let message = match &e {
            StoreError::Database { message, .. } => format!("the store failed: {message}"),
            e => e.to_string(),
        };
        match (e.write_failure(), e) {
            (_, StoreError::Invalid(m)) => ApiError::bad_request(m),
            (Some(WriteFailure::DiskFull), _) => {
                ApiError { status: StatusCode::INSUFFICIENT_STORAGE, code: "disk_full", message }
            }
            (Some(_), _) => {
                ApiError { status: StatusCode::SERVICE_UNAVAILABLE, code: "store_unavailable", message }
            }
            (None, e) => {
                eprintln!("neardup: internal error: {e}");
                ApiError { status: StatusCode::INTERNAL_SERVER_ERROR, code: "internal", message }
            }
        }
    }
}

impl IntoResponse for ApiError {
    /// The JSON envelope; a 503 says when to retry (`Retry-After: 1`) and
    /// a 401 which scheme to use (`WWW-Authenticate: Bearer`).
    fn into_response(self) -> Response {
        let body = serde_json::json!({"error": {"code": self.code, "message": self.message}});
        let mut response = (self.status, Json(body)).into_response();
        let headers = response.headers_mut();
        match self.status {
            StatusCode::SERVICE_UNAVAILABLE => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            }
            StatusCode::UNAUTHORIZED => {
                headers
                    .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"neardup\""));
            }
            _ => {}
        }
        response
    }
}
