//! A report as HTML: A and its sources side by side, each copied span
//! highlighted in both and linked to its other side (or, where the
//! source's text is not at hand, to its line in the list of matches).
//! Every text is escaped.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::ops::Range;

use super::{percent, Report};

/// Escapes text for HTML (element content and quoted attributes).
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + s.len() / 16);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const COLOURS: usize = 6;

/// `text` with the marked ranges highlighted: each match `i` gets an anchor
/// `{side}{i}` at its start, and its text links to `link(i)`. Overlapping
/// ranges are split so every character is wrapped once (by the first match
/// covering it).
fn marked(
    text: &str,
    side: char,
    ranges: &[(usize, Range<usize>)],
    link: &dyn Fn(usize) -> String,
) -> String {
    let mut cuts: Vec<usize> = vec![0, text.len()];
    for (_, r) in ranges {
        cuts.push(r.start);
        cuts.push(r.end);
    }
    cuts.sort_unstable();
    cuts.dedup();
    let mut starts: HashMap<usize, Vec<usize>> = HashMap::new();
    for (i, r) in ranges {
        starts.entry(r.start).or_default().push(*i);
    }
    let mut out = String::with_capacity(text.len() * 2);
    for w in cuts.windows(2) {
        let (lo, hi) = (w[0], w[1]);
        for i in starts.get(&lo).into_iter().flatten() {
            let _ = write!(out, "<span class=\"anchor\" id=\"{side}{i}\"></span>");
        }
        let piece = esc(&text[lo..hi]);
        match ranges.iter().find(|(_, r)| r.start <= lo && hi <= r.end) {
            Some((i, _)) => {
                let _ = write!(
                    out,
                    "<a class=\"hl c{}\" href=\"#{}\" title=\"match {}\">{piece}</a>",
                    i % COLOURS,
                    link(*i),
                    i + 1
                );
            }
            None => out.push_str(&piece),
        }
    }
    out
}

impl Report {
    /// Whether match `i`'s source text is shown (so its B side can be linked).
    fn shows_b(&self, i: usize) -> bool {
        self.sources[self.found[i].source].text.is_some()
    }

    fn title(&self) -> String {
        match &self.index {
            None => format!("{} vs {}", self.a.name, self.sources[0].name),
            Some(index) => format!("{} against {index}", self.a.name),
        }
    }

    /// The report as one self-contained HTML page (its style inline, no
    /// script).
    pub fn to_html(&self) -> String {
        format!(
            "<!DOCTYPE html>\n<html lang=\"und\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <meta name=\"generator\" content=\"neardup {}\">\n<title>neardup report: {}</title>\n<style>\n{}</style>\n</head>\n<body>\n{}</body>\n</html>\n",
            env!("CARGO_PKG_VERSION"),
            esc(&self.title()),
            CSS,
            self.html_body()
        )
    }

    /// The ratios side by side (total, without quotes and references,
    /// without the author's own, without both), as a table of one row.
    fn ratios_table(&self) -> String {
        let r = &self.ratios;
        format!(
            "<table class=\"ratios\"><caption>Similarity with and without what is left out</caption>\
             <tr><th scope=\"col\">total</th><th scope=\"col\">without quotes and references</th>\
             <th scope=\"col\">without own sources</th><th scope=\"col\">without both</th></tr>\
             <tr><td id=\"ratio-total\">{}</td><td id=\"ratio-quotes\">{}</td><td id=\"ratio-own\">{}</td>\
             <td id=\"ratio-both\">{}</td></tr></table>\n",
            percent(r.total),
            percent(r.without_quotes_and_references),
            percent(r.without_own),
            percent(r.without_both)
        )
    }

    /// The report's view without the page around it: a `<header>` (the
    /// similarity, the settings, the list of matches) and a `<main>` (A and
    /// its sources side by side), styled by [`CSS`]. What `neardup serve`'s
    /// page shows.
    pub fn html_body(&self) -> String {
        let mut html = String::new();
        let _ = write!(
            html,
            "<header class=\"report\">\n<h1>neardup report</h1>\n<p class=\"similarity\"><strong id=\"similarity\">{}</strong> of A found in {} ({} of {} characters)",
            percent(self.similarity()),
            if self.index.is_some() { "the index" } else { "B" },
            self.matched_chars,
            self.a.chars
        );
        if let (None, Some(rev)) = (&self.index, self.sources.first().and_then(|s| s.reverse)) {
            let _ = write!(html, "; {} of B found in A", percent(rev));
        }
        let _ = write!(
            html,
            ".</p>\n{}<p class=\"settings\">{}</p>\n",
            self.ratios_table(),
            esc(&self.settings())
        );
        self.match_list(&mut html);
        html.push_str("</header>\n<main class=\"columns\">\n");
        let a_ranges: Vec<(usize, Range<usize>)> =
            self.found.iter().enumerate().map(|(i, f)| (i, f.a.clone())).collect();
        let a_link = |i: usize| if self.shows_b(i) { format!("b{i}") } else { format!("m{i}") };
        let _ = write!(
            html,
            "<section id=\"doc-a\" aria-label=\"A\"><h2>A: {}</h2>\n<div class=\"text\">{}</div></section>\n",
            esc(&self.a.name),
            marked(&self.a.text, 'a', &a_ranges, &a_link)
        );
        match &self.index {
            None => {
                let b = self.sources[0].text.as_deref().unwrap_or("");
                let _ = write!(
                    html,
                    "<section id=\"doc-b\" aria-label=\"B\"><h2>B: {}</h2>\n<div class=\"text\">{}</div></section>\n",
                    esc(&self.sources[0].name),
                    marked(b, 'b', &self.b_ranges(0), &|i| format!("a{i}"))
                );
            }
            Some(index) => self.sources_html(&mut html, index),
        }
        html.push_str("</main>\n");
        html
    }

    /// The matches of source `k`, on its side.
    fn b_ranges(&self, k: usize) -> Vec<(usize, Range<usize>)> {
        self.found.iter().enumerate().filter(|(_, f)| f.source == k).map(|(i, f)| (i, f.b.clone())).collect()
    }

    fn match_list(&self, html: &mut String) {
        html.push_str("<ol class=\"matches\">\n");
        for (i, f) in self.found.iter().enumerate() {
            let source = match &self.index {
                Some(_) => format!("{} ", esc(&self.sources[f.source].name)),
                None => String::new(),
            };
            let b = if self.shows_b(i) {
                format!("<a href=\"#b{i}\">B {}..{}</a>", f.b.start, f.b.end)
            } else {
                format!("B {}..{}", f.b.start, f.b.end)
            };
            let _ = writeln!(
                html,
                "<li id=\"m{i}\"><a class=\"hl c{}\" href=\"#a{i}\">A {}..{}</a> ↔ {source}{b} (distance {})</li>",
                i % COLOURS,
                f.a.start,
                f.a.end,
                f.distance
            );
        }
        html.push_str("</ol>\n");
    }

    /// The sources of a report against an index: a table of their shares,
    /// then each source whose text is at hand, highlighted.
    fn sources_html(&self, html: &mut String, index: &str) {
        let _ = write!(
            html,
            "<section id=\"doc-b\" aria-label=\"sources\"><h2>Sources in {}</h2>\n<table>\n<tr><th scope=\"col\">document</th><th scope=\"col\">share of A</th></tr>\n",
            esc(index)
        );
        for (k, s) in self.sources.iter().enumerate() {
            let name = match &s.text {
                Some(_) => format!("<a href=\"#s{k}\">{}</a>", esc(&s.name)),
                None => esc(&s.name),
            };
            let _ = writeln!(html, "<tr><td>{name}</td><td>{}</td></tr>", percent(s.similarity));
        }
        if self.sources_left_out > 0 {
            let _ = writeln!(html, "<tr><td colspan=\"2\">… and {} more</td></tr>", self.sources_left_out);
        }
        html.push_str("</table>\n");
        for (k, s) in self.sources.iter().enumerate() {
            let Some(text) = &s.text else { continue };
            let _ = write!(
                html,
                "<article class=\"source\" id=\"s{k}\"><h3>{} <span class=\"share\">({} of A)</span></h3>\n<div class=\"text\">{}</div></article>\n",
                esc(&s.name),
                percent(s.similarity),
                marked(text, 'b', &self.b_ranges(k), &|i| format!("a{i}"))
            );
        }
        html.push_str("</section>\n");
    }
}

/// The report's style: the standalone page inlines it; `neardup serve`'s
/// page serves it as a file (its Content-Security-Policy allows no inline
/// style). The highlight colours keep 4.5:1 contrast with the text.
pub const CSS: &str = "body { font-family: system-ui, sans-serif; margin: 0; color: #222; }
header.report { padding: 1em 2em; border-bottom: 1px solid #ccc; background: #fafafa; }
h1 { font-size: 1.3em; margin: 0 0 .3em; }
h2 { font-size: 1em; margin: 0 0 .5em; word-break: break-all; }
h3 { font-size: 1em; margin: 1em 0 .5em; word-break: break-all; }
.similarity { font-size: 1.1em; }
.settings { color: #555; font-size: .9em; }
.ratios { border-collapse: collapse; margin: .3em 0; }
.ratios th, .ratios td { border: 1px solid #ccc; padding: .2em .6em; text-align: center; }
.ratios caption { text-align: left; font-size: .9em; color: #555; }
ol.matches { max-height: 12em; overflow: auto; font-size: .9em; }
.columns { display: grid; grid-template-columns: 1fr 1fr; gap: 2em; padding: 1em 2em; }
@media (max-width: 700px) { .columns { grid-template-columns: 1fr; padding: 1em; } header.report { padding: 1em; } }
.text { white-space: pre-wrap; overflow-wrap: anywhere; line-height: 1.5; }
a.hl { color: inherit; text-decoration: none; border-radius: 2px; }
a.hl:hover, a.hl:focus { outline: 2px solid #333; }
.anchor { scroll-margin-top: 2em; }
.anchor:target + a.hl, li:target, article:target h3 { outline: 3px solid #d62728; }
.c0 { background: #ffe08a; } .c1 { background: #a8e6a1; } .c2 { background: #a6d8ff; }
.c3 { background: #f7b2d9; } .c4 { background: #d4c2ff; } .c5 { background: #ffc89e; }
table { border-collapse: collapse; } td, th { padding: .2em .8em; border-bottom: 1px solid #ddd; text-align: left; }
";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passage::PassageConfig;
    use crate::report::Doc;
    use crate::Radius;

    #[test]
    fn a_report_against_an_index_with_nothing_found_renders() {
        let r = Report {
            a: Doc { name: "a <b>".into(), text: "Nothing copied here.".into(), sentences: 1, chars: 20 },
            sources: Vec::new(),
            found: Vec::new(),
            matched_chars: 0,
            radius: Some(Radius::fixed(3)),
            passages: PassageConfig::default(),
            alignment: None,
            index: Some("idx".into()),
            sources_left_out: 0,
            ratios: crate::report::Ratios::default(),
            exclusions: crate::report::Exclusions::default(),
        };
        let html = r.to_html();
        assert!(html.contains("<strong id=\"similarity\">0.0%</strong> of A found in the index"), "{html}");
        assert!(html.contains("A: a &lt;b&gt;"));
        let mut text = Vec::new();
        r.write_text(&mut text).unwrap();
        assert!(String::from_utf8(text).unwrap().contains("0 matched passages"));
        assert_eq!(r.to_json()["sources"], serde_json::json!([]));
    }

    #[test]
    fn marking_escapes_and_splits_overlaps() {
        let text = "<a> & b c";
        let html = marked(text, 'b', &[(0, 0..5), (1, 4..9)], &|i| format!("a{i}"));
        assert_eq!(
            html,
            "<span class=\"anchor\" id=\"b0\"></span><a class=\"hl c0\" href=\"#a0\" title=\"match 1\">&lt;a&gt; </a>\
             <span class=\"anchor\" id=\"b1\"></span><a class=\"hl c0\" href=\"#a0\" title=\"match 1\">&amp;</a>\
             <a class=\"hl c1\" href=\"#a1\" title=\"match 2\"> b c</a>"
        );
    }
}
