use std::io::Write;

use super::*;

/// A .docx holding `body` as its document part (and the parts Word needs
/// beside it).
pub(crate) fn docx(body: &str) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default();
    zip.start_file("[Content_Types].xml", opts).unwrap();
    zip.write_all(b"<?xml version=\"1.0\"?><Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\"/>").unwrap();
    zip.start_file(BODY_PART, opts).unwrap();
    zip.write_all(body.as_bytes()).unwrap();
    zip.finish().unwrap().into_inner()
}

const BODY_PART: &str = "word/document.xml";

fn word(paragraphs: &[&str]) -> String {
    let ps: String = paragraphs
        .iter()
        .map(|p| format!("<w:p><w:r><w:t xml:space=\"preserve\">{p}</w:t></w:r></w:p>"))
        .collect();
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\
         <w:document xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\"><w:body>{ps}</w:body></w:document>"
    )
}

#[test]
fn docx_gives_its_paragraphs_as_blocks() {
    let bytes = docx(
        &word(&["第一段。Hello &amp; bye.", "Second <w:tab/>one."])
            .replace("<w:tab/>", "</w:t><w:tab/><w:t>"),
    );
    let text = extract(DocumentKind::Docx, &bytes, &Limits::default()).unwrap();
    assert_eq!(text, "第一段。Hello & bye.\n\nSecond \tone.");
}

#[test]
fn docx_skips_deleted_text_and_field_codes() {
    let body = word(&["kept"]).replace(
        "</w:r></w:p>",
        "</w:r><w:r><w:delText>gone</w:delText><w:instrText>PAGE</w:instrText><w:t>.</w:t></w:r></w:p>",
    );
    assert_eq!(extract(DocumentKind::Docx, &docx(&body), &Limits::default()).unwrap(), "kept.");
}

#[test]
fn a_zip_that_is_not_a_docx_says_so() {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    zip.start_file("content.xml", zip::write::SimpleFileOptions::default()).unwrap();
    zip.write_all(b"<x/>").unwrap();
    let bytes = zip.finish().unwrap().into_inner();
    let e = extract(DocumentKind::Docx, &bytes, &Limits::default()).unwrap_err().to_string();
    assert!(e.contains("without word/document.xml"), "{e}");
}

#[test]
fn a_docx_bomb_stops_at_the_limit() {
    // 64 MiB of one paragraph, deflated to a few hundred KB.
    let big = "a".repeat(64 << 20);
    let bytes = docx(&word(&[&big]));
    assert!(bytes.len() < 1 << 20, "{}", bytes.len());
    let limits = Limits { max_text_bytes: 1 << 20, deadline: None };
    let e = extract(DocumentKind::Docx, &bytes, &limits).unwrap_err();
    assert_eq!(e, Unreadable::Bomb { what: "its word/document.xml".into(), limit: 4 << 20 });
}

#[test]
fn renamed_files_say_what_they_are() {
    let e = extract(DocumentKind::Pdf, b"MZ\x90\x00 a program", &Limits::default()).unwrap_err().to_string();
    assert!(e.starts_with("not a PDF: it is a program"), "{e}");
    let e = extract(DocumentKind::Docx, b"%PDF-1.4 ...", &Limits::default()).unwrap_err().to_string();
    assert!(e.starts_with("not a Word document (.docx): it is a PDF"), "{e}");
    let e = extract(DocumentKind::Docx, b"PK\x03\x04 cut short", &Limits::default()).unwrap_err().to_string();
    assert!(e.contains("zip structure is damaged"), "{e}");
}

#[test]
fn a_broken_pdf_is_damaged_not_a_crash() {
    for bytes in [
        &b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\nxref\n0 9\nbroken\ntrailer\n<<>>\n%%EOF"[..],
        b"%PDF-",
        b"%PDF-1.7\n%\xff\xff\n",
    ] {
        let e = extract(DocumentKind::Pdf, bytes, &Limits::default()).unwrap_err();
        assert!(matches!(e, Unreadable::Damaged(_)), "{e}");
    }
}

/// A one-page PDF with `text` in Helvetica (ASCII only), or no text at all.
pub(crate) fn pdf(lines: &[&str]) -> Vec<u8> {
    let mut content = String::from("BT /F1 12 Tf 72 720 Td 14 TL\n");
    for l in lines {
        content += &format!("({}) Tj T*\n", l.replace('\\', "\\\\").replace('(', "\\(").replace(')', "\\)"));
    }
    content += "ET\n";
    neardup_testkit::hostile::one_page(content.as_bytes(), Vec::new())
}

#[test]
fn pdf_gives_its_text_layer() {
    let bytes = pdf(&["The first line of a paper.", "And its second line (here)."]);
    let text = extract(DocumentKind::Pdf, &bytes, &Limits::default()).unwrap();
    assert_eq!(
        text.split_whitespace().collect::<Vec<_>>().join(" "),
        "The first line of a paper. And its second line (here)."
    );
}

#[test]
fn a_pdf_without_text_is_a_scan() {
    let e = extract(DocumentKind::Pdf, &pdf(&[]), &Limits::default()).unwrap_err();
    assert_eq!(e, Unreadable::NoTextLayer { pages: 1 });
    assert!(e.to_string().contains("OCR"), "{e}");
}

#[test]
fn a_pdf_stops_at_its_deadline_and_its_limit() {
    let bytes = pdf(&["Some text on the page."]);
    let past = Limits { deadline: Some(Instant::now()), ..Limits::default() };
    assert_eq!(extract(DocumentKind::Pdf, &bytes, &past).unwrap_err(), Unreadable::TimedOut);
    let small = Limits { max_text_bytes: 8, deadline: None };
    assert!(matches!(extract(DocumentKind::Pdf, &bytes, &small).unwrap_err(), Unreadable::TooLarge { .. }));
}

#[test]
fn html_drops_scripts_and_keeps_blocks() {
    let page = "<!doctype html><title>t</title><script>var x = '<p>no</p>';</script>\
                <body><p>One   two\nthree.</p><ul><li>五 六</li><li>x<br>y</li></ul><pre>a  b\n c</pre>\
                <table><tr><td>c1</td><td>c2</td></tr></table><p>unclosed <b>bold &amp; &#20320; &lt;x&gt;";
    let text = extract(DocumentKind::Html, page.as_bytes(), &Limits::default()).unwrap();
    assert_eq!(text, "One two three.\n\n五 六\n\nx\ny\n\na  b\n c\n\nc1\tc2\n\nunclosed bold & 你 <x>");
}

#[test]
fn html_nested_deep_reads_or_stops_at_its_deadline() {
    let page = format!("{}deep{}", "<div>".repeat(2000), "</div>".repeat(10));
    let text = extract(DocumentKind::Html, page.as_bytes(), &Limits::default()).unwrap();
    assert_eq!(text, "deep");
    // A million deep would cost a tree builder hours; the tokenizer is linear.
    let page = format!("{}deep", "<div>".repeat(1_000_000));
    let start = Instant::now();
    let limits = Limits::default().within(Duration::from_secs(20));
    assert_eq!(extract(DocumentKind::Html, page.as_bytes(), &limits).unwrap(), "deep");
    assert!(start.elapsed() < Duration::from_secs(20), "{:?}", start.elapsed());
    let past = Limits { deadline: Some(Instant::now()), ..Limits::default() };
    assert_eq!(extract(DocumentKind::Html, page.as_bytes(), &past).unwrap_err(), Unreadable::TimedOut);
}

#[test]
fn markdown_drops_its_markup() {
    let md = "# Title\n\nSome *emphasis* and `code` and [a link](http://x.invalid).\nSame paragraph.\n\n- item one\n- item two\n\n```\nfn main() {}\n```\n";
    let text = extract(DocumentKind::Markdown, md.as_bytes(), &Limits::default()).unwrap();
    assert_eq!(
        text,
        "Title\n\nSome emphasis and code and a link. Same paragraph.\n\nitem one\n\nitem two\n\nfn main() {}"
    );
}

#[test]
fn kinds_by_name_and_first_bytes() {
    assert_eq!(DocumentKind::of_name(Path::new("a/Paper.DOCX")), Some(DocumentKind::Docx));
    assert_eq!(DocumentKind::of_name(Path::new("x.htm")), Some(DocumentKind::Html));
    assert_eq!(DocumentKind::of_name(Path::new("x.txt")), None);
    assert_eq!(DocumentKind::of_magic(b"%PDF-1.7"), Some(DocumentKind::Pdf));
    assert_eq!(DocumentKind::of_magic(b"PK\x03\x04"), Some(DocumentKind::Docx));
    assert_eq!(DocumentKind::of_magic(b"hello"), None);
}

#[test]
fn a_folder_of_papers_reads_each_file_as_one_document() {
    use crate::{read_all, read_document, ReadOptions};
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("a.docx"), docx(&word(&["A Word paper."]))).unwrap();
    std::fs::write(d.join("b.pdf"), pdf(&["A PDF paper."])).unwrap();
    std::fs::write(d.join("c.html"), "<p>An HTML paper.</p>").unwrap();
    std::fs::write(d.join("d.md"), "# A Markdown paper").unwrap();
    std::fs::write(d.join("e.txt"), "A text paper.").unwrap();
    // Named as text, but a PDF by its first bytes; and a renamed program.
    std::fs::write(d.join("f.txt"), pdf(&["A PDF named .txt."])).unwrap();
    std::fs::write(d.join("g.pdf"), b"MZ\x90\x00\x03\x00\x00\x00 a program").unwrap();
    std::fs::write(d.join("h.pdf"), pdf(&[])).unwrap();
    let opts = ReadOptions { paths: vec![d.to_owned()], ..ReadOptions::default() };
    let mut got = Vec::new();
    read_all(&opts, |item| -> Result<(), crate::Error> {
        got.push(match item {
            Ok(r) => format!(
                "{}: {}",
                r.id.as_str().unwrap().rsplit('/').next().unwrap(),
                r.text.split_whitespace().collect::<Vec<_>>().join(" ")
            ),
            Err(b) => format!("{}: ERROR {}", b.origin.rsplit('/').next().unwrap(), b.message),
        });
        Ok(())
    })
    .unwrap();
    assert_eq!(
        got[..6],
        [
            "a.docx: A Word paper.",
            "b.pdf: A PDF paper.",
            "c.html: An HTML paper.",
            "d.md: A Markdown paper",
            "e.txt: A text paper.",
            "f.txt: A PDF named .txt.",
        ]
    );
    assert!(got[6].starts_with("g.pdf: ERROR not a PDF: it is a program"), "{}", got[6]);
    assert!(got[7].starts_with("h.pdf: ERROR a PDF without a text layer (1 page(s)"), "{}", got[7]);
    let r = read_document(&d.join("a.docx"), 1 << 20, false).unwrap();
    assert_eq!(r.text, "A Word paper.");
    let e = read_document(&d.join("h.pdf"), 1 << 20, false).unwrap_err();
    assert!(e.message.contains("OCR"), "{e}");
    let e = read_document(&d.join("b.pdf"), 100, false).unwrap_err();
    assert!(e.message.contains("over the limit of 100"), "{e}");
}

#[test]
fn files_as_they_come_read_by_first_bytes_then_name() {
    let l = Limits::default();
    assert_eq!(text_of_file("x.bin", &pdf(&["By magic."]), &l).unwrap().0, Some(DocumentKind::Pdf));
    assert_eq!(
        text_of_file("x.md", b"# Head", &l).unwrap(),
        (Some(DocumentKind::Markdown), "Head".to_owned())
    );
    assert_eq!(text_of_file("x", "纯文本".as_bytes(), &l).unwrap(), (None, "纯文本".to_owned()));
    let e = text_of_file("photo.txt", b"\x89PNG\r\n\x1a\n\0\0", &l).unwrap_err().to_string();
    assert!(e.starts_with("not a text, .docx, .pdf, .html or .md file: it is an image"), "{e}");
    let e = text_of_file("gbk.txt", b"\xc4\xe3\xba\xc3", &l).unwrap_err().to_string();
    assert!(e.contains("not UTF-8 (invalid byte at 0)"), "{e}");
}

mod hostile {
    //! The files that took the service down (issue 67), read in this
    //! process: each a clear error, or its text read once.
    use super::*;
    use neardup_testkit::hostile;

    fn words(t: &str) -> String {
        t.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn a_form_that_draws_itself_is_drawn_once() {
        let bytes = hostile::self_drawing_form("Drawn once.");
        let text = extract(DocumentKind::Pdf, &bytes, &Limits::default()).unwrap();
        assert_eq!(words(&text), "Drawn once.");
    }

    #[test]
    fn a_lattice_of_forms_is_refused_not_drawn_for_ever() {
        let e = extract(DocumentKind::Pdf, &hostile::form_lattice(40, "x"), &Limits::default()).unwrap_err();
        assert!(e.to_string().contains("draws its forms more than 100000 times"), "{e}");
        // A small lattice is a document like any other: 2^3 drawings of
        // its last form.
        let text = extract(DocumentKind::Pdf, &hostile::form_lattice(4, "leaf"), &Limits::default()).unwrap();
        assert_eq!(text.matches("leaf").count(), 8, "{text}");
    }

    #[test]
    fn a_page_tree_that_lists_itself_reads_each_page_once() {
        let text = extract(DocumentKind::Pdf, &hostile::self_listing_pages("Only once."), &Limits::default())
            .unwrap();
        assert_eq!(words(&text), "Only once.");
    }

    #[test]
    fn a_page_tree_too_deep_is_refused_and_a_deep_one_reads() {
        let text = extract(DocumentKind::Pdf, &hostile::deep_page_tree(20), &Limits::default()).unwrap();
        assert_eq!(words(&text), "deep");
        let e = extract(DocumentKind::Pdf, &hostile::deep_page_tree(5000), &Limits::default()).unwrap_err();
        assert!(e.to_string().contains("page tree nests more than 32 deep"), "{e}");
    }

    #[test]
    fn a_flate_bomb_stops_at_the_inflation_limit() {
        // 64 MiB of spaces (64 KB on disk) against 1 MiB of text: 4 MiB of
        // inflated streams at most.
        let bytes = hostile::flate_bomb(64 << 20, "Before the bomb.");
        assert!(bytes.len() < 200_000, "{}", bytes.len());
        let small = Limits { max_text_bytes: 1 << 20, deadline: None };
        let e = extract(DocumentKind::Pdf, &bytes, &small).unwrap_err();
        assert_eq!(e, Unreadable::Bomb { what: "its compressed stream 4 0 R".into(), limit: 4 << 20 });
        let m = e.to_string();
        assert!(
            m.contains("decompression bomb") && m.contains("4 MiB") && m.contains("--max-doc-bytes"),
            "{m}"
        );
        // Under a limit it fits, it is a page with text.
        let text = extract(DocumentKind::Pdf, &bytes, &Limits::default()).unwrap();
        assert_eq!(words(&text), "Before the bomb.");
    }

    #[test]
    fn sizes_are_in_units() {
        assert_eq!(crate::units(67108864), "64 MiB");
        assert_eq!(crate::units(1536), "1.5 KiB");
        assert_eq!(crate::units(100), "100 bytes");
        assert_eq!(crate::units(200 << 20), "200 MiB");
        let e = Unreadable::TooLarge { what: "the text".into(), limit: 10 << 20 };
        assert!(e.to_string().contains("over the limit of 10 MiB"), "{e}");
    }
}

#[test]
fn every_extension_named_is_a_kind_and_plain_text_is_held_to_the_text_limit() {
    for ext in DocumentKind::EXTENSIONS {
        assert!(DocumentKind::of_name(Path::new(&format!("a.{ext}"))).is_some(), "{ext}");
        assert!(DocumentKind::of_name(Path::new(&format!("A.{}", ext.to_uppercase()))).is_some(), "{ext}");
    }
    assert_eq!(DocumentKind::of_name(Path::new("a.txt")), None);
    assert_eq!(file_limit(None, 32 << 20, 10 << 20), 10 << 20);
    assert_eq!(file_limit(Some(DocumentKind::Pdf), 32 << 20, 10 << 20), 32 << 20);
    assert_eq!(file_limit(None, 1 << 20, 10 << 20), 1 << 20);
    assert_eq!(kind_of_file("paper.txt", b"%PDF-1.4"), Some(DocumentKind::Pdf));
    assert_eq!(kind_of_file("paper.txt", b"hello"), None);
    // What a file over its limit is told: the size in units.
    let e = text_of_file("big.txt", &vec![b'a'; 2048], &Limits { max_text_bytes: 1024, deadline: None });
    assert!(e.unwrap_err().to_string().contains("1 KiB"));
}
