//! `.pdf`: the text layer, page by page, by `pdf-extract` (fonts' encodings
//! and ToUnicode maps, so Chinese PDFs read as text), guarded: the text is
//! bounded and the deadline checked at every character. A PDF with pages
//! but no text is a scan, and says so.

use pdf_extract::{Document, MediaBox, OutputDev, OutputError, PlainTextOutput, Transform};

use super::{looks_like, DocumentKind, Limits, Unreadable};

/// Why the guard stopped the reader (carried through pdf-extract's error).
const STOP: &str = "neardup: stop";

/// pdf-extract's plain-text layout, within the limits.
struct Guarded<'a> {
    inner: PlainTextOutput<&'a mut String>,
    limits: &'a Limits,
    bytes: u64,
    stopped: Option<Unreadable>,
}

impl Guarded<'_> {
    fn stop(&mut self, why: Unreadable) -> OutputError {
        self.stopped = Some(why);
        OutputError::IoError(std::io::Error::other(STOP))
    }
}

impl OutputDev for Guarded<'_> {
    fn begin_page(
        &mut self,
        page: u32,
        media_box: &MediaBox,
        art_box: Option<(f64, f64, f64, f64)>,
    ) -> Result<(), OutputError> {
        if let Err(e) = self.limits.check_time() {
            return Err(self.stop(e));
        }
        self.inner.begin_page(page, media_box, art_box)
    }

    fn end_page(&mut self) -> Result<(), OutputError> {
        self.inner.end_page()
    }

    fn output_character(
        &mut self,
        trm: &Transform,
        width: f64,
        spacing: f64,
        font_size: f64,
        char: &str,
    ) -> Result<(), OutputError> {
        // Each character may bring a line break and a space with it.
        self.bytes += char.len() as u64 + 2;
        if self.bytes > self.limits.max_text_bytes {
            let limit = self.limits.max_text_bytes;
            return Err(self.stop(Unreadable::TooLarge { what: "its text".into(), limit }));
        }
        if self.bytes % 1024 < 8 {
            if let Err(e) = self.limits.check_time() {
                return Err(self.stop(e));
            }
        }
        self.inner.output_character(trm, width, spacing, font_size, char)
    }

    fn begin_word(&mut self) -> Result<(), OutputError> {
        self.inner.begin_word()
    }

    fn end_word(&mut self) -> Result<(), OutputError> {
        self.inner.end_word()
    }

    fn end_line(&mut self) -> Result<(), OutputError> {
        self.inner.end_line()
    }
}

pub(super) fn text(bytes: &[u8], limits: &Limits) -> Result<String, Unreadable> {
    let title = DocumentKind::Pdf.title();
    if !bytes.starts_with(b"%PDF") {
        return Err(Unreadable::NotA { expected: title.into(), found: looks_like(bytes) });
    }
    let damaged = |e: &dyn std::fmt::Display| {
        Unreadable::Damaged(format!(
            "{title} that cannot be read ({e}): damaged or cut short; open it and save or print it to PDF again"
        ))
    };
    let mut doc = Document::load_mem(bytes).map_err(|e| damaged(&e))?;
    limits.check_time()?;
    if doc.is_encrypted() && doc.decrypt("").is_err() {
        return Err(Unreadable::Damaged(format!(
            "{title} protected by a password; remove the protection (print it to PDF) and try again"
        )));
    }
    let pages = super::pdf_tidy::tidy(&mut doc, limits)?;
    if pages == 0 {
        return Err(damaged(&"it has no pages"));
    }
    let mut text = String::new();
    let mut out = Guarded { inner: PlainTextOutput::new(&mut text), limits, bytes: 0, stopped: None };
    let result = pdf_extract::output_doc(&doc, &mut out);
    if let Some(why) = out.stopped.take() {
        return Err(why);
    }
    result.map_err(|e| damaged(&e))?;
    let text = text.trim().to_owned();
    if text.is_empty() {
        return Err(Unreadable::NoTextLayer { pages });
    }
    Ok(text)
}
