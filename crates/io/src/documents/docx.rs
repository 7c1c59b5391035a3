//! `.docx`: the text runs (`w:t`) of `word/document.xml`, a paragraph
//! (`w:p`) a block, tabs and breaks kept. Deleted text of tracked changes
//! (`w:delText`) and field codes (`w:instrText`) are not text.

use std::io::{Cursor, Read};

use quick_xml::events::Event;

use super::{looks_like, Bounded, DocumentKind, Limits, Unreadable};

/// The part holding a Word document's body.
const BODY: &str = "word/document.xml";

pub(super) fn text(bytes: &[u8], limits: &Limits) -> Result<String, Unreadable> {
    let title = DocumentKind::Docx.title();
    if !bytes.starts_with(b"PK") {
        return Err(Unreadable::NotA { expected: title.into(), found: looks_like(bytes) });
    }
    let damaged = |e: &dyn std::fmt::Display| {
        Unreadable::Damaged(format!("{title} whose zip structure is damaged ({e}); open and save it again"))
    };
    let mut zip = zip::ZipArchive::new(Cursor::new(bytes)).map_err(|e| damaged(&e))?;
    let entry = match zip.by_name(BODY) {
        Ok(e) => e,
        Err(zip::result::ZipError::FileNotFound) => {
            return Err(Unreadable::NotA {
                expected: title.into(),
                found: format!("a zip archive without {BODY} (another Office format, or any zip)"),
            })
        }
        Err(e) => return Err(damaged(&e)),
    };
    // The XML is read inflated up to the limit, never past it: a zip bomb
    // stops here, whatever its entry claims.
    let mut xml = Vec::new();
    let limit = limits.inflation();
    entry.take(limit + 1).read_to_end(&mut xml).map_err(|e| damaged(&e))?;
    if xml.len() as u64 > limit {
        return Err(Unreadable::Bomb { what: format!("its {BODY}").into(), limit });
    }
    runs(&xml, limits).map_err(|e| match e {
        Unreadable::Damaged(m) => {
            Unreadable::Damaged(format!("{title} whose {BODY} is not well-formed XML ({m})"))
        }
        e => e,
    })
}

/// The text of a WordprocessingML body.
fn runs(xml: &[u8], limits: &Limits) -> Result<String, Unreadable> {
    let xml = std::str::from_utf8(xml).map_err(|e| Unreadable::Damaged(format!("not UTF-8: {e}")))?;
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut out = Bounded::new(limits, "its text");
    let mut in_text = false;
    for n in 0u64.. {
        if n % 4096 == 0 {
            limits.check_time()?;
        }
        match reader.read_event().map_err(|e| Unreadable::Damaged(e.to_string()))? {
            Event::Start(e) if e.local_name().as_ref() == "t" => in_text = true,
            Event::End(e) => match e.local_name().as_ref() {
                "t" => in_text = false,
                "p" => out.end_block(),
                _ => {}
            },
            Event::Empty(e) => match e.local_name().as_ref() {
                "tab" => out.push("\t")?,
                "br" | "cr" => out.push("\n")?,
                "p" => out.end_block(),
                _ => {}
            },
            Event::Text(t) if in_text => out.push(&t.xml10_content())?,
            Event::CData(t) if in_text => out.push(&t.xml10_content())?,
            Event::GeneralRef(r) if in_text => {
                let resolved = match r.resolve_char_ref() {
                    Ok(Some(c)) => Some(c.to_string()),
                    _ => quick_xml::escape::resolve_xml_entity(&r).map(str::to_owned),
                };
                match resolved {
                    Some(s) => out.push(&s)?,
                    None => return Err(Unreadable::Damaged(format!("unknown entity &{};", &*r))),
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(out.finish())
}
