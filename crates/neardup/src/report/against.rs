//! Reports against a passage index: the windows of A the index holds, to
//! window precision ([`Report::against`]); or, where the index keeps its
//! documents' texts, those documents as candidates, each aligned with A as
//! a pair report is ([`Report::against_library`]), so that the library
//! finds what a pair finds.

use rayon::prelude::*;

use super::{exclude, Doc, Found, Report, Source};
use crate::passage::{covered_chars, index_radius, Aligner, Alignment, Copied, PassageIndex};
use crate::{Radius, Result};

use super::Against;

impl Report {
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
        let radius = radius(index, ask);
        let mut copied = index.find(&a, &radius, &ask.exclude, ask.min_windows)?;
        let ex = &ask.exclusions;
        copied.spans.retain(|s| exclude::long_enough(&a, &s.a, ex));
        let own = |t: usize| ex.own.iter().any(|o| *o == copied.sources[t].0);
        let spans: Vec<_> = copied.spans.iter().map(|s| (s.a.clone(), own(s.target))).collect();
        let (matched_chars, ratios) =
            exclude::measure(&a, index.config().max_sentence_chars, copied.chars, &spans, ex);
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
            matched_chars,
            radius: Some(radius),
            passages: index.config(),
            alignment: None,
            index: Some(index_name.to_owned()),
            sources_left_out: copied.sources.len() - shown,
            ratios,
            exclusions: ex.clone(),
        })
    }

    /// The passages of `a` in a library: a passage index whose documents'
    /// texts `text_of` gives. The documents A's windows are found in are
    /// the candidates: for every part of A, the [`CANDIDATES_PER_PART`] documents that
    /// hold most of A among those found there (so that a library holding
    /// many copies of one part does not crowd out the sources of the
    /// others), then the others by how much of A they hold, at most
    /// [`Against::max_candidates`] in all. Each is aligned
    /// with A with [`Against::alignment`], as [`Report::pair`] aligns two
    /// texts; a candidate whose text is not at hand, and every other
    /// document found, keeps its window spans.
    /// Sources by their share of A; the similarity counts all of them.
    ///
    /// # Errors
    ///
    /// A damaged index ([`PassageIndex::find`]).
    pub fn against_library(
        index: &PassageIndex,
        index_name: &str,
        (a_name, a): (&str, String),
        ask: &Against,
        mut text_of: impl FnMut(&str) -> Option<String>,
    ) -> Result<Report> {
        let radius = radius(index, ask);
        let copied = index.find(&a, &radius, &ask.exclude, 1)?;
        let aligner =
            Aligner::new(index.fingerprinter().clone()).settings_from(ask.alignment).passages(index.config());
        let candidates: Vec<(usize, Option<String>)> = candidates(&copied, a.len(), ask.max_candidates)
            .into_iter()
            .map(|t| (t, text_of(&copied.sources[t].0)))
            .collect();
        let pa = aligner.prepare(&a);
        let aligned: Vec<(usize, Option<(String, Alignment)>)> = candidates
            .into_par_iter()
            .map(|(t, text)| {
                let found = text.map(|b| {
                    let found = aligner.align_prepared(&pa, &aligner.prepare(&b));
                    (b, found)
                });
                (t, found)
            })
            .collect();
        let ex = &ask.exclusions;
        let mut by_source = sources_of(&copied, aligned, ask.min_windows);
        for s in &mut by_source {
            s.found.retain(|f| exclude::long_enough(&a, &f.a, ex));
        }
        by_source.retain(|s| !s.found.is_empty());
        let all: Vec<_> = by_source
            .iter()
            .flat_map(|s| {
                let own = ex.own.contains(&s.source.name);
                s.found.iter().map(move |f| (f.a.clone(), own))
            })
            .collect();
        let (matched_chars, ratios) =
            exclude::measure(&a, index.config().max_sentence_chars, pa.chars(), &all, ex);
        for s in &mut by_source {
            let spans: Vec<_> = s.found.iter().map(|f| f.a.clone()).collect();
            s.chars = covered_chars(&a, pa.sentences(), &spans);
        }
        by_source.sort_by(|x, y| y.chars.cmp(&x.chars).then_with(|| x.source.name.cmp(&y.source.name)));
        let shown = by_source.len().min(ask.max_sources);
        let left_out = by_source.len() - shown;
        let (chars, sentences) = (pa.chars(), pa.sentences().len());
        drop(pa);
        let share = |n: usize| if chars == 0 { 0.0 } else { n as f64 / chars as f64 };
        let mut sources = Vec::with_capacity(shown);
        let mut found = Vec::new();
        for (k, mut s) in by_source.into_iter().take(shown).enumerate() {
            s.source.similarity = share(s.chars);
            found.extend(s.found.into_iter().map(|f| Found { source: k, ..f }));
            sources.push(s.source);
        }
        found.sort_by_key(|f| (f.a.start, f.source));
        Ok(Report {
            a: Doc { name: a_name.to_owned(), chars, sentences, text: a },
            sources,
            found,
            matched_chars,
            radius: Some(radius),
            passages: index.config(),
            alignment: Some(aligner.settings()),
            index: Some(index_name.to_owned()),
            sources_left_out: left_out,
            ratios,
            exclusions: ex.clone(),
        })
    }
}

/// How many candidate documents each part of A is aligned with, at least
/// ([`Report::against_library`]).
pub const CANDIDATES_PER_PART: usize = 4;

/// The candidates among the documents found (`copied.sources`, most of A
/// first), at most `max`: in that order, each that holds a byte of A (of
/// `a_len` bytes) fewer than [`CANDIDATES_PER_PART`] candidates before it hold; then
/// the others in that order (a document whose windows are found only in a
/// part others hold too may share more with A than its windows say).
fn candidates(copied: &Copied, a_len: usize, max: usize) -> Vec<usize> {
    let mut held = vec![0u8; a_len];
    let mut spans: Vec<Vec<std::ops::Range<usize>>> = vec![Vec::new(); copied.sources.len()];
    for s in &copied.spans {
        spans[s.target].push(s.a.clone());
    }
    let mut out = Vec::new();
    for (t, ranges) in spans.iter().enumerate() {
        if out.len() == max {
            break;
        }
        let wanted =
            ranges.iter().any(|r| held[r.clone()].iter().any(|&n| (n as usize) < CANDIDATES_PER_PART));
        if wanted {
            for r in ranges {
                held[r.clone()].iter_mut().for_each(|n| *n = n.saturating_add(1));
            }
            out.push(t);
        }
    }
    let mut chosen = vec![false; spans.len()];
    out.iter().for_each(|&t| chosen[t] = true);
    let room = max.saturating_sub(out.len());
    out.extend((0..spans.len()).filter(|&t| !chosen[t]).take(room));
    out
}

fn radius(index: &PassageIndex, ask: &Against) -> Radius {
    ask.radius.clone().unwrap_or_else(|| index_radius(index.fingerprinter().bits()))
}

/// One candidate source and what was found of A in it.
struct Candidate {
    source: Source,
    found: Vec<Found>,
    /// Characters of A found in it.
    chars: usize,
}

/// Every document found: the candidates aligned where their texts were at
/// hand, the others with their window spans (of at least `min_windows`
/// windows).
fn sources_of(
    copied: &Copied,
    aligned: Vec<(usize, Option<(String, Alignment)>)>,
    min_windows: usize,
) -> Vec<Candidate> {
    let windows = |t: usize| -> Vec<Found> {
        copied
            .spans
            .iter()
            .filter(|s| s.target == t && s.windows >= min_windows)
            .map(|s| Found {
                source: t,
                a: s.a.clone(),
                b: s.b.clone(),
                distance: s.distance,
                sentences: None,
            })
            .collect()
    };
    let mut by_target: Vec<Option<(String, Alignment)>> = (0..copied.sources.len()).map(|_| None).collect();
    for (t, found) in aligned {
        by_target[t] = found;
    }
    (0..copied.sources.len())
        .map(|t| {
            let name = copied.sources[t].0.clone();
            match by_target[t].take() {
                Some((text, al)) => Candidate {
                    found: al.spans.iter().map(|s| Found::aligned(t, s)).collect(),
                    source: Source {
                        name,
                        text: Some(text),
                        similarity: 0.0,
                        reverse: Some(al.b_similarity()),
                    },
                    chars: 0,
                },
                None => Candidate {
                    found: windows(t),
                    source: Source { name, text: None, similarity: 0.0, reverse: None },
                    chars: 0,
                },
            }
        })
        .collect()
}
