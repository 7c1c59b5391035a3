//! `.html`: the text a browser shows, parsed by html5ever: scripts,
//! styles, templates and `<head>` dropped; block elements (paragraphs,
//! headings, list items, table rows, …) each a block; `<br>` a line break.
//! White space inside a block collapses as a browser collapses it, except
//! in `<pre>`.

use ego_tree::iter::Edge;
use html5ever::tendril::{StrTendril, TendrilSink};
use scraper::{Html, HtmlTreeSink, Node};

use super::{Bounded, DocumentKind, Limits, Unreadable};

/// Elements whose content is not shown.
const HIDDEN: &[&str] =
    &["head", "script", "style", "template", "noscript", "svg", "math", "iframe", "object"];

/// Elements that start and end a block of text.
const BLOCKS: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "body",
    "caption",
    "dd",
    "details",
    "dialog",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "li",
    "main",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
    "summary",
    "table",
    "tr",
    "ul",
];

pub(super) fn text(bytes: &[u8], limits: &Limits) -> Result<String, Unreadable> {
    // html5ever reads UTF-8; a page in another encoding is refused with
    // what to do rather than read as mojibake.
    let source = std::str::from_utf8(bytes).map_err(|e| {
        Unreadable::Damaged(format!(
            "{} that is not UTF-8 (invalid byte at {}); save it as UTF-8 (for example `iconv -f GB18030 -t UTF-8`)",
            DocumentKind::Html.title(),
            e.valid_up_to()
        ))
    })?;
    let page = parse(source, limits)?;
    let mut out = Bounded::new(limits, "its text");
    // Nesting depth inside hidden elements and inside <pre>.
    let (mut hidden, mut pre) = (0usize, 0usize);
    // Iterative: a page nested a million deep cannot overflow the stack.
    for (n, edge) in page.tree.root().traverse().enumerate() {
        if n % 4096 == 0 {
            limits.check_time()?;
        }
        match edge {
            Edge::Open(node) => match node.value() {
                Node::Element(e) => {
                    let name = e.name();
                    if HIDDEN.contains(&name) {
                        hidden += 1;
                    } else if hidden == 0 {
                        if name == "pre" {
                            pre += 1;
                        }
                        if BLOCKS.contains(&name) {
                            out.end_block();
                        } else if name == "br" {
                            out.push("\n")?;
                        }
                    }
                }
                Node::Text(t) if hidden == 0 => {
                    if pre > 0 {
                        out.push(t)?;
                    } else {
                        push_collapsed(&mut out, t)?;
                    }
                }
                _ => {}
            },
            Edge::Close(node) => {
                if let Node::Element(e) = node.value() {
                    let name = e.name();
                    if HIDDEN.contains(&name) {
                        hidden -= 1;
                    } else if hidden == 0 {
                        if name == "pre" {
                            pre -= 1;
                        }
                        if BLOCKS.contains(&name) {
                            out.end_block();
                        } else if matches!(name, "td" | "th") {
                            out.push("\t")?;
                        }
                    }
                }
            }
        }
    }
    Ok(out.finish())
}

/// Bytes fed to the parser between looks at the clock.
const CHUNK: usize = 32 << 10;

/// The page's tree, parsed a chunk at a time so that the deadline holds:
/// the HTML tree builder's cost grows with nesting depth times elements
/// (as in browsers, which cap the depth), and a page nested tens of
/// thousands deep would otherwise hold a thread for minutes.
fn parse(source: &str, limits: &Limits) -> Result<Html, Unreadable> {
    let mut parser =
        html5ever::driver::parse_document(HtmlTreeSink::new(Html::new_document()), Default::default());
    let mut rest = source;
    while !rest.is_empty() {
        let mut cut = rest.len().min(CHUNK);
        while !rest.is_char_boundary(cut) {
            cut += 1;
        }
        parser.process(StrTendril::from_slice(&rest[..cut]));
        rest = &rest[cut..];
        limits.check_time()?;
    }
    Ok(parser.finish())
}

/// Pushes `t` with runs of white space as one space, none at the start of
/// a line.
fn push_collapsed(out: &mut Bounded<'_>, t: &str) -> Result<(), Unreadable> {
    let mut first = true;
    let line_start = |out: &Bounded<'_>| out.text.is_empty() || out.text.ends_with(['\n', ' ', '\t']);
    if t.starts_with(|c: char| c.is_ascii_whitespace()) && !line_start(out) {
        out.push(" ")?;
    }
    for word in t.split_ascii_whitespace() {
        if !first {
            out.push(" ")?;
        }
        out.push(word)?;
        first = false;
    }
    if !first && t.ends_with(|c: char| c.is_ascii_whitespace()) {
        out.push(" ")?;
    }
    Ok(())
}
