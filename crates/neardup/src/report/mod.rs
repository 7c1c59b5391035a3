//! Reports of copied passages: which passages of a text A are found in a
//! text B ([`Report::pair`]) or in an index of passages
//! ([`Report::against`]), as a terminal summary ([`Report::write_text`]),
//! JSON ([`Report::to_json`]) or HTML ([`Report::to_html`], one
//! self-contained page; [`Report::html_body`], the same view for a page
//! that brings [`CSS`] itself).
//!
//! One home for every front end: `neardup report`, `POST /v1/report` and
//! the page `neardup serve` shows all build and print reports here, so
//! one text gives the same spans from each.
//!
//! ```
//! use neardup::passage::Aligner;
//! use neardup::report::Report;
//! use neardup::Fingerprinter;
//!
//! let copied = "SimHash maps each document to a short fingerprint. Similar documents get \
//!               fingerprints that differ in few bits. An index over permuted tables finds \
//!               them without a full scan. This makes deduplication of web crawls cheap.";
//! let a = format!("Our report starts here. It talks about the weather today. {copied} The end.");
//! let b = format!("Cooking rice takes twenty minutes. {copied} Add salt to taste.");
//! let aligner = Aligner::new(Fingerprinter::preset("default")?);
//! let report = Report::pair(&aligner, "a.txt", a, "b.txt", b);
//! assert_eq!(report.found.len(), 1);
//! let json = report.to_json();
//! assert_eq!(json["matches"][0]["a"]["text"], copied);
//! assert!(report.to_html().contains("<a class=\"hl c0\" href=\"#b0\""));
//! # Ok::<(), neardup::Error>(())
//! ```

mod html;
mod text;

use std::ops::Range;

use serde_json::{json, Value};

use crate::passage::{Aligner, PassageConfig, PassageIndex};
use crate::similarity::round4;
use crate::{Radius, Result};

pub use html::CSS;

/// The document checked (A).
#[derive(Clone, Debug)]
pub struct Doc {
    /// Its name (a path, an upload's file name).
    pub name: String,
    /// Its text.
    pub text: String,
    /// Sentences in it.
    pub sentences: usize,
    /// Characters in its sentences.
    pub chars: usize,
}

/// Where A's copied text comes from: B, or one document of an index.
#[derive(Clone, Debug)]
pub struct Source {
    /// Its name (B's path, or the indexed document's id).
    pub name: String,
    /// Its text, when at hand: B's, or an indexed document's where the
    /// index keeps texts ([`Report::attach_texts`]).
    pub text: Option<String>,
    /// The share of A found in this source.
    pub similarity: f64,
    /// The share of this source found in A (pair reports).
    pub reverse: Option<f64>,
}

/// One matched passage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// Which source (an index into [`Report::sources`]).
    pub source: usize,
    /// Its bytes in A.
    pub a: Range<usize>,
    /// Its bytes in the source.
    pub b: Range<usize>,
    /// The bits its windows' fingerprints differ by.
    pub distance: u32,
    /// Sentences of A in it (pair reports; windows are not counted).
    pub sentences: Option<usize>,
}

/// Everything a report shows.
#[derive(Clone, Debug)]
pub struct Report {
    /// The text checked.
    pub a: Doc,
    /// Where its copies come from, most of A first.
    pub sources: Vec<Source>,
    /// The copied passages, by their start in A.
    pub found: Vec<Found>,
    /// Characters of A found anywhere.
    pub matched_chars: usize,
    /// The radius windows matched within.
    pub radius: Radius,
    /// How texts were cut into windows.
    pub passages: PassageConfig,
    /// The word Jaccard sentences matched at (pair reports).
    pub min_jaccard: Option<f64>,
    /// The index's name (reports against an index).
    pub index: Option<String>,
    /// Sources beyond the listing's limit, left out.
    pub sources_left_out: usize,
}

/// How a report against an index is asked for (defaults: the index's
/// radius rule, nothing excluded, spans of one window or more, 20 sources).
#[derive(Clone, Debug)]
pub struct Against {
    /// The radius windows match within; `None`: [`crate::passage::index_radius`].
    pub radius: Option<Radius>,
    /// Indexed documents left out (A itself, when it is indexed).
    pub exclude: Vec<String>,
    /// Spans of fewer windows are left out.
    pub min_windows: usize,
    /// The most sources listed; the rest are counted in
    /// [`Report::sources_left_out`].
    pub max_sources: usize,
}

impl Default for Against {
    fn default() -> Against {
        Against { radius: None, exclude: Vec::new(), min_windows: 1, max_sources: 20 }
    }
}

impl Report {
    /// The passages of `a` copied from `b` (both texts at hand): spans
    /// aligned to sentences.
    pub fn pair(aligner: &Aligner, a_name: &str, a: String, b_name: &str, b: String) -> Report {
        let (da, db) = (aligner.doc(&a), aligner.doc(&b));
        let found = aligner.align_docs(&a, &da, &b, &db);
        Report {
            a: Doc { name: a_name.to_owned(), chars: found.a_chars, sentences: da.sentences.len(), text: a },
            sources: vec![Source {
                name: b_name.to_owned(),
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
            radius: aligner.radius_in_use().clone(),
            passages: *aligner.passage_config(),
            min_jaccard: Some(aligner.jaccard_in_use()),
            index: None,
            sources_left_out: 0,
        }
    }

    /// The passages of `a` found in a passage index named `index_name`:
    /// spans precise to windows, sources by their share of A.
    ///
    /// # Errors
    ///
    /// A damaged index ([`PassageIndex::find`]).
    pub fn against(
        index: &PassageIndex,
        index_name: &str,
        a_name: &str,
        a: String,
        ask: &Against,
    ) -> Result<Report> {
        let radius =
            ask.radius.clone().unwrap_or_else(|| crate::passage::index_radius(index.fingerprinter().bits()));
        let copied = index.find(&a, &radius, &ask.exclude, ask.min_windows)?;
        let shown = copied.sources.len().min(ask.max_sources);
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
                name: a_name.to_owned(),
                chars: copied.chars,
                sentences: copied.doc.sentences.len(),
                text: a,
            },
            sources,
            found,
            matched_chars: copied.matched_chars,
            radius,
            passages: index.config(),
            min_jaccard: None,
            index: Some(index_name.to_owned()),
            sources_left_out: copied.sources.len() - shown,
        })
    }

    /// Gives each listed source its text where `text_of` has it (an index
    /// that keeps its documents' texts), so both sides can be shown. A
    /// text that does not hold a span's bytes (changed since it was
    /// indexed) is not attached.
    pub fn attach_texts(&mut self, mut text_of: impl FnMut(&str) -> Option<String>) {
        for (k, s) in self.sources.iter_mut().enumerate() {
            if s.text.is_some() {
                continue;
            }
            let Some(t) = text_of(&s.name) else { continue };
            let fits = self.found.iter().filter(|f| f.source == k).all(|f| t.get(f.b.clone()).is_some());
            if fits {
                s.text = Some(t);
            }
        }
    }

    /// The share of A found in the sources.
    pub fn similarity(&self) -> f64 {
        if self.a.chars == 0 {
            0.0
        } else {
            self.matched_chars as f64 / self.a.chars as f64
        }
    }

    /// The settings, in words.
    fn settings(&self) -> String {
        use std::fmt::Write as _;
        let mut s = format!(
            "windows of {} sentences (at least {} characters) within {}",
            self.passages.window, self.passages.min_chars, self.radius
        );
        if let Some(t) = self.min_jaccard {
            let _ = write!(s, "; sentences matched at word Jaccard ≥ {t}");
        }
        s
    }

    /// The report as JSON: A, the similarity, the settings, and each match
    /// with its text in A and, where the source's text is at hand, in B.
    pub fn to_json(&self) -> Value {
        let matches: Vec<Value> = self
            .found
            .iter()
            .map(|f| {
                let src = &self.sources[f.source];
                let mut b = json!({"start": f.b.start, "end": f.b.end});
                if self.index.is_some() {
                    b["id"] = json!(src.name);
                }
                if let Some(t) = &src.text {
                    b["text"] = json!(&t[f.b.clone()]);
                }
                let mut m = json!({
                    "a": {"start": f.a.start, "end": f.a.end, "text": &self.a.text[f.a.clone()]},
                    "b": b,
                    "distance": f.distance,
                });
                if let Some(n) = f.sentences {
                    m["sentences"] = json!(n);
                }
                m
            })
            .collect();
        let a = &self.a;
        let mut v = json!({
            "a": {"path": a.name, "bytes": a.text.len(), "chars": a.chars, "sentences": a.sentences},
            "similarity": round4(self.similarity()),
            "matched_chars": self.matched_chars,
            "k": self.radius.to_json(),
            "window": self.passages.window,
            "min_chars": self.passages.min_chars,
            "matches": matches,
        });
        match &self.index {
            None => {
                let s = &self.sources[0];
                v["b"] = json!({"path": s.name, "bytes": s.text.as_ref().map_or(0, String::len)});
                v["b_similarity"] = json!(round4(s.reverse.unwrap_or(0.0)));
                v["min_jaccard"] = json!(self.min_jaccard);
            }
            Some(index) => {
                v["against"] = json!(index);
                // `"text": true` where the source's text is kept (and given
                // in the matches); absent otherwise, as 0.1 wrote it.
                v["sources"] = self
                    .sources
                    .iter()
                    .map(|s| {
                        let mut o = json!({"id": s.name, "similarity": round4(s.similarity)});
                        if s.text.is_some() {
                            o["text"] = json!(true);
                        }
                        o
                    })
                    .collect();
                v["sources_left_out"] = json!(self.sources_left_out);
            }
        }
        v
    }
}

/// A share as a percentage with one decimal.
fn percent(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}
