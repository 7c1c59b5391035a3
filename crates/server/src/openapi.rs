//! `GET /openapi.json`: an OpenAPI 3 description of the service.

use serde_json::{json, Value};

fn body(schema: &str) -> Value {
    json!({"required": true, "content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{schema}")}}}})
}

fn ok(schema: &str, what: &str) -> Value {
    json!({
        "200": {"description": what, "content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{schema}")}}}},
        "400": {"$ref": "#/components/responses/Error"},
        "401": {"$ref": "#/components/responses/Error"},
        "413": {"$ref": "#/components/responses/Error"}
    })
}

/// The document.
pub fn document() -> Value {
    let hex = json!({"type": "string", "pattern": "^[0-9a-f]{16}([0-9a-f]{16})?$",
        "description": "A fingerprint: 16 (64-bit) or 32 (128-bit) lower-case hex digits."});
    let k = json!({"type": "integer", "minimum": 0, "description": "SimHash data directories: largest Hamming distance of a near duplicate (default: the server's -k, else the pipeline's radius rule by the documents' lengths, as neardup dedup and compare)."});
    let threshold = json!({"type": "number", "exclusiveMinimum": 0, "maximum": 1, "description": "MinHash data directories: smallest estimated Jaccard similarity of a near duplicate, among the documents sharing an LSH band (default: the server's --threshold, else the pipeline's)."});
    let signature = json!({"oneOf": [{"type": "string", "pattern": "^([0-9a-f]{8})+$"}, {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 4_294_967_295u64}}],
        "description": "A MinHash signature (MinHash data directories): 8 lower-case hex digits per value, or the values; as many as the pipeline's permutations."});
    let mode = json!({"type": "string", "enum": ["insert", "check", "insert-if-unique"], "default": "insert-if-unique",
        "description": "insert: store and report near duplicates; check: only report; insert-if-unique: store only when there is none, atomically."});
    json!({
        "openapi": "3.0.3",
        "info": {"title": "neardup", "version": env!("CARGO_PKG_VERSION"),
            "description": "Near-duplicate detection with SimHash or MinHash (a data directory holds one): check-and-insert documents, search by text, fingerprint (SimHash) or signature (MinHash). Errors are {\"error\": {\"code\", \"message\"}}."},
        "security": [{"bearer": []}],
        "paths": {
            "/v1/fingerprint": {"post": {"summary": "Fingerprint a text", "requestBody": body("FingerprintRequest"), "responses": ok("FingerprintResponse", "The fingerprint")}},
            "/v1/documents": {"post": {"summary": "Check and/or insert one document", "requestBody": body("DocumentRequest"), "responses": ok("Outcome", "What was done")}},
            "/v1/documents:batch": {"post": {"summary": "Check and/or insert documents, one durable commit", "requestBody": body("BatchRequest"), "responses": ok("BatchResponse", "One outcome per document, in order")}},
            "/v1/documents/{id}": {
                "parameters": [{"name": "id", "in": "path", "required": true, "description": "The document id, percent-encoded (slashes may also be sent raw: everything after /v1/documents/ is the id)", "schema": {"type": "string"}}],
                "get": {"summary": "A stored document", "responses": {"200": {"description": "The document", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/StoredDocument"}}}}, "404": {"$ref": "#/components/responses/Error"}}},
                "delete": {"summary": "Delete a document", "responses": {"200": {"description": "Deleted"}, "404": {"$ref": "#/components/responses/Error"}}}
            },
            "/v1/search": {"post": {"summary": "Stored documents near a text or fingerprint", "requestBody": body("SearchRequest"), "responses": ok("SearchResponse", "Matches, nearest first")}},
            "/v1/stats": {"get": {"summary": "Sizes and settings", "responses": {"200": {"description": "Stats"}}}},
            "/healthz": {"get": {"summary": "Liveness (no token needed)", "security": [], "responses": {"200": {"description": "ok"}}}},
            "/metrics": {"get": {"summary": "Prometheus metrics (text format)", "responses": {"200": {"description": "Metrics", "content": {"text/plain": {}}}}}},
            "/openapi.json": {"get": {"summary": "This document", "responses": {"200": {"description": "OpenAPI 3"}}}}
        },
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "description": "Only when the server was started with --token-file."}},
            "responses": {"Error": {"description": "An error", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}},
            "schemas": {
                "Error": {"type": "object", "required": ["error"], "properties": {"error": {"type": "object", "required": ["code", "message"], "properties": {"code": {"type": "string"}, "message": {"type": "string"}}}}},
                "Fingerprint": hex,
                "FingerprintRequest": {"type": "object", "required": ["text"], "additionalProperties": false, "properties": {"text": {"type": "string"}, "explain": {"type": "boolean", "default": false}}},
                "Signature": signature,
                "FingerprintResponse": {"type": "object", "description": "fingerprint and bits (SimHash), or signature and permutations (MinHash).", "properties": {"fingerprint": {"$ref": "#/components/schemas/Fingerprint"}, "signature": {"type": "string"}, "features": {"type": "integer"}, "bits": {"type": "integer"}, "permutations": {"type": "integer"}, "explain": {"type": "object"}}},
                "DocumentRequest": {"type": "object", "required": ["id"], "additionalProperties": false, "description": "Exactly one of text and fingerprint (SimHash) or signature (MinHash).",
                    "properties": {"id": {"type": "string", "minLength": 1, "maxLength": 1024}, "text": {"type": "string"}, "fingerprint": {"$ref": "#/components/schemas/Fingerprint"}, "signature": {"$ref": "#/components/schemas/Signature"}, "mode": mode, "k": k, "threshold": threshold, "metadata": {"description": "Any JSON, stored with the document."}, "features": {"type": "integer", "minimum": 0, "maximum": 4_294_967_294u64, "description": "With fingerprint only: how many features voted (the length the radius rule needs); without it the document counts as long. A text's are counted."}}},
                "BatchRequest": {"type": "object", "required": ["documents"], "additionalProperties": false,
                    "properties": {"documents": {"type": "array", "items": {"$ref": "#/components/schemas/DocumentRequest"}, "description": "Without mode, k or threshold (those are the batch's); at most the server's --max-batch."}, "mode": mode, "k": k, "threshold": threshold}},
                "Match": {"type": "object", "properties": {"id": {"type": "string"}, "distance": {"type": "integer", "description": "Differing bits (SimHash) or differing signature values (MinHash)."}, "similarity": {"type": "number", "description": "MinHash only: the estimated Jaccard similarity."}}},
                "Outcome": {"type": "object", "properties": {"id": {"type": "string"}, "fingerprint": {"$ref": "#/components/schemas/Fingerprint", "description": "SimHash only (a MinHash answer leaves the signature out)."}, "inserted": {"type": "boolean"}, "matches": {"type": "array", "items": {"$ref": "#/components/schemas/Match"}}}},
                "BatchResponse": {"type": "object", "properties": {"results": {"type": "array", "items": {"$ref": "#/components/schemas/Outcome"}}}},
                "SearchRequest": {"type": "object", "additionalProperties": false, "description": "Exactly one of text and fingerprint (SimHash) or signature (MinHash).",
                    "properties": {"text": {"type": "string"}, "fingerprint": {"$ref": "#/components/schemas/Fingerprint"}, "signature": {"$ref": "#/components/schemas/Signature"}, "k": k, "threshold": threshold, "limit": {"type": "integer", "minimum": 0, "default": 100}, "features": {"type": "integer", "minimum": 0, "maximum": 4_294_967_294u64, "description": "With fingerprint only: how many features voted (the length the radius rule needs); without it the document counts as long. A text's are counted."}}},
                "SearchResponse": {"type": "object", "properties": {"fingerprint": {"$ref": "#/components/schemas/Fingerprint"}, "k": {"type": "integer", "nullable": true, "description": "SimHash: the request's or the server's fixed k; null: the pipeline's radius rule."}, "threshold": {"type": "number", "description": "MinHash: the threshold used."}, "radius": {"type": "string", "description": "The rule used, as neardup prints it, e.g. k = 8 below 600 features, else 4; or Jaccard ≥ 0.5 (25 bands × 5 rows of 128 values)."}, "matches": {"type": "array", "items": {"$ref": "#/components/schemas/Match"}}}},
                "StoredDocument": {"type": "object", "properties": {"id": {"type": "string"}, "fingerprint": {"$ref": "#/components/schemas/Fingerprint"}, "signature": {"type": "string", "description": "MinHash data directories, instead of fingerprint."}, "inserted_at_ms": {"type": "integer"}, "content_hash": {"type": "string", "nullable": true}, "metadata": {}, "features": {"type": "integer", "nullable": true}}}
            }
        }
    })
}
