//! Text out of HTML: the `html` normalizer.
//!
//! A page and the text it shows should get the same fingerprint. Tags,
//! comments and the doctype go; elements that are not content (`head`,
//! `script`, `style`, `nav`, `header`, `footer`, `aside`, `noscript`,
//! `template`, `svg`) go with their contents; when the page marks its main
//! content (`<main>` or `<article>`), only that is kept, as readability
//! tools do. Block elements end a line; inline ones join their text.
//! Character references (`&amp;`, `&#20320;`) are decoded.
//!
//! Only known HTML element names count as tags, so `#include <stdio.h>` or
//! `a <b> c` in prose is left alone, and text without any tag is returned
//! borrowed and unchanged.

use std::borrow::Cow;

/// Elements dropped with everything inside them.
const SKIPPED: &[&str] =
    &["head", "script", "style", "nav", "header", "footer", "aside", "noscript", "template", "svg"];

/// Elements whose contents are the page's main content.
const MAIN: &[&str] = &["main", "article"];

/// Elements that start or end a line of text.
const BLOCK: &[&str] = &[
    "address",
    "blockquote",
    "body",
    "br",
    "dd",
    "details",
    "dialog",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "html",
    "li",
    "main",
    "article",
    "ol",
    "p",
    "pre",
    "section",
    "summary",
    "table",
    "tbody",
    "td",
    "tfoot",
    "th",
    "thead",
    "title",
    "tr",
    "ul",
    "option",
    "select",
    "textarea",
    "caption",
    "center",
    "frameset",
    "legend",
    "menu",
    "output",
    "picture",
    "video",
    "audio",
    "iframe",
    "object",
    "canvas",
    "map",
    "meta",
    "link",
    "base",
];

/// Inline elements: their tags vanish without a break.
const INLINE: &[&str] = &[
    "a", "abbr", "acronym", "b", "bdi", "bdo", "big", "cite", "code", "data", "del", "dfn", "em", "font",
    "i", "img", "input", "ins", "kbd", "label", "mark", "q", "rp", "rt", "ruby", "s", "samp", "small",
    "span", "strike", "strong", "sub", "sup", "time", "tt", "u", "var", "wbr", "button", "source", "track",
    "area", "col", "colgroup", "embed", "param", "nobr",
];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Skip,
    Main,
    Block,
    Inline,
}

fn kind(name: &str) -> Option<Kind> {
    let is = |list: &[&str]| list.iter().any(|e| e.eq_ignore_ascii_case(name));
    [(SKIPPED, Kind::Skip), (MAIN, Kind::Main), (BLOCK, Kind::Block), (INLINE, Kind::Inline)]
        .into_iter()
        .find_map(|(list, k)| is(list).then_some(k))
}

/// One piece of markup found at a `<`.
enum Markup<'a> {
    /// `<!-- … -->`, `<!doctype …>`, `<?…?>`: dropped. The length to skip.
    Ignorable(usize),
    /// A known element's start or end tag: its name, whether it closes, and
    /// the tag's length.
    Tag { name: &'a str, kind: Kind, close: bool, len: usize },
}

/// The start of a known element's tag at `s[0] == '<'`: its name, kind,
/// whether it closes, and where the name ends. Looks no further than the
/// name, so checking every `<` of a text stays linear.
fn tag_head(s: &str) -> Option<(&str, Kind, bool, usize)> {
    let b = s.as_bytes();
    let close = b.get(1) == Some(&b'/');
    let start = 1 + usize::from(close);
    let name_len = b.get(start..)?.iter().take_while(|c| c.is_ascii_alphanumeric()).count();
    if name_len == 0 || !b[start].is_ascii_alphabetic() {
        return None;
    }
    let name_end = start + name_len;
    if !matches!(b.get(name_end), None | Some(b'>' | b'/' | b' ' | b'\t' | b'\n' | b'\r')) {
        return None;
    }
    let name = &s[start..name_end];
    Some((name, kind(name)?, close, name_end))
}

/// The markup starting at `s[0] == '<'`, if it is markup. An unterminated
/// tag or comment runs to the end of the text, as in a browser.
fn markup(s: &str) -> Option<Markup<'_>> {
    let b = s.as_bytes();
    if let Some(rest) = s.strip_prefix("<!--") {
        let end = rest.find("-->").map_or(s.len(), |i| i + 7);
        return Some(Markup::Ignorable(end));
    }
    if b.len() > 2 && (b[1] == b'!' || b[1] == b'?') && b[2].is_ascii_alphabetic() {
        return Some(Markup::Ignorable(s.find('>').map_or(s.len(), |i| i + 1)));
    }
    let (name, kind, close, name_end) = tag_head(s)?;
    // The tag ends at the first '>' outside quoted attribute values.
    let mut quote = None;
    let mut end = s.len();
    for (i, &c) in b.iter().enumerate().skip(name_end) {
        match (quote, c) {
            (None, b'"' | b'\'') => quote = Some(c),
            (Some(q), _) if c == q => quote = None,
            (None, b'>') => {
                end = i + 1;
                break;
            }
            _ => {}
        }
    }
    Some(Markup::Tag { name, kind, close, len: end })
}

/// Whether `text` has at least one known HTML tag.
fn has_markup(text: &str) -> bool {
    text.match_indices('<').any(|(i, _)| markup(&text[i..]).is_some())
}

/// Whether the page marks main content with `<main>` or `<article>` outside
/// skipped elements.
fn has_main(text: &str) -> bool {
    text.match_indices('<').any(|(i, _)| matches!(tag_head(&text[i..]), Some((_, Kind::Main, false, _))))
}

/// Where the walk through a page is: inside a skipped element or not,
/// inside main content or not.
struct Scope {
    /// The innermost skipped element, and how deep it nests in itself.
    skipping: Option<(String, usize)>,
    main_depth: usize,
    /// The page has `<main>` or `<article>`: text outside them is dropped.
    main_only: bool,
}

impl Scope {
    /// Whether text here is kept.
    fn keeps(&self) -> bool {
        self.skipping.is_none() && (!self.main_only || self.main_depth > 0)
    }

    /// Steps over a tag; whether it breaks the line.
    fn tag(&mut self, name: &str, kind: Kind, close: bool, self_closing: bool) -> bool {
        match (&mut self.skipping, kind) {
            (Some((open, depth)), _) => {
                if open.eq_ignore_ascii_case(name) && !self_closing {
                    if close {
                        *depth -= 1;
                        if *depth == 0 {
                            self.skipping = None;
                        }
                    } else {
                        *depth += 1;
                    }
                }
                false
            }
            (None, Kind::Skip) => {
                if !close && !self_closing {
                    self.skipping = Some((name.to_owned(), 1));
                }
                false
            }
            (None, Kind::Main) => {
                if close {
                    self.main_depth = self.main_depth.saturating_sub(1);
                } else if !self_closing {
                    self.main_depth += 1;
                }
                true
            }
            (None, Kind::Block) => self.keeps(),
            (None, Kind::Inline) => false,
        }
    }
}

/// The text of an HTML page (see the module documentation); `text` itself
/// when it has no known tag.
pub fn html_to_text(text: &str) -> Cow<'_, str> {
    if !text.contains('<') || !has_markup(text) {
        return Cow::Borrowed(text);
    }
    let mut scope = Scope { skipping: None, main_depth: 0, main_only: has_main(text) };
    let mut out = String::with_capacity(text.len() / 2);
    let mut i = 0;
    let mut copied_from = 0;
    while let Some(off) = text[i..].find('<') {
        let at = i + off;
        let Some(m) = markup(&text[at..]) else {
            i = at + 1;
            continue;
        };
        if scope.keeps() {
            push_text(&mut out, &text[copied_from..at]);
        }
        let len = match m {
            Markup::Ignorable(len) => len,
            Markup::Tag { name, kind, close, len } => {
                if scope.tag(name, kind, close, text[at..at + len].ends_with("/>")) {
                    out.push('\n');
                }
                // Raw text: a script or style ends only at its end tag.
                let raw = ["script", "style"].into_iter().find(|r| name.eq_ignore_ascii_case(r));
                if let (false, true, Some(raw)) = (close, scope.skipping.is_some(), raw) {
                    let rest = &text[at + len..];
                    len + find_ascii_ci(rest, &format!("</{raw}")).unwrap_or(rest.len())
                } else {
                    len
                }
            }
        };
        i = (at + len).min(text.len());
        copied_from = i;
    }
    if scope.keeps() {
        push_text(&mut out, &text[copied_from..]);
    }
    Cow::Owned(out)
}

/// Appends text with its character references decoded.
fn push_text(out: &mut String, s: &str) {
    if s.contains('&') {
        html_escape::decode_html_entities_to_string(s, out);
    } else {
        out.push_str(s);
    }
}

/// The byte offset of the first ASCII-case-insensitive match of `needle`.
fn find_ascii_ci(hay: &str, needle: &str) -> Option<usize> {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    (0..h.len().saturating_sub(n.len() - 1)).find(|&i| h[i..i + n.len()].eq_ignore_ascii_case(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> String {
        html_to_text(s).split_whitespace().collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn plain_text_is_borrowed() {
        for s in ["no tags at all", "#include <stdio.h> and a < b > c", "x <foo> y", "<3 you", ""] {
            assert!(matches!(html_to_text(s), Cow::Borrowed(_)), "{s:?}");
        }
    }

    #[test]
    fn page_to_text() {
        let page = "<!DOCTYPE html>\n<html><head><title>T</title><script>if (a<b) x();</script>\
            <style>p{}</style></head><body><nav><ul><li><a href=\"/\">Home</a></li></ul></nav>\
            <div class=\"meta\">Posted today</div><p>Hello <b>wo</b>rld &amp; you &#20320;&#x597D;</p>\
            <!-- a comment <p>not</p> --><footer>© 2024</footer></body></html>";
        assert_eq!(text(page), "Posted today Hello world & you 你好");
    }

    #[test]
    fn main_content_wins() {
        let page = "<html><body><div>menu</div><article><h1>Title</h1><p>Body text.</p></article>\
            <div>related</div></body></html>";
        assert_eq!(text(page), "Title Body text.");
        assert_eq!(html_to_text(page).lines().filter(|l| !l.trim().is_empty()).count(), 2);
    }

    #[test]
    fn nested_skipped_and_unterminated() {
        assert_eq!(text("<p>a</p><aside>x<aside>y</aside>z</aside><p>b</p>"), "a b");
        assert_eq!(text("<p>a<script>never ends"), "a");
        assert_eq!(text("<p>a <!-- open"), "a");
        assert_eq!(text("<p title='x>y'>a</p>"), "a");
        assert_eq!(text("<p>a<br/>b<br>c</p>"), "a b c");
    }

    #[test]
    fn unterminated_tags_stay_linear() {
        // Each unterminated tag would otherwise be scanned to the end.
        let s = "<p ".repeat(200_000);
        let t = std::time::Instant::now();
        assert_eq!(text(&s), "");
        assert_eq!(text(&format!("a{}", "<article ".repeat(100_000))), "");
        assert!(t.elapsed().as_secs() < 20, "{:?}", t.elapsed());
    }
}
