//! Request and response bodies, and the JSON extractor that turns a bad
//! body into the API's error envelope.

use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use axum::Json;
use neardup::Fingerprint;
use neardup_store::Mode;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ApiError;

/// `Json` whose rejections are JSON errors that say what is wrong.
pub(crate) struct ApiJson<T>(pub(crate) T);

impl<T: DeserializeOwned, St: Send + Sync> FromRequest<St> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &St) -> Result<Self, ApiError> {
        match Json::<T>::from_request(req, state).await {
            Ok(Json(v)) => Ok(ApiJson(v)),
            Err(e) => Err(match e {
                JsonRejection::MissingJsonContentType(_) => ApiError {
                    status: StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    code: "unsupported_media_type",
                    message: "send JSON with Content-Type: application/json".into(),
                },
                JsonRejection::BytesRejection(b) if b.status() == StatusCode::PAYLOAD_TOO_LARGE => {
                    ApiError::too_large(None)
                }
                e => ApiError { status: StatusCode::BAD_REQUEST, code: "bad_json", message: e.body_text() },
            }),
        }
    }
}

/// An optional field that, when given, must be a value: `null` is refused
/// (as `/openapi.json` says) instead of read as absent.
fn present<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FingerprintReq {
    pub(crate) text: String,
    #[serde(default)]
    pub(crate) explain: bool,
}

/// A MinHash signature in a request: its hex form, or its values.
#[derive(Deserialize)]
#[serde(
    untagged,
    expecting = "a MinHash signature: a hex string of 8 digits per value, or a list of ints from 0 to 2**32 - 1"
)]
pub(crate) enum SignatureIn {
    Hex(String),
    Values(Vec<u32>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DocumentReq {
    pub(crate) id: String,
    #[serde(default, deserialize_with = "present")]
    pub(crate) text: Option<String>,
    #[serde(default, deserialize_with = "present")]
    pub(crate) fingerprint: Option<String>,
    #[serde(default, deserialize_with = "present")]
    pub(crate) signature: Option<SignatureIn>,
    #[serde(default, deserialize_with = "present")]
    pub(crate) mode: Option<Mode>,
    #[serde(default, deserialize_with = "present")]
    pub(crate) k: Option<u32>,
    #[serde(default, deserialize_with = "present")]
    pub(crate) threshold: Option<f64>,
    pub(crate) metadata: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub(crate) features: Option<u32>,
}

/// One document's answer, serialized directly (no `Value` tree: batches of
/// a thousand are answered often). A SimHash answer echoes the
/// fingerprint; a MinHash one leaves out the signature (a kilobyte of hex
/// per document; `/v1/fingerprint` and `GET /v1/documents/{id}` give it).
#[derive(Serialize)]
pub(crate) struct OutcomeOut<'a> {
    pub(crate) id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) fingerprint: Option<Fingerprint>,
    pub(crate) inserted: bool,
    pub(crate) matches: &'a [neardup_store::Found],
}

#[derive(Serialize)]
pub(crate) struct BatchOut<'a> {
    pub(crate) results: Vec<OutcomeOut<'a>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct BatchReq {
    pub(crate) documents: Vec<DocumentReq>,
    #[serde(default, deserialize_with = "present")]
    pub(crate) mode: Option<Mode>,
    #[serde(default, deserialize_with = "present")]
    pub(crate) k: Option<u32>,
    #[serde(default, deserialize_with = "present")]
    pub(crate) threshold: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SearchReq {
    #[serde(default, deserialize_with = "present")]
    pub(crate) text: Option<String>,
    #[serde(default, deserialize_with = "present")]
    pub(crate) fingerprint: Option<String>,
    #[serde(default, deserialize_with = "present")]
    pub(crate) signature: Option<SignatureIn>,
    #[serde(default, deserialize_with = "present")]
    pub(crate) k: Option<u32>,
    #[serde(default, deserialize_with = "present")]
    pub(crate) threshold: Option<f64>,
    #[serde(default, deserialize_with = "present")]
    pub(crate) limit: Option<usize>,
    #[serde(default, deserialize_with = "present")]
    pub(crate) features: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReportReq {
    pub(crate) text: String,
    #[serde(default, deserialize_with = "present")]
    pub(crate) name: Option<String>,
    #[serde(default, deserialize_with = "present")]
    pub(crate) k: Option<u32>,
    #[serde(default, deserialize_with = "present")]
    pub(crate) exclude: Option<Vec<String>>,
    #[serde(default, deserialize_with = "present")]
    pub(crate) min_windows: Option<usize>,
    #[serde(default, deserialize_with = "present")]
    pub(crate) max_sources: Option<usize>,
    #[serde(default, deserialize_with = "present")]
    pub(crate) html: Option<bool>,
    #[serde(default, deserialize_with = "present")]
    pub(crate) own: Option<Vec<String>>,
    #[serde(default, deserialize_with = "present")]
    pub(crate) min_match_chars: Option<usize>,
    #[serde(default, deserialize_with = "present")]
    pub(crate) quotes: Option<bool>,
    #[serde(default, deserialize_with = "present")]
    pub(crate) references: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SessionReq {
    pub(crate) token: String,
}
