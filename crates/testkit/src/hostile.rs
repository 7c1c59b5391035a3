//! Hostile documents, made at test time (nothing large is committed): the
//! files issue 67 found taking the service down, and their relatives.
//!
//! Each is a complete, well-formed file (a cross-reference table with true
//! offsets) so that the reader gets past parsing to the hostile part.

use std::io::Write;

/// A PDF of `objects` (numbered from 1; object 1 is the catalog), each
/// given as its bytes between `N 0 obj` and `endobj`.
pub fn pdf_of(objects: &[Vec<u8>]) -> Vec<u8> {
    let mut out = b"%PDF-1.5\n".to_vec();
    let mut offsets = Vec::new();
    for (i, o) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
        out.extend_from_slice(o);
        out.extend_from_slice(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend_from_slice(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes());
    for o in offsets {
        out.extend_from_slice(format!("{o:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!("trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n", objects.len() + 1)
            .as_bytes(),
    );
    out
}

/// A stream object: `dict` entries (without `/Length`) and its bytes.
pub fn stream(dict: &str, bytes: &[u8]) -> Vec<u8> {
    let mut o = format!("<< {dict} /Length {} >>\nstream\n", bytes.len()).into_bytes();
    o.extend_from_slice(bytes);
    o.extend_from_slice(b"\nendstream");
    o
}

/// Text drawing operators for `text` at the top of a page (Helvetica).
pub fn text_ops(text: &str) -> String {
    let escaped = text.replace('\\', "\\\\").replace('(', "\\(").replace(')', "\\)");
    format!("BT /F1 12 Tf 72 720 Td ({escaped}) Tj ET\n")
}

/// The font object every page here uses, as `/F1`.
const FONT: &str = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>";

/// A one-page PDF whose page draws `contents` in Helvetica (`/F1`):
/// catalog 1, pages 2, page 3, content 4, font 5, then `more` from 6.
pub fn one_page(contents: &[u8], more: Vec<Vec<u8>>) -> Vec<u8> {
    one_page_with("", contents, more)
}

/// [`one_page`] with `filter` on its content stream (`contents` given
/// encoded).
fn one_page_with(filter: &str, contents: &[u8], more: Vec<Vec<u8>>) -> Vec<u8> {
    let mut objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>"
            .to_vec(),
        stream(filter, contents),
        FONT.as_bytes().to_vec(),
    ];
    objects.extend(more);
    pdf_of(&objects)
}

/// A one-page PDF saying `text`.
pub fn pdf_saying(text: &str) -> Vec<u8> {
    one_page(text_ops(text).as_bytes(), Vec::new())
}

/// A PDF whose page draws a form that draws itself (`/X1 Do` inside X1,
/// X1's resources naming X1): 838 bytes that overflowed the reader's
/// stack. Its text, `text`, is drawn once by the form.
pub fn self_drawing_form(text: &str) -> Vec<u8> {
    let form = format!("{}/X1 Do\n", text_ops(text));
    pdf_of(&[
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /XObject << /X1 6 0 R >> >> >>"
            .to_vec(),
        stream("", b"/X1 Do\n"),
        FONT.as_bytes().to_vec(),
        stream(
            "/Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> /XObject << /X1 6 0 R >> >>",
            form.as_bytes(),
        ),
    ])
}

/// A PDF whose forms draw each other in a lattice: form `i` draws form
/// `i + 1` twice, `levels` deep, so drawing them all takes `2^levels`
/// drawings (the billion laughs of PDF). The last form says `text`.
pub fn form_lattice(levels: usize, text: &str) -> Vec<u8> {
    let mut objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /XObject << /X 6 0 R >> >> >>"
            .to_vec(),
        stream("", b"/X Do\n"),
        FONT.as_bytes().to_vec(),
    ];
    for i in 0..levels {
        let id = 6 + i;
        let body = if i + 1 == levels { text_ops(text) } else { "/X Do /X Do\n".to_owned() };
        let resources = format!("<< /Font << /F1 5 0 R >> /XObject << /X {} 0 R >> >>", id + 1);
        objects.push(stream(
            &format!("/Type /XObject /Subtype /Form /BBox [0 0 9 9] /Resources {resources}"),
            body.as_bytes(),
        ));
    }
    pdf_of(&objects)
}

/// A PDF whose page tree lists itself among its kids (next to its one
/// page, which says `text`).
pub fn self_listing_pages(text: &str) -> Vec<u8> {
    pdf_of(&[
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R 2 0 R 3 0 R] /Count 3 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>"
            .to_vec(),
        stream("", text_ops(text).as_bytes()),
        FONT.as_bytes().to_vec(),
    ])
}

/// `head`, then `inflated` spaces, then `tail`, through `z`.
fn spaces_into<W: Write>(mut z: W, head: &[u8], inflated: u64, tail: &[u8]) -> W {
    z.write_all(head).expect("in memory");
    let block = vec![b' '; 1 << 20];
    let mut left = inflated;
    while left > 0 {
        let n = left.min(block.len() as u64) as usize;
        z.write_all(&block[..n]).expect("in memory");
        left -= n as u64;
    }
    z.write_all(tail).expect("in memory");
    z
}

/// zlib of `head`, `inflated` spaces and `tail` (about 1000:1).
fn zlib_spaces(head: &[u8], inflated: u64, tail: &[u8]) -> Vec<u8> {
    let z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    spaces_into(z, head, inflated, tail).finish().expect("in memory")
}

/// A PDF whose one content stream is FlateDecode of `inflated` spaces (4
/// GiB fits in about 4 MB), after the text `text`.
pub fn flate_bomb(inflated: u64, text: &str) -> Vec<u8> {
    let deflated = zlib_spaces(text_ops(text).as_bytes(), inflated, b"");
    one_page_with("/Filter /FlateDecode", &deflated, Vec::new())
}

/// A PDF whose page tree nests `depth` `Pages` nodes deep before its one
/// page.
pub fn deep_page_tree(depth: usize) -> Vec<u8> {
    let mut objects = vec![b"<< /Type /Catalog /Pages 2 0 R >>".to_vec()];
    // Objects 2 ..= depth + 1 are the nodes; then the page, its content
    // and the font.
    let page = depth + 2;
    for i in 0..depth {
        let id = 2 + i;
        let kid = if i + 1 == depth { page } else { id + 1 };
        objects.push(format!("<< /Type /Pages /Kids [{kid} 0 R] /Count 1 >>").into_bytes());
    }
    objects.push(
        format!(
            "<< /Type /Page /Parent {} 0 R /MediaBox [0 0 612 792] /Contents {} 0 R /Resources << /Font << /F1 {} 0 R >> >> >>",
            page - 1,
            page + 1,
            page + 2
        )
        .into_bytes(),
    );
    objects.push(stream("", text_ops("deep").as_bytes()));
    objects.push(FONT.as_bytes().to_vec());
    pdf_of(&objects)
}

/// A PDF 1.5 whose object stream (`/Type /ObjStm`, which PDF libraries
/// unpack as they load the file, before any page is read) inflates to
/// `inflated` spaces after the one object it holds.
pub fn object_stream_bomb(inflated: u64, text: &str) -> Vec<u8> {
    let held = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>";
    let header = b"7 0 ";
    let mut head = header.to_vec();
    head.extend_from_slice(held);
    let deflated = zlib_spaces(&head, inflated, b"");
    let objstm =
        stream(&format!("/Type /ObjStm /N 1 /First {} /Filter /FlateDecode", header.len()), &deflated);
    one_page(text_ops(text).as_bytes(), vec![objstm])
}

/// A `.docx` (a zip) whose `word/document.xml` inflates to `inflated`
/// spaces inside one paragraph that says `text`.
pub fn docx_bomb(inflated: u64, text: &str) -> Vec<u8> {
    use zip::write::SimpleFileOptions;
    let head = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><w:document xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\"><w:body><w:p><w:r><w:t>{text}"
    );
    let tail = b"</w:t></w:r></w:p></w:body></w:document>";
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let deflated = SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .compression_level(Some(9))
        .large_file(inflated >= u32::MAX as u64);
    zip.start_file("[Content_Types].xml", deflated).expect("in memory");
    zip.write_all(CONTENT_TYPES.as_bytes()).expect("in memory");
    zip.start_file("word/document.xml", deflated).expect("in memory");
    let zip = spaces_into(zip, head.as_bytes(), inflated, tail);
    zip.finish().expect("in memory").into_inner()
}

/// A zip's `[Content_Types].xml` for a Word document.
const CONTENT_TYPES: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\"><Override PartName=\"/word/document.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml\"/></Types>";

/// An HTML page nested `depth` elements deep around `text`.
pub fn deep_html(depth: usize, text: &str) -> Vec<u8> {
    let mut page = String::from("<html><body>");
    page.push_str(&"<div>".repeat(depth));
    page.push_str(text);
    page.push_str(&"</div>".repeat(depth));
    page.push_str("</body></html>");
    page.into_bytes()
}
