//! `neardup report A B` and `neardup report A --against INDEX`: which
//! passages of A are copied, as text, JSON or one self-contained HTML page.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Write;
use std::ops::Range;
use std::process::ExitCode;

use anyhow::Result;
use neardup::meta::IndexMeta;
use neardup::passage::{self, Aligner, PassageConfig, PassageIndex};
use neardup::similarity::round4;
use neardup::Radius;
use serde_json::{json, Value};

use crate::args::{ReportArgs, ReportFormat};
use crate::input::read_document;
use crate::output::Output;
use crate::UsageError;

/// A document shown in the report.
struct Doc {
    name: String,
    text: String,
    sentences: usize,
    chars: usize,
}

/// Where A's copied text comes from: B, or one document of the index.
struct Source {
    name: String,
    /// The text, when at hand (not for index sources).
    text: Option<String>,
    /// The share of A found in this source.
    similarity: f64,
    /// The share of this source found in A (when its text is at hand).
    reverse: Option<f64>,
}

/// One matched passage.
struct Found {
    source: usize,
    a: Range<usize>,
    b: Range<usize>,
    distance: u32,
    /// Sentences of A in it (pair reports; windows are not counted).
    sentences: Option<usize>,
}

/// Everything a report shows.
struct Report {
    a: Doc,
    sources: Vec<Source>,
    found: Vec<Found>,
    /// Characters of A found anywhere.
    matched_chars: usize,
    radius: Radius,
    passages: PassageConfig,
    min_jaccard: Option<f64>,
    /// The index, for --against.
    index: Option<String>,
    /// Sources beyond --max-sources that were left out of the listing.
    sources_left_out: usize,
}

impl Report {
    fn similarity(&self) -> f64 {
        if self.a.chars == 0 {
            0.0
        } else {
            self.matched_chars as f64 / self.a.chars as f64
        }
    }
}

fn read(path: &std::path::Path, max: u64) -> Result<String> {
    match read_document(path, max, false) {
        Ok(r) => Ok(r.text),
        Err(b) if b.message.starts_with("empty document") => {
            anyhow::bail!("{}: empty document (no text, or only whitespace): nothing to report on", b.origin)
        }
        Err(b) => anyhow::bail!("{}: {}", b.origin, b.message),
    }
}

pub fn run(args: ReportArgs) -> Result<ExitCode> {
    if !(0.0..=1.0).contains(&args.min_jaccard) {
        return Err(
            UsageError(format!("--min-jaccard {}: give a number between 0 and 1", args.min_jaccard)).into()
        );
    }
    let report = match (&args.b, &args.against) {
        (Some(b), _) => pair_report(&args, b)?,
        (None, Some(index)) => index_report(&args, index)?,
        (None, None) => unreachable!("clap requires B or --against"),
    };
    let mut out = Output::open(args.output.as_deref())?;
    match args.format {
        ReportFormat::Text => write_text(out.writer(), &report)?,
        ReportFormat::Json => {
            serde_json::to_writer_pretty(&mut *out.writer(), &to_json(&report))?;
            writeln!(out.writer())?;
        }
        ReportFormat::Html => out.writer().write_all(to_html(&report).as_bytes())?,
    }
    out.finish()?;
    Ok(ExitCode::SUCCESS)
}

fn pair_report(args: &ReportArgs, b_path: &std::path::Path) -> Result<Report> {
    let a = read(&args.a, args.max_doc_bytes)?;
    let b = read(b_path, args.max_doc_bytes)?;
    let fingerprinter = args.pipeline.load()?;
    let radius = args.k.map_or_else(|| passage::pair_radius(fingerprinter.bits()), Radius::fixed);
    let cfg = args.passage.over(PassageConfig::default());
    let aligner = Aligner::new(fingerprinter)
        .radius(radius.clone())
        .passages(cfg)
        .min_jaccard(args.min_jaccard)
        .min_words(args.min_words);
    let (da, db) = (aligner.doc(&a), aligner.doc(&b));
    let found = aligner.align_docs(&a, &da, &b, &db);
    let report = Report {
        a: Doc {
            name: args.a.display().to_string(),
            chars: found.a_chars,
            sentences: da.sentences.len(),
            text: a,
        },
        sources: vec![Source {
            name: b_path.display().to_string(),
            text: Some(b),
            similarity: found.similarity(),
            reverse: Some(found.b_similarity()),
        }],
        found: found
            .spans
            .iter()
            .map(|s| Found {
                source: 0,
                a: s.a.clone(),
                b: s.b.clone(),
                distance: s.distance,
                sentences: Some(s.a_sentences.len()),
            })
            .collect(),
        matched_chars: found.a_matched_chars,
        radius,
        passages: cfg,
        min_jaccard: Some(args.min_jaccard),
        index: None,
        sources_left_out: 0,
    };
    Ok(report)
}

fn index_report(args: &ReportArgs, path: &std::path::Path) -> Result<Report> {
    let in_file = |e: neardup::Error| match e {
        neardup::Error::Config(m) => UsageError(format!("{}: {m}", path.display())).into(),
        e => anyhow::anyhow!("{}: {e}", path.display()),
    };
    let file = crate::targets::open_file(path, args.no_verify)?;
    crate::targets::check_pipeline(&IndexMeta::of(&file).map_err(in_file)?, &args.pipeline)?;
    let index = PassageIndex::open(file).map_err(in_file)?;
    let cfg = index.config();
    if args.passage.given() && args.passage.over(cfg) != cfg {
        return Err(UsageError(format!(
            "{}: its passages are windows of {} sentences (at least {} characters), fixed when it was built; \
             drop --window/--min-chars or rebuild the index",
            path.display(),
            cfg.window,
            cfg.min_chars
        ))
        .into());
    }
    let radius = args.k.map_or_else(|| passage::index_radius(index.fingerprinter().bits()), Radius::fixed);
    let a = read(&args.a, args.max_doc_bytes)?;
    let copied = index.find(&a, &radius, &args.exclude, args.min_windows).map_err(in_file)?;
    let shown = copied.sources.len().min(args.max_sources);
    let share = |n: usize| if copied.chars == 0 { 0.0 } else { n as f64 / copied.chars as f64 };
    let sources = copied.sources[..shown]
        .iter()
        .map(|(id, n)| Source { name: id.clone(), text: None, similarity: share(*n), reverse: None })
        .collect();
    let mut found: Vec<Found> = copied
        .spans
        .iter()
        .filter(|s| s.target < shown)
        .map(|s| Found {
            source: s.target,
            a: s.a.clone(),
            b: s.b.clone(),
            distance: s.distance,
            sentences: None,
        })
        .collect();
    found.sort_by_key(|f| (f.a.start, f.source));
    Ok(Report {
        a: Doc {
            name: args.a.display().to_string(),
            chars: copied.chars,
            sentences: copied.doc.sentences.len(),
            text: a,
        },
        sources,
        found,
        matched_chars: copied.matched_chars,
        radius,
        passages: cfg,
        min_jaccard: None,
        index: Some(path.display().to_string()),
        sources_left_out: copied.sources.len() - shown,
    })
}

fn percent(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

/// The first `n` characters of `s` on one line.
fn excerpt(s: &str, n: usize) -> String {
    let flat: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= n {
        flat
    } else {
        format!("{}…", flat.chars().take(n).collect::<String>())
    }
}

fn settings(r: &Report) -> String {
    let mut s = format!(
        "windows of {} sentences (at least {} characters) within {}",
        r.passages.window, r.passages.min_chars, r.radius
    );
    if let Some(t) = r.min_jaccard {
        let _ = write!(s, "; sentences matched at word Jaccard ≥ {t}");
    }
    s
}

fn write_text(w: &mut dyn Write, r: &Report) -> Result<()> {
    writeln!(w, "A: {} ({} characters in {} sentences)", r.a.name, r.a.chars, r.a.sentences)?;
    match &r.index {
        None => {
            let s = &r.sources[0];
            writeln!(w, "B: {}", s.name)?;
            writeln!(
                w,
                "similarity: {} of A found in B ({} of {} characters); {} of B found in A",
                percent(r.similarity()),
                r.matched_chars,
                r.a.chars,
                percent(s.reverse.unwrap_or(0.0))
            )?;
        }
        Some(index) => {
            writeln!(w, "against: {index}")?;
            writeln!(
                w,
                "similarity: {} of A found in the index ({} of {} characters), in {}",
                percent(r.similarity()),
                r.matched_chars,
                r.a.chars,
                match r.sources.len() + r.sources_left_out {
                    1 => "1 document".to_owned(),
                    n => format!("{n} documents"),
                }
            )?;
            for s in &r.sources {
                writeln!(w, "  {:>6}  {}", percent(s.similarity), s.name)?;
            }
            if r.sources_left_out > 0 {
                writeln!(w, "  … and {} more (--max-sources)", r.sources_left_out)?;
            }
        }
    }
    writeln!(w, "{}", settings(r))?;
    writeln!(w)?;
    match r.found.len() {
        1 => writeln!(w, "1 matched passage")?,
        n => writeln!(w, "{n} matched passages")?,
    }
    for (i, f) in r.found.iter().enumerate() {
        let sentences = f.sentences.map(|n| format!(", {n} sentences")).unwrap_or_default();
        let source = if r.index.is_some() { format!("{} ", r.sources[f.source].name) } else { String::new() };
        writeln!(
            w,
            "#{:<3} A {}..{}  <->  {source}B {}..{}  (distance {}{sentences})",
            i + 1,
            f.a.start,
            f.a.end,
            f.b.start,
            f.b.end,
            f.distance
        )?;
        writeln!(w, "     A: {}", excerpt(&r.a.text[f.a.clone()], 100))?;
        if let Some(b) = &r.sources[f.source].text {
            writeln!(w, "     B: {}", excerpt(&b[f.b.clone()], 100))?;
        }
    }
    Ok(())
}

fn to_json(r: &Report) -> Value {
    let matches: Vec<Value> = r
        .found
        .iter()
        .map(|f| {
            let src = &r.sources[f.source];
            let mut b = json!({"start": f.b.start, "end": f.b.end});
            match &src.text {
                Some(t) => b["text"] = json!(&t[f.b.clone()]),
                None => b["id"] = json!(src.name),
            }
            let mut m = json!({
                "a": {"start": f.a.start, "end": f.a.end, "text": &r.a.text[f.a.clone()]},
                "b": b,
                "distance": f.distance,
            });
            if let Some(n) = f.sentences {
                m["sentences"] = json!(n);
            }
            m
        })
        .collect();
    let mut v = json!({
        "a": {"path": r.a.name, "bytes": r.a.text.len(), "chars": r.a.chars, "sentences": r.a.sentences},
        "similarity": round4(r.similarity()),
        "matched_chars": r.matched_chars,
        "k": r.radius.to_json(),
        "window": r.passages.window,
        "min_chars": r.passages.min_chars,
        "matches": matches,
    });
    match &r.index {
        None => {
            let s = &r.sources[0];
            v["b"] = json!({"path": s.name, "bytes": s.text.as_ref().map_or(0, String::len)});
            v["b_similarity"] = json!(round4(s.reverse.unwrap_or(0.0)));
            v["min_jaccard"] = json!(r.min_jaccard);
        }
        Some(index) => {
            v["against"] = json!(index);
            v["sources"] =
                r.sources.iter().map(|s| json!({"id": s.name, "similarity": round4(s.similarity)})).collect();
            v["sources_left_out"] = json!(r.sources_left_out);
        }
    }
    v
}

/// Escapes text for HTML.
fn esc(s: &str) -> String {
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

fn to_html(r: &Report) -> String {
    let title = match &r.index {
        None => format!("{} vs {}", r.a.name, r.sources[0].name),
        Some(index) => format!("{} against {index}", r.a.name),
    };
    let a_ranges: Vec<(usize, Range<usize>)> =
        r.found.iter().enumerate().map(|(i, f)| (i, f.a.clone())).collect();
    let mut html = String::new();
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"und\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"generator\" content=\"neardup {}\">\n<title>neardup report: {}</title>\n<style>\n{}</style>\n</head>\n<body>\n",
        env!("CARGO_PKG_VERSION"),
        esc(&title),
        CSS
    );
    let _ = write!(html, "<header>\n<h1>neardup report</h1>\n<p class=\"similarity\"><strong id=\"similarity\">{}</strong> of A found in {} ({} of {} characters)",
        percent(r.similarity()),
        if r.index.is_some() { "the index" } else { "B" },
        r.matched_chars, r.a.chars);
    if let (None, Some(rev)) = (&r.index, r.sources[0].reverse) {
        let _ = write!(html, "; {} of B found in A", percent(rev));
    }
    let _ = write!(html, ".</p>\n<p class=\"settings\">{}</p>\n", esc(&settings(r)));
    html.push_str("<ol class=\"matches\">\n");
    for (i, f) in r.found.iter().enumerate() {
        let source =
            if r.index.is_some() { format!("{} ", esc(&r.sources[f.source].name)) } else { String::new() };
        let _ = writeln!(
            html,
            "<li id=\"m{i}\"><a class=\"hl c{}\" href=\"#a{i}\">A {}..{}</a> ↔ {source}{} (distance {})</li>",
            i % COLOURS,
            f.a.start,
            f.a.end,
            if r.index.is_some() {
                format!("B {}..{}", f.b.start, f.b.end)
            } else {
                format!("<a href=\"#b{i}\">B {}..{}</a>", f.b.start, f.b.end)
            },
            f.distance
        );
    }
    html.push_str("</ol>\n</header>\n<main class=\"columns\">\n");
    let _ = write!(
        html,
        "<section id=\"doc-a\"><h2>A: {}</h2>\n<div class=\"text\">{}</div></section>\n",
        esc(&r.a.name),
        marked(&r.a.text, 'a', &a_ranges, &|i| if r.index.is_some() {
            format!("m{i}")
        } else {
            format!("b{i}")
        })
    );
    match &r.index {
        None => {
            let b_ranges: Vec<(usize, Range<usize>)> =
                r.found.iter().enumerate().map(|(i, f)| (i, f.b.clone())).collect();
            let b = r.sources[0].text.as_deref().unwrap_or("");
            let _ = write!(
                html,
                "<section id=\"doc-b\"><h2>B: {}</h2>\n<div class=\"text\">{}</div></section>\n",
                esc(&r.sources[0].name),
                marked(b, 'b', &b_ranges, &|i| format!("a{i}"))
            );
        }
        Some(index) => {
            let _ = write!(html, "<section id=\"doc-b\"><h2>Sources in {}</h2>\n<table>\n<tr><th>document</th><th>share of A</th></tr>\n", esc(index));
            for s in &r.sources {
                let _ =
                    writeln!(html, "<tr><td>{}</td><td>{}</td></tr>", esc(&s.name), percent(s.similarity));
            }
            if r.sources_left_out > 0 {
                let _ = writeln!(html, "<tr><td colspan=\"2\">… and {} more</td></tr>", r.sources_left_out);
            }
            html.push_str("</table></section>\n");
        }
    }
    html.push_str("</main>\n</body>\n</html>\n");
    html
}

const CSS: &str = "body { font-family: system-ui, sans-serif; margin: 0; color: #222; }
header { padding: 1em 2em; border-bottom: 1px solid #ccc; background: #fafafa; }
h1 { font-size: 1.3em; margin: 0 0 .3em; }
h2 { font-size: 1em; margin: 0 0 .5em; word-break: break-all; }
.similarity { font-size: 1.1em; }
.settings { color: #666; font-size: .9em; }
ol.matches { max-height: 12em; overflow: auto; font-size: .9em; }
.columns { display: grid; grid-template-columns: 1fr 1fr; gap: 2em; padding: 1em 2em; }
.text { white-space: pre-wrap; word-wrap: break-word; line-height: 1.5; }
a.hl { color: inherit; text-decoration: none; border-radius: 2px; }
a.hl:hover { outline: 2px solid #333; }
.anchor { scroll-margin-top: 2em; }
.anchor:target + a.hl, li:target { outline: 3px solid #d62728; }
.c0 { background: #ffe08a; } .c1 { background: #a8e6a1; } .c2 { background: #a6d8ff; }
.c3 { background: #f7b2d9; } .c4 { background: #d4c2ff; } .c5 { background: #ffc89e; }
table { border-collapse: collapse; } td, th { padding: .2em .8em; border-bottom: 1px solid #ddd; text-align: left; }
";

#[cfg(test)]
mod tests {
    use super::*;

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
