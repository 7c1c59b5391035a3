//! `GET /openapi.json`: an OpenAPI 3.0 description of **this** server: its
//! method's request fields (SimHash: `fingerprint`, `k`; MinHash:
//! `signature`, `threshold`), its widths and limits (`--max-k`,
//! `--max-batch`), every status it answers, and bearer security only when
//! it runs with a token. schemathesis checks it against the running server
//! in `tests/all.sh` (`tests/api/schemathesis.sh`).

use neardup::minhash::Method;
use serde_json::{json, Map, Value};

/// What the description depends on.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Contract {
    /// Whether requests need a bearer token.
    pub(crate) token: bool,
    /// The data directory's method.
    pub(crate) method: Method,
    /// Fingerprint width (SimHash).
    pub(crate) bits: u32,
    /// Signature length (MinHash).
    pub(crate) permutations: usize,
    /// The largest `k` a request may give.
    pub(crate) max_k: u32,
    /// The most documents in one batch.
    pub(crate) max_batch: usize,
    /// Whether the data directory keeps passages (`/v1/report`).
    pub(crate) passages: bool,
}

/// The status codes an operation can answer, each the JSON error envelope
/// but 200.
fn responses(c: &Contract, ok: Value, errors: &[u16]) -> Value {
    let mut r = Map::new();
    r.insert("200".into(), ok);
    let mut codes: Vec<u16> = errors.to_vec();
    if c.token {
        codes.push(401);
    }
    codes.sort_unstable();
    for code in codes {
        let what = match code {
            400 => "Bad request: the message says what is wrong",
            401 => "Missing or wrong bearer token (or session)",
            409 => "This data directory has no passage library (neardup index build --passages INPUTS -o DIR), or a 0.x window index that takes no changes",
            422 => "The file cannot be read as a document: the message says why and what to do",
            404 => "No such document",
            413 => "Body over the server's --max-body (uploads: --max-upload, and plain text also --max-body), or a batch over --max-batch",
            415 => "Not sent as Content-Type: application/json",
            429 => "Too many wrong tokens from this client in a minute: wait as Retry-After says",
            500 => "Internal error",
            503 => "Timed out (--timeout), or the store failed at the disk and reopens itself: retry (Retry-After)",
            507 => "The disk is full: nothing was stored; reads go on; retry once space is freed",
            _ => "Error",
        };
        let mut resp = json!({"description": what, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}});
        if code == 503 || code == 429 {
            resp["headers"] =
                json!({"Retry-After": {"description": "Seconds to wait", "schema": {"type": "integer"}}});
        }
        if code == 401 {
            resp["headers"] =
                json!({"WWW-Authenticate": {"description": "Bearer", "schema": {"type": "string"}}});
        }
        r.insert(code.to_string(), resp);
    }
    Value::Object(r)
}

fn ok(schema: &str, what: &str) -> Value {
    json!({"description": what, "content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{schema}")}}}})
}

fn body(schema: &str) -> Value {
    json!({"required": true, "content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{schema}")}}}})
}

/// The statuses of a JSON POST that reads (and, with `writes`, writes).
const POST_READ: &[u16] = &[400, 413, 415, 500, 503];
const POST_WRITE: &[u16] = &[400, 413, 415, 500, 503, 507];

/// The request fields that depend on the method, and those shared by
/// several schemas.
struct Fields {
    /// `fingerprint` (SimHash) or `signature` (MinHash), and its schema.
    sketch_key: &'static str,
    sketch: Value,
    /// `k` (SimHash) or `threshold` (MinHash), and its schema.
    near_key: &'static str,
    near: Value,
    features: Value,
    text: Value,
    mode: Value,
    id: Value,
}

impl Fields {
    fn of(c: &Contract) -> Fields {
        let (sketch_key, sketch) = sketch_field(c);
        let (near_key, near) = near_field(c);
        Fields {
            sketch_key,
            sketch,
            near_key,
            near,
            features: json!({"type": "integer", "minimum": 0, "maximum": 4_294_967_294u64,
                "description": format!("With {sketch_key} only: how many features the document had (the length the radius rule needs); without it the document counts as long. A text's are counted.")}),
            text: json!({"type": "string", "description": "The document's text. A text without features (empty, only punctuation or stop words) is a 400."}),
            mode: json!({"type": "string", "enum": ["insert", "check", "insert-if-unique"], "default": "insert-if-unique",
                "description": "insert: store and report near duplicates; check: only report; insert-if-unique: store only when there is none, atomically."}),
            id: json!({"type": "string", "minLength": 1, "maxLength": neardup_store::MAX_ID_CHARS,
                "description": "Unique per document: 1 to 1024 characters (Unicode scalar values)."}),
        }
    }

    /// An object schema of `props`; with `one_of`, exactly one of the text
    /// and the sketch (and `features` only with the sketch).
    fn object(&self, required: &[&str], props: Vec<(&str, Value)>, one_of: bool) -> Value {
        let props = Map::from_iter(props.into_iter().map(|(k, v)| (k.to_owned(), v)));
        let mut o = json!({"type": "object", "additionalProperties": false, "properties": props});
        if !required.is_empty() {
            o["required"] = json!(required);
        }
        if one_of {
            let key = self.sketch_key;
            o["oneOf"] = json!([
                {"required": ["text"], "not": {"anyOf": [{"required": [key]}, {"required": ["features"]}]}},
                {"required": [key], "not": {"required": ["text"]}}
            ]);
        }
        o
    }

    /// A document's fields: alone (with its mode and rule) or in a batch.
    fn document(&self, batch: bool) -> Vec<(&str, Value)> {
        let mut p = vec![
            ("id", self.id.clone()),
            ("text", self.text.clone()),
            (self.sketch_key, self.sketch.clone()),
            ("features", self.features.clone()),
            ("metadata", json!({"description": "Any JSON, stored with the document.", "nullable": true})),
        ];
        if !batch {
            p.push(("mode", self.mode.clone()));
            p.push((self.near_key, self.near.clone()));
        }
        p
    }
}

/// The sketch a request may send instead of a text, as the server parses it.
fn sketch_field(c: &Contract) -> (&'static str, Value) {
    if c.method == Method::Simhash {
        let digits = c.bits / 4;
        let schema = json!({"type": "string", "pattern": format!("^[0-9a-fA-F]{{{digits}}}$"),
            "description": format!("A {}-bit SimHash fingerprint: {digits} hex digits.", c.bits)});
        ("fingerprint", schema)
    } else {
        let k = c.permutations;
        let schema = json!({"oneOf": [
            {"type": "string", "pattern": format!("^[0-9a-fA-F]{{{}}}$", 8 * k)},
            {"type": "array", "minItems": k, "maxItems": k, "items": {"type": "integer", "minimum": 0, "maximum": 4_294_967_295u64}}],
            "description": format!("A MinHash signature of {k} values: 8 hex digits per value, or the values.")});
        ("signature", schema)
    }
}

/// The rule a request may give: a radius `k` or a Jaccard `threshold`.
fn near_field(c: &Contract) -> (&'static str, Value) {
    if c.method == Method::Simhash {
        (
            "k",
            json!({"type": "integer", "minimum": 0, "maximum": c.max_k,
            "description": "Largest Hamming distance of a near duplicate (default: the server's -k, else the pipeline's radius rule by the documents' lengths, as neardup dedup and compare); at most the server's --max-k."}),
        )
    } else {
        (
            "threshold",
            json!({"type": "number", "minimum": 0, "exclusiveMinimum": true, "maximum": 1,
            "description": "Smallest estimated Jaccard similarity of a near duplicate among the documents sharing an LSH band (default: the server's --threshold, else the pipeline's)."}),
        )
    }
}

/// The request schemas.
fn request_schemas(c: &Contract, f: &Fields) -> Map<String, Value> {
    let batch = f.object(
        &["documents"],
        vec![
            (
                "documents",
                json!({"type": "array", "maxItems": c.max_batch, "items": {"$ref": "#/components/schemas/BatchDocument"},
                "description": "At most the server's --max-batch; mode and the rule are the batch's, not its documents'."}),
            ),
            ("mode", f.mode.clone()),
            (f.near_key, f.near.clone()),
        ],
        false,
    );
    let limit = json!({"type": "integer", "minimum": 0, "maximum": u64::MAX, "default": 100, "description": "The most matches to return."});
    let search = f.object(
        &[],
        vec![
            ("text", f.text.clone()),
            (f.sketch_key, f.sketch.clone()),
            ("features", f.features.clone()),
            (f.near_key, f.near.clone()),
            ("limit", limit),
        ],
        true,
    );
    let fingerprint = f.object(
        &["text"],
        vec![("text", f.text.clone()), ("explain", json!({"type": "boolean", "default": false}))],
        false,
    );
    Map::from_iter([
        ("FingerprintRequest".to_owned(), fingerprint),
        ("DocumentRequest".to_owned(), f.object(&["id"], f.document(false), true)),
        ("BatchDocument".to_owned(), f.object(&["id"], f.document(true), true)),
        ("BatchRequest".to_owned(), batch),
        ("SearchRequest".to_owned(), search),
        (
            "PassageBatchRequest".to_owned(),
            json!({"type": "object", "additionalProperties": false, "required": ["documents"], "properties": {
                "documents": {"type": "array", "maxItems": c.max_batch, "items": {"$ref": "#/components/schemas/PassageDocument"},
                    "description": "At most the server's --max-batch."}}}),
        ),
    ])
}

/// The response schemas that depend on the method.
fn method_responses(c: &Contract, sketch_key: &str) -> Map<String, Value> {
    let simhash = c.method == Method::Simhash;
    let explain = json!({"type": "object", "required": ["features", "distinct_features"], "properties": {"features": {"type": "array"}, "distinct_features": {"type": "integer"}}});
    let fingerprint = if simhash {
        json!({"type": "object", "required": ["fingerprint", "features", "bits"], "properties": {
            "fingerprint": {"type": "string"}, "features": {"type": "integer"}, "bits": {"type": "integer"}, "explain": explain}})
    } else {
        json!({"type": "object", "required": ["signature", "features", "permutations"], "properties": {
            "signature": {"type": "string"}, "features": {"type": "integer"}, "permutations": {"type": "integer"}, "explain": explain}})
    };
    let matches = json!({"type": "array", "items": {"$ref": "#/components/schemas/Match"}});
    let mut outcome = json!({"type": "object", "required": ["id", "inserted", "matches"], "properties": {
        "id": {"type": "string"}, "inserted": {"type": "boolean"}, "matches": matches}});
    if simhash {
        outcome["required"] = json!(["id", "fingerprint", "inserted", "matches"]);
        outcome["properties"]["fingerprint"] = json!({"type": "string"});
    }
    let search = if simhash {
        json!({"type": "object", "required": ["radius", "matches", "k", "fingerprint"], "properties": {
            "radius": {"type": "string", "description": "The rule used, as neardup prints it, e.g. k = 8 below 600 features, else 4."},
            "matches": matches, "fingerprint": {"type": "string"},
            "k": {"type": "integer", "nullable": true, "description": "The request's or the server's fixed k; null: the pipeline's radius rule."}}})
    } else {
        json!({"type": "object", "required": ["radius", "matches", "threshold"], "properties": {
            "radius": {"type": "string", "description": "The rule used, e.g. Jaccard ≥ 0.5 (32 bands × 4 rows of 128 values)."},
            "matches": matches, "threshold": {"type": "number"}}})
    };
    let stored = json!({"type": "object", "required": ["id", sketch_key, "inserted_at_ms"], "properties": {
        "id": {"type": "string"}, sketch_key: {"type": "string"}, "inserted_at_ms": {"type": "integer"},
        "content_hash": {"type": "string", "nullable": true}, "metadata": {"nullable": true},
        "features": {"type": "integer", "nullable": true}}});
    Map::from_iter([
        ("FingerprintResponse".to_owned(), fingerprint),
        ("Outcome".to_owned(), outcome),
        ("SearchResponse".to_owned(), search),
        ("StoredDocument".to_owned(), stored),
    ])
}

/// The schemas every server has.
fn fixed_schemas() -> Value {
    json!({
        "Error": {"type": "object", "required": ["error"], "properties": {"error": {"type": "object", "required": ["code", "message"], "properties": {"code": {"type": "string"}, "message": {"type": "string"}}}}},
        "Match": {"type": "object", "required": ["id", "distance"], "properties": {"id": {"type": "string"},
            "distance": {"type": "integer", "description": "Differing bits (SimHash) or differing signature values (MinHash)."},
            "similarity": {"type": "number", "description": "MinHash only: the estimated Jaccard similarity."}}},
        "BatchResponse": {"type": "object", "required": ["results"], "properties": {"results": {"type": "array", "items": {"$ref": "#/components/schemas/Outcome"}}}},
        "Deleted": {"type": "object", "required": ["id", "deleted"], "properties": {"id": {"type": "string"}, "deleted": {"type": "boolean"}}},
        "Stats": {"type": "object", "required": ["documents", "method"], "properties": {"documents": {"type": "integer"}, "method": {"type": "string"}}},
        "Health": {"type": "object", "required": ["status", "reads", "writes"], "properties": {"status": {"type": "string", "enum": ["ok", "degraded"]},
            "reads": {"type": "string"}, "writes": {"type": "string", "description": "ok, disk_full or io"}, "message": {"type": "string"}}},
        "Status": {"type": "object", "required": ["status"], "properties": {"status": {"type": "string"}}},
        "ReportRequest": {"type": "object", "additionalProperties": false, "required": ["text"], "properties": {
            "text": {"type": "string", "description": "The text to check (A)."},
            "name": {"type": "string", "description": "What to call it in the report (default: A)."},
            "k": {"type": "integer", "minimum": 0, "maximum": 64, "description": "The radius windows match within (default: the passage index's rule); at most the server's --max-k."},
            "exclude": {"type": "array", "items": {"type": "string"}, "description": "Indexed documents to leave out (the text itself, when it is indexed)."},
            "min_windows": {"type": "integer", "minimum": 0, "maximum": 1_000_000, "description": "Spans of fewer windows are left out (default 1)."},
            "max_sources": {"type": "integer", "minimum": 0, "maximum": 1_000_000, "description": "The most sources listed (default 20)."},
            "html": {"type": "boolean", "default": false, "description": "Also give the report's HTML view (what the page shows), every text escaped."},
            "own": {"type": "array", "items": {"type": "string"}, "description": "Indexed documents that are the author's own earlier papers: listed, and left out of ratios.without_own."},
            "min_match_chars": {"type": "integer", "minimum": 0, "maximum": 1_000_000, "description": "Matches with fewer characters in the text (whitespace not counted) are ignored (default 0; 13 is CNKI's rule for Chinese)."},
            "quotes": {"type": "boolean", "default": true, "description": "Leave quoted text out of ratios.without_quotes_and_references."},
            "references": {"type": "boolean", "default": true, "description": "Leave the reference list out of ratios.without_quotes_and_references."}}},
        "Report": {"type": "object", "required": ["a", "similarity", "matched_chars", "matches", "sources", "sources_left_out"], "properties": {
            "a": {"type": "object"}, "similarity": {"type": "number"}, "matched_chars": {"type": "integer"},
            "k": {"description": "The radius rule used (reports against a window index of neardup 0.x)."}, "window": {"type": "integer", "description": "Sentences per window (window index only)"}, "min_chars": {"type": "integer", "description": "Characters per window at least (window index only)"},
            "against": {"type": "string"}, "sources_left_out": {"type": "integer"},
            "ratios": {"type": "object", "description": "The share of the text found: total, without_quotes_and_references, without_own, without_both; excluded_chars; and the exclusions used."},
            "sources": {"type": "array", "items": {"type": "object", "required": ["id", "similarity"], "properties": {
                "id": {"type": "string"}, "similarity": {"type": "number"}, "text": {"type": "boolean", "description": "true where its text is kept (and given in matches); absent otherwise."}}}},
            "matches": {"type": "array", "items": {"type": "object", "required": ["a", "b", "distance"], "properties": {
                "a": {"type": "object", "required": ["start", "end", "text"]}, "b": {"type": "object", "required": ["start", "end", "id"]}, "distance": {"type": "integer"}}}},
            "html": {"type": "string"}}},
        "PassageDocument": {"type": "object", "additionalProperties": false, "required": ["id", "text"], "properties": {
            "id": {"type": "string", "description": "Its id (1 to 1024 characters); a document of the same id is replaced."},
            "text": {"type": "string", "description": "Its text, kept for the reports' side-by-side view."}}},
        "PassageAdded": {"type": "object", "required": ["id", "documents"], "properties": {"id": {"type": "string"},
            "documents": {"type": "integer", "description": "The documents in the library after."}}},
        "PassageBatchAdded": {"type": "object", "required": ["added", "documents"], "properties": {"added": {"type": "integer"},
            "documents": {"type": "integer", "description": "The documents in the library after."}}},
        "PassageText": {"type": "object", "required": ["id", "chars", "text"], "properties": {"id": {"type": "string"},
            "chars": {"type": "integer"}, "text": {"type": "string"}}},
        "Extracted": {"type": "object", "required": ["name", "kind", "chars", "text"], "properties": {
            "name": {"type": "string"}, "kind": {"type": "string", "enum": ["text", "docx", "pdf", "html", "markdown"]},
            "chars": {"type": "integer"}, "text": {"type": "string"}}},
        "SessionRequest": {"type": "object", "additionalProperties": false, "required": ["token"], "properties": {"token": {"type": "string"}}},
        "Session": {"type": "object", "required": ["session"], "properties": {"session": {"type": "boolean"}, "message": {"type": "string"}}}
    })
}

/// The answers of `/v1/session` (public: a wrong token is its 401, with
/// or without a token on the server).
fn session_responses(codes: &[u16]) -> Value {
    let open = Contract {
        token: false,
        method: Method::Simhash,
        bits: 64,
        permutations: 0,
        max_k: 0,
        max_batch: 0,
        passages: false,
    };
    let errors: Vec<u16> = codes.iter().copied().filter(|&c| c != 200).collect();
    responses(&open, ok("Session", "Logged in or out"), &errors)
}

/// The operations, with the statuses each answers.
fn paths(c: &Contract, sketch_key: &str) -> Value {
    let id_param = json!([{"name": "id", "in": "path", "required": true,
        "description": "The document id, percent-encoded (slashes may also be sent raw: everything after /v1/documents/ is the id)",
        "schema": {"type": "string"}}]);
    let passage_id = json!([{"name": "id", "in": "path", "required": true,
        "description": "The document id, percent-encoded (slashes may also be sent raw: everything after /v1/passages/ is the id)",
        "schema": {"type": "string"}}]);
    // Answered without the token.
    let public = |mut op: Value| {
        if c.token {
            op["security"] = json!([]);
        }
        op
    };
    json!({
        "/v1/fingerprint": {"post": {"summary": format!("The {sketch_key} of a text"), "requestBody": body("FingerprintRequest"),
            "responses": responses(c, ok("FingerprintResponse", "The sketch"), POST_READ)}},
        "/v1/documents": {"post": {"summary": "Check and/or insert one document", "requestBody": body("DocumentRequest"),
            "responses": responses(c, ok("Outcome", "What was done"), POST_WRITE)}},
        "/v1/documents:batch": {"post": {"summary": "Check and/or insert documents, one durable commit", "requestBody": body("BatchRequest"),
            "responses": responses(c, ok("BatchResponse", "One outcome per document, in order"), POST_WRITE)}},
        "/v1/documents/{id}": {
            "parameters": id_param,
            "get": {"summary": "A stored document", "responses": responses(c, ok("StoredDocument", "The document"), &[400, 404, 500, 503])},
            "delete": {"summary": "Delete a document", "responses": responses(c, ok("Deleted", "Deleted"), &[400, 404, 500, 503, 507])}
        },
        "/v1/search": {"post": {"summary": format!("Stored documents near a text or {sketch_key}"), "requestBody": body("SearchRequest"),
            "responses": responses(c, ok("SearchResponse", "Matches, nearest first"), POST_READ)}},
        "/v1/stats": {"get": {"summary": "Sizes and settings", "responses": responses(c, ok("Stats", "Stats"), &[503])}},
        "/metrics": {"get": {"summary": "Prometheus metrics (text format)", "responses": responses(c, json!({"description": "Metrics", "content": {"text/plain": {"schema": {"type": "string"}}}}), &[503])}},
        "/v1/report": {"post": {"summary": "The passages of a text copied from the documents of the data directory's passage library (the spans of `neardup report --against DIR`)",
            "requestBody": body("ReportRequest"),
            "responses": responses(c, ok("Report", "The report: the share of the text found, its sources, the copied spans"), &[400, 409, 413, 415, 500, 503])}},
        "/v1/passages": {"post": {"summary": "Add a document with its text to the passage library (or replace the one of its id): in the next report",
            "requestBody": body("PassageDocument"),
            "responses": responses(c, ok("PassageAdded", "Added; on disk"), &[400, 409, 413, 415, 500, 503, 507])}},
        "/v1/passages:batch": {"post": {"summary": "Add documents to the passage library, one durable commit (refused whole if one is bad)",
            "requestBody": body("PassageBatchRequest"),
            "responses": responses(c, ok("PassageBatchAdded", "Added; on disk"), &[400, 409, 413, 415, 500, 503, 507])}},
        "/v1/passages/{id}": {
            "parameters": passage_id,
            "get": {"summary": "A document of the passage library, with its text", "responses": responses(c, ok("PassageText", "The document"), &[400, 404, 409, 500, 503])},
            "delete": {"summary": "Remove a document from the passage library", "responses": responses(c, ok("Deleted", "Removed"), &[400, 404, 409, 500, 503, 507])}
        },
        "/v1/extract": {"post": {"summary": "The text of a document as it comes: .docx, .pdf (its text layer), .html, .md or plain text (UTF-8), by its first bytes or its name",
            "parameters": [{"name": "name", "in": "query", "required": false, "description": "The file's name (its extension says what it is when its first bytes do not)", "schema": {"type": "string"}}],
            "requestBody": {"required": true, "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}},
            "responses": responses(c, ok("Extracted", "The text"), &[400, 413, 422, 500, 503])}},
        "/v1/session": {
            "post": public(json!({"summary": "Log in with the token: sets an HttpOnly, SameSite=Strict (and over TLS, Secure) cookie holding a random session id the server keeps for 12 hours (the page's login); wrong tokens are limited per client", "requestBody": body("SessionRequest"),
                "responses": session_responses(&[200, 400, 401, 413, 415, 429])})),
            "delete": public(json!({"summary": "Log out: revokes the session on the server and clears its cookie", "responses": session_responses(&[200])}))
        },
        "/healthz": {"get": public(json!({"summary": "Health: 503 while writes fail at the disk (reads still work); use /livez for liveness", "responses": {
            "200": ok("Health", "Reads and writes work"), "503": ok("Health", "Degraded: writes fail (the body says why)")}}))},
        "/livez": {"get": public(json!({"summary": "Liveness: 200 while the process serves", "responses": {"200": ok("Status", "Serving")}}))},
        "/openapi.json": {"get": public(json!({"summary": "This document", "responses": {"200": {"description": "OpenAPI 3.0", "content": {"application/json": {"schema": {"type": "object"}}}}}}))}
    })
}

/// The document: the paths, then the schemas (fixed, the requests', the
/// method's responses), and bearer security when there is a token.
pub(crate) fn document(c: &Contract) -> Value {
    let f = Fields::of(c);
    let method = if c.method == Method::Simhash { "SimHash" } else { "MinHash" };
    let mut schemas = fixed_schemas();
    if let Value::Object(m) = &mut schemas {
        m.extend(request_schemas(c, &f));
        m.extend(method_responses(c, f.sketch_key));
    }
    let mut doc = json!({
        "openapi": "3.0.3",
        "info": {"title": "neardup", "version": env!("CARGO_PKG_VERSION"),
            "description": format!("Near-duplicate detection with {method} (this data directory's method): check-and-insert documents, search by text or {}. {} Errors are {{\"error\": {{\"code\", \"message\"}}}}.", f.sketch_key,
                if c.passages { "This data directory keeps passages: POST /v1/report finds copied passages." } else { "This data directory keeps no passages: POST /v1/report answers 409." })},
        "paths": paths(c, f.sketch_key),
        "components": {"schemas": schemas}
    });
    if c.token {
        doc["security"] = json!([{"bearer": []}]);
        doc["components"]["securitySchemes"] = json!({"bearer": {"type": "http", "scheme": "bearer", "description": "The server's --token-file."}});
    }
    doc
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contract(token: bool, method: Method) -> Contract {
        Contract { token, method, bits: 64, permutations: 128, max_k: 16, max_batch: 1000, passages: true }
    }

    #[test]
    fn security_only_with_a_token_and_fields_by_method() {
        let open = document(&contract(false, Method::Simhash));
        assert!(open.get("security").is_none() && open["components"].get("securitySchemes").is_none());
        assert!(open["paths"]["/v1/stats"]["get"]["responses"].get("401").is_none());
        let guarded = document(&contract(true, Method::Simhash));
        assert_eq!(guarded["security"], json!([{"bearer": []}]));
        assert!(guarded["paths"]["/v1/stats"]["get"]["responses"].get("401").is_some());
        assert_eq!(guarded["paths"]["/healthz"]["get"]["security"], json!([]));
        let props = &open["components"]["schemas"]["DocumentRequest"]["properties"];
        assert!(props.get("fingerprint").is_some() && props.get("signature").is_none());
        assert_eq!(props["k"]["maximum"], json!(16));
        let batch = &open["components"]["schemas"]["BatchDocument"]["properties"];
        assert!(batch.get("mode").is_none() && batch.get("k").is_none());
        let mh = document(&contract(false, Method::Minhash));
        let props = &mh["components"]["schemas"]["DocumentRequest"]["properties"];
        assert!(
            props.get("signature").is_some() && props.get("k").is_none() && props.get("threshold").is_some()
        );
    }
}
