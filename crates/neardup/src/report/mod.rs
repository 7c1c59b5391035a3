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
//! use neardup::report::{Exclusions, Report};
//! use neardup::Fingerprinter;
//!
//! let copied = "SimHash maps each document to a short fingerprint. Similar documents get \
//!               fingerprints that differ in few bits. An index over permuted tables finds \
//!               them without a full scan. This makes deduplication of web crawls cheap.";
//! let a = format!("Our report starts here. It talks about the weather today. {copied} The end.");
//! let b = format!("Cooking rice takes twenty minutes. {copied} Add salt to taste.");
//! let aligner = Aligner::new(Fingerprinter::preset("default")?);
//! let report = Report::pair(&aligner, ("a.txt", a), ("b.txt", b), &Exclusions::default());
//! assert_eq!(report.found.len(), 1);
//! let json = report.to_json();
//! assert_eq!(json["matches"][0]["a"]["text"], copied);
//! assert!(report.to_html().contains("<a class=\"hl c0\" href=\"#b0\""));
//! # Ok::<(), neardup::Error>(())
//! ```

mod against;
mod class;
mod exclude;
mod html;
mod text;

use std::ops::Range;

use serde_json::{json, Value};

use crate::passage::{AlignSettings, Aligner, PassageConfig};
use crate::similarity::round4;
use crate::Radius;

pub use against::CANDIDATES_PER_PART;
pub use class::{ClassLibrary, ClassReport, TOP_SOURCES};
pub use exclude::{quotes, references, Exclusions, Ratios};
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
    /// index keeps texts ([`Report::against_library`]).
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
    /// The bits its fingerprints differ by (the two spans', aligned; the
    /// nearest windows', from an index).
    pub distance: u32,
    /// Sentences of A in it (pair reports; windows are not counted).
    pub sentences: Option<usize>,
}

impl Found {
    /// A span aligned with source `source`.
    fn aligned(source: usize, s: &crate::passage::Span) -> Found {
        Found {
            source,
            a: s.a.clone(),
            b: s.b.clone(),
            distance: s.distance,
            sentences: Some(s.a_sentences.len()),
        }
    }
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
    /// The radius windows matched within (reports against an index).
    pub radius: Option<Radius>,
    /// How texts were cut into sentences and windows.
    pub passages: PassageConfig,
    /// How A was aligned with its sources' texts (pair reports, and
    /// reports against an index that keeps its texts).
    pub alignment: Option<AlignSettings>,
    /// The index's name (reports against an index).
    pub index: Option<String>,
    /// Sources beyond the listing's limit, left out.
    pub sources_left_out: usize,
    /// The share of A found, with and without what examiners leave out.
    pub ratios: Ratios,
    /// What [`Report::ratios`] leave out.
    pub exclusions: Exclusions,
}

/// How a report against an index is asked for (defaults: the index's
/// radius rule, nothing excluded, spans of one window or more, 20 sources
/// listed, at most 200 candidates aligned).
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
    /// Where the index keeps its texts: the most candidate documents (by
    /// the windows of A they hold) aligned with A.
    pub max_candidates: usize,
    /// How candidates are aligned with A (where the index keeps its texts).
    pub alignment: AlignSettings,
    /// What the ratios leave out (and matches too short to count).
    pub exclusions: Exclusions,
}

impl Default for Against {
    fn default() -> Against {
        Against {
            radius: None,
            exclude: Vec::new(),
            min_windows: 1,
            max_sources: 20,
            max_candidates: 200,
            alignment: AlignSettings::default(),
            exclusions: Exclusions::default(),
        }
    }
}

impl Report {
    /// The passages of `a` copied from `b` (both texts at hand), aligned;
    /// matches shorter than `ex` allows left out, and the ratios `ex` asks
    /// for.
    pub fn pair(
        aligner: &Aligner,
        (a_name, a): (&str, String),
        (b_name, b): (&str, String),
        ex: &Exclusions,
    ) -> Report {
        let mut found = aligner.align(&a, &b);
        found.spans.retain(|s| exclude::long_enough(&a, &s.a, ex));
        let spans: Vec<_> =
            found.spans.iter().map(|s| (s.a.clone(), ex.own.iter().any(|o| o == b_name))).collect();
        let cfg = *aligner.passage_config();
        let (matched_chars, ratios) = exclude::measure(&a, cfg.max_sentence_chars, found.a_chars, &spans, ex);
        // B's share, without the matches left out.
        let b_spans: Vec<_> = found.spans.iter().map(|s| s.b.clone()).collect();
        let b_sentences = crate::passage::sentences(&b, cfg.max_sentence_chars);
        let reverse = if found.b_chars == 0 {
            0.0
        } else {
            crate::passage::covered_chars(&b, &b_sentences, &b_spans) as f64 / found.b_chars as f64
        };
        Report {
            a: Doc {
                name: a_name.to_owned(),
                chars: found.a_chars,
                sentences: found.a_sentence_count,
                text: a,
            },
            sources: vec![Source {
                name: b_name.to_owned(),
                text: Some(b),
                similarity: ratios.total,
                reverse: Some(reverse),
            }],
            found: found.spans.iter().map(|s| Found::aligned(0, s)).collect(),
            matched_chars,
            radius: None,
            passages: cfg,
            alignment: Some(aligner.settings()),
            index: None,
            sources_left_out: 0,
            ratios,
            exclusions: ex.clone(),
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
        let windows = self.radius.as_ref().map(|k| {
            format!(
                "windows of {} sentences (at least {} characters) within {k}",
                self.passages.window, self.passages.min_chars
            )
        });
        match (windows, &self.alignment) {
            (Some(w), Some(a)) => format!("candidates by {w}; aligned with their texts: {a}"),
            (Some(w), None) => w,
            (None, Some(a)) => format!("aligned: {a}"),
            (None, None) => String::new(),
        }
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
            "matches": matches,
        });
        if let Some(k) = &self.radius {
            v["k"] = k.to_json();
            v["window"] = json!(self.passages.window);
            v["min_chars"] = json!(self.passages.min_chars);
        }
        if let Some(a) = &self.alignment {
            v["alignment"] = json!(a);
        }
        let r = &self.ratios;
        let ex = &self.exclusions;
        v["ratios"] = json!({
            "total": round4(r.total),
            "without_quotes_and_references": round4(r.without_quotes_and_references),
            "without_own": round4(r.without_own),
            "without_both": round4(r.without_both),
            "excluded_chars": r.excluded_chars,
            "quotes": ex.quotes,
            "references": ex.references,
            "min_match_chars": ex.min_match_chars,
            "own": ex.own,
        });
        match &self.index {
            None => {
                let s = &self.sources[0];
                v["b"] = json!({"path": s.name, "bytes": s.text.as_ref().map_or(0, String::len)});
                v["b_similarity"] = json!(round4(s.reverse.unwrap_or(0.0)));
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
