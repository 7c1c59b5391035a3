//! Shared by the bench examples: reads a JSONL corpus's `text` fields.

/// The texts of `path` (JSONL with a `text` field), in order, up to
/// `max_bytes` of text; returns them and their total bytes.
pub fn load(path: &str, max_bytes: usize) -> (Vec<String>, usize) {
    let mut texts = Vec::new();
    let mut bytes = 0;
    for line in std::fs::read_to_string(path).expect("read corpus").lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("JSONL");
        let t = v["text"].as_str().expect("text field").to_owned();
        if bytes + t.len() > max_bytes {
            break;
        }
        bytes += t.len();
        texts.push(t);
    }
    (texts, bytes)
}
