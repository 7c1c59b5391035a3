//! Reports against an index of passage windows: the windows of A the index
//! holds, to window precision ([`Report::against`]); or against a library
//! of documents and their texts: the documents holding A's keys as
//! candidates, each aligned with A as a pair report is
//! ([`Report::against_library`]), so that the library finds what a pair
//! finds.

use rayon::prelude::*;

use super::{exclude, Doc, Found, Report, Source};
use crate::passage::{
    covered_chars, find_in_library, index_radius, Aligner, Alignment, Library, PassageIndex,
};
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

    /// The passages of `a` in a library ([`Library`]): the documents
    /// holding A's keys ([`find_in_library`]) are the candidates: for every
    /// part of A, the [`CANDIDATES_PER_PART`] documents that hold most of
    /// A among those found there (so that a library holding many copies of
    /// one part does not crowd out the sources of the others), then the
    /// others by how much of A they hold, at most
    /// [`Against::max_candidates`] in all, leaving out
    /// [`Against::exclude`]. Each is aligned with A by `aligner`, as
    /// [`Report::pair`] aligns two texts. Sources by their share of A; the
    /// similarity counts all of them.
    ///
    /// # Errors
    ///
    /// A damaged library.
    pub fn against_library(
        aligner: &Aligner,
        library: &dyn Library,
        library_name: &str,
        (a_name, a): (&str, String),
        ask: &Against,
    ) -> Result<Report> {
        let hits = find_in_library(library, &a)?;
        // Ids for the best-placed hits only (a stock phrase finds many).
        let mut named = Vec::new();
        for hit in hits.into_iter().take(ask.max_candidates.saturating_mul(4)) {
            match library.id(hit.seq)? {
                Some(id) if !ask.exclude.contains(&id) => named.push((hit, id)),
                _ => {}
            }
        }
        let ranges: Vec<&[std::ops::Range<usize>]> = named.iter().map(|(h, _)| h.a.as_slice()).collect();
        let chosen = candidates(&ranges, a.len(), ask.max_candidates);
        let pa = aligner.prepare(&a);
        let aligned: Vec<(String, Option<(String, Alignment)>)> = chosen
            .into_par_iter()
            .map(|t| {
                let (hit, id) = &named[t];
                let text = library.text(hit.seq)?;
                Ok((
                    id.clone(),
                    text.map(|b| {
                        let found = aligner.align_prepared(&pa, &aligner.prepare(&b));
                        (b, found)
                    }),
                ))
            })
            .collect::<Result<_>>()?;
        let ex = &ask.exclusions;
        let mut by_source: Vec<Candidate> = aligned
            .into_iter()
            .enumerate()
            .filter_map(|(t, (name, found))| {
                let (text, al) = found?;
                Some(Candidate {
                    found: al.spans.iter().map(|s| Found::aligned(t, s)).collect(),
                    source: Source {
                        name,
                        text: Some(text),
                        similarity: 0.0,
                        reverse: Some(al.b_similarity()),
                    },
                    chars: 0,
                })
            })
            .collect();
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
        let passages = *aligner.passage_config();
        let (matched_chars, ratios) = exclude::measure(&a, passages.max_sentence_chars, pa.chars(), &all, ex);
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
            radius: None,
            passages,
            alignment: Some(aligner.settings()),
            index: Some(library_name.to_owned()),
            sources_left_out: left_out,
            ratios,
            exclusions: ex.clone(),
        })
    }
}

/// How many candidate documents each part of A is aligned with, at least
/// ([`Report::against_library`]).
pub const CANDIDATES_PER_PART: usize = 4;

/// The candidates among the documents found (`found[t]`: the bytes of A
/// document `t` holds; most of A first), at most `max`: in that order, each
/// that holds a byte of A (of `a_len` bytes) fewer than
/// [`CANDIDATES_PER_PART`] candidates before it hold; then the others in
/// that order (a document found only in a part others hold too may share
/// more with A than its keys say).
fn candidates(found: &[&[std::ops::Range<usize>]], a_len: usize, max: usize) -> Vec<usize> {
    let mut held = vec![0u8; a_len];
    let mut out = Vec::new();
    for (t, ranges) in found.iter().enumerate() {
        if out.len() == max {
            break;
        }
        let wanted =
            ranges.iter().any(|r| held[r.clone()].iter().any(|&n| (n as usize) < CANDIDATES_PER_PART));
        if wanted {
            for r in ranges.iter() {
                held[r.clone()].iter_mut().for_each(|n| *n = n.saturating_add(1));
            }
            out.push(t);
        }
    }
    let mut chosen = vec![false; found.len()];
    out.iter().for_each(|&t| chosen[t] = true);
    let room = max.saturating_sub(out.len());
    out.extend((0..found.len()).filter(|&t| !chosen[t]).take(room));
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
