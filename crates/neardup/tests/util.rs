//! Test helpers: the bundled test documents.

use std::path::PathBuf;

/// A document from `testdata/`.
pub struct Doc {
    pub id: String,
    pub text: String,
}

pub fn testdata(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata").join(name)
}

/// The documents of a `testdata/*.jsonl` file.
pub fn docs(name: &str) -> Vec<Doc> {
    let text = std::fs::read_to_string(testdata(name)).expect("testdata is in the repository");
    text.lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("valid JSONL");
            Doc { id: v["id"].as_str().unwrap().to_owned(), text: v["text"].as_str().unwrap().to_owned() }
        })
        .collect()
}

/// English and Chinese test documents together.
pub fn all_docs() -> Vec<Doc> {
    let mut d = docs("docs_en.jsonl");
    d.extend(docs("docs_zh.jsonl"));
    d
}
