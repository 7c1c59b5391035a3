//! Arbitrary bytes as a .docx, .pdf, .html or .md document (the first byte
//! chooses), read by `neardup_io::documents::extract` within a small text
//! limit and a deadline: every input gives text or an `Unreadable` that
//! says why — never a crash, never past the limit. These readers read
//! uploads to `neardup serve`.
//!
//! `extract` catches a panic of the third-party parsers (pdf-extract has
//! assertions of its own) and reports the file as damaged; libFuzzer's
//! panic hook would abort on it all the same, so this target's hook
//! aborts only on a panic in neardup's own code.
#![no_main]

use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use neardup_io::documents::{extract, DocumentKind, Limits};

const LIMIT: u64 = 1 << 16;

fn ours(info: &std::panic::PanicHookInfo<'_>) -> bool {
    info.location().is_none_or(|l| l.file().contains("crates/io/") || l.file().contains("fuzz_targets"))
}

fuzz_target!(|data: &[u8]| {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            if ours(info) {
                eprintln!("{info}");
                std::process::abort();
            }
        }))
    });
    let Some((&sel, body)) = data.split_first() else { return };
    let kind = match sel % 4 {
        0 => DocumentKind::Docx,
        1 => DocumentKind::Pdf,
        2 => DocumentKind::Html,
        _ => DocumentKind::Markdown,
    };
    let limits = Limits { max_text_bytes: LIMIT, deadline: None }.within(Duration::from_secs(5));
    match extract(kind, body, &limits) {
        Ok(text) => assert!(text.len() as u64 <= LIMIT * 2, "{} bytes of text", text.len()),
        Err(e) => assert!(!e.to_string().is_empty()),
    }
});
