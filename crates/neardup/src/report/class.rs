//! A class at once: every paper of a class checked against the others and
//! against a library ([`ClassReport::check`]), with a summary row per paper
//! (its similarity, with and without what examiners leave out, its top
//! sources) as text, CSV or JSON, and each paper's full [`Report`].
//!
//! Each paper is reported against the class (itself left out) joined with
//! the library ([`crate::passage::Joined`]), so a passage copied from a
//! classmate and one copied from the library are found alike.

use std::collections::HashSet;
use std::io::Write;

use rayon::prelude::*;
use serde_json::{json, Value};

use super::{percent, Against, Report};
use crate::passage::{Aligner, Joined, Library, LibraryKeys, MemLibrary};
use crate::similarity::round4;
use crate::{Error, Result};

/// The top sources a summary row names.
pub const TOP_SOURCES: usize = 3;

/// Every paper's report, in the order the papers came.
pub struct ClassReport {
    /// One report per paper.
    pub reports: Vec<Report>,
    /// The papers' names (the class's ids).
    names: HashSet<String>,
    /// What the papers were checked against, named.
    pub against: String,
}

/// Where a paper's copies come from: the library (`None` when checked
/// against the class alone) and how it is named.
pub struct ClassLibrary<'a> {
    /// The library.
    pub library: &'a dyn Library,
    /// Its name in the reports.
    pub name: &'a str,
}

impl ClassReport {
    /// Checks `papers` (name, text) against each other and, if given,
    /// `library`, with `ask` (each paper leaves itself out); `done` is
    /// called once per paper reported (from any thread).
    ///
    /// # Errors
    ///
    /// Two papers of one name, a library keyed otherwise than `keys`, a
    /// damaged library.
    pub fn check(
        aligner: &Aligner,
        keys: LibraryKeys,
        papers: Vec<(String, String)>,
        library: Option<ClassLibrary<'_>>,
        ask: &Against,
        done: &(dyn Fn() + Sync),
    ) -> Result<ClassReport> {
        let mut names = HashSet::new();
        for (name, _) in &papers {
            if !names.insert(name.clone()) {
                return Err(Error::Input(format!(
                    "two papers are named {name:?}: give each paper once (names must differ)"
                )));
            }
        }
        let against = match &library {
            Some(l) => format!("the class and {}", l.name),
            None => "the class".to_owned(),
        };
        let class = MemLibrary::new(keys, papers);
        let joined = match &library {
            Some(l) => Some(Joined::new(&class, l.library)?),
            None => None,
        };
        let lib: &dyn Library = match &joined {
            Some(j) => j,
            None => &class,
        };
        let reports = class
            .docs()
            .par_iter()
            .map(|(name, text)| {
                let mut ask = ask.clone();
                ask.exclude.push(name.clone());
                let r = Report::against_library(aligner, lib, &against, (name, text.clone()), &ask);
                done();
                r
            })
            .collect::<Result<Vec<Report>>>()?;
        Ok(ClassReport { reports, names, against })
    }

    /// The reports, most copied first (then by name).
    pub fn ranked(&self) -> Vec<&Report> {
        let mut order: Vec<&Report> = self.reports.iter().collect();
        order.sort_by(|x, y| y.similarity().total_cmp(&x.similarity()).then_with(|| x.a.name.cmp(&y.a.name)));
        order
    }

    /// Whether a source is a paper of the class.
    pub fn in_class(&self, source: &str) -> bool {
        self.names.contains(source)
    }

    /// The summary table as CSV (RFC 4180), most copied first: shares in
    /// percent with one decimal.
    pub fn to_csv(&self) -> String {
        let mut out = String::from(
            "paper,chars,similarity_pct,without_quotes_and_references_pct,without_own_pct,without_both_pct,\
             sources,matches,top_sources\n",
        );
        for r in self.ranked() {
            let pct = |x: f64| format!("{:.1}", x * 100.0);
            let cells = [
                csv_cell(&r.a.name),
                r.a.chars.to_string(),
                pct(r.similarity()),
                pct(r.ratios.without_quotes_and_references),
                pct(r.ratios.without_own),
                pct(r.ratios.without_both),
                (r.sources.len() + r.sources_left_out).to_string(),
                r.found.len().to_string(),
                csv_cell(&self.top_sources(r)),
            ];
            out.push_str(&cells.join(","));
            out.push('\n');
        }
        out
    }

    /// A paper's top sources as one cell: `name (12.3%)`, `; `-separated,
    /// classmates marked.
    fn top_sources(&self, r: &Report) -> String {
        r.sources
            .iter()
            .take(TOP_SOURCES)
            .map(|s| {
                let mark = if self.in_class(&s.name) { " [class]" } else { "" };
                format!("{}{mark} ({})", s.name, percent(s.similarity))
            })
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// The summary for a terminal, most copied first.
    ///
    /// # Errors
    ///
    /// The writer's.
    pub fn write_text(&self, out: &mut dyn Write) -> std::io::Result<()> {
        writeln!(out, "{} papers checked against {}, most copied first:", self.reports.len(), self.against)?;
        for r in self.ranked() {
            writeln!(
                out,
                "{:>6}  {:>6} without quotes and references  {}  ({} matched passages)",
                percent(r.similarity()),
                percent(r.ratios.without_quotes_and_references),
                r.a.name,
                r.found.len()
            )?;
            let top = self.top_sources(r);
            if !top.is_empty() {
                writeln!(out, "        from {top}")?;
            }
        }
        Ok(())
    }

    /// [`to_json`](Self::to_json) written report by report (a class's
    /// reports as one JSON value would take many times their size).
    ///
    /// # Errors
    ///
    /// The writer's.
    pub fn write_json(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let head = json!({"papers": self.reports.len(), "against": self.against, "summary": self.summary()});
        let head = serde_json::to_string_pretty(&head).map_err(std::io::Error::other)?;
        // The head without its closing brace, then the reports.
        write!(out, "{},\n  \"reports\": [", head.trim_end().trim_end_matches('}').trim_end())?;
        for (i, r) in self.ranked().into_iter().enumerate() {
            out.write_all(if i == 0 { b"\n    " } else { b",\n    " })?;
            serde_json::to_writer(&mut *out, &r.to_json()).map_err(std::io::Error::other)?;
        }
        writeln!(out, "\n  ]\n}}")
    }

    /// The summary rows and every paper's report (as [`Report::to_json`]),
    /// most copied first.
    pub fn to_json(&self) -> Value {
        json!({
            "papers": self.reports.len(),
            "against": self.against,
            "summary": self.summary(),
            "reports": self.ranked().iter().map(|r| r.to_json()).collect::<Vec<_>>(),
        })
    }

    /// A row per paper, most copied first.
    fn summary(&self) -> Vec<Value> {
        self.ranked()
            .iter()
            .map(|r| {
                let top: Vec<Value> = r
                    .sources
                    .iter()
                    .take(TOP_SOURCES)
                    .map(|s| json!({"id": s.name, "similarity": round4(s.similarity), "class": self.in_class(&s.name)}))
                    .collect();
                json!({
                    "paper": r.a.name, "chars": r.a.chars, "similarity": round4(r.similarity()),
                    "ratios": r.to_json()["ratios"], "sources": r.sources.len() + r.sources_left_out,
                    "matches": r.found.len(), "top_sources": top,
                })
            })
            .collect()
    }
}

/// A CSV field, quoted where it must be.
fn csv_cell(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Against;
    use crate::Fingerprinter;

    const COPIED: &str = "SimHash maps each document to a short fingerprint. Similar documents get \
        fingerprints that differ in few bits. An index over permuted tables finds them without a full scan.";
    const FROM_LIB: &str = "相似的文档得到只有少数几位不同的指纹，置换表上的索引无需全表扫描就能找到它们，这使得网页去重变得便宜。";

    #[test]
    fn a_class_finds_copies_from_classmates_and_the_library() {
        let keys = LibraryKeys::default();
        let aligner = Aligner::new(Fingerprinter::preset("default").unwrap());
        let lib = MemLibrary::new(keys, vec![("lib/zh".into(), format!("前言部分讲天气。{FROM_LIB}结尾。"))]);
        let papers = vec![
            (
                "one, \"first\".txt".to_owned(),
                format!("Our report starts here about the weather. {COPIED} The end."),
            ),
            ("two.txt".to_owned(), format!("Cooking rice takes twenty minutes today. {COPIED} Add salt.")),
            ("three.txt".to_owned(), format!("这是第三篇论文的开头，讲的是别的事情。{FROM_LIB}")),
            (
                "four.txt".to_owned(),
                "Nothing copied here at all, only words of its own about gardens.".to_owned(),
            ),
        ];
        let count = std::sync::atomic::AtomicUsize::new(0);
        let done = || {
            count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        };
        let lib = ClassLibrary { library: &lib, name: "lib" };
        let class =
            ClassReport::check(&aligner, keys, papers, Some(lib), &Against::default(), &done).unwrap();
        assert_eq!(count.into_inner(), 4);
        let by_name = |n: &str| class.reports.iter().find(|r| r.a.name == n).unwrap();
        let names = |r: &Report| r.sources.iter().map(|s| s.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(by_name("two.txt")), ["one, \"first\".txt"]);
        assert_eq!(names(by_name("one, \"first\".txt")), ["two.txt"]);
        assert_eq!(names(by_name("three.txt")), ["lib/zh"]);
        assert!(by_name("four.txt").sources.is_empty());
        assert!(class.in_class("two.txt") && !class.in_class("lib/zh"));
        let csv = class.to_csv();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 5, "{csv}");
        assert!(lines[0].starts_with("paper,chars,similarity_pct"));
        assert!(csv.contains("\"one, \"\"first\"\".txt\""), "{csv}");
        assert!(lines[4].starts_with("four.txt,") && lines[4].contains(",0.0,"), "{csv}");
        let json = class.to_json();
        assert_eq!(json["papers"], 4);
        assert_eq!(json["summary"][3]["paper"], "four.txt");
        assert_eq!(json["reports"].as_array().unwrap().len(), 4);
        let two = json["summary"].as_array().unwrap().iter().find(|r| r["paper"] == "two.txt").unwrap();
        assert_eq!(two["top_sources"][0]["class"], true);
        let mut streamed = Vec::new();
        class.write_json(&mut streamed).unwrap();
        let streamed: Value = serde_json::from_slice(&streamed).unwrap();
        assert_eq!(streamed, json);
        // Names must differ.
        let same = vec![("a".to_owned(), COPIED.to_owned()), ("a".to_owned(), COPIED.to_owned())];
        assert!(ClassReport::check(&aligner, keys, same, None, &Against::default(), &|| {}).is_err());
    }
}
